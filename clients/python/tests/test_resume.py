"""Dropped connections: a proxy tears every other connection in the middle of the answer. A
streamed turn is sent again with its key (it runs once) and a followed feed reconnects with
Last-Event-ID; each delivers every event exactly once, in order."""

from __future__ import annotations

import asyncio
import threading

from conftest import TearingProxy

from turnline import AsyncTurnlineClient, RetryPolicy, TurnlineClient

FAST = RetryPolicy(initial_delay=0.05, max_delay=0.5, max_attempts=8)


def committed(server_url: str, sid: str) -> list[int]:
    with TurnlineClient(server_url) as direct:
        return [e["seq"] for e in direct.events(sid)]


def test_sync_turn_and_follow_survive_torn_connections(server_url: str, tearing_proxy: TearingProxy) -> None:
    with TurnlineClient(server_url) as direct, TurnlineClient(tearing_proxy.url, retry=FAST) as torn:
        sid = direct.create_session()["session_id"]
        followed: list[int] = []
        follow_done = threading.Event()

        def follow() -> None:
            with TurnlineClient(tearing_proxy.url, retry=FAST) as reader:
                for item in reader.events(sid, follow=True):
                    followed.append(item["seq"])
            follow_done.set()

        threading.Thread(target=follow, daemon=True).start()
        seen: list[int] = []
        for prompt in ("run `echo one`", "write notes.txt: two", "hello three"):
            turn = torn.stream_turn(sid, prompt)
            seen.extend(item["seq"] for item in turn)
            assert turn.result()["status"] == "completed"
        direct.complete(sid)
        assert follow_done.wait(120)

        everything = committed(server_url, sid)
        # The turns delivered everything after thread.started (seq 0) up to the last turn's end.
        assert seen == everything[1 : len(seen) + 1]
        assert followed == everything
        assert tearing_proxy.cuts > 0
        view = direct.get_session(sid)
        assert view["turn_count"] == 3  # every turn ran once


def test_async_turn_and_follow_survive_torn_connections(server_url: str, tearing_proxy: TearingProxy) -> None:
    async def flow() -> None:
        async with AsyncTurnlineClient(server_url) as direct, AsyncTurnlineClient(
            tearing_proxy.url, retry=FAST
        ) as torn:
            sid = (await direct.create_session())["session_id"]

            async def follow() -> list[int]:
                return [item["seq"] async for item in torn.events(sid, follow=True)]

            reader = asyncio.create_task(follow())
            seen: list[int] = []
            for prompt in ("run `echo one`", "hello two"):
                turn = torn.stream_turn(sid, prompt)
                seen.extend([item["seq"] async for item in turn])
                assert (await turn.result())["status"] == "completed"
            await direct.complete(sid)
            followed = await asyncio.wait_for(reader, 120)
            everything = committed(server_url, sid)
            assert seen == everything[1 : len(seen) + 1]
            assert followed == everything
            assert (await direct.get_session(sid))["turn_count"] == 2

    asyncio.run(flow())
    assert tearing_proxy.cuts > 0

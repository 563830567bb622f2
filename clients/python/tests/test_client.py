"""The client against `npm start`: sessions, turns (JSON and streamed), the events feed, errors,
sync and async — the same flow as the TypeScript client's README sample."""

from __future__ import annotations

import asyncio

import pytest

from turnline import (
    AsyncTurnlineClient,
    InputPart,
    TurnlineApiError,
    TurnlineClient,
    TurnlineConnectionError,
)


def dense(seqs: list[int], first: int = 0) -> bool:
    return seqs == list(range(first, first + len(seqs)))


def test_sync_flow(server_url: str) -> None:
    with TurnlineClient(server_url) as client:
        assert client.health() == {"status": "ok"}
        created = client.create_session({"workspace": "py", "limits": {"max_turns": 8}})
        sid = created["session_id"]
        assert created["status"] == "active"

        turn = client.stream_turn(sid, "hello from python")
        streamed = list(turn)
        result = turn.result()
        assert result["status"] == "completed"
        assert turn.idempotency_key is not None and turn.idempotency_key.startswith("tl-")
        types = [item["event"]["type"] for item in streamed]
        assert types[0] == "turn.started" and types[-1] == "turn.completed"
        messages = [
            e["event"]["item"]["text"]
            for e in streamed
            if e["event"]["type"] == "item.completed" and e["event"]["item"]["type"] == "agent_message"
        ]
        assert messages and "offline demo model" in messages[-1]

        # The same key answers the first outcome: the turn does not run twice.
        first = client.step_turn(sid, "again", idempotency_key="py-key-1")
        second = client.step_turn(sid, "again", idempotency_key="py-key-1")
        assert first["turn_id"] == second["turn_id"]

        done = client.complete(sid)
        assert done["events"][-1]["type"] == "thread.completed"
        assert client.get_session(sid)["status"] == "completed"

        every = list(client.events(sid))
        assert dense([e["seq"] for e in every])
        assert every[-1]["event"]["type"] == "thread.completed"
        paged = list(client.events(sid, limit=3))
        assert [e["seq"] for e in paged] == [e["seq"] for e in every]
        assert [e["seq"] for e in client.events(sid, last_event_id=str(every[2]["seq"]))][0] == 3

        listed = [s["session_id"] for s in client.sessions(workspace="py", limit=1)]
        assert sid in listed
        newest = client.create_session({"workspace": "py"})["session_id"]
        assert client.list_sessions(workspace="py", limit=1)["sessions"][0]["session_id"] == newest
        counts = {w["workspace"]: w["sessions"] for w in client.list_workspaces()["workspaces"]}
        assert counts["py"] == 2

        # Deleted: a session, then a whole workspace; every read of them is 404 after.
        client.delete_session(newest)
        with pytest.raises(TurnlineApiError) as gone:
            client.get_session(newest)
        assert gone.value.status == 404
        doomed = client.create_session({"workspace": "py-doomed"})["session_id"]
        client.delete_workspace("py-doomed")
        with pytest.raises(TurnlineApiError) as erased:
            client.get_session(doomed)
        assert erased.value.status == 404


def test_errors_carry_the_servers_codes(server_url: str) -> None:
    with TurnlineClient(server_url) as client:
        with pytest.raises(TurnlineApiError) as missing:
            client.get_session("session-20260101T000000Z-0123456789abcdef")
        assert missing.value.status == 404 and missing.value.code == "not_found"
        assert not missing.value.retryable

        with pytest.raises(TurnlineApiError) as invalid:
            client.create_session({"no_such_setting": True})
        assert invalid.value.status == 400 and invalid.value.code == "invalid_input"

        sid = client.create_session()["session_id"]
        client.complete(sid)
        with pytest.raises(TurnlineApiError) as completed:
            client.step_turn(sid, "too late", idempotency_key="py-late")
        assert completed.value.code == "session_completed"
        assert completed.value.idempotency_key == "py-late"

    # Nothing listens there.
    with TurnlineClient("http://127.0.0.1:9") as closed:
        with pytest.raises(TurnlineConnectionError):
            closed.health()


def test_async_flow(server_url: str) -> None:
    async def flow() -> None:
        async with AsyncTurnlineClient(server_url) as client:
            sid = (await client.create_session({"workspace": "py-async"}))["session_id"]
            turn = client.stream_turn(sid, "hello from asyncio")
            streamed = [item async for item in turn]
            assert (await turn.result())["status"] == "completed"
            assert dense([e["seq"] for e in streamed], first=1)  # 0 is thread.started
            await client.steer(sid, "a follow-up")
            step = await client.step_turn(sid)
            assert step["status"] == "completed"
            await client.complete(sid)
            every = [e async for e in client.events(sid)]
            followed = [e async for e in client.events(sid, follow=True)]
            assert [e["seq"] for e in followed] == [e["seq"] for e in every]
            assert followed[-1]["event"]["type"] == "thread.completed"
            listed = [s["session_id"] async for s in client.sessions(workspace="py-async")]
            assert sid in listed
            # A completion callback is recorded before the turn answers (nothing listens there).
            hooked = {"workspace": "py-async", "callback": {"url": "https://127.0.0.1:9/hook"}}
            hid = (await client.create_session(hooked))["session_id"]
            assert (await client.step_turn(hid, "report back"))["status"] == "completed"
            notices = (await client.list_deliveries(hid))["deliveries"]
            assert [d["type"] for d in notices] == ["turn.completed"]
            assert notices[0]["notice"]["data"]["session_id"] == hid
            with pytest.raises(TurnlineApiError) as missing:
                await client.get_session("session-20260101T000000Z-0123456789abcdef")
            assert missing.value.code == "not_found"

    asyncio.run(flow())


PNG = "data:image/png;base64,iVBORw0KGgo="


def test_turn_inputs_with_images_and_fork_at_a_turn(server_url: str) -> None:
    with TurnlineClient(server_url) as client:
        sid = client.create_session({"workspace": "py-inputs"})["session_id"]
        parts: list[InputPart] = [
            {"type": "input_text", "text": "What is in this picture?"},
            {"type": "input_image", "image_url": PNG, "detail": "low"},
        ]
        assert client.step_turn(sid, parts)["status"] == "completed"
        assert client.step_turn(sid, "and then?")["status"] == "completed"
        turns = client.list_turns(sid)["turns"]
        assert [t["turn_id"] for t in turns] == ["turn-1", "turn-2"]
        assert [t["input"]["input"] for t in turns] == [parts, "and then?"]
        assert client.get_session(sid)["title"] == "What is in this picture?"
        assert [t["turn_id"] for t in client.list_turns(sid, limit=1)["turns"]] == ["turn-1"]
        forked = client.fork(sid, at_turn=1)["session_id"]
        assert forked != sid and client.list_turns(forked)["turns"] == []
        with pytest.raises(TurnlineApiError) as refused:
            client.fork(sid, at_turn=9)
        assert refused.value.status == 400 and refused.value.code == "invalid_input"


def test_base_url_with_a_password_is_refused_unshown() -> None:
    for base_url in ("http://user:s3cret-pass@127.0.0.1:9", "https://s3cret-pass@example.com"):
        for make in (TurnlineClient, AsyncTurnlineClient):
            with pytest.raises(ValueError) as raised:
                make(base_url)
            assert "must not hold a user or password" in str(raised.value)
            assert "s3cret-pass" not in str(raised.value)

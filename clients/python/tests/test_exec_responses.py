"""``exec`` and ``responses`` of the Python client against `npm start` (the offline demo model):
the same semantics as the TypeScript client's. An exec run is keyed and held to the idle limit; a
response stream cut before ``response.created`` raises with its key, after it is resumed, and a
keyed request sent again while its first still runs follows the running response."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest
from conftest import TearingProxy
from hostile import Seen, stall_after

from turnline import (
    AsyncTurnlineClient,
    TurnlineApiError,
    TurnlineClient,
    TurnlineConnectionError,
    running_response_of,
)


def fresh(name: str) -> str:
    return f"py-{name}-{uuid.uuid4().hex[:10]}"


def exec_post(seen: Seen) -> bool:
    return seen.method == "POST" and seen.path == "/v1/exec"


def run_again(call, timeout: float = 30.0):
    """``call()`` once the first request of its key has ended (it is session_busy until then)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            return call()
        except TurnlineApiError as error:
            if error.code != "session_busy" or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def test_exec_streams_the_run_keyed_and_sent_again_runs_once(server_url: str, hostile) -> None:
    front = hostile(lambda seen: False, None)  # every request forwarded, and seen
    request = {"prompt": "hello", "workspace": fresh("exec")}
    key = fresh("exec-key")
    with TurnlineClient(front.url) as client:
        events = list(client.exec(request, idempotency_key=key))
        assert events[0]["type"] == "thread.started"
        assert [e["type"] for e in events][-2:] == ["turn.completed", "thread.completed"]
        assert events[-1]["subtype"] == "success"
        sent = [seen for seen in front.seen if exec_post(seen)][0]
        assert (sent.headers["idempotency-key"], sent.headers["prefer"]) == (key, "keep-alive")

        again = list(client.exec(request, idempotency_key=key))
        assert again[-1]["type"] == "thread.completed"
        assert again[-1]["session_id"] == events[-1]["session_id"]
        assert len(client.list_sessions(workspace=request["workspace"])["sessions"]) == 1
        # Without a key of the caller's, each run has its own.
        other = list(client.exec(request))
        assert other[-1]["session_id"] != events[-1]["session_id"]


def test_an_exec_run_that_goes_silent_fails_with_its_key(server_url: str, hostile) -> None:
    front = hostile(exec_post, stall_after(100))
    request = {"prompt": "hello", "workspace": fresh("exec-silent")}
    with TurnlineClient(front.url) as client:
        started = time.monotonic()
        with pytest.raises(TurnlineConnectionError) as raised:
            list(client.exec(request, idle_timeout=0.5))
        assert time.monotonic() - started < 10
        key = raised.value.idempotency_key
        assert key is not None and key == [s for s in front.seen if exec_post(s)][0].headers["idempotency-key"]

        events = run_again(lambda: list(client.exec(request, idempotency_key=key)))
        assert events[-1]["type"] == "thread.completed"
        assert len(client.list_sessions(workspace=request["workspace"])["sessions"]) == 1


def test_async_exec_streams_the_run(server_url: str) -> None:
    request = {"prompt": "hello", "workspace": fresh("exec-async")}

    async def run() -> list:
        async with AsyncTurnlineClient(server_url) as client:
            return [event async for event in client.exec(request)]

    events = asyncio.run(run())
    assert events[0]["type"] == "thread.started" and events[-1]["type"] == "thread.completed"


def numbers(events: list) -> list[int]:
    return [event["sequence_number"] for event in events]


def test_responses_create_get_stream_and_events(server_url: str) -> None:
    with TurnlineClient(server_url) as client:
        created = client.responses.create({"input": "hello"})
        assert created["status"] == "completed" and created["id"].startswith("resp_")
        assert client.responses.get(created["id"])["output"] == created["output"]

        streamed = list(client.responses.stream({"input": "hello"}))
        assert streamed[0]["type"] == "response.created"
        assert streamed[-1]["type"] == "response.completed"
        assert numbers(streamed) == list(range(len(streamed)))
        rid = streamed[0]["response"]["id"]
        assert list(client.responses.events(rid)) == streamed
        assert list(client.responses.events(rid, starting_after=3)) == streamed[4:]


def test_a_response_stream_cut_is_resumed_or_raises_with_its_key(server_url: str) -> None:
    # Cut after its first frames (response.created is in): resumed from the last number seen.
    proxy = TearingProxy(server_url, cut_after=3000)
    try:
        with TurnlineClient(proxy.url) as client:
            resumed = list(client.responses.stream({"input": "hello"}))
        assert proxy.cuts == 1
    finally:
        proxy.close()
    assert numbers(resumed) == list(range(len(resumed)))
    assert resumed[-1]["type"] == "response.completed"

    # Cut before response.created: raised with the key; sent again with it, the same response.
    proxy = TearingProxy(server_url, cut_after=300)
    key = fresh("resp-key")
    try:
        with TurnlineClient(proxy.url) as client:
            with pytest.raises(TurnlineConnectionError) as raised:
                list(client.responses.stream({"input": "hello"}, idempotency_key=key))
            assert raised.value.idempotency_key == key
            again = run_again(lambda: list(client.responses.stream({"input": "hello"}, idempotency_key=key)))
    finally:
        proxy.close()
    assert again[-1]["type"] == "response.completed"
    assert numbers(again) == list(range(len(again)))


SLOW = {"input": "run `sleep 2; echo slept`"}


def test_a_keyed_response_sent_again_while_it_runs_follows_it(server_url: str) -> None:
    key = fresh("resp-running")
    first: list = []
    named = threading.Event()

    def stream_first() -> None:
        with TurnlineClient(server_url) as client:
            for event in client.responses.stream(SLOW, idempotency_key=key):
                first.append(event)
                named.set()

    thread = threading.Thread(target=stream_first)
    thread.start()
    try:
        assert named.wait(30)
        with TurnlineClient(server_url) as client:
            with pytest.raises(TurnlineApiError) as refused:
                client.responses.create(SLOW, idempotency_key=key)
            assert (refused.value.status, refused.value.code) == (409, "session_busy")
            running = running_response_of(refused.value)
            assert running == first[0]["response"]["id"]
            # Sent again streamed: the running response's events from its first, not a 409.
            second = list(client.responses.stream(SLOW, idempotency_key=key))
    finally:
        thread.join(60)
    assert first[-1]["type"] == "response.completed"
    assert numbers(second) == numbers(first)
    assert second[-1]["type"] == "response.completed"
    assert second[-1]["response"]["id"] == running
    assert running_response_of(RuntimeError("other")) is None


def test_async_responses_follow_a_running_keyed_response(server_url: str) -> None:
    key = fresh("resp-async")

    async def run() -> tuple[list, list, dict]:
        async with AsyncTurnlineClient(server_url) as client:
            first: list = []
            named = asyncio.Event()

            async def stream_first() -> None:
                async for event in client.responses.stream(SLOW, idempotency_key=key):
                    first.append(event)
                    named.set()

            task = asyncio.create_task(stream_first())
            await asyncio.wait_for(named.wait(), 30)
            second = [event async for event in client.responses.stream(SLOW, idempotency_key=key)]
            await task
            return first, second, await client.responses.get(first[0]["response"]["id"])

    first, second, read = asyncio.run(run())
    assert numbers(second) == numbers(first)
    assert second[-1]["type"] == "response.completed"
    assert read["status"] == "completed"


def test_exec_waits_without_limit_on_a_server_that_sends_no_keep_alives(server_url: str, hostile) -> None:
    """An older server (no ``Preference-Applied: keep-alive``) may be silent through a long command:
    its body is not held to the idle limit, which held its head."""

    def older_server(handler, forward) -> None:
        handler.head(200, {"content-type": "application/x-ndjson"})
        handler.wfile.write(b'{"type":"thread.started","thread_id":"t"}\n')
        handler.wfile.flush()
        time.sleep(1.5)
        handler.wfile.write(b'{"type":"thread.completed","thread_id":"t"}\n')

    for run in ("sync", "async"):
        front = hostile(exec_post, older_server)
        if run == "sync":
            with TurnlineClient(front.url) as client:
                events = list(client.exec({"prompt": "hello"}, idle_timeout=0.5))
        else:

            async def read() -> list:
                async with AsyncTurnlineClient(front.url) as client:
                    return [event async for event in client.exec({"prompt": "hello"}, idle_timeout=0.5)]

            events = asyncio.run(read())
        assert [event["type"] for event in events] == ["thread.started", "thread.completed"]

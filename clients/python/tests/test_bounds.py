"""The client's bounds in front of a server that misbehaves (tests/hostile.py in front of `npm
start`): a whole JSON answer past ``max_answer_bytes`` fails the call instead of growing the
client's memory without end, and an events page that goes silent fails (or is read again)
instead of hanging the client for ever."""

from __future__ import annotations

import asyncio
import time

import pytest
from hostile import Seen, endless, stall_after, swallow_the_answer

from turnline import (
    AsyncTurnlineClient,
    RetryPolicy,
    TurnlineAnswerTooLargeError,
    TurnlineClient,
    TurnlineConnectionError,
    TurnlineProtocolError,
)

MAX = 1024 * 1024
ENDLESS_JSON = endless(200, {"content-type": "application/json"}, '{"session_id":"', "x")


def session_get(seen: Seen) -> bool:
    return seen.method == "GET" and seen.path.startswith("/v1/sessions/") and seen.path.count("/") == 3


def test_a_json_answer_past_max_answer_bytes_fails_the_call(server_url: str, hostile) -> None:
    front = hostile(session_get, ENDLESS_JSON)
    with TurnlineClient(server_url, max_answer_bytes=MAX) as direct, TurnlineClient(
        front.url, max_answer_bytes=MAX
    ) as client:
        sid = direct.create_session()["session_id"]
        assert direct.get_session(sid)["session_id"] == sid  # an ordinary answer is well below
        with pytest.raises(TurnlineAnswerTooLargeError, match="max_answer_bytes") as raised:
            client.get_session(sid)
        assert isinstance(raised.value, TurnlineProtocolError)
        assert raised.value.max_bytes == MAX


def test_a_json_answer_past_max_answer_bytes_fails_the_async_call(server_url: str, hostile) -> None:
    front = hostile(session_get, ENDLESS_JSON)

    async def run() -> None:
        async with AsyncTurnlineClient(front.url, max_answer_bytes=MAX) as client:
            with pytest.raises(TurnlineAnswerTooLargeError):
                await client.get_session("some-session")

    asyncio.run(run())


def test_a_turn_answer_that_says_it_is_too_long_is_not_read(server_url: str, hostile) -> None:
    def declared(handler, forward) -> None:
        handler.send_response(200)
        handler.send_header("content-type", "application/json")
        handler.send_header("content-length", str(MAX + 1))
        handler.end_headers()
        handler.wfile.write(b'{"turn_id":')
        handler.owner.closing.wait()

    turns = lambda seen: seen.method == "POST" and seen.path.endswith("/turns")  # noqa: E731
    front = hostile(turns, declared)
    with TurnlineClient(front.url, max_answer_bytes=MAX) as client:
        with pytest.raises(TurnlineAnswerTooLargeError):
            client.step_turn("some-session", "hello")


def test_max_answer_bytes_must_be_positive(server_url: str) -> None:
    with pytest.raises(ValueError, match="max_answer_bytes"):
        TurnlineClient(server_url, max_answer_bytes=0)


def page_get(seen: Seen) -> bool:
    return seen.method == "GET" and "/events" in seen.path and "follow=" not in seen.path


@pytest.mark.parametrize("act", [stall_after(50), swallow_the_answer], ids=["body", "head"])
def test_an_events_page_that_goes_silent_fails(server_url: str, hostile, act) -> None:
    with TurnlineClient(server_url) as direct:
        sid = direct.create_session()["session_id"]
        direct.step_turn(sid, "hello")
    front = hostile(page_get, act)
    with TurnlineClient(front.url, retry=RetryPolicy(idle_timeout=0.5)) as client:
        started = time.monotonic()
        with pytest.raises(TurnlineConnectionError):
            client.read_events(sid)
        assert time.monotonic() - started < 5


def test_a_silent_events_page_is_read_again_async(server_url: str, hostile) -> None:
    with TurnlineClient(server_url) as direct:
        sid = direct.create_session()["session_id"]
        direct.step_turn(sid, "hello")
        log = direct.read_events(sid)["events"]
    front = hostile(page_get, stall_after(50))

    async def run() -> list:
        async with AsyncTurnlineClient(front.url, retry=RetryPolicy(idle_timeout=0.5)) as client:
            return [item async for item in client.events(sid)]

    assert asyncio.run(run()) == log
    assert len([seen for seen in front.seen if page_get(seen)]) >= 2


NDJSON = {"content-type": "application/x-ndjson"}
FEED_LINE = '{"seq":0,"schema_version":"0.11.0","event":{"type":"thread.started","thread_id":"t"}}\n'
BLANK_LINE = " " * 1000 + "\n"


def test_an_events_page_with_more_events_than_asked_for_fails(server_url: str, hostile) -> None:
    front = hostile(page_get, endless(200, NDJSON, "", FEED_LINE))
    with TurnlineClient(front.url) as client:
        with pytest.raises(TurnlineProtocolError, match="passed the 10 events asked for"):
            client.read_events("some-session", limit=10)


def test_an_events_page_past_its_bytes_fails(server_url: str, hostile) -> None:
    # Lines of spaces: no event, no line past its cap, bytes without end.
    for options, call in (({"max_answer_bytes": MAX}, {}), ({}, {"max_bytes": MAX})):
        front = hostile(page_get, endless(200, NDJSON, "", BLANK_LINE))
        with TurnlineClient(front.url, **options) as client:
            with pytest.raises(TurnlineAnswerTooLargeError, match="an events page passed") as raised:
                client.read_events("some-session", **call)
            assert raised.value.max_bytes == MAX

    front = hostile(page_get, endless(200, NDJSON, "", BLANK_LINE))

    async def run() -> None:
        async with AsyncTurnlineClient(front.url, max_answer_bytes=MAX) as client:
            with pytest.raises(TurnlineAnswerTooLargeError):
                [item async for item in client.events("some-session")]

    asyncio.run(run())
    assert len([seen for seen in front.seen if page_get(seen)]) == 1  # not read again


def test_read_output_artifact_past_its_bound_names_its_size(server_url: str) -> None:
    with TurnlineClient(server_url) as direct:
        sid = direct.create_session()["session_id"]
        direct.step_turn(sid, "run `seq 1 100000`")
        kept = direct.kept_outputs(sid)["outputs"][0]
    size, artifact = kept["size"], kept["artifact_id"]
    assert size > 4096
    with TurnlineClient(server_url, max_answer_bytes=4096) as client:
        with pytest.raises(TurnlineAnswerTooLargeError, match=f"holds {size} bytes") as raised:
            client.read_output_artifact(sid, artifact)
        assert (raised.value.max_bytes, raised.value.size) == (4096, size)
        assert "output_artifact streams it" in str(raised.value)
        with pytest.raises(TurnlineAnswerTooLargeError, match="max_bytes"):
            client.read_output_artifact(sid, artifact, max_bytes=100)
        assert len(client.read_output_artifact(sid, artifact, start=0, end=4096)) == 4096
        whole = client.read_output_artifact(sid, artifact, max_bytes=size)
        assert len(whole) == size
        assert b"".join(client.output_artifact(sid, artifact)) == whole

    async def run() -> None:
        async with AsyncTurnlineClient(server_url, max_answer_bytes=4096) as client:
            with pytest.raises(TurnlineAnswerTooLargeError):
                await client.read_output_artifact(sid, artifact)
            assert await client.read_output_artifact(sid, artifact, max_bytes=size) == whole

    asyncio.run(run())

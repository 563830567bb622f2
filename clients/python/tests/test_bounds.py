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

"""The client in front of a server that misbehaves (tests/hostile.py in front of `npm start`): a
retried turn waits what the server asked and runs once with one key; a stream that goes silent is
resumed; a frame, a line or an error page without end fails the call instead of growing the
client's memory without bound."""

from __future__ import annotations

import asyncio
import json
import re
import threading
import time
from email.utils import formatdate

import pytest
from conftest import wait_until
from hostile import Act, Seen, answer, endless, stall_after, swallow_the_answer

from turnline import (
    AsyncTurnlineClient,
    RetryPolicy,
    TurnlineApiError,
    TurnlineClient,
    TurnlineProtocolError,
)

TURN = re.compile(r"^/v1/sessions/[^/]+/turns$")


def turn_post(seen: Seen) -> bool:
    return seen.method == "POST" and bool(TURN.match(seen.path))


def followed(seen: Seen) -> bool:
    return seen.method == "GET" and "/events?" in seen.path and "follow=1" in seen.path


def error_body(code: str, message: str) -> str:
    return json.dumps({"error": {"code": code, "message": message}})


def test_waits_the_retry_after_of_a_429_and_runs_once(server_url: str, hostile) -> None:
    front = hostile(
        turn_post,
        answer(429, {"content-type": "application/json", "retry-after": "2"}, error_body("rate_limited", "slow down")),
    )
    with TurnlineClient(server_url) as direct, TurnlineClient(
        front.url, retry=RetryPolicy(initial_delay=0.02, max_delay=0.1)
    ) as client:
        sid = direct.create_session()["session_id"]
        turn = client.stream_turn(sid, "hello")
        seqs = [item["seq"] for item in turn]
        assert turn.result()["status"] == "completed"
        posts = [seen for seen in front.seen if turn_post(seen)]
        assert len(posts) == 2
        assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"] == turn.idempotency_key
        # Sent again once the server's 2 s had passed, not after the 0.1 s of the backoff.
        assert posts[1].at - posts[0].at >= 1.9
        assert direct.get_session(sid)["turn_count"] == 1
        assert seqs == [e["seq"] for e in direct.events(sid)][1:]


def test_waits_a_gateways_503_whose_retry_after_is_an_http_date(server_url: str, hostile) -> None:
    def unavailable(handler, forward) -> None:
        # Whole seconds: 3 s from now is 2 to 3 s away.
        handler.head(503, {"content-type": "text/html", "retry-after": formatdate(time.time() + 3, usegmt=True)})
        handler.wfile.write(b"<html>service unavailable</html>")

    front = hostile(turn_post, unavailable)
    with TurnlineClient(server_url) as direct, TurnlineClient(
        front.url, retry=RetryPolicy(initial_delay=0.02, max_delay=0.1)
    ) as client:
        sid = direct.create_session()["session_id"]
        turn = client.stream_turn(sid, "hello")
        assert turn.result()["status"] == "completed"
        posts = [seen for seen in front.seen if turn_post(seen)]
        assert len(posts) == 2
        assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
        assert posts[1].at - posts[0].at >= 1.5
        assert direct.get_session(sid)["turn_count"] == 1


def test_raises_at_once_a_retry_after_longer_than_it_waits(server_url: str, hostile) -> None:
    front = hostile(
        turn_post,
        answer(
            429,
            {"content-type": "application/json", "retry-after": "3600"},
            error_body("too_many_concurrent_turns", "too many turns"),
        ),
    )
    with TurnlineClient(server_url) as direct, TurnlineClient(
        front.url, retry=RetryPolicy(max_retry_after=10.0)
    ) as client:
        sid = direct.create_session()["session_id"]
        turn = client.stream_turn(sid, "hello")
        with pytest.raises(TurnlineApiError) as raised:
            turn.result()
        assert raised.value.code == "too_many_concurrent_turns"
        assert raised.value.retry_after_seconds == 3600
        assert raised.value.idempotency_key == turn.idempotency_key
        assert len([seen for seen in front.seen if turn_post(seen)]) == 1
        assert direct.get_session(sid)["turn_count"] == 0


@pytest.mark.parametrize(
    "act",
    [stall_after(120), swallow_the_answer],
    ids=["a silent turn stream", "an answer that never starts"],
)
def test_resumes_a_turn_with_the_same_key(server_url: str, hostile, act: Act) -> None:
    front = hostile(turn_post, act)
    with TurnlineClient(server_url) as direct, TurnlineClient(front.url, retry=RetryPolicy(idle_timeout=0.5)) as client:
        sid = direct.create_session()["session_id"]
        turn = client.stream_turn(sid, "hello")
        seqs = [item["seq"] for item in turn]
        assert turn.result()["status"] == "completed"
        posts = [seen for seen in front.seen if turn_post(seen)]
        assert len(posts) == 2
        assert posts[0].headers["idempotency-key"] == posts[1].headers["idempotency-key"]
        assert direct.get_session(sid)["turn_count"] == 1
        assert seqs == [e["seq"] for e in direct.events(sid)][1:]


def test_resumes_a_silent_turn_stream_async(server_url: str, hostile) -> None:
    front = hostile(turn_post, stall_after(120))

    async def run() -> None:
        async with AsyncTurnlineClient(server_url) as direct, AsyncTurnlineClient(
            front.url, retry=RetryPolicy(idle_timeout=0.5)
        ) as client:
            sid = (await direct.create_session())["session_id"]
            turn = client.stream_turn(sid, "hello")
            seqs = [item["seq"] async for item in turn]
            assert (await turn.result())["status"] == "completed"
            assert len([seen for seen in front.seen if turn_post(seen)]) == 2
            assert (await direct.get_session(sid))["turn_count"] == 1
            assert seqs == [e["seq"] async for e in direct.events(sid)][1:]

    asyncio.run(run())


def test_reconnects_a_silent_followed_feed_with_last_event_id(server_url: str, hostile) -> None:
    front = hostile(followed, stall_after(300))
    with TurnlineClient(server_url) as direct, TurnlineClient(front.url, retry=RetryPolicy(idle_timeout=0.5)) as client:
        sid = direct.create_session()["session_id"]
        direct.step_turn(sid, "hello")
        seqs: list[int] = []
        done = threading.Event()

        def follow() -> None:
            for item in client.events(sid, follow=True):
                seqs.append(item["seq"])
            done.set()

        threading.Thread(target=follow, daemon=True).start()
        wait_until(lambda: len([seen for seen in front.seen if followed(seen)]) >= 2, 30)
        direct.complete(sid)
        assert done.wait(60)
        assert seqs == [e["seq"] for e in direct.events(sid)]
        again = [seen for seen in front.seen if followed(seen)][1]
        assert int(again.headers["last-event-id"]) >= 0


def test_fails_a_turn_whose_sse_line_never_ends(server_url: str, hostile) -> None:
    front = hostile(turn_post, endless(200, {"content-type": "text/event-stream"}, "id: 1\ndata: ", "x"))
    with TurnlineClient(server_url) as direct, TurnlineClient(front.url) as client:
        sid = direct.create_session()["session_id"]
        with pytest.raises(TurnlineProtocolError, match="an SSE frame passed 64 Mi characters"):
            client.stream_turn(sid, "hello").result()


def test_fails_an_events_page_whose_ndjson_line_never_ends(server_url: str, hostile) -> None:
    front = hostile(
        lambda seen: "/events" in seen.path,
        endless(200, {"content-type": "application/x-ndjson"}, '{"seq":0,"event":"', "x"),
    )
    with TurnlineClient(server_url) as direct, TurnlineClient(front.url) as client:
        sid = direct.create_session()["session_id"]
        with pytest.raises(TurnlineProtocolError, match="an NDJSON line passed 64 Mi characters"):
            client.read_events(sid)


def test_shows_the_start_of_an_error_page_that_never_ends(server_url: str, hostile) -> None:
    front = hostile(
        lambda seen: seen.path == "/v1/sessions/some-session",
        endless(502, {"content-type": "text/html"}, "<html>bad gateway", " "),
    )
    with TurnlineClient(front.url) as client:
        with pytest.raises(TurnlineApiError) as raised:
            client.get_session("some-session")
        assert raised.value.status == 502
        assert raised.value.code == "http_error"
        assert raised.value.message.startswith("HTTP 502: <html>bad gateway")


def test_an_event_id_that_is_not_a_seq_is_a_protocol_error(server_url: str, hostile) -> None:
    front = hostile(
        followed,
        answer(200, {"content-type": "text/event-stream"}, 'id: \u00b2\ndata: {"type":"thread.started"}\n\n'),
    )
    with TurnlineClient(server_url) as direct, TurnlineClient(front.url) as client:
        sid = direct.create_session()["session_id"]
        with pytest.raises(TurnlineProtocolError, match="an event id is not a seq"):
            next(iter(client.events(sid, follow=True)))

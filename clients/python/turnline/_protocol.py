"""What the sync and the async client share: paths, SSE frames, seqs, retry and resume decisions.

No I/O here: each client feeds bytes and answers in, and acts on what comes out.
"""

from __future__ import annotations

import json
import random
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Optional, TypedDict
from urllib.parse import quote

from ._sse import SseFrame
from .errors import (
    TurnlineApiError,
    TurnlineConnectionError,
    TurnlineProtocolError,
    api_error_of,
)


class SeqEvent(TypedDict):
    """One event of a session with its seq (the SSE ``id``, the feed's ``seq``)."""

    seq: int
    #: The SSE id: the seq as text, what ``Last-Event-ID`` resumes after.
    id: str
    #: The ThreadEvent (VT Code schema 0.11.0) as JSON: ``event["type"]`` names it.
    event: dict[str, Any]


def session_path(session_id: str, tail: str = "") -> str:
    return f"/v1/sessions/{quote(session_id, safe='')}{tail}"


def new_idempotency_key() -> str:
    """A key for a call that takes one when the caller gave none (as the TypeScript client's)."""
    return f"tl-{uuid.uuid4()}"


def seq_of(frame_id: str) -> int:
    # ASCII digits only: str.isdigit() takes "²" too, which int() refuses with a ValueError.
    if not (frame_id.isascii() and frame_id.isdigit()):
        raise TurnlineProtocolError(f"an event id is not a seq: {frame_id[:40]}", 200)
    return int(frame_id)


def event_of(data: str) -> dict[str, Any]:
    try:
        event = json.loads(data)
    except ValueError:
        raise TurnlineProtocolError(f"an event is not JSON: {data[:200]}", 200) from None
    if not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise TurnlineProtocolError(f"an event has no type: {data[:200]}", 200)
    return event


def parse_json(text: str, status: int, *keys: str) -> Any:
    """An answer's JSON, an object with ``keys``; anything else is not the API's contract."""
    try:
        value = json.loads(text)
    except ValueError:
        raise TurnlineProtocolError(f"the answer is not JSON: {text[:200]}", status) from None
    if not isinstance(value, dict) or any(key not in value for key in keys):
        raise TurnlineProtocolError(
            f"the answer does not match the API contract (expected {', '.join(keys)}): {text[:200]}",
            status,
        )
    return value


def turn_events(answer: dict[str, Any]) -> list[SeqEvent]:
    """A TurnResponse's events with their seqs (``next_seq - len(events) …``)."""
    events = answer["events"]
    first = int(answer["next_seq"]) - len(events)
    return [{"seq": first + i, "id": str(first + i), "event": e} for i, e in enumerate(events)]


@dataclass
class RetryPolicy:
    """How a stream reconnects after its connection drops (the TypeScript client's defaults)."""

    #: Attempts in a row without a new event before giving up.
    max_attempts: int = 5
    #: First pause in seconds; it doubles per attempt, with jitter.
    initial_delay: float = 0.25
    #: Longest pause of the backoff in seconds.
    max_delay: float = 5.0
    #: Longest ``Retry-After`` waited for, in seconds (the tenant's request window): a server that
    #: asks for a longer wait gets its error raised at once (``retry_after_seconds`` says how long).
    max_retry_after: float = 60.0
    #: A stream that sends nothing for this long, in seconds (the server sends ``: keep-alive``
    #: every 15 s), counts as a dropped connection and is resumed; its answer's head too.
    idle_timeout: float = 60.0
    #: How long a resumed turn waits while its first request still runs on the server.
    busy_timeout: float = 600.0

    def backoff(self, attempt: int, error: Optional[BaseException] = None) -> float:
        """The pause before attempt ``attempt`` (1-based): the server's Retry-After when it sent one (a
        retry sooner would be refused again), else exponential with ±25 % jitter. A Retry-After past
        ``max_retry_after`` is not waited for: ``error`` itself is raised."""
        if isinstance(error, TurnlineApiError) and error.retry_after_seconds is not None:
            if error.retry_after_seconds > self.max_retry_after:
                raise error
            return error.retry_after_seconds
        base = min(self.max_delay, self.initial_delay * 2 ** (attempt - 1))
        return base * (0.75 + random.random() * 0.5)


def is_transient(error: BaseException) -> bool:
    """A dropped connection, or an answer that says the same request may work later."""
    if isinstance(error, TurnlineConnectionError):
        return True
    return isinstance(error, TurnlineApiError) and error.retryable and error.code != "session_busy"


@dataclass
class TurnProgress:
    """A streamed turn's state across reconnections: the last seq delivered, failures in a row."""

    key: Optional[str]
    policy: RetryPolicy
    last: int = -1
    failures: int = 0
    resuming: bool = False
    busy_since: Optional[float] = None
    result: Optional[dict[str, Any]] = None
    pending: list[SeqEvent] = field(default_factory=list)

    def frame(self, frame: SseFrame) -> None:
        """Takes one frame: new events go to ``pending``, the answer to ``result``."""
        if frame.event == "turn.result":
            answer = parse_json(frame.data, 200, "turn_id", "status", "events", "next_seq")
            self.answer(answer)
        elif frame.event == "error":
            raise api_error_of(None, frame.data, in_stream=True, idempotency_key=self.key)
        elif frame.id is not None:
            seq = seq_of(frame.id)
            if seq > self.last:
                self.last = seq
                self.failures = 0
                self.pending.append({"seq": seq, "id": frame.id, "event": event_of(frame.data)})

    def answer(self, answer: dict[str, Any]) -> None:
        """The TurnResponse: events a replay or a resumed request did not send live come with it."""
        for item in turn_events(answer):
            if item["seq"] > self.last:
                self.last = item["seq"]
                self.pending.append(item)
        self.result = answer

    def take(self) -> list[SeqEvent]:
        out, self.pending = self.pending, []
        return out

    def after_failure(self, error: BaseException, now: float) -> float:
        """The pause before sending the turn again, or raises: what the failure allows."""
        if self.key is None or (isinstance(error, TurnlineApiError) and error.in_stream):
            raise error
        if self.resuming and isinstance(error, TurnlineApiError) and error.code == "session_busy":
            # Our own first request still runs on the server: wait for it to finish.
            if self.busy_since is None:
                self.busy_since = now
            if now - self.busy_since > self.policy.busy_timeout:
                raise error
            # Asked again within 2 s whatever Retry-After says: it is our own turn that holds it.
            return min(error.retry_after_seconds or 1.0, 2.0)
        self.failures += 1
        if not is_transient(error) or self.failures > self.policy.max_attempts:
            if isinstance(error, TurnlineConnectionError) and error.idempotency_key is None:
                raise TurnlineConnectionError(str(error), self.key) from error
            raise error
        self.resuming = True
        return self.policy.backoff(self.failures, error)


@dataclass
class FeedProgress:
    """An events feed's state across reconnections: the last seq delivered, failures in a row,
    what the current connection delivered, whether ``thread.completed`` came."""

    policy: RetryPolicy
    last: int = -1
    failures: int = 0
    this_connection: int = 0
    completed: bool = False

    def page(self, page: list[SeqEvent]) -> Iterator[SeqEvent]:
        """The new events of an NDJSON page, each marked delivered."""
        self.failures = 0
        for item in page:
            if item["seq"] > self.last:
                yield self.delivered(item)

    def expect_stream(self, status: int, headers: Mapping[str, str]) -> None:
        """A followed feed's response, checked; a new connection delivered nothing yet."""
        if not headers.get("content-type", "").startswith("text/event-stream"):
            raise TurnlineProtocolError("the followed feed is not an event stream", status)
        self.this_connection = 0

    def accept(self, frame: SseFrame) -> Optional[SeqEvent]:
        """A new event of a frame, or None (a comment, an event already delivered)."""
        if frame.event == "error":
            raise api_error_of(None, frame.data, in_stream=True)
        if frame.id is None:
            return None
        seq = seq_of(frame.id)
        if seq <= self.last:
            return None
        return {"seq": seq, "id": frame.id, "event": event_of(frame.data)}

    def fills(self, gap: SeqEvent, item: SeqEvent) -> bool:
        """Whether ``gap`` (read from the feed) comes before ``item``: then it is delivered."""
        if gap["seq"] >= item["seq"]:
            return False
        self.delivered(gap)
        return True

    def delivered(self, item: SeqEvent) -> SeqEvent:
        self.last = item["seq"]
        self.failures = 0
        self.this_connection += 1
        self.completed = item["event"]["type"] == "thread.completed"
        return item

    def completed_through(self, view: Mapping[str, Any]) -> bool:
        """Whether the session is completed and every event up to its last was delivered."""
        return view["status"] == "completed" and int(view.get("last_seq", -1)) <= self.last

    def ended(self, elapsed: float) -> None:
        """The server ended the stream: reconnect at once, unless it ends at once, empty, again
        and again (then raise, to reconnect with the backoff, and not forever)."""
        if self.this_connection == 0 and elapsed < 1:
            raise TurnlineConnectionError("the event stream ended at once")

    def after_failure(self, error: BaseException) -> float:
        """The pause before reconnecting, or raises when the failure is not transient or lasts."""
        self.failures += 1
        if not is_transient(error) or self.failures > self.policy.max_attempts:
            raise error
        return self.policy.backoff(self.failures, error)


def feed_line(line: str, status: int) -> SeqEvent:
    """One line of the NDJSON events feed: ``{"seq", "event"}``."""
    value = parse_json(line, status, "seq", "event")
    seq = value["seq"]
    event = value["event"]
    if not isinstance(seq, int) or not isinstance(event, dict) or not isinstance(event.get("type"), str):
        raise TurnlineProtocolError(f"a feed line does not match the contract: {line[:200]}", status)
    return {"seq": seq, "id": str(seq), "event": event}


def follow_query(session_id: str, last: int) -> tuple[Any, dict[str, str]]:
    """The followed feed's call and headers, resuming after ``last``."""
    from ._routes import Call

    query: dict[str, Any] = {"follow": 1}
    headers = {"accept": "text/event-stream"}
    if last >= 0:
        query["after"] = last
        headers["last-event-id"] = str(last)
    return Call("GET", session_path(session_id, "/events"), query=query), headers


def next_seq_of(headers: Mapping[str, str]) -> Optional[int]:
    """The ``Turnline-Next-Seq`` of an NDJSON page."""
    value = headers.get("turnline-next-seq", "")
    return int(value) if value.isascii() and value.isdigit() else None


def clean(values: dict[str, Any]) -> dict[str, Any]:
    """``values`` without its None entries (a query, a body)."""
    return {key: value for key, value in values.items() if value is not None}

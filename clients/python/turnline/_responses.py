"""What the sync and the async ``responses`` share: the events of a response stream, what a cut
stream resumes from, the running response a keyed retry was refused for. No I/O here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional

from ._protocol import FeedProgress, is_transient, parse_json
from ._sse import SseDecoder, SseFrame
from .errors import TurnlineApiError, TurnlineProtocolError

ResponseEvent = dict[str, Any]


def response_event(frame: SseFrame) -> ResponseEvent:
    """A frame's Open Responses event: ``{type, sequence_number, …}``."""
    event = parse_json(frame.data, 200, "type", "sequence_number")
    seq = event["sequence_number"]
    if not isinstance(event["type"], str) or not isinstance(seq, int) or isinstance(seq, bool) or seq < 0:
        raise TurnlineProtocolError(f"a response event does not match the contract: {frame.data[:200]}", 200)
    return event


class ResponseFrames:
    """The events of a response stream from its text as it arrives, until ``data: [DONE]``
    (then ``done``; nothing after it is looked at)."""

    def __init__(self) -> None:
        self._decoder = SseDecoder()
        self.done = False

    def push(self, text: str) -> list[ResponseEvent]:
        events: list[ResponseEvent] = []
        for frame in self._decoder.push(text):
            if frame.data == "[DONE]":
                self.done = True
                break
            events.append(response_event(frame))
        return events


@dataclass
class StreamProgress:
    """A ``POST /v1/responses`` stream's state: the last number delivered, the response it named."""

    last: int = -1
    response_id: Optional[str] = None

    def delivered(self, event: ResponseEvent) -> ResponseEvent:
        if event["type"] == "response.created":
            self.response_id = response_id_of(event)
        self.last = event["sequence_number"]
        return event

    def resumed_after(self, error: BaseException) -> str:
        """The response to follow once ``error`` cut the stream, or raises it: a stream cut before
        ``response.created`` named its response cannot be found again (its error carries the key)."""
        if self.response_id is None or not is_transient(error):
            raise error
        return self.response_id


def followed(progress: FeedProgress, events: list[ResponseEvent]) -> list[ResponseEvent]:
    """The events of a followed response after the last number delivered, marked delivered."""
    new: list[ResponseEvent] = []
    for event in events:
        if event["sequence_number"] > progress.last:
            progress.last, progress.failures = event["sequence_number"], 0
            new.append(event)
    return new


def response_id_of(event: ResponseEvent) -> Optional[str]:
    """The id of the response an event carries (``response.created``'s ``response.id``)."""
    response = event.get("response")
    rid = response.get("id") if isinstance(response, dict) else None
    return rid if isinstance(rid, str) else None


def running_response_of(error: BaseException) -> Optional[str]:
    """The response a keyed ``POST /v1/responses`` was refused for while it runs: the 409
    ``session_busy``'s ``details.response_id`` (follow it with ``responses.events(id)``, read it
    with ``responses.get(id)`` once it ended); None for any other error."""
    if not isinstance(error, TurnlineApiError) or error.code != "session_busy":
        return None
    rid = (error.details or {}).get("response_id")
    return rid if isinstance(rid, str) and rid else None

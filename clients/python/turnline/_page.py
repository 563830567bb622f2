"""One page of the NDJSON events feed as its bytes arrive, bounded: its bytes by ``max_bytes``
(the client's ``max_answer_bytes`` by default), its events by the ``limit`` asked for (or the
contract's largest, 5000). No I/O here: each client feeds the pieces in."""

from __future__ import annotations

import codecs
from typing import Mapping, Optional

from ._protocol import SeqEvent, feed_line
from ._sse import AnswerBound, Lines
from .errors import TurnlineProtocolError

#: The most events a page may hold when none was asked: the contract's largest ``limit``.
MAX_PAGE_EVENTS = 5000


class EventPage:
    """The events of one page; past its bounds a :class:`TurnlineAnswerTooLargeError` (bytes) or a
    :class:`TurnlineProtocolError` (more events than asked for), the rest not read."""

    def __init__(
        self,
        status: int,
        headers: Mapping[str, str],
        limit: Optional[int],
        max_bytes: Optional[int],
        default_max: int,
    ) -> None:
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be positive: {max_bytes}")
        self._status = status
        self._max_events = limit if limit is not None else MAX_PAGE_EVENTS
        named = {"what": "an events page", "hint": "ask for fewer events a page (limit)"}
        if max_bytes is not None:
            named["option"] = "max_bytes"
        bound = default_max if max_bytes is None else max_bytes
        self._bound = AnswerBound(bound, status, headers.get("content-length"), **named)
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._lines = Lines()
        self.events: list[SeqEvent] = []

    def push(self, piece: bytes) -> None:
        self._bound.count(piece)
        for line in self._lines.push(self._decoder.decode(piece)):
            self._line(line)

    def end(self) -> list[SeqEvent]:
        for line in self._lines.push(self._decoder.decode(b"", final=True)) + self._lines.end():
            self._line(line)
        return self.events

    def _line(self, line: str) -> None:
        if not line.strip():
            return
        if len(self.events) >= self._max_events:
            raise TurnlineProtocolError(
                f"an events page passed the {self._max_events} events asked for; the rest was not read", self._status
            )
        self.events.append(feed_line(line, self._status))

"""Server-Sent Events, decoded from text as it arrives (the server's frames: docs/http-api.md)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterator, Optional

from .errors import TurnlineAnswerTooLargeError, TurnlineProtocolError

#: The most one SSE frame or NDJSON line may hold: 64 Mi characters, four times the 16 MiB of
#: events one invocation may hold (its ``turn.result`` frame), as the TypeScript client's.
MAX_FRAME_CHARS = 64 * 1024 * 1024

#: The default bound of a whole JSON answer: 256 MiB, four times the largest request body a server
#: takes (``TURNLINE_MAX_BODY_BYTES`` at most 64 MiB), which its largest answers echo (a session's
#: config), as the TypeScript client's ``maxAnswerBytes``.
DEFAULT_MAX_ANSWER_BYTES = 256 * 1024 * 1024

_BREAK = re.compile(r"[\r\n]")


def too_long(what: str) -> TurnlineProtocolError:
    return TurnlineProtocolError(
        f"{what} passed {MAX_FRAME_CHARS // (1024 * 1024)} Mi characters without its end; the rest was not read",
        200,
    )


@dataclass
class SseFrame:
    event: str = "message"
    id: Optional[str] = None
    data: str = ""


class SseDecoder:
    """Server-Sent Events from text as it arrives: comments and frames without data are skipped;
    ``\\n``, ``\\r\\n`` and ``\\r`` line ends are accepted; a last frame without its blank line is
    never dispatched (it may be torn).

    A line that spans many pushes is kept as its pieces, only the new text looked at, and joined
    once its end arrives, so the work is linear in the text however it is split; a frame past
    :data:`MAX_FRAME_CHARS` raises a :class:`TurnlineProtocolError`."""

    def __init__(self) -> None:
        self._pending: list[str] = []
        self._pending_chars = 0
        self._event: Optional[str] = None
        self._id: Optional[str] = None
        self._data: list[str] = []
        self._data_chars = 0

    @property
    def held_chars(self) -> int:
        """Characters of the frame under way: its data lines so far and the line still open."""
        return self._pending_chars + self._data_chars

    def push(self, text: str) -> Iterator[SseFrame]:
        frames = list(self._push(text))
        if self.held_chars > MAX_FRAME_CHARS:
            raise too_long("an SSE frame")
        return iter(frames)

    def _push(self, text: str) -> Iterator[SseFrame]:
        if self._pending and not self._pending[-1].endswith("\r") and not _BREAK.search(text):
            # The open line goes on: only the new text is looked at.
            self._pending.append(text)
            self._pending_chars += len(text)
            return
        buffer = "".join(self._pending) + text
        start = 0
        while True:
            found = _BREAK.search(buffer, start)
            if found is None:
                break
            at = found.start()
            skip = 1
            if buffer[at] == "\r":
                if at + 1 == len(buffer):
                    break  # a "\r" that may be the start of "\r\n"
                if buffer[at + 1] == "\n":
                    skip = 2
            frame = self._line(buffer[start:at])
            start = at + skip
            if frame is not None:
                yield frame
        rest = buffer[start:]
        self._pending = [rest] if rest else []
        self._pending_chars = len(rest)

    def _line(self, line: str) -> Optional[SseFrame]:
        if line == "":
            frame = None
            if self._data:
                frame = SseFrame(self._event or "message", self._id, "\n".join(self._data))
            self._event, self._id, self._data, self._data_chars = None, None, [], 0
            return frame
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
            self._data_chars += len(value) + 1
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None


class Lines:
    """The lines of an NDJSON body as its text arrives, without their ends (a ``\\r`` before
    ``\\n`` dropped). An open line is kept as its pieces and joined once its end arrives; one past
    :data:`MAX_FRAME_CHARS` raises a :class:`TurnlineProtocolError`."""

    def __init__(self) -> None:
        self._open: list[str] = []
        self._open_chars = 0

    def push(self, text: str) -> list[str]:
        *ended, rest = text.split("\n")
        done: list[str] = []
        if ended:
            ended[0] = "".join(self._open) + ended[0]
            self._open, self._open_chars = [], 0
            done = [line[:-1] if line.endswith("\r") else line for line in ended]
        if rest:
            self._open.append(rest)
            self._open_chars += len(rest)
            if self._open_chars > MAX_FRAME_CHARS:
                raise too_long("an NDJSON line")
        return done

    def end(self) -> list[str]:
        """The last line, when the body did not end with a line end."""
        rest = "".join(self._open)
        self._open, self._open_chars = [], 0
        return [rest] if rest else []


class AnswerBound:
    """Counts the bytes of a whole answer as they arrive; past ``max_bytes`` (or a Content-Length
    that says so) raises a :class:`TurnlineAnswerTooLargeError`, the rest not read. ``what``,
    ``option`` and ``hint`` go into its message (what was read, the bound's option, another way)."""

    def __init__(
        self, max_bytes: int, status: int, content_length: Optional[str] = None, **named: Any
    ) -> None:
        self._max = max_bytes
        self._status = status
        self._named = named
        self._read = 0
        self.pieces: list[bytes] = []
        if content_length is not None and content_length.isascii() and content_length.isdigit():
            if int(content_length) > max_bytes:
                raise TurnlineAnswerTooLargeError(max_bytes, status, size=int(content_length), **named)

    def count(self, piece: bytes) -> None:
        """Counts a piece the caller does not keep here."""
        self._read += len(piece)
        if self._read > self._max:
            raise TurnlineAnswerTooLargeError(self._max, self._status, **self._named)

    def push(self, piece: bytes) -> None:
        self.count(piece)
        self.pieces.append(piece)

    def text(self, encoding: Optional[str]) -> str:
        return b"".join(self.pieces).decode(encoding or "utf-8", "replace")


def artifact_bound(response: Any, artifact_id: str, default_max: int, max_bytes: Optional[int]) -> AnswerBound:
    """The bound of an output artifact read into memory: ``max_bytes``, or the client's
    ``max_answer_bytes``; one that says it is larger raises at once, naming its size."""
    if max_bytes is not None and max_bytes < 1:
        raise ValueError(f"max_bytes must be positive: {max_bytes}")
    return AnswerBound(
        default_max if max_bytes is None else max_bytes,
        response.status_code,
        response.headers.get("content-length"),
        what=f"output artifact {artifact_id}",
        option="the client's max_answer_bytes" if max_bytes is None else "max_bytes",
        hint="output_artifact streams it",
    )

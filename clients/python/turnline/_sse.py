"""Server-Sent Events, decoded from text as it arrives (the server's frames: docs/http-api.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Optional


@dataclass
class SseFrame:
    event: str = "message"
    id: Optional[str] = None
    data: str = ""


class SseDecoder:
    """Server-Sent Events from text as it arrives: comments and frames without data are skipped;
    ``\\n``, ``\\r\\n`` and ``\\r`` line ends are accepted; a last frame without its blank line is
    never dispatched (it may be torn)."""

    def __init__(self) -> None:
        self._buffer = ""
        self._event: Optional[str] = None
        self._id: Optional[str] = None
        self._data: list[str] = []

    def push(self, text: str) -> Iterator[SseFrame]:
        self._buffer += text
        while True:
            ends = [i for i in (self._buffer.find("\n"), self._buffer.find("\r")) if i >= 0]
            if not ends:
                return
            at = min(ends)
            if self._buffer[at] == "\r" and at + 1 == len(self._buffer):
                return  # a "\r" that may be the start of "\r\n"
            line = self._buffer[:at]
            skip = 2 if self._buffer.startswith("\r\n", at) else 1
            self._buffer = self._buffer[at + skip :]
            frame = self._line(line)
            if frame is not None:
                yield frame

    def _line(self, line: str) -> Optional[SseFrame]:
        if line == "":
            frame = None
            if self._data:
                frame = SseFrame(self._event or "message", self._id, "\n".join(self._data))
            self._event, self._id, self._data = None, None, []
            return frame
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id" and "\0" not in value:
            self._id = value
        return None

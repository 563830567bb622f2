"""A turn streamed as it runs (``TurnlineClient.stream_turn``), and reading a streamed body."""

from __future__ import annotations

import time
from contextlib import closing
from typing import TYPE_CHECKING, Any, Iterator, Optional

import httpx

from ._routes import TURN_KEYS, Call, ERROR_BODY_BYTES, refusal_of
from ._protocol import SeqEvent, TurnProgress, parse_json
from ._sse import AnswerBound, SseDecoder
from .errors import TurnlineApiError, TurnlineConnectionError, TurnlineError

if TYPE_CHECKING:
    from .client import TurnlineClient

def _chunks(response: httpx.Response, key: Optional[str] = None) -> Iterator[str]:
    """The body's text as it arrives; a connection that breaks is a TurnlineConnectionError."""
    try:
        yield from response.iter_text()
    except httpx.TransportError as error:
        raise TurnlineConnectionError(f"the connection broke: {error}", key) from error


def _pieces(response: httpx.Response, key: Optional[str] = None) -> Iterator[bytes]:
    """The body's bytes as they arrive; a connection that breaks is a TurnlineConnectionError."""
    try:
        yield from response.iter_bytes()
    except httpx.TransportError as error:
        raise TurnlineConnectionError(f"the connection broke: {error}", key) from error


def _refusal(response: httpx.Response, key: Optional[str]) -> TurnlineApiError:
    """The API's error of a non-2xx answer: only the start of its body is read (the rest of a page
    that never ends is not)."""
    with closing(response):
        head = b""
        try:
            for piece in response.iter_bytes():
                head += piece
                if len(head) >= ERROR_BODY_BYTES:
                    break
        except httpx.TransportError:
            pass
    return refusal_of(response, head, key)


def _answer_text(response: httpx.Response, max_bytes: int, key: Optional[str] = None) -> str:
    """The whole body's text, at most ``max_bytes`` of it (else a TurnlineAnswerTooLargeError);
    a connection that breaks is a TurnlineConnectionError."""
    bound = AnswerBound(max_bytes, response.status_code, response.headers.get("content-length"))
    for piece in _pieces(response, key):
        bound.push(piece)
    return bound.text(response.encoding)


class TurnStream:
    """A turn streamed as it runs: iterate it (once) for the events, then ``result()``."""

    def __init__(self, client: "TurnlineClient", call: Call) -> None:
        self._client = client
        self._call = call
        self.idempotency_key = call.key
        self._progress = TurnProgress(call.key, client.retry)
        self._iterating = False

    def __iter__(self) -> Iterator[SeqEvent]:
        if self._iterating:
            raise TypeError("a TurnStream can be iterated once")
        self._iterating = True
        progress = self._progress
        headers = {"accept": "text/event-stream"}
        while True:
            try:
                response = self._client._open(self._call, headers, idle=progress.policy.idle_timeout)
                with closing(response):
                    progress.busy_since = None
                    if not response.headers.get("content-type", "").startswith("text/event-stream"):
                        text = _answer_text(response, self._client.max_answer_bytes, progress.key)
                        progress.answer(parse_json(text, response.status_code, *TURN_KEYS))
                        yield from progress.take()
                        return
                    decoder = SseDecoder()
                    for chunk in _chunks(response, progress.key):
                        for frame in decoder.push(chunk):
                            progress.frame(frame)
                            yield from progress.take()
                            if progress.result is not None:
                                return
                raise TurnlineConnectionError("the turn stream ended without its result", progress.key)
            except TurnlineError as error:
                time.sleep(progress.after_failure(error, time.monotonic()))

    def result(self) -> dict[str, Any]:
        """The TurnResponse; reads (and drops) the events not iterated yet."""
        if not self._iterating:
            for _ in self:
                pass
        if self._progress.result is None:
            raise TypeError("the TurnStream was closed before its result")
        return self._progress.result

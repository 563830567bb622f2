"""A turn streamed as it runs (``AsyncTurnlineClient.stream_turn``), and reading a streamed body."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any, AsyncIterator, Optional

import httpx

from ._protocol import SeqEvent, TurnProgress, parse_json
from ._sse import AnswerBound, SseDecoder
from .errors import TurnlineApiError, TurnlineConnectionError, TurnlineError
from ._routes import ERROR_BODY_BYTES, TURN_KEYS, Call, refusal_of

if TYPE_CHECKING:
    from .async_client import AsyncTurnlineClient

class _closing:
    """Closes a streamed response at the end of the block."""

    def __init__(self, response: httpx.Response) -> None:
        self._response = response

    async def __aenter__(self) -> httpx.Response:
        return self._response

    async def __aexit__(self, *exc: object) -> None:
        await self._response.aclose()


async def _chunks(response: httpx.Response, key: Optional[str] = None) -> AsyncIterator[str]:
    """The body's text as it arrives; a connection that breaks is a TurnlineConnectionError."""
    try:
        async for chunk in response.aiter_text():
            yield chunk
    except httpx.TransportError as error:
        raise TurnlineConnectionError(f"the connection broke: {error}", key) from error


async def _pieces(response: httpx.Response, key: Optional[str] = None) -> AsyncIterator[bytes]:
    """The body's bytes as they arrive; a connection that breaks is a TurnlineConnectionError."""
    try:
        async for piece in response.aiter_bytes():
            yield piece
    except httpx.TransportError as error:
        raise TurnlineConnectionError(f"the connection broke: {error}", key) from error


async def _refusal(response: httpx.Response, key: Optional[str]) -> TurnlineApiError:
    """The API's error of a non-2xx answer: only the start of its body is read (the rest of a page
    that never ends is not)."""
    async with _closing(response):
        head = b""
        try:
            async for piece in response.aiter_bytes():
                head += piece
                if len(head) >= ERROR_BODY_BYTES:
                    break
        except httpx.TransportError:
            pass
    return refusal_of(response, head, key)


async def _answer_text(response: httpx.Response, max_bytes: int, key: Optional[str] = None) -> str:
    """The whole body's text, at most ``max_bytes`` of it (else a TurnlineAnswerTooLargeError);
    a connection that breaks is a TurnlineConnectionError."""
    bound = AnswerBound(max_bytes, response.status_code, response.headers.get("content-length"))
    async for piece in _pieces(response, key):
        bound.push(piece)
    return bound.text(response.encoding)


class AsyncTurnStream:
    """A turn streamed as it runs: iterate it (once, ``async for``) for the events, then
    ``await result()``."""

    def __init__(self, client: "AsyncTurnlineClient", call: Call) -> None:
        self._client = client
        self._call = call
        self.idempotency_key = call.key
        self._progress = TurnProgress(call.key, client.retry)
        self._iterating = False

    async def __aiter__(self) -> AsyncIterator[SeqEvent]:
        if self._iterating:
            raise TypeError("a TurnStream can be iterated once")
        self._iterating = True
        progress = self._progress
        headers = {"accept": "text/event-stream"}
        while True:
            try:
                response = await self._client._open(self._call, headers, idle=progress.policy.idle_timeout)
                async with _closing(response):
                    progress.busy_since = None
                    if not response.headers.get("content-type", "").startswith("text/event-stream"):
                        text = await _answer_text(response, self._client.max_answer_bytes, progress.key)
                        progress.answer(parse_json(text, response.status_code, *TURN_KEYS))
                        for item in progress.take():
                            yield item
                        return
                    decoder = SseDecoder()
                    async for chunk in _chunks(response, progress.key):
                        for frame in decoder.push(chunk):
                            progress.frame(frame)
                            for item in progress.take():
                                yield item
                            if progress.result is not None:
                                return
                raise TurnlineConnectionError("the turn stream ended without its result", progress.key)
            except TurnlineError as error:
                await asyncio.sleep(progress.after_failure(error, time.monotonic()))

    async def result(self) -> dict[str, Any]:
        """The TurnResponse; reads (and drops) the events not iterated yet."""
        if not self._iterating:
            async for _ in self:
                pass
        if self._progress.result is None:
            raise TypeError("the TurnStream was closed before its result")
        return self._progress.result

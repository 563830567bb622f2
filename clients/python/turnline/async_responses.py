"""The Open Responses-compatible endpoint of :class:`AsyncTurnlineClient` (``responses``): the
methods of :class:`turnline.responses.Responses`, awaited, streams as async iterators."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, AsyncIterator, Mapping, Optional

from . import _routes as routes
from ._protocol import FeedProgress
from ._responses import ResponseEvent, ResponseFrames, StreamProgress, followed, running_response_of
from .async_turn_stream import _chunks, _closing
from .errors import TurnlineApiError, TurnlineConnectionError, TurnlineError

if TYPE_CHECKING:
    from .async_client import AsyncTurnlineClient

SSE = {"accept": "text/event-stream"}


class AsyncResponses:
    """``/v1/responses`` of an :class:`AsyncTurnlineClient` (see :class:`turnline.responses.Responses`)."""

    def __init__(self, client: "AsyncTurnlineClient") -> None:
        self._client = client

    async def create(self, request: Mapping[str, Any], *, idempotency_key: Optional[str] = None) -> dict[str, Any]:
        """``POST /v1/responses`` (not streamed): the finished response resource."""
        return await self._client._call(routes.create_response(request, False, idempotency_key))

    async def get(self, response_id: str) -> dict[str, Any]:
        """``GET /v1/responses/{id}``: the response rebuilt from its session's committed events."""
        return await self._client._call(routes.get_response(response_id))

    async def stream(
        self, request: Mapping[str, Any], *, idempotency_key: Optional[str] = None
    ) -> AsyncIterator[ResponseEvent]:
        """``POST /v1/responses`` streamed, resumed and followed as the sync ``stream``."""
        call = routes.create_response(request, True, idempotency_key)
        try:
            response = await self._client._open(call, SSE)
        except TurnlineApiError as error:
            running = running_response_of(error)
            if running is None:
                raise
            async for event in self.events(running):
                yield event
            return
        progress = StreamProgress()
        try:
            async with _closing(response):
                frames = ResponseFrames()
                async for chunk in _chunks(response, call.key):
                    for event in frames.push(chunk):
                        yield progress.delivered(event)
                    if frames.done:
                        return
            raise TurnlineConnectionError("the response stream ended without [DONE]", call.key)
        except TurnlineError as error:
            running = progress.resumed_after(error)
        async for event in self.events(running, starting_after=progress.last):
            yield event

    async def events(self, response_id: str, *, starting_after: int = -1) -> AsyncIterator[ResponseEvent]:
        """``GET /v1/responses/{id}?stream=true``, followed until ``[DONE]`` as the sync ``events``."""
        progress = FeedProgress(self._client.retry, last=starting_after)
        while True:
            try:
                call = routes.response_events(response_id, progress.last)
                response = await self._client._open(call, SSE, idle=self._client.retry.idle_timeout)
                async with _closing(response):
                    frames = ResponseFrames()
                    async for chunk in _chunks(response):
                        for event in followed(progress, frames.push(chunk)):
                            yield event
                        if frames.done:
                            return
                raise TurnlineConnectionError(f"the response stream ended without [DONE] after {progress.last}")
            except TurnlineError as error:
                await asyncio.sleep(progress.after_failure(error))

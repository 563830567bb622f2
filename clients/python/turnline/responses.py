"""The Open Responses-compatible endpoint (``TurnlineClient.responses``, docs/http-api.md): one
exec session per response, as the TypeScript client's ``responses``.

Streams end at ``data: [DONE]``. A stream cut off before it (a dropped connection, the server's
follow limit) is resumed from the last ``sequence_number`` seen with ``GET /v1/responses/{id}``
(``starting_after``): the server keeps running a response whose client went away, and rebuilds its
stream with the same numbers, so every event arrives once."""

from __future__ import annotations

import time
from contextlib import closing
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Optional

from . import _routes as routes
from ._protocol import FeedProgress
from ._responses import ResponseEvent, ResponseFrames, StreamProgress, followed, running_response_of
from .errors import TurnlineApiError, TurnlineConnectionError, TurnlineError
from .turn_stream import _chunks

if TYPE_CHECKING:
    from .client import TurnlineClient

SSE = {"accept": "text/event-stream"}


class Responses:
    """``/v1/responses`` of a :class:`TurnlineClient`."""

    def __init__(self, client: "TurnlineClient") -> None:
        self._client = client

    def create(self, request: Mapping[str, Any], *, idempotency_key: Optional[str] = None) -> dict[str, Any]:
        """``POST /v1/responses`` (not streamed): the finished response resource. With an
        ``idempotency_key`` the same request sent again answers the same response, run once."""
        return self._client._call(routes.create_response(request, False, idempotency_key))

    def get(self, response_id: str) -> dict[str, Any]:
        """``GET /v1/responses/{id}``: the response rebuilt from its session's committed events."""
        return self._client._call(routes.get_response(response_id))

    def stream(self, request: Mapping[str, Any], *, idempotency_key: Optional[str] = None) -> Iterator[ResponseEvent]:
        """``POST /v1/responses`` streamed: the Open Responses events as they happen. Once
        ``response.created`` named the response, a cut stream continues with :meth:`events`; one
        cut before it raises a TurnlineConnectionError with the ``idempotency_key`` given (then
        sending it again is safe). Sent again with that key while the key's first request still
        runs (409 ``session_busy`` naming the running response), it follows that response from its
        first event instead."""
        call = routes.create_response(request, True, idempotency_key)
        try:
            response = self._client._open(call, SSE)
        except TurnlineApiError as error:
            running = running_response_of(error)
            if running is None:
                raise
            yield from self.events(running)
            return
        progress = StreamProgress()
        try:
            with closing(response):
                frames = ResponseFrames()
                for chunk in _chunks(response, call.key):
                    for event in frames.push(chunk):
                        yield progress.delivered(event)
                    if frames.done:
                        return
            raise TurnlineConnectionError("the response stream ended without [DONE]", call.key)
        except TurnlineError as error:
            running = progress.resumed_after(error)
        yield from self.events(running, starting_after=progress.last)

    def events(self, response_id: str, *, starting_after: int = -1) -> Iterator[ResponseEvent]:
        """``GET /v1/responses/{id}?stream=true``: its events after ``starting_after`` (default:
        all), followed while it runs, until ``[DONE]``; reconnects after a cut (``RetryPolicy``:
        bounded attempts with backoff; a silence past ``idle_timeout`` is a cut)."""
        progress = FeedProgress(self._client.retry, last=starting_after)
        while True:
            try:
                call = routes.response_events(response_id, progress.last)
                response = self._client._open(call, SSE, idle=self._client.retry.idle_timeout)
                with closing(response):
                    frames = ResponseFrames()
                    for chunk in _chunks(response):
                        yield from followed(progress, frames.push(chunk))
                        if frames.done:
                            return
                raise TurnlineConnectionError(f"the response stream ended without [DONE] after {progress.last}")
            except TurnlineError as error:
                time.sleep(progress.after_failure(error))

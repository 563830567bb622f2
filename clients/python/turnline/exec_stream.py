"""``POST /v1/exec`` (``exec`` of both clients): the NDJSON of bare ThreadEvents,
``thread.started`` … ``thread.completed``, as ``vtcode exec --json`` prints them.

It is sent with an Idempotency-Key, from which the server derives the run's session: a dropped
connection is a TurnlineConnectionError carrying the key, and the same request sent again with it
runs nothing twice (its events come again from the start). It asks for ``Prefer: keep-alive``
(blank lines while the run sends nothing): a server that applies it is held to ``idle`` seconds of
silence, its answer's head included, past which the run fails as a dropped connection; one that
does not (an older server) is waited without limit, as its silence may be a long command's.
"""

from __future__ import annotations

from contextlib import closing
from typing import TYPE_CHECKING, Any, AsyncIterator, Iterator

import httpx

from ._protocol import event_of
from ._routes import Call
from ._sse import Lines
from .async_turn_stream import _chunks as _async_chunks
from .async_turn_stream import _closing
from .turn_stream import _chunks

if TYPE_CHECKING:
    from .async_client import AsyncTurnlineClient
    from .client import TurnlineClient

HEADERS = {"prefer": "keep-alive"}


def _held_to_silence(response: httpx.Response) -> None:
    """When the server did not apply ``Prefer: keep-alive``, the body's reads wait without limit:
    the read timeout (the idle limit, which held the head) is lifted before the body is read."""
    applied = response.headers.get("preference-applied", "")
    if any(part.strip().lower() == "keep-alive" for part in applied.split(",")):
        return
    timeout = response.request.extensions.get("timeout")
    if isinstance(timeout, dict):
        # The transport reads this mapping when the body's first read starts.
        timeout["read"] = None


def _events(lines: list[str]) -> list[dict[str, Any]]:
    """The ThreadEvents of whole lines; the empty lines (the keep-alives) are skipped."""
    return [event_of(line) for line in lines if line.strip()]


def exec_events(client: "TurnlineClient", call: Call, idle: float) -> Iterator[dict[str, Any]]:
    response = client._open(call, HEADERS, idle=idle)
    with closing(response):
        _held_to_silence(response)
        lines = Lines()
        for chunk in _chunks(response, call.key):
            yield from _events(lines.push(chunk))
        yield from _events(lines.end())


async def async_exec_events(
    client: "AsyncTurnlineClient", call: Call, idle: float
) -> AsyncIterator[dict[str, Any]]:
    response = await client._open(call, HEADERS, idle=idle)
    async with _closing(response):
        _held_to_silence(response)
        lines = Lines()
        async for chunk in _async_chunks(response, call.key):
            for event in _events(lines.push(chunk)):
                yield event
        for event in _events(lines.end()):
            yield event

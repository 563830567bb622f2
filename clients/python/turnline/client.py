"""The synchronous client: one method per route, turns and event feeds as iterators."""

from __future__ import annotations

import time
from contextlib import closing
from typing import Any, Iterator, Mapping, Optional

import httpx

from . import _routes as routes
from ._input import TurnInput
from ._protocol import (
    FeedProgress,
    RetryPolicy,
    SeqEvent,
    follow_query,
    next_seq_of,
    parse_json,
    seq_of,
)
from ._page import EventPage
from ._sse import DEFAULT_MAX_ANSWER_BYTES, SseDecoder, artifact_bound
from .errors import TurnlineConnectionError, TurnlineError
from .exec_stream import exec_events
from .responses import Responses
from .turn_stream import TurnStream, _answer_text, _chunks, _pieces, _refusal


class TurnlineClient:
    """A Turnline server's HTTP API (docs/http-api.md), synchronously, on ``httpx``.

    ``api_key`` is sent as ``Authorization: Bearer``; ``headers`` with every request;
    ``transport`` is any ``httpx`` transport (tests, an app in the same process).
    """

    def __init__(
        self,
        base_url: str,
        *,
        api_key: Optional[str] = None,
        headers: Optional[Mapping[str, str]] = None,
        retry: Optional[RetryPolicy] = None,
        timeout: Optional[httpx.Timeout] = None,
        transport: Optional[httpx.BaseTransport] = None,
        max_answer_bytes: int = DEFAULT_MAX_ANSWER_BYTES,
    ) -> None:
        options = routes.http_options(base_url, api_key, headers, timeout)
        self.base_url: str = options["base_url"]
        self.retry = retry or RetryPolicy()
        if max_answer_bytes < 1:
            raise ValueError(f"max_answer_bytes must be positive: {max_answer_bytes}")
        #: The most a whole JSON answer may hold (a TurnlineAnswerTooLargeError past it).
        self.max_answer_bytes = max_answer_bytes
        self._http = httpx.Client(**options, **({"transport": transport} if transport else {}))
        #: The Open Responses-compatible endpoint (``/v1/responses``).
        self.responses = Responses(self)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "TurnlineClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def create_session(self, config: Optional[Mapping[str, Any]] = None) -> dict[str, Any]:
        """``POST /v1/sessions``: ``{session_id, thread_id, status}``."""
        return self._call(routes.create_session(config))

    def list_workspaces(self) -> dict[str, Any]:
        """``GET /v1/workspaces``: ``{workspaces: [{workspace, sessions}]}``, in name order."""
        return self._call(routes.list_workspaces())

    def get_session(self, session_id: str) -> dict[str, Any]:
        """``GET /v1/sessions/{id}``: the session view (usage, config, budget)."""
        return self._call(routes.get_session(session_id))

    def delete_session(self, session_id: str) -> None:
        """``DELETE /v1/sessions/{id}``: erases the session and everything of it (a running turn: 409)."""
        self._open(routes.delete_session(session_id)).close()

    def delete_workspace(self, workspace: str) -> None:
        """``DELETE /v1/workspaces/{workspace}``: erases every session and artifact of the workspace."""
        self._open(routes.delete_workspace(workspace)).close()

    def list_deliveries(self, session_id: str) -> dict[str, Any]:
        """``GET /v1/sessions/{id}/deliveries``: its completion-callback notices and attempts."""
        return self._call(routes.list_deliveries(session_id))

    def list_sessions(self, **query: Any) -> dict[str, Any]:
        """``GET /v1/sessions`` (``workspace``, ``status``, ``limit``, ``cursor``): ``{sessions, cursor?}``."""
        return self._call(routes.list_sessions(**query))

    def kept_outputs(self, session_id: str, **query: Any) -> dict[str, Any]:
        """``GET …/artifacts`` (``limit``, ``cursor``): ``{outputs, cursor?}``, the tool outputs and
        hook answers the session kept whole, each with its ``kind``, ``artifact_id``, ``size`` and
        ``lines``: a ``tool_output`` by the call that made it (``item_id``, ``call_id``,
        ``tool_call_id``, ``tool_name``) — a command's too; a ``hook_answer`` by its hook
        (``event``, ``hook``, ``hook_index``, ``hook_type``, ``tool_call_id`` for tool hooks)."""
        return self._call(routes.kept_outputs(session_id, **query))

    def list_turns(self, session_id: str, **query: Any) -> dict[str, Any]:
        """``GET …/turns`` (``limit``, ``cursor``): ``{turns, cursor?}``, each turn with its ``seq``,
        ``turn_id`` and what it was asked (``input``: the request's input, the follow-ups applied)."""
        return self._call(routes.list_turns(session_id, **query))

    def sessions(self, **query: Any) -> Iterator[dict[str, Any]]:
        """Every session of the query, page after page."""
        cursor = None
        while True:
            page = self.list_sessions(**query, cursor=cursor)
            yield from page["sessions"]
            cursor = page.get("cursor")
            if not cursor:
                return

    def step_turn(
        self,
        session_id: str,
        input: Optional[TurnInput] = None,
        *,
        limits: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> dict[str, Any]:
        """``POST …/turns`` as JSON: the TurnResponse. Sent with an Idempotency-Key (yours or a new
        one, named by its errors): sending the same request with it again is safe."""
        return self._call(routes.turn(session_id, input, limits, idempotency_key))

    def stream_turn(
        self,
        session_id: str,
        input: Optional[TurnInput] = None,
        *,
        limits: Optional[Mapping[str, Any]] = None,
        idempotency_key: Optional[str] = None,
    ) -> TurnStream:
        """``POST …/turns`` as SSE: iterate the events as they happen, then ``result()``. A dropped
        connection sends the turn again with the same key (never run twice); no event twice."""
        return TurnStream(self, routes.turn(session_id, input, limits, idempotency_key))

    def complete(self, session_id: str) -> dict[str, Any]:
        return self._call(routes.end(session_id, "complete"))

    def cancel(self, session_id: str) -> dict[str, Any]:
        return self._call(routes.end(session_id, "cancel"))

    def steer(self, session_id: str, text: str) -> dict[str, Any]:
        """``POST …/intents``: a follow-up delivered at the next turn boundary."""
        return self._call(routes.steer(session_id, text))

    def resolve_permission(
        self, session_id: str, tool_name: str, decision: str, message: Optional[str] = None
    ) -> dict[str, Any]:
        return self._call(routes.resolve_permission(session_id, tool_name, decision, message))

    def approve_plan(self, session_id: str, decision: str, feedback: Optional[str] = None) -> dict[str, Any]:
        return self._call(routes.approve_plan(session_id, decision, feedback))

    def fork(self, session_id: str, **request: Any) -> dict[str, Any]:
        """``POST …/fork`` (``isolation``, ``limits``): the new session."""
        return self._call(routes.fork(session_id, request))

    def exec(
        self, request: Mapping[str, Any], *, idempotency_key: Optional[str] = None, idle_timeout: Optional[float] = None
    ) -> Iterator[dict[str, Any]]:
        """``POST /v1/exec`` (``prompt``, ``workspace``, …): create, one turn, complete — the bare
        ThreadEvents as they happen. Sent with an Idempotency-Key (yours or a new one, carried by its
        errors): sent again with it, it never runs twice. A server that sends keep-alives and then
        nothing for ``idle_timeout`` (default ``RetryPolicy.idle_timeout``) fails it as a dropped connection."""
        idle = self.retry.idle_timeout if idle_timeout is None else idle_timeout
        return exec_events(self, routes.exec_run(request, idempotency_key), idle)

    def usage(self) -> dict[str, Any]:
        return self._call(routes.usage())

    def output_artifact(
        self, session_id: str, artifact_id: str, *, start: Optional[int] = None, end: Optional[int] = None
    ) -> Iterator[bytes]:
        """A tool output the session kept whole (``out_…``), bytes ``[start, end)`` or all of it,
        streamed in the pieces the server sends (never held whole)."""
        response = self._open(routes.output_artifact(session_id, artifact_id), routes.byte_range(start, end))
        with closing(response):
            yield from response.iter_bytes()

    def read_output_artifact(
        self, session_id: str, artifact_id: str, *, start: Optional[int] = None, end: Optional[int] = None,
        max_bytes: Optional[int] = None,
    ) -> bytes:
        """The bytes of ``output_artifact`` in memory: for ranges and small artifacts. At most
        ``max_bytes`` (default: the client's ``max_answer_bytes``): a larger one raises a
        TurnlineAnswerTooLargeError naming its size, its bytes not read (``output_artifact`` streams it)."""
        call = routes.output_artifact(session_id, artifact_id)
        response = self._open(call, routes.byte_range(start, end))
        with closing(response):
            bound = artifact_bound(response, artifact_id, self.max_answer_bytes, max_bytes)
            for piece in _pieces(response):
                bound.push(piece)
        return b"".join(bound.pieces)

    def health(self) -> dict[str, Any]:
        return self._call(routes.health())

    def read_events(
        self, session_id: str, *, after: Optional[int] = None, limit: Optional[int] = None, max_bytes: Optional[int] = None
    ) -> dict[str, Any]:
        """One page of the NDJSON feed: ``{"events": [SeqEvent…], "next_seq": int | None}``. The server
        sends a page at once: one that sends nothing for ``RetryPolicy.idle_timeout``, its head
        included, raises a TurnlineConnectionError (``events`` reads it again). A page of more events
        than ``limit`` (default: at most 5000) raises a TurnlineProtocolError, one past ``max_bytes``
        (default: the client's ``max_answer_bytes``) a TurnlineAnswerTooLargeError."""
        call = routes.event_page(session_id, after, limit)
        response = self._open(call, {"accept": "application/x-ndjson"}, idle=self.retry.idle_timeout)
        with closing(response):
            page = EventPage(response.status_code, response.headers, limit, max_bytes, self.max_answer_bytes)
            for piece in _pieces(response):
                page.push(piece)
        return {"events": page.end(), "next_seq": next_seq_of(response.headers)}

    def events(
        self,
        session_id: str,
        *,
        after: int = -1,
        last_event_id: Optional[str] = None,
        follow: bool = False,
        limit: int = 1000,
    ) -> Iterator[SeqEvent]:
        """A session's events in seq order, each exactly once. Without ``follow`` every committed
        event after ``after``; with it the SSE feed until ``thread.completed``, reconnecting with
        ``Last-Event-ID`` after a drop or the server's follow limit, reading a gap from the feed."""
        start = seq_of(str(last_event_id)) if last_event_id is not None else after
        progress = FeedProgress(self.retry, last=start)
        while not follow:
            try:
                page = self.read_events(session_id, after=progress.last, limit=limit)["events"]
            except TurnlineError as error:
                time.sleep(progress.after_failure(error))
                continue
            yield from progress.page(page)
            if len(page) < limit:
                return
        while True:
            opened = time.monotonic()
            try:
                response = self._open(*follow_query(session_id, progress.last), idle=self.retry.idle_timeout)
                with closing(response):
                    progress.expect_stream(response.status_code, response.headers)
                    decoder = SseDecoder()
                    for chunk in _chunks(response):
                        for frame in decoder.push(chunk):
                            item = progress.accept(frame)
                            if item is None:
                                continue
                            if item["seq"] > progress.last + 1:
                                # Never expected from the server, but a gap is read rather than lost.
                                for gap in self.events(session_id, after=progress.last):
                                    if not progress.fills(gap, item):
                                        break
                                    yield gap
                            yield progress.delivered(item)
                            if progress.completed:
                                return
                # The server ended the stream: its follow limit, or a completed session.
                if progress.completed_through(self.get_session(session_id)):
                    return
                progress.ended(time.monotonic() - opened)
            except TurnlineError as error:
                time.sleep(progress.after_failure(error))

    def _open(
        self, call: routes.Call, headers: Optional[Mapping[str, str]] = None, idle: Optional[float] = None
    ) -> httpx.Response:
        """A 2xx response, its body still to read (close it); else the API's error. ``idle``: the
        read timeout of a stream whose server sends keep-alives."""
        sent = dict(headers or {})
        if call.key is not None:
            sent["idempotency-key"] = call.key
        timeout = self._http.timeout if idle is None else routes.stream_timeout(self._http.timeout, idle)
        request = self._http.build_request(
            call.method, call.path, params=call.query, json=call.body, headers=sent, timeout=timeout
        )
        try:
            response = self._http.send(request, stream=True)
        except httpx.TransportError as error:
            raise TurnlineConnectionError(f"cannot reach {self.base_url}: {error}", call.key) from error
        if response.is_success:
            return response
        raise _refusal(response, call.key)

    def _call(self, call: routes.Call) -> dict[str, Any]:
        response = self._open(call)
        with closing(response):
            text = _answer_text(response, self.max_answer_bytes, call.key)
        return parse_json(text, response.status_code, *call.keys)

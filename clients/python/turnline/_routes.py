"""The API's calls as data, shared by both clients: each route's method, path, body and the keys
its answer must have. The clients only send them (``_call``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional
from urllib.parse import quote, urlsplit

import httpx

from ._input import TurnInput, wire_input
from ._protocol import clean, new_idempotency_key, session_path
from .errors import TurnlineApiError, api_error_of, retry_after_of

TURN_KEYS = ("turn_id", "status", "events", "next_seq")


@dataclass(frozen=True)
class Call:
    method: str
    path: str
    #: Keys the JSON answer must have.
    keys: tuple[str, ...] = ()
    query: Optional[Mapping[str, Any]] = None
    body: Any = None
    #: The Idempotency-Key sent with it (reported by its errors).
    key: Optional[str] = None


def http_options(
    base_url: str,
    api_key: Optional[str],
    headers: Optional[Mapping[str, str]],
    timeout: Optional[httpx.Timeout],
) -> dict[str, Any]:
    """The ``httpx`` client's settings: the base URL, the bearer key, no read timeout."""
    if not base_url.startswith(("http://", "https://")):
        raise ValueError(f"base_url must be http(s): {base_url}")
    if "@" in urlsplit(base_url).netloc:
        # httpx would send it as Basic auth, and the errors would show it: refused, not shown.
        raise ValueError("base_url must not hold a user or password (user:password@): give the API key as api_key")
    sent = dict(headers or {})
    if api_key:
        sent["authorization"] = f"Bearer {api_key}"
    # Turns and followed feeds take as long as they take: no read timeout.
    return {
        "base_url": base_url.rstrip("/"),
        "headers": sent,
        "timeout": timeout or httpx.Timeout(30.0, read=None),
    }


#: What is read of an error answer's body: an error body of the API is far smaller, and only its
#: start is shown (the rest of a page that never ends is not read).
ERROR_BODY_BYTES = 64 * 1024


def refusal_of(response: httpx.Response, head: bytes, key: Optional[str]) -> TurnlineApiError:
    """The error of a non-2xx answer from the start of its body (``head``)."""
    text = head[:ERROR_BODY_BYTES].decode("utf-8", "replace")
    retry_after = retry_after_of(response.headers)
    return api_error_of(response.status_code, text, retry_after_seconds=retry_after, idempotency_key=key)


def stream_timeout(timeout: httpx.Timeout, idle: float) -> httpx.Timeout:
    """The client's timeout with a read timeout of ``idle``: for a stream whose server sends
    keep-alives, a silence that long is a dropped connection."""
    return httpx.Timeout(connect=timeout.connect, read=idle, write=timeout.write, pool=timeout.pool)


def create_session(config: Optional[Mapping[str, Any]]) -> Call:
    return Call("POST", "/v1/sessions", ("session_id",), body=dict(config or {}))


def list_workspaces() -> Call:
    return Call("GET", "/v1/workspaces", ("workspaces",))


def get_session(session_id: str) -> Call:
    return Call("GET", session_path(session_id), ("session_id", "status"))


def delete_session(session_id: str) -> Call:
    return Call("DELETE", session_path(session_id))


def delete_workspace(workspace: str) -> Call:
    return Call("DELETE", f"/v1/workspaces/{quote(workspace, safe='')}")


def list_deliveries(session_id: str) -> Call:
    return Call("GET", session_path(session_id, "/deliveries"), ("deliveries",))


def list_sessions(**query: Any) -> Call:
    return Call("GET", "/v1/sessions", ("sessions",), query=clean(query))


def turn(
    session_id: str,
    input: Optional[TurnInput],
    limits: Optional[Mapping[str, Any]],
    idempotency_key: Optional[str],
) -> Call:
    body = clean({"input": wire_input(input), "limits": dict(limits) if limits else None})
    key = idempotency_key or new_idempotency_key()
    return Call("POST", session_path(session_id, "/turns"), TURN_KEYS, body=body, key=key)


def list_turns(session_id: str, **query: Any) -> Call:
    """``GET …/turns``: a page of the session's turns, each with what it was asked."""
    return Call("GET", session_path(session_id, "/turns"), ("turns",), query=clean(query))


def end(session_id: str, how: str) -> Call:
    """``complete`` or ``cancel``."""
    return Call("POST", session_path(session_id, f"/{how}"), TURN_KEYS, body={})


def steer(session_id: str, text: str) -> Call:
    return Call("POST", session_path(session_id, "/intents"), ("id",), body={"text": text})


def resolve_permission(
    session_id: str, tool_name: str, decision: str, message: Optional[str]
) -> Call:
    body = clean({"tool_name": tool_name, "decision": decision, "message": message})
    return Call("POST", session_path(session_id, "/permissions"), TURN_KEYS, body=body)


def approve_plan(session_id: str, decision: str, feedback: Optional[str]) -> Call:
    body = clean({"decision": decision, "feedback": feedback})
    return Call("POST", session_path(session_id, "/plan-approval"), TURN_KEYS, body=body)


def fork(session_id: str, request: Mapping[str, Any]) -> Call:
    return Call("POST", session_path(session_id, "/fork"), ("session_id",), body=dict(request))


def event_page(session_id: str, after: Optional[int], limit: Optional[int]) -> Call:
    return Call("GET", session_path(session_id, "/events"), query=clean({"after": after, "limit": limit}))


def kept_outputs(session_id: str, **query: Any) -> Call:
    """``GET …/artifacts``: a page of the tool outputs and hook answers the session kept whole."""
    return Call("GET", session_path(session_id, "/artifacts"), ("outputs",), query=clean(query))


def output_artifact(session_id: str, artifact_id: str) -> Call:
    """``GET …/artifacts/{artifact_id}``: a tool output the session kept whole (bytes)."""
    return Call("GET", session_path(session_id, f"/artifacts/{quote(artifact_id, safe='')}"))


def byte_range(start: Optional[int], end: Optional[int]) -> dict[str, str]:
    """The ``Range`` header for bytes ``[start, end)`` (``end`` None: to the end)."""
    if start is None and end is None:
        return {}
    first = start or 0
    return {"range": f"bytes={first}-{'' if end is None else end - 1}"}


def exec_run(request: Mapping[str, Any], idempotency_key: Optional[str]) -> Call:
    """``POST /v1/exec``, always with an Idempotency-Key (the caller's or a new one): the run's
    session derives from it, so the same request sent again with it runs nothing twice."""
    return Call("POST", "/v1/exec", body=dict(request), key=idempotency_key or new_idempotency_key())


RESPONSE_KEYS = ("id", "status")


def create_response(request: Mapping[str, Any], stream: bool, idempotency_key: Optional[str]) -> Call:
    """``POST /v1/responses``; the key only when given (with ``store: false`` a key is a 400)."""
    body = {**dict(request), "stream": stream}
    return Call("POST", "/v1/responses", RESPONSE_KEYS, body=body, key=idempotency_key)


def get_response(response_id: str) -> Call:
    return Call("GET", f"/v1/responses/{quote(response_id, safe='')}", RESPONSE_KEYS)


def response_events(response_id: str, after: int) -> Call:
    """``GET /v1/responses/{id}?stream=true``: its events after ``after`` (-1: all)."""
    query = {"stream": "true", **({"starting_after": after} if after >= 0 else {})}
    return Call("GET", f"/v1/responses/{quote(response_id, safe='')}", query=query)


def usage() -> Call:
    return Call("GET", "/v1/usage")


def health() -> Call:
    return Call("GET", "/healthz", ("status",))

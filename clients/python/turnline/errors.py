"""The client's errors: the same codes and classes as the TypeScript client (client/errors.ts)."""

from __future__ import annotations

import json
import math
import re
import time
from email.utils import parsedate_to_datetime
from typing import Any, Mapping, Optional

#: The error codes of this version of the server (src/contract/errors.ts, checked by a test).
ERROR_CODES: tuple[str, ...] = (
    "invalid_input",
    "not_found",
    "method_not_allowed",
    "conflict",
    "session_busy",
    "session_completed",
    "follow_up_queue_full",
    "idempotency_key_reused",
    "unauthorized",
    "forbidden",
    "corrupt_data",
    "unsupported_version",
    "buffer_overflow",
    "event_cap_reached",
    "storage_unavailable",
    "coordinator_unavailable",
    "model_not_configured",
    "model_error",
    "tool_error",
    "runner_unavailable",
    "payload_too_large",
    "rate_limited",
    "quota_exceeded",
    "too_many_concurrent_turns",
    "internal",
)

#: Codes whose failures are worth retrying unchanged (after ``retry_after_seconds``).
RETRYABLE_CODES: frozenset[str] = frozenset(
    {
        "conflict",
        "session_busy",
        "storage_unavailable",
        "coordinator_unavailable",
        "runner_unavailable",
        # the tenant's request window and turn slots free up soon (not its daily quota)
        "rate_limited",
        "too_many_concurrent_turns",
    }
)

#: The HTTP status of each code (src/contract/error-status.ts, checked by a test), for an error
#: that arrives inside a stream (``event: error``).
HTTP_STATUS: dict[str, int] = {
    "invalid_input": 400,
    "not_found": 404,
    "method_not_allowed": 405,
    "conflict": 409,
    "session_busy": 409,
    "session_completed": 409,
    "follow_up_queue_full": 409,
    "idempotency_key_reused": 422,
    "unauthorized": 401,
    "forbidden": 403,
    "corrupt_data": 500,
    "unsupported_version": 500,
    "buffer_overflow": 500,
    "event_cap_reached": 500,
    "storage_unavailable": 503,
    "coordinator_unavailable": 503,
    "model_not_configured": 422,
    "model_error": 502,
    "tool_error": 502,
    "runner_unavailable": 503,
    "payload_too_large": 413,
    "rate_limited": 429,
    "quota_exceeded": 429,
    "too_many_concurrent_turns": 429,
    "internal": 500,
}


class TurnlineError(Exception):
    """The base of the client's errors."""


class TurnlineApiError(TurnlineError):
    """The server refused or failed a request (docs/http-api.md#errors).

    ``code`` is one of :data:`ERROR_CODES`, or a newer server's code as sent.
    """

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        *,
        details: Optional[Mapping[str, Any]] = None,
        retry_after_seconds: Optional[float] = None,
        idempotency_key: Optional[str] = None,
        in_stream: bool = False,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.details = dict(details) if details is not None else None
        self.retry_after_seconds = retry_after_seconds
        self.idempotency_key = idempotency_key
        self.in_stream = in_stream

    @property
    def retryable(self) -> bool:
        """Whether the same request may succeed later (busy, an outage, a gateway's 502/503/504)."""
        if self.code in RETRYABLE_CODES:
            return True
        return self.code == "http_error" and self.status in (502, 503, 504)

    def __repr__(self) -> str:
        return f"TurnlineApiError(status={self.status}, code={self.code!r}, message={self.message!r})"


class TurnlineConnectionError(TurnlineError):
    """The server could not be reached, or the connection broke before the answer was complete.

    A request with an Idempotency-Key may be sent again with ``idempotency_key``.
    """

    def __init__(self, message: str, idempotency_key: Optional[str] = None) -> None:
        super().__init__(message)
        self.idempotency_key = idempotency_key


class TurnlineProtocolError(TurnlineError):
    """The server answered something that is not the API's contract (a proxy's page, a bug)."""

    def __init__(self, message: str, status: int) -> None:
        super().__init__(message)
        self.status = status


class TurnlineAnswerTooLargeError(TurnlineProtocolError):
    """A whole answer (a JSON body, an events page, an output artifact read into memory) past its
    bound, by default the client's ``max_answer_bytes``: the rest was not read, so a broken or
    hostile server cannot grow the client's memory without end. ``size`` is the answer's size when
    it said it (Content-Length) before it was read, else None."""

    def __init__(
        self,
        max_bytes: int,
        status: int,
        *,
        size: Optional[int] = None,
        what: str = "the answer",
        option: str = "the client's max_answer_bytes",
        hint: Optional[str] = None,
    ) -> None:
        told = "passed" if size is None else f"holds {size} bytes, past"
        tail = "" if hint is None else f"; {hint}"
        super().__init__(f"{what} {told} {option} ({max_bytes} bytes); the rest was not read{tail}", status)
        self.max_bytes = max_bytes
        self.size = size


def api_error_of(
    status: Optional[int],
    text: str,
    *,
    retry_after_seconds: Optional[float] = None,
    idempotency_key: Optional[str] = None,
    in_stream: bool = False,
) -> TurnlineApiError:
    """The error of a non-2xx answer (or of an ``event: error`` frame) from its text."""
    error: Any = None
    try:
        body = json.loads(text)
        error = body.get("error") if isinstance(body, dict) else None
    except ValueError:
        error = None
    options: dict[str, Any] = {
        "retry_after_seconds": retry_after_seconds,
        "idempotency_key": idempotency_key,
        "in_stream": in_stream,
    }
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), str)
        or not isinstance(error.get("message"), str)
    ):
        shown = text.strip()[:300] or "(empty body)"
        return TurnlineApiError(status or 500, "http_error", f"HTTP {status or '?'}: {shown}", **options)
    code: str = error["code"]
    details = error.get("details")
    resolved = status if status is not None else HTTP_STATUS.get(code, 500)
    return TurnlineApiError(
        resolved,
        code,
        error["message"],
        details=details if isinstance(details, dict) else None,
        **options,
    )


def retry_after_of(headers: Mapping[str, str]) -> Optional[float]:
    """Seconds of a Retry-After header, if any: its delay in seconds (the server's form), or an
    HTTP-date (a gateway's or CDN's 503 may send one), as the seconds from now until it."""
    value = (headers.get("retry-after") or "").strip()
    if re.fullmatch(r"\d+(\.\d+)?", value, re.ASCII):
        return float(value)
    try:
        at = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if at is None or at.tzinfo is None:
        return None
    return float(max(0, math.ceil(at.timestamp() - time.time())))

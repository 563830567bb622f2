"""Turnline's Python client: the HTTP API of a Turnline server, sync and async, on httpx.

The same flow, methods and error codes as the TypeScript client (``turnline/client``).
"""

from ._input import InputImagePart, InputPart, InputTextPart, TurnInput
from ._protocol import RetryPolicy, SeqEvent, turn_events
from .async_client import AsyncTurnlineClient, AsyncTurnStream
from .client import TurnlineClient, TurnStream
from .errors import (
    ERROR_CODES,
    HTTP_STATUS,
    TurnlineAnswerTooLargeError,
    TurnlineApiError,
    TurnlineConnectionError,
    TurnlineError,
    TurnlineProtocolError,
)

__all__ = [
    "AsyncTurnStream",
    "AsyncTurnlineClient",
    "ERROR_CODES",
    "HTTP_STATUS",
    "InputImagePart",
    "InputPart",
    "InputTextPart",
    "RetryPolicy",
    "SeqEvent",
    "TurnStream",
    "TurnlineAnswerTooLargeError",
    "TurnlineApiError",
    "TurnlineClient",
    "TurnlineConnectionError",
    "TurnlineError",
    "TurnInput",
    "TurnlineProtocolError",
    "turn_events",
]

"""Turnline's Python client: the HTTP API of a Turnline server, sync and async, on httpx.

The same flow, methods and error codes as the TypeScript client (``turnline/client``).
"""

from ._input import InputImagePart, InputPart, InputTextPart, TurnInput
from ._protocol import RetryPolicy, SeqEvent, turn_events
from ._responses import running_response_of
from .async_client import AsyncTurnlineClient, AsyncTurnStream
from .async_responses import AsyncResponses
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
from .responses import Responses

__all__ = [
    "AsyncResponses",
    "AsyncTurnStream",
    "AsyncTurnlineClient",
    "ERROR_CODES",
    "HTTP_STATUS",
    "InputImagePart",
    "InputPart",
    "InputTextPart",
    "Responses",
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
    "running_response_of",
    "turn_events",
]

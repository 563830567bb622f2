"""What a turn is asked: a string, or content parts — text and images — named as in the OpenAI
Responses API and the server's ``TurnInput`` (``input_text``, ``input_image``)."""

from __future__ import annotations

from typing import Literal, Sequence, TypedDict, Union


class InputTextPart(TypedDict):
    type: Literal["input_text"]
    text: str


class _InputImageRequired(TypedDict):
    type: Literal["input_image"]
    #: A ``data:image/{png,jpeg,gif,webp};base64,…`` URL, or an ``https:`` URL the provider fetches.
    image_url: str


class InputImagePart(_InputImageRequired, total=False):
    #: How closely the model looks: ``auto`` (the default), ``low`` or ``high``.
    detail: Literal["auto", "low", "high"]


InputPart = Union[InputTextPart, InputImagePart]

#: A turn's ``input``: text, or up to 64 parts (the text parts joined by blank lines are the user
#: message; the images ride with it).
TurnInput = Union[str, Sequence[InputPart]]


def wire_input(value: TurnInput | None) -> str | list[InputPart] | None:
    """The input as the request body carries it (parts as a list)."""
    if value is None or isinstance(value, str):
        return value
    return list(value)

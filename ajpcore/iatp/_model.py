"""The IATP side of the one envelope model (``ajpcore._envelope``): the base of the
IATP messages and parts, and what they share (defaults, times given as arguments).
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import Any, Mapping, Tuple, Type, TypeVar, Union

from .._envelope import Envelope
from ..errors import TimestampError, ValidationError, format_path


_P = TypeVar("_P", bound="_Part")


class _Part(Envelope):
    """Base of the IATP messages and parts.  Each names its schema with ``_SCHEMA``, as
    every envelope does (``ajpcore._envelope``).  A part given to a constructor must be an
    instance of its class (not a dict)."""

    __slots__ = ()
    _PARTS_FROM_MAPPINGS = False


def _choices(kind: Type[enum.Enum]) -> str:
    return ", ".join(f"`{m.value}`" for m in kind)


def _manifest_part(*path: str) -> Tuple[str, ...]:
    return ("iatp-capability-manifest",) + path


def _with_defaults(part: _P) -> _P:
    defaults: Mapping[str, Any] = getattr(part, "DEFAULTS")
    changes = {k: v for k, v in defaults.items() if getattr(part, k) is None}
    return part.replace(**changes) if changes else part


def _parse_time(value: Union[str, _dt.datetime], name: str) -> _dt.datetime:
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            raise ValidationError([(format_path([name]), "Expected an aware `datetime` (with a UTC offset), got a naive one")])
        return value
    if isinstance(value, str):
        from ..timestamps import parse_timestamp

        try:
            return parse_timestamp(value)
        except TimestampError as exc:
            raise ValidationError([(format_path([name]), str(exc))]) from None
    raise ValidationError([(format_path([name]), f"Expected `datetime` or RFC 3339 `str`, got `{type(value).__name__}`")])

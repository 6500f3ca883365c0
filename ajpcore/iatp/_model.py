"""The IATP side of the one envelope model (``ajpcore._envelope``): the base of the
IATP messages and parts, and what they share (defaults, times given as arguments).
"""

from __future__ import annotations

import datetime as _dt
import enum
import functools
import sys
from typing import Any, ClassVar, Dict, Mapping, Tuple, Type, TypeVar, Union

from .._envelope import Envelope
from ..errors import TimestampError, ValidationError, format_path
from ._schemas import _validator


# The results (TrustScore, UndoDecision) are plain dataclasses: frozen, slotted,
# keyword-only on every Python that has the options (3.10+).
_DATACLASS: Dict[str, Any] = {"frozen": True}
if sys.version_info >= (3, 10):
    _DATACLASS.update(slots=True, kw_only=True)


_P = TypeVar("_P", bound="_Part")


class _Part(Envelope):
    """Base of the IATP messages and parts: each names its schema with ``_SCHEMA``
    (schema name, then the property path to the part), compiled on first use.
    A part given to a constructor must be an instance of its class (not a dict)."""

    __slots__ = ()
    _SCHEMA: ClassVar[Tuple[str, ...]] = ()
    _PARTS_FROM_MAPPINGS = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        path = cls.__dict__.get("_SCHEMA")
        if path:
            cls._bind_schema(functools.partial(_validator, *path))


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

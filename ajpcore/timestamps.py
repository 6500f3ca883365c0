"""Strict RFC 3339 timestamps: parse with an explicit offset, emit like ECMAScript ``toISOString``.

Accepted form (RFC 3339 section 5.6 ``date-time``)::

    YYYY-MM-DDTHH:MM:SS[.fraction](Z | +hh:mm | -hh:mm)

``T`` and ``Z`` may be lower case (RFC 3339 section 5.6, NOTE).  A space instead of
``T``, a missing offset, ``+hhmm``, week dates, ordinal dates and a comma fraction
are refused.  Fractions of any length are allowed; beyond microseconds they are
truncated.

Leap seconds: ``:60`` is accepted only where one can occur, the last second of
23:59 UTC (after applying the offset; section 5.7).  ajpcore has no leap-second
table, so any day is allowed.  Such a time parses as ``23:59:59.999999`` UTC of the
same day: ordered after every other instant of that day and before the next day.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Optional

from . import _core
from .errors import TimestampError

__all__ = ["parse_timestamp", "format_timestamp", "is_timestamp", "timestamp_micros", "instant_micros"]

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def is_timestamp(text: object) -> bool:
    """Whether ``text`` is a ``str`` in the strict RFC 3339 ``date-time`` form described above."""
    return _core.impl.rfc3339_micros(text) is not None


def timestamp_micros(text: object) -> int:
    """Microseconds since 1970-01-01T00:00:00Z of an RFC 3339 timestamp.

    Any year 0000-9999 is representable.  Raises ``TimestampError`` when ``text``
    is not a strict RFC 3339 date-time.
    """
    micros = _core.impl.rfc3339_micros(text)
    if micros is None:
        raise TimestampError(_reason(text))
    return micros


def _micros_or_none(text: object) -> Optional[int]:
    """``timestamp_micros(text)``, or None where it would raise: the core's parse, no exception."""
    micros: Optional[int] = _core.impl.rfc3339_micros(text)
    return micros


def parse_timestamp(text: object) -> datetime:
    """An aware ``datetime`` in UTC for a strict RFC 3339 timestamp (see the module docstring).

    Raises ``TimestampError`` when ``text`` is not one, or when the instant lies
    outside what ``datetime`` represents (years 1-9999 in UTC).
    """
    micros = timestamp_micros(text)
    try:
        return _EPOCH + timedelta(microseconds=micros)
    except OverflowError:
        raise TimestampError(f"timestamp {text!r} is outside years 1-9999 in UTC") from None


def format_timestamp(dt: datetime) -> str:
    """``dt`` as ECMAScript ``Date.prototype.toISOString`` writes it: ``2026-03-05T10:00:00.000Z``.

    Converted to UTC and truncated to milliseconds.  Raises ``TimestampError`` for a
    naive ``datetime`` (it has no instant) or a non-datetime.
    """
    if not isinstance(dt, datetime):
        raise TimestampError(f"expected a datetime, got `{type(dt).__name__}`")
    if dt.tzinfo is None or dt.utcoffset() is None:
        raise TimestampError("a naive datetime has no instant: give it a tzinfo")
    u = dt.astimezone(timezone.utc)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (
        u.year, u.month, u.day, u.hour, u.minute, u.second, u.microsecond // 1000,
    )


def _reason(text: object) -> str:
    if type(text) is not str:
        return f"expected an RFC 3339 timestamp string, got `{type(text).__name__}`"
    shown = text if len(text) <= 64 else text[:61] + "..."
    return f"invalid RFC 3339 timestamp {shown!r} (expected YYYY-MM-DDTHH:MM:SS[.f](Z|+hh:mm))"


def instant_micros(now: object) -> int:
    """Microseconds since 1970-01-01T00:00:00Z of a caller's ``now``.

    ``now`` is an aware ``datetime``, a strict RFC 3339 string, or POSIX seconds
    (``int``/``float``, not ``bool``).  Raises ``TimestampError`` for a naive
    datetime, a string that is not RFC 3339, a non-finite number, or another type.
    """
    # The usual forms (RFC 3339 text, a UTC datetime, POSIX seconds) in one core call; anything it
    # does not read is read, or refused, below.
    micros: Optional[int] = _core.impl.clock_micros(now)
    if micros is not None:
        return micros
    if isinstance(now, datetime):
        if now.tzinfo is None or now.utcoffset() is None:
            raise TimestampError("`now` is a naive datetime: give it a tzinfo (e.g. timezone.utc)")
        delta = now - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    if isinstance(now, str):
        return timestamp_micros(now)
    if isinstance(now, (int, float)) and not isinstance(now, bool):
        if now != now or now in (float("inf"), float("-inf")):
            raise TimestampError("`now` must be a finite number of seconds")
        return int(now * 1_000_000)
    raise TimestampError(
        f"`now` must be an aware datetime, an RFC 3339 string or POSIX seconds, got `{type(now).__name__}`"
    )

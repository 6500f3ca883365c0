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

import re
import sys
from datetime import datetime, timedelta, timezone
from typing import Optional, Tuple

from .errors import TimestampError

__all__ = ["parse_timestamp", "format_timestamp", "is_timestamp", "timestamp_micros", "instant_micros"]

_RFC3339 = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})"
    r"(?:\.([0-9]+))?(?:([Zz])|([+-])([0-9]{2}):([0-9]{2}))",
    re.ASCII,
)
# Valid in every month and never a leap second: no calendar arithmetic needed.
_PLAIN = re.compile(
    r"[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|1[0-9]|2[0-8])[Tt](?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9]"
    r"(?:\.[0-9]+)?(?:[Zz]|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])",
    re.ASCII,
).fullmatch
_DAY_CACHE: "dict[str, int]" = {}
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_MICROS_PER_DAY = 86_400_000_000
_ONE_MICROSECOND = timedelta(microseconds=1)
# Python 3.11+ reads RFC 3339 with `Z` in C; earlier versions do not (the slices do).
_fromisoformat = datetime.fromisoformat if sys.version_info >= (3, 11) else None


def _days_from_civil(y: int, m: int, d: int) -> int:
    # Proleptic Gregorian day count relative to 1970-01-01 (H. Hinnant's algorithm).
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def _fields(text: object) -> Optional[Tuple[int, int, int, int, int, int, int, int]]:
    """Match and range-check; ``None`` when ``text`` is not an RFC 3339 date-time."""
    if type(text) is not str:
        return None
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.group(1, 2, 3, 4, 5, 6))
    if not 1 <= month <= 12 or day < 1 or hour > 23 or minute > 59 or second > 60:
        return None
    limit = _DAYS_IN_MONTH[month]
    if month == 2 and year % 4 == 0 and (year % 100 != 0 or year % 400 == 0):
        limit = 29
    if day > limit:
        return None
    if m.group(8):
        offset = 0
    else:
        oh, om = int(m.group(10)), int(m.group(11))
        if oh > 23 or om > 59:
            return None
        offset = (oh * 60 + om) * (1 if m.group(9) == "+" else -1)
    frac = m.group(7)
    micros = int((frac + "00000")[:6]) if frac else 0
    if second == 60:
        # RFC 3339 5.7: a leap second is 23:59:60 UTC.
        if (hour * 60 + minute - offset) % 1440 != 1439:
            return None
    return year, month, day, hour, minute, second, micros, offset


def is_timestamp(text: object) -> bool:
    """Whether ``text`` is a ``str`` in the strict RFC 3339 ``date-time`` form described above."""
    return type(text) is str and (_PLAIN(text) is not None or _fields(text) is not None)


def timestamp_micros(text: object) -> int:
    """Microseconds since 1970-01-01T00:00:00Z of an RFC 3339 timestamp.

    Any year 0000-9999 is representable.  Raises ``TimestampError`` when ``text``
    is not a strict RFC 3339 date-time.
    """
    if type(text) is str and _PLAIN(text) is not None:
        # The common case: a day every month has and no leap second.  Once the strict
        # pattern matched, the C parser (Python 3.11+) reads it the same way, fraction
        # truncated to microseconds as here; where it cannot, the fixed positions do.
        if _fromisoformat is not None:
            try:
                return (_fromisoformat(text) - _EPOCH) // _ONE_MICROSECOND
            except ValueError:
                pass
        n = len(text)
        if text[n - 1] in "Zz":
            offset, end = 0, n - 1
        else:
            offset = (int(text[n - 5 : n - 3]) * 60 + int(text[n - 2 :])) * (1 if text[n - 6] == "+" else -1)
            end = n - 6
        days = _DAY_CACHE.get(text[:10])
        if days is None:
            if len(_DAY_CACHE) >= 4096:
                _DAY_CACHE.clear()
            days = _DAY_CACHE[text[:10]] = _days_from_civil(int(text[0:4]), int(text[5:7]), int(text[8:10]))
        micros = int((text[20:end] + "00000")[:6]) if end > 19 else 0
        seconds = int(text[11:13]) * 3600 + int(text[14:16]) * 60 + int(text[17:19]) - offset * 60
        return (days * 86_400 + seconds) * 1_000_000 + micros
    f = _fields(text)
    if f is None:
        raise TimestampError(_reason(text))
    year, month, day, hour, minute, second, micros, offset = f
    leap = second == 60
    if leap:
        second, micros = 59, 999_999
    seconds = (hour * 60 + minute - offset) * 60 + second
    return _days_from_civil(year, month, day) * _MICROS_PER_DAY + seconds * 1_000_000 + micros


def _valid_timestamp_micros(text: str) -> int:
    """``timestamp_micros(text)`` for a ``text`` that ``is_timestamp`` already accepted (a schema-valid
    ``date-time``): the strict match is not run again.  On any other ``text`` the result is undefined.

    Python 3.11+ reads such a text in C; where it refuses one (a leap second, year 0000, more than
    six fraction digits with a lower-case ``z``...), the full parse runs.
    """
    if _fromisoformat is not None:
        try:
            micros: int = (_fromisoformat(text) - _EPOCH) // _ONE_MICROSECOND
            return micros
        except (ValueError, OverflowError):
            pass
    return timestamp_micros(text)


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

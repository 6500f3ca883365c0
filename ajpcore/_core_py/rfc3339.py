"""Strict RFC 3339 ``date-time`` to microseconds: twin of ``native/rfc3339.pxi``.

The accepted form and the leap-second policy are ``ajpcore.timestamps``'s (see its
module docstring); this is the parse every timestamp of the package goes through.
"""

from __future__ import annotations

import re
import sys
from datetime import datetime, timedelta, timezone
from typing import Optional, cast

from .._core_rules import _days_from_civil


# ---------------------------------------------------------------------------
# RFC 3339 date-time (section 5.6) to microseconds since 1970-01-01T00:00:00Z
# ---------------------------------------------------------------------------

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
_DAYS_IN_MONTH = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)
_MICROS_PER_DAY = 86_400_000_000
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
_ONE_MICROSECOND = timedelta(microseconds=1)
# Python 3.11+ reads RFC 3339 with `Z` in C; earlier versions do not (the full parse does).
_fromisoformat = datetime.fromisoformat if sys.version_info >= (3, 11) else None


def _full_parse(text: str) -> Optional[int]:
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
        # RFC 3339 5.7: a leap second is 23:59:60 UTC; it reads as the day's last microsecond.
        if (hour * 60 + minute - offset) % 1440 != 1439:
            return None
        second, micros = 59, 999_999
    seconds = (hour * 60 + minute - offset) * 60 + second
    return _days_from_civil(year, month, day) * _MICROS_PER_DAY + seconds * 1_000_000 + micros


def rfc3339_micros(text: object) -> Optional[int]:
    """Microseconds since 1970-01-01T00:00:00Z of a strict RFC 3339 ``date-time``, or None.

    None for anything else: a non-``str`` (subclasses too), another form, or a
    date or time out of range.  Fractions beyond microseconds are truncated.
    """
    if type(text) is not str:
        return None
    if _fromisoformat is not None and _PLAIN(text) is not None:
        # The common case: a day every month has and no leap second.  Once the strict
        # pattern matched, the C parser reads it the same way (fraction truncated to
        # microseconds); where it cannot (year 0000...), the full parse does.
        try:
            micros: int = (_fromisoformat(text) - _EPOCH) // _ONE_MICROSECOND
            return micros
        except (ValueError, OverflowError):
            pass
    return _full_parse(text)


_UTC = timezone.utc
_CLOCK_LIMIT = 4611686018427387904.0  # 2**62 µs (146,000 years): a clock reading past it is not one
_CLOCK_SECONDS = 4611686018427  # 2**62 // 10**6: whole seconds under that bound


def clock_micros(now: object) -> Optional[int]:
    """Microseconds since 1970-01-01T00:00:00Z of a host's clock reading in its usual forms, or None.

    The forms a server's clock gives, each read exactly as ``ajpcore.timestamps.instant_micros``
    reads it: RFC 3339 text (``rfc3339_micros``), a ``datetime`` (exactly) whose tzinfo is
    ``timezone.utc`` (what ``datetime.now(timezone.utc)`` returns: the adapters' clock), POSIX
    seconds as a ``float`` (``time.time()``: the product by 10**6 truncated toward zero) or an
    ``int`` (not a ``bool``).  None for anything else, and for a number whose microseconds are not
    within 2**62 of the epoch: the caller's full reading then decides (another zone, a subclass)
    or raises (naive, non-finite, another type).  This is the receive path's one reading of ``now``
    per request: in the native core a C call instead of a ``datetime`` subtraction (~40 ns against ~500).
    """
    kind = type(now)
    if kind is str:
        return rfc3339_micros(now)
    if kind is datetime:
        if cast(datetime, now).tzinfo is not _UTC:
            return None
        micros: int = (cast(datetime, now) - _EPOCH) // _ONE_MICROSECOND
        return micros
    if kind is float:
        product = cast(float, now) * 1_000_000.0
        if not -_CLOCK_LIMIT < product < _CLOCK_LIMIT:  # NaN fails both
            return None
        return int(product)
    if kind is int:
        whole = cast(int, now)
        if not -_CLOCK_SECONDS < whole < _CLOCK_SECONDS:
            return None
        return whole * 1_000_000
    return None

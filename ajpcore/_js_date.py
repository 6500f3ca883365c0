"""What ``new Date(value)`` is for a JSON value in the reference SDK's runtime (node's V8), when that is knowable.

The reference SDK's ``validateOffer`` calls an offer expired when
``new Date(offer.expires_at) < new Date()``.  ``validate_offer(strict=False)``
reproduces that verdict for values RFC 3339 does not cover, but only where the
time value follows from the text alone:

- a number: ECMA-262 ``TimeClip`` of it as milliseconds (truncated toward zero;
  NaN beyond ±8.64e15);
- ``true``: 1 ms (``ToNumber(true)``);
- a string in the subset of the ECMAScript Date Time String Format (ECMA-262
  §21.4.1.32) that V8 reads on its ISO path:
  ``YYYY`` or ``±YYYYYY`` (not ``-000000``), then optionally ``-MM``, then
  optionally ``-DD``; then either nothing, ``Z``, or ``THH:mm[:ss[.f+]]``
  followed by nothing, ``Z`` or ``±HH:mm``/``±HHmm`` (``T`` and ``Z`` in either
  case).  Day 29 to 31 past a month's end rolls into the next month and
  ``24:00`` is the next midnight, as in V8.  The fraction is read as V8 does
  (leading zeros skipped, at most 9 significant digits kept, scaled to 3), so
  ``.0123456789`` is 123 ms, not 12.

A date-time without an offset is local time on the SDK's server: reported as
``LOCAL`` with the time value it has in UTC; the caller decides only when every
offset within a day gives the same verdict.  Anything else (other strings V8's
legacy parser guesses at, arrays, objects) is ``UNKNOWN``.  Measured against
node 20 in ``tests/envelopes/test_ajp_envelopes.py``.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple, Optional

from ._core_rules import _days_from_civil

__all__ = ["DateReading", "EXACT", "INVALID", "LOCAL", "UNKNOWN", "MAX_TIME_MS", "DAY_MS", "read_date"]

EXACT = "exact"
INVALID = "invalid"
LOCAL = "local"
UNKNOWN = "unknown"
MAX_TIME_MS = 8_640_000_000_000_000
"""ECMA-262 TimeClip bound: a time value beyond ±8.64e15 ms is NaN (Invalid Date)."""
DAY_MS = 86_400_000


class DateReading(NamedTuple):
    """``kind`` is EXACT (``ms`` is the time value), INVALID (Invalid Date), LOCAL
    (``ms`` as if the local offset were 0) or UNKNOWN (``ms`` is None)."""

    kind: str
    ms: Optional[int]


_ISO = re.compile(
    r"(?:([0-9]{4})|([+-][0-9]{6}))(?:-([0-9]{2})(?:-([0-9]{2}))?)?"
    r"(?:([Zz])|[Tt]([0-9]{2}):([0-9]{2})(?::([0-9]{2})(?:\.([0-9]+))?)?"
    r"(?:([Zz])|([+-])([0-9]{2}):?([0-9]{2}))?)?",
    re.ASCII,
)
_UNKNOWN = DateReading(UNKNOWN, None)
_INVALID = DateReading(INVALID, None)


_POWERS = (1, 10, 100, 1000, 10_000, 100_000, 1_000_000)


def _v8_milliseconds(digits: str) -> int:
    # V8's DateParser: the numeral keeps its first 9 significant digits (leading zeros
    # skipped), its length counts every digit (capped at 9), then it is scaled to 3 digits.
    significant = digits.lstrip("0")[:9]
    n = int(significant) if significant else 0
    length = min(len(digits), 9)
    if length < 3:
        return n * _POWERS[3 - length]
    return n // _POWERS[length - 3]


def _clip(ms: int) -> DateReading:
    return DateReading(EXACT, ms) if -MAX_TIME_MS <= ms <= MAX_TIME_MS else _INVALID


def _read_text(text: str) -> DateReading:
    m = _ISO.fullmatch(text)
    if m is None:
        return _UNKNOWN
    year4, year6, month, day, date_z, hour, minute, second, fraction, time_z, sign, off_h, off_m = m.groups()
    if year6 == "-000000" or date_z is not None:
        return _UNKNOWN  # not on V8's ISO path: its legacy parser guesses (year 0000 reads as 2000)
    year = int(year4 if year4 is not None else year6)
    mon = int(month) if month is not None else 1
    dd = int(day) if day is not None else 1
    if not (1 <= mon <= 12 and 1 <= dd <= 31):
        return _UNKNOWN  # off V8's ISO path: its legacy parser may still read something
    days = _days_from_civil(year, mon, 1) + dd - 1  # V8 checks day <= 31 only, then rolls over
    if hour is None:  # a date alone (or with Z) is UTC
        return _clip(days * DAY_MS)
    h, mi = int(hour), int(minute)
    s = int(second) if second is not None else 0
    if h > 24 or mi > 59 or s > 59:
        return _UNKNOWN
    if h == 24 and (mi or s or (fraction is not None and fraction.strip("0"))):
        return _UNKNOWN
    ms = (days * DAY_MS + h * 3_600_000 + mi * 60_000 + s * 1000
          + (_v8_milliseconds(fraction) if fraction is not None else 0))
    if time_z is not None:
        return _clip(ms)
    if sign is not None:
        oh, om = int(off_h), int(off_m)
        if oh > 23 or om > 59:
            return _UNKNOWN
        offset = (oh * 60 + om) * 60_000
        return _clip(ms - offset if sign == "+" else ms + offset)
    if not -MAX_TIME_MS + DAY_MS <= ms <= MAX_TIME_MS - DAY_MS:
        return _UNKNOWN  # TimeClip after the server's offset: valid or not depends on the zone
    return DateReading(LOCAL, ms)


def read_date(value: Any) -> DateReading:
    """``new Date(value)`` for a decoded JSON value, as far as it is known without the server's time zone.

    Never raises.  See the module docstring for what each kind means.
    """
    if value is True:
        return DateReading(EXACT, 1)
    if value is False or value is None:
        return DateReading(EXACT, 0)  # ToNumber(false) and ToNumber(null) are 0
    if type(value) is int:
        return _clip(value)
    if type(value) is float:
        if value != value or value in (float("inf"), float("-inf")):
            return _INVALID
        return _clip(int(value))  # ToIntegerOrInfinity truncates toward zero; -0 becomes +0
    if type(value) is str:
        return _read_text(value)
    return _UNKNOWN

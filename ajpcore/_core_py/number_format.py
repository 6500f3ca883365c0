"""Number formatting (RFC 8785 §3.2.2.3): twin of ``native/number_format.pxi``."""

from __future__ import annotations

from typing import Callable

from ..errors import EncodeError
from .limits import _MAX_SAFE_INT


# ---------------------------------------------------------------------------
# Number formatting (RFC 8785 §3.2.2.3, ECMA-262 Number::toString)
# ---------------------------------------------------------------------------

def _format_double(x: float) -> str:
    """ECMAScript ``Number.prototype.toString`` of a finite double (RFC 8785 §3.2.2.3).

    ``float.__repr__`` gives the shortest round-trip digits (the same digits
    ECMAScript chooses); only their layout differs, so the digits and the
    decimal exponent are re-laid out by the ECMA-262 7.1.12.1 rules.
    """
    if x == 0.0:
        return "0"  # also -0.0
    r = float.__repr__(x)
    if "e" not in r:
        # repr writes no exponent exactly for 1e-4 <= |x| < 1e16, where ECMAScript writes
        # none either and lays the same digits out the same way, but for a trailing ".0".
        return r[:-2] if r[-2:] == ".0" else r
    sign = ""
    if r[0] == "-":
        sign = "-"
        r = r[1:]
    mant, e_sep, exp = r.partition("e")
    exp10 = int(exp) if e_sep else 0
    int_part, _, frac_part = mant.partition(".")
    if frac_part == "0":
        frac_part = ""
    digits = int_part + frac_part
    # n: position of the decimal point relative to the start of `digits`.
    n = len(int_part) + exp10
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    digits = stripped.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return sign + digits + "0" * (n - k)
    if 0 < n <= 21:
        return sign + digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + digits
    e = n - 1
    exp_text = ("e+" if e >= 0 else "e-") + str(abs(e))
    if k == 1:
        return sign + digits + exp_text
    return sign + digits[0] + "." + digits[1:] + exp_text


def _format_int(n: int, path: Callable[[], str]) -> str:
    """The canonical text of an int, or EncodeError if a JavaScript peer would change it.

    Beyond +-(2**53-1) an int must be the double it stands for (``int(float(n)) == n``)
    or be spelled exactly as ECMAScript spells that double; it is written as
    ECMAScript writes the double.
    """
    text = int.__repr__(n)
    if -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
        return text
    try:
        x = float(n)
    except OverflowError:
        raise EncodeError("Integer out of range for binary64", path()) from None
    es = _format_double(x)
    if int(x) == n or es == text:
        return es
    raise EncodeError(
        "Integer is not exactly representable as binary64 (would change through a JavaScript peer)",
        path(),
    )

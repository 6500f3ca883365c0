"""Texts and rules both core twins share, below both: the pure twin and the native core import them.

``ajpcore._core_py`` (the pure twin) and ``ajpcore._core_c`` (built from
``native/``) give the same bytes and the same errors; where they must say or
decide exactly the same thing, the one definition is here, so that neither
twin imports the other and the pure twin's private helpers can change without
rebuilding the native core:

- the limits (``MAX_DEPTH``; ``_MAX_SAFE_INT``, +-(2**53-1), the ints every peer reads exactly);
- the int rule of RFC 8785 / RFC 7493 §2.2 beyond 2**53 (``_format_int``, with the
  ECMAScript number text it depends on, ``_format_double``), which the native core
  applies on that rare path, and the decoder's side of it (``_decode_big_int``);
- the decoder's error texts and ``DecodeError`` construction (``_decode_error``,
  ``_duplicate_reason``, ``_surrogate_reason``, ``_noncharacter_reason``; ``_Refusal``
  carries a refused token's reason to the parser);
- the encoder's text for a recursion met while writing (``_RECURSION_REASON``);
- the replay guard's bounds on what it stores (``MAX_JOB_ID_LENGTH``, ``MAX_IDENTITY_LENGTH``,
  ``MAX_DIGEST_LENGTH``; ``ajpcore.ajp`` exports them) and what the in-memory table is made of
  (``_check_table``);
- the proleptic Gregorian day count (``_days_from_civil``) of the pure twin's RFC 3339 reader,
  which ``ajpcore._js_date`` also reads dates with (native: ``ajp_days_from_civil``, rfc3339.pxi).

It imports only ``ajpcore.errors``.
"""

from __future__ import annotations

from json.encoder import encode_basestring_ascii as _escape_ascii
from typing import Any, Callable, List

from .errors import DecodeError, EncodeError

MAX_DEPTH = 512
"""Deepest nesting of containers ``canonicalize`` accepts (``[]`` has depth 1; native: ``_core_c.pyx``'s header)."""

_MAX_SAFE_INT = 2**53 - 1
_INT_DIGITS_FINITE = 309  # 10**309 > DBL_MAX: a longer integer literal cannot be a double

_RECURSION_REASON = "Recursion limit reached in the encoder (a `write` callback re-entering it?)"
"""Why a RecursionError met while encoding is raised as EncodeError, on both twins."""

MAX_JOB_ID_LENGTH = 256
"""Longest ``job_id`` (characters) the schemas and every replay guard accept (the reference SDK mints 24)."""
MAX_IDENTITY_LENGTH = 256
"""Longest replay identity a guard stores (``replay_identity`` gives at most 72 characters)."""
MAX_DIGEST_LENGTH = 64
"""Longest ``digest`` (bytes) a guard stores with a pair (``offer_digest`` gives 32 or 64: an HMAC tag, an Ed25519 signature)."""



def _check_table(max_entries: Any, quota: Any, skew_us: Any, lease_us: Any) -> None:
    """``ReplayTable``'s settings, on both twins: ``TypeError`` unless ``max_entries``, ``skew_us`` and
    ``lease_us`` are ints and ``quota`` None or an int, ``ValueError`` unless ``max_entries`` and
    ``quota`` are at least 1."""
    if not (type(max_entries) is int and (quota is None or type(quota) is int) and type(skew_us) is int
            and type(lease_us) is int):
        raise TypeError("ReplayTable: max_entries and skew_us and lease_us must be int, quota None or an int")
    if max_entries < 1 or (quota is not None and quota < 1):
        raise ValueError("ReplayTable: max_entries and quota must be at least 1")


# ---------------------------------------------------------------------------
# Number text (RFC 8785 §3.2.2.3, ECMA-262 Number::toString) and the int rule
# ---------------------------------------------------------------------------

def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days from 1970-01-01 to year ``y``, month ``m``, day ``d`` of the proleptic Gregorian calendar
    (H. Hinnant's algorithm; ``d`` past the month's end rolls over)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


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


# ---------------------------------------------------------------------------
# The decoder's refusals (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------

class _Refusal(Exception):
    """A complete token that I-JSON refuses; the parser reports it at the token's first byte."""


def _json_pointer(steps: List[Any]) -> str:
    # RFC 6901 §3: "~" is written "~0" and "/" is written "~1".
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in steps)


def _decode_error(head: bytes, reason: str, pos: int, steps: List[Any]) -> DecodeError:
    """The DecodeError for ``reason`` at byte ``pos``; ``head`` holds at least the first ``pos`` bytes."""
    lineno = head.count(b"\n", 0, pos) + 1
    colno = pos - head.rfind(b"\n", 0, pos)
    return DecodeError(reason, pos, lineno, colno, _json_pointer(steps))


def _decode_big_int(text: bytes) -> int:
    """The value of an integer literal of 16 digits or more, under the int rule of ``canonicalize``.

    Beyond +-(2**53-1) a literal is admitted when it is a double's exact value or
    ECMAScript's spelling of a double, and its value is that double's, as an int
    (RFC 7493 §2.2: every peer reads the binary64 value; ``123456789012345680000``
    is ``123456789012345683968``), so canonicalize writes the literal back.
    """
    digits = len(text) - (text[0] == 0x2D)
    if digits > _INT_DIGITS_FINITE:
        raise _Refusal("number out of range for binary64")
    n = int(text)
    if -_MAX_SAFE_INT <= n <= _MAX_SAFE_INT:
        return n
    try:
        x = float(n)
    except OverflowError:
        raise _Refusal("number out of range for binary64") from None
    try:
        _format_int(n, _top_path)
    except EncodeError:
        raise _Refusal("integer is not exactly representable as binary64") from None
    return int(x)


def _top_path() -> str:
    return "$"


def _duplicate_reason(key: str) -> str:
    shown = _escape_ascii(key[:64] + ("..." if len(key) > 64 else ""))[1:-1]
    return f"duplicate member name `{shown}`"


def _surrogate_reason(escape: bytes) -> str:
    return f"lone surrogate escape `{escape.decode('ascii')}`"


def _noncharacter_reason(cp: int) -> str:
    return f"noncharacter `U+{cp:04X}` is not allowed"

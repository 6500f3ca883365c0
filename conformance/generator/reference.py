"""Reference answers for the pack, computed without ajpcore.

The pack's expectations must not come from the implementation they judge, so the
generator has its own small RFC 8785 writer here: ECMAScript number formatting
from Python's shortest round-trip ``repr`` (David Gay's algorithm, not ajpcore's
Ryu), key order by UTF-16 code units, ``JSON.stringify`` string escaping.  Every
canonical text it writes is also compared with the ``rfc8785`` package (Trail of
Bits) where that package can take the value, and the number formatter is checked
against the ES6 number vectors (node's ``Number.prototype.toString``) before any
case is written.  The Node interop check (``tests/interop``) compares the result
with npm ``canonicalize`` and provenance-protocol 0.3.0 once more.
"""

from __future__ import annotations

import gzip
import hashlib
import hmac
import json
import math
import struct
from decimal import Decimal
from pathlib import Path
from typing import Any, Dict, Iterator, List, Tuple

import rfc8785

REPO = Path(__file__).resolve().parents[2]
VECTORS = REPO / "tests" / "vectors"

MAX_SAFE_INTEGER = 2**53 - 1


class NotCanonical(ValueError):
    """The value has no RFC 8785 form that every I-JSON peer agrees on."""


def es6_number(x: float) -> str:
    """ECMA-262 Number::toString(x) for a finite double (RFC 8785 §3.2.2.3)."""
    if not math.isfinite(x):
        raise NotCanonical(f"{x!r} is not finite")
    if x == 0:
        return "0"
    if x < 0:
        return "-" + es6_number(-x)
    # repr is the shortest decimal that reads back as x (closest one on ties), as ES requires.
    _, digit_tuple, exponent = Decimal(repr(x)).as_tuple()
    digits = "".join(map(str, digit_tuple))
    n = len(digits) + int(exponent)  # x = 0.<digits> * 10**n
    digits = digits.rstrip("0")
    k = len(digits)
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    sign = "+" if e >= 0 else "-"
    head = digits[0] + ("." + digits[1:] if k > 1 else "")
    return f"{head}e{sign}{abs(e)}"


def _escape(s: str) -> str:
    out = ['"']
    for ch in s:
        c = ord(ch)
        if ch == '"':
            out.append('\\"')
        elif ch == "\\":
            out.append("\\\\")
        elif c < 0x20:
            out.append({8: "\\b", 9: "\\t", 10: "\\n", 12: "\\f", 13: "\\r"}.get(c, f"\\u{c:04x}"))
        elif 0xD800 <= c <= 0xDFFF:
            raise NotCanonical("lone surrogate")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


def _utf16_key(s: str) -> bytes:
    return s.encode("utf-16-be")


def jcs_text(value: Any) -> str:
    """The RFC 8785 text of a JSON value (dict, list, str, int, float, bool, None)."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int):
        if abs(value) <= MAX_SAFE_INTEGER:
            return str(value)
        x = float(value)
        if int(x) != value:
            raise NotCanonical(f"integer {value} is not a binary64 value")
        return es6_number(x)
    if isinstance(value, float):
        return es6_number(value)
    if isinstance(value, str):
        return _escape(value)
    if isinstance(value, list):
        return "[" + ",".join(jcs_text(v) for v in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=_utf16_key)
        return "{" + ",".join(_escape(k) + ":" + jcs_text(value[k]) for k in keys) + "}"
    raise NotCanonical(f"not a JSON value: {type(value).__name__}")


def jcs(value: Any) -> bytes:
    """``jcs_text`` as UTF-8, cross-checked with the ``rfc8785`` package."""
    text = jcs_text(value).encode("utf-8")
    try:
        other = rfc8785.dumps(_ints_as_floats(value))
    except rfc8785.CanonicalizationError:
        other = None
    if other is not None and other != text:
        raise AssertionError(f"reference writers disagree: {text!r} vs {other!r}")
    return text


def _ints_as_floats(value: Any) -> Any:
    # rfc8785 takes only safe ints; beyond them a JSON integer is its double.
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return value if abs(value) <= MAX_SAFE_INTEGER else float(value)
    if isinstance(value, list):
        return [_ints_as_floats(v) for v in value]
    if isinstance(value, dict):
        return {k: _ints_as_floats(v) for k, v in value.items()}
    return value


def _no_duplicates(pairs: List[Tuple[str, Any]]) -> Dict[str, Any]:
    out: Dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise NotCanonical(f"duplicate member name {k!r}")
        out[k] = v
    return out


def _int_literal(text: str) -> Any:
    n = int(text)
    if abs(n) <= MAX_SAFE_INTEGER:
        return n
    x = float(n)
    # Admitted beyond 2**53 only when the literal is its double's exact value or the
    # digits ECMAScript writes for that double: then no peer changes its value.
    if int(x) == n or es6_number(x) == text.lstrip("-") or es6_number(x) == text:
        return float(x)
    raise NotCanonical(f"integer literal {text} is not exactly a binary64 value")


def _float_literal(text: str) -> float:
    x = float(text)
    if not math.isfinite(x):
        raise NotCanonical(f"{text} overflows binary64")
    return x


def _no_constants(name: str) -> Any:
    raise NotCanonical(f"{name} is not JSON")


def parse(text: str) -> Any:
    """A strict reading of JSON text for the reference answer (stdlib json plus the I-JSON rules)."""
    return json.loads(
        text,
        object_pairs_hook=_no_duplicates,
        parse_int=_int_literal,
        parse_float=_float_literal,
        parse_constant=_no_constants,
    )


def canonical_of_text(text: str) -> str:
    """The expected canonical text of JSON ``text`` (raises NotCanonical)."""
    return jcs(parse(text)).decode("utf-8")


# -- signatures ----------------------------------------------------------------------------


def unsigned(body: Dict[str, Any]) -> Dict[str, Any]:
    return {k: v for k, v in body.items() if k != "signature"}


def legacy_value(rest: Dict[str, Any]) -> Dict[str, Any]:
    """What ``JSON.stringify(rest, Object.keys(rest).sort())`` serializes: the top-level key
    list is an allow-list applied to the members of every object at every depth."""
    allowed = set(rest)

    def walk(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: walk(x) for k, x in v.items() if k in allowed}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    return walk(rest)


def hmac_signature(data: bytes, secret: str) -> str:
    return "sha256:" + hmac.new(secret.encode("utf-8"), data, hashlib.sha256).hexdigest()


# -- ES6 number vectors ----------------------------------------------------------------------


def es6_vectors() -> Iterator[Tuple[int, str, str]]:
    """(line number, IEEE-754 hex bits, node's text) of the 100k ES6 number lines."""
    with gzip.open(VECTORS / "jcs" / "es6numbers_100k.txt.gz", "rt", encoding="ascii") as f:
        for i, line in enumerate(f, 1):
            bits, text = line.strip().split(",")
            yield i, bits.zfill(16), text


def double(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


def check_number_formatter() -> int:
    """Compare ``es6_number`` with every ES6 vector line; returns the count checked."""
    count = 0
    for _, bits, text in es6_vectors():
        got = es6_number(double(bits))
        if got != text:
            raise AssertionError(f"es6_number({bits}) = {got}, node says {text}")
        count += 1
    return count

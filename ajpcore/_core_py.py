"""Pure-Python twin of ``ajpcore._core_c``.

Same functions, same order, same bytes, same errors as ``native/_core_c.pyx``;
read the two side by side.  This module is the reference: where the twins
disagree, this one states the intended behaviour.
"""

from __future__ import annotations

import json as _json
import operator as _operator
import re
import threading as _threading
from hashlib import sha256 as _sha256
from hmac import compare_digest as _compare_digest
from itertools import accumulate as _accumulate, repeat as _repeat
from json.encoder import encode_basestring as _escape_str
from json.encoder import encode_basestring_ascii as _escape_ascii
from typing import Any, Callable, List, NoReturn, Tuple

from .errors import (
    BadSignature,
    DecodeError,
    EncodeError,
    KeyFormatError,
    KeyUsageError,
    MalformedSignature,
    SignerFinalized,
    WeakKey,
    format_path,
)

MAX_DEPTH = 512
"""Deepest nesting of containers ``canonicalize`` accepts (``[]`` has depth 1)."""

_MAX_SAFE_INT = 2**53 - 1


# ---------------------------------------------------------------------------
# Canonical JSON (RFC 8785)
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


def _utf16_key(key: str) -> bytes:
    # RFC 8785 §3.2.3: member names sort by their UTF-16 code units.  ``str.encode``,
    # not ``key.encode``: a str subclass cannot change the order.
    return str.encode(key, "utf-16-be", "surrogatepass")


def _type_name(value: Any) -> str:
    return type(value).__qualname__


def _scalar(v: Any, steps: List[Any]) -> str:
    """Canonical text of a non-container value (the slow, rare types)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    # Subclasses (IntEnum, ...) are read through the base type's own methods, so an
    # overridden __int__/__float__/__len__ cannot make the twins disagree.
    if isinstance(v, int):
        return _format_int(int.__index__(v), lambda: format_path(steps))
    if isinstance(v, float):
        x = float.__float__(v)
        if x != x or x in (_INF, -_INF):
            raise EncodeError(f"Non-finite float `{float.__repr__(x)}` has no JSON form", format_path(steps))
        return _format_double(x)
    if isinstance(v, str):
        return _escape_str(v)
    raise EncodeError(f"Unsupported type `{_type_name(v)}`", format_path(steps))


_INF = float("inf")


def _sorted_items(d: dict, steps: List[Any]) -> List[Tuple[str, Any]]:
    """The members of ``d`` as (key, value) pairs in RFC 8785 §3.2.3 order.

    A snapshot: a ``write`` callback that mutates ``d`` later cannot break the output.
    """
    items = list(dict.items(d))
    ascii_only = True
    exact = True
    for k, _ in items:
        if type(k) is not str:
            if not isinstance(k, str):
                raise EncodeError(f"Object key must be `str`, got `{_type_name(k)}`", format_path(steps))
            exact = False  # a str subclass may override __lt__: sort by the text itself
        elif not k.isascii():
            ascii_only = False
    if exact and ascii_only:
        items.sort(key=_member_name)
    else:
        items.sort(key=_member_name_utf16)
        if not exact:
            _refuse_duplicate_names(items, steps)
    return items


def _member_name(item: Tuple[str, Any]) -> str:
    return item[0]


def _member_name_utf16(item: Tuple[str, Any]) -> bytes:
    return _utf16_key(item[0])


def _refuse_duplicate_names(items: List[Tuple[str, Any]], steps: List[Any]) -> None:
    # Only str subclasses with their own __eq__/__hash__ can put one name in a dict twice;
    # RFC 8785 §3.1 (I-JSON) output must not repeat a member name.
    for i in range(1, len(items)):
        if str.__eq__(items[i - 1][0], items[i][0]):
            raise EncodeError(f"Duplicate object key `{str.__str__(items[i][0])}`", format_path(steps))


def _append_str_in_slices(s: str, append: Callable[[str], Any]) -> None:
    # Escaping is per code point (RFC 8785 §3.2.2.2), so slices escape independently:
    # no piece of a huge string is ever materialised beyond _STR_SLICE code points.
    append('"')
    for start in range(0, str.__len__(s), _STR_SLICE):
        append(_escape_str(str.__getitem__(s, slice(start, start + _STR_SLICE)))[1:-1])
    append('"')


_STR_SLICE = 1024


def _encode(value: Any, append: Callable[[str], Any], steps: List[Any], max_str: int) -> None:
    """Feed the canonical text of ``value`` to ``append`` as ``str`` pieces, in order.

    An explicit stack instead of recursion: depth is bounded by MAX_DEPTH only,
    never by the interpreter's recursion limit.  ``steps`` tracks the JSON path
    (keys and indices) of the value being written; it is formatted only on error.
    Strings longer than ``max_str`` are handed over in slices.
    """
    frames: List[list] = []  # [members (list, tuple or sorted (key, value) pairs), is_object, next index]
    v = value
    while True:
        t = type(v)
        if t is str:
            if len(v) > max_str:
                _append_str_in_slices(v, append)
            else:
                append(_escape_str(v))
        elif t is int and -_MAX_SAFE_INT <= v <= _MAX_SAFE_INT:
            append(int.__repr__(v))
        elif t is float and v - v == 0.0:  # finite
            append(_format_double(v))
        elif t is dict or isinstance(v, dict):
            if len(frames) >= MAX_DEPTH:
                raise EncodeError(f"Nesting deeper than {MAX_DEPTH}", format_path(steps))
            if not dict.__len__(v):
                append("{}")
            else:
                items = _sorted_items(v, steps)
                k, v = items[0]
                frames.append([items, True, 1])
                steps.append(k)
                append("{")
                if str.__len__(k) > max_str:
                    _append_str_in_slices(k, append)
                else:
                    append(_escape_str(k))
                append(":")
                continue
        elif t is list or t is tuple or isinstance(v, (list, tuple)):
            if t is not list and t is not tuple:
                # A plain copy of the items: an overridden __getitem__/__len__ is ignored.
                v = (list if isinstance(v, list) else tuple).__getitem__(v, slice(None))
            if len(frames) >= MAX_DEPTH:
                raise EncodeError(f"Nesting deeper than {MAX_DEPTH}", format_path(steps))
            if not v:
                append("[]")
            else:
                frames.append([v, False, 1])
                steps.append(0)
                v = v[0]  # before append: a ``write`` callback may empty the list
                append("[")
                continue
        elif isinstance(v, str) and str.__len__(v) > max_str:
            _append_str_in_slices(v, append)
        else:
            append(_scalar(v, steps))
        # The value is written: close finished containers, move to the next member.
        while frames:
            frame = frames[-1]
            members, is_object, i = frame
            # len() again each time: a streaming ``write`` callback may shrink a list.
            if i < len(members):
                frame[2] = i + 1
                if is_object:
                    append(",")
                    k, v = members[i]
                    steps[-1] = k
                    if str.__len__(k) > max_str:
                        _append_str_in_slices(k, append)
                    else:
                        append(_escape_str(k))
                    append(":")
                else:
                    steps[-1] = i
                    v = members[i]
                    append(",")
                break
            frames.pop()
            steps.pop()
            append("}" if is_object else "]")
        else:
            return


def _discard(chunk: bytes) -> None:
    pass


_NO_LIMIT = 2**63
_FLUSH_LIMIT = 16384
_BATCH_CHARS = 2048
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def canonicalize(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value`` as UTF-8 bytes.

    Accepts dict (str keys), list, tuple, str, int, float, bool and None.
    Raises EncodeError, naming the JSON path, for anything without an exact
    canonical form (NaN, infinities, lone surrogates, non-str keys, other
    types, ints a binary64 cannot carry, nesting deeper than MAX_DEPTH).
    """
    pieces: List[str] = []
    try:
        _encode(value, pieces.append, [], _NO_LIMIT)
        return "".join(pieces).encode("utf-8")
    except (EncodeError, UnicodeEncodeError):
        # Lone surrogates surface only when the text is encoded; the streaming path checks
        # each piece as it goes, so it reports the first problem in output order.
        del pieces[:]
    canonicalize_into(value, _discard)
    raise AssertionError("unreachable: streaming found no problem")  # pragma: no cover


def canonicalize_into(value: Any, write: Callable[[bytes], Any], *, chunk_size: int = 65536) -> int:
    """Hand the canonical bytes of ``value`` to ``write`` in chunks of at most ``chunk_size``.

    Gives exactly the bytes of ``canonicalize(value)`` and returns their count.
    The whole output is never held at once, so signing a large document costs
    O(chunk_size) extra memory (this pure twin hands over at most 16 KiB at a
    time).  Raises what ``canonicalize`` raises, and whatever ``write`` raises;
    chunks written before an error was found have already reached ``write``.
    Raises ValueError unless ``chunk_size`` is a positive int.
    """
    if type(chunk_size) is not int or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    steps: List[Any] = []
    pending: List[str] = []
    pending_chars = 0
    buf = bytearray()
    total = 0
    # Chunks of at most 16 KiB even when more is allowed: text is batched (at most
    # _BATCH_CHARS + one piece), encoded, then copied out chunk by chunk, and those
    # copies together stay within chunk_size + 64 KiB.
    flush_at = min(chunk_size, _FLUSH_LIMIT)

    def append(piece: str) -> None:
        nonlocal pending_chars
        # Check each piece as it comes, so a lone surrogate is reported at its own path;
        # the search allocates nothing when there is none.
        if not piece.isascii() and _LONE_SURROGATE.search(piece):
            raise EncodeError("String contains a lone surrogate", format_path(steps))
        pending.append(piece)
        pending_chars += len(piece)
        if pending_chars >= _BATCH_CHARS:
            drain()

    def drain() -> None:
        nonlocal pending_chars, total
        data = "".join(pending).encode("utf-8")
        del pending[:]
        pending_chars = 0
        buf.extend(data)
        del data
        while len(buf) >= flush_at:
            with memoryview(buf) as view:
                chunk = bytes(view[:flush_at])
            del buf[:flush_at]
            total += flush_at
            write(chunk)
            del chunk

    _encode(value, append, steps, _STR_SLICE)
    drain()
    if buf:
        total += len(buf)
        write(bytes(buf))
    return total


# ---------------------------------------------------------------------------
# Strict decoding (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------


# The error position rule shared by both twins: the input is read left to right
# and the first problem met is reported.  Grammar errors sit at the first byte
# that cannot continue a valid document (or at the end of the data); a whole
# token that is refused (an ill-formed UTF-8 sequence, a lone surrogate escape,
# a number binary64 cannot hold, a repeated member name) is reported at its
# first byte, as soon as the token has been read.

_BOM = b"\xef\xbb\xbf"
_WHITESPACE = b" \t\n\r"  # RFC 8259 §2: ws
_SHORT_ESCAPES = {
    0x22: '"',
    0x5C: "\\",
    0x2F: "/",
    0x62: "\b",
    0x66: "\f",
    0x6E: "\n",
    0x72: "\r",
    0x74: "\t",
}
_HEX_DIGITS = frozenset(b"0123456789abcdefABCDEF")
_DIGITS = frozenset(b"0123456789")
_INT_DIGITS_SAFE = 15  # every integer of at most 15 digits is within +-(2**53-1)
_INT_DIGITS_FINITE = 309  # 10**309 > DBL_MAX: a longer integer literal cannot be a double
_RAW_TEXT = re.compile(rb'[^"\\\x00-\x1f]*')
_WHITESPACE_RUN = re.compile(rb"[ \t\n\r]*")
_DIGIT_RUN = re.compile(rb"[0-9]*")


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


def _input_bytes(data: Any) -> bytes:
    if isinstance(data, bytes):
        return data
    if isinstance(data, str):
        # Positions are byte offsets of the UTF-8 form; a lone surrogate is kept
        # as its 3-byte (ill-formed) sequence so it is refused like one in bytes.
        return data.encode("utf-8", "surrogatepass")
    if isinstance(data, bytearray):
        return bytes(data)
    if isinstance(data, memoryview):
        return data.tobytes()
    raise TypeError(f"decode() takes bytes, bytearray, memoryview or str, not `{_type_name(data)}`")


def _depth_limit(max_depth: Any) -> int:
    if type(max_depth) is not int or max_depth < 0:
        raise ValueError("max_depth must be a non-negative int")
    return max_depth


class _StrictParser:
    """The reference reader: RFC 8259 grammar plus I-JSON, iterative, one byte position at a time.

    Mirrors ``_StrictParser`` of the native twin step for step, so both find the same
    first problem at the same byte.
    """

    def __init__(self, buf: bytes, max_depth: int, allow_duplicate_keys: bool) -> None:
        self.buf = buf
        self.n = len(buf)
        self.max_depth = max_depth
        self.allow_duplicate_keys = allow_duplicate_keys
        self.stack: List[Any] = []  # open containers, outermost first
        self.keys: List[Any] = []  # current member name of each open object (None for arrays)

    def fail(self, reason: str, pos: int) -> NoReturn:
        steps: List[Any] = []
        for container, key in zip(self.stack[:-1], self.keys[:-1]):
            steps.append(key if type(container) is dict else len(container))
        raise _decode_error(self.buf, reason, pos, steps)

    def skip_ws(self, i: int) -> int:
        return _WHITESPACE_RUN.match(self.buf, i).end()

    def parse(self) -> Any:
        buf, n = self.buf, self.n
        stack, keys = self.stack, self.keys
        if buf[:3] == _BOM:
            # RFC 8259 §8.1: implementations MUST NOT add a byte order mark.
            self.fail("byte order mark is not allowed", 0)
        expect = "expected a value"
        i = 0
        while True:
            # A value starts here.
            i = self.skip_ws(i)
            if i >= n:
                self.fail("unexpected end of data", n)
            c = buf[i]
            if c == 0x22:  # "
                value, i = self.parse_string(i)
            elif c == 0x7B:  # {
                if len(stack) >= self.max_depth:
                    self.fail(f"nesting deeper than {self.max_depth}", i)
                i = self.skip_ws(i + 1)
                if i < n and buf[i] == 0x7D:
                    value = {}
                    i += 1
                else:
                    stack.append({})
                    keys.append(None)
                    i = self.parse_key(i, "expected a member name or `}`")
                    expect = "expected a value"
                    continue
            elif c == 0x5B:  # [
                if len(stack) >= self.max_depth:
                    self.fail(f"nesting deeper than {self.max_depth}", i)
                i = self.skip_ws(i + 1)
                if i < n and buf[i] == 0x5D:
                    value = []
                    i += 1
                else:
                    stack.append([])
                    keys.append(None)
                    expect = "expected a value or `]`"
                    continue
            elif c == 0x2D or 0x30 <= c <= 0x39:
                value, i = self.parse_number(i)
            elif c == 0x74:
                value, i = True, self.parse_literal(i, b"true")
            elif c == 0x66:
                value, i = False, self.parse_literal(i, b"false")
            elif c == 0x6E:
                value, i = None, self.parse_literal(i, b"null")
            else:
                self.fail(expect, i)
            # The value is complete: hand it to its container, close what ends here.
            while True:
                if not stack:
                    i = self.skip_ws(i)
                    if i != n:
                        self.fail("trailing data after the document", i)
                    return value
                container = stack[-1]
                i = self.skip_ws(i)
                if type(container) is list:
                    container.append(value)
                    if i >= n:
                        self.fail("unexpected end of data", n)
                    c = buf[i]
                    if c == 0x2C:  # ,
                        i += 1
                        expect = "expected a value"
                        break
                    if c == 0x5D:  # ]
                        i += 1
                        value = stack.pop()
                        keys.pop()
                        continue
                    self.fail("expected `,` or `]`", i)
                container[keys[-1]] = value
                if i >= n:
                    self.fail("unexpected end of data", n)
                c = buf[i]
                if c == 0x2C:
                    i = self.parse_key(i + 1, "expected a member name")
                    expect = "expected a value"
                    break
                if c == 0x7D:  # }
                    i += 1
                    value = stack.pop()
                    keys.pop()
                    continue
                self.fail("expected `,` or `}`", i)

    def parse_key(self, i: int, expect: str) -> int:
        """Read `"name" :` of a member of the innermost object; return the position after the colon."""
        i = self.skip_ws(i)
        if i >= self.n:
            self.fail("unexpected end of data", self.n)
        if self.buf[i] != 0x22:
            self.fail(expect, i)
        start = i
        key, i = self.parse_string(i)
        # RFC 7493 §2.3: member names MUST be unique (compared after unescaping).
        if not self.allow_duplicate_keys and key in self.stack[-1]:
            self.fail(_duplicate_reason(key), start)
        self.keys[-1] = key
        i = self.skip_ws(i)
        if i >= self.n:
            self.fail("unexpected end of data", self.n)
        if self.buf[i] != 0x3A:
            self.fail("expected `:`", i)
        return i + 1

    def parse_literal(self, i: int, word: bytes) -> int:
        buf, n = self.buf, self.n
        for k in range(1, len(word)):
            if i + k >= n:
                self.fail("unexpected end of data", n)
            if buf[i + k] != word[k]:
                self.fail("invalid literal", i + k)
        return i + len(word)

    def parse_hex4(self, i: int) -> int:
        buf, n = self.buf, self.n
        for k in range(i, i + 4):
            if k >= n:
                self.fail("unexpected end of data", n)
            if buf[k] not in _HEX_DIGITS:
                self.fail("invalid escape", k)
        return int(buf[i : i + 4], 16)

    def parse_string(self, start: int):
        """Read the string whose opening quote is at ``start``; return it and the position after it."""
        buf, n = self.buf, self.n
        parts: List[str] = []
        i = start + 1
        while True:
            j = _RAW_TEXT.match(buf, i).end()
            if j > i:
                try:
                    parts.append(buf[i:j].decode("utf-8"))
                except UnicodeDecodeError as exc:
                    # RFC 7493 §2.1: text MUST be valid UTF-8 (RFC 3629, no surrogates).
                    self.fail("invalid UTF-8", i + exc.start)
            if j >= n:
                self.fail("unexpected end of data", n)
            c = buf[j]
            if c == 0x22:
                return "".join(parts), j + 1
            if c != 0x5C:
                self.fail("control character in string", j)
            if j + 1 >= n:
                self.fail("unexpected end of data", n)
            e = buf[j + 1]
            if e != 0x75:  # not \u
                if e not in _SHORT_ESCAPES:
                    self.fail("invalid escape", j + 1)
                parts.append(_SHORT_ESCAPES[e])
                i = j + 2
                continue
            cp = self.parse_hex4(j + 2)
            i = j + 6
            if 0xD800 <= cp <= 0xDBFF:
                # RFC 8259 §7 / RFC 7493 §2.1: a high surrogate escape must be followed by a low one.
                if buf[i : i + 2] != b"\\u":
                    self.fail(_surrogate_reason(buf[j : j + 6]), j)
                low = self.parse_hex4(i + 2)
                if not 0xDC00 <= low <= 0xDFFF:
                    self.fail(_surrogate_reason(buf[j : j + 6]), j)
                cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00)
                i += 6
            elif 0xDC00 <= cp <= 0xDFFF:
                self.fail(_surrogate_reason(buf[j : j + 6]), j)
            parts.append(chr(cp))

    def parse_number(self, start: int):
        """Read the number at ``start`` (RFC 8259 §6); return its value and the position after it."""
        buf, n = self.buf, self.n
        i = start
        if buf[i] == 0x2D:
            i += 1
        if i >= n:
            self.fail("unexpected end of data", n)
        c = buf[i]
        if c == 0x30:
            i += 1
            if i < n and buf[i] in _DIGITS:
                self.fail("leading zeros are not allowed", i)
        elif 0x31 <= c <= 0x39:
            i = _DIGIT_RUN.match(buf, i).end()
        else:
            self.fail("invalid number", i)
        is_int = True
        if i < n and buf[i] == 0x2E:  # .
            i = self.digits_after(i + 1)
            is_int = False
        if i < n and buf[i] in b"eE":
            i += 1
            if i < n and buf[i] in b"+-":
                i += 1
            i = self.digits_after(i)
            is_int = False
        text = buf[start:i]
        if is_int:
            if len(text) - (buf[start] == 0x2D) <= _INT_DIGITS_SAFE:
                return int(text), i
            try:
                return _decode_big_int(text), i
            except _Refusal as exc:
                self.fail(str(exc), start)
        x = float(text)
        if x - x != 0.0:  # RFC 7493 §2.2: the value must fit binary64; float() gave an infinity
            self.fail("number out of range for binary64", start)
        return x, i

    def digits_after(self, i: int) -> int:
        if i >= self.n:
            self.fail("unexpected end of data", self.n)
        if self.buf[i] not in _DIGITS:
            self.fail("invalid number", i)
        return _DIGIT_RUN.match(self.buf, i).end()


# The fast path: json's C scanner does the work, and only documents it could
# read differently from the reference parser are sent to it (a document the
# fast path refuses is always re-read by _StrictParser, which names the error).
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")
# Spot number-like runs with plain substring searches: every digit reads "0", "E" reads "e".
_NUMBER_SHAPE = bytes.maketrans(b"123456789E", b"000000000e")
_SAFE_INT_RUN = b"0" * (_INT_DIGITS_SAFE + 1)
# With an exponent of at most two digits (< 100), a number overflows only if its
# integer part has more than 308 - 99 digits.
_LONG_MANTISSA_RUN = b"0" * 200
_DEPTH_KEEP = frozenset(b'[]{}"\\/bfnrtu')
_DEPTH_DROP_1 = bytes(c for c in range(256) if c not in _DEPTH_KEEP)
_DEPTH_DROP_2 = bytes(c for c in range(256) if c not in b"[]{}")
_SQUARE_BRACKETS = bytes.maketrans(b"{}", b"[]")  # json has checked that brackets pair up
_DEPTH_STEP = bytes.maketrans(b"[]", b"\x02\x00")
_ESCAPED_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')


class _NotFast(Exception):
    """The fast path cannot vouch for this document; the reference parser reads it."""


def _unique_pairs(pairs: List[Any]) -> dict:
    d = dict(pairs)
    if len(d) != len(pairs):
        raise _NotFast
    return d


def _checked_int(text: str) -> int:
    if len(text) <= _INT_DIGITS_SAFE:
        return int(text)
    try:
        return _decode_big_int(text.encode("ascii"))
    except _Refusal:
        raise _NotFast from None


def _checked_float(text: str) -> float:
    x = float(text)
    if x - x != 0.0:
        raise _NotFast
    return x


def _refuse_constant(name: str) -> Any:
    raise _NotFast


_FAST_DECODERS = {
    (unique, checked_ints, checked_floats): _json.JSONDecoder(
        object_pairs_hook=_unique_pairs if unique else None,
        parse_int=_checked_int if checked_ints else None,
        parse_float=_checked_float if checked_floats else None,
        parse_constant=_refuse_constant,
    )
    for unique in (False, True)
    for checked_ints in (False, True)
    for checked_floats in (False, True)
}


def _deeper_than(buf: bytes, limit: int) -> bool:
    """Whether a document json already read nests containers deeper than ``limit``."""
    if buf.count(b"[") + buf.count(b"{") <= limit:
        return False
    # Drop everything but brackets and what is needed to find string bounds,
    # drop the strings, then measure the bracket nesting that is left.
    shape = buf.translate(None, _DEPTH_DROP_1)
    shape = _ESCAPED_STRING.sub(b"", shape).translate(_SQUARE_BRACKETS, _DEPTH_DROP_2)
    for _ in range(8):
        if not shape:
            return False
        if limit <= 0:
            return True
        shape = shape.replace(b"[]", b"")  # one nesting level less
        limit -= 1
    if not shape:
        return False
    return max(_accumulate(map(_operator.sub, shape.translate(_DEPTH_STEP), _repeat(1)))) > limit


def _decode_fast(buf: bytes, max_depth: int, allow_duplicate_keys: bool) -> Any:
    try:
        text = buf.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotFast from None
    if b"\\u" in buf and _SURROGATE_ESCAPE.search(buf):
        raise _NotFast  # json keeps lone surrogates; the reference parser refuses them
    shape = buf.translate(_NUMBER_SHAPE)
    decoder = _FAST_DECODERS[
        (
            not allow_duplicate_keys,
            _SAFE_INT_RUN in shape,  # an integer that may be beyond +-(2**53-1)
            b"e000" in shape or b"e+000" in shape or _LONG_MANTISSA_RUN in shape,  # may overflow
        )
    ]
    try:
        value = decoder.decode(text)
    except (ValueError, RecursionError):
        raise _NotFast from None
    if _deeper_than(buf, max_depth):
        raise _NotFast
    return value


def decode(data: Any, *, max_depth: int = MAX_DEPTH, allow_duplicate_keys: bool = False) -> Any:
    """Parse one strictly valid I-JSON document (RFC 8259 + RFC 7493) into Python values.

    ``data`` is bytes, bytearray, memoryview or str (read as its UTF-8 bytes).
    Objects become dict, arrays list, strings str, integer literals int (only
    those ``canonicalize`` can write back unchanged: ``9007199254740993`` is
    refused; beyond 2**53 the int is the exact value of the binary64 the
    literal stands for, ``123456789012345680000`` -> ``123456789012345683968``),
    other numbers float (exactly ``float(text)``; ``-0`` is int 0),
    true/false/null become True/False/None.  Raises DecodeError (with ``.pos``,
    ``.lineno``, ``.colno`` and ``.pointer``) for anything else: grammar errors,
    a byte order mark, invalid UTF-8, lone surrogate escapes, NaN/Infinity,
    numbers beyond binary64, duplicate member names (unless
    ``allow_duplicate_keys``, then the last wins), nesting deeper than
    ``max_depth``, trailing data.  TypeError for other input types.
    """
    buf = _input_bytes(data)
    limit = _depth_limit(max_depth)
    unique = not allow_duplicate_keys
    try:
        return _decode_fast(buf, limit, not unique)
    except _NotFast:
        pass
    return _StrictParser(buf, limit, not unique).parse()


# ---------------------------------------------------------------------------
# Streaming HMAC-SHA256 (RFC 2104 over OpenSSL's SHA-256 from hashlib)
# ---------------------------------------------------------------------------

# The keyed states of recently used secrets, so a server that checks many
# messages under one secret pays the RFC 2104 key schedule once.  Caching keeps
# secret-equivalent material (the secret itself, as the dict key, and its two
# keyed SHA-256 states) alive after the caller drops it; the caller's process
# already holds that secret, and Python can never wipe an immutable ``bytes``
# or ``str`` anyway, so the cache changes how long, not whether, it is in
# memory.  It is bounded (HMAC_CACHE_SIZE secrets, oldest evicted first) and
# ``clear_hmac_cache()`` empties it, e.g. after rotating a secret.
HMAC_CACHE_SIZE = 32
"""How many secrets ``HmacSigner`` keeps keyed SHA-256 states for (oldest evicted first; 0: none)."""

_HMAC_BLOCK = 64  # SHA-256 block size in bytes (RFC 2104 §2: B)
_HMAC_TAG_SIZE = 32
_IPAD = bytes(x ^ 0x36 for x in range(256))
_OPAD = bytes(x ^ 0x5C for x in range(256))
_hmac_cache: dict = {}
_hmac_cache_lock = _threading.Lock()


def _hmac_keyed_states(secret: Any) -> tuple:
    """The (inner, outer) SHA-256 states keyed with ``secret``, from the cache when present."""
    t = type(secret)
    if t is str or t is bytes:
        states = _hmac_cache.get(secret)
        if states is not None:
            return states
        cache_key = secret
        key = secret if t is bytes else _utf8_secret(secret)
    elif isinstance(secret, str):
        # A subclass may redefine hashing and equality: key the cache by plain bytes.
        key = cache_key = _utf8_secret(str.__str__(secret))
    elif isinstance(secret, (bytes, bytearray, memoryview)):
        key = cache_key = bytes(secret)
    else:
        raise KeyUsageError(f"HMAC secret must be `bytes` or `str`, got `{_type_name(secret)}`")
    if cache_key is not secret:
        states = _hmac_cache.get(cache_key)
        if states is not None:
            return states
    # RFC 2104 §2: a key longer than the block is hashed first, then zero-padded to B bytes.
    if len(key) > _HMAC_BLOCK:
        key = _sha256(key).digest()
    key = key.ljust(_HMAC_BLOCK, b"\0")
    states = (_sha256(key.translate(_IPAD)), _sha256(key.translate(_OPAD)))
    if HMAC_CACHE_SIZE > 0:
        with _hmac_cache_lock:
            while len(_hmac_cache) >= HMAC_CACHE_SIZE:
                del _hmac_cache[next(iter(_hmac_cache))]
            _hmac_cache[cache_key] = states
    return states


def _utf8_secret(secret: str) -> bytes:
    try:
        return secret.encode("utf-8")
    except UnicodeEncodeError:
        raise KeyFormatError("HMAC secret contains a lone surrogate (not UTF-8 encodable)") from None


def clear_hmac_cache() -> None:
    """Forget every cached keyed HMAC state (and the secrets they are keyed by)."""
    with _hmac_cache_lock:
        _hmac_cache.clear()


class HmacSigner:
    """Streaming HMAC-SHA256 (RFC 2104) over OpenSSL's SHA-256 from ``hashlib``.

    ``HmacSigner(secret)`` with ``secret`` as ``bytes`` (also bytearray or
    memoryview) or ``str`` (UTF-8) of any length; ``update(data)`` feeds bytes;
    ``finalize()`` returns the 32-byte tag (the same bytes as
    ``hmac.digest(secret, message, "sha256")``); ``hexdigest()`` its lowercase
    hex; ``verify(tag)`` compares in constant time and raises ``BadSignature``
    on a mismatch or a tag that is not exactly 32 bytes (truncated tags are
    refused).  After ``finalize``, ``hexdigest`` or ``verify`` the signer is
    spent: any further call raises ``SignerFinalized`` (``copy()`` first to
    continue a stream).  A secret of another type raises ``KeyUsageError``; a
    ``str`` secret that is not UTF-8 encodable (lone surrogate) ``KeyFormatError``.
    """

    __slots__ = ("_inner", "_outer", "_done")

    def __init__(self, secret: Any) -> None:
        inner, outer = _hmac_keyed_states(secret)
        self._inner = inner.copy()
        self._outer = outer
        self._done = False

    def _spent(self) -> None:
        raise SignerFinalized("HmacSigner is finalized; call copy() before finalize() to continue a stream")

    def update(self, data: Any) -> None:
        """Feed ``data`` (bytes-like) to the MAC."""
        if self._done:
            self._spent()
        self._inner.update(data)

    def copy(self) -> "HmacSigner":
        """An independent signer that has seen the same bytes."""
        if self._done:
            self._spent()
        other = HmacSigner.__new__(HmacSigner)
        other._inner = self._inner.copy()
        other._outer = self._outer
        other._done = False
        return other

    def finalize(self) -> bytes:
        """The 32-byte HMAC-SHA256 tag of everything fed so far; spends the signer."""
        if self._done:
            self._spent()
        self._done = True
        outer = self._outer.copy()
        outer.update(self._inner.digest())
        self._inner = None
        return outer.digest()

    def hexdigest(self) -> str:
        """``finalize()`` as 64 lowercase hex digits; spends the signer."""
        return self.finalize().hex()

    def verify(self, tag: Any) -> None:
        """Check ``tag`` (32 bytes) against the MAC in constant time; spends the signer.

        Raises BadSignature on a mismatch or when ``tag`` is not exactly 32 bytes.
        """
        mac = self.finalize()
        if not isinstance(tag, (bytes, bytearray, memoryview)):
            raise BadSignature(f"HMAC-SHA256 tag must be bytes, got `{_type_name(tag)}`")
        tag = bytes(tag)
        if len(tag) != _HMAC_TAG_SIZE:
            raise BadSignature(f"HMAC-SHA256 tag must be {_HMAC_TAG_SIZE} bytes, got {len(tag)} (truncated tags are refused)")
        if not _compare_digest(mac, tag):
            raise BadSignature("HMAC-SHA256 tag does not match")


def hmac_sha256_canonical(value: Any, secret: Any, *, chunk_size: int = 65536) -> bytes:
    """HMAC-SHA256 under ``secret`` of ``canonicalize(value)``, streamed: the 32-byte tag.

    The canonical bytes go straight from the encoder into the keyed SHA-256 state
    in chunks of at most ``chunk_size``, never held whole: the same tag as
    ``hmac.digest(secret, canonicalize(value), "sha256")`` in O(chunk_size)
    memory.  Raises what ``HmacSigner(secret)`` and ``canonicalize_into`` raise.
    """
    inner, outer = _hmac_keyed_states(secret)
    inner = inner.copy()
    canonicalize_into(value, inner.update, chunk_size=chunk_size)
    outer = outer.copy()
    outer.update(inner.digest())
    return outer.digest()


# ---------------------------------------------------------------------------
# Ed25519 byte-level checks (RFC 8032 encodings; strict policy)
# ---------------------------------------------------------------------------

_ED25519_P = 2**255 - 19
_ED25519_L = 2**252 + 27742317777372353535851937790883648493
# y-coordinates (< p) of the 8 points of order 1, 2, 4 and 8: any point with one of
# these y is of small order whatever its sign bit (libsodium's blocklist, RFC 8032 §5.1.3).
_ED25519_SMALL_ORDER_Y = frozenset(
    (
        0,
        1,
        _ED25519_P - 1,
        0x05FC536D880238B13933C6D305ACDFD5F098EFF289F4C345B027B2C28F95E826,
        0x7A03AC9277FDC74EC6CC392CFA53202A0F67100D760B3CBA4FD84D3D706A17C7,
    )
)


def _ed25519_bytes(data: Any, what: str, error: type) -> bytes:
    if type(data) is bytes:
        return data
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    raise error(f"{what} must be bytes, got `{type(data).__name__}`")


def _ed25519_point_refusal(enc: bytes) -> int:
    """0 if a 32-byte point encoding is admitted, 1 if y >= p, 2 if x = 0 with the sign
    bit set, 3 if the point has small order."""
    y = int.from_bytes(enc, "little") & ((1 << 255) - 1)  # bit 255 is the sign of x
    if y >= _ED25519_P:
        return 1
    if y in _ED25519_SMALL_ORDER_Y:
        # y = 1 and y = p - 1 are the two points with x = 0, which has no negative (RFC 8032 §5.1.3 step 4).
        if enc[31] & 0x80 and (y == 1 or y == _ED25519_P - 1):
            return 2
        return 3
    return 0


def ed25519_check_public_key(raw: Any) -> None:
    """Refuse an Ed25519 public key encoding the strict policy does not admit.

    ``raw`` is the 32-byte RFC 8032 encoding (bytes-like).  Raises
    ``KeyFormatError`` for another type or length, ``WeakKey`` when y >= p
    (non-canonical) or the point has small order (order 1, 2, 4 or 8).
    """
    raw = _ed25519_bytes(raw, "Ed25519 public key", KeyFormatError)
    if len(raw) != 32:
        raise KeyFormatError(f"Ed25519 public key must be 32 bytes, got {len(raw)}")
    refusal = _ed25519_point_refusal(raw)
    if refusal == 1:
        raise WeakKey("Ed25519 public key is not canonically encoded (y >= p)")
    if refusal == 2:
        raise WeakKey("Ed25519 public key is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise WeakKey("Ed25519 public key has small order")


def ed25519_check_signature(sig: Any) -> None:
    """Refuse an Ed25519 signature the strict policy does not admit, before any arithmetic.

    ``sig`` is the raw 64 bytes R || S (bytes-like).  Raises
    ``MalformedSignature`` for a non-bytes value and ``BadSignature`` for a
    length other than 64, an R with y >= p, an R of small order, or S >= L
    (RFC 8032 §5.1.7: S must be in range; R must be the canonical encoding).
    """
    sig = _ed25519_bytes(sig, "Ed25519 signature", MalformedSignature)
    if len(sig) != 64:
        raise BadSignature(f"Ed25519 signature must be 64 bytes, got {len(sig)}")
    refusal = _ed25519_point_refusal(sig[:32])
    if refusal == 1:
        raise BadSignature("Ed25519 signature R is not canonically encoded (y >= p)")
    if refusal == 2:
        raise BadSignature("Ed25519 signature R is not canonically encoded (x = 0 with the sign bit set)")
    if refusal == 3:
        raise BadSignature("Ed25519 signature R has small order")
    if int.from_bytes(sig[32:], "little") >= _ED25519_L:
        raise BadSignature("Ed25519 signature S is not reduced (S >= L)")

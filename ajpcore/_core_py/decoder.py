"""Strict decoding (RFC 8259 + I-JSON, RFC 7493): twin of ``native/decoder.pxi``."""

from __future__ import annotations

import json as _json
import operator as _operator
import re
from itertools import accumulate as _accumulate, repeat as _repeat
from typing import Any, Dict, List, NoReturn, Tuple

from .._core_rules import (  # the texts and the big-int rule the native decoder shares
    MAX_DEPTH,
    _decode_big_int,
    _decode_error,
    _duplicate_reason,
    _noncharacter_reason,
    _Refusal,
    _surrogate_reason,
)
from .canonical_writer import _type_name


# ---------------------------------------------------------------------------
# Strict decoding (RFC 8259 + I-JSON, RFC 7493)
# ---------------------------------------------------------------------------


# The error position rule shared by both twins: the input is read left to right
# and the first problem met is reported.  Grammar errors sit at the first byte
# that cannot continue a valid document (or at the end of the data); a whole
# token that is refused (an ill-formed UTF-8 sequence, a lone surrogate escape,
# a number binary64 cannot hold, a repeated member name) is reported at its
# first byte, as soon as the token has been read.  A noncharacter is reported
# at its first byte, or at the backslash of its escape (the high one of a pair).

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
_RAW_TEXT = re.compile(rb'[^"\\\x00-\x1f]*')
# RFC 7493 §2.1 forbids noncharacters (Unicode §23.7): U+FDD0..U+FDEF and U+xFFFE/U+xFFFF
# of every plane, as well-formed UTF-8 (a match is always at a character start, since
# its first byte is a lead byte) ...
_RAW_NONCHARACTER = re.compile(rb"\xef\xb7[\x90-\xaf]|\xef\xbf[\xbe\xbf]|[\xf0-\xf4][\x8f\x9f\xaf\xbf]\xbf[\xbe\xbf]")
# ... and as escapes: \uFDD0..\uFDEF, \uFFFE, \uFFFF in any hex case (a pair, for the
# other planes, is sent to the strict parser anyway).  Used only to send a document to
# the strict parser, which decides.
_ESCAPED_NONCHARACTER = re.compile(rb"\\u(?:[fF][dD][dDeE][0-9a-fA-F]|[fF]{3}[eEfF])")
_WHITESPACE_RUN = re.compile(rb"[ \t\n\r]*")
_DIGIT_RUN = re.compile(rb"[0-9]*")


def _is_noncharacter(cp: int) -> bool:
    return 0xFDD0 <= cp <= 0xFDEF or cp & 0xFFFE == 0xFFFE


def _input_bytes(data: Any) -> bytes:
    # The object's own storage and size, whatever a subclass's __len__, __getitem__,
    # __bytes__, __buffer__ or encode say: the unbound base-type methods read it (as the
    # native twin does), and the type, not a __class__ attribute, picks the branch.
    t = type(data)
    if t is bytes:
        exact: bytes = data
        return exact
    if issubclass(t, bytes):
        return bytes.__getitem__(data, slice(None))
    if issubclass(t, str):
        # Positions are byte offsets of the UTF-8 form; a lone surrogate is kept
        # as its 3-byte (ill-formed) sequence so it is refused like one in bytes.
        return str.encode(data, "utf-8", "surrogatepass")
    if t is bytearray:
        return bytes(data)
    if issubclass(t, bytearray):
        return bytes(bytearray.__getitem__(data, slice(None)))
    if t is memoryview:
        return memoryview.tobytes(data)
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
        return _WHITESPACE_RUN.match(self.buf, i).end()  # type: ignore[union-attr]  # the run may be empty: match() never fails

    def parse(self) -> Any:
        buf, n = self.buf, self.n
        stack, keys = self.stack, self.keys
        if buf[:3] == _BOM:
            # RFC 8259 §8.1: implementations MUST NOT add a byte order mark.
            self.fail("byte order mark is not allowed", 0)
        expect = "expected a value"
        value: Any
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

    def parse_string(self, start: int) -> Tuple[str, int]:
        """Read the string whose opening quote is at ``start``; return it and the position after it."""
        buf, n = self.buf, self.n
        parts: List[str] = []
        i = start + 1
        while True:
            j = _RAW_TEXT.match(buf, i).end()  # type: ignore[union-attr]  # the run may be empty: match() never fails
            if j > i:
                try:
                    text = buf[i:j].decode("utf-8")
                except UnicodeDecodeError as exc:
                    # RFC 7493 §2.1: text MUST be valid UTF-8 (RFC 3629, no surrogates).
                    self.raw_noncharacter(i, i + exc.start)  # one before the bad byte comes first
                    self.fail("invalid UTF-8", i + exc.start)
                self.raw_noncharacter(i, j)
                parts.append(text)
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
            if _is_noncharacter(cp):
                self.fail(_noncharacter_reason(cp), j)
            parts.append(chr(cp))

    def raw_noncharacter(self, i: int, j: int) -> None:
        """Refuse the first noncharacter in the well-formed UTF-8 ``buf[i:j]`` (RFC 7493 §2.1)."""
        m = _RAW_NONCHARACTER.search(self.buf, i, j)
        if m is not None:
            self.fail(_noncharacter_reason(ord(m.group().decode("utf-8"))), m.start())

    def parse_number(self, start: int) -> Tuple[Any, int]:
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
            i = _DIGIT_RUN.match(buf, i).end()  # type: ignore[union-attr]  # the run may be empty: match() never fails
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
        return _DIGIT_RUN.match(self.buf, i).end()  # type: ignore[union-attr]  # the run may be empty: match() never fails


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


def _unique_pairs(pairs: List[Any]) -> Dict[str, Any]:
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
    return bool(max(_accumulate(map(_operator.sub, shape.translate(_DEPTH_STEP), _repeat(1)))) > limit)


def _decode_fast(buf: bytes, max_depth: int, allow_duplicate_keys: bool) -> Any:
    try:
        text = buf.decode("utf-8")
    except UnicodeDecodeError:
        raise _NotFast from None
    if b"\\u" in buf and (_SURROGATE_ESCAPE.search(buf) or _ESCAPED_NONCHARACTER.search(buf)):
        raise _NotFast  # json keeps lone surrogates and noncharacters; the reference parser refuses them
    if _RAW_NONCHARACTER.search(buf):
        raise _NotFast
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
    a byte order mark, invalid UTF-8, lone surrogate escapes, noncharacters raw
    or escaped (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF: RFC 7493 §2.1), NaN/Infinity,
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

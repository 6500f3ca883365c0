"""The native number reader and writer against ``float()`` / ``int()``, bit for bit (atheris / libFuzzer).

Reader (first byte even): with bit 3 set, the rest of the input builds a number text
field by field (``structured``: sign, integer part, fraction, exponent, each with a
long run of zeros a few bytes away); with bit 3 clear, the rest of the input, with runs
expanded (a byte 0xFF followed
by two bytes ``hi lo`` repeats the previous character ``2 * (hi * 256 + lo)`` times, so a
short input can stand for ``0.`` + 99,999 zeros + ``1e1000000``), is a number text ``t``.
Bits 1-2 of the first byte wrap it: ``t``, ``[t]``, ``{"n":t}``, ``[t,-t]`` (``-`` prefixed).
The twin under test decodes the document; it must agree with the pure twin (value or
error class, message, position), and when ``t`` is a JSON number the verdict must be the
oracle's: an integer literal is ``int(t)`` (beyond 2**53 the rule of ``decode``'s
docstring), any other number is ``float(t)`` with the same 64 bits, refused when
``float(t)`` is infinite.  The decoded value must canonicalize to the same bytes on both
twins.

Writer (first byte odd): the next 8 bytes are a binary64 (or, with bit 1 set, the rest
an int of any size).  ``canonicalize`` must give the pure twin's bytes or error, and the
text must read back (``float()``) as the same 64 bits (``-0.0`` is written ``0``); an int's
text must be the int, or (beyond 2**53) ECMAScript's spelling of the double the int is.
"""

import os
import re
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Bytes, errors, float_bits, fuzz_main, outcome, pure, same  # noqa: E402
from ajpcore import _core_rules as rules  # noqa: E402  (the big-int rule both twins share)

_NUMBER = re.compile(rb"-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?")
_MAX_EXPANDED = 1 << 17


def expand(data: bytes) -> bytes:
    out = bytearray()
    i = 0
    while i < len(data):
        b = data[i]
        if b == 0xFF and i + 2 < len(data):
            if out:
                n = 2 * ((data[i + 1] << 8) | data[i + 2])
                out += out[-1:] * min(n, _MAX_EXPANDED - len(out))
            i += 3
            continue
        out.append(b)
        i += 1
        if len(out) >= _MAX_EXPANDED:
            break
    return bytes(out)


def _digits(src: Bytes, n: int) -> bytes:
    return bytes(0x30 + src.byte() % 10 for _ in range(n))


def _run(src: Bytes) -> bytes:
    """A run of zeros: short (0-15), any length up to 131,070, or round (m * 10**k, 1 <= m <= 8,
    k <= 5, give or take 256): the lengths a hand-made document uses, where one part's size
    offsets another's."""
    b = src.byte()
    if b < 0x80:
        n = b & 15
    elif b < 0xC0:
        n = 2 * src.int_(2)
    else:
        n = max(0, (1 + (b & 7)) * 10 ** min((b >> 3) & 7, 5) + 2 * (src.byte() - 128))
    return b"0" * n


def structured(src: Bytes) -> bytes:
    """A number text built field by field: sign, integer part, fraction, exponent.

    Each part may hold a long run of zeros (``_run``) and the exponent up to 12 digits,
    so the families where the size of one part offsets another (``0.`` + zeros + ``1e``
    + a 7-digit exponent; ``1`` + zeros + ``e-`` + a big exponent) are a few fuzz bytes
    away.  Some bytes are not digits, so grammar errors occur too.
    """
    head = src.byte()
    out = bytearray(b"-" if head & 1 else b"")
    if head & 2:
        out += b"0"
    else:
        out += bytes([0x31 + src.byte() % 9]) + _run(src) + _digits(src, src.byte() % 20)
    if head & 4:
        out += b"." + _run(src) + _digits(src, src.byte() % 20)
    if head & 8:
        out += b"eE"[(head >> 4) & 1 : ((head >> 4) & 1) + 1]
        out += (b"", b"+", b"-", b"-")[(head >> 5) & 3]
        out += _run(src)[:40] + _digits(src, src.byte() % 13)
    if head & 0x80:  # a stray byte somewhere: grammar errors at every position
        at = src.int_(3) % (len(out) + 1)
        out[at:at] = bytes([src.byte()])
    return bytes(out[:_MAX_EXPANDED])


def wrap(flags: int, t: bytes) -> bytes:
    return (t, b"[" + t + b"]", b'{"n":' + t + b"}", b"[" + t + b",-" + t + b"]")[(flags >> 1) & 3]


def oracle(t: bytes):
    """("ok", value) for a JSON number text, ("refused",) when I-JSON refuses it."""
    m = _NUMBER.fullmatch(t)
    assert m is not None
    if m.group(1) is None and m.group(2) is None:
        if len(t) - t.startswith(b"-") <= 15:
            return ("ok", int(t))
        try:  # checks the digit count before int(): no 4300-digit limit reached
            return ("ok", rules._decode_big_int(t))
        except rules._Refusal:
            return ("refused",)
    x = float(t)
    if x - x != 0.0:
        return ("refused",)
    return ("ok", x)


def check_reader(raw: bytes, twin) -> None:
    t = structured(Bytes(raw[1:])) if raw[0] & 8 else expand(raw[1:])
    doc = wrap(raw[0], t)
    got = outcome(twin.decode, doc)
    same("decode (number)", raw, got, outcome(pure.decode, doc))
    if _NUMBER.fullmatch(t) is None or (raw[0] >> 1) & 3 == 3:
        if got[0] == "ok":
            v = twin.decode(doc)
            same("canonicalize (decoded number)", raw, outcome(twin.canonicalize, v), outcome(pure.canonicalize, v))
        return
    want = oracle(t)
    try:
        v = twin.decode(doc)
    except errors.DecodeError as exc:
        if want != ("refused",):
            raise AssertionError(f"number {t[:200]!r}... ({len(t)} bytes) refused ({exc}); float()/int() read {want[1]!r}")
        return
    if want == ("refused",):
        raise AssertionError(f"number {t[:200]!r}... ({len(t)} bytes) decoded to {v!r}; it is beyond binary64")
    if isinstance(v, list):
        v = v[0]
    elif isinstance(v, dict):
        v = v["n"]
    x = want[1]
    if type(v) is not type(x) or (float_bits(v) != float_bits(x) if isinstance(x, float) else v != x):
        raise AssertionError(f"number {t[:200]!r}... ({len(t)} bytes) decoded to {v!r}, float()/int() read {x!r}")
    same("canonicalize (decoded number)", raw, outcome(twin.canonicalize, v), outcome(pure.canonicalize, v))


def check_writer(raw: bytes, twin) -> None:
    if raw[0] & 2:
        n = int.from_bytes(raw[1:], "little")
        v = -n if raw[0] & 4 else n
    else:
        v = struct.unpack("<d", raw[1:9].ljust(8, b"\0"))[0]
    got = outcome(twin.canonicalize, v)
    same("canonicalize (number)", raw, got, outcome(pure.canonicalize, v))
    if got[0] != "ok":
        return
    text = twin.canonicalize(v)
    if isinstance(v, float):
        back = float(text)
        if float_bits(back) != float_bits(v) and not (v == 0.0 and text == b"0"):
            raise AssertionError(f"{v!r} written {text!r}, which reads back as {back!r}")
    elif int(float(text)) != v and not (text.lstrip(b"-").isdigit() and int(text) == v):
        # beyond 2**53 an int that is exactly a double is written as ECMAScript spells that double
        raise AssertionError(f"{v!r} written {text!r}")


def check(raw: bytes, twin) -> None:
    if not raw:
        return
    if raw[0] & 1:
        check_writer(raw, twin)
    else:
        check_reader(raw, twin)


if __name__ == "__main__":
    fuzz_main(check)

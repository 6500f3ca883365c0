"""``rfc3339_micros`` of the twin under test against the pure twin (atheris / libFuzzer).

The first input byte picks the text: bit 0 clear, the rest read as UTF-8 (lone
surrogates and undecodable bytes kept as surrogates, so any str can occur); bit 0
set, the rest fills the template ``YYYY-MM-DDTHH:MM:SS[.F+](Z|+hh:mm|-hh:mm)``
field by field (digit bytes are taken as they are, others map into the field's
range and just beyond it: month 13, day 32, hour 24, minute 60, second 60 and
61, offsets 24:00 ...), so the fuzzer spends its time on texts of the right shape.
Bits 1-3 pick the separators' spelling (``T``/``t``/space, ``Z``/``z``) and bit 4
a ``str`` subclass (which both twins must answer with None).  The twin must answer
exactly what the pure twin answers (microseconds or None) and never raise.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Bytes, fuzz_main, pure, same  # noqa: E402


class _StrSub(str):
    pass


def _field(src: Bytes, width: int, top: int) -> str:
    b = src.byte()
    if 0x30 <= b <= 0x39:  # a digit: the fuzzer writes the field itself, digit by digit
        digits = chr(b) + "".join(chr(0x30 + src.byte() % 10) for _ in range(width - 1))
        return digits
    return str(b % (top + 3)).zfill(width)[-width:]


def templated(flags: int, src: Bytes) -> str:
    sep = "Tt "[(flags >> 1) % 3]
    year = str(src.int_(2) % 10000).zfill(4)
    parts = [year, "-", _field(src, 2, 12), "-", _field(src, 2, 31), sep, _field(src, 2, 23), ":",
             _field(src, 2, 59), ":", _field(src, 2, 60)]
    frac = src.byte()
    if frac & 1:
        parts.append("." + "".join(chr(0x30 + src.byte() % 10) for _ in range(1 + (frac >> 1) % 12)))
    zone = src.byte() % 4
    if zone == 0:
        parts.append("Zz"[(flags >> 3) & 1])
    elif zone == 3:
        parts.append(src.take(src.byte() % 8).decode("latin-1"))
    else:
        parts.append("+-"[zone - 1] + _field(src, 2, 23) + ":" + _field(src, 2, 59))
    return "".join(parts)


def text_of(raw: bytes):
    flags = raw[0]
    if flags & 1:
        t = templated(flags, Bytes(raw[1:]))
    else:
        t = raw[1:].decode("utf-8", "surrogateescape")
    return _StrSub(t) if flags & 16 else t


def check(raw: bytes, twin) -> None:
    if not raw:
        return
    t = text_of(raw)
    same("rfc3339_micros", raw, twin.rfc3339_micros(t), pure.rfc3339_micros(t))
    if raw[0] & 32:  # not a str at all: None from both
        for other in (raw, bytearray(raw), None, len(raw)):
            same("rfc3339_micros(non-str)", raw, twin.rfc3339_micros(other), None)


if __name__ == "__main__":
    fuzz_main(check)

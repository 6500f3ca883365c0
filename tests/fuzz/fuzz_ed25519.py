"""The Ed25519 byte checks of the twin under test against the pure twin (atheris / libFuzzer).

``ed25519_check_public_key`` and ``ed25519_check_signature`` must raise the same error
class and message on both twins, or both accept.  The first input byte picks the
argument's type (bytes, bytearray, memoryview, a bytes subclass, str, int, None, a
non-contiguous memoryview) and, in its top bits, a value to plant: the rest of the input
is used as it is, or its first 32 bytes are replaced by an edge of the encoding (each of
the small-order y values, p - 1, p, p + 1, 2**255 - 1, with the sign bit set or not) and,
for signatures, bytes 32-63 by an edge of S (L - 1, L, L + 1, 2**256 - 1), each plus a
fuzz-chosen small offset, so that every refusal branch is reached.
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import fuzz_main, outcome, pure, same  # noqa: E402

_P = 2**255 - 19
_L = 2**252 + 27742317777372353535851937790883648493
_Y_EDGES = sorted(pure.ed25519_checks._ED25519_SMALL_ORDER_Y) + [_P - 1, _P, _P + 1, 2**255 - 1, 2]
_S_EDGES = (_L - 1, _L, _L + 1, 2**256 - 1, 0)


class _BytesSub(bytes):
    pass


def planted(raw: bytes) -> bytes:
    flags, data = raw[0], bytearray(raw[1:])
    if flags & 0x80 and len(data) >= 34:
        delta = data[0] - 128
        y = (_Y_EDGES[data[1] % len(_Y_EDGES)] + delta) % 2**255
        data[0:32] = (y | ((flags & 0x40) << 249)).to_bytes(32, "little")
        if len(data) >= 64:
            s = (_S_EDGES[data[32] % len(_S_EDGES)] + data[33] - 128) % 2**256
            data[32:64] = s.to_bytes(32, "little")
    return bytes(data)


def argument(raw: bytes):
    data = planted(raw)
    kind = raw[0] & 7
    if kind == 7:
        return memoryview(data + data)[::2]  # strided: not contiguous
    return (data, bytearray(data), memoryview(data), _BytesSub(data), data.decode("latin-1"),
            int.from_bytes(data, "little"), None)[kind]


def check(raw: bytes, twin) -> None:
    if not raw:
        return
    arg = argument(raw)
    for name in ("ed25519_check_public_key", "ed25519_check_signature"):
        same(name, raw, outcome(getattr(twin, name), arg), outcome(getattr(pure, name), arg))


if __name__ == "__main__":
    fuzz_main(check)

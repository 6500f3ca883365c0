"""Differential fuzzing of ``canonicalize`` and ``canonicalize_into`` (atheris / libFuzzer).

The first input byte picks where the value comes from: even, a Python value built from
the rest of the bytes (``_common.value``: every JSON kind, subclasses of dict/str/int,
tuples, lone surrogates, ints beyond 2**53, NaN/inf, non-str member names, values with no
JSON form, nesting past the 512 limit); odd, the rest decoded as a JSON document by
the pure twin (inputs it refuses are skipped).  Its top bits pick a ``chunk_size``.

The twin under test must give what the pure twin gives: the same bytes, or the same
error class, message and JSON path.  Both the whole-document ``canonicalize`` and
``canonicalize_into`` are checked; the chunks must join to the same bytes, add up to the
returned total and none may exceed ``chunk_size``.  An accepted output must be a fixed
point: decoding it (pure twin) and canonicalizing again gives the same bytes (unless it
holds a noncharacter, which canonicalize writes and I-JSON decode refuses).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import Bytes, errors, fuzz_main, outcome, pure, same, value  # noqa: E402

_CHUNKS = (1, 2, 3, 7, 64, 4096, 65536, 1 << 20)


def streamed(twin, v, chunk_size):
    chunks = []
    total = twin.canonicalize_into(v, chunks.append, chunk_size=chunk_size)
    if any(len(c) > chunk_size or not isinstance(c, bytes) for c in chunks):
        raise AssertionError(f"{twin.__name__}: a chunk over {chunk_size} bytes")
    out = b"".join(chunks)
    if total != len(out):
        raise AssertionError(f"{twin.__name__}: canonicalize_into returned {total}, wrote {len(out)} bytes")
    return out


def make_value(raw: bytes):
    """(value, chunk_size) for an input, or None when the input stands for no value."""
    mode = raw[0]
    chunk = _CHUNKS[(mode >> 5) & 7]
    if mode & 1:
        try:
            return pure.decode(raw[1:], allow_duplicate_keys=bool(mode & 2)), chunk
        except errors.DecodeError:
            return None
    return value(Bytes(raw[1:])), chunk


def check(raw: bytes, twin) -> None:
    if not raw:
        return
    made = make_value(raw)
    if made is None:
        return
    v, chunk = made
    want = outcome(pure.canonicalize, v)
    same("canonicalize", raw, outcome(twin.canonicalize, v), want)
    same(f"canonicalize_into(chunk_size={chunk})", raw, outcome(streamed, twin, v, chunk), want)
    if want[0] == "ok":
        out = pure.canonicalize(v)
        try:
            again = pure.decode(out)
        except errors.DecodeError:  # canonicalize writes noncharacters, which I-JSON decode refuses
            return
        same("canonical output as a fixed point", raw, twin.canonicalize(again), out)


if __name__ == "__main__":
    fuzz_main(check)

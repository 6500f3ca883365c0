"""Replay a fuzz corpus through the differential checks, without atheris (see README.md).

Every file goes through the decode check of ``fuzz_decode.py`` (native, pure and the
pure reference parser agree).  Every file whose bytes decode is then canonicalized by
both twins, whole and streamed in small chunks, and the bytes must agree.  Used to run
corpora against a native core built with a sanitizer.  Prints the counts; exits
non-zero (an AssertionError) on the first disagreement.
"""

import os
import sys
import types

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

try:
    import atheris  # noqa: F401  (only its import hook is used, and only when fuzzing)
except ImportError:  # replaying needs no instrumentation: a no-op stand-in
    import contextlib

    sys.modules["atheris"] = types.SimpleNamespace(instrument_imports=lambda **kwargs: contextlib.nullcontext())

import fuzz_decode  # noqa: E402

from ajpcore import _core_c as native  # noqa: E402
from ajpcore import _core_py as pure  # noqa: E402
from ajpcore.errors import AjpError  # noqa: E402


def canonical_outcome(twin, value):
    try:
        whole = twin.canonicalize(value)
        chunks = []
        total = twin.canonicalize_into(value, chunks.append, chunk_size=7)
        assert total == len(whole) and b"".join(chunks) == whole, (twin.__name__, value)
        return "ok", whole
    except AjpError as exc:
        return type(exc).__name__, str(exc)


def replay(data):
    """The decode differential, then (if the bytes decode) the canonicalize one; True if canonicalized."""
    fuzz_decode.test_one_input(data)
    for doc in (data, data[1:]):  # whole, and as fuzz_decode reads it (first byte: options)
        try:
            value = pure.decode(doc)
        except AjpError:
            continue
        native_result = canonical_outcome(native, value)
        if native_result != canonical_outcome(pure, value):
            raise AssertionError(f"twins encode differently: {doc!r}")
        return True
    return False


def main(folders):
    count = encoded = 0
    for folder in folders:
        for name in sorted(os.listdir(folder)):
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            with open(path, "rb") as f:
                encoded += replay(f.read())
            count += 1
    print(f"{count} inputs: native and pure twins agree ({encoded} also canonicalized by both)")


if __name__ == "__main__":
    main(sys.argv[1:])

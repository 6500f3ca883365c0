"""Coverage-guided differential fuzzing of ``decode`` (atheris / libFuzzer).

Every input is decoded by the twin under test, by the pure twin (json fast path plus
reference parser) and by the pure twin's reference parser alone; all three must agree on
the verdict, the value (compared through their repr, so -0.0 and 0.0 or 1 and 1.0 differ,
and member order counts) and, on refusal, the error class, message, position, line,
column and JSON pointer.  Anything else that escapes (RecursionError, UnicodeError,
SystemError, a crash, a sanitizer report) is a finding.

The first input byte picks the options: bits 0-2 ``max_depth`` (512, 3, 4, 8, 9, 16, 0, 1),
bit 3 ``allow_duplicate_keys``, bits 4-6 the input type: bytes, str (the bytes read as
UTF-8 with lone surrogates kept), bytearray, memoryview, a bytes subclass, a str
subclass.  The rest is the document.

Run (see README.md: build_native.py builds the instrumented core and env.sh):
    . /tmp/ajpcore-fuzz/env.sh
    python tests/fuzz/fuzz_decode.py -max_total_time=600 -rss_limit_mb=2048 WORK_CORPUS tests/fuzz/corpus/decode
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import fuzz_main, outcome, pure, same  # noqa: E402


class _BytesSub(bytes):
    pass


class _StrSub(str):
    pass


def reference(data, *, max_depth, allow_duplicate_keys):
    return pure._StrictParser(pure._input_bytes(data), max_depth, allow_duplicate_keys).parse()


def _as_str(data: bytes) -> str:
    return data.decode("utf-8", "surrogateescape").encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")


def document(raw: bytes):
    """The options and the document an input stands for (see the module docstring)."""
    flags, data = raw[0], raw[1:]
    max_depth = (512, 3, 4, 8, 9, 16, 0, 1)[flags & 7]
    allow = bool(flags & 8)
    kind = (flags >> 4) & 7
    if kind in (1, 5):
        data = _as_str(data) if kind == 1 else _StrSub(_as_str(data))
    elif kind == 2:
        data = bytearray(data)
    elif kind == 3:
        data = memoryview(data)
    elif kind == 4:
        data = _BytesSub(data)
    return data, max_depth, allow


def check(raw: bytes, twin) -> None:
    if not raw:
        return
    data, max_depth, allow = document(raw)
    got = outcome(twin.decode, data, max_depth=max_depth, allow_duplicate_keys=allow)
    want = outcome(pure.decode, data, max_depth=max_depth, allow_duplicate_keys=allow)
    same("decode: twin and pure twin", raw, got, want)
    same("decode: pure twin and its reference parser", raw, want,
         outcome(reference, data, max_depth=max_depth, allow_duplicate_keys=allow))


# The name the earlier harness (and replay_corpus.py) used: the native twin against both.
def test_one_input(raw: bytes) -> None:
    from _common import twins_for_fuzzing

    check(raw, twins_for_fuzzing())


if __name__ == "__main__":
    fuzz_main(check)

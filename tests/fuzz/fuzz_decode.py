"""Coverage-guided differential fuzzing of ``ajpcore.decode`` (atheris / libFuzzer).

Every input is decoded by the native twin, by the pure twin (json fast path
plus reference parser) and by the pure twin's reference parser alone; all three
must agree on the verdict, the value (compared through their repr, so -0.0 and
0.0 or 1 and 1.0 differ) and, on refusal, the error class, message, position,
line, column and JSON pointer.  Anything else that escapes (RecursionError,
UnicodeError, SystemError, a crash) is a finding.

Run (from the repository root, after building the native core in place):
    PYTHONPATH=$PWD python tests/fuzz/fuzz_decode.py -max_total_time=600 \
        -rss_limit_mb=2048 tests/fuzz/corpus
Coverage feedback comes from the instrumented pure twin, which mirrors the
native parser step for step; build the native core with a sanitizer
(``CFLAGS=-fsanitize=address``, run with libasan preloaded) to check its memory
safety at the same time.
"""

import sys

import atheris

with atheris.instrument_imports(include=["ajpcore"]):
    from ajpcore import _core_c as native
    from ajpcore import _core_py as pure
    from ajpcore.errors import DecodeError


def outcome(decode, data, max_depth, allow):
    try:
        return ("ok", repr(decode(data, max_depth=max_depth, allow_duplicate_keys=allow)))
    except DecodeError as exc:
        return ("error", type(exc).__name__, str(exc), exc.pos, exc.lineno, exc.colno, exc.pointer)


def reference(data, *, max_depth, allow_duplicate_keys):
    return pure._StrictParser(pure._input_bytes(data), max_depth, allow_duplicate_keys).parse()


def test_one_input(raw: bytes) -> None:
    if not raw:
        return
    # First byte: options; the rest: the document (sometimes as str).
    flags, data = raw[0], raw[1:]
    max_depth = (512, 3, 4, 8, 9, 16, 0, 1)[flags & 7]
    allow = bool(flags & 8)
    if flags & 16:
        data = data.decode("utf-8", "surrogateescape").encode("utf-8", "surrogatepass").decode(
            "utf-8", "surrogatepass"
        )
    elif flags & 32:
        data = bytearray(data)
    results = [outcome(f, data, max_depth, allow) for f in (native.decode, pure.decode, reference)]
    if not results[0] == results[1] == results[2]:
        raise AssertionError(f"twins disagree on {data!r}: {results}")


def main() -> None:
    atheris.Setup(sys.argv, test_one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()

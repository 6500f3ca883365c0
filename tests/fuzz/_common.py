"""What every harness of tests/fuzz shares: the twins, outcomes, and values built from fuzz bytes.

Each harness module (``fuzz_<target>.py``) defines ``check(data, twin)``: it runs
``twin`` (the native ``ajpcore._core_c`` or the pure ``ajpcore._core_py``) on the
input and compares the result with the pure twin, the reference, and with an
independent oracle where one exists (``float()``, ``int()``, the ``hmac`` module,
the reference parser).  A disagreement raises ``AssertionError``.  The fuzz entry
point (``main``) runs ``check(data, native)``; the normal test suite
(``test_corpus_replay.py``) replays every committed input through ``check`` with
each twin, so it needs neither atheris nor the instrumented build.

Coverage feedback: the native core, when built by ``build_native.py``, reports its own
edges through libFuzzer's ``-fsanitize=fuzzer-no-link`` counters.  The pure twin is
not instrumented by default (atheris's Python tracing costs about 7 times the
executions per second); ``AJPCORE_FUZZ_INSTRUMENT_PURE=1`` instruments it too.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from typing import Any, Callable, Optional, Tuple

_INSTRUMENT_PURE = os.environ.get("AJPCORE_FUZZ_INSTRUMENT_PURE", "").strip().lower() in {"1", "true", "yes", "on"}


def _import_core():
    ctx: Any = contextlib.nullcontext()
    if _INSTRUMENT_PURE and "ajpcore" not in sys.modules:
        import atheris

        ctx = atheris.instrument_imports(include=["ajpcore"])
    with ctx:
        import ajpcore  # noqa: F401  (installs the error-body mapping)
        from ajpcore import _core_py as pure_twin
        from ajpcore import errors as error_module

        try:
            from ajpcore import _core_c as native_twin
        except ImportError:
            native_twin = None
    return native_twin, pure_twin, error_module


native, pure, errors = _import_core()
"""``native`` is None where the native core is not built (a pure install)."""


def outcome(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Tuple[Any, ...]:
    """``("ok", repr(result))``, or the refusal: class, message and every location attribute."""
    try:
        return ("ok", repr(fn(*args, **kwargs)))
    except errors.AjpError as exc:
        where = tuple(getattr(exc, name, None) for name in ("pos", "lineno", "colno", "pointer", "path"))
        return ("error", type(exc).__name__, str(exc)) + where
    except (TypeError, ValueError) as exc:  # documented non-ajpcore refusals (input type, chunk_size)
        return ("error", type(exc).__name__, str(exc))


def same(what: str, data: Any, got: Any, want: Any) -> None:
    if got != want:
        raise AssertionError(f"{what} disagree on {data!r:.2000}:\n  twin:      {got!r:.2000}\n  reference: {want!r:.2000}")


def float_bits(x: float) -> bytes:
    return struct.pack("<d", x)


class Bytes:
    """A cursor over fuzz bytes that never fails: past the end every read is zero / empty."""

    def __init__(self, data: bytes) -> None:
        self.data = data
        self.i = 0

    def left(self) -> int:
        return len(self.data) - self.i

    def byte(self) -> int:
        if self.i >= len(self.data):
            return 0
        self.i += 1
        return self.data[self.i - 1]

    def take(self, n: int) -> bytes:
        out = self.data[self.i : self.i + n]
        self.i += len(out)
        return out

    def int_(self, nbytes: int) -> int:
        return int.from_bytes(self.take(nbytes), "little")

    def rest(self) -> bytes:
        return self.take(self.left())


_SPECIAL_FLOATS = (0.0, -0.0, 5e-324, -5e-324, 1.7976931348623157e308, 2.0**53, 2.0**53 + 2, 1e21, 1e-7,
                   9.999999999999999e20, 1e-6, 0.1, float("inf"), float("nan"))
_SPECIAL_INTS = (0, -1, 2**53 - 1, 2**53, 2**53 + 1, -(2**53) - 1, 2**63, -(2**63) - 1, 2**64, 2**1024,
                 2**1023 * 3, 10**21, 123456789012345683968, True, False)


class _StrSub(str):
    pass


class _DictSub(dict):
    pass


class _IntSub(int):
    pass


def text(src: Bytes, limit: int = 24) -> str:
    """A short str: ASCII, Latin-1, BMP, astral, lone surrogates, escapes-needing controls."""
    n = src.byte() % (limit + 1)
    kind = src.byte() & 7
    raw = src.take(n * (1 if kind < 3 else 2 if kind < 6 else 3))
    if kind < 2:
        return raw.decode("latin-1")
    if kind == 2:
        return raw.decode("ascii", "replace")
    if kind < 6:
        return "".join(chr(int.from_bytes(raw[i : i + 2], "little")) for i in range(0, len(raw) - 1, 2))
    return "".join(chr(int.from_bytes(raw[i : i + 3], "little") % 0x110000) for i in range(0, len(raw) - 2, 3))


def value(src: Bytes, depth: int = 0) -> Any:
    """A Python value for canonicalize: JSON kinds, their subclasses, tuples, and things with no JSON form."""
    tag = src.byte()
    kind = tag % 23
    if kind == 0 or src.left() == 0:
        return None
    if kind == 1:
        return bool(tag & 0x80)
    if kind in (2, 3):
        return struct.unpack("<d", src.take(8).ljust(8, b"\0"))[0]
    if kind == 4:
        return _SPECIAL_FLOATS[src.byte() % len(_SPECIAL_FLOATS)] * (-1 if tag & 0x80 else 1)
    if kind in (5, 6):
        n = src.int_(1 + src.byte() % 9)
        return -n if tag & 0x80 else n
    if kind == 7:
        return _SPECIAL_INTS[src.byte() % len(_SPECIAL_INTS)]
    if kind in (8, 9, 10):
        return text(src)
    if kind == 11:
        return _StrSub(text(src))
    if kind == 12:
        return _IntSub(src.int_(8))
    if kind == 13:  # no JSON form: the refusal must name the same type at the same path
        return (b"x", bytearray(b"y"), 1j, object(), {1, 2}, frozenset(), range(2), memoryview(b""))[src.byte() % 8]
    if kind == 14 and depth < 600:  # deep nesting: the depth limit (512) must refuse at the same path
        inner: Any = None
        for _ in range(src.byte() * 3):
            inner = [inner]
        return inner
    if depth > 40:
        return None
    n = src.byte() % 9
    if kind in (15, 16, 17):
        return [value(src, depth + 1) for _ in range(n)]
    if kind == 18:
        return tuple(value(src, depth + 1) for _ in range(n))
    d: Any = _DictSub() if kind == 19 else {}
    for _ in range(n):
        k: Any = text(src, 12)
        if kind == 20 and src.byte() & 1:  # a non-str name is refused
            k = (1, 2.5, None, b"k", (1,))[src.byte() % 5]
        d[k] = value(src, depth + 1)
    return d


def twins_for_fuzzing() -> Any:
    if native is None:
        raise SystemExit("the native core is not built: run tests/fuzz/build_native.py and its env.sh first")
    return native


def fuzz_main(check: Callable[[bytes, Any], None], argv: Optional[list] = None) -> None:
    """libFuzzer's entry: ``check(data, native)`` for every input."""
    import atheris

    twin = twins_for_fuzzing()
    argv = list(sys.argv if argv is None else argv)
    if any(a.startswith(("-merge=", "-fork=", "-jobs=", "-workers=")) for a in argv[1:]):
        # These modes re-run argv[0] as a program: hand libFuzzer a shim that runs this
        # interpreter on the harness (the harness file itself is not executable).
        import stat
        import tempfile

        fd, shim = tempfile.mkstemp(prefix="ajpcore-fuzz-", suffix=".sh")
        os.write(fd, f'#!/bin/sh\nexec "{sys.executable}" "{os.path.abspath(argv[0])}" "$@"\n'.encode())
        os.close(fd)
        os.chmod(shim, stat.S_IRWXU)
        argv[0] = shim

    def one_input(data: bytes) -> None:
        check(data, twin)

    atheris.Setup(argv, one_input)
    atheris.Fuzz()

"""The core survives any caller (issue 8 §2), on both twins, with the same typed errors.

Re-entrant ``write`` callbacks, small thread stacks, bytes/str subclasses that lie
about their contents, legacy not-ready strings, the application's collector state,
and the HMAC secret cache under concurrent reconfiguration.
"""

import ctypes
import gc
import hmac
import os
import platform
import sys
import textwrap
import threading

import pytest

from ajpcore import EncodeError
from conftest import load_twin, run_python

CPYTHON = platform.python_implementation() == "CPython"


def outcome(fn, *args, **kwargs):
    try:
        return "ok", fn(*args, **kwargs)
    except Exception as exc:  # the class and text are what the twins must agree on
        return type(exc), str(exc)


# -- the C stack and re-entrant callbacks --------------------------------------


def test_write_callback_may_reenter_once(impl):
    inner = []

    def write(chunk):
        inner.append(impl.canonicalize({"chunk": len(chunk)}))

    assert impl.canonicalize_into([1, "x", {"b": 2, "a": 1}], write) == len(b'[1,"x",{"a":1,"b":2}]')
    assert inner == [b'{"chunk":21}']


def test_endless_reentry_from_write_is_an_encode_error(twins):
    """A write callback that re-enters canonicalize_into without end meets the recursion
    limit: EncodeError at `$` on both twins, never a crash or a bare RecursionError."""
    results = []
    for twin in twins:

        def write(chunk, twin=twin):
            twin.canonicalize_into([chunk.decode()], write)

        results.append(outcome(twin.canonicalize_into, ["start"], write))
    assert results[0][0] is EncodeError
    assert results[0][1].startswith("Recursion limit reached in the encoder") and results[0][1].endswith(" - at `$`")
    assert results[0] == results[1]


def test_recursion_error_of_write_itself_is_an_encode_error(twins):
    def write(chunk):
        raise RecursionError("from the sink")

    native, pure = (outcome(twin.canonicalize_into, {"a": [1, 2]}, write) for twin in twins)
    assert native == pure
    assert native[0] is EncodeError


@pytest.mark.parametrize("shape", ["list", "dict"])
@pytest.mark.parametrize("twin", ["c", "py"])
def test_deepest_value_on_a_128_kib_thread_stack(twin, shape):
    """musl's default thread stack is 128 KiB: the deepest value canonicalize accepts fits.

    Under AddressSanitizer (tests/fuzz/README.md) the redzones enlarge every C frame,
    so the thread gets 1 MiB there: the replay checks memory safety, not frame sizes.
    """
    load_twin(twin)
    stack_kib = 1024 if "libasan" in os.environ.get("LD_PRELOAD", "") else 128
    code = textwrap.dedent(
        f"""
        import threading
        from ajpcore import _core_{twin} as core
        v = 1
        for _ in range(core.MAX_DEPTH):
            v = [v] if {shape!r} == "list" else {{"k": v}}
        out = []
        def run():
            out.append(core.canonicalize(v))
            chunks = []
            out.append(core.canonicalize_into(v, chunks.append, chunk_size=7))
            out.append(b"".join(chunks))
        threading.stack_size({stack_kib} * 1024)
        t = threading.Thread(target=run)
        t.start()
        t.join()
        assert out[0] == out[2] and out[1] == len(out[0]), out
        print(len(out[0]))
        """
    )
    done = run_python("-c", code)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    width = {"list": 2, "dict": 6}[shape]  # '[' + ']' or '{"k":' + '}'
    assert int(done.stdout) == 512 * width + 1


# -- objects that lie about their contents -------------------------------------


class LyingBytes(bytes):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        return 0x5B

    def __iter__(self):
        return iter(b"[[[")

    def __bytes__(self):
        return b"[1,"

    def __buffer__(self, flags):  # Python 3.12+ (PEP 688) consults it for memoryview()
        return memoryview(b"{")


class ShortBytes(bytes):
    def __len__(self):
        return 1


class LyingBytearray(bytearray):
    def __len__(self):
        return 1 << 20

    def __getitem__(self, i):
        return 0x5B

    def __bytes__(self):
        return b"[1,"

    def __buffer__(self, flags):
        return memoryview(b"{")


class LyingStr(str):
    def __len__(self):
        return 1 << 20

    def encode(self, *args, **kwargs):
        return b"[1,"

    def __str__(self):
        return "{"


HOSTILE_INPUTS = [
    (LyingBytes, b'{"a":[1,2.5,"x"]}'),
    (ShortBytes, b'{"a":[1,2.5,"x"]}'),
    (LyingBytearray, b'{"a":[1,2.5,"x"]}'),
    (LyingStr, '{"a":[1,2.5,"\u00e9"]}'),
    (LyingBytes, b'{"a":[1,2.5,"x"]} x'),  # refused at the real byte 18
    (LyingStr, '{"a":[1,2.5,"\u00e9"]} x'),
    (LyingBytes, b""),
]


@pytest.mark.parametrize("kind, text", HOSTILE_INPUTS, ids=lambda x: x.__name__ if isinstance(x, type) else repr(x))
def test_decode_reads_the_real_contents(twins, kind, text):
    """decode reads an object's own storage and size, whatever __len__, __getitem__,
    __bytes__, __buffer__ or encode say: the same answer as for the plain object."""
    native, pure = twins
    expected = outcome(pure.decode, (bytes if isinstance(text, bytes) else str)(text))
    assert outcome(native.decode, kind(text)) == expected
    assert outcome(pure.decode, kind(text)) == expected


def test_refusal_position_is_within_the_real_bytes(twins):
    for twin in twins:
        kind, message = outcome(twin.decode, LyingBytes(b'[1,2] x'))
        assert message.endswith("(byte 6)"), (twin.__name__, kind, message)


# -- legacy not-ready strings (CPython <= 3.11) ----------------------------------


def legacy_str(text):
    """A str built the deprecated way, PyUnicode_FromUnicode(NULL, n), then filled
    through its wchar_t buffer: not ready until something readies it."""
    api = ctypes.pythonapi
    api.PyUnicode_FromUnicode.restype = ctypes.py_object
    api.PyUnicode_FromUnicode.argtypes = [ctypes.c_void_p, ctypes.c_ssize_t]
    api.PyUnicode_AsUnicode.restype = ctypes.c_void_p
    api.PyUnicode_AsUnicode.argtypes = [ctypes.py_object]
    units = text.encode("utf-32-le" if ctypes.sizeof(ctypes.c_wchar) == 4 else "utf-16-le")
    s = api.PyUnicode_FromUnicode(None, len(units) // ctypes.sizeof(ctypes.c_wchar))
    ctypes.memmove(api.PyUnicode_AsUnicode(s), units, len(units))
    return s


needs_legacy_strings = pytest.mark.skipif(
    not CPYTHON or sys.version_info >= (3, 12) or not hasattr(ctypes, "pythonapi"),
    reason="PyUnicode_FromUnicode(NULL, n) exists only on CPython <= 3.11 (removed by PEP 623)",
)


@needs_legacy_strings
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("text", ["plain", "caf\u00e9 \u2603", "\U0001f600 astral", ""])
def test_not_ready_strings_are_read(impl, text):
    expected = impl.canonicalize({text: [text], "k": text})
    assert impl.canonicalize({legacy_str(text): [legacy_str(text)], "k": legacy_str(text)}) == expected
    chunks = []
    impl.canonicalize_into({"k": legacy_str(text), legacy_str(text): [legacy_str(text)]}, chunks.append)
    assert b"".join(chunks) == expected
    assert impl.hmac_sha256_canonical({"k": legacy_str(text)}, b"key") == hmac.digest(
        b"key", impl.canonicalize({"k": text}), "sha256"
    )


# -- the application's collector state -----------------------------------------


def large_document():
    record = b'{"id":12345,"tags":["a","b",{"x":[1.5,null,true]}],"name":"caf\xc3\xa9"}'
    doc = b"[" + b",".join([record] * 400) + b"]"
    assert len(doc) >= 16 * 1024
    return doc


@pytest.mark.parametrize("enabled", [False, True])
def test_decode_leaves_the_collector_state_alone(impl, enabled):
    doc = large_document()
    was = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        value = impl.decode(doc)
        assert gc.isenabled() is enabled
        with pytest.raises(ValueError):
            impl.decode(doc[:-1])
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if was else gc.disable()
    assert len(value) == 400 and value[7]["tags"][2]["x"] == [1.5, None, True]


def test_collector_never_switched_off_while_decoding(impl):
    """Another thread never sees the collector off because a large document is decoded.

    Integer literals beyond 2**53 make the parser call Python code, where the
    interpreter may switch to the polling thread mid-document.
    """
    record = b'{"n":123456789012345680000,"t":[1,2,{"u":[]}]}'
    doc = b"[" + b",".join([record] * 600) + b"]"
    assert len(doc) >= 16 * 1024 and gc.isenabled()
    seen_off = []
    done = threading.Event()

    def poll():
        while not done.is_set():
            if not gc.isenabled():
                seen_off.append(True)

    poller = threading.Thread(target=poll)
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    poller.start()
    try:
        for _ in range(30):
            assert impl.decode(doc)[599]["n"] == 123456789012345683968
    finally:
        done.set()
        poller.join()
        sys.setswitchinterval(switch)
    assert seen_off == []


def test_decoded_containers_are_tracked_by_the_collector(impl):
    """Every list of a large decoded document is visible to the collector afterwards,
    so a cycle the application adds later is still collected."""
    value = impl.decode(large_document())
    lists = [value] + [r["tags"] for r in value] + [r["tags"][2]["x"] for r in value]
    assert all(gc.is_tracked(x) for x in lists)
    value[0]["tags"].append(value)  # a cycle through the decoded tree
    del value, lists
    gc.collect()


def test_duplicate_members_dropping_containers_in_a_large_document(impl):
    big = b"[" + b",".join([b'{"v":[1,2,3]}'] * 2000) + b"]"
    doc = b'{"a":' + big + b',"a":[[0]],"b":' + big + b"}"
    value = impl.decode(doc, allow_duplicate_keys=True)
    assert value["a"] == [[0]] and len(value["b"]) == 2000 and gc.is_tracked(value["b"][5]["v"])


# -- the HMAC secret cache ------------------------------------------------------


@pytest.mark.parametrize("twin", ["c", "py"])
def test_str_and_bytes_secrets_never_compared(twin):
    """"k" and b"k" hash alike; under ``python -bb`` comparing them would raise BytesWarning."""
    load_twin(twin)
    code = textwrap.dedent(
        f"""
        import hmac
        from ajpcore import _core_{twin} as core
        core.clear_hmac_cache()
        for secret in ["k", b"k", "k", b"k", bytearray(b"k"), memoryview(b"k")]:
            s = core.HmacSigner(secret)
            s.update(b"m")
            assert s.finalize() == hmac.digest(b"k", b"m", "sha256")
            assert core.hmac_sha256_canonical([1], secret) == hmac.digest(b"k", b"[1]", "sha256")
        print("ok")
        """
    )
    done = run_python("-bb", "-c", code)
    assert done.returncode == 0 and done.stdout.strip() == b"ok", done.stderr.decode()[-2000:]


def test_cache_size_is_read_once_per_operation(impl, monkeypatch):
    """HMAC_CACHE_SIZE changing between two reads (as another thread may change it)
    must not empty the cache into StopIteration: each operation reads it once."""

    class SizeThatResets(int):
        def __le__(self, other):  # the eviction loop's `len(cache) >= size`
            monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", 0)  # the switch, mid-operation
            return int.__le__(self, other)

    impl.clear_hmac_cache()
    for i in range(5):
        monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", 2)
        for filler in (b"fill-a", b"fill-b"):
            impl.HmacSigner(filler)
        monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", SizeThatResets(2))
        secret = b"resets-%d" % i
        assert impl.hmac_sha256_canonical([i], secret) == hmac.digest(secret, b"[%d]" % i, "sha256")
        monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", SizeThatResets(2))
        signer = impl.HmacSigner(secret.decode() + "-str")
        signer.update(b"m")
        assert signer.finalize() == hmac.digest(secret + b"-str", b"m", "sha256")


def test_cache_size_flipped_while_threads_sign(impl, monkeypatch):
    """Setting HMAC_CACHE_SIZE (to 0, say) while other threads sign is safe: no
    StopIteration, no wrong tag.  Bounded by iterations, not by time."""
    impl.clear_hmac_cache()
    monkeypatch.setattr(impl, "HMAC_CACHE_SIZE", 2)
    secrets = [b"s%d" % i for i in range(6)] + ["t%d" % i for i in range(6)]
    expected = {s: hmac.digest(s if isinstance(s, bytes) else s.encode(), b"[1]", "sha256") for s in secrets}
    failures = []
    start = threading.Barrier(5)

    def sign(offset):
        start.wait()
        try:
            for i in range(3000):
                s = secrets[(i + offset) % len(secrets)]
                if impl.hmac_sha256_canonical([1], s) != expected[s]:
                    failures.append(("wrong tag", s))
        except Exception as exc:
            failures.append(repr(exc))

    def flip():
        start.wait()
        for i in range(6000):
            impl.HMAC_CACHE_SIZE = (0, 1, 2)[i % 3]
            if i % 500 == 0:
                impl.clear_hmac_cache()

    threads = [threading.Thread(target=sign, args=(k * 3,)) for k in range(4)] + [threading.Thread(target=flip)]
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, so the races get their chance
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(switch)
    assert failures == []


# -- Python code that runs in the middle of canonicalize ---------------------------


def test_metaclass_qualname_that_frees_the_value(twins):
    # The message for an unsupported type reads type(v).__qualname__, which a metaclass
    # may compute (here through __getattribute__): it replaces every container and name
    # of the value being written with new ones, frees the old ones and collects.  The
    # native writer holds no references of its own to the members of an unbounded write
    # until such code may run; the error and its path (the names of the replaced
    # objects) must come out intact, the same on both twins.
    def name(text):
        return "".join(list(text))  # a new str object each time, never a shared constant

    def build():
        return [{name("k%d" % i): "v" * 40, name("inner-name"): Opaque()} for i in range(3)]

    class Meta(type):
        def __getattribute__(cls, attr):
            if attr != "__qualname__":
                return super().__getattribute__(attr)
            old = value.pop("outer-name")
            value[name("outer-name")] = build()
            for record in old:
                record.clear()
            old.clear()
            old = record = None
            gc.collect()
            return "Opaque"

    class Opaque(metaclass=Meta):
        pass

    results = []
    for twin in twins:
        value = {name("outer-name"): build()}
        results.append(outcome(twin.canonicalize, value))
    assert results[0] == results[1]
    assert results[0] == (EncodeError, 'Unsupported type `Opaque` - at `$["outer-name"][0]["inner-name"]`')


def test_big_ints_while_another_thread_mutates_the_value(impl):
    # An int beyond 2**53 is formatted by Python code, during which the interpreter may
    # switch threads: one that mutates the value meanwhile must not crash the writer
    # (it reads the members it snapshotted, holding references from then on).
    value = {"k" + str(i): {"n": 2**64, "s": "x" * i, "list": [2**63, {"m": 2**60}]} for i in range(200)}
    stop = threading.Event()

    def mutate():
        while not stop.is_set():
            for i in range(200):
                value["k" + str(i)] = {"n": 2**64, "t": "y" * i, "list": [2**62]}
                value.pop("k" + str((i * 7) % 200), None)

    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    thread = threading.Thread(target=mutate)
    thread.start()
    try:
        for _ in range(20):
            try:
                out = impl.canonicalize(value)
            except (EncodeError, RuntimeError):  # "dictionary changed size during iteration" (pure twin)
                continue
            assert out.startswith(b"{") and out.endswith(b"}")
    finally:
        stop.set()
        thread.join()
        sys.setswitchinterval(old)

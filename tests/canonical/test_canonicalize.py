"""RFC 8785 canonical JSON: conformance vectors, ECMAScript numbers, hostile values, streaming."""

import gzip
import json
import struct
from pathlib import Path

import pytest

from ajpcore import EncodeError

JCS = Path(__file__).parent.parent / "vectors" / "jcs"
JCS_CASES = sorted(p.name for p in (JCS / "input").glob("*.json"))


@pytest.mark.parametrize("name", JCS_CASES)
def test_cyberphone_vectors(impl, name):
    value = json.loads((JCS / "input" / name).read_text(encoding="utf-8"))
    expected = (JCS / "output" / name).read_bytes()
    assert expected == bytes.fromhex((JCS / "outhex" / name.replace(".json", ".txt")).read_text().replace(" ", "").replace("\n", ""))
    assert impl.canonicalize(value) == expected


def test_es6_number_sample(impl):
    lines = gzip.open(JCS / "es6numbers_100k.txt.gz", "rt", encoding="ascii").read().splitlines()
    assert len(lines) == 100_000
    failures = []
    for line in lines:
        bits, expected = line.split(",")
        x = struct.unpack(">d", bytes.fromhex(bits.zfill(16)))[0]
        got = impl.canonicalize(x).decode()
        if got != expected:
            failures.append((bits, expected, got))
    assert failures == []


def test_es6_sample_starts_with_the_static_values():
    static = [int(line, 16) for line in (JCS / "es6_static_u64.txt").read_text().split()]
    lines = gzip.open(JCS / "es6numbers_100k.txt.gz", "rt", encoding="ascii").read().splitlines()
    assert len(static) == 168
    assert [int(line.split(",")[0], 16) for line in lines[:168]] == static


@pytest.mark.parametrize(
    "value, expected",
    [
        (5.0, b"5"),
        (-0.0, b"0"),
        (1e-7, b"1e-7"),
        (1e16, b"10000000000000000"),
        (1e21, b"1e+21"),
        (123e-20, b"1.23e-18"),
        (0.000001, b"0.000001"),
        (2**64, b"18446744073709552000"),
        (123456789012345680000, b"123456789012345680000"),
        (2**53 - 1, b"9007199254740991"),
        (-(2**53), b"-9007199254740992"),
        (True, b"true"),
        ((1, "a", None), b'[1,"a",null]'),
        ({"\U0001F600": 1, "\ufb33": 2}, '{"\U0001F600":1,"\ufb33":2}'.encode()),  # UTF-16 order, not code points
        ("\x00\x1f\x7f\"\\\u2028", b'"\\u0000\\u001f\x7f\\"\\\\\xe2\x80\xa8"'),
    ],
)
def test_known_forms(impl, value, expected):
    assert impl.canonicalize(value) == expected


def _deep(n, make):
    v = []
    for _ in range(n):
        v = make(v)
    return v


@pytest.mark.parametrize(
    "value, message",
    [
        ({"a": [1, float("nan")]}, "Non-finite float `nan` has no JSON form - at `$.a[1]`"),
        ([float("inf")], "Non-finite float `inf` has no JSON form - at `$[0]`"),
        ({"k": {"x y": float("-inf")}}, 'Non-finite float `-inf` has no JSON form - at `$.k["x y"]`'),
        ({"a": "\ud800"}, "String contains a lone surrogate - at `$.a`"),
        ({"\udc00": 1}, 'String contains a lone surrogate - at `$["\\udc00"]`'),
        ({1: 2}, "Object key must be `str`, got `int` - at `$`"),
        ({"a": {b"x": 1}}, "Object key must be `str`, got `bytes` - at `$.a`"),
        ([1, {2, 3}], "Unsupported type `set` - at `$[1]`"),
        ({"a": b"bytes"}, "Unsupported type `bytes` - at `$.a`"),
        (2**64 + 1, "Integer is not exactly representable as binary64 (would change through a JavaScript peer) - at `$`"),
        (2**53 + 1, "Integer is not exactly representable as binary64 (would change through a JavaScript peer) - at `$`"),
        ([10**400], "Integer out of range for binary64 - at `$[0]`"),
    ],
)
def test_hostile_values(impl, value, message):
    with pytest.raises(EncodeError) as info:
        impl.canonicalize(value)
    assert str(info.value) == message
    assert isinstance(info.value, TypeError)


@pytest.mark.parametrize("make", [lambda v: [v], lambda v: {"a": v}, lambda v: (v,)], ids=["list", "dict", "tuple"])
def test_million_deep_nesting_is_an_encode_error(impl, make):
    value = _deep(10**6, make)
    with pytest.raises(EncodeError, match=f"Nesting deeper than {impl.MAX_DEPTH}"):
        impl.canonicalize(value)
    with pytest.raises(EncodeError, match="Nesting deeper"):
        impl.canonicalize_into(value, lambda chunk: None)


def test_depth_limit_is_exact(impl):
    # _deep(n) holds n + 1 nested lists (the innermost one is empty).
    limit = impl.MAX_DEPTH
    assert impl.canonicalize(_deep(limit - 1, lambda v: [v])) == b"[" * limit + b"]" * limit
    with pytest.raises(EncodeError):
        impl.canonicalize(_deep(limit, lambda v: [v]))


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 7, 64, 65536])
def test_canonicalize_into_chunks(impl, chunk_size):
    value = {"s": "é" * 300 + "\U0001F680" * 100, "n": list(range(200)), "f": [0.1, 1e300], "q": '"\\\n' * 50}
    chunks = []
    total = impl.canonicalize_into(value, chunks.append, chunk_size=chunk_size)
    assert all(isinstance(c, bytes) and 0 < len(c) <= chunk_size for c in chunks)
    assert b"".join(chunks) == impl.canonicalize(value)
    assert total == len(b"".join(chunks))


def test_canonicalize_into_with_a_huge_chunk_size_buffers_little(impl):
    import tracemalloc

    value = {"a": list(range(1000)), "b": "x" * 100_000}
    chunks = []
    tracemalloc.start()
    try:
        impl.canonicalize_into(value, chunks.append, chunk_size=2**62)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert b"".join(chunks) == impl.canonicalize(value)
    assert peak < 4 * 1024 * 1024  # neither twin reserves chunk_size up front


@pytest.mark.parametrize("chunk_size", [0, -1, 1.5, "8", True])
def test_canonicalize_into_rejects_bad_chunk_size(impl, chunk_size):
    with pytest.raises(ValueError):
        impl.canonicalize_into({}, lambda c: None, chunk_size=chunk_size)


def _streaming_peak(impl, value, chunk_size):
    """Bytes allocated at the peak of ``canonicalize_into`` beyond what existed before (tracemalloc)."""
    import hashlib
    import tracemalloc

    digest = hashlib.sha256()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        total = impl.canonicalize_into(value, digest.update, chunk_size=chunk_size)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return total, peak - before


def _mixed8m():
    import data  # bench/data.py: the bench's own fixture, so the bound is checked where it is measured

    return data.value("mixed8m")


@pytest.mark.parametrize(
    "make",
    [
        pytest.param(_mixed8m, id="mixed8m", marks=pytest.mark.slow),  # ~10 s for the pure twin under tracemalloc
        pytest.param(lambda: {"s": 'é\n"\U0001F600x' * 1_000_000}, id="huge-escaped-string"),
        pytest.param(lambda: ["a" * 5_000_000], id="huge-ascii-string"),
    ],
)
def test_canonicalize_into_memory_stays_within_a_chunk(impl, make):
    value = make()  # built outside the measured region
    chunk_size = 65536
    total, extra = _streaming_peak(impl, value, chunk_size)
    assert total > 4_000_000
    assert extra <= chunk_size + 64 * 1024, f"{extra} bytes beyond the input"


def test_cycles_are_refused_at_the_depth_limit(twins):
    a = []
    a.append(a)
    d = {}
    d["self"] = [d]
    for value in (a, d):
        messages = set()
        for impl in twins:
            with pytest.raises(EncodeError, match=f"^Nesting deeper than {impl.MAX_DEPTH} - at") as info:
                impl.canonicalize(value)
            messages.add(str(info.value))
        assert len(messages) == 1


def test_ints_around_internal_digit_and_word_sizes(twins):
    # The native twin reads one-digit ints (|n| < 2**30) directly and others through
    # PyLong_AsLongLongAndOverflow: check both sides of each edge against the pure twin.
    edges = [0, 1, -1]
    for bits in (15, 30, 31, 32, 53, 60, 63, 64, 65):
        for delta in (-2, -1, 0, 1, 2):
            edges += [2**bits + delta, -(2**bits) - delta]
    native, pure = twins
    for n in edges:
        got = native.canonicalize(n) if abs(n) < 2**53 or int(float(n)) == n else None
        if got is not None:
            assert got == pure.canonicalize(n)
            if abs(n) < 2**53:
                assert got == str(n).encode()
        else:
            with pytest.raises(EncodeError):
                native.canonicalize(n)
            with pytest.raises(EncodeError):
                pure.canonicalize(n)

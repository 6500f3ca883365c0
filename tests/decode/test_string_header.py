"""Every str decode makes is laid out exactly as the str CPython makes of the same text.

The native decoder makes its strs itself on CPython 3.10-3.13 (native/decoder_str.h
``ajpcore_str_new``: the compact PEP 393 header written in a straight line instead of through
``PyUnicode_New``).  A header that differs in one bit (the kind, the ascii or interned flag,
the wstr or utf8 fields, the terminating NUL) would give wrong text, a wrong hash, a crash on
a later ``encode`` or a leak, so the test compares memory: the object's bytes, header and
characters with the NUL after them, against a str CPython makes of the same text, except what
legitimately differs between two live strs (the reference count, a hash computed or not, the
address a 3.10-3.11 wstr pointer holds when it points at the str's own characters).

The strs come from every place decode makes one: values and member names, short (the scalar
steps) and long (the avx2 and sse2 steps, per the SIMD level the run forces), plain, escaped
and of each kind (ASCII, Latin-1, UCS-2, UCS-4).  Both twins are driven; the pure twin's strs
are CPython's own, so on it the test checks the comparison itself.
"""

import ctypes
import json
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ajpcore.strategies import json_characters

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

PTR = ctypes.sizeof(ctypes.c_void_p)
REFCNT = slice(0, PTR)  # ob_refcnt
HASH = slice(3 * PTR, 4 * PTR)  # after ob_refcnt, ob_type, length
# The state bitfield's named bits (interned, kind, compact, ascii, ready or statically_allocated)
# fill its first byte; its other 24 bits are unnamed and the padding after it unused: CPython
# leaves both as the allocator gave them.
UNUSED = slice(4 * PTR + 1, 5 * PTR)
# 3.10-3.11: PyASCIIObject ends with wstr, after length, hash and the 4-byte state (padded).
WSTR = slice(5 * PTR, 6 * PTR) if sys.version_info < (3, 12) else None


def kind(text):
    """Bytes per character of the compact str of ``text`` (PEP 393)."""
    top = max(map(ord, text), default=0)
    return 1 if top < 0x100 else 2 if top < 0x10000 else 4


def memory(s):
    """The object's bytes, with what may differ between two equal fresh strs masked."""
    size = sys.getsizeof(s)
    raw = bytearray(ctypes.string_at(id(s), size))
    header = size - (len(s) + 1) * kind(s)
    raw[REFCNT] = bytes(PTR)
    raw[HASH] = bytes(PTR)
    raw[UNUSED] = bytes(PTR - 1)
    if WSTR is not None:
        wstr = int.from_bytes(raw[WSTR], sys.byteorder)
        if wstr == id(s) + header:  # the characters shared as wchar_t (4-byte kind on Linux)
            raw[WSTR] = b"\xff" * PTR
    return bytes(raw), header


def fresh(text):
    """A new str of ``text`` made by CPython (PyUnicode_New underneath), never a cached one."""
    made = text.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass")
    assert made is not text or len(text) < 2
    return made


def strings(value):
    """Every str in a decoded value: names and values, depth first."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for name, item in value.items():
            yield name
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


def assert_laid_out_like_cpython(s):
    assert type(s) is str
    if len(s) == 0:
        assert s is "".join([])  # the empty str is CPython's singleton, as PyUnicode_New gives
        return
    if len(s) == 1:
        # CPython hands out a cached str for one Latin-1 character (on 3.12+ with its UTF-8 kept,
        # which getsizeof counts): a fresh one of the decoder's is compared by size and text.
        if s is not chr(ord(s)):
            assert sys.getsizeof(s) == sys.getsizeof(fresh(s + s)) - kind(s)
        assert s.encode("utf-8", "surrogatepass").decode("utf-8", "surrogatepass") == s
        return
    reference = fresh(s)
    got, header = memory(s)
    want, want_header = memory(reference)
    assert header == want_header
    assert got[:header] == want[:header], f"header of {s!r}"
    assert got[header:] == want[header:], f"characters of {s!r}"
    assert s.isascii() == reference.isascii()
    assert hash(s) == hash(reference)
    # The strs behave as CPython's after use: UTF-8 cached, compared, sliced, interned lookups.
    assert s.encode("utf-8", "surrogatepass") == reference.encode("utf-8", "surrogatepass")
    assert s[1:] == reference[1:] and s + s == reference + reference
    assert sys.getsizeof(s) == sys.getsizeof(reference)


def check(impl, text, ensure_ascii):
    doc = json.dumps({text: text, "k" + text: [text, {"v": text}]}, ensure_ascii=ensure_ascii).encode()
    decoded = impl.decode(doc)
    seen = list(strings(decoded))
    assert text in seen
    for s in seen:
        assert_laid_out_like_cpython(s)


SAMPLES = {
    "ascii": "ab",
    "latin1": "caf\u00e9",
    "ucs2": "\u4e2d\u6587",
    "ucs4": "\U0001f600x",
    "mixed": "a\u00e9\u4e2d\U0001f600",
    "escape": "tab\there\n\"q\"",
    "nul": "a\u0000b",
    "bmp-top": "\uffef\ud7ff",
}


@pytest.mark.parametrize("name", sorted(SAMPLES))
@pytest.mark.parametrize("length", [1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 200])
@pytest.mark.parametrize("ensure_ascii", [False, True])
def test_each_kind_and_length(impl, name, length, ensure_ascii):
    text = (SAMPLES[name] * length)[:length]
    check(impl, text, ensure_ascii)


TEXT = st.text(json_characters, max_size=80)  # what I-JSON admits: no surrogates, no noncharacters


@SETTINGS
@given(text=TEXT, ensure_ascii=st.booleans())
@example(text="", ensure_ascii=False)
@example(text="\U0010fffd" * 40, ensure_ascii=False)
@example(text="\u00ff" * 33, ensure_ascii=False)
def test_any_text(impl, text, ensure_ascii):
    check(impl, text, ensure_ascii)


def test_many_strings_survive_the_collector(impl):
    """A large document's strs (the decoder's block path) stay intact through a collection."""
    import gc

    texts = [("x\u00e9\u4e2d\U0001f600" * (i % 9 + 1))[: i % 37 + 2] for i in range(2000)]
    decoded = impl.decode(json.dumps({"a": texts, "b": {t: i for i, t in enumerate(texts)}}).encode())
    gc.collect()
    assert decoded["a"] == texts and list(decoded["b"]) == list(dict.fromkeys(texts))
    for s in decoded["a"][:200]:
        assert_laid_out_like_cpython(s)

"""The decoder's strings give exactly what the reference reader gives, at every SIMD level.

At the avx2 level (``native/decoder_utf8.h``) a string is checked 32 bytes a step from its
first byte that is not plain ASCII (UTF-8 by nibble lookups, a net for noncharacters, runs
of three-byte characters ten at a time), and written by blocks squeezed by shuffles (Latin-1
pairs, UCS-2 in 16-bit lanes, UCS-4 in 32-bit lanes, CJK runs ten at a time); anything it
does not accept goes to the scalar code of the other levels, which decides the error and its
position.  Member names that are not plain ASCII go through the text-name cache.

These tests drive each of those paths across its edges on both twins (the pure twin is the
reference): every kind of character at every place of a block and across block ends, every
refusal at every offset of a string, strings that end where the document ends, long strings
of each kind.  The nox job ``simd`` runs them at AJPCORE_SIMD=avx2, =sse2 and on a
-DAJPCORE_NO_SIMD build.
"""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import DecodeError

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])


def outcome(impl, data, **kwargs):
    """Value (as repr, with its type) or error (message, position, pointer) of one decode."""
    try:
        value = impl.decode(data, **kwargs)
        return "ok", repr(value), [type(v).__name__ for v in (value if isinstance(value, list) else [value])]
    except DecodeError as exc:
        return "error", str(exc), exc.pos, exc.pointer


def agree(twins, data, **kwargs):
    native, pure = twins
    got = outcome(native, data, **kwargs)
    assert got == outcome(pure, data, **kwargs), data
    return got


# One character of each UTF-8 length and lead class the paths tell apart: ASCII, Latin-1
# (C2, C3), two bytes above Latin-1 (C4..DF), three bytes (E1..EC: CJK runs; E0, ED, EE, EF:
# outside them; EF around the noncharacters), four bytes (F0, F1..F3, F4).
CHARACTERS = [
    "a", "\u007f", "\u0080", "\u00e9", "\u00ff", "\u0100", "\u07ff",
    "\u0800", "\u0fff", "\u1000", "\u4e2d", "\u9fa5", "\ucfff", "\ud000", "\ud7ff", "\ue000",
    "\uefff", "\uf000", "\ufdcf", "\ufdf0", "\ufeff", "\uff0c", "\uffe5", "\ufffd",
    "\U00010000", "\U0001f600", "\U0001fffd", "\U0002fffd", "\U00040000", "\U000ffffd", "\U00100000", "\U0010fffd",
]
# What surrounds it: one filler per kind of text, so the block has that kind's shape.
FILLERS = ["x", "\u00e9", "\u4e2d", "\U0001f600", "ab\u00e9", "\u4e2d\u3002"]


@pytest.mark.parametrize("filler", FILLERS)
def test_every_character_class_at_every_place_of_a_block(twins, filler):
    # The character at byte offsets 0..70 of the text after the first non-ASCII byte, and
    # after an ASCII prefix of 0..33 bytes (where the 32-byte steps start).
    native, pure = twins
    for prefix in (0, 1, 15, 16, 31, 32, 33):
        for count in range(0, 72 // len(filler.encode()) + 1):
            body = "p" * prefix + filler * count
            for ch in CHARACTERS:
                text = body + ch + filler * 3
                doc = json.dumps([text, text + "\"", ch + body], ensure_ascii=False).encode()
                assert native.decode(doc) == pure.decode(doc) == [text, text + "\"", ch + body]


@pytest.mark.parametrize("run", ["\u4e2d", "\u3001", "\ud55c", "\u1000\uc000"])
def test_three_byte_runs_broken_at_every_character(twins, run):
    # Runs of three-byte characters are read ten at a time; every other character class at
    # every place of such a run (0..70 characters in), and runs of every length 0..70.
    native, pure = twins
    for length in range(0, 71):
        text = (run * 71)[:length]
        doc = json.dumps([text, "q" + text, text + "\u00e9"], ensure_ascii=False).encode()
        assert native.decode(doc) == pure.decode(doc)
        for ch in CHARACTERS[::3] + ["\n", "\"", "\\", "\uff0c", "\ud7ff", "\u0800"]:
            broken = text + ch + (run * 12)
            doc = json.dumps({"k": broken}, ensure_ascii=False).encode()
            assert native.decode(doc) == pure.decode(doc) == {"k": broken}


# Ill-formed UTF-8 and the other refusals of a string body, as bytes.
BAD = [
    b"\x80", b"\xbf", b"\xc0\x80", b"\xc1\xbf", b"\xc2", b"\xc2\x41", b"\xc3\xc3", b"\xdf\xc0",
    b"\xe0\x80\x80", b"\xe0\x9f\xbf", b"\xe1\x80", b"\xe1\x41\x80", b"\xe4\xb8", b"\xe4\xb8\x41",
    b"\xed\xa0\x80", b"\xed\xbf\xbf", b"\xef\xbf", b"\xf0\x80\x80\x80", b"\xf0\x8f\xbf\xbf",
    b"\xf0\x9f\x98", b"\xf0\x9f\x98\x41", b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xf8", b"\xff",
    b"\xef\xb7\x90", b"\xef\xb7\xaf", b"\xef\xbf\xbe", b"\xef\xbf\xbf", b"\xf0\x9f\xbf\xbe",
    b"\xf4\x8f\xbf\xbf", b"\xf3\xbf\xbf\xbe",  # noncharacters
    b"\x00", b"\x1f", b"\n", b"\t",  # control characters
    b"\\x", b"\\u12", b"\\u12G4", b"\\", b"\\ud800", b"\\udc00", b"\\ud800\\u0041", b"\\ud800x",
    b"\\ufdd0", b"\\uffff", b"\\ud83f\\udffe",  # escapes: bad, lone surrogates, noncharacters
]
FILLER_BYTES = [b"x", "\u00e9".encode(), "\u4e2d".encode(), "\U0001f600".encode()]


def _prefix(filler, size):
    """``size`` bytes of whole characters: the filler, then ASCII up to the size."""
    return filler * (size // len(filler)) + b"y" * (size % len(filler))


@pytest.mark.parametrize("bad", BAD, ids=lambda b: b.hex() or "empty")
def test_every_refusal_at_every_offset(twins, bad):
    for filler in FILLER_BYTES:
        for offset in range(0, 71):
            prefix = _prefix(filler, offset)
            agree(twins, b'["' + prefix + bad + filler * 12 + b'"]')
            agree(twins, b'{"' + prefix + bad + b'": 1}')
            agree(twins, b'"' + prefix + bad)  # the document ends in it
            agree(twins, b'"' + prefix + bad + b'"')


@pytest.mark.parametrize("filler", ["", "x" * 5, "\u00e9", "\u0100", "\u4e2d", "\U0001f600", "a\\nb", "\\u00e9"])
def test_strings_that_end_where_the_document_ends(twins, filler):
    # A top-level string: its last block, and every load, end at the buffer's end; cut at every
    # byte it is refused where the reader refuses it.
    for length in range(0, 70):
        body = (filler * 70)[:length] if filler else ""
        raw = json.dumps(json.loads('"' + body + '"'), ensure_ascii=False).encode() if "\\" not in filler else b'"' + body.encode() + b'"'
        agree(twins, raw)
        for cut in range(1, len(raw)):
            agree(twins, raw[:cut])


@pytest.mark.parametrize("kind", ["ascii", "latin1", "ucs2", "cjk", "emoji", "mixed"])
def test_long_strings_of_each_kind(twins, kind):
    pieces = {
        "ascii": ["word ", "x", "\n", "\"q\""],
        "latin1": ["r\u00e9sum\u00e9 ", "na\u00efve", "\u00ff", " "],
        "ucs2": ["\u0100", "\u20ac", "\u4e2d\u6587", "\uff0c", "a"],
        "cjk": ["\u4e2d\u6587\u5b57", "\u3002", "\u3001", "\uff0c"],
        "emoji": ["\U0001f600", "\U0001f44d\U0001f3fd", " hi ", "\U0001f469\u200d\U0001f4bb"],
        "mixed": ["a", "\u00e9", "\u4e2d", "\U0001f600", "\\", "\n", "\u0800", "\ufffd"],
    }[kind]
    text = "".join(pieces[(k * 7 + k // 3) % len(pieces)] for k in range(6000))
    for ensure_ascii in (False, True):
        doc = json.dumps({"t": text, "n": [text[:40], text[:4000]]}, ensure_ascii=ensure_ascii).encode()
        got = agree(twins, doc)
        assert got[0] == "ok"


@SETTINGS
@given(st.lists(st.sampled_from(CHARACTERS + ["\n", "\"", "\\", "/", "\u0001"]), max_size=90), st.integers(0, 40), st.booleans())
def test_random_text(twins, chars, prefix, ensure_ascii):
    text = "p" * prefix + "".join(chars)
    doc = json.dumps([text, {text: text}], ensure_ascii=ensure_ascii).encode()
    assert agree(twins, doc)[0] == "ok"


@SETTINGS
@given(st.binary(max_size=80), st.sampled_from(FILLER_BYTES), st.integers(0, 40))
def test_random_bytes_in_a_string(twins, junk, filler, count):
    agree(twins, b'["' + filler * count + junk + b'"]')
    agree(twins, b'"' + filler * count + junk)


# -- member names that are not plain ASCII: the text-name cache --------------------------------

NAME_PIECES = ["\u00e9", "\u4e2d", "\U0001f600", "a", "\u0100"]


@pytest.mark.parametrize("piece", NAME_PIECES)
def test_text_names_of_every_length(twins, piece):
    # Names of 1..70 bytes (the cache keeps names of at most 64), found again in later objects
    # of the same document, duplicated, escaped and broken.
    native, pure = twins
    for count in range(1, 70 // len(piece.encode()) + 2):
        name = (piece * count)[:count] + "\u00e9"
        records = [{name: k, name + "x": [k], "\u00e9" + name: None} for k in range(3)]
        doc = json.dumps(records, ensure_ascii=False).encode()
        assert native.decode(doc) == pure.decode(doc) == records
        raw = name.encode()
        agree(twins, b'[{"' + raw + b'": 1}, {"' + raw + b'": 2, "' + raw + b'": 3}]')
        agree(twins, b'[{"' + raw + b'": 1}, {"' + raw + b'": 2, "' + raw + b'": 3}]', allow_duplicate_keys=True)
        escaped = json.dumps(name).encode()[1:-1]
        agree(twins, b'[{"' + raw + b'": 1, "' + escaped + b'": 2}]')
        agree(twins, b'[{"' + raw + b'": 1}, {"' + raw[:-1] + b'": 2}]')  # a cut lead: refused
        agree(twins, b'{"' + raw)  # the document ends in the name


def test_a_cached_name_is_not_taken_for_different_bytes(twins):
    # The cache confirms every hit byte for byte: names that share a hash slot or a prefix, or
    # differ in one byte anywhere, are each their own str.
    native, pure = twins
    base = "\u4e2d\u6587\u00e9" * 4
    names = [base[:k] + ch + base[k + 1:] for k in range(len(base)) for ch in ("\u00e8", "a", "\u4e2e")]
    doc = json.dumps([{name: i} for i, name in enumerate(names)] * 2, ensure_ascii=False).encode()
    assert native.decode(doc) == pure.decode(doc)
    for name in names[:6]:
        bad = name.encode() + b"\xff"
        agree(twins, b'[{"' + name.encode() + b'": 1}, {"' + bad + b'": 2}]')

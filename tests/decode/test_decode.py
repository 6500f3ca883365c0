"""Strict I-JSON decoding: values, refusals, error locations, input types, CLI; on both twins."""

import gzip
import math
import pickle
import random
import re
import struct
import unicodedata

import pytest

from ajpcore import AjpError, DecodeError
from conftest import run_python
from vector_files import vector_path

MESSAGE = re.compile(r"JSON is malformed: (.+) \(byte (\d+)\)")


def refusal(impl, data, **kwargs):
    with pytest.raises(DecodeError) as info:
        impl.decode(data, **kwargs)
    exc = info.value
    match = MESSAGE.fullmatch(str(exc))
    assert match, str(exc)
    assert match.group(1) == exc.reason
    assert int(match.group(2)) == exc.pos
    return exc


# -- values ------------------------------------------------------------------


def test_every_json_type(impl):
    doc = b' {"a" : [ 1 , -2.5e-3, true, false, null, "x\\n\\u00e9\\ud83d\\ude00\xc3\xa9" ], "b": {}, "c": []} '
    assert impl.decode(doc) == {"a": [1, -0.0025, True, False, None, "x\n\u00e9\U0001f600\u00e9"], "b": {}, "c": []}


def test_member_order_is_document_order(impl):
    assert list(impl.decode(b'{"b":1,"a":2,"c":3}')) == ["b", "a", "c"]


@pytest.mark.parametrize(
    "text",
    [
        b"9007199254740991",
        b"-9007199254740991",
        b"9007199254740992",  # 2**53: is its own double
        b"-9007199254740992",
        b"18446744073709551616",  # 2**64: is its own double
        b"18446744073709552000",  # what ECMAScript writes for 2**64
        b"123456789012345680000",  # ECMAScript's spelling of its double
        b"100000000000000000000",
    ],
)
def test_large_ints_admitted_by_the_canonical_int_rule(impl, text):
    value = impl.decode(text)
    # The int is the exact value of the double every I-JSON peer reads from the literal.
    assert type(value) is int
    assert value == int(float(text))
    # canonicalize admits the literal itself and writes the decoded value as the same double.
    assert impl.canonicalize(int(text)) == impl.canonicalize(value) == impl.canonicalize(float(text))


def test_ecmascript_spelling_decodes_to_the_double():
    import ajpcore

    assert ajpcore.decode(b"123456789012345680000") == 123456789012345683968
    assert ajpcore.decode(b"18446744073709552000") == 2**64
    assert ajpcore.decode(b"-9007199254740992") == -(2**53)


@pytest.mark.parametrize(
    "text",
    [b"9007199254740993", b"-9007199254740993", b"18446744073709551617", b"123456789012345678901"],
)
def test_ints_a_javascript_peer_would_change_are_refused(impl, text):
    exc = refusal(impl, b"[" + text + b"]")
    assert exc.pos == 1
    assert "binary64" in exc.reason
    with pytest.raises(AjpError):  # canonicalize refuses the same ints
        impl.canonicalize(int(text))


@pytest.mark.parametrize(
    "text",
    [
        b"1e400",
        b"-1e400",
        b"1.8e308",
        b"1E+0309",
        b"1" + b"0" * 400,
        b"-" + b"9" * 5000,
        b"1" * 400 + b".5",
        b"9" * 308 + b".9e+1",  # a short exponent on a long mantissa
        b"1" + b"0" * 210 + b".0e99",
        b"0." + b"0" * 500 + b"1e810",
    ],
)
def test_numbers_beyond_binary64_are_refused(impl, text):
    exc = refusal(impl, b" " + text)
    assert exc.pos == 1
    assert exc.reason == "number out of range for binary64"


def test_canonical_documents_round_trip(impl):
    for doc in [
        b"9007199254740992",
        b"18446744073709552000",
        b"123456789012345680000",
        b"1e+21",
        b"1e-7",
        b"5",
        b'{"a":[1,2.5,"\\u001f\xe2\x82\xac"],"b":null}',
    ]:
        assert impl.canonicalize(impl.decode(doc)) == doc


def test_long_numbers_that_fit_are_read_as_float(impl):
    for text in [b"1" + b"0" * 210 + b".0e97", b"0." + b"0" * 500 + b"1e300", b"9" * 300 + b".5", b"1.5e-999"]:
        got = impl.decode(text)
        assert type(got) is float and got == float(text)


def _float_texts():
    """Decimal literals that exercise every way of reading a binary64: exact small ones, 17-digit and
    shortest forms of random doubles, random significands of up to 19 digits over the whole exponent
    range, more than 19 digits, exact halfway points (round half to even), subnormals, the edges."""
    rng = random.Random(20261130)
    texts = [
        "0.1", "1e23", "8.98846567431158e307", "9007199254740993.0", "9007199254740992.5", "9007199254740991.5",
        "2.2250738585072011e-308", "2.2250738585072012e-308", "2.2250738585072014e-308",
        "4.9406564584124654e-324", "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-323",
        "1.7976931348623157e308", "1.7976931348623158e308", "179769313486231570000e288", "0.0000000000000000000001e22",
        "123456789012345678901234567890e-10", "1.00000000000000011102230246251565404236316680908203125",
        "1.00000000000000011102230246251565404236316680908203124", "7.2057594037927933e16", "-0.0e0", "0E-999",
    ]
    for _ in range(4000):
        x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        if math.isfinite(x):
            texts += [repr(x) if ("e" in repr(x) or "." in repr(x)) else repr(x) + ".0", "%.17e" % x, "%.*e" % (rng.randint(0, 16), x)]
        digits = rng.randint(1, 10 ** rng.randint(1, 19))
        texts += ["%de%d" % (digits, rng.randint(-345, 310)), "-%d.%de%d" % (rng.randint(0, 999), digits, rng.randint(-40, 40))]
    for _ in range(1500):
        # The exact midpoint between two adjacent doubles with a short decimal form: m * 2**-k.
        k = rng.randint(1, 60)
        x = rng.getrandbits(54) | 1
        texts.append("%de-%d" % (x * 5**k, k))
    return [t for t in texts if math.isfinite(float(t))]  # beyond binary64 is a refusal (tested apart)


def test_numbers_read_as_float_of_their_text_bit_for_bit(impl):
    texts = _float_texts()
    got = impl.decode(("[" + ",".join(texts) + "]").encode())
    for text, value in zip(texts, got):
        expected = float(text)
        assert type(value) is float and struct.pack("<d", value) == struct.pack("<d", expected), text


def test_minus_zero_and_fractions(impl):
    # "-0" is the integer zero (as json and orjson read it; RFC 8785 writes both as 0).
    assert type(impl.decode(b"-0")) is int and impl.decode(b"-0") == 0
    neg = impl.decode(b"-0.0")
    assert type(neg) is float and neg == 0.0 and math.copysign(1.0, neg) == -1.0
    assert type(impl.decode(b"1.0")) is float
    assert type(impl.decode(b"1e2")) is float and impl.decode(b"1e2") == 100.0
    assert impl.decode(b"1e-400") == 0.0  # underflow rounds, as float() does


def test_es6_number_vectors_decode_to_their_double(impl):
    """Every canonical number text of the 100k JCS sample reads as its double and writes back as itself."""
    with gzip.open(vector_path("jcs", "es6numbers_100k.txt.gz"), "rt", encoding="ascii") as f:
        lines = f.read().splitlines()
    failures = []
    for line in lines:
        bits, text = line.split(",")
        x = struct.unpack(">d", bytes.fromhex(bits.zfill(16)))[0]
        got = impl.decode(text)
        # Integer texts stay ints, with the exact value of the double x.
        kind = int if text.lstrip("-").isdigit() else float
        if type(got) is not kind or got != x or impl.canonicalize(got).decode() != text:
            failures.append((bits, text, got))
    assert failures == []


def test_allow_duplicate_keys_keeps_the_last(impl):
    assert impl.decode(b'{"a":1,"b":2,"a":3}', allow_duplicate_keys=True) == {"a": 3, "b": 2}
    assert list(impl.decode(b'{"a":1,"b":2,"a":3}', allow_duplicate_keys=True)) == ["a", "b"]


# -- refusals and their locations ---------------------------------------------


@pytest.mark.parametrize(
    "doc, pos, reason",
    [
        (b"", 0, "unexpected end of data"),
        (b"   ", 3, "unexpected end of data"),
        (b"[1,2", 4, "unexpected end of data"),
        (b"[1,]", 3, "expected a value"),
        (b"[", 1, "unexpected end of data"),
        (b"[}", 1, "expected a value or `]`"),
        (b"[1 2]", 3, "expected `,` or `]`"),
        (b'{"a" 1}', 5, "expected `:`"),
        (b'{"a":1,}', 7, "expected a member name"),
        (b"{1:2}", 1, "expected a member name or `}`"),
        (b'{"a":1 "b":2}', 7, "expected `,` or `}`"),
        (b"[1] x", 4, "trailing data after the document"),
        (b"1 2", 2, "trailing data after the document"),
        (b"NaN", 0, "expected a value"),
        (b"[Infinity]", 1, "expected a value or `]`"),
        (b"[-Infinity]", 2, "invalid number"),
        (b"tru", 3, "unexpected end of data"),
        (b"trUe", 2, "invalid literal"),
        (b"[01]", 2, "leading zeros are not allowed"),
        (b"-012", 2, "leading zeros are not allowed"),
        (b"1.", 2, "unexpected end of data"),
        (b"[1.e5]", 3, "invalid number"),
        (b"[1e+]", 4, "invalid number"),
        (b"[.5]", 1, "expected a value or `]`"),
        (b"[1,+1]", 3, "expected a value"),
        (b"[-]", 2, "invalid number"),
        (b'"a\tb"', 2, "control character in string"),
        (b'"a\\x"', 3, "invalid escape"),
        (b'"\\u12G4"', 5, "invalid escape"),
        (b'"abc', 4, "unexpected end of data"),
        (b'["\\ud800"]', 2, "lone surrogate escape `\\ud800`"),
        (b'["x\\uDC00"]', 3, "lone surrogate escape `\\uDC00`"),
        (b'["\\ud800\\u0041"]', 2, "lone surrogate escape `\\ud800`"),
        (b'["\\ud800\\ud800"]', 2, "lone surrogate escape `\\ud800`"),
        (b"\xef\xbb\xbf{}", 0, "byte order mark is not allowed"),
        (b'{"a":1,"\\u0061":2}', 7, "duplicate member name `a`"),
        (b'{"a\\/":1,"a/":2}', 9, "duplicate member name `a/`"),
    ],
)
def test_refusal_reason_and_position(impl, doc, pos, reason):
    exc = refusal(impl, doc)
    assert (exc.reason, exc.pos) == (reason, pos)


@pytest.mark.parametrize(
    "sequence",
    [
        b"\xc0\x80",  # overlong NUL
        b"\xc1\xbf",  # overlong
        b"\xe0\x80\x80",  # overlong 3-byte
        b"\xf0\x80\x80\x80",  # overlong 4-byte
        b"\xed\xa0\x80",  # UTF-8 encoded high surrogate
        b"\xed\xbf\xbf",  # UTF-8 encoded low surrogate
        b"\xf4\x90\x80\x80",  # beyond U+10FFFF
        b"\xf5\x80\x80\x80",
        b"\xe3\x81",  # truncated
        b"\x80",  # lone continuation byte
        b"\xff",
        b"\xfc\x80\x80\x80\x80\x80",  # old 6-byte form
    ],
)
def test_invalid_utf8_is_refused_at_its_first_byte(impl, sequence):
    exc = refusal(impl, b'["ok", "ab' + sequence + b'"]')
    assert (exc.reason, exc.pos) == ("invalid UTF-8", 10)


def test_valid_utf8_at_the_edges_is_accepted(impl):
    # U+FFFF and U+10FFFF are the last code points of their ranges but noncharacters (refused
    # below); U+FFFD and U+10FFFD are the last characters I-JSON admits there.
    for ch in ["\x7f", "\x80", "\u07ff", "\u0800", "\ud7ff", "\ue000", "\ufffd", "\U00010000", "\U0010fffd"]:
        assert impl.decode(('"' + ch + '"').encode()) == ch


def test_surrogate_pair_escapes_make_one_character(impl):
    assert impl.decode(b'"\\ud834\\udd1e"') == "\U0001d11e"
    assert impl.decode(b'"\\uDBFF\\uDFFD"') == "\U0010fffd"


# RFC 7493 §2.1: I-JSON text MUST NOT include noncharacters: U+FDD0..U+FDEF (32) and the last
# two code points of each of the 17 planes (34), 66 in all.
NONCHARACTERS = [*range(0xFDD0, 0xFDF0), *(plane << 16 | low for plane in range(17) for low in (0xFFFE, 0xFFFF))]


def _escaped(cp):
    if cp < 0x10000:
        return "\\u%04X" % cp
    cp -= 0x10000
    return "\\u%04x\\u%04x" % (0xD800 + (cp >> 10), 0xDC00 + (cp & 0x3FF))


def test_noncharacters_are_66():
    assert len(NONCHARACTERS) == 66
    assert all(unicodedata.category(chr(cp)) == "Cn" for cp in NONCHARACTERS)


@pytest.mark.parametrize("cp", NONCHARACTERS, ids=lambda cp: "U+%04X" % cp)
def test_noncharacters_are_refused_raw_and_escaped_in_values_and_names(impl, cp):
    reason = "noncharacter `U+%04X` is not allowed" % cp
    raw = chr(cp).encode("utf-8")
    escaped = _escaped(cp).encode("ascii")
    for body in (raw, escaped):
        # A value (after ASCII, Latin-1 and astral text, so the string is not plain), and a member name.
        exc = refusal(impl, b'{"k": ["ok", "ab\xc3\xa9\xf0\x9f\x98\x80' + body + b'z"]}')
        assert (exc.reason, exc.pos, exc.pointer) == (reason, 22, "/k")
        exc = refusal(impl, b'{"a": 1, "x\\n' + body + b'": 2}')
        assert (exc.reason, exc.pos, exc.pointer) == (reason, 13, "")
        exc = refusal(impl, b'"' + body + b'"')
        assert (exc.reason, exc.pos) == (reason, 1)
    # A str document is read as its UTF-8 bytes.
    assert refusal(impl, '["' + chr(cp) + '"]').reason == reason


def test_noncharacter_refusal_comes_in_byte_order(impl):
    # The first problem met reading left to right wins, whichever kind it is.
    assert refusal(impl, b'["\xef\xbf\xbf\xff"]').reason == "noncharacter `U+FFFF` is not allowed"
    assert refusal(impl, b'["\xff\xef\xbf\xbf"]').reason == "invalid UTF-8"
    assert refusal(impl, b'["\\ud800\\uffff"]').reason == "lone surrogate escape `\\ud800`"
    assert refusal(impl, b'["\\ufdd0\x01"]').reason == "noncharacter `U+FDD0` is not allowed"
    assert refusal(impl, b'["\x01\\ufdd0"]').reason == "control character in string"
    exc = refusal(impl, b'{"\xef\xb7\x90": 1, "\xef\xb7\x90": 2}')
    assert (exc.reason, exc.pos) == ("noncharacter `U+FDD0` is not allowed", 2)  # before the duplicate


def test_characters_next_to_noncharacters_are_accepted(impl):
    for cp in (0xFDCF, 0xFDF0, 0xFFFD, 0x1FFFD, 0x20000, 0x10FFFD, 0xEFFFD):
        text = chr(cp)
        assert impl.decode(('"' + text + '"').encode()) == text
        assert impl.decode(b'"' + _escaped(cp).encode() + b'"') == text


def test_location_fields(impl):
    exc = refusal(impl, b'{\n  "a": [1,\n    {"b": x}]}')
    assert exc.pos == 23
    assert (exc.lineno, exc.colno) == (3, 11)
    assert exc.pointer == "/a/1"
    assert isinstance(exc, ValueError) and isinstance(exc, AjpError)
    again = pickle.loads(pickle.dumps(exc))
    assert (str(again), again.pos, again.lineno, again.colno, again.pointer) == (
        str(exc),
        exc.pos,
        exc.lineno,
        exc.colno,
        exc.pointer,
    )


def test_pointer_escapes_member_names(impl):
    exc = refusal(impl, b'{"a/b": {"~c": [0, 1, [', max_depth=3)
    assert exc.pointer == "/a~1b/~0c"
    assert exc.reason == "nesting deeper than 3"


def test_pointer_at_top_level_is_empty(impl):
    assert refusal(impl, b"[1] [").pointer == ""
    assert refusal(impl, b"[1,").pointer == ""


# -- nesting -------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, 1, 5, 512])
def test_depth_limit_is_exact(impl, limit):
    ok = b"[" * limit + b"]" * limit
    assert impl.decode(ok if limit else b"1", max_depth=limit) is not None
    deep = b'{"k":' * limit + b"[]" + b"}" * limit
    exc = refusal(impl, deep, max_depth=limit)
    assert exc.reason == f"nesting deeper than {limit}"
    assert exc.pos == 5 * limit


@pytest.mark.parametrize("depth", range(1, 14))
def test_depth_of_wide_documents(impl, depth):
    """More containers than the limit, nested to every depth around the limit."""
    inner = b"[" * (depth - 1) + b"]" * (depth - 1) if depth > 1 else b"0"
    doc = b"[" + b",".join([inner] * 700) + b"]"  # depth `depth`
    assert impl.decode(doc, max_depth=depth) is not None
    assert refusal(impl, doc, max_depth=depth - 1).reason == f"nesting deeper than {depth - 1}"
    mixed = b"[" + b",".join([b"1", inner, b'{"a":' + inner + b"}"] * 300) + b"]"  # depth + 1
    assert impl.decode(mixed, max_depth=depth + 1) is not None
    assert refusal(impl, mixed, max_depth=depth).reason == f"nesting deeper than {depth}"


def test_default_depth_is_512(impl):
    assert impl.decode(b"[" * 512 + b"]" * 512) is not None
    assert refusal(impl, b"[" * 513 + b"]" * 513).pos == 512


@pytest.mark.parametrize("opener", [b"[", b'{"a":', b"[{\"\":"])
def test_a_million_openers_is_a_decode_error(impl, opener):
    exc = refusal(impl, opener * 1_000_000)
    assert exc.reason == "nesting deeper than 512"


def test_a_generous_limit_still_parses_iteratively(impl):
    n = 100_000
    value = impl.decode(b"[" * n + b"]" * n, max_depth=n)
    depth = 0
    while value:
        value = value[0]
        depth += 1
    assert depth == n - 1


# -- input types ---------------------------------------------------------------


def test_input_types(impl):
    doc = b'{"a":[1,"\xc3\xa9"]}'
    expected = {"a": [1, "\u00e9"]}
    assert impl.decode(doc) == expected
    assert impl.decode(bytearray(doc)) == expected
    assert impl.decode(memoryview(doc)) == expected
    assert impl.decode(memoryview(b"xx" + doc + b"yy")[2:-2]) == expected
    assert impl.decode(memoryview(b"[ 1 , 2 ]")[::2]) == [1, 2]  # not contiguous: "[1,2]"
    assert impl.decode(doc.decode()) == expected


def test_str_positions_are_utf8_byte_offsets(impl):
    exc = refusal(impl, '["\u00e9\u20ac", x]')
    assert exc.pos == 10


def test_str_with_a_lone_surrogate_is_refused(impl):
    exc = refusal(impl, '["a\ud800"]')
    assert (exc.reason, exc.pos) == ("invalid UTF-8", 3)


@pytest.mark.parametrize("data", [None, 1, 1.5, ["[]"], {"a": 1}, object()])
def test_other_input_types_are_a_type_error(impl, data):
    with pytest.raises(TypeError, match="decode\\(\\) takes bytes, bytearray, memoryview or str"):
        impl.decode(data)


@pytest.mark.parametrize("max_depth", [-1, 1.5, "3", None, True])
def test_bad_max_depth(impl, max_depth):
    with pytest.raises(ValueError, match="max_depth"):
        impl.decode(b"[]", max_depth=max_depth)


def test_top_level_package_exports_decode():
    import ajpcore

    assert ajpcore.decode(b'{"a": 1}') == {"a": 1}
    assert ajpcore.decode.__module__ == ajpcore._impl.__name__ or callable(ajpcore.decode)


# -- CLI -------------------------------------------------------------------------


def cli(*args, stdin=b""):
    return run_python("-m", "ajpcore", *args, stdin=stdin)


def test_decode_check_valid_is_silent():
    out = cli("decode-check", stdin=b'{"a": [1, 2.5, "\xc3\xa9"]}')
    assert (out.returncode, out.stdout, out.stderr) == (0, b"", b"")


@pytest.mark.parametrize(
    "doc, message",
    [
        (b'{"a":1,"a":2}', "duplicate member name `a` (byte 7)"),
        (b"[1,", "unexpected end of data (byte 3)"),
        (b"9007199254740993", "integer is not exactly representable as binary64 (byte 0)"),
        (b'["\xed\xa0\x80"]', "invalid UTF-8 (byte 2)"),
    ],
)
def test_decode_check_invalid_exits_2_with_one_line(doc, message):
    out = cli("decode-check", "-", stdin=doc)
    assert out.returncode == 2
    assert out.stdout == b""
    lines = out.stderr.decode().strip().splitlines()
    assert lines == [f"ajpcore decode-check: JSON is malformed: {message}"]


def test_decode_check_file(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes(b"[1, 2]\n")
    assert cli("decode-check", str(path)).returncode == 0
    path.write_bytes(b"\xef\xbb\xbf[1, 2]\n")
    out = cli("decode-check", str(path))
    assert out.returncode == 2 and b"byte order mark" in out.stderr


def test_canonicalize_reads_strictly():
    out = cli("canonicalize", stdin=b'{"a":1,"\\u0061":2}')
    assert out.returncode == 2
    assert b"duplicate member name `a` (byte 7)" in out.stderr

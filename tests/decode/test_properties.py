"""Hypothesis on both twins: round trips, agreement with orjson, and hostile bytes that only ever give DecodeError."""

import json
import math

import orjson
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ajpcore import DecodeError
from ajpcore.strategies import json_characters, json_values

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
# (the impl fixture is a module, the same for every example)

# -- I-JSON values ---------------------------------------------------------------

text = st.text(json_characters, max_size=12)  # I-JSON refuses noncharacters, orjson and json do not
safe_ints = st.integers(-(2**53) + 1, 2**53 - 1)
finite = st.floats(allow_nan=False, allow_infinity=False)


def as_read(value):
    """What every I-JSON peer reads back: an int beyond 2**53 is the double it stands for."""
    if type(value) is int and abs(value) > 2**53 - 1:
        return int(float(value))
    if type(value) is list:
        return [as_read(v) for v in value]
    if type(value) is dict:
        return {k: as_read(v) for k, v in value.items()}
    return value


# Within what orjson writes and I-JSON admits: no ints beyond 2**53.
orjson_values = st.recursive(
    st.none() | st.booleans() | safe_ints | finite | text,
    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(text, inner, max_size=5),
    max_leaves=25,
)


def outcome(impl, data, **kwargs):
    """What a decoder makes of ``data``: its value (as repr, so 1 != 1.0 and 0.0 != -0.0) or its error."""
    try:
        return "ok", repr(impl.decode(data, **kwargs))
    except DecodeError as exc:
        return "error", str(exc), exc.pos, exc.lineno, exc.colno, exc.pointer


@SETTINGS
@given(value=json_values())
@example(value=2**64)
@example(value=123456789012345680000)
@example(value=[-0.0, 1.0, 1e21, 1e-7, "\U0001f600\x00"])
def test_decode_inverts_canonicalize(impl, value):
    doc = impl.canonicalize(value)
    decoded = impl.decode(doc)
    assert decoded == as_read(value)
    assert impl.canonicalize(decoded) == doc


@SETTINGS
@given(value=orjson_values)
def test_agrees_with_orjson_within_ijson(impl, value):
    doc = orjson.dumps(value)
    assert repr(impl.decode(doc)) == repr(orjson.loads(doc))


@SETTINGS
@given(value=orjson_values, indent=st.sampled_from([None, 1, 2]))
def test_agrees_with_json_on_pretty_printed_documents(impl, value, indent):
    doc = json.dumps(value, indent=indent, ensure_ascii=False).encode()
    assert repr(impl.decode(doc)) == repr(json.loads(doc))
    assert repr(impl.decode(json.dumps(value, ensure_ascii=True))) == repr(json.loads(doc))


@SETTINGS
@given(
    digits=st.text("0123456789", min_size=1, max_size=40),
    fraction=st.text("0123456789", min_size=1, max_size=40),
    exponent=st.integers(-400, 400),
    negative=st.booleans(),
)
def test_decimal_fractions_read_exactly_as_float(impl, digits, fraction, exponent, negative):
    digits = digits.lstrip("0") or "0"
    literal = ("-" if negative else "") + digits + "." + fraction + "e" + str(exponent)
    expected = float(literal)
    if math.isinf(expected):
        with pytest.raises(DecodeError, match="number out of range for binary64"):
            impl.decode(literal)
    else:
        got = impl.decode(literal)
        assert type(got) is float and repr(got) == repr(expected)


# -- hostile input: only DecodeError, and the twins agree ---------------------------


def agree(twins, data, **kwargs):
    native, pure = twins
    got = outcome(native, data, **kwargs)
    assert got == outcome(pure, data, **kwargs)
    return got


@SETTINGS
@given(data=st.binary(max_size=64))
@example(data=b"[" * 600)
@example(data=b'{"a":1,"\\u0061":2}')
def test_arbitrary_bytes(twins, data):
    agree(twins, data)


@SETTINGS
@given(data=st.text(max_size=32))
def test_arbitrary_text(twins, data):
    agree(twins, data)
    agree(twins, data.encode("utf-8", "surrogatepass"))


def json_alphabet_bytes():
    pieces = [b"[", b"]", b"{", b"}", b",", b":", b'"', b"\\", b"u", b"d8", b"dc", b"0", b"1", b"-", b".", b"e",
              b"+", b"true", b"null", b" ", b"\n", b"\xc3\xa9", b"\xed\xa0\x80", b"\xef\xbb\xbf", b"9007199254740993"]
    return st.lists(st.sampled_from(pieces), max_size=30).map(b"".join)


@SETTINGS
@given(data=json_alphabet_bytes(), depth=st.sampled_from([1, 3, 512]), allow=st.booleans())
def test_json_shaped_noise(twins, data, depth, allow):
    agree(twins, data, max_depth=depth, allow_duplicate_keys=allow)


@st.composite
def mutated_documents(draw):
    doc = bytearray(json.dumps(draw(orjson_values), ensure_ascii=draw(st.booleans())).encode())
    for _ in range(draw(st.integers(1, 3))):
        kind = draw(st.sampled_from(["flip", "truncate", "insert", "delete", "duplicate"]))
        at = draw(st.integers(0, len(doc)))
        if kind == "flip" and doc:
            at = min(at, len(doc) - 1)
            doc[at] ^= 1 << draw(st.integers(0, 7))
        elif kind == "truncate":
            del doc[at:]
        elif kind == "insert":
            doc[at:at] = draw(st.sampled_from([b",", b"]", b"}", b'"', b"\\", b"\x00", b"\xff", b"\xc3", b"-", b"0"]))
        elif kind == "delete" and doc:
            del doc[min(at, len(doc) - 1)]
        elif kind == "duplicate":
            brace = doc.find(b"{")
            if brace >= 0 and doc[brace + 1 : brace + 2] == b'"':
                end = doc.find(b",", brace)
                member = doc[brace + 1 : end] if end > 0 else None
                if member and member.count(b'"') == 2:
                    doc[brace + 1 : brace + 1] = member + b","  # the first member, twice
    return bytes(doc)


@SETTINGS
@given(data=mutated_documents())
def test_mutated_documents(twins, data):
    agree(twins, data)


@SETTINGS
@given(value=st.dictionaries(text, safe_ints, min_size=1, max_size=5), data=st.data())
def test_inserted_duplicate_member_is_refused_at_its_name(twins, value, data):
    doc = json.dumps(value, separators=(",", ":"))
    name = data.draw(st.sampled_from(sorted(value)))
    spelled = json.dumps(name, ensure_ascii=data.draw(st.booleans()))
    prefix = doc[:-1] + ","
    twin_doc = (prefix + spelled + ":0}").encode()
    for impl in twins:
        with pytest.raises(DecodeError) as info:
            impl.decode(twin_doc)
        assert info.value.pos == len(prefix.encode())
        assert info.value.reason.startswith("duplicate member name")
    assert agree(twins, twin_doc, allow_duplicate_keys=True)[0] == "ok"


@SETTINGS
@given(value=json_values(), data=st.data())
def test_every_prefix_is_refused_at_its_end_or_at_a_broken_token(twins, value, data):
    doc = twins[0].canonicalize([value])
    cut = data.draw(st.integers(0, len(doc) - 1))
    result = agree(twins, doc[:cut])
    assert result[0] == "error"
    pos = result[2]
    assert pos == cut or ("invalid UTF-8" in result[1] or "lone surrogate" in result[1] or "binary64" in result[1])


@SETTINGS
@given(value=json_values())
def test_input_types_agree(twins, value):
    doc = twins[0].canonicalize(value)
    expected = outcome(twins[0], doc)
    for impl in twins:
        for data in (doc, bytearray(doc), memoryview(doc), doc.decode()):
            assert outcome(impl, data) == expected


def test_deep_documents_agree(twins):
    for doc in [b"[" * 10**6, b'{"a":' * 10**5, b"[" * 511 + b"{" + b"]" * 511, b"[" * 513 + b"]" * 513]:
        result = agree(twins, doc)
        assert result[0] == "error"


# -- the pure twin's json fast path never vouches for what its reference parser refuses --


def reference_outcome(data, **kwargs):
    from ajpcore import _core_py

    parser = _core_py._StrictParser(
        _core_py._input_bytes(data), kwargs.get("max_depth", 512), kwargs.get("allow_duplicate_keys", False)
    )
    try:
        return "ok", repr(parser.parse())
    except DecodeError as exc:
        return "error", str(exc), exc.pos, exc.lineno, exc.colno, exc.pointer


def long_numbers():
    mantissa = st.integers(150, 330).flatmap(lambda n: st.text("0123456789", min_size=n, max_size=n))
    return st.builds(
        lambda m, frac, exp: (m.lstrip("0") or "0") + frac + exp,
        mantissa,
        st.sampled_from(["", ".5", "." + "0" * 300 + "1"]),
        st.sampled_from(["", "e1", "e-1", "e+99", "E-99", "e0", "e100", "e-400"]),
    ).map(str.encode)


@SETTINGS
@given(
    data=st.one_of(json_alphabet_bytes(), mutated_documents(), long_numbers()),
    depth=st.sampled_from([2, 512]),
    allow=st.booleans(),
)
def test_pure_fast_path_matches_its_reference_parser(data, depth, allow):
    from ajpcore import _core_py

    kwargs = {"max_depth": depth, "allow_duplicate_keys": allow}
    assert outcome(_core_py, data, **kwargs) == reference_outcome(data, **kwargs)


@SETTINGS
@given(
    depth=st.integers(0, 12),
    kinds=st.lists(st.sampled_from([b"[", b'{"a":']), min_size=12, max_size=12),
    copies=st.integers(80, 200),
    slack=st.sampled_from([-1, 0, 1, 500]),
)
def test_pure_fast_path_depth_check_on_wide_documents(depth, kinds, copies, slack):
    """More containers than the limit, nested to every depth around it."""
    from ajpcore import _core_py

    levels = kinds[:depth]
    closers = {b"[": b"]", b'{"a":': b"}"}
    item = b"".join(levels) + b"0" + b"".join(closers[x] for x in reversed(levels))
    doc = b"[" + b",".join([item] * copies) + b"]"
    limit = max(0, len(levels) + 1 + slack)
    assert outcome(_core_py, doc, max_depth=limit) == reference_outcome(doc, max_depth=limit)


NONCHARACTERS = [*range(0xFDD0, 0xFDF0), *(plane << 16 | low for plane in range(17) for low in (0xFFFE, 0xFFFF))]


@SETTINGS
@given(head=text, tail=text, cp=st.sampled_from(NONCHARACTERS), ascii_only=st.booleans())
def test_a_noncharacter_anywhere_in_a_string_is_refused_where_it_starts(twins, head, tail, cp, ascii_only):
    # RFC 7493 §2.1, raw (canonical UTF-8) or escaped (json's \uXXXX, a pair beyond the BMP).
    doc = json.dumps([head + chr(cp) + tail], ensure_ascii=ascii_only).encode()
    start = len(json.dumps([head], ensure_ascii=ascii_only).encode()) - 2  # where the closing quote was
    result = agree(twins, doc)
    assert result[:3] == ("error", f"JSON is malformed: noncharacter `U+{cp:04X}` is not allowed (byte {start})", start)

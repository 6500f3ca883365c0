"""The native writer's fast paths give the bytes of the general path, on both twins.

Short ASCII member names are written with word loads, clean ASCII text with 16/32-byte
vectors ending on an overlapping one, and an array's objects reuse the member order of
the previous object of the same names.  Each test puts the special character (or the
shape change) at every position those paths split on, and checks the output against an
independent oracle: for strings, ``json.dumps(ensure_ascii=False)`` writes exactly the
RFC 8785 escapes (\\b \\t \\n \\f \\r \\" \\\\ and lowercase \\u00xx, nothing else).
"""

import json

import pytest

from ajpcore import EncodeError

# Characters that stop a fast path: the escapes, a control without a short escape,
# DEL (copied as is), and one of each UTF-8 length beyond ASCII.
STOPPERS = ['"', "\\", "\n", "\x01", "\x1f", "\x7f", "\u00e9", "\u4e2d", "\U0001F600"]


def oracle(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True).encode()


class Name(str):
    """A str subclass: never on the fast paths."""


class Twin(str):
    """Distinct objects with the same text, so one dict can hold the name twice."""

    def __hash__(self):
        return id(self)

    def __eq__(self, other):
        return self is other


@pytest.mark.parametrize("stop", STOPPERS)
def test_member_names_of_every_short_length(impl, stop):
    for n in range(0, 21):
        base = "abcdefghijklmnopqrstu"[:n]
        names = [base] + [base[:i] + stop + base[i + 1 :] for i in range(n)]
        for name in names:
            value = {name: 1}
            assert impl.canonicalize(value) == oracle(value), repr(name)
            value = {name: 1, "~": [name]}
            assert impl.canonicalize(value) == oracle(value), repr(name)


@pytest.mark.parametrize("stop", STOPPERS)
def test_text_of_every_length_around_the_vectors(impl, stop):
    for n in range(0, 100):
        clean = "".join(chr(0x20 + (i * 7) % 0x5F) for i in range(n)).replace('"', "a").replace("\\", "b")
        texts = [clean] + [clean[:i] + stop + clean[i + 1 :] for i in range(n)]
        for text in texts:
            assert impl.canonicalize(text) == oracle(text), repr(text)
        assert impl.canonicalize(texts) == oracle(texts)


def test_subclass_and_legacy_names_match_exact_names(twins):
    native, pure = twins
    value = {Name("b"): 1, Name("a"): 2, "c": [{Name("y"): 1, "x": 2}] * 3}
    expected = b'{"a":2,"b":1,"c":[{"x":2,"y":1},{"x":2,"y":1},{"x":2,"y":1}]}'
    assert native.canonicalize(value) == pure.canonicalize(value) == expected


def records(orders):
    return [{k: i for k in order} for i, order in enumerate(orders)]


@pytest.mark.parametrize(
    "orders",
    [
        ["bac"] * 5,
        ["bac", "bac", "abc", "bac", "cab", "cab", "bac"],
        ["ba", "ba", "bac", "bac", "ba"],  # same first name, more members
        ["ba", "ba", "bc", "bc", "ba"],  # same first name and size, another name
        [["name%02d" % j for j in reversed(range(16))]] * 3,  # the largest recorded shape
        [["name%02d" % j for j in reversed(range(17))]] * 3,  # one more: never recorded
    ],
)
def test_arrays_of_records_in_any_member_order(twins, orders):
    native, pure = twins
    value = records(orders)
    assert native.canonicalize(value) == pure.canonicalize(value) == oracle(value)
    nested = {"rows": value, "again": [{"inner": value}, {"inner": value}]}
    assert native.canonicalize(nested) == pure.canonicalize(nested) == oracle(nested)


def test_records_with_equal_names_that_are_other_objects(twins):
    native, pure = twins
    # Names built at run time: equal text, distinct objects, so no recorded shape applies.
    value = [{"".join(["t", "itle"]): i, "".join(["i", "d"]): -i} for i in range(50)]
    assert len({id(next(iter(r))) for r in value}) > 1
    assert native.canonicalize(value) == pure.canonicalize(value) == oracle(value)


def test_duplicate_subclass_names_in_repeated_records_are_refused(twins):
    for impl in twins:
        twin = Twin("a")
        value = [{twin: 1, "b": 2}, {twin: 1, "b": 2}, {twin: 1, "b": 2, Twin("a"): 3}]
        with pytest.raises(EncodeError) as info:
            impl.canonicalize(value)
        assert str(info.value) == "Duplicate object key `a` - at `$[2]`"


def test_streamed_records_match_canonicalize(impl):
    value = records(["bac", "cab"] * 300)
    chunks = []
    total = impl.canonicalize_into(value, chunks.append, chunk_size=7)
    assert b"".join(chunks) == impl.canonicalize(value) == oracle(value)
    assert total == len(oracle(value))


def test_recorded_shapes_keep_utf16_order(twins):
    native, pure = twins
    # U+1F600 is D83D DE00 in UTF-16: before U+FB33, though after it by code point.
    value = records([["\uFB33", "\U0001F600", "a"]] * 4)
    expected = b"[" + b",".join(b'{"a":%d,"\xf0\x9f\x98\x80":%d,"\xef\xac\xb3":%d}' % (i, i, i) for i in range(4)) + b"]"
    assert native.canonicalize(value) == pure.canonicalize(value) == expected


@pytest.mark.parametrize("wide", ["\u4e2d", "\U0001F600"])
def test_wide_text_direct_and_through_blocks(impl, wide):
    # Unbounded output encodes wide text straight into the buffer; a small chunk goes
    # through the block: the same bytes, and the same error for a lone surrogate.
    for n in (0, 1, 7, 8, 9, 63, 64, 65, 130):
        for stop in STOPPERS + ["ab" * 5]:
            text = (wide + "abcdefghi" * 3)[: max(n, 1)] * (n // 10 + 1) + stop + wide
            chunks = []
            impl.canonicalize_into(text, chunks.append, chunk_size=5)
            assert impl.canonicalize(text) == b"".join(chunks) == oracle(text), repr(text)
        bad = wide * n + "\ud800" + "a" * n
        for run in (impl.canonicalize, lambda v: impl.canonicalize_into(v, [].append, chunk_size=5)):
            with pytest.raises(EncodeError) as info:
                run(bad)
            assert str(info.value) == "String contains a lone surrogate - at `$`"


# Units around the edges of the 8-at-once run of 3-byte characters (UCS-2 text): its first
# and last members (U+0800, U+FFFF), its neighbours outside (U+07FF, ASCII, escapes) and the
# surrogates it must not encode (U+D7FF and U+E000 are the last units in range around them).
EDGE_UNITS = ["\u0800", "\uffff", "\ud7ff", "\ue000", "\u07ff", "\u00e9", "a", '"', "\n", "\x01"]


@pytest.mark.parametrize("stop", EDGE_UNITS + ["\ud800", "\udbff", "\udc00", "\udfff"])
def test_runs_of_three_byte_characters_at_every_offset(impl, stop):
    run = "".join(chr(0x4E00 + 97 * i) for i in range(40))  # CJK ideographs
    for n in range(0, 34):
        for at in range(0, n + 1):
            text = run[:at] + stop + run[at:n]
            if "\ud800" <= stop <= "\udfff":
                for encode in (impl.canonicalize, lambda v: impl.canonicalize_into(v, [].append, chunk_size=7)):
                    with pytest.raises(EncodeError) as info:
                        encode(text)
                    assert str(info.value) == "String contains a lone surrogate - at `$`"
                continue
            chunks = []
            impl.canonicalize_into(text, chunks.append, chunk_size=7)
            assert impl.canonicalize(text) == b"".join(chunks) == oracle(text), repr(text)


def test_dyadic_doubles_match_the_shortest_digit_search(twins):
    # m / 2**k with an exact decimal of up to 15 digits skips Ryu natively; around that
    # bound (15/16 digits, k = 22/23, subnormal, huge) it must not change a digit.
    native, pure = twins
    values = [m / 2**k for k in range(0, 30) for m in range(1, 600)]
    values += [m / 2**k for k in (1, 2, 21, 22, 23) for m in (10**15 - 1, 10**15 + 1, 2**53 - 1, 2**52 + 1)]
    values += [x * 10.0**e for x in (0.5, 0.75, 0.125, 1.5, 93.5) for e in range(-30, 30)]
    values += [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1 / 3]
    for v in values:
        for x in (v, -v):
            assert native._format_double(x) == pure._format_double(x), repr(x)
            assert float(native._format_double(x)) == x
    assert native.canonicalize([0.5, 0.75, -93.5, 2**-22, 1e21 + 0.5]) == b"[0.5,0.75,-93.5,2.384185791015625e-7,1e+21]"


def test_text_and_ints_inline_at_the_buffer_edge(impl):
    # Exact str and int values are written inline when the buffer surely holds them, else
    # by the general writers: the same bytes on either side of the first buffer's end
    # (4 KiB natively), for clean and escaped text, and ints on both sides of one digit.
    ints = [0, -1, 2**30 - 1, 2**30, -(2**30) + 1, -(2**30), 2**31, 2**53 - 1, -(2**53) + 1]
    for pad in range(4060, 4110, 3):
        for text in ("clean text", 'a "quote"', "tab\there", "caf\u00e9", "\u4e2d", ""):
            value = {"a": "x" * pad, "b": text, "c": ints, "d": [text, 7, text], "e": 2**30}
            assert impl.canonicalize(value) == oracle(value), (pad, text)
            chunks = []
            impl.canonicalize_into(value, chunks.append, chunk_size=97)
            assert b"".join(chunks) == oracle(value), (pad, text)

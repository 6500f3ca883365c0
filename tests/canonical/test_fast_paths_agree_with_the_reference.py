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


# -- text transcoded a block at a time (native/canonical_utf8.h at the avx2 level) -------------
# Each str kind is encoded 32 bytes of code units a step (32 Latin-1, 16 UCS-2, 8 UCS-4 units):
# a character needing an escape, or a surrogate, cuts the block; a text's last block is read
# without passing its end.  The special character goes at every position of strings whose
# lengths straddle 8/16/32/64 units, in each kind; at the other SIMD levels the same texts
# take the sse2 and scalar encoders.

BASES = {
    "ascii": "abcdefghijklmnopqrstuvwxyz0123456789 ",
    "latin1": "ab\u00e9cd\u00fc\u00ff\u0080 \u00c0xyz",  # includes C1 controls, copied as UTF-8
    "two-byte": "a\u0434\u07ff\u00e9 \u0100z",
    "three-byte": "\u4e2d\u0800\uffff\u6587 a\u00e9\u0434\ufffd",
    "four-byte": "\U0001F600 a\U00010000\U0010ffff\u4e2d\u00e9\u0434xyz",
    "emoji-words": "word \U0001F680\U0001F3FD and \u200d\U0001F469 text ",
}
BLOCK_LENGTHS = list(range(0, 40)) + [47, 48, 49, 63, 64, 65, 66, 95, 96, 97, 127, 128, 129]
SPECIALS = ['"', "\\", "\n", "\x00", "\x1f", "\b", "\x7f", "\x80", "\u00ff", "\u07ff", "\u0800",
            "\uffff", "\U00010000", "\U0010ffff"]


def text_of(base, n):
    return (base * (n // len(base) + 1))[:n]


@pytest.mark.parametrize("base", list(BASES))
@pytest.mark.parametrize("special", SPECIALS)
def test_a_special_character_at_every_position_of_a_block(twins, base, special):
    native, pure = twins
    for n in BLOCK_LENGTHS:
        clean = text_of(BASES[base], n)
        texts = [clean] + [clean[:i] + special + clean[i + 1 :] for i in range(n)]
        for text in texts:
            out = oracle(text)
            assert native.canonicalize(text) == pure.canonicalize(text) == out, (base, n, repr(text))
        # Together, as values and names: the texts land at every offset of the output buffer
        # (names sort by UTF-16 code units, which json.dumps does not: the pure twin is the oracle).
        doc = {text: [text, n] for text in texts}
        out = pure.canonicalize(doc)
        assert native.canonicalize(doc) == out
        assert json.loads(out) == doc


@pytest.mark.parametrize("base", list(BASES))
@pytest.mark.parametrize("surrogate", ["\ud800", "\udbff", "\udc00", "\udfff"])
def test_a_surrogate_at_every_position_of_a_block(twins, base, surrogate):
    def refusal(encode, value):
        with pytest.raises(EncodeError) as info:
            encode(value)
        return str(info.value)

    native, pure = twins
    for n in BLOCK_LENGTHS:
        clean = text_of(BASES[base], n)
        for i in range(n + 1):
            text = clean[:i] + surrogate + clean[i:]
            for value in (text, [1, text], {"k": text}, {text: 1}):
                message = refusal(pure.canonicalize, value)
                assert message.startswith("String contains a lone surrogate - at `$")
                assert refusal(native.canonicalize, value) == message, (base, n, i)
                assert refusal(lambda v: native.canonicalize_into(v, [].append, chunk_size=7), value) == message
            assert refusal(native.canonicalize, text) == "String contains a lone surrogate - at `$`"


@pytest.mark.parametrize("base", list(BASES))
def test_blocks_meeting_the_end_of_a_chunk(twins, base):
    # Streaming encodes in place while the chunk surely holds a step, then a block of code
    # points through a small buffer: every chunk size from 1 up, and texts that start at
    # every offset of a chunk, give the bytes of the unbounded encoder.
    native, pure = twins
    text = text_of(BASES[base], 300) + '"\n' + text_of(BASES[base], 97) + "\x01"
    for chunk_size in list(range(1, 20)) + [31, 32, 33, 63, 64, 65, 79, 80, 81, 127, 128, 129, 500, 4095, 4096, 4097]:
        for pad in (0, 1, 5, 17, 33, 70):
            value = ["p" * pad, text, {text: text}]
            out = oracle(value)
            assert streamed_bytes(native, value, chunk_size) == out, (chunk_size, pad)
            assert streamed_bytes(pure, value, chunk_size) == out
            assert native.canonicalize(value) == out


@pytest.mark.parametrize("base", list(BASES))
def test_long_texts_grow_the_buffer_on_the_way(twins, base):
    # Unbounded output starts in a 4 KiB buffer and grows when a step might not fit: texts
    # crossing that end (and later ones) at every few bytes, with escapes on the way.
    native, pure = twins
    body = text_of(BASES[base], 5000)
    body = body[:1000] + "\t" + body[1000:3000] + '"' + body[3000:]
    for pad in range(3900, 4120, 7):
        value = ["x" * pad, body, body[:pad]]
        assert native.canonicalize(value) == pure.canonicalize(value) == oracle(value), pad


def streamed_bytes(twin, value, chunk_size):
    chunks = []
    total = twin.canonicalize_into(value, chunks.append, chunk_size=chunk_size)
    assert all(0 < len(c) <= chunk_size for c in chunks)
    assert total == sum(map(len, chunks))
    return b"".join(chunks)


def test_every_code_unit_edge_in_every_kind(twins):
    # The edges of each UTF-8 length and of the escapes, each alone and in a run long enough
    # for whole blocks, in a Latin-1, UCS-2 and UCS-4 string.
    native, pure = twins
    edges = [0x00, 0x07, 0x08, 0x0D, 0x1F, 0x20, 0x21, 0x22, 0x23, 0x5B, 0x5C, 0x5D, 0x7E, 0x7F, 0x80, 0xBF,
             0xC0, 0xFF, 0x100, 0x7FF, 0x800, 0xFFF, 0x1000, 0xD7FF, 0xE000, 0xFFFD, 0xFFFF, 0x10000, 0x10FFFF]
    for c in map(chr, edges):
        for widen in ("", "\u0100", "\U00010000"):
            for n in (1, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64):
                text = widen + c * n + widen
                assert native.canonicalize(text) == pure.canonicalize(text) == oracle(text), (hex(ord(c)), widen, n)


# -- names of recorded shapes --------------------------------------------------------------


def test_a_nested_record_taking_the_shape_slot_mid_record(twins):
    # An array's records reuse the member order (and name text) of the previous record of
    # their names.  A nested record whose first name is the same object as the outer one's
    # lands in the same slot and records its own shape while the outer record is written.
    native, pure = twins
    value = [{"a": [{"a": i, "z": i}] * 3, "b": i, "c": [{"a": 1, "y": 2, "x": 3}] * 2} for i in range(6)]
    value += [{"a": i, "b": [{"b": 1}, {"a": 2, "b": 3}] * 3} for i in range(4)]
    for v in (value, {"rows": value}, [value, value]):
        assert native.canonicalize(v) == pure.canonicalize(v) == oracle(v)
        for chunk_size in (1, 7, 31, 33, 100):
            assert streamed_bytes(native, v, chunk_size) == oracle(v)


@pytest.mark.parametrize("name", ["n", "sixteen-chars-ok", "seventeen-chars-x", "tab\tname", "caf\u00e9", "\u4e2d",
                                  "quote\"d", "\U0001F600", ""])
def test_records_with_names_of_every_kind(twins, name):
    # Short clean ASCII names are rendered once per shape; the others are written anew.
    native, pure = twins
    value = [{name: i, "id": -i, "zz": [i]} for i in range(5)]
    for pad in range(0, 80, 3):
        doc = ["p" * pad, value]
        assert native.canonicalize(doc) == pure.canonicalize(doc) == oracle(doc)
        assert streamed_bytes(native, doc, 41) == oracle(doc)


# -- member-name order by prefixes (RFC 8785 §3.2.3) ----------------------------------------
# Names sort by their first 8 bytes when all are Latin-1, else by their first 4 UTF-16 code
# units (an astral character is two of them, so a pair may straddle the 4th), then in full.

NAME_UNITS = ["a", "b", "\x00", "\x7f", "\xe9", "\xff", "\u0100", "\u4e2d", "\ud7ff", "\ue000", "\uffff",
              "\U00010000", "\U0001F600", "\U0010ffff"]


def names_from(rng, kinds):
    return ["".join(rng.choice(kinds) for _ in range(rng.randint(0, 7))) for _ in range(rng.randint(2, 14))]


@pytest.mark.parametrize("seed", range(6))
def test_names_sort_by_utf16_units_whatever_their_kinds(twins, seed):
    import random

    native, pure = twins
    rng = random.Random(seed)
    pools = [NAME_UNITS, NAME_UNITS[:6], NAME_UNITS[6:], ["a", "\U0001F600", "\uffff"], ["\x00", "a", "\u4e2d"]]
    for _ in range(400):
        value = {name: i for i, name in enumerate(names_from(rng, rng.choice(pools)))}
        out = pure.canonicalize(value)
        assert native.canonicalize(value) == out, value
        assert list(json.loads(out)) == sorted(value, key=lambda k: k.encode("utf-16-be"))
        records = [dict(value) for _ in range(3)]  # recorded shapes sort once
        assert native.canonicalize(records) == pure.canonicalize(records)


def test_names_with_lone_surrogates_fail_at_the_first_in_order(twins):
    # Names are sorted before any is written: the refusal names the first one in UTF-16 order.
    native, pure = twins
    for names in (["\ud800", "\U00010000"], ["\udc00x", "\ud800y", "\U0001F600"], ["a\udfff", "a\ud800", "a\uffff"],
                  ["\ue000", "\udbff\udfff", "\U0010ffff"]):
        value = {name: 1 for name in names}
        for twin in twins:
            with pytest.raises(EncodeError) as info:
                twin.canonicalize(value)
            assert str(info.value) == str(pytest.raises(EncodeError, pure.canonicalize, value).value)

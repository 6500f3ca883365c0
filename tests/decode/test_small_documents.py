"""The native decoder's small-document paths give exactly what the reference reader gives.

Driven on both twins (the pure twin is the reference): numbers with a fraction or an
exponent read in the same pass as small ints (one division for at most 15 digits, the
binary64 reader for the rest), strings and member names scanned 16 bytes at a time (a
stop at every position of a block, blocks that end with the document), the per-object
mask of name hashes in front of the one-by-one duplicate check, the member and frame
stacks that start inside the parser and grow past it, and values handed on as references
(a refusal at any stage keeps every reference count where it was).
"""

import gc
import json
import sys

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from ajpcore import DecodeError
from decode.test_fast_paths_agree_with_the_reference import LINEAR_NAMES, SETTINGS, agree

TREE_INLINE = 64  # native/decoded_tree.pxi: members held inside the parser before the stack grows
FRAMES_INLINE = 16  # open containers held inside the parser before the frame stack grows


# -- numbers with a fraction or an exponent -------------------------------------------

DIGITS = st.text("0123456789", min_size=0, max_size=20)


@st.composite
def number_texts(draw):
    """Mostly grammatical numbers around the 15-digit edge of the one-pass reader, some not."""
    sign = draw(st.sampled_from(["", "", "-"]))
    whole = draw(st.one_of(st.just("0"), st.integers(1, 10**17).map(str), DIGITS))
    text = sign + whole
    if draw(st.integers(0, 4)):
        text += "." + draw(DIGITS)
    if draw(st.integers(0, 2)) == 0:
        text += draw(st.sampled_from("eE")) + draw(st.sampled_from(["", "+", "-"])) + draw(st.text("0123456789", max_size=4))
    return text


EDGE_NUMBERS = [
    "0.5", "-0.0", "0.0", "-1.5", "2.675", "0.1", "0.3",
    "12345678901234.5", "1234567890123.45", "123456789012345.6", "1.23456789012345", "1.234567890123456",
    "0.00000000000001", "0.000000000000001", "9.99999999999999", "9.999999999999999",
    "1e5", "1E5", "1.5e3", "1.5E+3", "0e0", "-0e-0", "1e400", "-1e400", "1e-400", "4.9e-324",
    "2.2250738585072014e-308", "1.7976931348623157e308", "1.7976931348623159e308",
    "1.00000000000000011102230246251565404236316680908203125", "123456789012345678901.5",
    "1.", "1.e5", "1e", "1e+", "1e-", ".5", "-.5", "01.5", "-01.5", "00.5", "1.5.5", "1.5e3.5", "1x", "1.5x", "1e5x",
]


@SETTINGS
@given(text=number_texts())
@example(text="123456789012345.6")
def test_fractions_and_exponents_read_exactly(twins, text):
    for doc in (text, f"[{text}]", f"[{text},1]", f'{{"a":{text}}}', f"{text} "):
        agree(twins, doc.encode())


@pytest.mark.parametrize("text", EDGE_NUMBERS)
def test_number_edges_read_exactly(twins, text):
    for doc in (text, f"[{text}]", f'{{"a":{text},"b":1}}', f"{text} "):
        agree(twins, doc.encode())


def test_a_plain_fraction_is_the_float_of_its_text(impl):
    texts = ["0.5", "-0.0", "2.675", "0.1", "123456789012345.6", "99999999999999.9", "0.30000000000000004"]
    got = impl.decode(("[" + ",".join(texts) + "]").encode())
    assert [repr(x) for x in got] == [repr(float(t)) for t in texts]
    assert all(type(x) is float for x in got)


# -- strings and names, 16 bytes at a time --------------------------------------------

STOPS = ['"', "\\n", "\\u00e9", "\\ud83d\\ude80", "\\ud800", "\x01", "\x1f", "\x7f", "\u00e9", "\u6771", "\U0001F680"]


@pytest.mark.parametrize("stop", STOPS)
@pytest.mark.parametrize("length", [0, 1, 7, 8, 15, 16, 17, 31, 32, 33])
def test_a_stop_at_every_position_of_a_block(twins, stop, length):
    # ``stop`` (the closing quote, an escape, a control or non-ASCII character) after ``length``
    # plain bytes, in a value and in a name, with the document ending at every distance after it.
    body = "a" * length + stop + "b" * (length % 5)
    for raw in (f'["{body}"]', f'{{"{body}":1}}', f'{{"x":"{body}","{body}":[]}}'):
        doc = raw.encode()
        agree(twins, doc)
        for cut in range(max(1, len(doc) - 20), len(doc)):
            agree(twins, doc[:cut])


@SETTINGS
@given(prefix=st.integers(0, 17), names=st.lists(st.text(st.sampled_from("ab_0Z~ \u00e9\u6771\"\\\n"), max_size=40), min_size=1, max_size=8))
def test_names_and_strings_at_every_alignment_read_exactly(twins, prefix, names):
    value = {name: [name, {name: name}] for name in names}
    doc = (" " * prefix + json.dumps(value, ensure_ascii=False)).encode()
    native, pure = twins
    assert native.decode(doc) == pure.decode(doc) == value


# -- duplicate names: the hash mask in front of the one-by-one check --------------------


@pytest.mark.parametrize("size", range(1, LINEAR_NAMES + 3))
def test_a_duplicate_of_each_earlier_name_is_refused(twins, size):
    members = [f'"name{k}":{k}' for k in range(size)]
    for k in range(size):
        doc = ("{" + ",".join(members + [f'"name{k}":-1']) + "}").encode()
        kind, message, pos, *_ = agree(twins, doc)
        assert kind == "error" and "duplicate member name" in message
        assert pos == doc.rindex(b'"name')
        # An escaped spelling of the same name is the same name.
        escaped = ("{" + ",".join(members + [f'"\\u006eame{k}":-1']) + "}").encode()
        assert agree(twins, escaped)[0] == "error"


def test_many_distinct_names_with_clashing_masks_pass(twins):
    # Far more names than mask bits: most share a bit with an earlier name, none is a duplicate.
    for size in (LINEAR_NAMES, 64, 200):
        value = {f"k{k:03d}": k for k in range(size)}
        for impl in twins:
            assert impl.decode(json.dumps(value).encode()) == value
            with pytest.raises(DecodeError, match="duplicate member name"):
                impl.decode(json.dumps(value).encode()[:-1] + b',"k000":0}')


# -- the stacks inside the parser, and past them --------------------------------------


@pytest.mark.parametrize("count", [TREE_INLINE - 2, TREE_INLINE - 1, TREE_INLINE, TREE_INLINE + 1, 3 * TREE_INLINE])
def test_members_past_the_inline_stack_read_back(twins, count):
    values = [list(range(count)), {f"m{k}": k for k in range(count // 2)}, [[k, str(k)] for k in range(count)]]
    for value in values:
        doc = json.dumps(value).encode()
        for impl in twins:
            assert impl.decode(doc) == value
        agree(twins, doc[:-1] + b",]")  # the refusal drops every member, inline or grown


@pytest.mark.parametrize("depth", [FRAMES_INLINE - 1, FRAMES_INLINE, FRAMES_INLINE + 1, 4 * FRAMES_INLINE])
def test_nesting_past_the_inline_frames_reads_back(twins, depth):
    value = "leaf"
    for level in range(depth):
        value = {f"d{level}": [value, level]}
    doc = json.dumps(value).encode()
    for impl in twins:
        assert impl.decode(doc) == value
    kind, message, pos, line, column, pointer = agree(twins, doc.replace(b'"leaf"', b'"leaf" x'))
    # The pointer names the innermost open container: the array under d0, inside them all.
    assert kind == "error" and pointer == "".join(f"/d{level}/0" for level in reversed(range(depth)))[:-2]


# -- references ---------------------------------------------------------------------

REFUSED_AT_EVERY_STAGE = [
    b'{"zq":1,"zq":2}',  # after the duplicate name
    b'{"zq":[true,"zq",1.5,{"zq":null}',  # at the end, containers open
    b'{"zq":true} x',  # after the root value
    b'{"zq":"zq"',
    b'[{"zq":1},{"zq":2,"zq":3}]',
    b'{"zq":[1,2.25,"zq",false] , "q":}',
    b'{"zq":{"zq":{"zq":' + b'[' * 40 + b"1" + b',' * 3,
]


def test_refusals_keep_reference_counts(impl):
    name = next(iter(impl.decode(b'{"zq":1}')))  # the native twin hands out its cached name
    gc.collect()  # earlier tests' garbage (holding True, False, None) goes first, not during the loop
    gc.disable()
    try:
        before = [sys.getrefcount(obj) for obj in (name, True, False, None)]
        for _ in range(200):
            for doc in REFUSED_AT_EVERY_STAGE:
                with pytest.raises(DecodeError):
                    impl.decode(doc)
            impl.decode(b'{"zq":[true,false,null,"zq"]}')
        after = [sys.getrefcount(obj) for obj in (name, True, False, None)]
    finally:
        gc.enable()
    # A reference kept (or dropped) by any of the 1,600 decodes would move a count by >= 200;
    # the interpreter's own use of None may move it by a few.
    assert after[:3] == before[:3] and abs(after[3] - before[3]) < 50

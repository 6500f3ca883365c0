"""The native decoder's fast paths give exactly what the reference reader gives.

Each shortcut of ``native/decoder.pxi`` and ``native/decoder_scan.h`` is driven across its
edges on both twins (the pure twin is the reference): runs of 3-byte UTF-8 characters read
two at a time, member names found in the name cache, duplicate names checked against an
object's earlier names one by one (up to 12) or by the dict when the object closes (past 12:
still reported first, at the repeated name, whatever comes after it), and containers built
when they close (the JSON pointer of an error inside them).
"""

import json

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from ajpcore import DecodeError
from ajpcore.strategies import json_characters

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

LINEAR_NAMES = 12  # native/decoder.pxi: names compared one by one up to this many


def outcome(impl, data, **kwargs):
    """Value (as repr) or error (message, position, line, column, pointer) of one decode."""
    try:
        return "ok", repr(impl.decode(data, **kwargs))
    except DecodeError as exc:
        return "error", str(exc), exc.pos, exc.lineno, exc.colno, exc.pointer


def agree(twins, data, **kwargs):
    native, pure = twins
    got = outcome(native, data, **kwargs)
    assert got == outcome(pure, data, **kwargs)
    return got


# -- runs of 3-byte characters ----------------------------------------------------

# Every lead byte E0..EF, with the edges of the second byte's range (E0: A0..BF, ED: 80..9F)
# and the neighbours of the 3-byte noncharacters (lead EF).
THREE_BYTE = st.one_of(
    st.integers(0x0800, 0x0FFF),  # E0
    st.integers(0x1000, 0xCFFF),  # E1..EC
    st.integers(0xD000, 0xD7FF),  # ED, below the surrogates
    st.integers(0xE000, 0xEFFF),  # EE
    st.integers(0xF000, 0xFDCF),  # EF, below U+FDD0
    st.integers(0xFDF0, 0xFFFD),  # EF, between the noncharacters
    st.sampled_from([0x0800, 0x0FFF, 0xD7FF, 0xE000, 0xFDCF, 0xFDF0, 0xFFFD, 0x4E00, 0x9FA5, 0x3001, 0xFF0C]),
).map(chr)
OTHER = st.sampled_from(["a", " ", "\n", '"', "\\", "\u00e9", "\U0001F600", "/"])
MOSTLY_THREE_BYTE = st.lists(st.one_of(THREE_BYTE, THREE_BYTE, THREE_BYTE, OTHER), max_size=40).map("".join)


@SETTINGS
@given(prefix=st.integers(0, 9), body=MOSTLY_THREE_BYTE, ensure_ascii=st.booleans())
@example(prefix=0, body="\u4e00" * 17, ensure_ascii=False)
@example(prefix=3, body="\u0800\ud7ff\ue000\ufdcf\ufdf0\ufffd" * 3, ensure_ascii=False)
def test_three_byte_runs_read_exactly(twins, prefix, body, ensure_ascii):
    # The ASCII prefix moves the run across every alignment of the 8-byte loads.
    text = "x" * prefix + body
    doc = json.dumps({"t": text, text: [text]}, ensure_ascii=ensure_ascii).encode()
    for impl in twins:
        assert impl.decode(doc) == {"t": text, text: [text]}


BAD_BYTES = [0x00, 0x22, 0x5C, 0x7F, 0x80, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]


@SETTINGS
@given(prefix=st.integers(0, 9), run=st.lists(THREE_BYTE, min_size=1, max_size=24).map("".join), data=st.data())
def test_a_broken_byte_in_a_three_byte_run_is_refused_where_the_reader_refuses_it(twins, prefix, run, data):
    raw = bytearray(json.dumps(["x" * prefix + run], ensure_ascii=False).encode())
    at = data.draw(st.integers(2 + prefix, len(raw) - 3))
    raw[at] = data.draw(st.sampled_from(BAD_BYTES))
    agree(twins, bytes(raw))


FORBIDDEN_3 = {
    b"\xed\xa0\x80": "invalid UTF-8",  # U+D800 spelled raw: a surrogate
    b"\xed\xbf\xbf": "invalid UTF-8",  # U+DFFF
    b"\xe0\x80\x80": "invalid UTF-8",  # overlong NUL
    b"\xe0\x9f\xbf": "invalid UTF-8",  # overlong U+07FF
    b"\xef\xb7\x90": "noncharacter `U+FDD0` is not allowed",
    b"\xef\xb7\xaf": "noncharacter `U+FDEF` is not allowed",
    b"\xef\xbf\xbe": "noncharacter `U+FFFE` is not allowed",
    b"\xef\xbf\xbf": "noncharacter `U+FFFF` is not allowed",
}


@SETTINGS
@given(
    prefix=st.integers(0, 9),
    before=st.lists(THREE_BYTE, max_size=12).map("".join),
    after=st.lists(THREE_BYTE, max_size=12).map("".join),
    bad=st.sampled_from(sorted(FORBIDDEN_3)),
)
def test_a_forbidden_three_byte_sequence_inside_a_run_is_refused_where_it_starts(twins, prefix, before, after, bad):
    head = ('["' + "x" * prefix + before).encode()
    doc = head + bad + (after + '"]').encode()
    result = agree(twins, doc)
    assert result[:3] == ("error", f"JSON is malformed: {FORBIDDEN_3[bad]} (byte {len(head)})", len(head))


# -- member names ----------------------------------------------------------------

ascii_names = st.text(st.characters(min_codepoint=0x20, max_codepoint=0x7E), max_size=80)
names = st.one_of(ascii_names, st.text(json_characters, max_size=20))


@SETTINGS
@given(keys=st.lists(names, min_size=1, max_size=30, unique=True), again=st.integers(1, 3))
@example(keys=["a" * 64, "a" * 65, "a" * 63, ""], again=2)
def test_member_names_read_back_across_documents(twins, keys, again):
    # The same names over and over (the cache serves them), at every length around its limit.
    value = {k: i for i, k in enumerate(keys)}
    doc = json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()
    for impl in twins:
        for _ in range(again):
            got = impl.decode(doc)
            assert got == value
            assert list(got) == keys


@pytest.mark.parametrize("doc", [b'{"a":1}', b'{"ab":[]}', b'{"":{"b":2}}', b'{"abcdefg":0}'])
def test_names_near_the_end_of_the_document(twins, doc):
    # Fewer than 8 bytes left after the opening quote: the scan's byte-at-a-time tail.
    assert agree(twins, doc) == ("ok", repr(json.loads(doc)))
    assert agree(twins, doc[:-1])[0] == "error"


@st.composite
def objects_with_a_duplicate(draw):
    """Members of one object (some names escaped), a copy of an earlier name inserted at a later position."""
    keys = draw(st.lists(names, min_size=1, max_size=40, unique=True))
    members = [json.dumps(k, ensure_ascii=draw(st.booleans())) + ":" + str(i) for i, k in enumerate(keys)]
    at = draw(st.integers(1, len(members)))
    name = keys[draw(st.integers(0, at - 1))]
    members.insert(at, json.dumps(name, ensure_ascii=draw(st.booleans())) + ":-1")
    return members, at, name


@SETTINGS
@given(case=objects_with_a_duplicate())
@example(case=([f'"k{i}":{i}' for i in range(LINEAR_NAMES)] + ['"k0":-1'], LINEAR_NAMES, "k0"))
@example(case=([f'"k{i}":{i}' for i in range(LINEAR_NAMES + 1)] + ['"\\u006b0":-1'], LINEAR_NAMES + 1, "k0"))
def test_a_duplicate_name_is_refused_at_its_name_in_objects_of_any_size(twins, case):
    members, at, name = case
    doc = ("{" + ",".join(members) + "}").encode()
    pos = len(("{" + ",".join(members[:at]) + ",").encode())
    result = agree(twins, doc)
    assert result[0] == "error"
    assert result[2] == pos
    assert result[1].startswith("JSON is malformed: duplicate member name")
    # Allowed, the last value wins at the first name's place: what json (a dict) does.
    assert agree(twins, doc, allow_duplicate_keys=True) == ("ok", repr(json.loads(doc)))


@pytest.mark.parametrize("size", [1, LINEAR_NAMES - 1, LINEAR_NAMES, LINEAR_NAMES + 1, 40])
def test_unique_names_pass_in_objects_of_any_size(twins, size):
    value = {f"k{i}": [i, {f"k{j}": j for j in range(size)}] for i in range(size)}
    doc = json.dumps(value).encode()
    for impl in twins:
        assert impl.decode(doc) == value


def _wide(names, extra="", indent=""):
    """An object of ``names`` (each ``"name":index``), then ``extra`` members, the separators indented."""
    sep = "," + ("\n" + indent if indent else "")
    members = [f'"{name}":{i}' for i, name in enumerate(names)] + ([extra] if extra else [])
    return "{" + sep.join(members) + "}"


WIDE = [f"k{i}" for i in range(LINEAR_NAMES + 8)]
AFTER_A_REPEAT = [
    "",                                               # nothing: found when the object closes
    '"x":tru',                                        # a bad literal later in the same object
    '"x":[1,2,{"y":1,"y":2}]',                        # a repeat in a small object inside it
    '"x":' + _wide(WIDE + ["k13"]),                   # a repeat in a wide object inside it, closed first
    '"x":[1,',                                        # the end of the data
    '"x":"\\ud800"',                                  # a lone surrogate
    '"x":1e999',                                      # a number binary64 cannot hold
    '"k2"',                                           # a later repeat whose colon is missing
]


@pytest.mark.parametrize("after", AFTER_A_REPEAT)
@pytest.mark.parametrize("indent", ["", "    "])
@pytest.mark.parametrize("repeat", [0, LINEAR_NAMES - 1, LINEAR_NAMES, LINEAR_NAMES + 2])
def test_a_repeat_past_the_linear_names_is_the_first_problem_reported(twins, after, indent, repeat):
    """Past 12 names a repeat is found when the object closes (native twin), yet reported as
    the pure twin does when it reads it: at its byte, before anything that comes after it."""
    names = WIDE[:LINEAR_NAMES + 3] + [WIDE[repeat]] + WIDE[LINEAR_NAMES + 3:]
    text = _wide(names, after, indent)
    doc = ("[true, " + text + "]").encode()
    result = agree(twins, doc)
    assert result[0] == "error"
    assert result[1] == f"JSON is malformed: duplicate member name `{WIDE[repeat]}` (byte {result[2]})"
    assert doc[result[2]:].startswith(f'"{WIDE[repeat]}":{LINEAR_NAMES + 3}'.encode())
    assert result[5] == "/1"


def test_a_repeat_in_an_outer_wide_object_precedes_one_in_an_inner_object(twins):
    inner = _wide(WIDE + ["k14"])                     # its own repeat, found first by the native twin
    doc = ("{" + ",".join(f'"{n}":{i}' for i, n in enumerate(WIDE)) + ',"k15":0,"z":' + inner + "}").encode()
    result = agree(twins, doc)
    assert result[1].startswith("JSON is malformed: duplicate member name `k15`")
    assert result[5] == ""


@pytest.mark.parametrize("size", [LINEAR_NAMES + 1, 60])
def test_wide_pretty_printed_objects_decode_as_json_does(twins, size):
    value = {"rows": [{f"member_{k}": [k, None, {"v": k}] for k in range(size)} for _ in range(3)]}
    for indent in (1, 4, 17):
        doc = json.dumps(value, indent=indent).encode()
        assert agree(twins, doc) == ("ok", repr(value))
        assert agree(twins, doc, allow_duplicate_keys=True) == ("ok", repr(value))


# -- containers built when they close --------------------------------------------

@pytest.mark.parametrize(
    "doc, pointer",
    [
        (b'[1,2,{"a":[3,x]}]', "/2/a"),
        (b'{"a":{"b":[0,1,{"c":tru}]}}', "/a/b/2"),
        (b'{"a":[[],{},[[1],[2,[3,]]]]}', "/a/2/1/1"),
        (b'[' + b",".join(b'{"k%d":%d}' % (i, i) for i in range(30)) + b',{"x":[1,}]', "/30/x"),
        (b'{' + b",".join(b'"k%d":%d' % (i, i) for i in range(20)) + b',"z":{"y":[nul]}}', "/z/y"),
    ],
)
def test_an_error_inside_open_containers_has_their_path(twins, doc, pointer):
    result = agree(twins, doc)
    assert result[0] == "error"
    assert result[5] == pointer


@SETTINGS
@given(depth=st.integers(1, 40), data=st.data())
def test_wide_and_deep_documents_read_back(twins, depth, data):
    width = data.draw(st.integers(0, int(2000 ** (1 / depth)) - 1))  # at most 2000 leaves
    value = data.draw(st.sampled_from([None, 0, "s", 1.5, "\u4e00\u4e01"]))
    for level in range(depth):
        if data.draw(st.booleans()):
            value = [value] * (width + 1)
        else:
            value = {f"n{level}_{i}": value for i in range(width + 1)}
    doc = json.dumps(value).encode()
    for impl in twins:
        assert impl.decode(doc) == value


# -- plain ints (at most 15 digits) and the literals, read in one pass ------------

_DIGITS = "123456789012345678"
NUMBER_TEXTS = sorted(
    {sign + _DIGITS[:k] + tail for sign in ("", "-") for k in range(1, 18) for tail in ("", ".5", "e3", "E-1", "0")}
    | {"0", "-0", "00", "-00", "01", "-01", "0.", "1.", "1e", "1e+", "-", "--1", "-a", "0x1", "1a", "999999999999999",
       "1000000000000000", "-999999999999999", "9007199254740993", "0e0", "-0.0"}
)
LITERAL_TEXTS = ["true", "false", "null", "tru", "fals", "nul", "t", "f", "n", "trUe", "falsE", "nulL", "nullx", "truee"]


@pytest.mark.parametrize("text", NUMBER_TEXTS + LITERAL_TEXTS)
@pytest.mark.parametrize("where", ["{}", "[{}]", '{"k":{}}', "[{},1]", "[1,{}]", '{"a":{},"b":2}'])
def test_numbers_and_literals_at_every_end_read_exactly(twins, text, where):
    # Alone (the document ends right after), and inside containers (a `,`, `]` or `}` follows).
    doc = where.replace("{}", text, 1).encode()
    agree(twins, doc)
    agree(twins, text.encode())
    agree(twins, (text + " ").encode())

"""The native decoder's windowed number reader and inline member path give exactly what the reference reads.

Driven on both twins (the pure twin, ``float(text)`` and ``int(text)`` underneath, is the
reference).  What is driven:

- ``ajpcore_scan_number`` (native/decoder_numbers.h): a number with 64 bytes of document
  after it is read in a window (one 32-byte digit mask, no bounds checks), nearer the end
  by the general path; digit runs of every length 1..25 in the int part, the fraction and
  the exponent, around the 19-significant-digit and 8-exponent-digit limits, at every
  distance from the document's end, with the refusals right after each part.
- The usual member (native/decoder.pxi ``_parse_key``): a short ASCII name (at most 15
  bytes, ``ajpcore_short_name``) found in the name cache by its bytes, read inline; every
  other member (whitespace, a 16th byte, an escape, non-ASCII text, a name whose hash bit
  an earlier name of its object set, the name stack full) through the full reader from
  the same byte.
- Every refusal at every offset of small documents that use both paths.
- The collector's view of a large decoded document: every container tracked exactly when
  the pure twin's (json's) is.
"""

import gc
import json

import pytest

from decode.test_fast_paths_agree_with_the_reference import LINEAR_NAMES, agree

WINDOW = 64  # native/decoder_numbers.h AJPCORE_NUMBER_WINDOW
SHORT_NAME = 15  # native/decoder_scan.h AJPCORE_SHORT_NAME
TREE_INLINE = 64  # native/decoded_tree.pxi: names and values held inside the parser


def digits(count, first="1"):
    """``count`` digits starting with ``first`` (no leading zero unless ``first`` is 0)."""
    return (first + "2345678909876543210123456789" * 2)[:count]


# -- numbers: every run length, in the window and at the end ---------------------------

EXPONENTS = ["", "e5", "E-12", "e+308", "e-300", "e12345678", "e123456789", "E0000000001"]


@pytest.mark.parametrize("sign", ["", "-"])
@pytest.mark.parametrize("whole", list(range(1, 26)))
def test_every_int_and_fraction_length_reads_exactly(twins, sign, whole):
    for fraction in range(0, 26):
        for exponent in EXPONENTS if fraction in (0, 1, 15, 16, 17, 18) else ["", "e5"]:
            text = sign + digits(whole) + ("." + digits(fraction, "9") if fraction else "") + exponent
            # In the window (a long document follows) and at the end of the document.
            agree(twins, f"[{text},{' ' * WINDOW}1]".encode())
            agree(twins, f"[{text}]".encode())


@pytest.mark.parametrize("zeros", list(range(0, 24)))
def test_fraction_leading_zeros_after_zero_read_exactly(twins, zeros):
    # "0." then zeros: not significant, so up to 19 digits after them stay in the one pass.
    for count in (1, 2, 8, 17, 19, 20):
        for sign in ("", "-"):
            text = f"{sign}0.{'0' * zeros}{digits(count, '7')}"
            agree(twins, f"[{text},{' ' * WINDOW}1]".encode())
            agree(twins, f"[{text}]".encode())


@pytest.mark.parametrize("count", list(range(1, 12)))
def test_exponents_of_every_length_read_exactly(twins, count):
    for mantissa in ("1", "4.5", "0.17747073830020255", "-2.5"):
        for sign in ("", "+", "-"):
            for first in ("0", "1", "3"):
                text = f"{mantissa}e{sign}{digits(count, first)}"
                agree(twins, f"[{text},{' ' * WINDOW}1]".encode())
                agree(twins, f"[{text}]".encode())


SHAPES = [
    "4.847500628187587e+30", "0.17747073830020255", "-9007199254740991", "9007199254740992", "9007199254740993",
    "18014398509481984", "18014398509481985", "123456789012345678", "1234567890123456789", "12345678901234567890",
    "1700671607911", "1e5", "0.000000000000000000001234", "-0", "0", "7", "-7.25", "1.7976931348623159e308",
    "2.4703282292062328e-324", "1.", "1e", "1e+", "01", "-01", "-", "1.5e+x", "0.5.5", "1.5E-", "--1", "-x",
]


@pytest.mark.parametrize("text", SHAPES)
def test_numbers_at_every_distance_from_the_end(twins, text):
    # The window needs 64 bytes after the number's first digit: every distance from 0 to
    # past it, with the number alone, last in an array, and followed by its delimiter.
    for pad in range(0, WINDOW + 8):
        agree(twins, (text + " " * pad).encode())
        agree(twins, ("[" + text + "]" + " " * pad).encode())
        agree(twins, ('{"n":' + text + "}" + " " * pad).encode())


@pytest.mark.parametrize("text", SHAPES[:12])
def test_a_stop_byte_at_every_position_after_the_number(twins, text):
    # Whatever follows a number's digits ends it, or refuses it where the reader refuses.
    for at in range(len(text) + 1):
        for byte in (".", "e", "E", "+", "-", "x", ",", "]", " ", "0", "\x00", "\u00e9"):
            body = text[:at] + byte + text[at:]
            agree(twins, f"[{body},{' ' * WINDOW}1]".encode())


# -- member names: the usual member and everything else ----------------------------------


@pytest.mark.parametrize("size", list(range(0, SHORT_NAME + 6)))
def test_names_of_every_length_near_the_end(twins, size):
    name = "".join(chr(0x61 + (k * 7) % 26) for k in range(size))
    for pad in range(0, 20):
        # Twice: the first read may fill the name cache, the second reads from it.
        for _ in range(2):
            agree(twins, ('{"' + name + '":1}' + " " * pad).encode())
            agree(twins, ('{"' + name + '":1,"z' + name + '":2}' + " " * pad).encode())
            agree(twins, ('{"' + name + '" :1}' + " " * pad).encode())
            agree(twins, ('{ "' + name + '":1}' + " " * pad).encode())


STOPS = ["\\n", "\\u0041", "\\\"", "\u00e9", "\u6771", "\U0001F680", "\x1f", "\x7f", "\\x", "\\"]


@pytest.mark.parametrize("stop", STOPS)
def test_a_stop_at_every_position_of_a_name(twins, stop):
    for size in (0, 1, 7, 8, 14, 15, 16, 17):
        base = digits(size, "a").replace("0", "q")
        for at in range(size + 1):
            name = base[:at] + stop + base[at:]
            for doc in ('{"' + name + '":1}', '{"a":0,"' + name + '":1}', '[{"' + name + '":1},{"' + name + '":2}]'):
                agree(twins, doc.encode("utf-8", "surrogatepass"))
                agree(twins, (doc + " " * 24).encode("utf-8", "surrogatepass"))


@pytest.mark.parametrize("size", [1, LINEAR_NAMES - 1, LINEAR_NAMES, LINEAR_NAMES + 1, TREE_INLINE // 2 - 1, TREE_INLINE // 2, TREE_INLINE // 2 + 1, 70])
def test_records_of_short_names_with_a_duplicate_anywhere(twins, size):
    names = [f"k{i}" for i in range(size)]
    records = [{n: i for i, n in enumerate(names)} for _ in range(3)]
    doc = json.dumps(records, separators=(",", ":")).encode()
    assert agree(twins, doc)[0] == "ok"
    for at in range(size):
        # The last record repeats the name at ``at`` at its end: refused at that name.
        dup = doc[:-2] + b',"' + names[at].encode() + b'":0}]'
        assert agree(twins, dup)[0] == "error"
        assert agree(twins, dup, allow_duplicate_keys=True)[0] == "ok"


def test_names_whose_hash_bits_collide_pass_and_duplicates_are_found(twins):
    # 200 distinct short names: every object of 40 of them has names sharing a hash bit
    # (64 bits), so the inline path hands some of them to the full reader.
    names = [f"n{i:03d}" for i in range(200)]
    for start in range(0, 200, 40):
        chunk = names[start:start + 40]
        doc = json.dumps({n: i for i, n in enumerate(chunk)}, separators=(",", ":")).encode()
        assert agree(twins, doc)[0] == "ok"
        assert agree(twins, doc[:-1] + b',"' + chunk[7].encode() + b'":1}')[0] == "error"


def test_duplicate_names_allowed_keep_the_last_value_on_both_paths(twins):
    for name in ("a", "abcdefghijklmno", "abcdefghijklmnop", "caf\u00e9", "x\\u0041", "\u6771\u4eac"):
        doc = ('{"' + name + '":1,"b":[1],"' + name + '":{"c":2},"' + name + '":3}').encode()
        assert agree(twins, doc, allow_duplicate_keys=True)[0] == "ok"
        assert agree(twins, doc)[0] == "error"


# -- every refusal at every offset --------------------------------------------------------

SMALL_DOCS = [
    '{"id":1700671607911,"x":4.847500628187587e+30,"y":-0.5,"values":[0.17747073830020255,1e5,-7],"ok":true}',
    '[{"name":"abc","score":12.5,"tags":["a","b"],"none":null},{"name":"abc","score":-3,"tags":[],"none":false}]',
    '{"a":{"b":{"c":[1,2,{"d":"e"}]}},"f":[[],{}],"g":"\\u00e9\\n","h":0.000001234e-5}',
]


@pytest.mark.parametrize("doc", SMALL_DOCS)
def test_every_truncation_and_every_corrupted_byte(twins, doc):
    raw = doc.encode()
    assert agree(twins, raw)[0] == "ok"
    for end in range(len(raw)):
        agree(twins, raw[:end])
        agree(twins, raw[:end] + b" " * WINDOW)
    for at in range(len(raw)):
        for byte in (b"x", b"0", b"-", b".", b"e", b'"', b",", b":", b"}", b"]", b" ", b"\x00", b"\xff"):
            agree(twins, raw[:at] + byte + raw[at + 1:])


# -- the collector's view of a large document ------------------------------------------------


def _containers(value):
    found = [value]
    for item in value.values() if isinstance(value, dict) else value:
        if isinstance(item, (dict, list)):
            found.extend(_containers(item))
    return found


def test_large_documents_leave_containers_tracked_as_the_reference_does(twins):
    native, pure = twins
    records = [
        {"id": i, "tags": ["a", str(i)], "point": {"x": i / 3, "y": -i}, "empty": {}, "nothing": [],
         "deep": {"list": [{"v": i}]}}
        for i in range(400)
    ]
    doc = json.dumps({"records": records, "pad": "x" * 20000}).encode()
    assert len(doc) >= 16384  # the settled path (native/decoded_tree.pxi _GC_QUIET_BYTES)
    got, want = native.decode(doc), pure.decode(doc)
    assert got == want
    tracked = [gc.is_tracked(c) for c in _containers(got)]
    assert tracked == [gc.is_tracked(c) for c in _containers(want)]
    # CPython <= 3.13 tracks a dict only once a container goes in, so a dict of atoms is not
    # tracked; 3.14 tracks every dict from its creation, as every list.
    atoms_untracked = not gc.is_tracked({"x": 1})
    assert any(tracked) and all(tracked) != atoms_untracked

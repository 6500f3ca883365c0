"""ASCII strings with escapes, read in one pass, give exactly what the reference reader gives.

native/decoder_ascii_escapes.h reads a string whose first stop is a backslash in one pass while
it stays ASCII (plain runs 32 bytes a step at the avx2 level, 16 at sse2, 8 at the scalar
level; escapes of ASCII characters); at anything else (a non-ASCII byte or escape, a control
character, an invalid escape, the document's end, AJPCORE_ESC_CAP characters after the first
escape) the two-step reader goes on from where it stopped.  Driven on both twins (the pure twin
is the reference, json.loads where it defines the value): escapes at every position of the
blocks, runs around 16/32/64 bytes, strings that end with the document, every refusal at every
offset, and strings across the buffer's limit.
"""

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from decode.test_fast_paths_agree_with_the_reference import SETTINGS, agree

ESC_CAP = 4096  # native/decoder_ascii_escapes.h: characters after the first escape read in one pass

ESCAPES = ['\\n', '\\"', '\\\\', '\\/', '\\b', '\\f', '\\r', '\\t', '\\u0000', '\\u0041', '\\u007f', '\\u007F', '\\u001f']
WIDE = ['\\u0080', '\\u00e9', '\\u00ff', '\\u0100', '\\u6771', '\\ud83d\\ude80', 'é', '東', '🚀']
BAD = ['\\x', '\\u', '\\u00', '\\u00g0', '\\u0g00', '\\U0041', '\\ud800', '\\udc00', '\\ud800\\u0041',
       '\\ufdd0', '\\uffff', '\x01', '\x1f', '\x7f', '\\']
RUNS = [0, 1, 7, 8, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100]


def body(n, seed=0):
    """n plain ASCII bytes (no quote, backslash or control character)."""
    letters = "abcdefghijklmnopqrstuvwxyz ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.,;:!?'-_~{}[]"
    return "".join(letters[(seed + 7 * k) % len(letters)] for k in range(n))


def docs(text):
    """The string alone (ending with the document), in an array, and as a member's value and name."""
    s = '"' + text + '"'
    return [s, "[" + s + "]", '{"k":' + s + "}", "{" + s + ":1}", "[" + s + "," + s + "]"]


def check(twins, text):
    for doc in docs(text):
        raw = doc.encode()
        got = agree(twins, raw)
        try:
            want = json.loads(doc)
        except ValueError:
            continue
        if got[0] == "ok":
            assert got[1] == repr(want)


@pytest.mark.parametrize("before", RUNS)
@pytest.mark.parametrize("after", RUNS)
def test_escapes_between_runs_of_every_length(twins, before, after):
    for esc in ESCAPES:
        check(twins, body(before) + esc + body(after, 3))
        check(twins, body(before) + esc + body(after, 5) + esc + esc)


@pytest.mark.parametrize("at", range(0, 70))
def test_an_escape_at_every_position_of_the_blocks(twins, at):
    # the first escape, then a second one at every offset of the following 32- and 64-byte steps
    check(twins, "\\n" + body(at) + '\\"' + body(40, 1))
    check(twins, body(at) + "\\t" + body(70 - at, 2))


@pytest.mark.parametrize("after", RUNS)
def test_wider_text_after_escapes_goes_on_from_where_the_pass_stopped(twins, after):
    for wide in WIDE:
        for lead in ("\\n", "\\n" + body(5) + "\\u0041"):
            check(twins, body(3) + lead + body(after) + wide + body(9, 4))
            check(twins, lead + body(after) + wide + "\\n" + wide + body(40, 2))


@pytest.mark.parametrize("after", RUNS)
def test_refusals_after_escapes_are_the_reference_readers(twins, after):
    for bad in BAD:
        for lead in ("\\n", "\\\\" + body(33) + "\\/"):
            check(twins, body(2) + lead + body(after) + bad + body(6))


def test_every_truncation_and_every_bad_byte(twins):
    text = body(20) + "\\n" + body(37, 1) + '\\"\\u0041' + body(70, 2) + "\\t"
    raw = ('["' + text + '"]').encode()
    for cut in range(len(raw)):
        agree(twins, raw[:cut])
    for at in range(2, len(raw) - 2):
        for b in (0x01, 0x1F, 0x80, 0xC3, 0xFF, 0x5C, 0x22):
            bad = bytearray(raw)
            bad[at] = b
            agree(twins, bytes(bad))


@pytest.mark.parametrize("delta", [-40, -33, -32, -31, -17, -16, -15, -2, -1, 0, 1, 2, 15, 16, 17, 33, 100])
def test_strings_around_the_one_pass_buffer(twins, delta):
    # ESC_CAP characters after the first escape are read in one pass; more go on in two steps.
    n = ESC_CAP + delta
    for tail in ("", "\\n", "é", "\\u00e9", "\x01", "\\x"):
        check(twins, body(10) + "\\n" + body(n - 1) + tail + body(3))
        check(twins, body(10) + "\\n" + body(n - 40) + "\\t" * 39 + tail)
    check(twins, "\\n" * n + body(5))


@SETTINGS
@given(
    text=st.text(st.sampled_from(list("ab z~\"\\\n\t\x00\x1f\x7f") + ["é", "東", "🚀"]), max_size=120),
    ensure_ascii=st.booleans(),
)
def test_any_text_with_escapes(twins, text, ensure_ascii):
    doc = json.dumps([text, {text: text}], ensure_ascii=ensure_ascii)
    assert agree(twins, doc.encode()) == ("ok", repr([text, {text: text}]))


@SETTINGS
@given(
    text=st.text(st.sampled_from(list("ab\"\\\n")), min_size=1, max_size=100),
    data=st.data(),
)
def test_any_text_with_one_bad_byte(twins, text, data):
    raw = bytearray(json.dumps([text]).encode())
    at = data.draw(st.integers(2, len(raw) - 1))
    raw[at] = data.draw(st.sampled_from([0x00, 0x1F, 0x22, 0x5C, 0x75, 0x78, 0x80, 0xC3, 0xED, 0xFF]))
    agree(twins, bytes(raw))

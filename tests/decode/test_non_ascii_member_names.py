"""Non-ASCII member names and the widened copy of ASCII runs give exactly what the reference gives.

Driven on both twins (the pure twin is the reference).  The native decoder keeps short
member names that are not plain ASCII (UTF-8 without escapes, at most 64 bytes) in a cache
keyed by their bytes (native/decoder_names.pxi ``_text_key``): a hit must be the str a miss builds,
and bytes that differ from a cached name (invalid UTF-8, a control character, an escape, one
byte more) must still be checked and refused as before.  Strings of 2- and 4-byte kinds copy
runs of ASCII eight bytes at a time into the str (``AJPCORE_WIDEN8``), which writes past the
run only while the str has room: lengths around the end of the str are the edge.
"""

import json

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from decode.test_fast_paths_agree_with_the_reference import SETTINGS, agree

KEY_CACHE_MAX_LEN = 64  # native/decoder_names.pxi: longest name body (bytes) either name cache keeps
TEXT_KEY_CACHE_SIZE = 512  # native/decoder_names.pxi: slots of the text-name cache

NAME_CHARS = st.one_of(
    st.sampled_from(["a", "_", " ", "é", "ß", "ÿ", "東", "京", "、", "\U0001F44D", "\U0001F3FD", "\u200d", "\U0001F680"]),
    # Noncharacters (U+FDD0..U+FDEF, U+xFFFE/U+xFFFF) are refused by decode (RFC 7493 §2.1), which
    # json.loads, the expected value here, admits: they are drawn by the refusal tests instead.
    st.characters(min_codepoint=0x80, max_codepoint=0x10FFFF, exclude_categories=("Cs",)).filter(
        lambda c: not (0xFDD0 <= ord(c) <= 0xFDEF or ord(c) & 0xFFFE == 0xFFFE)
    ),
)
NAMES = st.text(NAME_CHARS, min_size=1, max_size=24)


def doc(*names, value=1):
    return json.dumps({n: value for n in names}, ensure_ascii=False).encode("utf-8")


@SETTINGS
@given(names=st.lists(NAMES, min_size=1, max_size=20, unique=True), repeat=st.integers(1, 3))
@example(names=["é"], repeat=2)
@example(names=["x" * 62 + "é"], repeat=2)  # 64 bytes: the longest cached
@example(names=["x" * 63 + "é"], repeat=2)  # 65 bytes: never cached
@example(names=["👍🏽", "👍🏾", "👩\u200d💻"], repeat=3)
def test_non_ascii_names_repeated_within_and_across_documents(twins, names, repeat):
    data = json.dumps([{n: i for i, n in enumerate(names)}] * repeat, ensure_ascii=False).encode("utf-8")
    for _ in range(2):  # the second decode finds every short name in the cache
        got = agree(twins, data)
        assert got == ("ok", repr(json.loads(data)))


@pytest.mark.parametrize(
    "cached, other",
    [
        (b'{"\xc3\xa9":1}', b'{"\xc3\x28":1}'),  # same length, invalid UTF-8
        (b'{"\xc3\xa9x":1}', b'{"\xc3\xa9\x01":1}'),  # a control character where the cached name has x
        (b'{"\xc3\xa9":1}', b'{"\xc3\xa9\\n":1}'),  # the cached name and an escape
        (b'{"\xc3\xa9":1}', b'{"\\u00e9":1}'),  # the same name written with an escape
        (b'{"\xc3\xa9":1}', b'{"\xc3\xa9\xc3":1}'),  # one byte more, a truncated sequence
        (b'{"\xef\xbf\xbd":1}', b'{"\xef\xbf\xbe":1}'),  # U+FFFD cached, U+FFFE a noncharacter
        (b'{"\xed\x9f\xbf":1}', b'{"\xed\xa0\x80":1}'),  # U+D7FF cached, a surrogate's bytes
        (b'{"\xc3\xa9":1}', b'{"\xc3\xa9'),  # the end of the document inside the name
    ],
)
def test_bytes_unlike_a_cached_name_are_checked(twins, cached, other):
    assert agree(twins, cached)[0] == "ok"
    for _ in range(2):
        agree(twins, other)


@pytest.mark.parametrize("allow", [False, True])
def test_duplicate_non_ascii_names_refused_when_cached(twins, allow):
    data = '{"東京":1,"é":2,"東京":3}'.encode("utf-8")
    for _ in range(3):
        got = agree(twins, data, allow_duplicate_keys=allow)
        assert (got[0] == "ok") == allow


def test_more_names_than_cache_slots(twins):
    names = [f"n{i}é" for i in range(3 * TEXT_KEY_CACHE_SIZE)]
    data = json.dumps([{n: i} for i, n in enumerate(names)], ensure_ascii=False).encode("utf-8")
    for _ in range(2):
        assert agree(twins, data) == ("ok", repr(json.loads(data)))


def test_cached_name_is_the_same_str(twins):
    native, _ = twins
    first = native.decode('{"名前":1}'.encode("utf-8"))
    second = native.decode('[{"名前":2}]'.encode("utf-8"))
    (a,), (b,) = first, second[0]
    assert a == b == "名前" and hash(a) == hash("名前")


# -- ASCII runs inside 2- and 4-byte strings ----------------------------------------------

WIDE = st.sampled_from(["東", "\U0001F600", "é", "\\n", "\\u00e9", "\\ud83d\\ude00"])
ASCII_RUN = st.text("abcdefghij klmnopqrstuvwxyz0123456789", min_size=0, max_size=20)


@SETTINGS
@given(parts=st.lists(st.tuples(ASCII_RUN, WIDE), min_size=1, max_size=6), tail=ASCII_RUN)
@example(parts=[("", "東")], tail="abcdefg")  # 7 ASCII after the last wide character
@example(parts=[("", "\U0001F600")], tail="abcdefgh")  # 8: one block, no room past it
@example(parts=[("abcdefgh", "\U0001F600")], tail="")
@example(parts=[("a", "東"), ("bcdefghij", "\U0001F600")], tail="k")
def test_ascii_runs_in_wide_strings(twins, parts, tail):
    text = "".join(run + wide for run, wide in parts) + tail
    data = ('["' + text + '",{"k":"' + text + '"}]').encode("utf-8")
    got = agree(twins, data)
    assert got == ("ok", repr(json.loads(data)))

"""JSONTestSuite (nst/JSONTestSuite, test_parsing/): the verdict on every file, identical on both twins.

``y_`` files must be accepted except those I-JSON refuses on purpose (listed
below with the reason); ``n_`` files must be refused; every ``i_`` file has its
decision recorded in ``IMPLEMENTATION_DEFINED`` with the I-JSON reason.
"""

import os

import pytest

from ajpcore import DecodeError
from vector_files import vector_path

FOLDER = vector_path("jsontestsuite", "test_parsing")
FILES = sorted(os.listdir(FOLDER))

# y_ files that I-JSON (RFC 7493) refuses on purpose: the expected refusal reason.
REFUSED_ON_PURPOSE = {
    "y_object_duplicated_key.json": "duplicate member name `a`",  # RFC 7493 §2.3: names MUST be unique
    "y_object_duplicated_key_and_value.json": "duplicate member name `a`",  # even with the same value
    # RFC 7493 §2.1: strings MUST NOT contain Unicode noncharacters (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF),
    # raw or escaped; RFC 8259 only allows them.
    "y_string_escaped_noncharacter.json": "noncharacter `U+FFFF` is not allowed",  # \uFFFF
    "y_string_last_surrogates_1_and_2.json": "noncharacter `U+10FFFF` is not allowed",  # \uDBFF\uDFFF
    "y_string_nonCharacterInUTF-8_U+10FFFF.json": "noncharacter `U+10FFFF` is not allowed",  # raw F4 8F BF BF
    "y_string_nonCharacterInUTF-8_U+FFFF.json": "noncharacter `U+FFFF` is not allowed",  # raw EF BF BF
    "y_string_unicode_U+10FFFE_nonchar.json": "noncharacter `U+10FFFE` is not allowed",  # \uDBFF\uDFFE
    "y_string_unicode_U+1FFFE_nonchar.json": "noncharacter `U+1FFFE` is not allowed",  # \uD83F\uDFFE
    "y_string_unicode_U+FDD0_nonchar.json": "noncharacter `U+FDD0` is not allowed",  # \uFDD0
    "y_string_unicode_U+FFFE_nonchar.json": "noncharacter `U+FFFE` is not allowed",  # \uFFFE
}

ACCEPT = "accept"
# Every i_ file: ACCEPT, or the refusal reason, each with why under I-JSON.
IMPLEMENTATION_DEFINED = {
    # Numbers: RFC 7493 §2.2 — a number must be a binary64 value; ints must survive a JavaScript peer.
    "i_number_double_huge_neg_exp.json": ACCEPT,  # 123.456e-789 underflows to 0.0, as float() reads it
    "i_number_huge_exp.json": "number out of range for binary64",  # 0.4e0066999... overflows
    "i_number_neg_int_huge_exp.json": "number out of range for binary64",  # -1e+9999 overflows
    "i_number_pos_double_huge_exp.json": "number out of range for binary64",  # 1.5e+9999 overflows
    "i_number_real_neg_overflow.json": "number out of range for binary64",  # -123123e100000
    "i_number_real_pos_overflow.json": "number out of range for binary64",  # 123123e100000
    "i_number_real_underflow.json": ACCEPT,  # 123e-10000000 rounds to 0.0 (a binary64 value)
    "i_number_too_big_neg_int.json": "integer is not exactly representable as binary64",  # -123123123123123123123123123123
    "i_number_too_big_pos_int.json": ACCEPT,  # 100000000000000000000 is exactly the double 1e20
    "i_number_very_big_negative_int.json": "integer is not exactly representable as binary64",
    # Lone surrogate escapes: RFC 7493 §2.1 — strings MUST NOT contain surrogates that do not pair.
    "i_object_key_lone_2nd_surrogate.json": "lone surrogate escape `\\uDFAA`",
    "i_string_1st_surrogate_but_2nd_missing.json": "lone surrogate escape `\\uDADA`",
    "i_string_1st_valid_surrogate_2nd_invalid.json": "lone surrogate escape `\\uD888`",
    "i_string_incomplete_surrogate_and_escape_valid.json": "lone surrogate escape `\\uD800`",
    "i_string_incomplete_surrogate_pair.json": "lone surrogate escape `\\uDd1e`",
    "i_string_incomplete_surrogates_escape_valid.json": "lone surrogate escape `\\uD800`",
    "i_string_invalid_lonely_surrogate.json": "lone surrogate escape `\\ud800`",
    "i_string_invalid_surrogate.json": "lone surrogate escape `\\ud800`",
    "i_string_inverted_surrogates_U+1D11E.json": "lone surrogate escape `\\uDd1e`",
    "i_string_lone_second_surrogate.json": "lone surrogate escape `\\uDFAA`",
    # Encoding: RFC 7493 §2.1 / RFC 8259 §8.1 — UTF-8 only, well-formed, no byte order mark.
    "i_string_UTF-16LE_with_BOM.json": "expected a value",  # UTF-16 is not JSON text for exchange
    "i_string_UTF-8_invalid_sequence.json": "invalid UTF-8",
    "i_string_UTF8_surrogate_U+D800.json": "invalid UTF-8",  # a surrogate encoded in UTF-8
    "i_string_invalid_utf-8.json": "invalid UTF-8",
    "i_string_iso_latin_1.json": "invalid UTF-8",
    "i_string_lone_utf8_continuation_byte.json": "invalid UTF-8",
    "i_string_not_in_unicode_range.json": "invalid UTF-8",  # beyond U+10FFFF
    "i_string_overlong_sequence_2_bytes.json": "invalid UTF-8",
    "i_string_overlong_sequence_6_bytes.json": "invalid UTF-8",
    "i_string_overlong_sequence_6_bytes_null.json": "invalid UTF-8",
    "i_string_truncated-utf-8.json": "invalid UTF-8",
    "i_string_utf16BE_no_BOM.json": "expected a value",
    "i_string_utf16LE_no_BOM.json": "expected a value or `]`",
    "i_structure_UTF-8_BOM_empty_object.json": "byte order mark is not allowed",
    # Nesting: 500 levels is within the default max_depth of 512.
    "i_structure_500_nested_arrays.json": ACCEPT,
}


def read(name):
    with open(os.path.join(FOLDER, name), "rb") as f:
        return f.read()


def verdict(impl, data):
    try:
        return ACCEPT, impl.decode(data)
    except DecodeError as exc:
        return exc.reason, (str(exc), exc.pos, exc.lineno, exc.colno, exc.pointer)


def test_the_suite_is_complete():
    assert len(FILES) == 318
    assert sorted(name for name in FILES if name.startswith("i_")) == sorted(IMPLEMENTATION_DEFINED)
    assert set(REFUSED_ON_PURPOSE) <= set(FILES)


@pytest.mark.parametrize("name", [f for f in FILES if f.startswith("y_")])
def test_y_files_are_accepted(impl, name):
    reason, _ = verdict(impl, read(name))
    assert reason == REFUSED_ON_PURPOSE.get(name, ACCEPT)


@pytest.mark.parametrize("name", [f for f in FILES if f.startswith("n_")])
def test_n_files_are_refused(impl, name):
    reason, _ = verdict(impl, read(name))
    assert reason != ACCEPT


@pytest.mark.parametrize("name", [f for f in FILES if f.startswith("i_")])
def test_i_files_follow_the_recorded_decision(impl, name):
    reason, _ = verdict(impl, read(name))
    assert reason == IMPLEMENTATION_DEFINED[name]


def test_both_twins_give_identical_verdicts_values_and_errors(twins):
    native, pure = twins
    differences = []
    for name in FILES:
        data = read(name)
        got_c, got_py = verdict(native, data), verdict(pure, data)
        if repr(got_c) != repr(got_py):
            differences.append((name, got_c, got_py))
    assert differences == []

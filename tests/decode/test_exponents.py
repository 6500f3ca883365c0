"""Long digit runs against big exponents: the decimal exponent of a number is never truncated.

A number's value is its significand shifted by (explicit exponent - digits after the point).
A long run of fraction zeros moves the shift far from the exponent; both must be read exactly,
or a truncated exponent meets the run and a value beyond binary64 reads as an ordinary one
(issue 20 §2: ``0.`` + 99,999 zeros + ``1e1000000`` read as ``1.0`` natively).  Every case runs on
both twins and must agree with ``float(text)``: the same double bit for bit, or, where ``float``
gives an infinity, the same refusal at the same byte on both.
"""

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ajpcore import DecodeError

ZERO_RUNS = [1, 342, 343, 20_000, 99_999, 100_000, 123_456]


def _cases():
    """(id, text) pairs: fraction zero runs against exponents that cancel them, or nearly, or not."""
    cases = []
    for n in ZERO_RUNS:
        frac = "0." + "0" * n  # 0.<n zeros>d has the value d * 10**-(n+1)
        shift = n + 1
        for exponent, what in [
            (shift, "exactly one"),
            (shift + 308, "1e308"),
            (shift + 309, "past the largest double"),
            (shift - 323, "the smallest subnormal's decade"),
            (shift - 324, "below half the smallest subnormal"),
            (shift - 400, "underflows to zero"),
            (shift * 10, "the exponent a truncation would keep one digit of"),
            (1_000_000, "seven digits"),
            (10_000_000, "eight digits"),
            (99_999_999, "just below the native reader's exponent bound"),
            (100_000_000, "the bound"),
            (10**30, "thirty-one digits"),
        ]:
            for sign in ["", "-"]:
                for e in [exponent, -exponent]:
                    cases.append((f"{sign}0.{n}z1e{e}: {what}", f"{sign}{frac}1e{e}"))
                if exponent >= 0:
                    cases.append((f"{sign}0.{n}z1E+{exponent}: {what}", f"{sign}{frac}1E+{exponent}"))
        # A significand of 17 digits after the run: the largest double, and the next one up (refused).
        cases.append((f"0.{n}z max", f"{frac}17976931348623157e{shift + 308}"))
        cases.append((f"0.{n}z past max", f"{frac}17976931348623159e{shift + 308}"))
        # The smallest subnormal, and half of it (rounds to even: zero) and a bit more (rounds up).
        cases.append((f"0.{n}z min subnormal", f"{frac}49406564584124654e{shift - 324}"))
        cases.append((f"0.{n}z half subnormal", f"{frac}24703282292062327e{shift - 324}"))
        cases.append((f"0.{n}z over half subnormal", f"{frac}24703282292062328e{shift - 324}"))
        cases.append((f"0.{n}z smallest normal", f"{frac}22250738585072014e{shift - 308}"))
        # Leading zeros in the exponent are grammatical and change nothing.
        cases.append((f"0.{n}z1e0..0{shift}", f"{frac}1e{'0' * 40}{shift}"))
        cases.append((f"0.{n}z1e-0..0{shift * 10}", f"{frac}1e-{'0' * 40}{shift * 10}"))
        cases.append((f"0.{n}z1e+0..0{shift * 10}", f"{frac}1e+{'0' * 40}{shift * 10}"))
    for n in [20, 400, 5_000]:
        # Integer parts have no leading zeros (RFC 8259 §6), but long ones shift the other way.
        whole = "1" + "0" * n
        for exponent in [-(n - 300), -n, -(n + 323), -(n + 330), 308 - n, 309 - n, 10**7, -(10**7), 10**8, -(10**8)]:
            cases.append((f"1{n}z.0e{exponent}", f"{whole}.0e{exponent}"))
            cases.append((f"1{n}z.{n}z1e{exponent}", f"{whole}.{'0' * n}1e{exponent}"))
    for exponent in ["99999999", "100000000", "999999999999", "9" * 30, "0" * 30 + "5"]:
        for sign in ["", "-", "+"]:
            cases.append((f"1e{sign}{exponent}", f"1e{sign}{exponent}"))
            cases.append((f"0.5e{sign}{exponent}", f"0.5e{sign}{exponent}"))
            cases.append((f"0e{sign}{exponent}", f"0e{sign}{exponent}"))
    return cases


CASES = _cases()


def _bits(x):
    return struct.pack("<d", x)


def _expect(impl, text, data):
    """Decode ``data`` (which holds ``text`` at byte 1) and check it against ``float(text)``."""
    expected = float(text)
    if expected - expected != 0.0:  # an infinity: RFC 7493 §2.2 refuses it
        with pytest.raises(DecodeError) as info:
            impl.decode(data)
        assert info.value.reason == "number out of range for binary64"
        assert info.value.pos == 1
        return None
    got = impl.decode(data)
    value = got[0] if isinstance(got, list) else got
    assert type(value) is float and _bits(value) == _bits(expected), text
    return value


@pytest.mark.parametrize("text", [text for _, text in CASES], ids=[name for name, _ in CASES])
def test_long_runs_and_big_exponents_read_as_float_of_their_text(impl, text):
    _expect(impl, text, " " + text)  # str input
    _expect(impl, text, ("[" + text + "]").encode())  # bytes input, inside a container


def test_the_reported_forgery_is_refused_on_both_twins(twins):
    text = "0." + "0" * 99_999 + "1e1000000"  # true value 1e900000
    for impl in twins:
        with pytest.raises(DecodeError, match=r"number out of range for binary64 \(byte 0\)"):
            impl.decode(text)
        with pytest.raises(DecodeError, match=r"number out of range for binary64 \(byte 5\)"):
            impl.decode(b'{"a":' + text.encode() + b"}")


def test_any_value_cannot_be_forged_through_a_truncated_exponent(twins):
    """Each exponent here keeps its first six digits under a truncation at 100,000; the run of zeros
    would cancel those six digits exactly and read as the significand itself."""
    for significand, exponent, run in [("5", 1_000_000, 99_999), ("3.25", 1_000_003, 100_002), ("7", 9_999_999, 999_998)]:
        digits = significand.replace(".", "")
        text = "0." + "0" * run + digits + "e" + str(exponent)
        for impl in twins:
            with pytest.raises(DecodeError, match="number out of range for binary64"):
                impl.decode(text)
            assert impl.decode("-" + text[:-len(str(exponent))] + "-" + str(exponent)) == -0.0


@st.composite
def shifted_literals(draw):
    """A literal whose fraction run and exponent nearly cancel (the value lands anywhere from beyond
    the largest double to below the smallest subnormal), or whose exponent is huge, or whose
    exponent's leading digits alone would cancel the run (what a truncating reader gets wrong)."""
    run = draw(st.one_of(st.integers(0, 3_000), st.integers(99_990, 100_010)))
    significand = str(draw(st.integers(1, 10**19)))
    landing = draw(st.integers(-345, 310))
    kind = draw(st.sampled_from(["near", "huge", "forged"]))
    if kind == "near":
        exponent = run + len(significand) + landing
    elif kind == "huge":
        exponent = run + draw(st.integers(-(10**12), 10**12))
    else:
        exponent = int(str(max(run + len(significand) + landing, 1)) + draw(st.text("0123456789", min_size=1, max_size=3)))
    whole = draw(st.sampled_from(["0", "7", "12345678901234567890"]))
    sign = draw(st.sampled_from(["", "-"]))
    marker = draw(st.sampled_from(["e", "E", "e+"]))
    if exponent < 0:
        marker = marker[0] + "-"
    return f"{sign}{whole}.{'0' * run}{significand}{marker}{abs(exponent)}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=shifted_literals())
def test_shifted_literals_read_as_float_on_both_twins(twins, text):
    for impl in twins:
        _expect(impl, text, " " + text)

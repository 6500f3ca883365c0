"""Number text (RFC 8785 §3.2.2.3) on both twins, family by family.

The native core finds a double's shortest digits with Schubfach (native/number_format.h),
after two shortcuts (integers below 2**52, binary fractions with an exact decimal of at most
15 digits): a fast path from one product, the paper's exact three-product path when an
interval end lies within rounding error of a candidate, ties to even, the bottom of a binade,
subnormals; it writes the digits with SWAR or SSE2 words and lays them out in ECMAScript's
four forms.  The
pure twin derives the text from ``float.__repr__`` (ajpcore/_core_py/number_format.py), the
definition both must meet.  Each strategy below aims at one of those branches; every text
must also read back as the same double.  Ints within +-(2**53 - 1) are read from CPython's
digits and written by the same digit writers: ``int.__repr__`` is their oracle.

tools/check_number_format.py runs the same comparison on a hundred million doubles.
"""

import math
import re
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore.errors import EncodeError
from conftest import same_canonical

_FORMS = {
    "integer": re.compile(r"-?[1-9][0-9]*"),
    "fraction": re.compile(r"-?(0|[1-9][0-9]*)\.[0-9]*[1-9]"),
    "exponent": re.compile(r"-?[1-9](\.[0-9]*[1-9])?e[+-][1-9][0-9]{0,2}"),
}


def _from_bits(bits):
    return struct.unpack("<d", struct.pack("<Q", bits))[0]


def _form(text):
    return next(name for name, pattern in _FORMS.items() if pattern.fullmatch(text))


def _same_text(twins, x):
    native, pure = twins
    text = native._format_double(x)
    assert text == pure._format_double(x), repr(x)
    assert float(text) == x, (repr(x), text)
    return text


# -- strategies: one per branch of the digit search and the layout --------------------------

_bit_patterns = st.integers(0, 2**64 - 1).map(_from_bits).filter(math.isfinite)
_subnormals = st.integers(1, 2**52 - 1).map(_from_bits)
_short_decimals = st.builds(lambda m, e: float(f"{m}e{e}"), st.integers(1, 10**17), st.integers(-340, 320)).filter(
    lambda x: 0 < x < math.inf
)
_rounded = st.builds(round, st.floats(-1e6, 1e6), st.integers(0, 12))
# Integers: below 2**52 they are their own digits; from 2**52 the digit search runs.
_integers = st.integers(1, 2**64).map(float)
# The bottom of a binade (the rounding interval is narrower below) and its neighbours.
_binade_edges = st.builds(
    lambda e, steps, up: _nudge(math.ldexp(1.0, e), steps, up), st.integers(-1074, 1023), st.integers(0, 3), st.booleans()
)
# m / 2**j: an exact decimal of at most 15 digits skips the digit search (j <= 22), around that bound.
_binary_fractions = st.builds(
    lambda m, j: m / 2**j, st.one_of(st.integers(1, 10**4), st.integers(1, 2**53 - 1)), st.integers(1, 26)
)
# Odd c * 2**-2: halfway between two 17-digit candidates, both in the interval (the even one wins).
_ties = st.integers(0, 2**51 - 1).map(lambda t: math.ldexp(2**52 + 2 * t + 1, -2))


def _nudge(x, steps, up):
    for _ in range(steps):
        x = math.nextafter(x, math.inf if up else 0.0)
    return x


@st.composite
def _exact_interval_ends(draw):
    """c * 2**q whose rounding interval ends exactly on a decimal of the search's granularity
    (2c -+ 1 a multiple of 5**m, m = k or k + 1): the fast path's comparisons are undecided
    there and the exact path decides."""
    q = draw(st.integers(2, 80))
    k = math.floor(q * math.log10(2))
    m = draw(st.sampled_from([k, k + 1]))
    mod = 5**m
    if mod >= 2**50:
        m, mod = 0, 1
    sign = draw(st.sampled_from([1, -1]))
    first = 2**52 + ((sign * (mod + 1) // 2) - 2**52) % mod
    c = first + mod * draw(st.integers(0, (2**53 - 1 - first) // mod))
    return math.ldexp(c, q)


_doubles = st.one_of(
    _bit_patterns,
    _subnormals,
    _short_decimals,
    _rounded,
    _integers,
    _binary_fractions,
    _binade_edges,
    _ties,
    _exact_interval_ends(),
).flatmap(lambda x: st.sampled_from([x, -x]))


@settings(max_examples=3000)
@given(x=_doubles)
def test_twins_write_every_double_alike(twins, x):
    _same_text(twins, x)
    native, pure = twins
    assert native.canonicalize([x, {"v": x}]) == pure.canonicalize([x, {"v": x}])


@settings(max_examples=300)
@given(x=_exact_interval_ends())
def test_interval_ends_on_a_decimal(twins, x):
    _same_text(twins, x)


@settings(max_examples=300)
@given(x=_ties)
def test_ties_go_to_the_even_digit(twins, x):
    text = _same_text(twins, x)
    assert int(text[-1]) % 2 == 0  # 17 significant digits, the last one even


# -- every layout form, at its bounds --------------------------------------------------------


@pytest.mark.parametrize(
    "x, form",
    [
        (1.0, "integer"),
        (2.0**52 - 1, "integer"),
        (2.0**52 + 1, "integer"),  # the digit search, not the integer path
        (2.0**60, "integer"),  # digits, then zeros
        (1e20, "integer"),
        (123456789012345680000.0, "integer"),
        (1e21, "exponent"),  # the switch
        (1.5e21, "exponent"),
        (0.5, "fraction"),
        (1234.5678, "fraction"),
        (0.1 + 0.2, "fraction"),  # 17 digits
        (98765.43210987654, "fraction"),
        (1e-6, "fraction"),  # 0.000001, the last before the exponent
        (1.2345678901234567e-6, "fraction"),
        (1e-7, "exponent"),
        (1.5e-7, "exponent"),
        (5e-324, "exponent"),  # one digit, three-digit exponent
        (2.2250738585072014e-308, "exponent"),
        (1.7976931348623157e308, "exponent"),
        (1e100, "exponent"),
        (3e50, "exponent"),  # two-digit exponent
        (4.5e-15, "exponent"),
    ],
)
def test_each_layout_form(twins, x, form):
    for v in (x, -x):
        assert _form(_same_text(twins, v)) == form


def test_every_exponent_and_digit_count(twins):
    # Every decimal exponent with 1 to 17 significant digits, both signs: every length the
    # digit writer trims to and every exponent text.
    native, pure = twins
    xs = []
    for e in range(-324, 309):
        for digits in ("1", "12", "1234567", "12345678", "123456789", "1234567890123456", "12345678901234567"):
            x = float(f"{digits[0]}.{digits[1:]}e{e}" if len(digits) > 1 else f"{digits}e{e}")
            if x and math.isfinite(x):
                xs.append(x)
    xs += [-x for x in xs]
    assert native.canonicalize(xs) == pure.canonicalize(xs)
    assert [float(t) for t in native.canonicalize(xs)[1:-1].decode().split(",")] == xs


# -- where the text is written: inline, near the end of the buffer, streamed ----------------


class _Real(float):
    """A float subclass: written through the general value path."""


class _Count(int):
    """An int subclass: written through the general value path."""


def test_numbers_at_the_buffer_edge(twins):
    # A number is written in place when 64 (float) or 32 (int) bytes are free, else through a
    # copy: the same bytes on either side of the first buffer's end (4 KiB natively) and in
    # 7-byte chunks, for exact floats and ints and their subclasses.
    native, pure = twins
    values = [1e-7, -0.1, 123.456, 1.7976931348623157e308, 5e-324, 2.0**60, 0.5, _Real(2.5), _Real(-1e300)]
    values += [7, -(2**53) + 1, 2**40, _Count(2**35), _Count(-12)]
    for pad in range(4030, 4110, 3):
        doc = {"a": "x" * pad, "b": values, "c": 0.30000000000000004}
        assert native.canonicalize(doc) == pure.canonicalize(doc), pad
        chunks = []
        native.canonicalize_into(doc, chunks.append, chunk_size=7)
        assert b"".join(chunks) == pure.canonicalize(doc), pad


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused_alike(twins, bad):
    assert twins[0]._format_double(bad) == twins[1]._format_double(bad)
    for value, path in (([1.5, bad], "$[1]"), ({"a": {"b": bad}}, "$.a.b"), (bad, "$")):
        messages = []
        for twin in twins:
            with pytest.raises(EncodeError) as info:
                twin.canonicalize(value)
            messages.append(str(info.value))
        assert messages[0] == messages[1]
        assert messages[0].endswith(f"- at `{path}`")


# -- ints ----------------------------------------------------------------------------------

_SAFE = 2**53 - 1


def _int_edges():
    edges = {0, 1, 9, 10, 99, 100, _SAFE, 2**30 - 1, 2**30, 2**31, 2**52, 2**53, 2**60 - 1, 2**60, 2**64}
    for k in range(1, 20):
        edges |= {10**k - 1, 10**k, 10**k + 1}
    return sorted(edges | {-n for n in edges})


@settings(max_examples=2000)
@given(n=st.one_of(st.integers(-_SAFE, _SAFE), st.integers(-(2**70), 2**70), st.sampled_from(_int_edges())))
def test_twins_write_every_int_alike(twins, n):
    native = twins[0]
    for value in (n, [n, -n], {"n": n}, _Count(n)):
        same_canonical(twins, value)
    if -_SAFE <= n <= _SAFE:
        assert native.canonicalize(n) == int.__repr__(n).encode()

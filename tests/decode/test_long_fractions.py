"""Numbers past the 15-digit one-division path are read in one pass: exactly what the reference reads.

Driven on both twins (the pure twin, ``float(text)``, is the reference).  The native reader
(native/decoder_numbers.h ``ajpcore_scan_small_number``) reads a fraction's first 15 digits
for one correctly rounded division; longer fractions and exponents are now read on in the
same pass (each fraction digit shifts the decimal exponent, leading zeros are not
significant, a 20th significant digit leaves the literal to the full reader) and rounded by
the same Clinger / Eisel-Lemire step as before.  The edges: 15 / 16 digits, 19 / 20
significant digits, leading zeros before and after the point, exponents of either sign and
the grammar's refusals right after the fraction.
"""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from decode.test_fast_paths_agree_with_the_reference import SETTINGS, agree

DIGITS = st.text("0123456789", min_size=1, max_size=26)


@st.composite
def long_numbers(draw):
    sign = draw(st.sampled_from(["", "-"]))
    whole = draw(st.one_of(st.just("0"), st.integers(1, 10**15 - 1).map(str)))
    zeros = "0" * draw(st.integers(0, 22))
    frac = zeros + draw(DIGITS)
    text = f"{sign}{whole}.{frac}"
    if draw(st.booleans()):
        text += draw(st.sampled_from(["e", "E"])) + draw(st.sampled_from(["", "+", "-"])) + str(draw(st.integers(0, 400)))
    return text


@SETTINGS
@given(text=long_numbers(), wrap=st.booleans())
@example(text="0.5712453205533519", wrap=False)
@example(text="1234567.123456789012", wrap=True)  # 19 significant digits
@example(text="1234567.1234567890123", wrap=True)  # 20: the full reader
@example(text="0.00000000000000000000001234567890123456789", wrap=False)
@example(text="4.847500628187587e+30", wrap=True)
@example(text="-1.8720424352817266e-169", wrap=False)
@example(text="9.999999999999999999e307", wrap=False)
@example(text="1.7976931348623157e308", wrap=False)
@example(text="1.7976931348623159e308", wrap=False)  # rounds to infinity: refused
@example(text="2.4703282292062328e-324", wrap=False)  # subnormal: the slow path
def test_long_fractions(twins, text, wrap):
    data = (f'[{text},{{"x":{text}}}]' if wrap else text).encode()
    agree(twins, data)


@pytest.mark.parametrize(
    "text",
    [
        "0.1234567890123456e", "0.1234567890123456e+", "0.1234567890123456e-", "0.1234567890123456ex",
        "0.1234567890123456.5", "0.12345678901234567-", "1.5e", "1e", "1E+", "0.1234567890123456e99999999",
        "0.1234567890123456e100000000", "-0.00000000000000000000e5", "0.0000000000000000000000", "1.0e-400",
    ],
)
def test_refusals_and_edges_after_the_fraction(twins, text):
    agree(twins, text.encode())
    agree(twins, f"[{text}]".encode())

"""JSON values that have an RFC 8785 canonical form (I-JSON characters, the int rule, binary64 floats)."""

from __future__ import annotations

from typing import Any as _Any

from hypothesis import strategies as st

from .._core_rules import _MAX_SAFE_INT, _format_double


def _is_noncharacter(ch: str) -> bool:
    cp = ord(ch)
    return 0xFDD0 <= cp <= 0xFDEF or cp & 0xFFFE == 0xFFFE


json_characters = st.characters(exclude_categories=["Cs"]).filter(lambda ch: not _is_noncharacter(ch))
"""Every character I-JSON text may hold (RFC 7493 §2.1): any Unicode scalar value, ASCII to
astral planes, except the 66 noncharacters (U+FDD0..U+FDEF, U+xFFFE, U+xFFFF)."""

json_strings = st.text(json_characters)
"""Any ``str`` I-JSON admits: no lone surrogates, no noncharacters (``json_characters``)."""

json_floats = st.floats(allow_nan=False, allow_infinity=False)
"""Every finite binary64 value, subnormals and ``-0.0`` included."""


def _big_ints() -> st.SearchStrategy[int]:
    # Beyond 2**53 an int has a canonical form only if it is its own nearest double
    # (``2**64``) or is spelled exactly as ECMAScript spells that double
    # (``123456789012345680000``, only below 1e21 where ECMAScript writes no exponent).
    beyond = st.floats(min_value=2.0**53, allow_infinity=False)
    exact = beyond.map(int)
    spelled = st.floats(min_value=2.0**53, max_value=1e21, exclude_max=True).map(lambda x: int(_format_double(x)))
    return st.one_of(exact, spelled).flatmap(lambda n: st.sampled_from([n, -n]))


json_ints = st.one_of(st.integers(-_MAX_SAFE_INT, _MAX_SAFE_INT), _big_ints())
"""Ints that stand for one binary64 value (the int rule of ``ajpcore.canonicalize``)."""


def json_values(*, max_leaves: int = 40, max_size: int = 8) -> st.SearchStrategy[_Any]:
    """Hypothesis strategy for JSON values that have an RFC 8785 canonical form.

    Draws None, bools, ints obeying the int rule, finite floats from the whole
    binary64 range (``-0.0`` and subnormals included), strings and object keys
    from all of Unicode minus lone surrogates, and lists and dicts nested
    around them (at most ``max_leaves`` leaves, ``max_size`` members per
    container).  ``ajpcore.canonicalize`` never raises on a drawn value.
    """
    scalars = st.one_of(st.none(), st.booleans(), json_ints, json_floats, json_strings)
    return st.recursive(
        scalars,
        lambda children: st.one_of(
            st.lists(children, max_size=max_size),
            st.dictionaries(json_strings, children, max_size=max_size),
        ),
        max_leaves=max_leaves,
    )


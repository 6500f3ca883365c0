"""Canonical strings and member-name order (RFC 8785 §3.2.2.2, §3.2.3): twin of ``native/canonical_strings.pxi``."""

from __future__ import annotations

from json.encoder import encode_basestring as _escape_str
from typing import Any, Callable, Tuple


# ---------------------------------------------------------------------------
# Canonical strings and member-name order (RFC 8785 §3.2.2.2, §3.2.3)
# ---------------------------------------------------------------------------

def _append_str_in_slices(s: str, append: Callable[[str], Any]) -> None:
    # Escaping is per code point (RFC 8785 §3.2.2.2), so slices escape independently:
    # no piece of a huge string is ever materialised beyond _STR_SLICE code points.
    append('"')
    for start in range(0, str.__len__(s), _STR_SLICE):
        append(_escape_str(str.__getitem__(s, slice(start, start + _STR_SLICE)))[1:-1])
    append('"')


_STR_SLICE = 1024


# -- member-name order ---------------------------------------------------

def _utf16_key(key: str) -> bytes:
    # RFC 8785 §3.2.3: member names sort by their UTF-16 code units.  ``str.encode``,
    # not ``key.encode``: a str subclass cannot change the order.
    return str.encode(key, "utf-16-be", "surrogatepass")


def _member_name(item: Tuple[str, Any]) -> str:
    return item[0]


def _member_name_utf16(item: Tuple[str, Any]) -> bytes:
    return _utf16_key(item[0])

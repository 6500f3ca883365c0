"""Canonical JSON writer (RFC 8785): twin of ``native/canonical_writer.pxi``."""

from __future__ import annotations

import re
from json.encoder import encode_basestring as _escape_str
from typing import Any, Callable, Dict, List, Tuple

from ..errors import EncodeError, format_path
from .canonical_strings import _STR_SLICE, _append_str_in_slices, _member_name, _member_name_utf16
from .._core_rules import _MAX_SAFE_INT, _RECURSION_REASON, MAX_DEPTH
from .number_format import _format_double, _format_int


# ---------------------------------------------------------------------------
# Canonical JSON writer (RFC 8785): values, containers
# ---------------------------------------------------------------------------

def _type_name(value: Any) -> str:
    return type(value).__qualname__


def _scalar(v: Any, steps: List[Any]) -> str:
    """Canonical text of a non-container value (the slow, rare types)."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    # Kinds are read from the real type (type(v)), never isinstance: a spoofed __class__
    # would pass isinstance and fail inside the base type's methods, as it cannot in C.
    # Subclasses (IntEnum, ...) are read through the base type's own methods, so an
    # overridden __int__/__float__/__len__ cannot make the twins disagree.
    if issubclass(type(v), int):
        return _format_int(int.__index__(v), lambda: format_path(steps))
    if issubclass(type(v), float):
        x = float.__float__(v)
        if x != x or x in (_INF, -_INF):
            raise EncodeError(f"Non-finite float `{float.__repr__(x)}` has no JSON form", format_path(steps))
        return _format_double(x)
    if issubclass(type(v), str):
        return _escape_str(v)
    raise EncodeError(f"Unsupported type `{_type_name(v)}`", format_path(steps))


_INF = float("inf")


def _sorted_items(d: Dict[Any, Any], steps: List[Any]) -> List[Tuple[str, Any]]:
    """The members of ``d`` as (key, value) pairs in RFC 8785 §3.2.3 order.

    A snapshot: a ``write`` callback that mutates ``d`` later cannot break the output.
    """
    items = list(dict.items(d))
    ascii_only = True
    exact = True
    for k, _ in items:
        if type(k) is not str:
            if not issubclass(type(k), str):
                raise EncodeError(f"Object key must be `str`, got `{_type_name(k)}`", format_path(steps))
            exact = False  # a str subclass may override __lt__: sort by the text itself
        elif not k.isascii():
            ascii_only = False
    if exact and ascii_only:
        items.sort(key=_member_name)
    else:
        items.sort(key=_member_name_utf16)
        if not exact:
            _refuse_duplicate_names(items, steps)
    return items


def _refuse_duplicate_names(items: List[Tuple[str, Any]], steps: List[Any]) -> None:
    # Only str subclasses with their own __eq__/__hash__ can put one name in a dict twice;
    # RFC 8785 §3.1 (I-JSON) output must not repeat a member name.
    for i in range(1, len(items)):
        if str.__eq__(items[i - 1][0], items[i][0]):
            raise EncodeError(f"Duplicate object key `{str.__str__(items[i][0])}`", format_path(steps))


def _encode(value: Any, append: Callable[[str], Any], steps: List[Any], max_str: int) -> None:
    """Feed the canonical text of ``value`` to ``append`` as ``str`` pieces, in order.

    An explicit stack instead of recursion: depth is bounded by MAX_DEPTH only,
    never by the interpreter's recursion limit.  ``steps`` tracks the JSON path
    (keys and indices) of the value being written; it is formatted only on error.
    Strings longer than ``max_str`` are handed over in slices.
    """
    frames: List[List[Any]] = []  # [members (list, tuple or sorted (key, value) pairs), is_object, next index]
    v = value
    while True:
        t = type(v)
        if t is str:
            if len(v) > max_str:
                _append_str_in_slices(v, append)
            else:
                append(_escape_str(v))
        elif t is int and -_MAX_SAFE_INT <= v <= _MAX_SAFE_INT:
            append(int.__repr__(v))
        elif t is float and v - v == 0.0:  # finite
            append(_format_double(v))
        elif t is dict or issubclass(t, dict):  # the real type: a spoofed __class__ fools isinstance
            if len(frames) >= MAX_DEPTH:
                raise EncodeError(f"Nesting deeper than {MAX_DEPTH}", format_path(steps))
            if not dict.__len__(v):
                append("{}")
            else:
                items = _sorted_items(v, steps)
                k, v = items[0]
                frames.append([items, True, 1])
                steps.append(k)
                append("{")
                if str.__len__(k) > max_str:
                    _append_str_in_slices(k, append)
                else:
                    append(_escape_str(k))
                append(":")
                continue
        elif t is list or t is tuple or issubclass(t, (list, tuple)):
            if t is not list and t is not tuple:
                # A plain copy of the items: an overridden __getitem__/__len__ is ignored.
                v = (list if issubclass(t, list) else tuple).__getitem__(v, slice(None))
            if len(frames) >= MAX_DEPTH:
                raise EncodeError(f"Nesting deeper than {MAX_DEPTH}", format_path(steps))
            if not v:
                append("[]")
            else:
                frames.append([v, False, 1])
                steps.append(0)
                v = v[0]  # before append: a ``write`` callback may empty the list
                append("[")
                continue
        elif issubclass(t, str) and str.__len__(v) > max_str:
            _append_str_in_slices(v, append)
        else:
            append(_scalar(v, steps))
        # The value is written: close finished containers, move to the next member.
        while frames:
            frame = frames[-1]
            members, is_object, i = frame
            # len() again each time: a streaming ``write`` callback may shrink a list.
            if i < len(members):
                frame[2] = i + 1
                if is_object:
                    append(",")
                    k, v = members[i]
                    steps[-1] = k
                    if str.__len__(k) > max_str:
                        _append_str_in_slices(k, append)
                    else:
                        append(_escape_str(k))
                    append(":")
                else:
                    steps[-1] = i
                    v = members[i]
                    append(",")
                break
            frames.pop()
            steps.pop()
            append("}" if is_object else "]")
        else:
            return


def _discard(chunk: bytes) -> None:
    pass


_NO_LIMIT = 2**63
_FLUSH_LIMIT = 16384
_BATCH_CHARS = 2048
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")


def canonicalize(value: Any) -> bytes:
    """RFC 8785 canonical JSON of ``value`` as UTF-8 bytes.

    Accepts dict (str keys), list, tuple, str, int, float, bool and None.
    Raises EncodeError, naming the JSON path, for anything without an exact
    canonical form (NaN, infinities, lone surrogates, non-str keys, other
    types, ints a binary64 cannot carry, nesting deeper than MAX_DEPTH), and
    EncodeError at `$` (never RecursionError) when the interpreter's recursion
    limit is reached inside the encoder.
    """
    try:
        return _canonicalize(value)
    except RecursionError:
        raise EncodeError(_RECURSION_REASON) from None


def _canonicalize(value: Any) -> bytes:
    pieces: List[str] = []
    try:
        _encode(value, pieces.append, [], _NO_LIMIT)
        return "".join(pieces).encode("utf-8")
    except (EncodeError, UnicodeEncodeError):
        # Lone surrogates surface only when the text is encoded; the streaming path checks
        # each piece as it goes, so it reports the first problem in output order.
        del pieces[:]
    canonicalize_into(value, _discard)
    raise AssertionError("unreachable: streaming found no problem")  # pragma: no cover


def canonicalize_into(value: Any, write: Callable[[bytes], Any], *, chunk_size: int = 65536) -> int:
    """Hand the canonical bytes of ``value`` to ``write`` in chunks of at most ``chunk_size``.

    Gives exactly the bytes of ``canonicalize(value)`` and returns their count.
    The whole output is never held at once, so signing a large document costs
    O(chunk_size) extra memory (this pure twin hands over at most 16 KiB at a
    time).  Raises what ``canonicalize`` raises, and whatever ``write`` raises;
    chunks written before an error was found have already reached ``write``.
    A ``write`` that re-enters the encoder without end meets the recursion
    limit, raised as EncodeError at `$` (so is a RecursionError of ``write``'s own).
    Raises ValueError unless ``chunk_size`` is a positive int.
    """
    if type(chunk_size) is not int or chunk_size < 1:
        raise ValueError("chunk_size must be a positive int")
    try:
        return _canonicalize_into(value, write, chunk_size)
    except RecursionError:
        raise EncodeError(_RECURSION_REASON) from None


def _canonicalize_into(value: Any, write: Callable[[bytes], Any], chunk_size: int) -> int:
    steps: List[Any] = []
    pending: List[str] = []
    pending_chars = 0
    buf = bytearray()
    total = 0
    # Chunks of at most 16 KiB even when more is allowed: text is batched (at most
    # _BATCH_CHARS + one piece), encoded, then copied out chunk by chunk, and those
    # copies together stay within chunk_size + 64 KiB.
    flush_at = min(chunk_size, _FLUSH_LIMIT)

    def append(piece: str) -> None:
        nonlocal pending_chars
        # Check each piece as it comes, so a lone surrogate is reported at its own path;
        # the search allocates nothing when there is none.
        if not piece.isascii() and _LONE_SURROGATE.search(piece):
            raise EncodeError("String contains a lone surrogate", format_path(steps))
        pending.append(piece)
        pending_chars += len(piece)
        if pending_chars >= _BATCH_CHARS:
            drain()

    def drain() -> None:
        nonlocal pending_chars, total
        data = "".join(pending).encode("utf-8")
        del pending[:]
        pending_chars = 0
        buf.extend(data)
        del data
        while len(buf) >= flush_at:
            with memoryview(buf) as view:
                chunk = bytes(view[:flush_at])
            del buf[:flush_at]
            total += flush_at
            write(chunk)
            del chunk

    _encode(value, append, steps, _STR_SLICE)
    drain()
    if buf:
        total += len(buf)
        write(bytes(buf))
    return total

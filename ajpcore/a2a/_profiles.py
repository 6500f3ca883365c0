"""The bytes an Agent Card signature covers, under each named canonicalization profile.

A2A v1.0 §8.4.1 signs the RFC 8785 form of the card without ``signatures`` "after
removing default values" under the proto's field presence (§5.7).  The section leaves
open which values are defaults and what happens to members the proto does not know
(docs/a2a.md lists each ambiguity with the card that shows it), so ajpcore names the
readings and always says which one a signature verified under:

- ``served``: the card as received, every member kept (minus ``signatures``).
- ``spec``: §8.4.1 computed from ``a2a.proto``'s field table (``_fields.FIELDS``): a
  ``REQUIRED`` field is kept whatever its value, an ``optional`` field and a singular
  message (explicit presence) when present, an implicit-presence scalar, a repeated
  field or a map is dropped when it holds its default (``""``, ``false``, ``[]``,
  ``{}``); ``null`` on a proto field is "not set" (ProtoJSON) and dropped; members the
  proto does not know and the contents of ``google.protobuf.Struct`` values are kept
  verbatim.  The section's own worked example comes out byte for byte.
- ``sdk``: what a2a-python 1.3 and @a2a-js/sdk 1.3 compute (measured, tests/interop-a2a):
  the card through their proto model (members the proto does not know are dropped,
  implicit-presence defaults dropped, ``REQUIRED`` ignored, a proto field name such as
  ``protocol_binding`` read as its JSON name ``protocolBinding``, which wins when both are
  present, as in @a2a-js/sdk), then every ``""``,
  ``null``, ``[]`` and ``{}`` dropped at every depth, ``Struct`` contents included,
  repeatedly until none is left.

Every member a profile leaves out is reported as an RFC 6901 JSON Pointer; a pointer to
a container stands for its whole subtree.
"""

from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple, Union

from .. import _core
from ..errors import EncodeError, KeyUsageError, format_path
from ._fields import FIELDS

__all__ = ["PROFILES", "DEFAULT_PROFILES", "project", "payload", "pointer", "valued_members"]

PROFILES: Tuple[str, ...] = ("served", "spec", "sdk")
"""Every canonicalization profile, safest first: ``served`` covers every member received."""

DEFAULT_PROFILES: Tuple[str, ...] = PROFILES
"""What ``verify_card(profile=None)`` tries, in this order; the first that verifies is reported."""

Path = Tuple[Union[str, int], ...]
_ABSENT = object()


def _proto_name(json_name: str) -> str:
    # The proto field names are lower snake case, so the JSON name maps back one to one.
    return "".join("_" + c.lower() if c.isupper() else c for c in json_name)


_PROTO_NAMES: Dict[str, Dict[str, str]] = {
    message: {_proto_name(name): name for name in fields if _proto_name(name) != name} for message, fields in FIELDS.items()
}
"""Per message, each proto field name that differs from its JSON name -> the JSON name."""


def pointer(path: Path) -> str:
    """RFC 6901 JSON Pointer of a path of member names and array indices (``~`` -> ``~0``, ``/`` -> ``~1``)."""
    return "".join("/" + str(step).replace("~", "~0").replace("/", "~1") for step in path)


def _is_default(value: Any, kind: str, ftype: str) -> bool:
    if kind == "implicit":
        # proto3 defaults of the card's scalar types; `is False` so that 0 never passes for false.
        if ftype == "string":
            return isinstance(value, str) and not value
        return ftype == "bool" and value is False
    if kind == "repeated":
        return isinstance(value, (list, tuple)) and not value
    if kind == "map":
        return isinstance(value, dict) and not value
    return False


# -- spec: the field table's presence rules ---------------------------------------------------


def _spec_message(obj: Dict[str, Any], message: str, path: Path, dropped: List[str]) -> Dict[str, Any]:
    fields = FIELDS[message]
    out: Dict[str, Any] = {}
    for key, value in obj.items():
        field = fields.get(key)
        if field is None:  # not a field of the proto: kept as received, so covered
            out[key] = value
            continue
        kind, ftype = field
        required = kind.startswith("required:")
        kind = kind.rpartition(":")[2]
        if value is None or (not required and _is_default(value, kind, ftype)):
            dropped.append(pointer(path + (key,)))
            continue
        out[key] = _spec_value(value, kind, ftype, path + (key,), dropped)
    return out


def _spec_value(value: Any, kind: str, ftype: str, path: Path, dropped: List[str]) -> Any:
    nested = ftype in FIELDS
    if kind == "repeated" and nested and isinstance(value, (list, tuple)):
        return [_spec_message(v, ftype, path + (i,), dropped) if isinstance(v, dict) else v for i, v in enumerate(value)]
    if kind == "map" and nested and isinstance(value, dict):
        return {k: _spec_message(v, ftype, path + (k,), dropped) if isinstance(v, dict) else v for k, v in value.items()}
    if kind in ("message", "oneof") and nested and isinstance(value, dict):
        return _spec_message(value, ftype, path, dropped)
    return value  # scalars, Struct contents, and values of the wrong JSON type: verbatim


# -- sdk: the proto model's output, then every empty value dropped ------------------------------


def _sdk_clean(value: Any, shape: Optional[str], map_of: bool, path: Path, dropped: List[str]) -> Any:
    """The value cleaned, or _ABSENT; ``shape``: a message name, or None for free JSON (Struct, scalars)."""
    if len(path) > _core.impl.MAX_DEPTH:  # the canonical writer's bound, met before it runs: never RecursionError
        raise EncodeError(f"nesting deeper than {_core.impl.MAX_DEPTH} levels", format_path(path))
    if value is None or (isinstance(value, str) and not value):
        return _ABSENT
    if isinstance(value, (list, tuple)):
        gone: List[str] = []
        kept = []
        for i, v in enumerate(value):
            cleaned = _sdk_clean(v, shape, False, path + (i,), gone)
            if cleaned is _ABSENT:
                gone.append(pointer(path + (i,)))
            else:
                kept.append(cleaned)
        if not kept:
            return _ABSENT
        dropped.extend(gone)
        return kept
    if isinstance(value, dict):
        mine: List[str] = []
        out: Dict[str, Any] = {}
        if shape is not None and not map_of:
            out = _sdk_message(value, shape, path, mine)
        else:
            for k, v in value.items():
                cleaned = _sdk_clean(v, shape, False, path + (k,), mine)
                if cleaned is _ABSENT:
                    mine.append(pointer(path + (k,)))
                else:
                    out[k] = cleaned
        if not out:
            return _ABSENT  # the caller reports the container alone: it stands for its subtree
        dropped.extend(mine)
        return out
    return value


def _sdk_message(obj: Dict[str, Any], message: str, path: Path, dropped: List[str]) -> Dict[str, Any]:
    fields = FIELDS[message]
    aliases = _PROTO_NAMES[message]
    out: Dict[str, Any] = {}
    for key, value in obj.items():
        name = aliases.get(key, key)  # ProtoJSON parsers read the proto name as the field too
        # Both spellings present: the JSON name wins, as in @a2a-js/sdk (a2a-python takes the other).
        field = None if name != key and name in obj else fields.get(name)
        if field is None:  # the model has no place for it: dropped before canonicalization
            dropped.append(pointer(path + (key,)))
            continue
        kind, ftype = field
        kind = kind.rpartition(":")[2]  # the SDKs' models ignore REQUIRED
        if kind == "implicit" and _is_default(value, kind, ftype):
            dropped.append(pointer(path + (key,)))
            continue
        shape = ftype if ftype in FIELDS else None
        cleaned = _sdk_clean(value, shape, kind == "map", path + (key,), dropped)
        if cleaned is _ABSENT:
            dropped.append(pointer(path + (key,)))
        else:
            out[name] = cleaned
    return out


def project(card: Dict[str, Any], profile: str) -> Tuple[Dict[str, Any], Tuple[str, ...]]:
    """``(covered, left_out)``: the card as the profile signs it (a new dict sharing leaf values)
    and the JSON Pointers of every received member it leaves out, ``/signatures`` excepted.

    Raises ``KeyUsageError`` for an unknown profile name.
    """
    body = {k: v for k, v in card.items() if k != "signatures"}
    dropped: List[str] = []
    if profile == "served":
        return body, ()
    if profile == "spec":
        return _spec_message(body, "AgentCard", (), dropped), tuple(dropped)
    if profile == "sdk":
        return _sdk_message(body, "AgentCard", (), dropped), tuple(dropped)
    raise KeyUsageError(f"unknown canonicalization profile `{profile}` (expected one of `served`, `spec`, `sdk`)")


def _at(card: Dict[str, Any], ptr: str) -> Any:
    """The value at an RFC 6901 pointer that ``project`` wrote for ``card`` (so it exists)."""
    value: Any = card
    for step in ptr.split("/")[1:]:
        name = step.replace("~1", "/").replace("~0", "~")
        value = value[int(name)] if isinstance(value, list) else value[name]
    return value


def valued_members(card: Dict[str, Any], left_out: Tuple[str, ...]) -> List[str]:
    """The pointers among ``left_out`` (from ``project(card, ...)``) whose value holds something:
    neither ``false``, ``null`` nor empty once every ``""``, ``null``, ``[]`` and ``{}`` inside is
    dropped.  A profile that leaves out only such empty values loses nothing a reader could use."""
    valued = []
    for ptr in left_out:
        value = _at(card, ptr)
        if value is not False and _sdk_clean(value, None, False, (), []) is not _ABSENT:
            valued.append(ptr)
    return valued


def payload(card: Dict[str, Any], profile: str = "served") -> bytes:
    """The JWS payload of ``card`` under ``profile``: RFC 8785 bytes of the card as the profile covers it.

    ``card``: a decoded Agent Card (a dict); its ``signatures`` member is never covered.
    Raises ``KeyUsageError`` for an unknown profile or a card that is not a dict,
    ``EncodeError`` for a value without a canonical JSON form.
    """
    if not isinstance(card, dict):
        raise KeyUsageError(f"an Agent Card is a JSON object (dict), got `{type(card).__name__}`")
    covered, _ = project(card, profile)
    data: bytes = _core.impl.canonicalize(covered)
    return data

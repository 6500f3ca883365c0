"""Valid IATP capability manifests as the published schema defines them, and near-valid mutations."""

from __future__ import annotations

import functools as _functools_iatp
from typing import Any as _Any

from hypothesis import strategies as st

from ._json import json_characters


from typing import Dict as _Dict
from typing import List as _List
from typing import Tuple as _Tuple

from hypothesis import strategies as _st_iatp

_IATP_TEXT = _st_iatp.text(json_characters, max_size=12)
_IATP_NAME = _st_iatp.text(json_characters, min_size=1, max_size=12)
_IATP_JSON_SCALARS = (
    _st_iatp.none()
    | _st_iatp.booleans()
    | _st_iatp.integers(-(2**53) + 1, 2**53 - 1)
    | _st_iatp.floats(allow_nan=False, allow_infinity=False)
    | _IATP_TEXT
)
_IATP_JSON = _st_iatp.recursive(
    _IATP_JSON_SCALARS,
    lambda inner: _st_iatp.lists(inner, max_size=3) | _st_iatp.dictionaries(_IATP_TEXT, inner, max_size=3),
    max_leaves=6,
)


def _iatp_integer(min_value: int) -> "_st_iatp.SearchStrategy[_Any]":
    # JSON Schema's `integer` is any number with a zero fractional part: 10.0 too.
    ints = _st_iatp.integers(min_value, 2**53 - 1)
    return ints | _st_iatp.integers(min_value, 2**20).map(float)


def _iatp_number(min_value: float = 0, max_value: "float | None" = None) -> "_st_iatp.SearchStrategy[_Any]":
    floats = _st_iatp.floats(min_value, max_value, allow_nan=False, allow_infinity=False)
    hi = 2**53 - 1 if max_value is None else int(max_value)
    return floats | _st_iatp.integers(int(min_value), hi)


def _iatp_date_time() -> "_st_iatp.SearchStrategy[str]":
    """RFC 3339 date-times with a `Z` or numeric offset and 0-9 fraction digits."""
    import datetime as _dt

    @_st_iatp.composite
    def build(draw: _Any) -> str:
        moment = draw(_st_iatp.datetimes(min_value=_dt.datetime(1, 1, 2), max_value=_dt.datetime(9999, 12, 30)))
        text = (
            f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}"
            f"T{moment.hour:02d}:{moment.minute:02d}:{moment.second:02d}"
        )
        digits = draw(_st_iatp.integers(0, 9))
        if digits:
            text += "." + draw(_st_iatp.text("0123456789", min_size=digits, max_size=digits))
        if draw(_st_iatp.booleans()):
            return text + "Z"
        sign = draw(_st_iatp.sampled_from("+-"))
        return text + f"{sign}{draw(_st_iatp.integers(0, 23)):02d}:{draw(_st_iatp.integers(0, 59)):02d}"

    return build()


def _iatp_object(draw: _Any, required: _Dict[str, _Any], optional: _Dict[str, _Any]) -> _Dict[str, _Any]:
    out = {name: draw(strategy) for name, strategy in required.items()}
    for name, strategy in optional.items():
        if draw(_st_iatp.booleans()):
            out[name] = draw(strategy)
    known = set(required) | set(optional)
    for key, value in draw(_st_iatp.dictionaries(_IATP_TEXT, _IATP_JSON, max_size=2)).items():
        if key not in known:
            out[key] = value
    return out


@_st_iatp.composite
def manifests(draw: _Any) -> _Dict[str, _Any]:
    """Valid IATP capability manifests as JSON objects (dicts), every optional member
    sometimes present, integers sometimes written as integral floats, extra members
    at every level.  ``CapabilityManifest.from_dict`` accepts each one."""
    from ..iatp import AuthMethod, CompensationMethod, ReversibilityLevel, RetentionPolicy, TrustLevel

    st = _st_iatp
    s255 = st.text(json_characters, min_size=1, max_size=255)
    method = (
        st.none()
        | st.sampled_from([m.value for m in CompensationMethod])
        | _IATP_NAME.map(lambda name: "custom:" + name)
        | _IATP_TEXT
    )
    identity = st.composite(lambda d: _iatp_object(d, {"agent_id": s255, "owner": s255}, {
        "verification_key": _IATP_TEXT, "contact": _IATP_TEXT,
    }))()
    capabilities = st.composite(lambda d: _iatp_object(d, {}, {
        "idempotency": st.booleans(),
        "idempotency_duration_seconds": _iatp_integer(0),
        "concurrency_limit": _iatp_integer(1),
        "sla_latency_ms": _iatp_integer(0),
        "sla_availability": _iatp_number(0, 1),
    }))()
    undo_conditions = st.composite(lambda d: _iatp_object(d, {}, {
        "until_state": _IATP_TEXT, "check_endpoint": _IATP_TEXT,
    }))()
    reversibility = st.composite(lambda d: _iatp_object(d, {"level": st.sampled_from([v.value for v in ReversibilityLevel])}, {
        "undo_window_seconds": _iatp_integer(0),
        "compensation_method": method,
        "compensation_sla_ms": _iatp_integer(0),
        "compensation_notes": st.text(json_characters, max_size=1000),
        "compensation_endpoint": _IATP_TEXT,
        "undo_conditions": undo_conditions,
    }))()
    privacy = st.composite(lambda d: _iatp_object(d, {}, {
        "retention_policy": st.sampled_from([v.value for v in RetentionPolicy]),
        "retention_duration_seconds": _iatp_integer(0),
        "storage_location": _IATP_TEXT,
        "human_in_loop": st.booleans(),
        "training_consent": st.booleans(),
        "encryption_at_rest": st.booleans(),
        "encryption_in_transit": st.booleans(),
        "data_processing_addendum": _IATP_TEXT,
    }))()
    authentication = st.composite(lambda d: _iatp_object(d, {}, {
        "methods": st.lists(st.sampled_from([v.value for v in AuthMethod]), max_size=6),
        "required": st.booleans(),
    }))()
    rate_limiting = st.composite(lambda d: _iatp_object(d, {}, {
        "requests_per_second": _iatp_number(),
        "requests_per_minute": _iatp_number(),
        "requests_per_hour": _iatp_number(),
        "burst_limit": _iatp_integer(1),
    }))()
    return _iatp_object(draw, {
        "identity": identity,
        "trust_level": st.sampled_from([v.value for v in TrustLevel]),
        "protocol_version": st.from_regex(r"[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True),
    }, {
        "$schema": _IATP_TEXT,
        "capabilities": capabilities,
        "reversibility": reversibility,
        "privacy": privacy,
        "authentication": authentication,
        "rate_limiting": rate_limiting,
        "manifest_version": st.from_regex(r"[0-9]{1,3}\.[0-9]{1,3}\.[0-9]{1,3}", fullmatch=True),
        "updated_at": _iatp_date_time(),
    })


def _iatp_schema_members(node: _Any, path: _Tuple[_Any, ...]) -> _List[_Tuple[_Tuple[_Any, ...], _Dict[str, _Any]]]:
    """Every (path, subschema) of the manifest schema's declared members, depth first."""
    out = []
    for name, sub in node.get("properties", {}).items():
        out.append((path + (name,), sub))
        out.extend(_iatp_schema_members(sub, path + (name,)))
    return out


@_functools_iatp.lru_cache(maxsize=1)
def _iatp_manifest_members() -> _Tuple[_Tuple[_Tuple[_Any, ...], _Dict[str, _Any]], ...]:
    from ..iatp import schema

    return tuple(_iatp_schema_members(schema("iatp-capability-manifest"), ()))


_IATP_WRONG_TYPES: _Dict[str, _List[_Any]] = {
    "string": [1, 1.5, True, None, [], {}],
    "integer": [1.5, "1", True, None, [], {}],
    "number": ["0.5", False, None, [], {}],
    "boolean": [0, 1, "true", None, [], {}],
    "object": ["x", 1, True, None, []],
    "array": ["none", {}, 1, None],
}
_IATP_ODD_VERSIONS = ["007.000", "1", "1.0.0", "v1.0", "1.0\n", "\u0661.\u0660", " 1.0", "1..0", "1.a", "", "1.0 ", "\uff11.\uff10"]
_IATP_ODD_SEMVER = ["0.0.0", "1.0", "1.0.0.0", "v1.0.0", "1.0.0\n", "1.0.0-rc1", "\u0661.\u0660.\u0660", "1.0.x"]
_IATP_ODD_DATE_TIMES = [
    "2026-01-23", "2026-01-23T00:00:00", "2026-01-23 00:00:00Z", "2026-02-30T00:00:00Z",
    "2026-13-01T00:00:00Z", "2026-01-23T24:00:00Z", "2026-01-23T00:60:00Z", "2026-01-23T00:00:00+24:00",
    "2026-01-23T00:00:00.Z", "26-01-23T00:00:00Z", "2026-01-23T00:00:00+0000", "2026-01-23T00:00:00Z\n",
    "\uff12026-01-23T00:00:00Z", "2026-01-23T00:00:00,5Z", "2025-02-29T00:00:00Z", "1998-12-31T23:58:60Z",
    # valid, if unusual: a leap second, lower-case t and z, year zero, a long fraction
    "1998-12-31T23:59:60Z", "1998-12-31T15:59:60-08:00", "2026-01-23t00:00:00z", "0000-01-01T00:00:00Z",
    "2024-02-29T12:00:00.123456789012+14:00",
]


@_st_iatp.composite
def manifest_mutations(draw: _Any) -> _Dict[str, _Any]:
    """Near-valid IATP manifests: a drawn valid manifest with one or two edits that
    mostly make it invalid (a required member removed, a wrong JSON type, a number out
    of range or fractional where an integer is due, an enum value or pattern missed,
    a string too short or too long, an impossible date-time) and sometimes keep it
    valid (an optional member removed, an integral float, an extra member)."""
    manifest: _Dict[str, _Any] = draw(manifests())
    members = _iatp_manifest_members()
    for _ in range(draw(_st_iatp.integers(1, 2))):
        _iatp_mutate(draw, manifest, members)
    return manifest


def _iatp_mutation_kinds(sub: _Dict[str, _Any]) -> _List[str]:
    kinds = ["remove", "wrong_type", "extra"]
    types = sub.get("type")
    if "minimum" in sub or "maximum" in sub:
        kinds.append("range")
    if types == "integer":
        kinds += ["fraction", "integral_float"]
    if "enum" in sub or "enum" in sub.get("items", {}):
        kinds.append("enum")
    if "pattern" in sub:
        kinds.append("pattern")
    if "minLength" in sub or "maxLength" in sub:
        kinds.append("length")
    if sub.get("format") == "date-time":
        kinds.append("date_time")
    return kinds


_IATP_KINDS = ["remove", "wrong_type", "extra", "range", "fraction", "integral_float", "enum", "pattern", "length", "date_time"]


def _iatp_mutate(draw: _Any, manifest: _Dict[str, _Any], members: _Any) -> None:
    # The kind first, then a member it applies to: every kind of edit is drawn
    # as often, however many members allow it.
    st = _st_iatp
    present = []
    for path, sub in members:
        parent: _Any = manifest
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict) and path[-1] in parent:
            present.append((parent, path, sub))
    if not present:  # a previous edit replaced the root's members: add one back
        manifest["trust_level"] = "Trusted"
        return
    kind = draw(st.sampled_from(_IATP_KINDS))
    candidates = [c for c in present if kind in _iatp_mutation_kinds(c[2])]
    if not candidates:
        kind = "wrong_type"
        candidates = present
    parent, path, sub = draw(st.sampled_from(candidates))
    key = path[-1]
    types = sub.get("type")
    value = parent[key]
    if kind == "remove":
        del parent[key]
    elif kind == "wrong_type":
        type_name = types if isinstance(types, str) else "string"
        parent[key] = draw(st.sampled_from(_IATP_WRONG_TYPES[type_name]))
    elif kind == "extra":
        target = value if isinstance(value, dict) else parent
        target[draw(_IATP_NAME)] = draw(_IATP_JSON)
    elif kind == "range":
        choices = []
        if "minimum" in sub:
            low = sub["minimum"]
            choices += [low - 1, low - 0.5, low - 1e-9, -(2**53) + 1]
        if "maximum" in sub:
            high = sub["maximum"]
            choices += [high + 1, high + 1e-9, 1e300]
        parent[key] = draw(st.sampled_from(choices))
    elif kind == "fraction":
        parent[key] = draw(st.sampled_from([0.5, 1.5, 1e-7, 2.000001]))
    elif kind == "integral_float" and type(value) is int and abs(value) < 2**53:
        parent[key] = float(value)
    elif kind == "enum":
        bad = draw(st.sampled_from(["", "Trusted", "FULL", "verified-partner", "ephemeral ", "oauth", "none\n"]))
        if isinstance(value, list):
            parent[key] = value + [bad]
        else:
            parent[key] = bad
    elif kind == "pattern":
        parent[key] = draw(st.sampled_from(_IATP_ODD_VERSIONS if key == "protocol_version" else _IATP_ODD_SEMVER))
    elif kind == "length":
        parent[key] = "" if "minLength" in sub and draw(st.booleans()) else "x" * (sub.get("maxLength", 255) + 1)
    elif kind == "date_time":
        parent[key] = draw(st.sampled_from(_IATP_ODD_DATE_TIMES))

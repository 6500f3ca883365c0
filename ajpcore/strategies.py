"""Public hypothesis strategies for ajpcore's inputs, for tests, benches and downstream fuzzing.

``json_values()`` draws JSON values that have a canonical form (I-JSON); the
envelope strategies draw valid AJP/IATP messages and near-valid mutations.
Requires ``hypothesis``, the ``strategies`` extra (``pip install 'ajpcore[strategies]'``);
without it the import raises ModuleNotFoundError naming that extra.
"""

from __future__ import annotations

# -- JSON values --
# hypothesis is the ``strategies`` extra, imported here at the top of the first section so
# every section below can use ``st``; the rest of ajpcore never imports it.

import functools as _functools_iatp
from typing import Any as _Any

try:
    from hypothesis import strategies as st
except ModuleNotFoundError as _exc:  # pragma: no cover - exercised by tests/test_packaging.py in a subprocess
    if _exc.name != "hypothesis":
        raise
    raise ModuleNotFoundError(
        "ajpcore.strategies needs hypothesis: pip install 'ajpcore[strategies]'", name="hypothesis"
    ) from None

from ._core_py import _format_double

_MAX_SAFE_INT = 2**53 - 1

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


# -- AJP envelopes --
# job_offers(), job_results(), job_statuses(): valid AJP messages (JSON objects) as the
# shipped schemas define them, unknown members included; offer_mutations(),
# result_mutations(), status_mutations(): near-valid ones, each with one or two edits.

from typing import Any as _AjpAny
from typing import Dict as _AjpDict
from typing import List as _AjpList
from typing import Tuple as _AjpTuple

from hypothesis import strategies as _st_ajp

_AJP_TEXT = _st_ajp.text(json_characters, max_size=24)
_AJP_NONEMPTY = _st_ajp.text(json_characters, min_size=1, max_size=24)
_AJP_NAME = _st_ajp.sampled_from(["x_future", "trace_id", "priority", "é", "a b", "\U0001f680"])
_AJP_SMALL_JSON = _st_ajp.recursive(
    _st_ajp.one_of(
        _st_ajp.none(), _st_ajp.booleans(), _st_ajp.integers(-(2**53) + 1, 2**53 - 1),
        _st_ajp.floats(allow_nan=False, allow_infinity=False), _AJP_TEXT,
    ),
    lambda inner: _st_ajp.one_of(
        _st_ajp.lists(inner, max_size=3), _st_ajp.dictionaries(_AJP_TEXT, inner, max_size=3)
    ),
    max_leaves=6,
)
_AJP_ID = _st_ajp.from_regex(r"job_[0-9a-z]{8,24}", fullmatch=True)
_AJP_PROVENANCE = _st_ajp.from_regex(r"provenance:(github|domain):[a-z0-9-]{1,12}(/[a-z0-9-]{1,12})?", fullmatch=True)
_AJP_URL = _st_ajp.from_regex(r"https://[a-z]{1,10}\.example(/[A-Za-z0-9_.-]{1,10}){0,3}", fullmatch=True)
_AJP_HEX64 = _st_ajp.from_regex(r"[0-9a-f]{64}", fullmatch=True)
_AJP_B64 = _st_ajp.binary(min_size=64, max_size=64).map(lambda b: __import__("base64").b64encode(b).decode())


def _ajp_timestamp(seconds: int, draw: _AjpAny) -> str:
    from datetime import datetime, timedelta, timezone

    instant = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(seconds=seconds)
    offset = draw(_st_ajp.sampled_from([0, 0, 60, -300, 330, 840]))
    local = instant + timedelta(minutes=offset)
    frac: str = draw(_st_ajp.sampled_from(["", ".000", ".5", ".123456", ".123456789"]))
    zone: str = draw(_st_ajp.sampled_from(["Z", "z"])) if offset == 0 and draw(_st_ajp.booleans()) else (
        "%s%02d:%02d" % ("+" if offset >= 0 else "-", abs(offset) // 60, abs(offset) % 60)
    )
    return local.strftime("%Y-%m-%dT%H:%M:%S") + frac + zone


def _ajp_optional(draw: _AjpAny, out: _AjpDict[str, _AjpAny], optional: _AjpDict[str, _AjpAny]) -> _AjpDict[str, _AjpAny]:
    for key, strategy in optional.items():
        if draw(_st_ajp.booleans()):
            out[key] = draw(strategy)
    if draw(_st_ajp.integers(0, 4)) == 0:
        out[draw(_AJP_NAME)] = draw(_AJP_SMALL_JSON)
    return out


@_st_ajp.composite
def job_offers(draw: _AjpAny, *, issued_at: "int | None" = None, lifetime: "int | None" = None) -> _AjpDict[str, _AjpAny]:
    """Valid AJP JobOffers (JSON objects; the signature is well formed but signs nothing).

    ``issued_at`` (POSIX seconds) and ``lifetime`` (seconds) pin the timestamps,
    e.g. to build offers that pass ``validate_offer(strict=True)`` at a known ``now``;
    by default both are drawn (lifetime 1 s to 1 day).
    """
    sender_type = draw(_st_ajp.sampled_from(["human", "agent", "orchestrator"]))
    sender: _AjpDict[str, _AjpAny] = {"type": sender_type}
    if sender_type == "human":
        _ajp_optional(draw, sender, {"id": _st_ajp.one_of(_st_ajp.none(), _AJP_NONEMPTY),
                                     "provenance_id": _st_ajp.none(), "declaration_url": _st_ajp.none()})
        signature = "sha256:" + draw(_AJP_HEX64)
    else:
        sender["provenance_id"] = draw(_AJP_PROVENANCE)
        _ajp_optional(draw, sender, {"id": _st_ajp.none(), "declaration_url": _st_ajp.one_of(_st_ajp.none(), _AJP_URL)})
        signature = "ed25519:" + draw(_AJP_B64)
    start = issued_at if issued_at is not None else draw(_st_ajp.integers(1_700_000_000, 1_900_000_000))
    span = lifetime if lifetime is not None else draw(_st_ajp.integers(1, 86_400))
    task = _ajp_optional(draw, {"type": draw(_AJP_NONEMPTY), "instruction": draw(_AJP_NONEMPTY)}, {
        "input": _st_ajp.dictionaries(_AJP_TEXT, _AJP_SMALL_JSON, max_size=3),
        "output_format": _st_ajp.sampled_from(["json", "text", "markdown", "html", "any"]),
    })
    budget = _ajp_optional(draw, {"max_usd": draw(_st_ajp.one_of(
        _st_ajp.just(0), _st_ajp.integers(0, 1000), _st_ajp.floats(0, 1e6, allow_nan=False)))}, {
        "max_seconds": _st_ajp.one_of(_st_ajp.integers(1, 86_400), _st_ajp.floats(1, 1e5)),
        "max_llm_tokens": _st_ajp.integers(1, 10**7),
    })
    offer: _AjpDict[str, _AjpAny] = {
        "ajp": draw(_st_ajp.sampled_from(["0.1", "0.1", "0.2", "1.0"])),
        "job_id": draw(_AJP_ID),
        "from": sender,
        "to": _ajp_optional(draw, {"provenance_id": draw(_AJP_PROVENANCE)}, {}),
        "task": task,
        "budget": budget,
        "issued_at": _ajp_timestamp(start, draw),
        "expires_at": _ajp_timestamp(start + span, draw),
        "signature": signature,
    }
    return _ajp_optional(draw, offer, {
        "parent_job_id": _st_ajp.one_of(_st_ajp.none(), _AJP_ID),
        "context": _st_ajp.fixed_dictionaries({}, optional={
            "credentials": _st_ajp.dictionaries(_AJP_TEXT, _AJP_TEXT, max_size=2),
            "memory": _st_ajp.lists(_AJP_SMALL_JSON, max_size=3),
            "constraints": _st_ajp.lists(_AJP_TEXT, max_size=3),
        }),
        "callback": _st_ajp.one_of(_st_ajp.none(), _st_ajp.fixed_dictionaries(
            {"url": _AJP_URL}, optional={"headers": _st_ajp.dictionaries(_AJP_NONEMPTY, _AJP_TEXT, max_size=2)})),
    })


_AJP_STATUSES = ["accepted", "running", "completed", "failed", "rejected", "expired"]


def _ajp_result_members(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    return {
        "output": _AJP_SMALL_JSON,
        "constraints_asserted": _st_ajp.lists(_st_ajp.sampled_from(["no:pii", "no:persist:data", "cite:sources"]), max_size=3),
        "usage": _st_ajp.fixed_dictionaries({}, optional={
            "llm_tokens": _st_ajp.integers(0, 10**7),
            "duration_seconds": _st_ajp.floats(0, 1e5),
            "cost_usd": _st_ajp.one_of(_st_ajp.just(0), _st_ajp.floats(0, 1e3)),
        }),
    }


def _ajp_agent(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    return _ajp_optional(draw, {"provenance_id": draw(_AJP_PROVENANCE)}, {
        "version": _st_ajp.from_regex(r"[0-9]\.[0-9]\.[0-9]", fullmatch=True),
        "model": _st_ajp.one_of(_AJP_NONEMPTY, _st_ajp.fixed_dictionaries(
            {"provider": _AJP_NONEMPTY, "model_id": _AJP_NONEMPTY})),
    })


@_st_ajp.composite
def job_results(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    """Valid AJP JobResults (JSON objects, unknown members included)."""
    result = {
        "job_id": draw(_AJP_ID),
        "status": draw(_st_ajp.sampled_from(_AJP_STATUSES)),
        "agent": _ajp_agent(draw),
        "completed_at": _ajp_timestamp(draw(_st_ajp.integers(1_700_000_000, 1_900_000_000)), draw),
        "signature": "ed25519:" + draw(_AJP_B64),
    }
    members = _ajp_result_members(draw)
    members["ajp"] = _st_ajp.just("0.1")
    return _ajp_optional(draw, result, members)


@_st_ajp.composite
def job_statuses(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
    """Valid AJP JobStatus messages (progress, message, timestamps; sometimes result members)."""
    status = {"job_id": draw(_AJP_ID), "status": draw(_st_ajp.sampled_from(_AJP_STATUSES))}
    t = draw(_st_ajp.integers(1_700_000_000, 1_900_000_000))
    optional = {
        "ajp": _st_ajp.just("0.1"),
        "progress": _st_ajp.one_of(_st_ajp.sampled_from([0, 1, 0.0, 1.0]), _st_ajp.floats(0, 1)),
        "message": _AJP_TEXT,
        "started_at": _st_ajp.just(_ajp_timestamp(t, draw)),
        "updated_at": _st_ajp.just(_ajp_timestamp(t + 5, draw)),
        "estimated_completion": _st_ajp.just(_ajp_timestamp(t + 60, draw)),
    }
    if status["status"] == "completed":
        optional.update(_ajp_result_members(draw))
        optional["agent"] = _st_ajp.just(_ajp_agent(draw))
        optional["completed_at"] = _st_ajp.just(_ajp_timestamp(t + 30, draw))
        optional["signature"] = _st_ajp.just("ed25519:" + draw(_AJP_B64))
    return _ajp_optional(draw, status, optional)


def _ajp_schema_members(node: _AjpAny, path: _AjpTuple[_AjpAny, ...]) -> _AjpList[_AjpAny]:
    out = []
    for name, sub in node.get("properties", {}).items():
        out.append((path + (name,), sub))
        out.extend(_ajp_schema_members(sub, path + (name,)))
    for key in ("if", "then"):
        if key in node:  # conditional members (from.provenance_id of agents)
            out.extend(_ajp_schema_members(node[key], path))
    return out


_AJP_WRONG: _AjpDict[str, _AjpList[_AjpAny]] = {
    "string": [1, 1.5, True, None, [], {}],
    "number": ["0.5", False, None, [], {}],
    "integer": [1.5, "1", True, None],
    "boolean": [0, 1, "true", None],
    "object": ["x", 1, True, None, []],
    "array": ["x", {}, 1, None],
}
_AJP_BAD_TIMES = [
    "2026-03-05", "2026-03-05T10:00:00", "2026-03-05 10:00:00Z", "2026-02-29T00:00:00Z", "2026-03-05T24:00:00Z",
    "2026-03-05T10:00:00+0100", "2026-03-05T10:00:60Z", "2026-03-05T10:00:00Z\n", "", "yesterday",
]


def _ajp_mutations(base: _AjpAny, schema_name: str) -> _AjpAny:
    @_st_ajp.composite
    def mutate(draw: _AjpAny) -> _AjpDict[str, _AjpAny]:
        from .schemas import load

        doc: _AjpDict[str, _AjpAny] = draw(base)
        members = _ajp_schema_members(load(schema_name), ())
        for _ in range(draw(_st_ajp.integers(1, 2))):
            present = []
            for path, sub in members:
                parent: _AjpAny = doc
                for key in path[:-1]:
                    parent = parent.get(key) if isinstance(parent, dict) else None
                if isinstance(parent, dict) and path[-1] in parent:
                    present.append((parent, path[-1], sub))
            if not present:
                break
            parent, key, sub = draw(_st_ajp.sampled_from(present))
            types = sub.get("type", "string")
            kinds = ["remove", "wrong_type", "extra"]
            if "minimum" in sub or "maximum" in sub:
                kinds.append("range")
            if "enum" in sub or "const" in sub:
                kinds.append("enum")
            if "pattern" in sub:
                kinds.append("pattern")
            if "minLength" in sub:
                kinds.append("length")
            if sub.get("format") == "date-time":
                kinds.append("date_time")
            kind = draw(_st_ajp.sampled_from(kinds))
            if kind == "remove":
                del parent[key]
            elif kind == "wrong_type":
                first = types if isinstance(types, str) else types[0]
                parent[key] = draw(_st_ajp.sampled_from(_AJP_WRONG.get(first, _AJP_WRONG["string"])))
            elif kind == "extra":
                target = parent[key] if isinstance(parent[key], dict) else parent
                target[draw(_AJP_NAME)] = draw(_AJP_SMALL_JSON)
            elif kind == "range":
                choices = []
                if "minimum" in sub:
                    choices += [sub["minimum"] - 1, sub["minimum"] - 1e-9, -1e300]
                if "maximum" in sub:
                    choices += [sub["maximum"] + 1e-9, 2]
                parent[key] = draw(_st_ajp.sampled_from(choices))
            elif kind == "enum":
                parent[key] = draw(_st_ajp.sampled_from(["", "Human", "robot", "done", "JSON", "accepted ", None]))
            elif kind == "pattern":
                parent[key] = draw(_st_ajp.sampled_from(["", "0.1\n", "v0.1", "1", "\u0661.\u0661", "SHA256:ab", "sha256", ":x"]))
            elif kind == "length":
                parent[key] = draw(_st_ajp.sampled_from(["", "job_1"]))
            elif kind == "date_time":
                parent[key] = draw(_st_ajp.sampled_from(_AJP_BAD_TIMES))
        return doc

    return mutate()


def offer_mutations() -> _AjpAny:
    """Near-valid JobOffers: one or two edits (a required member removed, a wrong JSON type, a
    number out of range, an enum or pattern missed, a too-short id, an impossible timestamp, an
    extra member); most are invalid, some stay valid."""
    return _ajp_mutations(job_offers(), "ajp-job-offer")


def result_mutations() -> _AjpAny:
    """Near-valid JobResults (edits as ``offer_mutations``)."""
    return _ajp_mutations(job_results(), "ajp-job-result")


def status_mutations() -> _AjpAny:
    """Near-valid JobStatus messages (edits as ``offer_mutations``)."""
    return _ajp_mutations(job_statuses(), "ajp-job-status")



# -- IATP manifests --

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
    from .iatp import AuthMethod, CompensationMethod, ReversibilityLevel, RetentionPolicy, TrustLevel

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
    from .iatp import schema

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

"""IATP capability manifests: typed parsing that accepts exactly what the published schema accepts."""

import calendar
import contextlib
import copy
import json
import math
import re

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ajpcore._core as _core
from ajpcore import DecodeError, ValidationError
from ajpcore.iatp import (
    ABSENT,
    AuthMethod,
    Authentication,
    Capabilities,
    CapabilityManifest,
    Identity,
    Privacy,
    RetentionPolicy,
    Reversibility,
    ReversibilityLevel,
    TrustLevel,
    UndoConditions,
    manifest_from_reference_model,
    schema,
    spec_warnings,
    trust_score,
)
from ajpcore.strategies import manifest_mutations, manifests
from vector_files import load_json

PUBLISHED = load_json("iatp", "iatp-capability-manifest.schema.json")
SHIPPED = schema("iatp-capability-manifest")
HANDSHAKE_EXAMPLE = load_json("iatp", "iatp-handshake-manifest-spec-example.json")["manifest"]
PYTHON_MODEL_FILES = [
    "coder_agent.json",
    "reviewer_agent.json",
    "secure_bank.json",
    "standard_agent.json",
    "untrusted_honeypot.json",
]


# -- an independent reference: jsonschema read with JSON Schema's own semantics --------

# RFC 3339 section 5.6 date-time with the section 5.7 bounds; a leap second only at
# 23:59:60 UTC (no leap-second table: any day).
_DATE_TIME = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(\.[0-9]+)?"
    r"(?:[Zz]|[+-]([0-9]{2}):([0-9]{2}))"
)


def rfc3339_date_time(text):
    m = _DATE_TIME.fullmatch(text)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    if not 1 <= month <= 12 or not 1 <= day <= calendar.monthrange(year or 4, month)[1]:
        return False
    if hour > 23 or minute > 59 or second > 60:
        return False
    offset = 0
    if m.group(8) is not None:
        if int(m.group(8)) > 23 or int(m.group(9)) > 59:
            return False
        offset = (int(m.group(8)) * 60 + int(m.group(9))) * (-1 if "-" in text[19:] else 1)
    return second < 60 or (hour * 60 + minute - offset) % 1440 == 23 * 60 + 59


def ecma_pattern(validator, pattern, instance, schema):
    """ECMA-262 reading of the schema's two patterns: `\\d` is [0-9], `$` only at the very end.
    (jsonschema uses Python's `re`, where `\\d` matches any Unicode digit and `$` also
    matches before a final newline.)"""
    assert pattern in ("^\\d+\\.\\d+$", "^\\d+\\.\\d+\\.\\d+$", "^[0-9]+\\.[0-9]+$", "^[0-9]+\\.[0-9]+\\.[0-9]+$")
    translated = pattern.replace("\\d", "[0-9]")[:-1] + "\\Z"
    if validator.is_type(instance, "string") and re.search(translated, instance, re.ASCII) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("date-time")(lambda v: not isinstance(v, str) or rfc3339_date_time(v))

PublishedValidator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": ecma_pattern})
ShippedValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": ecma_pattern})
published = PublishedValidator(PUBLISHED, format_checker=FORMATS)
shipped = ShippedValidator(SHIPPED, format_checker=FORMATS)


@contextlib.contextmanager
def using(twin):
    """Switch the layers above the core to one twin inside a hypothesis example."""
    saved = _core.impl
    _core.impl = twin
    try:
        yield
    finally:
        _core.impl = saved


def accepts(doc):
    try:
        CapabilityManifest.from_dict(doc)
    except ValidationError:
        return False
    return True


# -- the shipped schema is the published one ---------------------------------------------


def _shape(node):
    if isinstance(node, dict):
        return {
            k: _shape(v).replace("\\d", "[0-9]") if k == "pattern" else _shape(v)
            for k, v in node.items()
            if k not in ("description", "$schema", "$id", "title") or isinstance(v, dict)
        }
    if isinstance(node, list):
        return [_shape(x) for x in node]
    return node


def test_shipped_schema_is_the_published_one_as_draft_2020_12():
    assert SHIPPED["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(SHIPPED)
    # Same keywords and values everywhere but prose, identifiers and the ASCII spelling
    # of `\d` (ECMA-262's `\d` is [0-9]).
    assert _shape(SHIPPED) == _shape(PUBLISHED)
    assert "additionalProperties" not in str(SHIPPED)


# -- every example --------------------------------------------------------------------------


EXAMPLES = {
    "schema-examples-0": PUBLISHED["examples"][0],
    "handshake-spec-2.2": HANDSHAKE_EXAMPLE,
    "shipped-schema-examples-0": SHIPPED["examples"][0],
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_spec_examples_parse_validate_and_round_trip(core, name):
    doc = EXAMPLES[name]
    assert published.is_valid(doc) and shipped.is_valid(doc)
    manifest = CapabilityManifest.from_dict(doc)
    assert manifest.to_dict() == doc
    assert manifest.to_json() == core.canonicalize(doc)
    assert CapabilityManifest.from_dict(manifest.to_dict()) == manifest
    assert spec_warnings(manifest) == []


def test_handshake_example_keeps_scopes_and_placeholder_key():
    manifest = CapabilityManifest.from_dict(HANDSHAKE_EXAMPLE)
    assert manifest.extra == {"scopes": ["repo:read", "repo:write"]}
    assert manifest.identity.verification_key == "ed25519:abc123..."  # claimed, kept as given
    assert manifest.trust_level is TrustLevel.VERIFIED_PARTNER
    assert manifest.reversibility.level is ReversibilityLevel.PARTIAL
    assert manifest.privacy.retention_policy is RetentionPolicy.EPHEMERAL


@pytest.mark.parametrize("name", PYTHON_MODEL_FILES)
def test_python_model_manifests_are_not_wire_manifests(name):
    """The reference package's internal model (`agent_id` at the top, `privacy_contract`,
    `capabilities.reversibility` as a string) is not the wire schema: no `identity`, no
    `protocol_version`.  Both the published schema and ajpcore refuse it, naming both."""
    doc = load_json("iatp", f"python-model-manifests/{name}")
    assert not published.is_valid(doc)
    with pytest.raises(ValidationError) as info:
        CapabilityManifest.from_dict(doc)
    reasons = str(info.value)
    assert "identity" in reasons and "protocol_version" in reasons
    assert len(info.value.errors) >= 2


EXPECTED_SCORES = {  # IATP-001 section 2.3 on the converted manifests
    "coder_agent.json": (10, "allow"),  # trusted 7, full +2, ephemeral +1
    "reviewer_agent.json": (5, "warn"),  # standard 5, none, temporary
    "secure_bank.json": (10, "allow"),  # verified_partner 10, full +2, ephemeral +1, clamped
    "standard_agent.json": (7, "allow"),  # standard 5, partial +2
    "untrusted_honeypot.json": (0, "warn"),  # untrusted 0, permanent -1, human -2, clamped
}


@pytest.mark.parametrize("name", PYTHON_MODEL_FILES)
def test_reference_model_adapter_gives_valid_wire_manifests(name):
    model = load_json("iatp", f"python-model-manifests/{name}")
    manifest = manifest_from_reference_model(model, owner="Example Org")
    doc = manifest.to_dict()
    assert published.is_valid(doc)
    assert doc["identity"] == {"agent_id": model["agent_id"], "owner": "Example Org"}
    assert doc["reversibility"]["level"] == model["capabilities"]["reversibility"]
    assert doc["privacy"]["retention_policy"] == model["privacy_contract"]["retention"]
    assert doc["privacy"]["human_in_loop"] == model["privacy_contract"]["human_review"]
    assert doc["rate_limiting"] == {"requests_per_minute": model["capabilities"]["rate_limit"]}
    assert doc["capabilities"]["sla_latency_ms"] == int(model["capabilities"]["sla_latency"][:-2])
    if "undo_window" in model["capabilities"]:
        assert doc["reversibility"]["undo_window_seconds"] == 86400  # "24h"
    for key in ("agent_version", "scopes"):
        assert doc.get(key) == model.get(key)
    score = trust_score(manifest)
    assert (score.score, score.decision) == EXPECTED_SCORES[name]


@pytest.mark.parametrize(
    "change,where",
    [
        (lambda m: m["capabilities"].update(undo_window="24 hours"), "$.capabilities.undo_window"),
        (lambda m: m["capabilities"].update(undo_window="1500ms"), "$.capabilities.undo_window"),
        (lambda m: m["capabilities"].update(sla_latency=2000), "$.capabilities.sla_latency"),
        (lambda m: m["privacy_contract"].pop("retention"), "$.privacy_contract"),
        (lambda m: m.pop("privacy_contract"), "$.privacy_contract"),
        (lambda m: m.update(trust_level="royal"), "$.trust_level"),
        (lambda m: m["capabilities"].update(reversibility="mostly"), "$.reversibility.level"),
    ],
)
def test_reference_model_adapter_refusals(change, where):
    model = load_json("iatp", "python-model-manifests/coder_agent.json")
    change(model)
    with pytest.raises(ValidationError) as info:
        manifest_from_reference_model(model, owner="o")
    assert where in [path for path, _ in info.value.errors]


def test_attestation_example_is_not_a_manifest():
    doc = load_json("iatp", "iatp-attestation-spec-example.json")["attestation"]
    assert not published.is_valid(doc)
    assert not accepts(doc)


# -- the differential -------------------------------------------------------------------


DIFFERENTIAL = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@DIFFERENTIAL
@given(doc=manifests())
def test_strategy_manifests_are_valid(doc):
    assert published.is_valid(doc)
    manifest = CapabilityManifest.from_dict(doc)
    assert manifest.to_dict() == doc


@DIFFERENTIAL
@given(doc=manifest_mutations())
def test_accepts_exactly_what_the_published_schema_accepts(doc):
    verdict = published.is_valid(doc)
    assert shipped.is_valid(doc) == verdict
    try:
        manifest = CapabilityManifest.from_dict(doc)
    except ValidationError as exc:
        assert not verdict, f"refused a manifest the schema accepts: {exc}"
        assert exc.errors and all(path.startswith("$") for path, _ in exc.errors)
    else:
        assert verdict, f"accepted a manifest the schema refuses: {list(published.iter_errors(doc))}"
        assert manifest.to_dict() == doc


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(doc=manifests() | manifest_mutations())
def test_bytes_path_agrees_on_both_twins(twins, doc):
    """from_json (strict decode, then validate) gives the same verdict and value on both twins."""
    outcomes = []
    for twin in twins:
        with using(twin):
            data = twin.canonicalize(doc)
            try:
                outcomes.append(CapabilityManifest.from_json(data))
            except ValidationError as exc:
                outcomes.append((type(exc), str(exc)))
    assert outcomes[0] == outcomes[1]
    assert isinstance(outcomes[0], CapabilityManifest) == published.is_valid(doc)


# Cases a strategy might miss, each stated once.
EDGE_CASES = [
    ("integral float is an integer", ("capabilities", "concurrency_limit"), 10.0, True),
    ("fraction is not an integer", ("capabilities", "concurrency_limit"), 10.5, False),
    ("minimum 1", ("capabilities", "concurrency_limit"), 0, False),
    ("bool is not a number", ("capabilities", "sla_availability"), True, False),
    ("number max 1", ("capabilities", "sla_availability"), 1.0000001, False),
    ("number exactly 1", ("capabilities", "sla_availability"), 1, True),
    ("negative zero meets minimum 0", ("rate_limiting", "requests_per_second"), -0.0, True),
    ("bool is not an integer", ("rate_limiting", "burst_limit"), True, False),
    ("astral characters count once", ("identity", "agent_id"), "\U0001f680" * 255, True),
    ("256 characters", ("identity", "agent_id"), "a" * 256, False),
    ("empty agent id", ("identity", "agent_id"), "", False),
    ("notes at 1000", ("reversibility", "compensation_notes"), "\u00e9" * 1000, True),
    ("notes at 1001", ("reversibility", "compensation_notes"), "n" * 1001, False),
    ("null compensation method", ("reversibility", "compensation_method"), None, True),
    ("email format is an annotation", ("identity", "contact"), "not an email", True),
    ("uri format is an annotation", ("privacy", "data_processing_addendum"), "::", True),
    ("uri-reference is an annotation", ("reversibility", "compensation_endpoint"), "POST /x/{id}", True),
    ("trailing newline in version", ("protocol_version",), "1.0\n", False),
    ("Arabic-Indic digits", ("protocol_version",), "\u0661.\u0660", False),
    ("fullwidth digits", ("manifest_version",), "\uff11.\uff10.\uff10", False),
    ("many digits", ("protocol_version",), "10.200", True),
    ("date only", ("updated_at",), "2026-01-23", False),
    ("no offset", ("updated_at",), "2026-01-23T00:00:00", False),
    ("30 February", ("updated_at",), "2026-02-30T00:00:00Z", False),
    ("29 February of a leap year", ("updated_at",), "2024-02-29T23:59:59.999+05:30", True),
    ("numeric offset", ("updated_at",), "2026-01-23T00:00:00-08:00", True),
    ("leap second UTC", ("updated_at",), "1998-12-31T23:59:60Z", True),
    ("leap second with offset", ("updated_at",), "1998-12-31T15:59:60.123-08:00", True),
    ("leap second at the wrong minute", ("updated_at",), "1998-12-31T23:58:60Z", False),
    ("lower-case t and z", ("updated_at",), "2026-01-23t00:00:00z", True),
    ("year zero", ("updated_at",), "0000-01-01T00:00:00Z", True),
    ("duplicate auth methods", ("authentication", "methods"), ["jwt", "jwt"], True),
    ("unknown auth method", ("authentication", "methods"), ["jwt", "saml"], False),
    ("auth methods not a list", ("authentication", "methods"), "jwt", False),
]


@pytest.mark.parametrize("label,path,value,valid", EDGE_CASES, ids=[c[0] for c in EDGE_CASES])
def test_edge_cases_agree_with_the_published_schema(label, path, value, valid):
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc["rate_limiting"] = {"burst_limit": 5}
    doc["authentication"] = {"methods": ["api_key"]}
    target = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    assert published.is_valid(doc) is valid
    assert accepts(doc) is valid


def test_python_re_reading_of_the_pattern_differs_and_ajpcore_follows_ecma_262():
    """Plain jsonschema (Python `re`) accepts "1.0\\n" and Arabic-Indic digits; JSON Schema
    specifies ECMA-262 regular expressions, under which both fail: ajpcore refuses them."""
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    for version in ("1.0\n", "\u0661.\u0660"):
        doc["protocol_version"] = version
        assert jsonschema.Draft7Validator(PUBLISHED).is_valid(doc)
        assert not published.is_valid(doc)
        assert not accepts(doc)


# -- every problem, with its path --------------------------------------------------------------


def test_validation_error_lists_every_problem_with_its_path():
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    del doc["identity"]["owner"]
    doc["capabilities"]["concurrency_limit"] = 0
    doc["privacy"]["retention_policy"] = "sometimes"
    doc["manifest_version"] = "1.0"
    with pytest.raises(ValidationError) as info:
        CapabilityManifest.from_dict(doc)
    paths = " ".join(path for path, _ in info.value.errors)
    for where in ("identity", "concurrency_limit", "retention_policy", "manifest_version"):
        assert where in paths or where in str(info.value)
    assert len(info.value.errors) == 4
    for line in str(info.value).splitlines():
        assert re.search(r" - at `\$[^`]*`$", line), line
    assert isinstance(info.value, ValueError) and info.value.status == 400


@pytest.mark.parametrize("doc", [[], "manifest", 1, None, True])
def test_not_an_object(doc):
    with pytest.raises(ValidationError):
        CapabilityManifest.from_dict(doc)


# -- typed values ---------------------------------------------------------------------------


def test_typed_parts_and_defaults():
    m = CapabilityManifest.from_dict(PUBLISHED["examples"][0])
    assert m.identity == Identity(
        agent_id="expedia-booking-bot-v2.1.0",
        verification_key="ed25519:abc123def456",
        owner="Expedia Group",
        contact="security@expedia.com",
    )
    assert m.capabilities.sla_availability == 0.999
    assert m.reversibility.standard_method.value == "refund_minus_fee"
    assert m.updated.isoformat() == "2026-01-23T00:00:00+00:00"
    bare = Privacy().with_defaults()
    assert bare.retention_policy is RetentionPolicy.TEMPORARY
    assert (bare.human_in_loop, bare.training_consent, bare.encryption_at_rest, bare.encryption_in_transit) == (
        False, False, False, True,
    )
    assert Privacy().to_dict() == {}  # defaults are never written back
    assert Capabilities().with_defaults().idempotency is False
    assert Authentication().with_defaults().required is False


def test_compensation_method_absent_null_and_custom_round_trip():
    absent = Reversibility.from_dict({"level": "none"})
    null = Reversibility.from_dict({"level": "none", "compensation_method": None})
    custom = Reversibility.from_dict({"level": "partial", "compensation_method": "custom:email_recall"})
    assert absent.compensation_method is ABSENT and absent.to_dict() == {"level": "none"}
    assert null.compensation_method is None and null.to_dict() == {"level": "none", "compensation_method": None}
    assert absent != null
    assert custom.custom_method == "email_recall" and custom.standard_method is None


def test_integral_float_becomes_int_with_the_same_canonical_bytes(core):
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc["capabilities"]["concurrency_limit"] = 10.0
    doc["rate_limiting"] = {"burst_limit": 1e3, "requests_per_second": 2.5}
    m = CapabilityManifest.from_dict(doc)
    assert type(m.capabilities.concurrency_limit) is int and m.capabilities.concurrency_limit == 10
    assert type(m.rate_limiting.burst_limit) is int
    assert m.to_json() == core.canonicalize(doc)


def test_unknown_members_at_every_level_round_trip(core):
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc["future"] = {"nested": [1.5, {"deep": None}], "\U0001f680": -0.0}
    doc["identity"]["x-pgp"] = "..."
    doc["capabilities"]["streaming"] = True
    doc["reversibility"]["undo_conditions"] = {"until_state": "shipped", "x": [1]}
    doc["privacy"]["x"] = 1e21
    m = CapabilityManifest.from_dict(doc)
    assert m.extra["future"]["nested"][1] == {"deep": None}
    assert m.reversibility.undo_conditions.extra == {"x": [1]}
    assert m.to_dict() == doc
    assert m.to_json() == core.canonicalize(doc)


def test_no_aliasing_with_the_callers_containers():
    doc = copy.deepcopy(HANDSHAKE_EXAMPLE)
    m = CapabilityManifest.from_dict(doc)
    doc["scopes"].append("admin:manage")
    doc["identity"]["owner"] = "Someone else"
    assert m.extra["scopes"] == ["repo:read", "repo:write"] and m.identity.owner == "Expedia Group"
    out = m.to_dict()
    out["scopes"].clear()
    assert m.to_dict()["scopes"] == ["repo:read", "repo:write"]
    with pytest.raises(TypeError):
        m.extra["scopes"] = []
    with pytest.raises(AttributeError):
        m.trust_level = TrustLevel.UNTRUSTED


# -- direct construction is validated the same way -------------------------------------------------


def test_direct_construction_coerces_enums_and_validates():
    m = CapabilityManifest(
        identity=Identity(agent_id="a", owner="o"),
        trust_level="trusted",
        protocol_version="1.0",
        authentication=Authentication(methods=["jwt", "api_key"]),
    )
    assert m.trust_level is TrustLevel.TRUSTED
    assert m.authentication.methods == (AuthMethod.JWT, AuthMethod.API_KEY)
    assert CapabilityManifest.from_dict(m.to_dict()) == m
    with pytest.raises(TypeError):
        Identity("a", "o")  # keyword-only
    with pytest.raises(ValidationError, match="agent_id"):
        Identity(agent_id="", owner="o")
    with pytest.raises(ValidationError, match="trust_level"):
        CapabilityManifest(identity=Identity(agent_id="a", owner="o"), trust_level="best", protocol_version="1.0")
    with pytest.raises(ValidationError, match="protocol_version"):
        CapabilityManifest(identity=Identity(agent_id="a", owner="o"), trust_level="trusted", protocol_version="1")
    with pytest.raises(ValidationError, match="Identity"):
        CapabilityManifest(identity={"agent_id": "a", "owner": "o"}, trust_level="trusted", protocol_version="1.0")
    with pytest.raises(ValidationError, match="Declared member"):
        Identity(agent_id="a", owner="o", extra={"owner": "p"})
    with pytest.raises(ValidationError, match="until_state"):
        UndoConditions(until_state=5)
    with pytest.raises(ValidationError, match="Non-finite"):
        Capabilities(sla_availability=math.nan)
    with pytest.raises(ValidationError, match="surrogate"):
        Identity(agent_id="\ud800", owner="o")
    caps = Capabilities(concurrency_limit=10.0)
    assert type(caps.concurrency_limit) is int and caps == Capabilities.from_dict({"concurrency_limit": 10})


# -- hostile Python input ---------------------------------------------------------------------


def test_deep_nesting_in_an_extra_member_is_refused_without_recursion():
    deep = []
    for _ in range(100_000):
        deep = [deep]
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc["deep"] = deep
    with pytest.raises(ValidationError, match="Nesting deeper"):
        CapabilityManifest.from_dict(doc)


@pytest.mark.parametrize(
    "value,reason",
    [
        (math.nan, "Non-finite"),
        (math.inf, "Non-finite"),
        ({1: "x"}, "member names"),
        ({"x"}, "JSON value"),
        (b"bytes", "JSON value"),
        ("\ud800", "surrogate"),
        (2**53 + 1, "`"),
    ],
)
def test_values_without_a_json_form_are_refused(value, reason):
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc["x"] = {"y": [value]}
    with pytest.raises(ValidationError, match=reason) as info:
        CapabilityManifest.from_dict(doc)
    assert info.value.errors[0][0] == "$.x.y[0]"


def test_nan_in_a_declared_number_is_refused():
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc["capabilities"]["sla_availability"] = math.nan
    with pytest.raises(ValidationError, match="Non-finite"):
        CapabilityManifest.from_dict(doc)


@pytest.mark.parametrize(
    "data",
    [b'{"identity": 1, "identity": 2}', b"{", b'{"protocol_version": NaN}', b"\xff", b"[" * 100_000],
)
def test_from_json_refuses_malformed_bytes(core, data):
    with pytest.raises(DecodeError):
        CapabilityManifest.from_json(data)


def test_from_json_reports_schema_problems_as_validation_error(core):
    with pytest.raises(ValidationError, match="protocol_version"):
        CapabilityManifest.from_json(b'{"identity": {"agent_id": "a", "owner": "o"}, "trust_level": "unknown"}')


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(
    st.binary(max_size=64)
    | manifest_mutations().map(lambda doc: json.dumps(doc).encode()[: len(json.dumps(doc)) // 2])
    | manifests().map(lambda doc: json.dumps(doc, ensure_ascii=False).encode())
)
def test_from_json_on_arbitrary_bytes_is_the_same_on_both_twins(twins, data):
    outcomes = []
    for twin in twins:
        with using(twin):
            try:
                outcomes.append(CapabilityManifest.from_json(data))
            except DecodeError as exc:  # ValidationError included
                outcomes.append((type(exc), str(exc), exc.pos))
    assert outcomes[0] == outcomes[1]


def test_pickle_and_copy_go_through_the_json_form():
    import pickle

    m = CapabilityManifest.from_dict(HANDSHAKE_EXAMPLE)
    assert pickle.loads(pickle.dumps(m)) == m
    assert copy.deepcopy(m) == m and copy.copy(m) == m


def test_member_names_that_look_like_attributes_are_plain_extra_members(core):
    doc = copy.deepcopy(PUBLISHED["examples"][0])
    doc.update({"extra": {"a": 1}, "schema_uri": "x", "__class__": None, "to_dict": 5})
    m = CapabilityManifest.from_dict(doc)
    assert m.extra["extra"] == {"a": 1} and m.schema_uri == doc["$schema"]
    assert m.to_dict() == doc and m.to_json() == core.canonicalize(doc)
    with pytest.raises(ValidationError, match="Declared member"):
        CapabilityManifest(
            identity=m.identity, trust_level="trusted", protocol_version="1.0", extra={"$schema": "x"}
        )

"""IATP-002 messages: reversibility declarations, compensation request/response, saga chain, audit events."""

import copy
import datetime as dt

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore import ValidationError
from ajpcore.iatp import (
    AuditEvent,
    CapabilityManifest,
    Capabilities,
    ChainEntry,
    ChainStatus,
    CompensationChain,
    CompensationMethod,
    CompensationRequest,
    CompensationResponse,
    Reversibility,
    schema,
    spec_warnings,
    undo_decision,
)
from ajpcore.timestamps import is_timestamp
from vector_files import load_json

EXAMPLES = load_json("iatp", "iatp-002-reversibility-examples.json")
PUBLISHED = load_json("iatp", "iatp-capability-manifest.schema.json")
FORMATS = jsonschema.FormatChecker(formats=())
FORMATS.checks("date-time")(lambda v: not isinstance(v, str) or is_timestamp(v))

KINDS = {
    "compensation_request": (CompensationRequest, "iatp-compensation-request"),
    "compensation_response": (CompensationResponse, "iatp-compensation-response"),
    "compensation_chain": (CompensationChain, "iatp-compensation-chain"),
    "audit_event": (AuditEvent, "iatp-audit-event"),
}


def reference(name):
    return jsonschema.Draft202012Validator(schema(name), format_checker=FORMATS)


def in_manifest(reversibility):
    return {
        "identity": {"agent_id": "a", "owner": "o"},
        "trust_level": "standard",
        "protocol_version": "1.0",
        "reversibility": reversibility,
    }


# -- every example of the specification ---------------------------------------------------------------


@pytest.mark.parametrize("example", EXAMPLES["reversibility"], ids=lambda e: e["section"])
def test_reversibility_examples(core, example):
    value = example["value"]
    jsonschema.Draft7Validator(PUBLISHED).validate(in_manifest(value))
    rev = Reversibility.from_dict(value)
    assert rev.to_dict() == value
    manifest = CapabilityManifest.from_dict(in_manifest(value))
    assert manifest.to_json() == core.canonicalize(in_manifest(value))
    assert spec_warnings(manifest) == []  # the specification follows its own advice


def test_custom_method_and_endpoint_of_section_3_2():
    (custom,) = [e["value"] for e in EXAMPLES["reversibility"] if e["section"] == "3.2"]
    rev = Reversibility.from_dict(custom)
    assert rev.custom_method == "email_recall" and rev.standard_method is None
    assert rev.compensation_endpoint == "POST /compensate/{transaction_id}"  # not a URI reference: annotation only


def test_irreversible_examples_are_null_method():
    for example in EXAMPLES["reversibility"]:
        rev = Reversibility.from_dict(example["value"])
        if rev.level.value == "none":
            assert rev.compensation_method is None and rev.compensation_notes


def test_state_based_fragment_of_section_4_2():
    (fragment,) = [e["value"] for e in EXAMPLES["reversibility_fragment"]]
    with pytest.raises(ValidationError, match="level"):
        Reversibility.from_dict(fragment)  # a fragment: `level` is required
    manifest = CapabilityManifest.from_dict(in_manifest(dict(fragment, level="partial")))
    executed = dt.datetime(2026, 1, 23, tzinfo=dt.timezone.utc)
    late = executed + dt.timedelta(days=3)
    assert undo_decision(manifest, executed_at=executed, now=late, state="processing").allowed
    assert undo_decision(manifest, executed_at=executed, now=late, state="shipped").reason == "state `shipped` reached"


def test_capabilities_example_of_section_6_1():
    (caps,) = [e["value"] for e in EXAMPLES["capabilities"]]
    assert Capabilities.from_dict(caps).idempotency_duration_seconds == 86400


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_message_examples_parse_validate_and_round_trip(core, kind):
    cls, name = KINDS[kind]
    assert EXAMPLES[kind]
    for example in EXAMPLES[kind]:
        value = example["value"]
        reference(name).validate(value)
        typed = cls.from_dict(value)
        assert typed.to_dict() == value
        assert cls.from_json(core.canonicalize(value)) == typed
        assert typed.to_json() == core.canonicalize(value)


@pytest.mark.parametrize("name", ["iatp-compensation-request", "iatp-compensation-response", "iatp-audit-event", "iatp-compensation-chain", "iatp-attestation"])
def test_shipped_schemas_are_valid_2020_12_and_their_examples_validate(name):
    document = schema(name)
    jsonschema.Draft202012Validator.check_schema(document)
    for example in document.get("examples", []):
        reference(name).validate(example)


def test_chain_schema_inlines_the_entry_schema():
    entry = dict(schema("iatp-compensation-chain-entry"))
    inline = dict(schema("iatp-compensation-chain")["properties"]["compensation_chain"]["items"])
    for key in ("$schema", "$id", "title", "description"):
        entry.pop(key, None)
        inline.pop(key, None)
    assert inline == entry


# -- typed values and refusals ---------------------------------------------------------------------


INVALID = [
    (CompensationRequest, {"reason": "user_requested"}, "timestamp"),
    (CompensationRequest, {"reason": "", "timestamp": "2026-01-23T12:34:56Z"}, "reason"),
    (CompensationRequest, {"reason": "x", "timestamp": "2026-01-23 12:34:56Z"}, "timestamp"),
    (CompensationResponse, {"compensation_applied": "refund"}, "success"),
    (CompensationResponse, {"success": "true"}, "success"),
    (CompensationResponse, {"success": True, "amount_returned": -1}, "amount_returned"),
    (CompensationResponse, {"success": True, "completion_time_ms": 1.5}, "completion_time_ms"),
    (ChainEntry, {"agent_id": "a", "transaction_id": "t", "status": "undone"}, "status"),
    (ChainEntry, {"agent_id": "a", "transaction_id": "t", "status": "pending", "compensation_method": 1}, "compensation_method"),
    (CompensationChain, {"trace_id": "x", "compensation_chain": [{"agent_id": "a"}]}, "compensation_chain[0]"),
    (AuditEvent, {"event": "compensation_attempted", "trace_id": "abc"}, "timestamp"),
]


@pytest.mark.parametrize("cls,value,where", INVALID)
def test_invalid_messages_agree_with_the_shipped_schema(cls, value, where):
    name = cls._SCHEMA[0]
    assert not reference(name).is_valid(value)
    with pytest.raises(ValidationError, match=where.replace("[", r"\[").replace("]", r"\]")):
        cls.from_dict(value)


@settings(max_examples=60, deadline=None)
@given(
    value=st.fixed_dictionaries(
        {"success": st.booleans()},
        optional={
            "compensation_applied": st.sampled_from([m.value for m in CompensationMethod]) | st.integers(),
            "amount_returned": st.floats(-10, 1e9, allow_nan=False) | st.integers(-5, 10**9) | st.text(max_size=3),
            "fee_charged": st.floats(-1, 100, allow_nan=False),
            "completion_time_ms": st.integers(-2, 10**6) | st.floats(-1, 1e6, allow_nan=False),
            "error": st.text(max_size=20) | st.none(),
            # ints a binary64 carries exactly: larger ones are refused by design (I-JSON), which
            # the reference validator does not know about
            "extra": st.dictionaries(st.text(max_size=4), st.integers(-(2**53) + 1, 2**53 - 1), max_size=2),
        },
    )
)
def test_response_verdicts_agree_with_jsonschema(value):
    expected = reference("iatp-compensation-response").is_valid(value)
    try:
        typed = CompensationResponse.from_dict(value)
    except ValidationError:
        assert not expected
    else:
        assert expected and typed.to_dict() == value


# -- the saga: compensate backwards, one step at a time -------------------------------------------------


def spec_saga_steps():
    """IATP-002 section 5.1: A calls B calls C; C fails."""
    return [
        ChainEntry(agent_id="agent-a", transaction_id="txn-123", compensation_method="refund", status="completed"),
        ChainEntry(agent_id="agent-b", transaction_id="txn-456", compensation_method="delete", status="completed"),
        ChainEntry(agent_id="agent-c", transaction_id="txn-789", compensation_method="rollback", status="failed"),
    ]


def test_saga_reproduces_the_chain_of_section_5_2():
    chain = CompensationChain.from_execution("abc-123", spec_saga_steps())
    assert [e.agent_id for e in chain.entries] == ["agent-c", "agent-b", "agent-a"]
    assert not chain.complete
    order = []
    while (entry := chain.next_to_compensate()) is not None:
        order.append(entry.transaction_id)
        chain = chain.record(entry.transaction_id, "compensated")
    assert order == ["txn-456", "txn-123"]
    assert chain.complete
    (expected,) = [e["value"] for e in EXAMPLES["compensation_chain"]]
    assert chain.to_dict() == expected


def test_saga_refuses_out_of_order_and_stops_after_a_failed_compensation():
    chain = CompensationChain.from_execution("t", spec_saga_steps())
    with pytest.raises(ValidationError, match="Out of order"):
        chain.record("txn-123", "compensated")  # A before B
    with pytest.raises(ValidationError, match="compensated"):
        chain.record("txn-456", "pending")
    stuck = chain.record("txn-456", ChainStatus.FAILED)
    assert stuck.entries[1].extra == {"compensation_attempted": True}
    assert stuck.next_to_compensate() is None and not stuck.complete
    assert CompensationChain.from_dict(stuck.to_dict()) == stuck
    with pytest.raises(ValidationError, match="completed"):
        CompensationChain.from_execution("t", [ChainEntry(agent_id="a", transaction_id="t", status="pending")])


def test_chain_values_are_frozen():
    chain = CompensationChain.from_execution("t", spec_saga_steps())
    with pytest.raises(AttributeError):
        chain.trace_id = "u"
    assert isinstance(chain.entries, tuple)
    assert copy.deepcopy(chain) == chain


def _loose(valid):
    """A value that is often valid, often of another JSON type."""
    return valid | st.none() | st.integers(-2, 2) | st.floats(-1, 1, allow_nan=False) | st.text(max_size=3) | st.booleans()


_TIMES = st.sampled_from(["2026-01-23T12:34:56Z", "2026-01-23T12:34:56.5+01:00", "2026-02-30T00:00:00Z", "2026-01-23"])
_ENTRY = st.fixed_dictionaries(
    {},
    optional={
        "agent_id": _loose(st.text(max_size=4)),
        "transaction_id": _loose(st.text(max_size=4)),
        "status": _loose(st.sampled_from([s.value for s in ChainStatus] + ["undone"])),
        "compensation_method": _loose(st.sampled_from(["rollback", "custom:x"])),
        "x-extra": st.integers(),
    },
)
MESSAGES = {
    CompensationRequest: st.fixed_dictionaries(
        {}, optional={"reason": _loose(st.text(max_size=4)), "timestamp": _loose(_TIMES), "note": st.text(max_size=3)}
    ),
    ChainEntry: _ENTRY,
    CompensationChain: st.fixed_dictionaries(
        {}, optional={"trace_id": _loose(st.text(max_size=4)), "compensation_chain": st.lists(_ENTRY, max_size=3) | _loose(st.just([]))}
    ),
    AuditEvent: st.fixed_dictionaries(
        {},
        optional={
            "event": _loose(st.text(max_size=4)),
            "trace_id": _loose(st.text(max_size=4)),
            "timestamp": _loose(_TIMES),
            "requested_by": _loose(st.text(max_size=4)),
            "result": _loose(st.text(max_size=4)),
        },
    ),
}


@pytest.mark.parametrize("cls", list(MESSAGES), ids=lambda c: c.__name__)
def test_message_verdicts_agree_with_jsonschema(cls):
    @settings(max_examples=60, deadline=None)
    @given(value=MESSAGES[cls])
    def check(value):
        expected = reference(cls._SCHEMA[0]).is_valid(value)
        try:
            typed = cls.from_dict(value)
        except ValidationError:
            assert not expected
        else:
            assert expected and typed.to_dict() == value

    check()

"""Typed AJP envelopes: spec messages, round trips, differential validation against jsonschema,
unknown members, construction, job ids, JobResult verification modes."""

import base64
import copy
import json
import re

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings

from ajpcore import BadSignature, DecodeError, LegacySignature, ValidationError, canonicalize, sign
from ajpcore import ajp, schemas, strategies
from ajpcore import verify as ajpcore_verify
from ajpcore.timestamps import is_timestamp
from vector_files import load_json

MESSAGES = load_json("ajp", "ajp-spec-messages.json")
SIGNED = load_json("ajp", "ajp-signature-vectors.json")
VECTORS = {v["id"]: v["message"] for v in SIGNED["vectors"]}
SECRET = SIGNED["hmac_secret_utf8"]
PUBLIC = SIGNED["keypair"]["public_key_spki_der_b64"]
PRIVATE = SIGNED["keypair"]["private_key_pkcs8_der_b64"]

SPEC_CASES = [
    (ajp.JobOffer, MESSAGES["JobOffer"]),
    (ajp.JobStatus, MESSAGES["JobStatus"]),
    (ajp.JobResult, MESSAGES["JobResult"]),
    (ajp.Accepted, MESSAGES["responses"]["POST /jobs 202"]),
    (ajp.Ack, MESSAGES["responses"]["POST ack body"]),
] + [(ajp.ErrorBody, MESSAGES["responses"][k]) for k in ("400", "401", "401 legacy", "403 identity", "403 standing", "402", "429", "GET 404")] + [
    (ajp.JobOffer if vid.startswith("offer") else ajp.JobResult, message) for vid, message in VECTORS.items()
]


@pytest.mark.parametrize("cls, message", SPEC_CASES, ids=[f"{c.__name__}-{i}" for i, (c, _) in enumerate(SPEC_CASES)])
def test_spec_messages_parse_validate_and_round_trip(core, cls, message):
    data = json.dumps(message).encode()
    envelope = cls.from_json(data)
    assert envelope.to_dict() == message
    assert list(envelope.to_dict()) == list(message)  # member order as received
    assert envelope.to_json() == canonicalize(message)
    again = cls.from_json(envelope.to_json())
    assert again == envelope and again.to_json() == envelope.to_json()
    assert cls.from_dict(message) == envelope


def test_spec_offer_fields_are_typed():
    offer = ajp.JobOffer.from_dict(MESSAGES["JobOffer"])
    assert isinstance(offer.sender, ajp.Sender) and offer.sender.type == "human"
    assert isinstance(offer.budget, ajp.Budget) and offer.budget.max_usd == 0.5
    assert isinstance(offer.callback, ajp.Callback) and offer.callback.headers == {"Authorization": "Bearer token_xyz"}
    assert offer.parent_job_id is None and offer.context.memory == []
    result = ajp.JobResult.from_dict(MESSAGES["JobResult"])
    assert result.agent.model == {"provider": "anthropic", "model_id": "claude-sonnet-4-5"}
    assert result.usage.llm_tokens == 4821


def test_sdk_status_shape_is_only_a_shape():
    # Its timestamps are "<iso>" placeholders and its id "job_..." is 7 characters: refused, with paths.
    with pytest.raises(ValidationError) as info:
        ajp.JobStatus.from_dict(MESSAGES["sdk_GET_status_when_completed"])
    assert {path for path, _ in info.value.errors} == {"$.job_id", "$.started_at", "$.updated_at", "$.completed_at"}
    fixed = dict(MESSAGES["sdk_GET_status_when_completed"], started_at="2026-03-05T10:00:01Z",
                 updated_at="2026-03-05T10:00:08Z", completed_at="2026-03-05T10:00:19Z", job_id="job_00000000")
    assert ajp.JobStatus.from_dict(fixed).agent.provenance_id == "provenance:..."


# -- differential: the typed validation accepts exactly what jsonschema accepts --

_FORMATS = jsonschema.FormatChecker()


@_FORMATS.checks("date-time")
def _reference_date_time(text):
    # Independent of ajpcore.timestamps: the datetime module decides the calendar.
    from datetime import datetime

    if not isinstance(text, str):
        return True
    m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})", text, re.ASCII)
    if not m:
        return False
    try:
        datetime.strptime(m.group(1), "%Y-%m-%d")
    except ValueError:
        return False
    h, mi, s = int(m.group(2)), int(m.group(3)), int(m.group(4))
    zone = m.group(6)
    if zone not in "Zz" and (int(zone[1:3]) > 23 or int(zone[4:6]) > 59):
        return False
    return h <= 23 and mi <= 59 and s <= 59  # the strategies draw no leap seconds


@_FORMATS.checks("uri")
def _reference_uri(text):
    return not isinstance(text, str) or re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*:[!-~]*", text) is not None


def _ecma_pattern(validator, pattern, instance, schema):
    # jsonschema searches with Python's re, whose `$` also matches before a final newline;
    # ECMA-262's does not.  The shipped AJP patterns use only `^ $` and classes: exact rewrite.
    if isinstance(instance, str) and re.search(pattern.replace("$", r"\Z"), instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_Reference = jsonschema.validators.extend(jsonschema.Draft202012Validator, {"pattern": _ecma_pattern})


def _reference(name):
    return _Reference(schemas.load(name), format_checker=_FORMATS)


REFERENCES = {name: _reference(name) for name in ("ajp-job-offer", "ajp-job-result", "ajp-job-status")}


def _agrees(cls, name, doc):
    expected = REFERENCES[name].is_valid(doc)
    try:
        cls.from_dict(doc)
        accepted = True
    except ValidationError as exc:
        accepted = False
        assert exc.errors and all(path.startswith("$") for path, _ in exc.errors)
    assert accepted == expected, (doc, list(REFERENCES[name].iter_errors(doc)))
    return expected


_SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_SETTINGS
@given(doc=strategies.job_offers())
def test_valid_offers_are_accepted(doc):
    assert _agrees(ajp.JobOffer, "ajp-job-offer", doc)


@_SETTINGS
@given(doc=strategies.offer_mutations())
def test_offer_mutations_agree_with_jsonschema(doc):
    _agrees(ajp.JobOffer, "ajp-job-offer", doc)


@_SETTINGS
@given(doc=strategies.job_results())
def test_valid_results_are_accepted(doc):
    assert _agrees(ajp.JobResult, "ajp-job-result", doc)


@_SETTINGS
@given(doc=strategies.result_mutations())
def test_result_mutations_agree_with_jsonschema(doc):
    _agrees(ajp.JobResult, "ajp-job-result", doc)


@_SETTINGS
@given(doc=strategies.job_statuses())
def test_valid_statuses_are_accepted(doc):
    assert _agrees(ajp.JobStatus, "ajp-job-status", doc)


@_SETTINGS
@given(doc=strategies.status_mutations())
def test_status_mutations_agree_with_jsonschema(doc):
    _agrees(ajp.JobStatus, "ajp-job-status", doc)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(doc=strategies.job_offers())
def test_drawn_offers_round_trip_through_bytes(core, doc):  # `core` only selects the twin
    offer = ajp.JobOffer.from_json(json.dumps(doc).encode())
    assert offer.to_json() == canonicalize(doc)
    # Compared as bytes: a float such as 6.979558306475269e16 comes back as the int ECMAScript
    # spells for it (69795583064752690), the same JSON number.
    again = ajp.JobOffer.from_json(offer.to_json())
    assert again.to_json() == offer.to_json() and again == offer


def test_every_problem_is_listed_with_its_path():
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["budget"]["max_usd"] = "0.5"
    doc["from"]["type"] = "robot"
    del doc["task"]["instruction"]
    doc["expires_at"] = "2026-03-05 10:02:00"
    with pytest.raises(ValidationError) as info:
        ajp.JobOffer.from_dict(doc)
    lines = str(info.value).splitlines()
    assert "Expected `number`, got `str` - at `$.budget.max_usd`" in lines
    assert "Object missing required field `instruction` - at `$.task`" in lines
    assert "Invalid RFC 3339 date-time - at `$.expires_at`" in lines
    assert any(line.startswith('Invalid enum value "robot"') and line.endswith("- at `$.from.type`") for line in lines)
    assert len(lines) == 4


def test_malformed_bytes_are_a_decode_error(core):
    good = json.dumps(MESSAGES["JobOffer"]).encode()
    for bad in (good[:-1], good.replace(b'"ajp"', b'"job_id"', 1), b'{"ajp": NaN}', good + b"x", b"\xff"):
        with pytest.raises(DecodeError) as info:
            ajp.JobOffer.from_json(bad)
        assert not isinstance(info.value, ValidationError)


def test_agent_sender_needs_a_provenance_id():
    doc = copy.deepcopy(VECTORS["offer-agent-ed25519-jcs"])
    doc["from"]["provenance_id"] = None
    with pytest.raises(ValidationError) as info:
        ajp.JobOffer.from_dict(doc)
    assert info.value.errors == [("$.from.provenance_id", "Expected `str`, got `null`")]


# -- unknown members: kept, round-tripped, signed --


def _with_unknown_members(message):
    doc = copy.deepcopy(message)
    doc["x_future"] = {"nested": [1, 2.5, "é"]}
    doc["task"]["x_hint"] = "v2 only"
    doc["budget"]["currency"] = "EUR"
    return doc


def test_unknown_members_are_kept_at_every_level(core):
    doc = _with_unknown_members(MESSAGES["JobOffer"])
    offer = ajp.JobOffer.from_json(json.dumps(doc).encode())
    assert dict(offer.extra) == {"x_future": {"nested": [1, 2.5, "é"]}}
    assert dict(offer.task.extra) == {"x_hint": "v2 only"}
    assert dict(offer.budget.extra) == {"currency": "EUR"}
    assert offer.sender.extra == {}
    assert offer.to_dict() == doc and offer.to_json() == canonicalize(doc)


def test_unknown_members_are_covered_by_the_signature(core):
    doc = _with_unknown_members(MESSAGES["JobOffer"])
    doc["signature"] = sign(doc, secret=SECRET)
    offer = ajp.JobOffer.from_json(json.dumps(doc).encode())
    offer.verify(secret=SECRET)
    tampered = copy.deepcopy(doc)
    tampered["budget"]["currency"] = "USD"
    with pytest.raises(BadSignature):
        ajp.JobOffer.from_dict(tampered).verify(secret=SECRET)
    stripped = copy.deepcopy(doc)
    del stripped["x_future"]
    with pytest.raises(BadSignature):
        ajp.JobOffer.from_dict(stripped).verify(secret=SECRET)


def test_from_dict_copies_its_input():
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    offer = ajp.JobOffer.from_dict(doc)
    doc["task"]["instruction"] = "changed"
    assert offer.task.instruction != "changed" and offer.to_dict()["task"]["instruction"] != "changed"


# -- construction --


def _keywords():
    return dict(
        ajp="0.1", job_id=ajp.new_job_id(), sender=ajp.Sender(type="human", id="user_1"),
        to=ajp.Recipient(provenance_id="provenance:domain:receiver.example"),
        task=ajp.Task(type="research", instruction="Summarize."), budget=ajp.Budget(max_usd=0),
        issued_at="2026-03-05T10:00:00.000Z", expires_at="2026-03-05T10:02:00.000Z",
    )


def test_built_offer_signs_and_verifies(core):
    offer = ajp.JobOffer(**_keywords(), extra={"x_future": True})
    assert offer.signature is None and "signature" not in offer.to_dict()
    signed = offer.signed(secret=SECRET)
    signed.verify(secret=SECRET)
    assert signed.to_dict()["x_future"] is True
    assert ajp.JobOffer.from_json(signed.to_json()) == signed
    agent = ajp.JobOffer(**dict(_keywords(), sender={"type": "agent", "provenance_id": "provenance:github:a/b"}))
    agent.signed(private_key=PRIVATE).verify(public_key=PUBLIC)


def test_construction_is_keyword_only_and_validated():
    with pytest.raises(TypeError):
        ajp.Budget(1)  # type: ignore[misc]
    with pytest.raises(TypeError):
        ajp.JobOffer(**{k: v for k, v in _keywords().items() if k != "task"})
    with pytest.raises(ValidationError) as info:
        ajp.JobOffer(**dict(_keywords(), job_id="short", issued_at="yesterday"))
    assert {p for p, _ in info.value.errors} == {"$.job_id", "$.issued_at"}
    with pytest.raises(ValidationError):
        ajp.Budget(max_usd=-1)
    with pytest.raises(ValidationError):
        ajp.JobOffer(**dict(_keywords(), budget=3))
    with pytest.raises(TypeError):
        ajp.JobOffer(**_keywords(), extra={"job_id": "job_duplicate"})


def test_envelopes_are_frozen_and_slotted():
    offer = ajp.JobOffer.from_dict(MESSAGES["JobOffer"])
    with pytest.raises(AttributeError):
        offer.job_id = "job_other_id"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        offer.budget.max_usd = 10  # type: ignore[misc]
    with pytest.raises(AttributeError):
        offer.anything = 1  # type: ignore[attr-defined]
    assert not hasattr(offer, "__dict__")
    with pytest.raises(TypeError):
        hash(offer)
    changed = offer.replace(job_id="job_replaced_1")
    assert changed.job_id == "job_replaced_1" and offer.job_id != changed.job_id
    assert changed.to_dict()["callback"] == MESSAGES["JobOffer"]["callback"]


def test_pickle_round_trip():
    import pickle

    offer = ajp.JobOffer.from_dict(_with_unknown_members(MESSAGES["JobOffer"]))
    assert pickle.loads(pickle.dumps(offer)) == offer


def test_new_job_id_shape_and_uniqueness():
    ids = {ajp.new_job_id() for _ in range(2000)}
    assert len(ids) == 2000
    for job_id in list(ids)[:50]:
        assert re.fullmatch(r"job_[0-9a-z]{8,}[0-9a-f]{16}", job_id)
        ajp.Accepted(job_id=job_id, status="accepted")


# -- JobResult: full body or the reference SDK's subset --


def test_sdk_subset_vector_verifies_only_when_asked_for(core):
    result = ajp.JobResult.from_dict(VECTORS["result-ed25519-sdk-subset"])
    with pytest.raises(BadSignature, match="mode=.sdk."):  # the default checks the whole body
        result.verify(public_key=PUBLIC)
    with pytest.raises(BadSignature):
        result.verify(public_key=PUBLIC, mode="full")
    view = result.verify(public_key=PUBLIC, mode="sdk")
    assert isinstance(view, ajp.SignedSubset) and view.mode == "sdk"
    assert canonicalize({k: v for k, v in view.to_dict().items() if k != "signature"}).decode() == (
        next(v for v in SIGNED["vectors"] if v["id"] == "result-ed25519-sdk-subset")["signed_bytes"]
    )


def test_full_body_signature_is_the_default(core):
    result = ajp.JobResult.from_dict(VECTORS["result-ed25519-sdk-subset"]).signed(private_key=PRIVATE)
    assert result.verify(public_key=PUBLIC) == "full"
    assert result.verify(public_key=PUBLIC, mode="full") == "full"
    with pytest.raises(BadSignature):
        result.verify(public_key=PUBLIC, mode="sdk")
    sdk_signed = result.signed(secret=SECRET, mode="sdk")
    assert sdk_signed.verify(secret=SECRET, mode="sdk").mode == "sdk"
    with pytest.raises(BadSignature):
        sdk_signed.verify(secret=SECRET)


@pytest.mark.parametrize("mode", ["any", "", None, "FULL"])
def test_unknown_modes_are_refused(mode):
    result = ajp.JobResult.from_dict(VECTORS["result-ed25519-sdk-subset"])
    with pytest.raises(ValueError, match="mode"):
        result.verify(public_key=PUBLIC, mode=mode)


def test_default_mode_refuses_every_member_changed_after_signing(core):
    # Before 0.2 the default fell back to the SDK subset: each of these verified as "sdk".
    result = ajp.JobResult.from_dict(VECTORS["result-ed25519-sdk-subset"])
    for change in (
        lambda d: d["usage"].update(cost_usd=1000),
        lambda d: d.update(ajp="9.9"),
        lambda d: d["agent"].update(version="6.6.6", model={"provider": "x", "model_id": "y"}),
        lambda d: d.update(x_unknown={"paid": True}),
    ):
        forged = result.to_dict()
        change(forged)
        forged_result = ajp.JobResult.from_dict(forged)
        with pytest.raises(BadSignature):
            forged_result.verify(public_key=PUBLIC)
        forged_result.verify(public_key=PUBLIC, mode="sdk")  # still the SDK's subset: reported below


def test_sdk_mode_reports_unsigned_members_and_to_dict_keeps_them_out(core):
    doc = copy.deepcopy(VECTORS["result-ed25519-sdk-subset"])
    doc["agent"]["version"] = "1.2.0"
    doc["agent"]["a/b~c"] = 1
    doc["x_unknown"] = {"paid": True}
    doc["usage"]["cost_usd"] = 1000  # changed after signing
    view = ajp.JobResult.from_dict(doc).verify(public_key=PUBLIC, mode="sdk")
    assert view.unsigned_members == ("/ajp", "/usage", "/agent/version", "/agent/a~1b~0c", "/x_unknown")
    signed_only = view.to_dict()
    assert set(signed_only) == {"job_id", "status", "output", "constraints_asserted", "completed_at", "agent", "signature"}
    assert signed_only["agent"] == {"provenance_id": doc["agent"]["provenance_id"]}
    assert signed_only["output"] == doc["output"] and signed_only["output"] is not doc["output"]
    ajpcore_verify(signed_only, public_key=PUBLIC)  # exactly what the signature covers, nothing more
    assert view.to_dict(include_unsigned=True) == doc
    assert view.received.usage.cost_usd == 1000  # reachable, but only through `received`
    assert (view.job_id, view.status, view.provenance_id) == (doc["job_id"], doc["status"], doc["agent"]["provenance_id"])
    assert view.output == doc["output"] and view.constraints_asserted == doc["constraints_asserted"]
    with pytest.raises(AttributeError):
        view.usage  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        view.unsigned_members = ()  # type: ignore[misc]


def test_sdk_mode_on_a_status_without_agent(core):
    status = {"job_id": "job_01J8X2K9M3N4P5Q6R7S8T9U0V1", "status": "running", "progress": 0.5}
    status["signature"] = sign({"job_id": status["job_id"], "status": "running", "agent": {}}, secret=SECRET)
    view = ajp.JobStatus.from_dict(status).verify(secret=SECRET, mode="sdk")
    assert view.unsigned_members == ("/progress",)
    assert view.provenance_id is None and view.to_dict() == {
        "job_id": status["job_id"], "status": "running", "agent": {}, "signature": status["signature"]}


def test_legacy_result_signature_is_reported_in_the_default_mode(core):
    from ajpcore import signing
    from ajpcore.keys import Ed25519PrivateKey

    result = ajp.JobResult.from_dict(VECTORS["result-ed25519-sdk-subset"])
    subset = {k: v for k, v in result.sdk_subset().items() if k != "signature"}
    key = Ed25519PrivateKey.from_string(PRIVATE)
    legacy = "ed25519:" + base64.b64encode(key.sign(canonicalize(signing._legacy_form(subset)))).decode()
    doc = dict(result.to_dict(), signature=legacy)
    for mode in ("full", "sdk"):
        with pytest.raises(LegacySignature):
            ajp.JobResult.from_dict(doc).verify(public_key=PUBLIC, mode=mode)
    with pytest.raises(LegacySignature):
        ajp.JobResult.from_dict(doc).verify(public_key=PUBLIC)
    hmac_legacy = dict(doc, signature=sign(signing._legacy_form(subset), secret=SECRET))
    with pytest.raises(LegacySignature):
        ajp.JobResult.from_dict(hmac_legacy).verify(secret=SECRET)


def test_sdk_subset_omits_absent_output():
    doc = dict(VECTORS["result-ed25519-sdk-subset"])
    del doc["output"]
    assert "output" not in ajp.JobResult.from_dict(doc).sdk_subset()
    doc["output"] = None
    assert ajp.JobResult.from_dict(doc).sdk_subset()["output"] is None


def test_legacy_offers_are_refused(core):
    with pytest.raises(LegacySignature):
        ajp.JobOffer.from_dict(VECTORS["offer-human-hmac-legacy"]).verify(secret=SECRET)
    with pytest.raises(LegacySignature):
        ajp.JobOffer.from_dict(VECTORS["offer-agent-ed25519-legacy"]).verify(public_key=PUBLIC)
    with pytest.raises(BadSignature):
        ajp.JobOffer.from_dict(VECTORS["offer-agent-tampered-nested"]).verify(public_key=PUBLIC)


def test_shipped_schemas_load_and_compile():
    from ajpcore._schema import compile_schema

    names = schemas.names()
    for name in ("ajp-job-offer", "ajp-job-status", "ajp-job-result", "ajp-ack", "ajp-accepted", "ajp-error-body"):
        assert name in names
        doc = schemas.load(name)
        assert doc["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(doc)
        compile_schema(doc)
    with pytest.raises(KeyError):
        schemas.load("nope")


def test_timestamps_in_spec_messages_are_strict_rfc3339():
    for key in ("issued_at", "expires_at"):
        assert is_timestamp(MESSAGES["JobOffer"][key])


def _deep(depth):
    value: list = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("where", ["task.input", "from.type", "context.memory", "extra"])
def test_hostile_depth_is_a_validation_error_never_a_recursion_error(where):
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    deep = _deep(200_000)
    if where == "task.input":
        doc["task"]["input"] = {"x": deep}
    elif where == "from.type":
        doc["from"]["type"] = deep
    elif where == "context.memory":
        doc["context"]["memory"] = deep
    else:
        doc["x_future"] = deep
    with pytest.raises(ValidationError):
        ajp.JobOffer.from_dict(doc)
    check = ajp.validate_offer(doc, now="2026-03-05T10:00:00Z", strict=True)
    assert check.valid == (where != "from.type")


def test_hostile_bytes_are_decode_errors(core):
    with pytest.raises(DecodeError):
        ajp.JobOffer.from_json(b"[" * 1_000_000 + b"]" * 1_000_000)
    with pytest.raises(DecodeError):
        ajp.JobOffer.from_json(b'{"ajp": "0.1", "job_id": "\\ud800xxxxxxx"}')


@pytest.mark.parametrize(
    "payload, reason",
    [
        ({"x": "\ud800"}, "String contains a lone surrogate - at `$.task.input.x`"),
        ({"x": {1, 2}}, "Expected a JSON value, got `set` - at `$.task.input.x`"),
        ({3: 4}, "Expected `str` member names, got `int` - at `$.task.input`"),
        ({"x": float("nan")}, "Non-finite float `nan` has no JSON form - at `$.task.input.x`"),
        ({"x": 2**64 + 1}, "- at `$.task.input.x`"),
    ],
)
def test_from_dict_refuses_values_without_a_json_form_in_free_form_members(payload, reason):
    # Free-form members (task.input) have no schema constraint: the checked copy is what refuses.
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["task"]["input"] = payload
    with pytest.raises(ValidationError) as info:
        ajp.JobOffer.from_dict(doc)
    assert str(info.value).endswith(reason)

"""The receive path: validate_offer (the reference SDK's rules and the strict mode), the replay
guard, end-to-end acceptance, and every refusal with its HTTP status and AJP error body."""

import copy
import json
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ajpcore import (
    BadSignature,
    DecodeError,
    LegacySignature,
    MalformedSignature,
    UnsupportedScheme,
    ValidationError,
    sign,
    strategies,
)
from ajpcore import ajp
from ajpcore.errors import BudgetRefused, Busy, InvalidMessage, ReplayedMessage, TimestampError, TrustRefused
from vector_files import load_json

MESSAGES = load_json("ajp", "ajp-spec-messages.json")
SIGNED = load_json("ajp", "ajp-signature-vectors.json")
VECTORS = {v["id"]: v["message"] for v in SIGNED["vectors"]}
SECRET = SIGNED["hmac_secret_utf8"]
PUBLIC = SIGNED["keypair"]["public_key_spki_der_b64"]
PRIVATE = SIGNED["keypair"]["private_key_pkcs8_der_b64"]
NOW = datetime(2026, 3, 5, 10, 1, tzinfo=timezone.utc)  # inside every vector offer's window
RECEIVER = "provenance:domain:receiver.example"  # every vector offer's `to`


def _bytes(doc):
    return json.dumps(doc).encode()


def _resigned(doc, **key):
    doc = copy.deepcopy(doc)
    doc["signature"] = sign(doc, **key)
    return doc


# -- validate_offer: the reference SDK's rules and messages --


def test_sdk_messages_for_an_empty_offer():
    check = ajp.validate_offer({}, now=NOW)
    assert not check.valid
    assert check.errors == [
        "missing: ajp", "missing: job_id", "missing: from.type", "missing: to.provenance_id", "missing: task.type",
        "missing: task.instruction", "missing: budget.max_usd", "missing: issued_at", "missing: expires_at",
        "missing: signature",
    ]
    assert check.warnings == []


def test_sdk_rules_follow_javascript_truthiness():
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["budget"]["max_usd"] = 0  # present: 0 is allowed
    doc["task"]["instruction"] = ""
    doc["job_id"] = 0
    assert ajp.validate_offer(doc, now=NOW).errors == ["missing: job_id", "missing: task.instruction"]
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["budget"]["max_usd"] = None
    doc["from"] = "human"  # not an object: from?.type is undefined
    assert ajp.validate_offer(doc, now=NOW).errors == ["missing: from.type", "missing: budget.max_usd"]


def test_sdk_sender_rules_and_declaration_warning():
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["from"]["type"] = "robot"
    assert ajp.validate_offer(doc, now=NOW).errors == ["from.type must be human, agent, or orchestrator"]
    doc["from"] = {"type": "orchestrator"}
    assert ajp.validate_offer(doc, now=NOW).errors == ["from.provenance_id required when type is agent/orchestrator"]
    agent = VECTORS["offer-agent-ed25519-jcs"]
    assert ajp.validate_offer(agent, now=NOW).warnings == []
    bare = copy.deepcopy(agent)
    bare["from"]["declaration_url"] = None
    check = ajp.validate_offer(bare, now=NOW)
    assert check.valid and len(check.warnings) == 1 and "declaration_url" in check.warnings[0]


def test_expiry_uses_the_given_now_only():
    offer = ajp.JobOffer.from_dict(MESSAGES["JobOffer"])  # expires 10:02:00Z
    assert ajp.validate_offer(offer, now="2026-03-05T10:02:00Z").valid  # not before now: still valid
    assert ajp.validate_offer(offer, now="2026-03-05T10:02:00.001Z").errors == ["offer has expired"]
    assert ajp.validate_offer(offer, now=datetime(2026, 3, 5, 11, 1, tzinfo=timezone(timedelta(hours=1)))).valid
    assert ajp.validate_offer(offer, now=1772704920.5).errors == ["offer has expired"]
    with pytest.raises(TimestampError):
        ajp.validate_offer(offer, now=datetime(2026, 3, 5))
    with pytest.raises(TimestampError):
        ajp.validate_offer(offer, now=[1])


def test_sdk_mode_lets_unparseable_timestamps_pass_and_strict_does_not():
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["expires_at"] = "next tuesday"
    doc["issued_at"] = "2026-03-05T10:00:00"  # no offset
    check = ajp.validate_offer(doc, now=NOW)
    assert check.valid and check.warnings == ["expires_at is not an RFC 3339 timestamp; expiry not checked"]
    errors = ajp.validate_offer(doc, now=NOW, strict=True).errors
    assert "invalid timestamp: issued_at (expected RFC 3339 with an explicit offset)" in errors
    assert "invalid timestamp: expires_at (expected RFC 3339 with an explicit offset)" in errors
    # strict mode also reports the schema's view, with paths
    assert "Invalid RFC 3339 date-time - at `$.expires_at`" in errors


NOT_RFC3339 = "expires_at is not an RFC 3339 timestamp; expiry not checked"
READ_AS_JS = "expires_at is not an RFC 3339 timestamp; expiry checked as JavaScript's Date reads it"


@pytest.mark.parametrize(
    "expires_at, errors, warnings",
    [
        # the reference SDK (`new Date(expires_at) < new Date()`) calls each of these expired
        ("2020-01-01", ["offer has expired"], [READ_AS_JS]),
        ("2020-01-01T00:00Z", ["offer has expired"], [READ_AS_JS]),
        ("2026-03-05T10:00+0100", ["offer has expired"], [READ_AS_JS]),
        (1577836800000, ["offer has expired"], [READ_AS_JS]),
        (True, ["offer has expired"], [READ_AS_JS]),  # new Date(true) is 1 ms after 1970
        ("2020-01-01T00:00", ["offer has expired"], [READ_AS_JS]),  # local time, but past in every zone
        # ... and none of these
        ("2030", [], [READ_AS_JS]),
        (1893456000000, [], [READ_AS_JS]),
        ("+275760-09-13T00:00:00.001Z", [], [READ_AS_JS]),  # Invalid Date: never "expired"
        ("2030-01-01T00:00", [], [READ_AS_JS]),  # local time, future in every zone
        # what only the server's zone or V8's legacy guesses decide: said, not judged
        ("2026-03-05T10:00", [], [NOT_RFC3339]),
        ("Jan 1 2020", [], [NOT_RFC3339]),
        ("2020/01/01", [], [NOT_RFC3339]),
        (["2020-01-01"], [], [NOT_RFC3339]),
        ({"at": 1}, [], [NOT_RFC3339]),
    ],
)
def test_sdk_mode_reads_non_rfc3339_expiry_as_the_sdk_or_warns(expires_at, errors, warnings):
    doc = copy.deepcopy(MESSAGES["JobOffer"])  # a human sender: no declaration warning
    doc["expires_at"] = expires_at
    check = ajp.validate_offer(doc, now=NOW)
    assert (check.errors, check.warnings) == (errors, warnings)
    strict = ajp.validate_offer(doc, now=NOW, strict=True)
    assert "invalid timestamp: expires_at (expected RFC 3339 with an explicit offset)" in strict.errors
    assert ("offer has expired" in strict.errors) == bool(errors)
    assert not strict.warnings


def test_sdk_mode_expiry_compares_milliseconds_as_the_sdk():
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["expires_at"] = "2026-03-05T10:01Z"  # not RFC 3339 (no seconds): read as JavaScript does
    assert ajp.validate_offer(doc, now="2026-03-05T10:01:00.000999Z").valid  # same millisecond
    assert ajp.validate_offer(doc, now="2026-03-05T10:01:00.001Z").errors == ["offer has expired"]
    doc["expires_at"] = 1772704860000.9  # 10:01:00.000 after truncation
    assert ajp.validate_offer(doc, now="2026-03-05T10:01:00.000999Z").valid
    assert not ajp.validate_offer(doc, now="2026-03-05T10:01:00.001Z").valid


def _window(issued, expires):
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["issued_at"], doc["expires_at"] = issued, expires
    return ajp.JobOffer.from_dict(doc)


def test_strict_clock_skew_and_lifetime():
    now = "2026-03-05T10:00:00Z"
    assert ajp.validate_offer(_window("2026-03-05T10:05:00Z", "2026-03-05T10:06:00Z"), now=now, strict=True).valid
    late = _window("2026-03-05T10:05:00.001Z", "2026-03-05T10:06:00Z")
    assert ajp.validate_offer(late, now=now, strict=True).errors == ["issued_at is more than 300 s in the future"]
    assert ajp.validate_offer(late, now=now, strict=True, skew=600).valid
    assert ajp.validate_offer(late, now=now).valid  # the SDK does not look
    backwards = _window("2026-03-05T10:00:00Z", "2026-03-05T09:59:59+00:00")
    assert "expires_at is not after issued_at" in ajp.validate_offer(backwards, now="2026-03-05T09:00:00Z", strict=True).errors
    long = _window("2026-03-05T10:00:00Z", "2026-03-06T10:00:00.001Z")
    assert ajp.validate_offer(long, now=now, strict=True).errors == ["offer lifetime exceeds 86400 s"]
    assert ajp.validate_offer(long, now=now, strict=True, max_lifetime=2 * 86400).valid


def test_strict_scheme_must_fit_the_sender_type():
    human_ed = copy.deepcopy(MESSAGES["JobOffer"])
    human_ed["signature"] = VECTORS["offer-agent-ed25519-jcs"]["signature"]
    assert ajp.validate_offer(human_ed, now=NOW, strict=True).errors == ["signature scheme must be sha256 for a human sender"]
    agent_hmac = copy.deepcopy(VECTORS["offer-agent-ed25519-jcs"])
    agent_hmac["signature"] = "sha256:" + "0" * 64
    assert ajp.validate_offer(agent_hmac, now=NOW, strict=True).errors == ["signature scheme must be ed25519 for a agent sender"]
    assert ajp.validate_offer(agent_hmac, now=NOW).valid


def test_offer_verify_ties_the_scheme_to_the_sender_type(core):
    # An agent offer naming someone else's provenance_id, signed with a human's shared secret:
    # the HMAC is valid, but only an Ed25519 key can speak for an agent.
    agent_hmac = _resigned(VECTORS["offer-agent-ed25519-jcs"], secret=SECRET)
    offer = ajp.JobOffer.from_dict(agent_hmac)
    with pytest.raises(InvalidMessage) as info:
        offer.verify(secret=SECRET)
    assert info.value.errors == ["signature scheme must be ed25519 for a agent sender"]
    assert ajp.error_response(info.value)[0] == 400  # as validate_offer(strict=True) and receive_offer answer
    assert info.value.errors == ajp.validate_offer(offer, now=NOW, strict=True).errors
    offer.verify(secret=SECRET, any_scheme=True)  # relaxed on request: the HMAC itself is valid
    orchestrator = copy.deepcopy(agent_hmac)
    orchestrator["from"]["type"] = "orchestrator"
    with pytest.raises(InvalidMessage, match="ed25519 for a orchestrator sender"):
        ajp.JobOffer.from_dict(_resigned(orchestrator, secret=SECRET)).verify(secret=SECRET)
    human_ed = _resigned(VECTORS["offer-human-hmac-jcs"], private_key=PRIVATE)
    with pytest.raises(InvalidMessage, match="sha256 for a human sender"):
        ajp.JobOffer.from_dict(human_ed).verify(public_key=PUBLIC)
    ajp.JobOffer.from_dict(human_ed).verify(public_key=PUBLIC, any_scheme=True)
    # the matching schemes verify as before
    ajp.JobOffer.from_dict(VECTORS["offer-agent-ed25519-jcs"]).verify(public_key=PUBLIC)
    ajp.JobOffer.from_dict(VECTORS["offer-human-hmac-jcs"]).verify(secret=SECRET)
    # the scheme rule comes first, as in receive_offer: no signature check runs on a misfit
    with pytest.raises(InvalidMessage):
        offer.verify(secret="another-secret")


@settings(max_examples=80, deadline=None)
@given(doc=strategies.job_offers(issued_at=1_772_704_800, lifetime=120))
def test_drawn_offers_pass_strict_validation_inside_their_window(doc):
    offer = ajp.JobOffer.from_dict(doc)
    check = ajp.validate_offer(offer, now=1_772_704_860, strict=True)
    assert check.valid, check.errors
    assert ajp.validate_offer(doc, now=1_772_704_860, strict=True).errors == []
    assert ajp.validate_offer(offer, now=1_772_704_921, strict=True).errors == ["offer has expired"]


@settings(max_examples=150, deadline=None)
@given(doc=strategies.offer_mutations(), now=st.integers(1_700_000_000, 1_900_000_000), strict=st.booleans())
def test_typed_and_dict_offers_get_the_same_verdict(doc, now, strict):
    try:
        offer = ajp.JobOffer.from_dict(doc)
    except ValidationError:
        return
    assert ajp.validate_offer(offer, now=now, strict=strict) == ajp.validate_offer(doc, now=now, strict=strict)


def test_unsigned_built_offer_is_missing_its_signature():
    offer = ajp.JobOffer.from_dict(MESSAGES["JobOffer"]).replace(signature=None)
    assert ajp.validate_offer(offer, now=NOW).errors == ["missing: signature"]
    assert ajp.validate_offer(offer.to_dict(), now=NOW).errors == ["missing: signature"]


# -- end to end --


def test_human_offer_is_accepted_end_to_end(core):
    guard = ajp.MemoryReplayGuard()
    offer = ajp.receive_offer(_bytes(VECTORS["offer-human-hmac-jcs"]), now=NOW, recipient=RECEIVER, secret=SECRET, replay_guard=guard)
    assert offer.job_id == VECTORS["offer-human-hmac-jcs"]["job_id"] and len(guard) == 1
    accepted = ajp.Accepted(job_id=offer.job_id, status="accepted")
    assert json.loads(accepted.to_json()) == {"job_id": offer.job_id, "status": "accepted"}


def test_agent_offer_is_accepted_end_to_end(core):
    offer = ajp.receive_offer(_bytes(VECTORS["offer-agent-ed25519-jcs"]), replay_guard=ajp.NO_REPLAY_GUARD,
                              now=NOW, recipient=RECEIVER, public_key=PUBLIC, require_capabilities=())
    assert offer.sender.provenance_id == "provenance:github:example/research-agent"


def _refusal(data, **kw):
    kw.setdefault("now", NOW)
    kw.setdefault("recipient", RECEIVER)
    kw.setdefault("replay_guard", ajp.NO_REPLAY_GUARD)
    if "public_key" in kw:
        kw.setdefault("require_capabilities", ())  # a bare key: no declaration to read capabilities from
    with pytest.raises(Exception) as info:
        ajp.receive_offer(data, **kw)
    status, body = ajp.error_response(info.value)
    assert status == getattr(info.value, "status", 500)
    assert ajp.ErrorBody.from_json(body.to_json()) == body  # a valid error body on the wire
    return info.value, status, body


def test_malformed_bytes_are_400(core):
    exc, status, body = _refusal(b'{"ajp": "0.1", "ajp": "0.1"}', secret=SECRET)
    assert isinstance(exc, DecodeError) and not isinstance(exc, ValidationError)
    assert status == 400 and body.error == "Invalid JobOffer" and "duplicate" in body.errors[0].lower()


MALFORMED_IP_LITERALS = ["http://[:]/", "http://[.]/", "http://[1.2.3.4]/", "http://[1:2:3:4:5:6:7:8:9]/"]
GOOD_CALLBACKS = ["http://[::1]/", "http://[2001:db8::1]:8080/x", "http://[v1.x]/", "https://agent.example/jobs/1?x=y"]


@pytest.mark.parametrize("url", MALFORMED_IP_LITERALS)
def test_callback_url_with_a_malformed_ip_literal_is_refused(core, url):
    # RFC 3986 section 3.2.2: IP-literal = "[" ( IPv6address / IPvFuture ) "]"
    doc = _resigned(dict(VECTORS["offer-human-hmac-jcs"], callback={"url": url}), secret=SECRET)
    with pytest.raises(ValidationError) as info:
        ajp.JobOffer.from_json(_bytes(doc))
    assert info.value.errors == [("$.callback.url", "Invalid URI (RFC 3986)")]
    exc, status, _ = _refusal(_bytes(doc), secret=SECRET)
    assert isinstance(exc, ValidationError) and status == 400 and exc.path == "$.callback.url"


@pytest.mark.parametrize("url", GOOD_CALLBACKS)
def test_callback_url_with_a_valid_ip_literal_is_accepted(core, url):
    doc = _resigned(dict(VECTORS["offer-human-hmac-jcs"], callback={"url": url}), secret=SECRET)
    assert ajp.JobOffer.from_json(_bytes(doc)).callback.url == url
    assert ajp.receive_offer(_bytes(doc), replay_guard=ajp.NO_REPLAY_GUARD,
                             now=NOW, recipient=RECEIVER, secret=SECRET).callback.url == url


def test_schema_problems_are_400_with_every_path(core):
    doc = copy.deepcopy(VECTORS["offer-human-hmac-jcs"])
    doc["budget"]["max_usd"] = -1
    del doc["task"]["type"]
    exc, status, body = _refusal(_bytes(doc), secret=SECRET)
    assert isinstance(exc, ValidationError) and status == 400
    assert body.errors == ["Object missing required field `type` - at `$.task`", "Expected `number` >= 0 - at `$.budget.max_usd`"]


def test_expired_offer_is_400_with_the_sdk_message(core):
    exc, status, body = _refusal(_bytes(VECTORS["offer-human-hmac-jcs"]), secret=SECRET, now="2026-03-05T10:03:00Z")
    assert isinstance(exc, InvalidMessage) and status == 400
    assert body.to_dict() == {"error": "Invalid JobOffer", "code": "INVALID_OFFER", "reason": "offer has expired",
                              "errors": ["offer has expired"]}


def test_offer_from_the_future_is_400(core):
    exc, status, body = _refusal(_bytes(VECTORS["offer-human-hmac-jcs"]), secret=SECRET, now="2026-03-05T09:50:00Z")
    assert status == 400 and body.errors == ["issued_at is more than 300 s in the future"]


def test_bad_signature_is_401(core):
    doc = copy.deepcopy(VECTORS["offer-human-hmac-jcs"])
    doc["budget"]["max_usd"] = 500
    exc, status, body = _refusal(_bytes(doc), secret=SECRET)
    assert isinstance(exc, BadSignature) and status == 401 and body.error == "Invalid signature"
    exc, status, _ = _refusal(_bytes(VECTORS["offer-human-hmac-jcs"]), secret="another-secret")
    assert isinstance(exc, BadSignature) and status == 401
    exc, status, _ = _refusal(_bytes(VECTORS["offer-agent-tampered-nested"]), public_key=PUBLIC)
    assert isinstance(exc, BadSignature) and status == 401


def test_placeholder_and_unknown_schemes_are_401(core):
    spec_to = MESSAGES["JobOffer"]["to"]["provenance_id"]
    exc, status, _ = _refusal(_bytes(MESSAGES["JobOffer"]), secret=SECRET, now="2026-03-05T10:01:00Z", recipient=spec_to)
    assert isinstance(exc, MalformedSignature) and status == 401
    doc = copy.deepcopy(MESSAGES["JobOffer"])
    doc["signature"] = "rsa:abcd"
    # a scheme that does not fit the sender type is a strict-mode rule (400) ...
    exc, status, body = _refusal(_bytes(doc), secret=SECRET, now="2026-03-05T10:01:00Z", recipient=spec_to)
    assert isinstance(exc, InvalidMessage) and body.errors == ["signature scheme must be sha256 for a human sender"]
    # ... and a signature check with it is 401
    with pytest.raises(UnsupportedScheme) as info:
        ajp.JobOffer.from_dict(doc).verify(secret=SECRET)
    assert ajp.error_response(info.value)[0] == 401


def test_legacy_signature_is_401_with_its_code(core):
    exc, status, body = _refusal(_bytes(VECTORS["offer-human-hmac-legacy"]), secret=SECRET)
    assert isinstance(exc, LegacySignature) and status == 401
    assert body.code == "LEGACY_SIGNATURE" and body.error == "Invalid signature" and body.reason
    exc, status, body = _refusal(_bytes(VECTORS["offer-agent-ed25519-legacy"]), public_key=PUBLIC)
    assert isinstance(exc, LegacySignature) and body.code == "LEGACY_SIGNATURE"


def test_replay_is_409_and_keyed_by_the_verifying_key(core):
    guard = ajp.MemoryReplayGuard()
    data = _bytes(VECTORS["offer-human-hmac-jcs"])
    ajp.receive_offer(data, now=NOW, recipient=RECEIVER, secret=SECRET, replay_guard=guard)
    exc, status, body = _refusal(data, secret=SECRET, replay_guard=guard)
    assert isinstance(exc, ReplayedMessage) and status == 409 and body.code == "REPLAY"
    # the same job id under another sender's key is another job
    other = _resigned(VECTORS["offer-human-hmac-jcs"], secret="second-secret")
    ajp.receive_offer(_bytes(other), now=NOW, recipient=RECEIVER, secret="second-secret", replay_guard=guard)
    assert len(guard) == 2


def test_replay_guard_forgets_only_after_expiry_plus_skew():
    guard = ajp.MemoryReplayGuard(max_entries=2, skew=300)  # one pair per sender (a sender may not fill it)
    second = 1_000_000
    guard.admit("k", "job_a", expires_at_us=100 * second, now_us=0, confirmed=True)
    with pytest.raises(ReplayedMessage):
        guard.admit("k", "job_a", expires_at_us=100 * second, now_us=399 * second, confirmed=True)
    guard.admit("k2", "job_b", expires_at_us=1000 * second, now_us=1 * second, confirmed=True)
    with pytest.raises(Busy) as info:  # full of live entries: refuse, never forget
        guard.admit("k3", "job_c", expires_at_us=1000 * second, now_us=200 * second, confirmed=True)
    assert info.value.status == 429 and info.value.retry_after == 200  # job_a is held until 400 s
    status, body = ajp.error_response(info.value)
    assert status == 429 and body.retry_after == 200
    guard.admit("k3", "job_c", expires_at_us=1000 * second, now_us=400 * second, confirmed=True)  # job_a evicted
    assert len(guard) == 2
    guard.admit("k", "job_a", expires_at_us=2000 * second, now_us=1400 * second, confirmed=True)  # job_b evicted, a re-admitted


def test_replay_guard_memory_stays_bounded_when_ids_come_back():
    guard = ajp.MemoryReplayGuard(max_entries=3, skew=0)
    for i in range(1000):  # the same id, re-offered after each window closed
        guard.admit("k", "job_same", expires_at_us=i * 10 + 5, now_us=i * 10, confirmed=True)
    assert len(guard) == 1 and len(guard._table.heap) <= 6


def test_replay_guard_quota_isolates_a_flooding_sender():
    second = 1_000_000
    guard = ajp.MemoryReplayGuard(max_entries=100, max_per_identity=10, skew=0)
    for i in range(10):
        guard.admit("flood", f"job_flood_{i}", expires_at_us=(500 + i) * second, now_us=0, confirmed=True)
    with pytest.raises(Busy) as info:
        guard.admit("flood", "job_flood_10", expires_at_us=900 * second, now_us=100 * second, confirmed=True)
    assert info.value.status == 429 and info.value.retry_after == 400  # its first pair is held until 500 s
    assert ajp.error_response(info.value)[0] == 429
    with pytest.raises(Busy) as info:  # asked again: the same answer, counted down
        guard.admit("flood", "job_flood_11", expires_at_us=900 * second, now_us=250 * second, confirmed=True)
    assert info.value.retry_after == 250
    for i in range(90):  # every other sender is unaffected, up to the table's size
        guard.admit(f"calm_{i % 9}", f"job_calm_{i}", expires_at_us=900 * second, now_us=300 * second, confirmed=True)
    assert len(guard) == 100
    with pytest.raises(ReplayedMessage):  # a replay is still a replay, quota or not
        guard.admit("flood", "job_flood_3", expires_at_us=900 * second, now_us=300 * second, confirmed=True)
    with pytest.raises(Busy):  # the table itself is full of live pairs: refused, never forgotten
        guard.admit("calm_9", "job_calm_x", expires_at_us=900 * second, now_us=300 * second, confirmed=True)
    guard.admit("flood", "job_flood_10", expires_at_us=900 * second, now_us=500 * second, confirmed=True)  # its first pair expired
    with pytest.raises(Busy):
        guard.admit("flood", "job_flood_12", expires_at_us=900 * second, now_us=500 * second, confirmed=True)


def test_replay_guard_quota_end_to_end(core):
    guard = ajp.MemoryReplayGuard(max_per_identity=1)
    first = _resigned(VECTORS["offer-human-hmac-jcs"], secret=SECRET)
    ajp.receive_offer(_bytes(first), now=NOW, recipient=RECEIVER, secret=SECRET, replay_guard=guard)
    second = copy.deepcopy(first)
    second["job_id"] = "job_second_offer_1"
    second = _resigned(second, secret=SECRET)
    exc, status, body = _refusal(_bytes(second), secret=SECRET, replay_guard=guard)
    assert isinstance(exc, Busy) and status == 429 and body.retry_after == 60 + 300  # expires 10:02, skew 300 s
    other = _resigned(second, secret="second-secret")
    ajp.receive_offer(_bytes(other), now=NOW, recipient=RECEIVER, secret="second-secret", replay_guard=guard)  # unaffected


def test_replay_guard_bounds_what_it_stores():
    guard = ajp.MemoryReplayGuard()
    guard.admit("k", "j" * ajp.MAX_JOB_ID_LENGTH, expires_at_us=10, now_us=0)
    with pytest.raises(InvalidMessage, match="256") as info:
        guard.admit("k", "j" * (ajp.MAX_JOB_ID_LENGTH + 1), expires_at_us=10, now_us=0)
    assert info.value.status == 400
    with pytest.raises(InvalidMessage):
        guard.admit("k", "x" * 1_000_000, expires_at_us=10, now_us=0)
    with pytest.raises(ValueError, match="identity"):
        guard.admit("k" * 257, "job_ok", expires_at_us=10, now_us=0)
    with pytest.raises(TypeError):
        guard.admit("k", 5, expires_at_us=10, now_us=0)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        guard.admit(b"k", "job_ok", expires_at_us=10, now_us=0)  # type: ignore[arg-type]
    assert len(guard) == 1
    for bad in (0, -1, 1.5, True, 100_000, {"k": 0}, {"k": 100_000}):  # 100,000 would let one sender fill it
        with pytest.raises(ValueError, match="max_per_identity"):
            ajp.MemoryReplayGuard(max_per_identity=bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("length, ok", [(256, True), (257, False)])
def test_job_id_length_is_bounded_by_the_schemas(length, ok):
    job_id = "job_" + "x" * (length - 4)
    offer = copy.deepcopy(MESSAGES["JobOffer"])
    offer["job_id"] = job_id
    result = dict(VECTORS["result-ed25519-sdk-subset"], job_id=job_id)
    status = {"job_id": job_id, "status": "running"}
    for cls, doc in ((ajp.JobOffer, offer), (ajp.JobResult, result), (ajp.JobStatus, status),
                     (ajp.Accepted, {"job_id": job_id, "status": "accepted"})):
        if ok:
            cls.from_dict(doc)
        else:
            with pytest.raises(ValidationError) as info:
                cls.from_dict(doc)
            assert [p for p, _ in info.value.errors] == ["$.job_id"]
    offer["job_id"] = "job_01J8X2K9M3N4P5Q6R7S8T9U0V1"
    offer["parent_job_id"] = job_id
    if ok:
        ajp.JobOffer.from_dict(offer)
    else:
        with pytest.raises(ValidationError, match="parent_job_id"):
            ajp.JobOffer.from_dict(offer)


def test_replay_identity_uses_keys_not_claims():
    a = ajp.replay_identity(secret=SECRET)
    assert a == ajp.replay_identity(secret=SECRET.encode()) and a != ajp.replay_identity(secret="x")
    assert SECRET not in a
    assert ajp.replay_identity(public_key=PUBLIC) == "ed25519:" + SIGNED["keypair"]["fingerprint_sha256_of_spki_der_hex"]
    with pytest.raises(TypeError):
        ajp.replay_identity()


def _identity_uncached(secret):
    import hashlib

    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    return "sha256:" + hashlib.sha256(b"ajpcore-replay-identity-v1\x00" + raw).hexdigest()[:32]


class _Text(str):
    def __hash__(self):
        return 0

    def __eq__(self, other):
        return True  # equal to every str: must never be served another secret's identity


@pytest.mark.parametrize("size", [0, 2, 32])
def test_replay_identity_cache_gives_the_computed_identity_within_its_bound(core, monkeypatch, size):
    from ajpcore.ajp import _replay

    monkeypatch.setattr(core, "HMAC_CACHE_SIZE", size)
    monkeypatch.setattr(_replay, "_identities", {})
    secrets = ["s-%d" % i for i in range(5)] + [b"b-%d" % i for i in range(5)] + ["s-0", b"b-0"]
    for secret in secrets * 2:
        assert ajp.replay_identity(secret=secret) == _identity_uncached(secret)
        assert len(_replay._identities) <= size
    assert ajp.replay_identity(secret=_Text("other")) == _identity_uncached("other")  # subclasses are not cached
    assert ajp.replay_identity(secret=bytearray(b"b-1")) == _identity_uncached(b"b-1")
    assert all(type(k[1]) in (str, bytes) for k in _replay._identities)


def test_clear_hmac_cache_also_forgets_the_replay_identities(core, monkeypatch):
    import ajpcore
    from ajpcore.ajp import _replay

    monkeypatch.setattr(core, "HMAC_CACHE_SIZE", 32)
    monkeypatch.setattr(_replay, "_identities", {})
    ajp.replay_identity(secret="rotated secret")
    assert ("rotated secret" in (k[1] for k in _replay._identities))
    ajpcore.clear_hmac_cache()  # "drop the secrets", e.g. after a rotation: none may stay behind as a key
    assert _replay._identities == {}
    assert ajp.replay_identity(secret="rotated secret") == _identity_uncached("rotated secret")


def test_receive_admits_with_the_expiry_the_rules_read():
    from ajpcore.timestamps import instant_micros, timestamp_micros

    class Recording:
        def admit(self, identity, job_id, *, expires_at_us, now_us, digest=None, **options):
            self.seen = (identity, job_id, expires_at_us, now_us, digest)

    guard = Recording()
    offer = ajp.receive_offer(_bytes(VECTORS["offer-human-hmac-jcs"]), now=NOW, recipient=RECEIVER, secret=SECRET, replay_guard=guard)
    assert guard.seen == (
        ajp.replay_identity(secret=SECRET),
        offer.job_id,
        timestamp_micros(offer.expires_at),
        instant_micros(NOW),
        ajp.offer_digest(offer),  # what tells a retry from another body
    )


def test_policy_refusals_map_to_402_403():
    status, body = ajp.error_response(BudgetRefused("max_usd 0.01 is below this agent's price of 0.05"))
    assert status == 402 and body.code == "BUDGET_REFUSED" and body.reason.startswith("max_usd")
    status, body = ajp.error_response(TrustRefused("declaration location mismatch"))
    assert status == 403 and body.error == "Sender identity could not be established"
    status, body = ajp.error_response(RuntimeError("secret detail"))
    assert status == 500 and body.to_dict() == {
        "error": "Internal error", "reason": "the receiver failed; nothing about the request is known"
    }


def test_error_bodies_from_the_errors_themselves():
    assert InvalidMessage(["missing: task.type"]).error_body() == {
        "error": "Invalid JobOffer", "code": "INVALID_OFFER", "reason": "missing: task.type", "errors": ["missing: task.type"]}
    assert Busy("full", retry_after=30).error_body()["retry_after"] == 30
    assert ReplayedMessage("again").status == 409
    for exc in (InvalidMessage(["x"]), Busy("b", 3), ReplayedMessage("r"), BudgetRefused("b"), TrustRefused("t")):
        ajp.ErrorBody.from_dict(exc.error_body())
        import pickle

        again = pickle.loads(pickle.dumps(exc))
        assert type(again) is type(exc) and str(again) == str(exc)


def test_every_error_body_is_the_one_error_response_gives():
    from ajpcore.errors import BadSignature, DecodeError, LegacySignature, ValidationError

    refusals = [
        InvalidMessage(["missing: job_id"]),
        ValidationError([("$.budget.max_usd", "Expected `number`, got `str`")]),
        DecodeError("trailing characters", 17),
        BadSignature("signature does not match"),
        LegacySignature("upgrade your sender"),
        Busy("full", retry_after=7),
        ReplayedMessage("seen"),
        BudgetRefused("too low"),
        TrustRefused("unknown sender"),
    ]
    for exc in refusals:
        status, body = ajp.error_response(exc)
        assert exc.error_body() == body.to_dict()
        assert status == exc.status

"""The receive path's fast paths decide exactly as the general path they stand in front of (issue 23).

Each fast path accepts only what the general one accepts and hands everything else to it, so the
outcome (the accepted offer, its replay identity and digest, or the error's class and text) is the
same on every input.  Checked here differentially over hostile offers, on both core twins:

- ``_pipeline.read`` + ``shape`` (one decode, the schema engine without format callbacks, each timestamp
  parsed once, the strict rules as one test) against ``JobOffer.from_json`` +
  ``validate_offer(strict=True)``'s errors + the recipient;
- ``Receiver.receive`` of human senders (``hmac_sha256_verified_tag``: the tag is the digest) and of
  agents (``signing._ed25519_verified``: the raw signature is the digest) against the general
  pipeline (``verify`` with a secret type the hot path leaves alone, ``offer_digest``), replay
  guard included;
- ``hmac_sha256_verified_tag``: native = pure = "its ``sha256:`` text is the signature";
- ``_strict_signature_bytes`` (decode and re-encode) against the strict patterns;
- ``MemoryKeyPins.check``'s one-read answer against the general check (outcome and pins after);
- ``IdentityCache``'s memo of the last declaration object per URL (same key, bounded);
- ``MemoryReplayGuard.admit`` against the admit it replaced, over random sequences.
"""

from __future__ import annotations

import base64
import hashlib
import heapq
import hmac
import random
import re
import threading
from datetime import datetime, timedelta, timezone
from typing import Any, Dict, List, Optional, Tuple

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import ajpcore
from ajpcore import Ed25519PrivateKey, ajp, signing
from ajpcore.ajp import _pipeline, _policy, _sender
from ajpcore.ajp._replay import MemoryReplayGuard, check_admit, group_busy, replay_identity
from ajpcore.ajp._rules import _typed_offer_errors
from ajpcore.errors import AjpError, Busy, InvalidMessage, RecipientMismatch, ReplayedMessage, TimestampError
from ajpcore.provenance import MemoryKeyPins, sign_declaration
from ajpcore.provenance.pins import _PinStore
from ajpcore.timestamps import instant_micros

ME = "provenance:domain:receiver.example"
PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
NOW = "2026-03-05T10:00:30Z"
SECRET = b"fast-path-secret"
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_seed(bytes(range(1, 33)))
DECL = ajpcore.canonicalize(sign_declaration(
    {"provenance": "0.2", "name": "Agent", "description": "Finds papers.", "provenance_id": PID,
     "capabilities": ["read:web", "delegate:agents"], "constraints": []}, KEY))
FUZZ = settings(max_examples=500, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


def _base(sender_type: str) -> Dict[str, Any]:
    sender = {"type": "human", "id": "u1"} if sender_type == "human" else {
        "type": sender_type, "provenance_id": PID, "declaration_url": URL}
    return {
        "ajp": "0.1", "job_id": "job_fast_0001", "from": sender, "to": {"provenance_id": ME},
        "task": {"type": "t", "instruction": "x \u00e9 \U0001f600", "input": {"n": [1, 2.5, -0.0]}},
        "budget": {"max_usd": 0.5}, "issued_at": "2026-03-05T10:00:00Z", "expires_at": "2026-03-05T10:02:00Z",
    }


TIMESTAMPS = [
    "2026-03-05T10:00:00Z", "2026-03-05T10:02:00Z", "2026-03-05T10:00:30Z", "2026-03-05T09:59:59.999999Z",
    "2026-03-05T10:05:30Z", "2026-03-05T10:05:30.000001Z", "2026-03-06T10:00:00Z", "2026-03-06T10:00:00.000001Z",
    "2026-03-05t10:00:00z", "2026-03-05T11:00:00+01:00", "2026-03-05T10:00:00-00:00", "2026-03-05T23:59:60Z",
    "2026-03-05T10:59:60+01:00", "2026-03-05T10:00:00", "2026-03-05 10:00:00Z", "2026-03-05T10:00:00+0100",
    "2026-02-30T10:00:00Z", "0000-01-01T00:00:00Z", "9999-12-31T23:59:59.9999999Z", "", "2026-03-05T10:00:00.Z",
    5, None, 1.5, ["2026-03-05T10:00:00Z"],
]
MUTATION_NAMES = [
    "none", "drop", "job_id_short", "job_id_long", "job_id_int", "to_other", "to_empty", "type_bad",
    "agent_no_pid", "extra_member", "nested_extra", "budget_negative", "ajp_bad", "callback_bad_url",
    "declaration_url_bad", "not_object", "deep", "signature_int", "signature_no_scheme",
]
MUTATIONS = st.sampled_from(MUTATION_NAMES)


def _mutate(body: Dict[str, Any], what: str, rng: random.Random) -> Any:
    if what == "drop":
        body.pop(rng.choice(sorted(body)), None)
    elif what == "job_id_short":
        body["job_id"] = "job_1"
    elif what == "job_id_long":
        body["job_id"] = "j" * 257
    elif what == "job_id_int":
        body["job_id"] = 12345678
    elif what == "to_other":
        body["to"] = {"provenance_id": "provenance:domain:someone-else.example"}
    elif what == "to_empty":
        body["to"] = {"provenance_id": ""}
    elif what == "type_bad":
        body["from"] = dict(body["from"], type="robot")
    elif what == "agent_no_pid":
        body["from"] = {"type": "agent"}
    elif what == "extra_member":
        body["zz_unknown"] = {"signature": "not the top-level one"}
    elif what == "nested_extra":
        body["task"] = dict(body["task"], extra={"a": [None, True, "\u2028"]})
    elif what == "budget_negative":
        body["budget"] = {"max_usd": -1}
    elif what == "ajp_bad":
        body["ajp"] = "0.1.2"
    elif what == "callback_bad_url":
        body["callback"] = {"url": "not a uri"}
    elif what == "declaration_url_bad":
        body["from"] = dict(body["from"], declaration_url="::bad")
    elif what == "not_object":
        return [body]
    elif what == "deep":
        deep: Any = 1
        for _ in range(300):
            deep = [deep]
        body["task"] = dict(body["task"], input={"deep": deep})
    elif what == "signature_int":
        body["signature"] = 7
    elif what == "signature_no_scheme":
        body["signature"] = "abc"
    return body


def _near(text: str, rng: random.Random) -> str:
    """``text`` with up to two edits: a replaced, inserted or deleted character, or upper case."""
    chars = "0123456789abcdefABCDEF+/=AQgw:sS \n\u00e9\uff10\x00"
    for _ in range(rng.randrange(3)):
        at = rng.randrange(len(text) + 1)
        op = rng.randrange(4)
        if op == 0 and at < len(text):
            text = text[:at] + rng.choice(chars) + text[at + 1:]
        elif op == 1:
            text = text[:at] + rng.choice(chars) + text[at:]
        elif op == 2 and at < len(text):
            text = text[:at] + text[at + 1:]
        elif op == 3:
            text = text.upper()
    return text


def _outcome(call: Any) -> Any:
    """``("ok", result)``, or what the exception says: class, text and the attributes a caller reads."""
    try:
        return ("ok", call())
    except Exception as exc:  # every error, ajpcore's or not, is part of the decision
        return (type(exc).__name__, str(exc), getattr(exc, "errors", None), getattr(exc, "same_body", None),
                getattr(exc, "retry_after", None), getattr(exc, "code", None))


# -- the general pipeline, as it was before the fast paths ---------------------------------------


# A wrong `now` is the host's bug: read before the body, raised as the builtin error, never an AjpError.
HOST_ERRORS = {"2026-03-05T10:00:30": ValueError, "nonsense": ValueError, None: TypeError, "nan": ValueError,
               "naive": ValueError, True: TypeError}


def _reference_now(now: Any) -> int:
    try:
        return instant_micros(now)
    except TimestampError as exc:
        key = "nan" if now != now else "naive" if isinstance(now, datetime) else now
        raise HOST_ERRORS[key](f"`now=` (the host's clock, not the sender's input): {exc}") from None


def _reference_shape(data: Any, now: Any, skew: float, max_lifetime: float, recipients: Any) -> Tuple[Any, int, int]:
    now_us = _reference_now(now)
    offer = data if type(data) is ajp.JobOffer else ajp.JobOffer.from_json(data)
    raw = offer._raw
    errors, expires_us = _typed_offer_errors(raw, now_us, True, skew, max_lifetime)
    if errors:
        raise InvalidMessage(errors)
    if recipients is not None and raw["to"]["provenance_id"] not in recipients:
        raise RecipientMismatch(raw["to"]["provenance_id"])
    return offer, now_us, expires_us


def _fast_shape(data: Any, now: Any, skew: float, max_lifetime: float, recipients: Any) -> Tuple[Any, int, int]:
    value, now_us = _pipeline.read(data, now, ajp.DEFAULT_MAX_BODY_BYTES)  # `now` first, then the body
    offer, expires_us = _pipeline.shape(value, now_us, skew, max_lifetime, recipients)
    return offer, now_us, expires_us


def _reference_receive(r: ajp.Receiver, data: Any, now: Any, guard: Optional[MemoryReplayGuard],
                       pins: Optional[MemoryKeyPins] = None) -> Any:
    offer, now_us, expires_us = _reference_shape(data, now, r.skew, r.max_lifetime, r._recipients)
    raw = offer._raw
    if raw["from"]["type"] == "human":
        secret = r._secret
        # bytearray: a secret type the HMAC hot path leaves to the full check (same verdict, same errors)
        offer.verify(secret=bytearray(secret.encode() if isinstance(secret, str) else secret), any_scheme=True)
        identity, digest = replay_identity(secret=secret), _pipeline.offer_digest(offer)
        who = None
    else:
        provenance_id, url = r._declaration_url(raw)  # the URL gate (no fast path of its own)
        declaration, retrieved_from = DECL, url  # what the test's resolver answers
        declared = _sender._declared_sender(raw["from"], declaration, retrieved_from)  # no cache: verified each time
        _sender._check_capabilities(declared, _policy._required(r._rule, raw["from"]["type"]))
        _PinStore.check(pins if pins is not None else MemoryKeyPins(), declared.provenance_id, declared.fingerprint, declared.public_key)
        signing.verify(dict(raw), public_key=declared.public_key.to_string())  # text key: no hot path either
        identity, digest, who = "ed25519:" + declared.fingerprint, _pipeline.offer_digest(offer), declared.fingerprint
    if guard is not None:
        guard.admit(identity, raw["job_id"], expires_at_us=expires_us, now_us=now_us, digest=digest, confirmed=True)
    return offer.to_json(), identity, digest, who


def _received(got: Any) -> Any:
    return got.offer.to_json(), got.replay_identity, got.digest, None if got.identity is None else got.identity.fingerprint


# -- read + shape and Receiver.receive against the general pipeline ----------------------------


VALID_TIMES = TIMESTAMPS[:12]  # strict RFC 3339 (the leap second of a day that has none is the schema's call)
NOWS = [NOW, "2026-03-05T10:03:00Z", "2026-03-05T09:54:00Z", datetime(2026, 3, 5, 10, 0, 30, tzinfo=timezone.utc),
        datetime(2026, 3, 5, 11, 0, 30, tzinfo=timezone(timedelta(hours=1))), 1772704830, 1772704830.5]
BAD_NOWS = ["2026-03-05T10:00:30", "nonsense", None, float("nan"), datetime(2026, 3, 5, 10, 0, 30), True]


@FUZZ
@given(
    sender_type=st.sampled_from(["human", "agent", "orchestrator"]), mutation=MUTATIONS,
    sign_after=st.booleans(), seed=st.integers(0, 2**32),
    skew=st.sampled_from([300, 0, 30.5, float("nan")]), max_lifetime=st.sampled_from([86400, 120, 119.999999, float("inf")]),
)
def test_receive_decides_as_the_general_pipeline(core, sender_type, mutation, sign_after, seed, skew, max_lifetime):
    """Most offers well formed and signed (so the later steps are reached), the rest hostile in one way."""
    rng = random.Random(seed)
    def pick(usual: Any, others: Any, wild: Any) -> Any:
        draw = rng.random()
        return usual if draw < 0.6 else rng.choice(others) if draw < 0.93 else rng.choice(wild)

    issued = pick("2026-03-05T10:00:00Z", VALID_TIMES, TIMESTAMPS)
    expires = pick("2026-03-05T10:02:00Z", VALID_TIMES, TIMESTAMPS)
    now = pick(NOW, NOWS, BAD_NOWS)
    skew, max_lifetime = pick(300, [skew], [skew]), pick(86400, [max_lifetime], [max_lifetime])
    mutation = mutation if rng.random() < 0.4 else "none"
    rng = random.Random(seed)
    body = _base(sender_type)
    body["issued_at"], body["expires_at"] = issued, expires
    signer = {"secret": SECRET} if sender_type == "human" else {"private_key": KEY}
    body["signature"] = signing.sign(body, **signer)
    body = _mutate(body, mutation, rng)
    if isinstance(body, dict) and type(body.get("signature")) is str:
        if sign_after:
            try:
                body["signature"] = signing.sign(body, **signer)
            except AjpError:
                pass
        elif rng.random() < 0.5:
            body["signature"] = _near(body["signature"], rng)
    try:
        data = ajpcore.canonicalize(body)
    except AjpError:
        return
    if rng.random() < 0.2:
        data = data.decode("utf-8")
    r = ajp.Receiver(recipient=[ME, "provenance:domain:second.example"], secret=SECRET, skew=skew,
                     max_lifetime=max_lifetime, declarations=lambda pid, url: (DECL, url), pins=MemoryKeyPins(),
                     replay_guard=MemoryReplayGuard())
    guard, pins = MemoryReplayGuard(), MemoryKeyPins()
    fast = _outcome(lambda: _fast_shape(data, now, skew, max_lifetime, r._recipients))
    slow = _outcome(lambda: _reference_shape(data, now, skew, max_lifetime, r._recipients))
    if fast[0] == "ok":
        assert slow[0] == "ok" and fast[1][0].to_json() == slow[1][0].to_json() and fast[1][1:] == slow[1][1:]
    else:
        assert fast == slow
    got = _outcome(lambda: _received(r.receive(data, now=now)))
    want = _outcome(lambda: _reference_receive(r, data, now, guard, pins))
    event(f"{sender_type}: {got[0]}")
    assert got == want
    if got[0] == "ok":  # the same offer again: a replay, with the same body, on both
        assert _outcome(lambda: r.receive(data, now=now)) == _outcome(lambda: _reference_receive(r, data, now, guard, pins))


def _hostile_offers(count: int) -> Any:
    rng = random.Random(23)
    for i in range(count):
        sender_type = rng.choice(["human", "agent", "orchestrator"])
        body = _base(sender_type)
        body["job_id"] = f"job_hostile_{i:04d}"
        if rng.random() < 0.3:
            body["expires_at"] = rng.choice(TIMESTAMPS)
        signer = {"secret": rng.choice([SECRET, b"another secret"])} if sender_type == "human" else {
            "private_key": rng.choice([KEY, KEY, OTHER])}
        body["signature"] = signing.sign(body, **signer)
        body = _mutate(body, rng.choice(MUTATION_NAMES) if rng.random() < 0.5 else "none", rng)
        if isinstance(body, dict) and type(body.get("signature")) is str and rng.random() < 0.3:
            body["signature"] = _near(body["signature"], rng)
        try:
            yield ajpcore.canonicalize(body)
        except AjpError:
            continue


def test_receive_async_decides_as_receive(core):
    """The async twin takes the same fast paths: the same outcome for every offer, sync stores and async ones."""
    import asyncio

    class AsyncGuard:
        blocking = False

        def __init__(self) -> None:
            self.inner = MemoryReplayGuard()

        async def admit(self, *args: Any, **kwargs: Any) -> None:
            self.inner.admit(*args, **kwargs)

    async def resolve(pid: str, url: str) -> Any:
        return DECL, url

    def make(async_stores: bool) -> ajp.Receiver:
        return ajp.Receiver(recipient=ME, secrets={"u1": SECRET}, pins=MemoryKeyPins(),
                            declarations=resolve if async_stores else (lambda pid, url: (DECL, url)),
                            replay_guard=AsyncGuard() if async_stores else MemoryReplayGuard())

    offers = list(_hostile_offers(120))
    sync, async_memory, async_stores = make(False), make(False), make(True)
    seen = set()
    for data in offers + offers[:20]:  # then again: replays
        want = _outcome(lambda: _received(sync.receive(data, now=NOW)))
        assert _outcome(lambda: _received(asyncio.run(async_memory.receive_async(data, now=NOW)))) == want
        assert _outcome(lambda: _received(asyncio.run(async_stores.receive_async(data, now=NOW)))) == want
        seen.add(want[0])
    assert {"ok", "ReplayedMessage", "BadSignature", "ValidationError"} <= seen


@pytest.mark.parametrize("sender_type", ["human", "agent"])
def test_the_signature_at_every_position_decides_as_the_general_check(core, sender_type):
    """Every one-character change of the signature, at every position, on both signature kinds."""
    body = _base(sender_type)
    signer = {"secret": SECRET} if sender_type == "human" else {"private_key": KEY}
    good = signing.sign(body, **signer)
    spellings = {good, good.upper(), good + "\n", good[:-1], good + "="}
    for at in range(len(good)):
        for ch in ("0", "f", "A", "/", "=", "\u00e9"):
            spellings.add(good[:at] + ch + good[at + 1:])
    for signature in sorted(spellings):
        data = ajpcore.canonicalize(dict(body, signature=signature))
        r = ajp.Receiver(recipient=ME, secret=SECRET, declarations=lambda pid, url: (DECL, url),
                         replay_guard=MemoryReplayGuard())
        got = _outcome(lambda: _received(r.receive(data, now=NOW)))
        assert got == _outcome(lambda: _reference_receive(r, data, NOW, MemoryReplayGuard())), signature
        assert (got[0] == "ok") == (signature == good)


def test_a_legacy_signature_is_refused_with_the_upgrade_error_by_the_fast_paths(core):
    for sender_type in ("human", "agent"):
        body = _base(sender_type)
        body["task"] = dict(body["task"], input={"nested": {"job_id": "covered only by name"}})
        legacy = ajpcore.canonicalize(signing._legacy_form(body))
        if sender_type == "human":
            signature = "sha256:" + hmac.new(SECRET, legacy, hashlib.sha256).hexdigest()
        else:
            signature = "ed25519:" + base64.b64encode(KEY.sign(legacy)).decode()
        data = ajpcore.canonicalize(dict(body, signature=signature))
        r = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                         recipient=ME, secret=SECRET, declarations=lambda pid, url: (DECL, url))
        got = _outcome(lambda: r.receive(data, now=NOW))
        assert got[0] == "LegacySignature" and "upgrade your sender" in got[1]
        assert got == _outcome(lambda: _reference_receive(r, data, NOW, None))


def test_an_agent_offer_signed_by_another_key_or_with_a_secret(core):
    for signer in ({"private_key": OTHER}, {"secret": SECRET}):
        body = _base("agent")
        data = ajpcore.canonicalize(dict(body, signature=signing.sign(body, **signer)))
        r = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                         recipient=ME, secret=SECRET, declarations=lambda pid, url: (DECL, url))
        got = _outcome(lambda: r.receive(data, now=NOW))
        assert got[0] in ("BadSignature", "InvalidMessage")
        assert got == _outcome(lambda: _reference_receive(r, data, NOW, None))


def test_receive_offer_keeps_the_same_digest_as_the_receiver(core):
    for sender_type in ("human", "agent"):
        body = _base(sender_type)
        signer = {"secret": SECRET} if sender_type == "human" else {"private_key": KEY}
        data = ajpcore.canonicalize(dict(body, signature=signing.sign(body, **signer)))
        guard = MemoryReplayGuard()
        keys = {"secret": SECRET} if sender_type == "human" else {"declaration": DECL, "retrieved_from": URL}
        offer = ajp.receive_offer(data, now=NOW, recipient=ME, replay_guard=guard, **keys)
        held = next(iter(guard._table.jobs.values()))["job_fast_0001"][1]
        assert held == _pipeline.offer_digest(offer) == signing.parse_signature(offer.signature)[1]
        got = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                           recipient=ME, secret=SECRET, declarations=lambda pid, url: (DECL, url)).receive(data, now=NOW)
        assert got.digest == held


def test_offer_digest_is_the_raw_signature_and_refuses_what_does_not_parse():
    body = _base("human")
    offer = ajp.JobOffer.from_dict(dict(body, signature=signing.sign(body, secret=SECRET)))
    assert ajp.offer_digest(offer) == bytes.fromhex(offer.signature[7:])
    agent = ajp.JobOffer.from_dict(dict(_base("agent"), signature=signing.sign(_base("agent"), private_key=KEY)))
    assert ajp.offer_digest(agent) == base64.b64decode(agent.signature[8:]) and len(ajp.offer_digest(agent)) == 64
    for bad in ("sha256:" + "A" * 64, "rsa:abc"):
        with pytest.raises(ajpcore.SignatureError):
            ajp.offer_digest(ajp.JobOffer.from_dict(dict(body, signature=bad)))


# -- hmac_sha256_verified_tag: native = pure = the reference ---------------------------------------


class _Str(str):
    pass


class _Dict(dict):
    pass


def _reference_tag(body: Any, secret: Any) -> Optional[bytes]:
    if type(body) is not dict or type(secret) not in (str, bytes) or not secret:
        return None
    signature = body.get("signature")
    if type(signature) is not str or len(signature) != 71 or not signature.isascii():
        return None
    key = secret.encode("utf-8") if isinstance(secret, str) else secret
    rest = {k: v for k, v in body.items() if k != "signature"}
    tag = hmac.new(key, ajpcore.canonicalize(rest), hashlib.sha256).digest()
    return tag if signature == "sha256:" + tag.hex() else None


@FUZZ
@given(seed=st.integers(0, 2**32), secret=st.sampled_from([SECRET, "text secret \u00e9", b"", "", bytearray(b"k"), _Str("k"), 5, None]),
       chunk=st.sampled_from([65536, 1, 7, 16384]))
def test_verified_tag_twins_agree_with_the_reference(twins, seed, secret, chunk):
    native, pure = twins
    rng = random.Random(seed)
    body: Any = _base("human")
    if rng.random() < 0.7 and type(secret) in (str, bytes) and secret:
        body["signature"] = signing.sign(body, secret=secret)
        if rng.random() < 0.5:
            body["signature"] = _near(body["signature"], rng)
    else:
        body["signature"] = rng.choice([None, 5, "sha256:" + "0" * 64, _Str("sha256:" + "0" * 64), "x" * 71, "\u00e9" * 71])
    if rng.random() < 0.1:
        body = rng.choice([_Dict(body), [body], "{}"])
    want = _reference_tag(body, secret)
    assert native.hmac_sha256_verified_tag(body, secret, chunk) == want
    assert pure.hmac_sha256_verified_tag(body, secret, chunk) == want
    assert signing._hmac_matches(body, secret) is (want is not None)


def test_verified_tag_errors_agree(twins):
    native, pure = twins
    signature = "sha256:" + "0" * 64
    for body, secret, chunk in [({"a": float("nan"), "signature": signature}, b"k", 65536),
                                ({1: "name", "signature": signature}, b"k", 65536),
                                ({"a": 1, "signature": signature}, "\ud800", 65536),
                                ({"a": 1, "signature": signature}, b"k", 0),
                                ({"a": 1, "signature": signature}, b"k", "big")]:
        assert _outcome(lambda: native.hmac_sha256_verified_tag(body, secret, chunk)) == \
            _outcome(lambda: pure.hmac_sha256_verified_tag(body, secret, chunk))
        assert _outcome(lambda: native.hmac_sha256_verified_tag(body, secret, chunk))[0] != "ok"


# -- _strict_signature_bytes against the strict patterns ------------------------------------------


def _pattern_bytes(text: str) -> Optional[bytes]:
    m = re.fullmatch(r"sha256:([0-9a-f]{64})", text)
    if m:
        return bytes.fromhex(m.group(1))
    m = re.fullmatch(r"ed25519:([A-Za-z0-9+/]{85}[AQgw]==)", text)
    return base64.b64decode(m.group(1), validate=True) if m else None


@settings(max_examples=2000)
@given(raw=st.binary(min_size=64, max_size=64), sha=st.booleans(), seed=st.integers(0, 2**32))
def test_strict_signature_bytes_is_the_strict_patterns(raw, sha, seed):
    text = "sha256:" + raw[:32].hex() if sha else "ed25519:" + base64.b64encode(raw).decode()
    text = _near(text, random.Random(seed))
    assert signing._strict_signature_bytes(text) == _pattern_bytes(text)
    assert signing._strict_signature_bytes(_Str(text)) == _pattern_bytes(text)


def test_strict_signature_bytes_at_the_edges():
    good = "ed25519:" + base64.b64encode(bytes(range(64))).decode()
    for last in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/":
        text = good[:-3] + last + "=="
        assert signing._strict_signature_bytes(text) == _pattern_bytes(text)
    for text in ("sha256:" + "0" * 63 + " ", "sha256:" + " 0" * 32, "ed25519:" + "A" * 86 + "=\n", "sha256:" + "\u0661" * 64, ""):
        assert signing._strict_signature_bytes(text) is None is _pattern_bytes(text)


def test_ed25519_fast_check_accepts_exactly_what_verify_accepts(core):
    body = _base("agent")
    good = signing.sign(body, private_key=KEY)
    rng = random.Random(7)
    for signature in [good, good.upper()] + [_near(good, rng) for _ in range(300)]:
        signed = dict(body, signature=signature)
        for backend in (None, "cryptography", "pynacl"):
            fast = signing._ed25519_verified(signed, KEY.public_key, backend)
            full = _outcome(lambda: signing.verify(signed, public_key=KEY.public_key.to_string(), backend=backend))
            assert (fast is not None) == (full[0] == "ok")
            if fast is not None:
                assert fast == signing.parse_signature(signature)[1]
        assert signing._ed25519_verified(signed, OTHER.public_key, None) is None


# -- MemoryKeyPins.check: the one-read answer is the general check's ------------------------------


def _pins_outcome(pins: MemoryKeyPins, general: bool, args: Tuple[Any, ...]) -> Any:
    check = (lambda *a: _PinStore.check(pins, *a)) if general else pins.check
    return _outcome(lambda: check(*args)), {k: dict(v) for k, v in pins._pins.items()}


@pytest.mark.parametrize("pinned_with", ["key", "fingerprint", None])
def test_memory_pins_fast_answer_is_the_general_one(pinned_with):
    key, other = KEY.public_key, OTHER.public_key
    calls = [
        (PID, key.fingerprint, key), (PID, key.fingerprint, None), (PID, key.fingerprint, key.to_string()),
        (PID, other.fingerprint, other), (PID, key.fingerprint, other), (PID, key.fingerprint.upper(), key),
        (PID, _Str(key.fingerprint), key), ("", key.fingerprint, key), (5, key.fingerprint, key),
        (PID + "x", key.fingerprint, key), (PID, key.fingerprint, "not a key"),
    ]
    for args in calls:
        stores = []
        for general in (False, True):
            pins = MemoryKeyPins()
            if pinned_with == "key":
                pins.check(PID, key.fingerprint, key)
            elif pinned_with == "fingerprint":
                pins.check(PID, key.fingerprint)
            stores.append(_pins_outcome(pins, general, args))
        assert stores[0] == stores[1], args


# -- IdentityCache: the memo of the last declaration object per URL --------------------------------


def test_identity_cache_memo_gives_the_key_of_the_bytes():
    cache = _sender.IdentityCache()
    same = bytes(DECL)
    assert cache._key(URL, DECL) == _sender._cache_key(URL, DECL)
    assert cache._key(URL, DECL) == _sender._cache_key(URL, DECL)  # memo hit: the same object
    assert cache._key(URL, same) == _sender._cache_key(URL, DECL)  # an equal object: hashed again, same key
    changed = DECL[:-2] + b" }"
    assert cache._key(URL, changed) == _sender._cache_key(URL, changed) != _sender._cache_key(URL, DECL)
    assert cache._key(URL + "/other", DECL) == _sender._cache_key(URL + "/other", DECL)
    text = DECL.decode()
    assert cache._key(URL, text) == _sender._cache_key(URL, text)
    assert cache._key(URL, bytearray(DECL)) == _sender._cache_key(URL, DECL)
    assert cache._key(URL, {"decoded": True}) is None
    cache.clear()
    assert len(cache._memo) == 0 and cache._memo_size == 0


def test_identity_cache_memo_is_bounded():
    cache = _sender.IdentityCache(max_entries=8)
    big = b"x" * (_sender._MEMO_BUDGET // 16)
    for i in range(40):
        cache._key(f"{URL}/{i}", big + bytes([i]))
        assert cache._memo_size <= _sender._MEMO_BUDGET and len(cache._memo) <= 8
        assert cache._memo_size == sum(len(v[0]) for v in cache._memo.values())
    huge = b"y" * (_sender._MEMO_BUDGET // 16 + 1)
    cache._key(URL, huge)
    assert URL not in cache._memo  # too large to hold
    assert _sender.IdentityCache(max_entries=0)._key(URL, DECL) == _sender._cache_key(URL, DECL)


def test_a_rotated_declaration_at_the_same_url_is_verified_again(core):
    pins = MemoryKeyPins()
    docs = {"doc": DECL}
    r = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                     recipient=ME, declarations=lambda pid, url: (docs["doc"], url), pins=pins)
    body = _base("agent")
    r.receive(ajpcore.canonicalize(dict(body, signature=signing.sign(body, private_key=KEY))), now=NOW)
    docs["doc"] = ajpcore.canonicalize(sign_declaration(
        {"provenance": "0.2", "name": "Agent", "description": "Rotated.", "provenance_id": PID,
         "capabilities": ["delegate:agents"], "constraints": []}, OTHER))
    body = dict(_base("agent"), job_id="job_fast_0002")
    with pytest.raises(ajpcore.KeyRotated):  # the new bytes are a new entry, checked against the pin
        r.receive(ajpcore.canonicalize(dict(body, signature=signing.sign(body, private_key=OTHER))), now=NOW)


# -- MemoryReplayGuard.admit against the admit it replaced -----------------------------------------


class _ReferenceGuard:
    """The memory guard's admit of before issue 23 (nested heap entries, setdefault), standing alone since
    the guard's own state grew a lease and quota groups (issue 30): compared on accepted-at-once admits."""

    def __init__(self, *, max_entries: int, max_per_identity: Any, skew: float) -> None:
        from ajpcore.ajp._replay import Quotas

        self.max_entries = max_entries
        self.quotas = Quotas(max_per_identity, max_entries)
        self._fixed_quota = self.quotas.fixed
        self.skew_us = int(skew * 1_000_000)
        self._jobs: Dict[str, Dict[str, Any]] = {}
        self._size = 0
        self._heap: List[Any] = []
        self._full_until: Dict[str, int] = {}
        self._lock = threading.Lock()

    def _evict(self, now_us: int) -> None:
        heap, jobs = self._heap, self._jobs
        while heap and heap[0][0] <= now_us:
            t, (identity, job_id) = heapq.heappop(heap)
            held = jobs.get(identity)
            if held is not None:
                entry = held.get(job_id)
                if entry is not None and entry[0] == t:
                    del held[job_id]
                    self._size -= 1
                    if not held:
                        del jobs[identity]
                        self._full_until.pop(identity, None)

    def _sender_busy(self, identity: str, quota: int, now_us: int) -> Optional[Busy]:
        known = self._full_until.get(identity)
        if known is None or known <= now_us:
            self._evict(now_us)
            held = self._jobs.get(identity, {})
            if len(held) < quota:
                self._full_until.pop(identity, None)
                return None
            known = min(entry[0] for entry in held.values())
            self._full_until[identity] = known
        return group_busy(quota, known, now_us)

    def admit(self, identity: str, job_id: str, *, expires_at_us: int, now_us: int, digest: Optional[bytes] = None) -> None:
        check_admit(identity, job_id, digest, expires_at_us, now_us)
        with self._lock:
            held_by = self._jobs.get(identity)
            entry = held_by.get(job_id) if held_by is not None else None
            if entry is not None and entry[0] > now_us:
                same = digest is not None and entry[1] is not None and entry[1] == digest
                raise ReplayedMessage(f"job `{job_id}` from this sender was already received", same_body=same)
            if entry is None and held_by is not None:
                quota = self._fixed_quota
                if quota is None:
                    quota = self.quotas(identity)
                if len(held_by) >= quota:
                    busy = self._sender_busy(identity, quota, now_us)
                    if busy is not None:
                        raise busy
            if entry is None and self._size >= self.max_entries:
                self._evict(now_us)
                if self._size >= self.max_entries:
                    wait = max(1, -(-(self._heap[0][0] - now_us) // 1_000_000))
                    raise Busy("replay guard is full of unexpired offers; retry later", retry_after=wait)
            held_by = self._jobs.setdefault(identity, {})
            if job_id not in held_by:
                self._size += 1
            t = expires_at_us + self.skew_us
            held_by[job_id] = (t, digest)
            heapq.heappush(self._heap, (t, (identity, job_id)))  # type: ignore[arg-type]
            if len(self._heap) > 2 * self.max_entries:
                self._evict(now_us)
                if len(self._heap) > 2 * self.max_entries:
                    self._heap = [(e[0], (i, j)) for i, m in self._jobs.items() for j, e in m.items()]  # type: ignore[misc]
                    heapq.heapify(self._heap)


def _guard_state(guard: Any) -> Any:
    # (until, digest) of each pair: the lease and the quota group (issue 30) are not the reference's, nor
    # when the cache of busy groups is dropped (the guard drops an expired pair before admitting it anew).
    # The memory guard keeps its pairs in the core's table; the reference, in itself.
    jobs, size = (guard._table.jobs, guard._table.size) if isinstance(guard, MemoryReplayGuard) else (guard._jobs, guard._size)
    return {i: {j: e[:2] for j, e in m.items()} for i, m in jobs.items()}, size


def _heap_size(guard: Any) -> int:
    return len(guard._table.heap if isinstance(guard, MemoryReplayGuard) else guard._heap)


@pytest.mark.parametrize("seed", range(12))
def test_memory_guard_admit_is_the_admit_it_replaced(core, seed):
    rng = random.Random(seed)
    quota = rng.choice([None, 2, {"a": 1, "b": 3}, lambda identity: 2 if identity == "c" else None])
    size = rng.choice([4, 6, 10])
    guards = [cls(max_entries=size, max_per_identity=quota, skew=1) for cls in (MemoryReplayGuard, _ReferenceGuard)]
    now = 10_000_000
    for _ in range(400):
        now += rng.choice([0, 0, 1, 300_000, 1_000_000, 2_500_000])
        args = (rng.choice("abcd"), f"job_{rng.randrange(12):08d}")
        keywords = dict(expires_at_us=now + rng.choice([-1, 0, 1, 500_000, 3_000_000]), now_us=now,
                        digest=rng.choice([None, b"x", b"y"]))
        if rng.random() < 0.02:
            args = (args[0], "j" * 300)
        outcomes = [_outcome(lambda g=g, extra=extra: g.admit(*args, **keywords, **extra))
                    for g, extra in zip(guards, ({"confirmed": True}, {}))]
        assert outcomes[0] == outcomes[1]
        assert _guard_state(guards[0]) == _guard_state(guards[1])
        assert _heap_size(guards[0]) == _heap_size(guards[1])

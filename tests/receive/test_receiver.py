"""The receiver (issue 21): offers for me only, the specification's capability rule, one signature
check, the Receiver policy object (sync and async), the verified-identity cache, and the answers
of the three AJP endpoints, idempotent retries included; on both core twins."""

from __future__ import annotations

import asyncio
import json
import threading
from datetime import datetime, timedelta, timezone

import pytest

import ajpcore
from ajpcore import (
    BadSignature,
    DeclarationUnreachable,
    Ed25519PrivateKey,
    KeyRotated,
    KeyUsageError,
    RecipientMismatch,
    ReplayedMessage,
    SenderIdentityError,
    StateUnavailable,
    ajp,
)
from ajpcore.keys import Ed25519PublicKey
from ajpcore.provenance import MemoryKeyPins, sign_declaration

PID = "provenance:domain:agent.example.com"
URL = "https://agent.example.com/.well-known/provenance.json"
ME = "provenance:domain:receiver.example"
NOW = datetime(2026, 3, 5, 10, 0, tzinfo=timezone.utc)
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
OTHER = Ed25519PrivateKey.from_seed(bytes(range(1, 33)))
SECRET = b"platform-secret"


def declaration(key: Ed25519PrivateKey = KEY, capabilities=("read:web", "delegate:agents")) -> bytes:
    doc = {"provenance": "0.2", "name": "Research Agent", "description": "Finds papers.", "provenance_id": PID,
           "capabilities": list(capabilities), "constraints": ["no:pii"]}
    return ajpcore.canonicalize(sign_declaration(doc, key))


DECL = declaration()
TASK = {"type": "summarise", "instruction": "Summarise the three most cited papers."}


def agent_offer(key=KEY, to=ME, job_id="job_agent_0001", **task) -> ajp.JobOffer:
    return ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=to,
                         task=dict(TASK, **task), now=NOW, private_key=key, job_id=job_id)


def human_offer(secret=SECRET, to=ME, job_id="job_human_0001", sender_id="u1", **task) -> ajp.JobOffer:
    return ajp.new_offer(sender={"type": "human", "id": sender_id}, to=to, task=dict(TASK, **task), now=NOW,
                         secret=secret, job_id=job_id)


class Resolver:
    """A host's declaration resolver over a fixed table, counting its calls (the network is the host's)."""

    blocking = False

    def __init__(self, docs=None):
        self.docs = {URL: DECL} if docs is None else docs
        self.calls = 0

    def __call__(self, provenance_id, url):
        self.calls += 1
        if url not in self.docs:
            raise ConnectionRefusedError(f"no route to {url}")
        return self.docs[url], url


def receiver(**kw) -> ajp.Receiver:
    kw.setdefault("recipient", ME)
    kw.setdefault("replay_guard", ajp.NO_REPLAY_GUARD)
    kw.setdefault("secret", SECRET)
    kw.setdefault("declarations", Resolver())
    return ajp.Receiver(**kw)


# -- offers for me only ---------------------------------------------------------------------------


def test_recipient_is_required():
    with pytest.raises(TypeError, match="recipient"):
        ajp.receive_offer(human_offer().to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                          now=NOW, secret=SECRET)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="recipient"):
        ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD, secret=SECRET)  # type: ignore[call-arg]
    for nobody in ((), [], set(), ""):
        with pytest.raises((ValueError, TypeError)):
            ajp.receive_offer(human_offer().to_json(), replay_guard=ajp.NO_REPLAY_GUARD,
                              now=NOW, secret=SECRET, recipient=nobody)
    for wrong in (b"provenance:domain:receiver.example", 5, None, [ME, 5]):
        with pytest.raises(TypeError):
            ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD, recipient=wrong, secret=SECRET)


def test_an_offer_relayed_to_another_agent_is_403_wrong_recipient(core):
    relayed = human_offer(to="provenance:domain:someone-else.example").to_json()  # validly signed, for someone else
    with pytest.raises(RecipientMismatch) as exc:
        ajp.receive_offer(relayed, replay_guard=ajp.NO_REPLAY_GUARD, now=NOW, recipient=ME, secret=SECRET)
    assert exc.value.status == 403 and exc.value.code == "WRONG_RECIPIENT"
    assert exc.value.addressed_to == "provenance:domain:someone-else.example"
    status, body = ajp.error_response(exc.value)
    assert (status, body.code, body.error) == (403, "WRONG_RECIPIENT", "Offer addressed to another agent")
    answer = receiver().answer_offer(relayed, now=NOW)
    assert answer.status == 403 and json.loads(answer.body)["code"] == "WRONG_RECIPIENT" and not answer.accepted
    with pytest.raises(RecipientMismatch):
        agent = agent_offer(to="provenance:domain:someone-else.example").to_json()
        ajp.receive_offer(agent, replay_guard=ajp.NO_REPLAY_GUARD,
                          now=NOW, recipient=ME, declaration=DECL, retrieved_from=URL)


def test_one_of_several_ids_and_any_recipient(core):
    mine = human_offer(to="provenance:github:me/second-name").to_json()
    got = ajp.receive_offer(mine, replay_guard=ajp.NO_REPLAY_GUARD,
                            now=NOW, recipient=[ME, "provenance:github:me/second-name"], secret=SECRET)
    assert got.to.provenance_id == "provenance:github:me/second-name"
    anyone = human_offer(to="provenance:domain:anyone.example").to_json()
    assert ajp.receive_offer(anyone, replay_guard=ajp.NO_REPLAY_GUARD,
                             now=NOW, recipient=ajp.ANY_RECIPIENT, secret=SECRET).job_id == "job_human_0001"
    assert receiver(recipient=ajp.ANY_RECIPIENT).receive(anyone, now=NOW).offer.to.provenance_id.endswith("anyone.example")
    assert repr(ajp.ANY_RECIPIENT) == "ajp.ANY_RECIPIENT"


# -- the specification's capability rule ----------------------------------------------------------


def test_delegate_agents_is_required_of_agents_by_default(core):
    without = declaration(capabilities=["read:web"])
    data = agent_offer().to_json()
    with pytest.raises(SenderIdentityError) as exc:
        ajp.receive_offer(data, replay_guard=ajp.NO_REPLAY_GUARD,
                          now=NOW, recipient=ME, declaration=without, retrieved_from=URL)
    assert exc.value.code == "CAPABILITY_NOT_DECLARED" and "delegate:agents" in str(exc.value)
    # the explicit opt-out
    assert ajp.receive_offer(data, replay_guard=ajp.NO_REPLAY_GUARD,
                             now=NOW, recipient=ME, declaration=without, retrieved_from=URL,
                             require_capabilities=()).job_id == "job_agent_0001"
    # the same rule in the Receiver
    strict = receiver(declarations=Resolver({URL: without}))
    assert strict.answer_offer(data, now=NOW).status == 403
    assert receiver(declarations=Resolver({URL: without}), require_capabilities=()).receive(data, now=NOW).identity
    # humans have no declaration: the rule does not apply to them
    assert receiver().receive(human_offer().to_json(), now=NOW).identity is None


def test_a_bare_public_key_cannot_show_capabilities(core):
    data = agent_offer().to_json()
    with pytest.raises(SenderIdentityError) as exc:
        ajp.receive_offer(data, replay_guard=ajp.NO_REPLAY_GUARD, now=NOW, recipient=ME, public_key=KEY.public_key)
    assert exc.value.code == "CAPABILITY_NOT_DECLARED"
    ajp.receive_offer(data, replay_guard=ajp.NO_REPLAY_GUARD,
                      now=NOW, recipient=ME, public_key=KEY.public_key, require_capabilities=())


# -- verify_sender answers only for offers its key signed (issue 20) -----------------------------------


def test_verify_sender_checks_the_offers_signature(core):
    with pytest.raises(BadSignature):
        ajp.verify_sender(agent_offer(key=OTHER), DECL, retrieved_from=URL)  # the declared key did not sign it
    forged = agent_offer().to_dict()
    forged["budget"]["max_usd"] = 1000
    with pytest.raises(BadSignature):
        ajp.verify_sender(forged, DECL, retrieved_from=URL)
    assert ajp.verify_sender(agent_offer(), DECL, retrieved_from=URL).provenance_id == PID


def test_one_signature_check_on_the_receive_path(core, monkeypatch):
    calls = []
    real = Ed25519PublicKey.verify

    def counting(self, signature, data, *a, **kw):
        calls.append(len(data))
        return real(self, signature, data, *a, **kw)

    monkeypatch.setattr(Ed25519PublicKey, "verify", counting)
    data = agent_offer().to_json()
    ajp.receive_offer(data, replay_guard=ajp.NO_REPLAY_GUARD,
                      now=NOW, recipient=ME, declaration=DECL, retrieved_from=URL)
    assert len(calls) == 2  # the declaration's signature and the offer's, once each
    calls.clear()
    r = receiver()
    r.receive(data, now=NOW)
    assert len(calls) == 2
    calls.clear()
    r.receive(agent_offer(job_id="job_agent_0002").to_json(), now=NOW)
    assert len(calls) == 1  # identity cached: the offer's signature only


# -- the Receiver ---------------------------------------------------------------------------------


def test_receiver_parses_once_and_returns_the_sender(core, monkeypatch):
    import ajpcore._core as _core

    decodes = []
    real = _core.impl.decode
    wire = agent_offer().to_json()

    def counting(data):
        if data in (wire, human_offer().to_json()):  # the offers (the declaration is decoded too, once)
            decodes.append(1)
        return real(data)

    monkeypatch.setattr(_core.impl, "decode", counting)
    got = receiver().receive(wire, now=NOW)
    assert len(decodes) == 1
    assert got.offer.job_id == got.job_id == "job_agent_0001"
    assert got.identity.provenance_id == PID and got.identity.public_key == KEY.public_key
    assert got.replay_identity == "ed25519:" + KEY.public_key.fingerprint
    human = receiver().receive(human_offer().to_json(), now=NOW)
    assert human.identity is None and human.replay_identity == ajp.replay_identity(secret=SECRET)
    parsed = ajp.JobOffer.from_json(human_offer(job_id="job_human_0002").to_json())
    decodes.clear()
    assert receiver().receive(parsed, now=NOW).offer is parsed and decodes == []  # a parsed offer is not parsed again


def test_human_secrets_by_sender(core):
    table = {"u1": "first-secret", "u2": b"second-secret"}
    r = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD, recipient=ME, secrets=table)
    assert r.receive(human_offer(secret="first-secret").to_json(), now=NOW).offer.sender.id == "u1"
    assert r.receive(human_offer(secret=b"second-secret", sender_id="u2").to_json(), now=NOW).offer.sender.id == "u2"
    with pytest.raises(BadSignature):
        r.receive(human_offer(secret="first-secret", sender_id="u2").to_json(), now=NOW)
    with pytest.raises(SenderIdentityError, match="no secret"):
        r.receive(human_offer(secret="x", sender_id="u9").to_json(), now=NOW)
    by_function = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                               recipient=ME, secrets=lambda sender: table.get(sender.id))
    assert by_function.receive(human_offer(secret="first-secret").to_json(), now=NOW).identity is None
    with pytest.raises(SenderIdentityError, match="no human senders"):
        ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                     recipient=ME, declarations=Resolver()).receive(human_offer().to_json(), now=NOW)
    with pytest.raises(SenderIdentityError, match="no agent senders"):
        ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD,
                     recipient=ME, secret=SECRET).receive(agent_offer().to_json(), now=NOW)
    with pytest.raises(KeyUsageError):
        ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD, recipient=ME, secret=SECRET, secrets=table)


def test_a_fetch_failure_is_declaration_unreachable(core):
    r = receiver(declarations=Resolver({}))  # the resolver's ConnectionRefusedError (an OSError)
    with pytest.raises(DeclarationUnreachable) as exc:
        r.receive(agent_offer().to_json(), now=NOW)
    assert exc.value.status == 403 and exc.value.code == "DECLARATION_UNREACHABLE"

    def refusing(provenance_id, url):
        raise DeclarationUnreachable("HTTP 404 from the declaration URL")

    answer = receiver(declarations=refusing).answer_offer(agent_offer().to_json(), now=NOW)
    assert answer.status == 403 and json.loads(answer.body)["code"] == "DECLARATION_UNREACHABLE"

    def wrong_shape(provenance_id, url):
        return DECL

    with pytest.raises(KeyUsageError):
        receiver(declarations=wrong_shape).receive(agent_offer().to_json(), now=NOW)


def test_a_redirected_declaration_is_a_location_mismatch(core):
    def redirected(provenance_id, url):
        return DECL, "https://cdn.example.net/provenance.json"

    with pytest.raises(SenderIdentityError) as exc:
        receiver(declarations=redirected).receive(agent_offer().to_json(), now=NOW)
    assert exc.value.code == "DECLARATION_LOCATION_MISMATCH"


# -- the verified-identity cache ------------------------------------------------------------------


def test_the_same_declaration_is_verified_once(core, monkeypatch):
    from ajpcore.ajp import _sender

    verified = []
    real = _sender.verify_declaration

    def counting(*a, **kw):
        verified.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(_sender, "verify_declaration", counting)
    resolver = Resolver()
    r = receiver(declarations=resolver, identity_cache=ajp.IdentityCache(ttl=60, max_entries=4))
    for n in range(5):
        r.receive(agent_offer(job_id=f"job_cached_{n:04d}").to_json(), now=NOW)
    assert resolver.calls == 5 and len(verified) == 1 and len(r.identity_cache) == 1
    # expiry, on the `now` the receiver is given
    r.receive(agent_offer(job_id="job_cached_late").to_json(), now=NOW + timedelta(seconds=61))
    assert len(verified) == 2
    # other bytes (a re-signed declaration) are another entry, verified
    resolver.docs[URL] = declaration(capabilities=["delegate:agents", "read:web", "write:notes"])
    r.receive(agent_offer(job_id="job_cached_new").to_json(), now=NOW + timedelta(seconds=61))
    assert len(verified) == 3 and len(r.identity_cache) == 2
    # bounded
    small = ajp.IdentityCache(max_entries=1)
    r2 = receiver(declarations=Resolver({URL: DECL}), identity_cache=small)
    r2.receive(agent_offer().to_json(), now=NOW)
    assert len(small) == 1
    # no cache at all
    verified.clear()
    r3 = receiver(identity_cache=None)
    r3.receive(agent_offer().to_json(), now=NOW)
    r3.receive(agent_offer(job_id="job_cached_9999").to_json(), now=NOW)
    assert len(verified) == 2


def test_the_cache_never_hides_a_pin(core):
    pins = MemoryKeyPins()
    pins.check(PID, OTHER.public_key.fingerprint, OTHER.public_key)  # another key pinned for this id
    r = receiver(pins=pins)
    cache_warm = receiver(identity_cache=r.identity_cache)  # same cache, no pins: fills it
    cache_warm.receive(agent_offer().to_json(), now=NOW)
    assert len(r.identity_cache) == 1
    with pytest.raises(KeyRotated):
        r.receive(agent_offer(job_id="job_pinned_0001").to_json(), now=NOW)  # cached identity, pins consulted


def test_the_cache_never_hides_a_forged_offer_or_a_wrong_id(core):
    r = receiver()
    r.receive(agent_offer().to_json(), now=NOW)
    with pytest.raises(BadSignature):
        r.receive(agent_offer(key=OTHER, job_id="job_forged_0001").to_json(), now=NOW)
    other_id = ajp.new_offer(sender={"type": "agent", "provenance_id": "provenance:domain:other.example",
                                     "declaration_url": URL}, to=ME, task=TASK, now=NOW, private_key=KEY)
    with pytest.raises(SenderIdentityError) as exc:
        r.receive(other_id.to_json(), now=NOW)
    assert exc.value.code == "DECLARATION_LOCATION_MISMATCH"  # the gate: that URL is not other.example's


def test_identity_cache_arguments():
    for bad in (-1, 1.5, True):
        with pytest.raises(ValueError):
            ajp.IdentityCache(max_entries=bad)
    for bad in (-1, float("nan"), "60"):
        with pytest.raises(ValueError):
            ajp.IdentityCache(ttl=bad)


# -- POST /jobs: answers and idempotent retries -----------------------------------------------------


def test_accepted_answer(core):
    answer = receiver(replay_guard=ajp.MemoryReplayGuard()).answer_offer(human_offer().to_json(), now=NOW)
    assert answer.status == 202 and answer.accepted and not answer.duplicate
    assert answer.headers == {"content-type": "application/json"}
    assert answer.body == b'{"job_id":"job_human_0001","status":"accepted"}'
    assert ajp.Accepted.from_json(answer.body).status == "accepted"
    assert answer.received.offer.job_id == "job_human_0001"


def test_a_byte_identical_retry_is_the_same_202_marked_duplicate(core):
    r = receiver(replay_guard=ajp.MemoryReplayGuard())
    data = agent_offer().to_json()
    first = r.answer_offer(data, now=NOW)
    again = r.answer_offer(data, now=NOW + timedelta(seconds=5))
    assert first.accepted and again.duplicate and not again.accepted
    assert (again.status, again.body) == (first.status, first.body)
    # another body under the same job id: still 409
    other = r.answer_offer(agent_offer(instruction="Something else.").to_json(), now=NOW)
    assert other.status == 409 and json.loads(other.body)["code"] == "REPLAY" and other.error is not None
    # receive() itself raises, and says which it was
    with pytest.raises(ReplayedMessage) as exc:
        r.receive(data, now=NOW)
    assert exc.value.same_body


def test_refusals_name_the_message_and_retry_after(core):
    r = receiver(replay_guard=ajp.MemoryReplayGuard(max_per_identity=1))
    bad = r.answer_offer(b'{"ajp": "0.1", "ajp": "0.1"}', now=NOW)
    assert bad.status == 400 and json.loads(bad.body)["error"] == "Invalid JobOffer"
    assert r.answer_offer(human_offer().to_json(), now=NOW).accepted
    busy = r.answer_offer(human_offer(job_id="job_human_0002").to_json(), now=NOW)
    assert busy.status == 429 and busy.headers["retry-after"] == str(json.loads(busy.body)["retry_after"])

    class Down:
        def admit(self, *a, **kw):
            raise StateUnavailable("redis at 10.0.0.5:6379 is down", retry_after=7)

    down = receiver(replay_guard=Down()).answer_offer(human_offer().to_json(), now=NOW)
    assert down.status == 503 and down.headers["retry-after"] == "7"
    assert b"10.0.0.5" not in down.body and json.loads(down.body)["code"] == "STATE_UNAVAILABLE"


def test_configuration_errors_are_not_answered_as_refusals(core):
    async def resolver(provenance_id, url):
        return DECL, url

    with pytest.raises(KeyUsageError, match="receive_async"):
        receiver(declarations=resolver).answer_offer(agent_offer().to_json(), now=NOW)


# -- GET /jobs/:id and POST /jobs/:id/ack ---------------------------------------------------------------


def test_status_answer(core):
    answer = ajp.Receiver.answer_status("job_human_0001", {"status": "running", "progress": 0.5})
    assert answer.status == 200 and answer.headers["content-type"] == "application/json"
    status = ajp.JobStatus.from_json(answer.body)
    assert (status.job_id, status.status, status.progress, status.ajp) == ("job_human_0001", "running", 0.5, "0.1")
    missing = ajp.status_answer("job_nope_0001", None)
    assert missing.status == 404
    assert json.loads(missing.body) == {"code": "NOT_FOUND", "error": "Job not found", "job_id": "job_nope_0001",
                                        "reason": "this receiver has no job with this id"}
    with pytest.raises(ajpcore.ValidationError):
        ajp.status_answer("job_human_0001", {"status": "sleeping"})
    with pytest.raises(ajpcore.ValidationError):
        ajp.status_answer("job_human_0001", ajp.JobStatus(job_id="job_other_0001", status="running"))


@pytest.mark.parametrize("body, status, error", [
    (b'{"received": true}', 200, None),
    (b'{"received": true, "feedback": "thanks"}', 200, None),
    (b'{"received": false}', 200, None),
    (b'{"received": "yes"}', 400, "Invalid Ack"),
    (b'{"feedback": "no received"}', 400, "Invalid Ack"),
    (b'{"received": true, "received": true}', 400, "Invalid Ack"),
    (b"not json", 400, "Invalid Ack"),
])
def test_ack_answer(core, body, status, error):
    answer = ajp.Receiver.answer_ack("job_human_0001", body, known=True)
    assert answer.status == status
    doc = json.loads(answer.body)
    if error is None:
        assert doc == {"settled": json.loads(body)["received"]} and answer.ack is not None
    else:
        assert doc["error"] == error and doc["errors"] and answer.ack is None
    assert ajp.ack_answer("job_nope_0001", body, known=False).status == 404


# -- async hosts and stores ---------------------------------------------------------------------------


class AsyncGuard:
    """A replay guard whose admit is a coroutine (as AsyncRedisReplayGuard's)."""

    def __init__(self):
        self.inner = ajp.MemoryReplayGuard()

    async def admit(self, identity, job_id, *, expires_at_us, now_us, digest=None, **options):
        await asyncio.sleep(0)
        self.inner.admit(identity, job_id, expires_at_us=expires_at_us, now_us=now_us, digest=digest, **options)


class BlockingPins(MemoryKeyPins):
    """A sync pin store that says its calls block (as SQLiteKeyPins): run in a thread from async code."""

    blocking = True

    def __init__(self):
        super().__init__()
        self.threads = set()

    def check(self, provenance_id, fingerprint, public_key=None):
        self.threads.add(threading.get_ident())
        return super().check(provenance_id, fingerprint, public_key)


def test_receive_async_awaits_async_resolvers_and_stores(core):
    fetched = []

    async def resolver(provenance_id, url):
        fetched.append(url)
        await asyncio.sleep(0)
        return DECL, url

    pins = BlockingPins()
    r = ajp.Receiver(recipient=ME, declarations=resolver, pins=pins, replay_guard=AsyncGuard())

    async def main():
        loop_thread = threading.get_ident()
        got = await r.receive_async(agent_offer().to_json(), now=NOW)
        again = await r.answer_offer_async(agent_offer().to_json(), now=NOW)
        other = await r.answer_offer_async(agent_offer(instruction="else").to_json(), now=NOW)
        return loop_thread, got, again, other

    loop_thread, got, again, other = asyncio.run(main())
    assert got.identity.provenance_id == PID and fetched == [URL, URL, URL]
    assert again.duplicate and again.status == 202 and other.status == 409
    assert pins.threads and loop_thread not in pins.threads
    with pytest.raises(KeyUsageError, match="receive_async"):
        ajp.Receiver(recipient=ME, secret=SECRET, replay_guard=AsyncGuard()).receive(human_offer().to_json(), now=NOW)


def test_receive_async_runs_a_sync_resolver_in_a_thread(core):
    threads = []

    def resolver(provenance_id, url):
        threads.append(threading.get_ident())
        return DECL, url

    r = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD, recipient=ME, declarations=resolver)

    async def main():
        await r.receive_async(agent_offer().to_json(), now=NOW)
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert threads and threads[0] != loop_thread
    failing = ajp.Receiver(replay_guard=ajp.NO_REPLAY_GUARD, recipient=ME, declarations=Resolver({}))
    answer = asyncio.run(failing.answer_offer_async(agent_offer().to_json(), now=NOW))
    assert answer.status == 403 and json.loads(answer.body)["code"] == "DECLARATION_UNREACHABLE"


# -- the declaration URL gate, before any fetch ---------------------------------------------------------


@pytest.mark.parametrize("url, code", [
    ("http://agent.example.com/.well-known/provenance.json", "DECLARATION_URL_REFUSED"),
    ("https://169.254.169.254/latest/meta-data", "DECLARATION_URL_REFUSED"),
    ("https://localhost/.well-known/provenance.json", "DECLARATION_URL_REFUSED"),
    ("https://agent.example.com:8443/.well-known/provenance.json", "DECLARATION_URL_REFUSED"),
    ("https://user@agent.example.com/.well-known/provenance.json", "DECLARATION_URL_REFUSED"),
    ("https://evil.example.net/.well-known/provenance.json", "DECLARATION_LOCATION_MISMATCH"),
])
def test_the_resolver_never_sees_a_refused_url(core, url, code):
    resolver = Resolver({url: DECL})
    r = receiver(declarations=resolver)
    data = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": url}, to=ME, task=TASK,
                         now=NOW, private_key=KEY).to_json()
    answer = r.answer_offer(data, now=NOW)
    assert answer.status == 403 and json.loads(answer.body)["code"] == code
    assert resolver.calls == 0
    assert asyncio.run(r.answer_offer_async(data, now=NOW)).status == 403 and resolver.calls == 0


# -- strategies: signed offers for a given sender and receiver, unique job ids ----------------------------


from hypothesis import given, settings  # noqa: E402

from ajpcore.strategies import signed_offers  # noqa: E402

_SHARED = ajp.Receiver(recipient=ME, secret=SECRET, declarations=Resolver(), replay_guard=ajp.MemoryReplayGuard())


@settings(max_examples=60, deadline=None)
@given(offer=signed_offers(sender={"type": "human", "id": "u1"}, to=ME, now=NOW, secret=SECRET))
def test_signed_offers_are_accepted_once_each_by_one_shared_receiver(offer):
    answer = _SHARED.answer_offer(offer.to_json(), now=NOW)
    assert answer.accepted, answer.body  # a new job id every example: never a 409 from an earlier one
    assert _SHARED.answer_offer(offer.to_json(), now=NOW).duplicate


@settings(max_examples=30, deadline=None)
@given(offer=signed_offers(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=ME, now=NOW,
                           private_key=KEY))
def test_signed_agent_offers_are_accepted(offer):
    got = _SHARED.receive(offer.to_json(), now=NOW)
    assert got.identity.provenance_id == PID and got.offer == offer


# -- ajpcore demo: the receive path too ---------------------------------------------------------------


def test_demo_shows_accepted_duplicate_reuse_and_wrong_recipient(capfdbinary):
    from importlib import resources

    from ajpcore.cli import main

    assert main(["demo"]) == 0
    lines = capfdbinary.readouterr().out.decode().splitlines()
    assert lines[2] == "verify: valid" and "refused - BadSignature" in lines[3]
    assert ": 202 accepted - " in lines[4]
    assert lines[5].startswith("the same bytes again (a retry): 202 duplicate, not run again")
    assert lines[6].startswith("another body under the same job id: 409 refused") and '"REPLAY"' in lines[6]
    assert lines[7].startswith("a validly signed offer for another agent: 403 refused") and "WRONG_RECIPIENT" in lines[7]
    bundled = json.loads(resources.files("ajpcore.examples").joinpath("offer.json").read_bytes())
    assert bundled["task"]["input"]["release"] == f"ajpcore {ajpcore.__version__}"
    ajpcore.verify(bundled, secret=b"ajpcore-demo-secret")


def test_docs_tables_have_the_receiver_codes():
    # The identity codes are a table of docs/provenance.md (the README's former error table);
    # WRONG_RECIPIENT is no identity failure, so docs/receiving.md names it with its status.
    from pathlib import Path

    docs = Path(__file__).resolve().parent.parent.parent / "docs"
    table = (docs / "provenance.md").read_text("utf-8").split("<!-- identity-codes:begin -->")[1].split("<!-- identity-codes:end -->")[0]
    row = next(line for line in table.splitlines() if line.startswith(f"| `{DeclarationUnreachable.code}` |"))
    assert f"| {DeclarationUnreachable.status} |" in row and DeclarationUnreachable.__name__ in row
    receiving = (docs / "receiving.md").read_text("utf-8")
    assert RecipientMismatch.code in receiving and RecipientMismatch.__name__ in receiving


def test_sync_forms_refuse_async_stores_and_resolvers(core):
    class AsyncPins:
        async def check(self, provenance_id, fingerprint, public_key=None):
            return None

    with pytest.raises(KeyUsageError, match="receive_async"):
        receiver(pins=AsyncPins()).receive(agent_offer().to_json(), now=NOW)

    def returns_a_coroutine(provenance_id, url):
        async def later():
            return DECL, url
        return later()

    with pytest.raises(KeyUsageError, match="asynchronous"):
        receiver(declarations=returns_a_coroutine).receive(agent_offer().to_json(), now=NOW)
    r = receiver(pins=AsyncPins(), declarations=returns_a_coroutine)
    assert asyncio.run(r.receive_async(agent_offer().to_json(), now=NOW)).identity.provenance_id == PID

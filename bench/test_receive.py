"""The receiver (issue 21): ``ajp.Receiver`` beside ``receive_offer`` and the unsafe pipeline.

``receive:hmac``: a human sender's offer (HMAC-SHA256) through ``Receiver.receive`` (decode,
schema, strict rules, recipient, secret, verify, ``MemoryReplayGuard``), ``receive_offer`` with
the same policy, and the unsafe pipeline users write today (``orjson.loads``,
``orjson.dumps(OPT_SORT_KEYS)``, ``hmac.digest``, ``hmac.compare_digest``: no duplicate-key or
number checks, not RFC 8785, no schema, no recipient, no replay guard).  ``Receiver, UTC
datetime now`` is the same receive with ``now`` as the adapters' clock gives it
(``datetime.now(timezone.utc)``) instead of RFC 3339 text: the reading of ``now`` is its only
difference (``clock_micros``; it cost ~440 ns more than text before that).

``receive:ed25519-agent``: an agent's offer (Ed25519) whose declaration the resolver returns:
``Receiver.receive`` with its identity cache warm (the URL gate, the offer's ``from`` against the
cached identity, the capability rule, ``MemoryKeyPins``, one Ed25519 verify, the guard);
``receive_offer(declaration=...)``, which verifies the declaration on every offer; the floor,
``decode`` plus one ``ajpcore.verify`` of the offer (canonical signing bytes and one Ed25519
verify: what no receiver can skip; issue 23's target is the cached receiver at most 1.1x
that, counted in instructions by ``bench/callgrind.py``, case ``receive:agent-offer``); and the
unsafe pipeline
(orjson + one verify).  Offers are distinct pre-signed copies so the replay guard admits each.

Our receivers are named ``ajpcore-c (...)`` / ``ajpcore-py (...)`` so that ``bench/report.py``
counts them as ours; the floors are named ``floor (c): ...`` so that it sets each receiver
against them as against a peer (the ratio the targets speak of).
"""

import base64
import gc
import hmac
from datetime import datetime, timezone

import orjson
import pytest

import ajpcore
from ajpcore import Ed25519PrivateKey, ajp
from ajpcore.keys import DEFAULT_BACKEND
from ajpcore.provenance import MemoryKeyPins, sign_declaration
from fair import warm_calls
from twins import twin

NOW = "2026-03-05T10:01:00Z"
NOW_DATETIME = datetime(2026, 3, 5, 10, 1, tzinfo=timezone.utc)  # NOW as the adapters' clock gives it
ME = "provenance:domain:receiver.ajpcore-bench.net"
PID = "provenance:domain:agent.ajpcore-bench.net"
URL = "https://agent.ajpcore-bench.net/.well-known/provenance.json"
SECRET = b"bench-secret-0123456789abcdef"
KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
OFFERS_PER_GUARD = 1000
ROUNDS = 5000
TASK = {"type": "summarise", "instruction": "Summarise the three most cited papers on attention, with citations.",
        "input": {"query": "transformer attention", "year": 2024, "limit": 3, "weights": [1.0, 0.5, 1e-7]}}
DECLARATION = ajpcore.canonicalize(sign_declaration(
    {"provenance": "0.2", "name": "Bench agent", "description": "Finds papers.", "provenance_id": PID,
     "capabilities": ["read:web", "delegate:agents"], "constraints": ["no:pii"]}, KEY))


def _offers(kind: str):
    out = []
    for i in range(OFFERS_PER_GUARD):
        if kind == "hmac":
            offer = ajp.new_offer(sender={"type": "human", "id": "user_bench"}, to=ME, task=TASK, now=NOW,
                                  secret=SECRET, job_id=f"job_bench_hmac_{i:05d}")
        else:
            offer = ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=ME,
                                  task=TASK, now=NOW, private_key=KEY, job_id=f"job_bench_ed_{i:05d}")
        out.append(offer.to_json())
    return out


HMAC_OFFERS = _offers("hmac")
AGENT_OFFERS = _offers("ed25519")


class _Feed:
    """The next offer each round; the guard and receiver are rebuilt (untimed) after OFFERS_PER_GUARD."""

    def __init__(self, offers, make):
        self.offers, self.make, self.i = offers, make, 0
        self.target = make()

    def __call__(self):
        if self.i == len(self.offers):
            self.i = 0
            self.target = self.make()
        raw = self.offers[self.i]
        self.i += 1
        return (raw,), {}


def _run(benchmark, feed, call):
    for _ in range(warm_calls(benchmark)):
        args, _ = feed()
        call(feed.target, *args)
    gc.collect()
    return benchmark.pedantic(lambda raw: call(feed.target, raw), setup=feed, rounds=ROUNDS, iterations=1)


@pytest.fixture(params=["c", "py"], ids=["ajpcore-c", "ajpcore-py"])
def core(request, monkeypatch):
    import ajpcore._core as _core

    module = twin(request.param)
    monkeypatch.setattr(_core, "impl", module)
    return request.param


def _resolver(provenance_id, url):
    return DECLARATION, url


_resolver.blocking = False  # type: ignore[attr-defined]


# -- receive:hmac -------------------------------------------------------------------------------


@pytest.mark.parametrize("now", [NOW, NOW_DATETIME], ids=["text-now", "datetime-now"])
def test_hmac_receiver(benchmark, core, now):
    benchmark.group = "receive:hmac"
    benchmark.name = f"ajpcore-{core} (Receiver)" if now is NOW else f"ajpcore-{core} (Receiver, UTC datetime now)"
    feed = _Feed(HMAC_OFFERS, lambda: ajp.Receiver(recipient=ME, secret=SECRET, replay_guard=ajp.MemoryReplayGuard()))
    got = _run(benchmark, feed, lambda r, raw: r.receive(raw, now=now))
    assert got.identity is None and got.offer.sender.type == "human"


def test_hmac_receive_offer(benchmark, core):
    benchmark.group = "receive:hmac"
    benchmark.name = f"ajpcore-{core} (receive_offer)"
    feed = _Feed(HMAC_OFFERS, ajp.MemoryReplayGuard)
    got = _run(benchmark, feed, lambda g, raw: ajp.receive_offer(raw, now=NOW, recipient=ME, secret=SECRET, replay_guard=g))
    assert got.sender.type == "human"


def test_hmac_unsafe_pipeline(benchmark):
    benchmark.group = "receive:hmac"
    benchmark.name = "orjson+hmac (unsafe)"

    def run(_, raw):
        body = orjson.loads(raw)
        signature = body.pop("signature")
        digest = hmac.digest(SECRET, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), "sha256")
        if not hmac.compare_digest("sha256:" + digest.hex(), signature):
            raise ValueError("bad signature")
        return body

    assert _run(benchmark, _Feed(HMAC_OFFERS, lambda: None), run)["job_id"].startswith("job_bench_hmac_")


# -- receive:ed25519-agent ----------------------------------------------------------------------


def test_agent_receiver_cached_identity(benchmark, core):
    benchmark.group = "receive:ed25519-agent"
    benchmark.name = f"ajpcore-{core} (Receiver, cached identity)"

    def make():
        r = ajp.Receiver(recipient=ME, declarations=_resolver, pins=MemoryKeyPins(), replay_guard=ajp.MemoryReplayGuard())
        r.receive(_offers_warm[0], now=NOW)  # the identity cache is warm, as on a receiver's second offer
        return r

    feed = _Feed(AGENT_OFFERS, make)
    got = _run(benchmark, feed, lambda r, raw: r.receive(raw, now=NOW))
    assert got.identity.provenance_id == PID


_offers_warm = [ajp.new_offer(sender={"type": "agent", "provenance_id": PID, "declaration_url": URL}, to=ME,
                              task=TASK, now=NOW, private_key=KEY, job_id="job_bench_warmup").to_json()]


def test_agent_receive_offer_declaration(benchmark, core):
    benchmark.group = "receive:ed25519-agent"
    benchmark.name = f"ajpcore-{core} (receive_offer(declaration=))"
    feed = _Feed(AGENT_OFFERS, lambda: (ajp.MemoryReplayGuard(), MemoryKeyPins()))
    got = _run(benchmark, feed, lambda gp, raw: ajp.receive_offer(
        raw, now=NOW, recipient=ME, declaration=DECLARATION, retrieved_from=URL, replay_guard=gp[0], pins=gp[1]))
    assert got.sender.provenance_id == PID


def test_agent_floor_decode_and_one_verify(benchmark, core):
    """What no receiver skips: decode the bytes, one Ed25519 verify of the offer (``ajpcore.verify``)."""
    benchmark.group = "receive:ed25519-agent"
    benchmark.name = f"floor ({core}): decode + 1 verify ({DEFAULT_BACKEND})"
    public = KEY.public_key
    from ajpcore import _core

    def run(_, raw):
        value = _core.impl.decode(raw)
        ajpcore.verify(value, public_key=public)
        return value

    assert _run(benchmark, _Feed(AGENT_OFFERS, lambda: None), run)["from"]["provenance_id"] == PID


def test_agent_floor_typed_offer_and_one_verify(benchmark, core):
    """The same floor with the offer read as a typed, schema-checked ``JobOffer`` (what "decoding it" is in ajpcore)."""
    benchmark.group = "receive:ed25519-agent"
    benchmark.name = f"floor ({core}): JobOffer.from_json + 1 verify ({DEFAULT_BACKEND})"
    public = KEY.public_key

    def run(_, raw):
        offer = ajp.JobOffer.from_json(raw)
        offer.verify(public_key=public)
        return offer

    assert _run(benchmark, _Feed(AGENT_OFFERS, lambda: None), run).sender.provenance_id == PID


def test_agent_unsafe_pipeline(benchmark):
    benchmark.group = "receive:ed25519-agent"
    benchmark.name = f"orjson + 1 verify ({DEFAULT_BACKEND}, unsafe)"
    public = KEY.public_key

    def run(_, raw):
        body = orjson.loads(raw)
        signature = body.pop("signature")
        public.verify(base64.b64decode(signature[8:]), orjson.dumps(body, option=orjson.OPT_SORT_KEYS))
        return body

    assert _run(benchmark, _Feed(AGENT_OFFERS, lambda: None), run)["from"]["provenance_id"] == PID

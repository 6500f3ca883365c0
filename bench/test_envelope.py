"""Typed envelopes: bytes -> validated (and verified) JobOffer, against what a user writes today.

``envelope:offer``: ajpcore-c / ajpcore-py ``JobOffer.from_json`` (strict decode, full
schema validation, typed parts) plus the HMAC ``verify``; pydantic v2
``model_validate_json`` on an equivalent model (no signature: pydantic has none);
``json.loads`` + ``jsonschema`` with the same shipped schema (no signature either).

``validate:offer``: the same without the signature on our side either (bytes ->
validated typed JobOffer), the like-for-like comparison with pydantic and jsonschema.

``receive:offer``: ajpcore's whole receive path (``receive_offer``: decode, schema,
strict acceptance rules, HMAC verify, and a ``MemoryReplayGuard`` admitting the job id)
against the unsafe pipeline users write today (``orjson.loads``,
``orjson.dumps(OPT_SORT_KEYS)``, ``hmac.digest``, ``hmac.compare_digest``: no
duplicate-key or number checks, not RFC 8785, no schema, no replay guard).

Every contender is measured the same way (``fair.measure``): the same number of untimed
warm-up calls, then ``gc.collect()``, then the timed rounds.  pytest-benchmark sizes
its rounds from one calibration call (``rounds = max_time / that call``): a contender
whose first call is cold (pydantic's first ``model_validate_json`` of a process) got a
fraction of the rounds, and so a window of the noisy machine a fraction as long, and a
higher minimum than the same call measured warm in the next group.  See bench/README.md.
"""

import gc
import hmac
import json
from typing import Any, Dict, List, Literal, Optional, Union

import jsonschema
import orjson
import pytest
from pydantic import BaseModel, ConfigDict, Field

import data
from ajpcore import ajp, schemas
from ajpcore.ajp import MemoryReplayGuard
from ajpcore.errors import ReplayedMessage
from fair import measure, warm_calls
from twins import twin as core_twin  # the native twin skips with its reason on a pure install
from ajpcore.signing import sign

NOW = "2026-03-05T10:01:00Z"
RECIPIENT = data.value("offer")["to"]["provenance_id"]


def _signed_offer_bytes() -> bytes:
    offer = dict(data.value("offer"))
    offer["signature"] = sign(offer, secret=data.SECRET)
    return orjson.dumps(offer)


RAW = _signed_offer_bytes()

# -- receive:offer: distinct pre-signed offers, so the replay guard admits each one --

REPLAY_QUOTA = MemoryReplayGuard().max_per_identity
"""How many live offers one sender may hold in a default ``MemoryReplayGuard`` (1,000)."""


def _distinct_offers(n: int):
    base = data.value("offer")
    out = []
    for i in range(n):
        offer = dict(base, job_id=f"{base['job_id']}_{i:04d}")
        offer["signature"] = sign(offer, secret=data.SECRET)
        out.append(orjson.dumps(offer))
    return out


OFFERS = _distinct_offers(REPLAY_QUOTA)
RECEIVE_ROUNDS = 20_000
"""Rounds of each ``receive:offer`` contender (pedantic: the same count for both, untimed setup)."""


class _Feed:
    """The next pre-signed offer of each round; the guard is replaced (in the untimed setup) only when
    it holds one live offer per ``OFFERS`` entry, i.e. when the next admission would be ``Busy``."""

    def __init__(self, with_guard: bool) -> None:
        self.i = 0
        self.guard = MemoryReplayGuard() if with_guard else None

    def __call__(self):
        if self.i == len(OFFERS):
            self.i = 0
            if self.guard is not None:
                self.guard = MemoryReplayGuard()
        raw = OFFERS[self.i]
        self.i += 1
        if self.guard is None:
            self.last = (raw,), {}
        else:
            self.last = (raw,), {"now": NOW, "recipient": RECIPIENT, "secret": data.SECRET, "replay_guard": self.guard}
        return self.last


def _measure_receive(benchmark, fn, feed):
    for _ in range(warm_calls(benchmark)):
        args, kwargs = feed()
        fn(*args, **kwargs)
    gc.collect()
    return benchmark.pedantic(fn, setup=feed, rounds=RECEIVE_ROUNDS, iterations=1)


# -- the pydantic peer: the same shape and constraints, extra members allowed --


class _Model(BaseModel):
    model_config = ConfigDict(extra="allow", frozen=True, populate_by_name=True)


class PSender(_Model):
    type: Literal["human", "agent", "orchestrator"]
    id: Optional[str] = None
    provenance_id: Optional[str] = None
    declaration_url: Optional[str] = None


class PRecipient(_Model):
    provenance_id: str = Field(min_length=1)


class PTask(_Model):
    type: str = Field(min_length=1)
    instruction: str = Field(min_length=1)
    input: Optional[Dict[str, Any]] = None
    output_format: Optional[Literal["json", "text", "markdown", "html", "any"]] = None


class PContext(_Model):
    credentials: Optional[Dict[str, Any]] = None
    memory: Optional[List[Any]] = None
    constraints: Optional[List[str]] = None


class PBudget(_Model):
    max_usd: Union[int, float] = Field(ge=0)
    max_seconds: Optional[Union[int, float]] = Field(default=None, ge=1)
    max_llm_tokens: Optional[Union[int, float]] = Field(default=None, ge=1)


class PCallback(_Model):
    url: str
    headers: Optional[Dict[str, Any]] = None


class POffer(_Model):
    ajp: str = Field(pattern=r"^[0-9]+\.[0-9]+$")
    job_id: str = Field(min_length=8)
    parent_job_id: Optional[str] = None
    sender: PSender = Field(alias="from")
    to: PRecipient
    task: PTask
    context: Optional[PContext] = None
    budget: PBudget
    callback: Optional[PCallback] = None
    issued_at: str
    expires_at: str
    signature: str = Field(pattern=r"^[a-z][a-z0-9_-]*:")


TWINS = {"ajpcore-c": "c", "ajpcore-py": "py"}


@pytest.fixture(params=list(TWINS))
def twin(request, monkeypatch):
    import ajpcore._core as _core

    monkeypatch.setattr(_core, "impl", core_twin(TWINS[request.param]))
    return request.param


def test_envelope_offer_ajpcore(benchmark, twin):
    benchmark.group = "envelope:offer"
    benchmark.name = twin

    def run():
        offer = ajp.JobOffer.from_json(RAW)
        offer.verify(secret=data.SECRET)
        return offer

    offer = measure(benchmark, run)  # the warm-up also fills the HMAC key cache, as a server's first request would
    assert offer.job_id == data.value("offer")["job_id"]


def test_validate_offer_ajpcore(benchmark, twin):
    benchmark.group = "validate:offer"
    benchmark.name = twin
    offer = measure(benchmark, ajp.JobOffer.from_json, RAW)
    assert offer.job_id == data.value("offer")["job_id"]


# The peers do not verify signatures: they stand in both groups, `envelope:offer` (ours
# verifies the HMAC too) and `validate:offer` (like for like, no signature).
PEER_GROUPS = pytest.mark.parametrize("group", ["envelope:offer", "validate:offer"])


@PEER_GROUPS
def test_offer_pydantic(benchmark, group):
    benchmark.group = group
    benchmark.name = "pydantic.model_validate_json"
    offer = measure(benchmark, POffer.model_validate_json, RAW)
    assert offer.job_id == data.value("offer")["job_id"]


@PEER_GROUPS
def test_offer_jsonschema(benchmark, group):
    benchmark.group = group
    benchmark.name = "json.loads+jsonschema"
    validator = jsonschema.Draft202012Validator(schemas.load("ajp-job-offer"), format_checker=jsonschema.FormatChecker())

    def run():
        value = json.loads(RAW)
        validator.validate(value)
        return value

    for _ in range(5):
        run()
    gc.collect()
    value = benchmark.pedantic(run, rounds=200, iterations=1)  # slow: fixed rounds
    assert value["job_id"] == data.value("offer")["job_id"]


def test_receive_offer_ajpcore(benchmark, twin):
    benchmark.group = "receive:offer"
    benchmark.name = twin
    feed = _Feed(with_guard=True)
    offer = _measure_receive(benchmark, ajp.receive_offer, feed)
    assert offer.job_id.startswith(data.value("offer")["job_id"])
    # The guard did its work: the last offer it admitted is refused when it comes again.
    args, kwargs = feed.last
    assert len(kwargs["replay_guard"]) > 0
    with pytest.raises(ReplayedMessage):
        ajp.receive_offer(*args, **kwargs)


def test_receive_offer_unsafe_pipeline(benchmark):
    benchmark.group = "receive:offer"
    benchmark.name = "orjson+hmac (unsafe)"
    key = data.SECRET

    def run(raw):
        body = orjson.loads(raw)
        signature = body.pop("signature")
        digest = hmac.digest(key, orjson.dumps(body, option=orjson.OPT_SORT_KEYS), "sha256")
        if not hmac.compare_digest("sha256:" + digest.hex(), signature):
            raise ValueError("bad signature")
        return body

    body = _measure_receive(benchmark, run, _Feed(with_guard=False))
    assert body["job_id"].startswith(data.value("offer")["job_id"])

"""Deterministic bench fixtures, shared by every bench group.

``offer``: a ~1.2 KB JobOffer shaped like the AJP specification's example.
``result64k``: a JobResult whose ``output`` is ~64 KB of nested records.
``mixed8m``: ~8 MB of mixed JSON types (ASCII and non-ASCII strings, escapes,
ints, float-heavy arrays, booleans, nulls, nesting), built from a fixed seed.
Each is built once per process; ``encoded(name)`` gives its canonical bytes.
"""

from __future__ import annotations

import functools
import random
from typing import Any, Callable, Dict

SECRET = b"bench-secret-0123456789abcdef"


def _offer() -> Dict[str, Any]:
    return {
        "ajp": "0.1",
        "job_id": "job_m3x9k2a1_4f2c9e7b1a05",
        "parent_job_id": None,
        "from": {
            "type": "human",
            "id": "user_ada",
            "provenance_id": None,
            "declaration_url": None,
        },
        "to": {"provenance_id": "provenance:github:example/research-assistant"},
        "task": {
            "type": "research",
            "instruction": (
                "Find the three most cited papers on sparse attention published this year. "
                "Return titles, authors, citation counts, and a two-sentence summary of each."
            ),
            "input": {"topic": "sparse attention", "year": 2026, "limit": 3, "languages": ["en", "fr"]},
            "output_format": "json",
        },
        "context": {
            "credentials": {},
            "memory": [
                {"role": "user", "content": "Prefer peer-reviewed venues.", "weight": 0.75},
                {"role": "assistant", "content": "Noted: peer-reviewed only.", "weight": 0.5},
            ],
            "constraints": ["no paywalled sources", "cite DOIs", "max 300 words"],
        },
        "budget": {"max_usd": 0.5, "max_seconds": 120, "max_llm_tokens": 10000},
        "callback": {
            "url": "https://agents.example.org/api/jobs/job_m3x9k2a1_4f2c9e7b1a05/result",
            "headers": {"Authorization": "Bearer token_0123456789abcdef"},
        },
        "issued_at": "2026-03-05T10:00:00Z",
        "expires_at": "2026-03-05T10:02:00Z",
        "signature": "sha256:" + "0" * 64,
    }


_WORDS = [
    "agent", "job", "offer", "résumé", "naïve", "Zürich", "東京", "данные", "🚀", "tab\there",
    "quote\"d", "back\\slash", "line\nbreak", "signature", "budget", "callback", "ünïcödé",
]


def _text(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(n))


def _record(rng: random.Random, i: int) -> Dict[str, Any]:
    return {
        "id": i,
        "name": _text(rng, rng.randint(1, 6)),
        "score": rng.random() * 1000,
        "ratio": rng.choice([0.1, 0.25, 1e-7, 5.0, -0.0, 1e21, 123.456, rng.uniform(-1e6, 1e6)]),
        "count": rng.randint(-(2**53) + 1, 2**53 - 1),
        "small": rng.randint(0, 1000),
        "ok": rng.random() < 0.5,
        "none": None,
        "tags": [_text(rng, 1) for _ in range(rng.randint(0, 4))],
        "vector": [rng.uniform(-1, 1) for _ in range(rng.randint(4, 12))],
        "nested": {"level": {"deeper": {"value": rng.randint(0, 10**6), "label": _text(rng, 2)}}},
    }


def _result64k() -> Dict[str, Any]:
    rng = random.Random(64)
    records = []
    size = 0
    while size < 64 * 1024:
        rec = _record(rng, len(records))
        records.append(rec)
        size += 450  # approximate canonical size of one record
    return {
        "job_id": "job_m3x9k2a1_4f2c9e7b1a05",
        "status": "completed",
        "output": {"papers": records, "summary": _text(rng, 40)},
        "constraints_asserted": ["no paywalled sources", "cite DOIs"],
        "usage": {"llm_tokens": 8123, "cost_usd": 0.37, "duration_seconds": 93.5},
        "agent": {"provenance_id": "provenance:github:example/research-assistant", "model": "example-model-1"},
        "completed_at": "2026-03-05T10:01:33.000Z",
        "signature": "sha256:" + "0" * 64,
    }


def _mixed8m() -> Dict[str, Any]:
    rng = random.Random(8)
    records = [_record(rng, i) for i in range(17_000)]
    return {"kind": "mixed", "records": records, "floats": [rng.uniform(-1e9, 1e9) for _ in range(43_000)]}


BUILDERS: Dict[str, Callable[[], Dict[str, Any]]] = {
    "offer": _offer,
    "result64k": _result64k,
    "mixed8m": _mixed8m,
}
FIXTURES = list(BUILDERS)


@functools.lru_cache(maxsize=None)
def value(name: str) -> Dict[str, Any]:
    """The fixture as a Python value (built once; do not mutate)."""
    return BUILDERS[name]()


@functools.lru_cache(maxsize=None)
def encoded(name: str) -> bytes:
    """The fixture's RFC 8785 canonical bytes (what a receiver gets on the wire)."""
    import rfc8785

    return rfc8785.dumps(value(name))


# -- IATP manifest fixture --


def _manifest() -> Dict[str, Any]:
    """A ~1 KB IATP capability manifest using every member the schema names, plus `scopes`."""
    return {
        "$schema": "http://inter-agent-trust.org/v1/schema",
        "identity": {
            "agent_id": "booking-agent-v2.1.0",
            "verification_key": "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=",
            "owner": "Example Travel",
            "contact": "security@example.org",
        },
        "trust_level": "verified_partner",
        "scopes": ["booking:read", "booking:write"],
        "capabilities": {
            "idempotency": True,
            "idempotency_duration_seconds": 86400,
            "concurrency_limit": 10,
            "sla_latency_ms": 2000,
            "sla_availability": 0.999,
        },
        "reversibility": {
            "level": "partial",
            "undo_window_seconds": 3600,
            "compensation_method": "refund_minus_fee",
            "compensation_sla_ms": 5000,
            "compensation_notes": "Free cancellation within one hour, then a fee.",
            "compensation_endpoint": "POST /compensate/{transaction_id}",
            "undo_conditions": {"until_state": "ticketed", "check_endpoint": "GET /bookings/{id}/status"},
        },
        "privacy": {
            "retention_policy": "temporary",
            "retention_duration_seconds": 2592000,
            "storage_location": "eu-central-1",
            "human_in_loop": False,
            "training_consent": False,
            "encryption_at_rest": True,
            "encryption_in_transit": True,
            "data_processing_addendum": "https://example.org/dpa",
        },
        "authentication": {"methods": ["oauth2", "mutual_tls"], "required": True},
        "rate_limiting": {"requests_per_second": 5, "requests_per_minute": 200, "burst_limit": 20},
        "protocol_version": "1.0",
        "manifest_version": "2.1.0",
        "updated_at": "2026-01-23T00:00:00Z",
    }


BUILDERS["manifest"] = _manifest  # after FIXTURES: the generic benches keep their three fixtures

"""The fixed keys and message templates of the pack (public test material: never use in production).

Ed25519 keys are the RFC 8032 §7.1 test keys (TEST 1, 2, 3); signing uses pyca/cryptography,
not ajpcore.  HMAC secrets are fixed strings, one of them non-ASCII.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from typing import Any, Dict

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

from . import reference as ref

SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
L = 2**252 + 27742317777372353535851937790883648493  # order of the base point (RFC 8032 §5.1)

SECRET = "ajp-conformance-secret"
SECRET_UNICODE = "cl\u00e9-secr\u00e8te-\U0001f511"
SECRET_LONG = "k" * 100  # longer than the SHA-256 block: HMAC hashes it first (RFC 2104)
SECRET_BLOCK = "b" * 64  # exactly one block


class TestKey:
    """One RFC 8032 test key: seed, raw public key, its text forms, and signing."""

    def __init__(self, name: str) -> None:
        vectors = json.loads((ref.VECTORS / "ed25519" / "rfc8032_ed25519.json").read_text("utf-8"))
        entry = next(t for t in vectors["tests"] if t["name"] == name)
        self.name = name
        self.private = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(entry["secret_key"]))
        self.raw = self.private.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw)
        if self.raw.hex() != entry["public_key"]:
            raise AssertionError(f"{name}: derived public key differs from RFC 8032")

    def form(self, kind: str) -> str:
        return public_key_text(self.raw, kind)

    def sign(self, data: bytes) -> str:
        return "ed25519:" + base64.b64encode(self.private.sign(data)).decode("ascii")


def public_key_text(raw: bytes, kind: str) -> str:
    """``spki`` (base64 SPKI DER, the Provenance form), ``b64``/``hex`` (the IATP ``ed25519:`` forms)."""
    if kind == "spki":
        return base64.b64encode(SPKI_PREFIX + raw).decode("ascii")
    if kind == "b64":
        return "ed25519:" + base64.b64encode(raw).decode("ascii")
    return "ed25519:" + raw.hex()


KEY1, KEY2, KEY3 = TestKey("TEST 1"), TestKey("TEST 2"), TestKey("TEST 3")


def ed_challenge(r: bytes, a: bytes, message: bytes) -> int:
    """k = SHA-512(R || A || M) mod L (RFC 8032 §5.1.7)."""
    return int.from_bytes(hashlib.sha512(r + a + message).digest(), "little") % L


OFFER_HUMAN: Dict[str, Any] = {
    "ajp": "0.1",
    "job_id": "job_conformance_0001",
    "parent_job_id": None,
    "from": {"type": "human", "id": "user_ada", "provenance_id": None, "declaration_url": None},
    "to": {"provenance_id": "provenance:github:alice/research-assistant"},
    "task": {
        "type": "research",
        "instruction": "Find the three most cited papers on attention published in 2024.",
        "input": {"topics": ["transformers", "attention"], "min_citations": 10},
        "output_format": "json",
    },
    "context": {"credentials": {}, "memory": [], "constraints": ["no:pii"]},
    "budget": {"max_usd": 0.5, "max_seconds": 120, "max_llm_tokens": 10000},
    "callback": {"url": "https://receiver.example/jobs/job_conformance_0001/result", "headers": {"Authorization": "Bearer t"}},
    "issued_at": "2026-03-05T10:00:00Z",
    "expires_at": "2026-03-05T10:02:00Z",
}

OFFER_AGENT: Dict[str, Any] = dict(
    copy.deepcopy(OFFER_HUMAN),
    job_id="job_conformance_0002",
    **{
        "from": {
            "type": "agent",
            "id": None,
            "provenance_id": "provenance:github:example/research-agent",
            "declaration_url": "https://raw.githubusercontent.com/example/research-agent/HEAD/PROVENANCE.yml",
        }
    },
    callback=None,
)

RESULT: Dict[str, Any] = {
    "ajp": "0.1",
    "job_id": "job_conformance_0002",
    "status": "completed",
    "output": {"papers": [{"title": "Flash Attention 3", "citations": 412, "score": 0.875}]},
    "constraints_asserted": ["no:pii", "no:persist:data"],
    "usage": {"llm_tokens": 4821, "duration_seconds": 18, "cost_usd": 0.12},
    "agent": {
        "provenance_id": "provenance:github:alice/research-assistant",
        "version": "1.2.0",
        "model": {"provider": "anthropic", "model_id": "claude-sonnet-4-5"},
    },
    "completed_at": "2026-03-05T10:00:19Z",
}

GENERIC: Dict[str, Any] = {
    "weights": [5.0, -0.0, 1e-7, 1e21, 0.1, 2**53 - 1],
    "text": "caf\u00e9 \u2028 \U0001f680 \"quoted\" \\ \u0001",
    "\ufb33": "sorts after the astral key in UTF-16 order",
    "\U0001f600": "sorts first among the non-ASCII keys",
    "nested": {"b": {"y": [True, False, None]}, "a": {}},
}


def sdk_subset(body: Dict[str, Any]) -> Dict[str, Any]:
    """What the reference SDK 0.3 signs of a result: ``{job_id, status, output,
    constraints_asserted, completed_at, agent: {provenance_id}}``, absent members left out."""
    subset: Dict[str, Any] = {}
    for key in ("job_id", "status", "output", "constraints_asserted", "completed_at"):
        if key in body:
            subset[key] = body[key]
    agent = body.get("agent")
    subset["agent"] = {"provenance_id": agent["provenance_id"]} if isinstance(agent, dict) and "provenance_id" in agent else {}
    return subset

"""IATP capability manifests: bytes -> validated typed manifest, and manifest signature checks.

Groups ``envelope:manifest`` (ajpcore ``CapabilityManifest.from_json`` on each twin against
``json.loads`` + ``jsonschema`` with the same Draft 2020-12 schema, and pydantic v2
``model_validate_json`` on an equivalent model that keeps extra members) and
``verify:manifest`` (``verify_manifest`` on each twin, both Ed25519 backends, against what a
user writes today: ``rfc8785.dumps`` + OpenSSL verify, no strict key or signature checks).
"""

import base64
import json
from typing import List, Literal, Optional

import jsonschema
import pydantic
import pytest
import rfc8785
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey as OsslPublicKey

import data
from fair import measure
from ajpcore.iatp import CapabilityManifest, schema, sign_manifest, verify_manifest
from ajpcore.keys import Ed25519PrivateKey

KEY = Ed25519PrivateKey.from_seed(bytes(range(32)))
MANIFEST_BYTES = rfc8785.dumps(data.value("manifest"))
SIGNED = sign_manifest(CapabilityManifest.from_json(MANIFEST_BYTES), KEY)
SIGNED_BYTES = SIGNED.to_json()


class _Open(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow", strict=True)


class _Identity(_Open):
    agent_id: str = pydantic.Field(min_length=1, max_length=255)
    owner: str = pydantic.Field(min_length=1, max_length=255)
    verification_key: Optional[str] = None
    contact: Optional[str] = None


class _Capabilities(_Open):
    idempotency: Optional[bool] = None
    idempotency_duration_seconds: Optional[int] = pydantic.Field(None, ge=0)
    concurrency_limit: Optional[int] = pydantic.Field(None, ge=1)
    sla_latency_ms: Optional[int] = pydantic.Field(None, ge=0)
    sla_availability: Optional[float] = pydantic.Field(None, ge=0, le=1)


class _UndoConditions(_Open):
    until_state: Optional[str] = None
    check_endpoint: Optional[str] = None


class _Reversibility(_Open):
    level: Literal["full", "partial", "none"]
    undo_window_seconds: Optional[int] = pydantic.Field(None, ge=0)
    compensation_method: Optional[str] = None
    compensation_sla_ms: Optional[int] = pydantic.Field(None, ge=0)
    compensation_notes: Optional[str] = pydantic.Field(None, max_length=1000)
    compensation_endpoint: Optional[str] = None
    undo_conditions: Optional[_UndoConditions] = None


class _Privacy(_Open):
    retention_policy: Optional[Literal["ephemeral", "temporary", "permanent", "forever"]] = None
    retention_duration_seconds: Optional[int] = pydantic.Field(None, ge=0)
    storage_location: Optional[str] = None
    human_in_loop: Optional[bool] = None
    training_consent: Optional[bool] = None
    encryption_at_rest: Optional[bool] = None
    encryption_in_transit: Optional[bool] = None
    data_processing_addendum: Optional[str] = None


class _Authentication(_Open):
    methods: Optional[List[Literal["none", "api_key", "oauth2", "mutual_tls", "jwt"]]] = None
    required: Optional[bool] = None


class _RateLimiting(_Open):
    requests_per_second: Optional[float] = pydantic.Field(None, ge=0)
    requests_per_minute: Optional[float] = pydantic.Field(None, ge=0)
    requests_per_hour: Optional[float] = pydantic.Field(None, ge=0)
    burst_limit: Optional[int] = pydantic.Field(None, ge=1)


class PydanticManifest(_Open):
    identity: _Identity
    trust_level: Literal["verified_partner", "trusted", "standard", "unknown", "untrusted"]
    protocol_version: str = pydantic.Field(pattern=r"^[0-9]+\.[0-9]+$")
    capabilities: Optional[_Capabilities] = None
    reversibility: Optional[_Reversibility] = None
    privacy: Optional[_Privacy] = None
    authentication: Optional[_Authentication] = None
    rate_limiting: Optional[_RateLimiting] = None
    manifest_version: Optional[str] = pydantic.Field(None, pattern=r"^[0-9]+\.[0-9]+\.[0-9]+$")
    updated_at: Optional[pydantic.AwareDatetime] = None


VALIDATOR = jsonschema.Draft202012Validator(schema("iatp-capability-manifest"))


def test_parse_ajpcore(benchmark, core_twin):
    benchmark.group = "envelope:manifest"
    benchmark.name = "ajpcore-" + core_twin.__name__.rsplit("_", 1)[1]
    result = measure(benchmark, CapabilityManifest.from_json, MANIFEST_BYTES)
    assert result.to_json() == MANIFEST_BYTES


def test_parse_jsonschema(benchmark):
    benchmark.group = "envelope:manifest"
    benchmark.name = "jsonschema"

    def run():
        doc = json.loads(MANIFEST_BYTES)
        VALIDATOR.validate(doc)
        return doc

    assert measure(benchmark, run) == data.value("manifest")


def test_parse_pydantic(benchmark):
    benchmark.group = "envelope:manifest"
    benchmark.name = "pydantic"
    model = measure(benchmark, PydanticManifest.model_validate_json, MANIFEST_BYTES)
    assert model.identity.agent_id == "booking-agent-v2.1.0"


@pytest.mark.parametrize("backend", [None, "cryptography"], ids=["libsodium", "openssl"])
def test_verify_ajpcore(benchmark, core_twin, backend):
    benchmark.group = "verify:manifest"
    twin = "ajpcore-" + core_twin.__name__.rsplit("_", 1)[1]
    benchmark.name = twin if backend is None else f"{twin} (openssl)"
    measure(benchmark, verify_manifest, SIGNED, backend=backend)


def test_verify_unsafe_pipeline(benchmark):
    """What a user writes today: canonicalize, prefix, verify with OpenSSL (no strict checks)."""
    benchmark.group = "verify:manifest"
    benchmark.name = "rfc8785+openssl"
    body = json.loads(SIGNED_BYTES)

    def run():
        rest = {k: v for k, v in body.items() if k != "signature"}
        raw_key = base64.b64decode(rest["identity"]["verification_key"][8:])
        signature = base64.b64decode(body["signature"][8:])
        OsslPublicKey.from_public_bytes(raw_key).verify(signature, b"iatp-manifest-v1:" + rfc8785.dumps(rest))

    benchmark(run)

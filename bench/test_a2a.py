"""Verifying a signed A2A Agent Card (EdDSA and ES256): ajpcore.a2a beside a2a-python's verifier.

The card is a realistic v1.0 card (two interfaces, three skills, a security scheme, an
extension with params) without empty values, so every verifier covers the same bytes; it is
signed once, outside the timing.  Contenders per algorithm:

- ``ajpcore-c`` / ``ajpcore-py``: ``verify_card(bytes as received, keys)``: strict decode,
  the ``served`` payload, the header checks and the signature.
- ``... (dict)``: the same from an already decoded card.
- ``a2a-python``: ``create_signature_verifier`` on the card already parsed into its protobuf
  model (its own canonicalization included); ``a2a-python (from bytes)`` adds
  ``json.loads`` + ``parse_agent_card``.  Skipped, saying why, where ``a2a-sdk[signing]`` is
  not installed (the ``a2a_interop`` job has it).
"""

import json
import logging
import warnings

import pytest
from cryptography.hazmat.primitives.asymmetric import ec

import ajpcore
from ajpcore import a2a
from ajpcore.keys import Ed25519PrivateKey
from fair import measure

CARD = {
    "name": "Travel Planner", "description": "Plans trips: flights, trains, hotels and day plans.", "version": "2.4.1",
    "supportedInterfaces": [
        {"url": "https://travel.example/a2a/v1", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": "https://travel.example/a2a/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"},
    ],
    "provider": {"url": "https://travel.example", "organization": "Travel Example Ltd"},
    "documentationUrl": "https://travel.example/docs",
    "capabilities": {"streaming": True, "pushNotifications": True, "extensions": [
        {"uri": "https://ext.example/budget", "description": "budget limits", "required": True,
         "params": {"currency": "EUR", "max": 2500.5, "tiers": ["eco", "biz"], "caf\u00e9": {"ok": True}}}]},
    "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": {"clientCredentials": {
        "tokenUrl": "https://travel.example/token", "scopes": {"trips:read": "read trips", "trips:write": "book"}}}}}},
    "securityRequirements": [{"schemes": {"oauth": {"list": ["trips:read"]}}}],
    "defaultInputModes": ["text/plain", "application/json"], "defaultOutputModes": ["application/json"],
    "skills": [{"id": f"skill-{i}", "name": f"Skill {i}", "description": "Finds and books the best option for a leg.",
                "tags": ["travel", "booking", "\u65c5\u884c"], "examples": ["Book Paris to Rome on Friday"]} for i in range(3)],
    "iconUrl": "https://travel.example/icon.png",
}

ED = Ed25519PrivateKey.from_seed(bytes(range(32)))
EC = ec.derive_private_key(0x1234567890ABCDEF1234567890ABCDEF, ec.SECP256R1())
MATERIAL = {}
for _alg, _kid, _key in (("EdDSA", "ed", ED), ("ES256", "ec", EC)):
    _signed = a2a.sign_card(CARD, _key, kid=_kid, alg=_alg)
    MATERIAL[_alg] = (_kid, _signed, ajpcore.canonicalize(_signed), {"keys": [a2a.jwk_from_key(_key, kid=_kid, alg=_alg)]})


def _twin(module):
    return "ajpcore-" + module.__name__.rsplit("_", 1)[1]


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_ajpcore(benchmark, core_twin, alg):
    kid, _, data, jwks = MATERIAL[alg]
    benchmark.group = f"a2a-verify-card:{alg}"
    benchmark.name = _twin(core_twin)
    keys = a2a.KeySet.from_jwks(jwks)
    result = measure(benchmark, a2a.verify_card, data, keys)
    assert (result.kid, result.profile, result.unsigned_members) == (kid, "served", ())


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_ajpcore_dict(benchmark, core_twin, alg):
    kid, card, _, jwks = MATERIAL[alg]
    benchmark.group = f"a2a-verify-card:{alg}"
    benchmark.name = _twin(core_twin) + " (dict)"
    keys = a2a.KeySet.from_jwks(jwks)
    assert measure(benchmark, a2a.verify_card, card, keys).kid == kid


def _a2a_python(alg):
    signing = pytest.importorskip("a2a.utils.signing", reason="a2a-sdk[signing] is not installed (the a2a_interop job has it)")
    from a2a.client.card_resolver import parse_agent_card
    from jwt import PyJWK

    warnings.simplefilter("ignore")
    logging.getLogger("a2a").setLevel(logging.ERROR)
    kid, card, data, jwks = MATERIAL[alg]
    key = PyJWK(jwks["keys"][0])
    verifier = signing.create_signature_verifier(lambda k, j: key, [alg])
    return verifier, parse_agent_card, card, data


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_a2a_python(benchmark, alg):
    verifier, parse, card, _ = _a2a_python(alg)
    benchmark.group = f"a2a-verify-card:{alg}"
    benchmark.name = "a2a-python"
    parsed = parse(json.loads(json.dumps(card)))
    assert measure(benchmark, verifier, parsed) is None


@pytest.mark.parametrize("alg", ["EdDSA", "ES256"])
def test_a2a_python_from_bytes(benchmark, alg):
    verifier, parse, _, data = _a2a_python(alg)
    benchmark.group = f"a2a-verify-card:{alg}"
    benchmark.name = "a2a-python (from bytes)"
    assert measure(benchmark, lambda b: verifier(parse(json.loads(b))), data) is None

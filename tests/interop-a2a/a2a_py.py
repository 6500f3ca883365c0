"""a2a-python (PyPI ``a2a-sdk[signing]``, pinned in noxfile.py's ``a2a_interop`` job) as a peer.

The same three operations as ``a2a_js.mjs``, done the way an a2a-python application does
them: a received card goes through ``a2a.client.card_resolver.parse_agent_card`` (protobuf
``ParseDict``, unknown fields ignored), a signed card is served as
``agent_card_to_dict`` writes it (v0.3 compatibility members merged in), signing is
``create_agent_card_signer`` and verification ``create_signature_verifier``.
"""

from __future__ import annotations

import json
from typing import Any, Dict

A2A_SDK_VERSION = "1.3.0"


def _sdk() -> Any:
    import a2a.utils.signing as signing  # noqa: F401  (raises ImportError without the [signing] extra)

    return signing


def version() -> str:
    from importlib.metadata import version as dist_version

    return dist_version("a2a-sdk")


def canonicalize(card: Dict[str, Any]) -> str:
    """a2a-python's canonical text of a card as received."""
    from a2a.client.card_resolver import parse_agent_card

    text: str = _sdk()._canonicalize_agent_card(parse_agent_card(json.loads(json.dumps(card))))
    return text


def sign(card: Dict[str, Any], private_jwk: Dict[str, Any], protected: Dict[str, Any], *, served: bool = True) -> Dict[str, Any]:
    """The card signed by a2a-python, as its server serves it (or as ``MessageToDict`` when not ``served``)."""
    from a2a.client.card_resolver import parse_agent_card
    from a2a.server.request_handlers.response_helpers import agent_card_to_dict
    from google.protobuf.json_format import MessageToDict
    from jwt import PyJWK

    signing = _sdk()
    signer = signing.create_agent_card_signer(PyJWK(private_jwk, algorithm=protected["alg"]), protected)
    signed = signer(parse_agent_card(json.loads(json.dumps(card))))
    out: Dict[str, Any] = agent_card_to_dict(signed) if served else MessageToDict(signed)
    return out


def verify(card: Dict[str, Any], jwks: Dict[str, Any], algorithms: Any = ("EdDSA", "ES256", "RS256", "PS256")) -> None:
    """a2a-python's verdict on a received card: returns, or raises its refusal."""
    from a2a.client.card_resolver import parse_agent_card
    from jwt import PyJWK
    from jwt.exceptions import PyJWKError

    by_kid = {k["kid"]: k for k in jwks["keys"]}

    def key_provider(kid: Any, jku: Any) -> Any:
        if kid not in by_kid:  # the SDK skips a signature only on a PyJWT error
            raise PyJWKError(f"unknown kid {kid!r}")
        return PyJWK(by_kid[kid])

    verifier = _sdk().create_signature_verifier(key_provider, list(algorithms))
    verifier(parse_agent_card(json.loads(json.dumps(card))))

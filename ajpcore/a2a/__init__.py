"""A2A Agent Card signatures (A2A v1.0 §8.4): JWS over RFC 8785, strict, keys the verifier chooses.

- ``sign_card(card, private_key, *, kid, alg, jku=None, profile=None)``: the card with one
  more ``AgentCardSignature`` (protected header ``{"alg", "kid", "typ": "JOSE"[, "jku"]}``).
- ``verify_card(card, keys, *, algorithms=None, profile=None, allowed_jku=None)`` ->
  ``VerifiedCard`` (``.kid``, ``.alg``, ``.profile``, ``.unsigned_members``, ``.signatures``,
  ``.to_dict()`` of the covered members only).
- ``KeySet.from_jwks(jwks)``: the public keys the caller trusts (OKP Ed25519, EC P-256,
  RSA >= 2048 bits), selected by ``kid``; ``jwk_from_key`` writes one.
- ``payload(card, profile)``: the bytes a signature covers under a named profile
  (``served``, ``spec``, ``sdk``; ``PROFILES``).

``ajpcore.a2a.sdk`` (imported on its own; a2a-sdk is no dependency): ``CardSigner`` and
``CardVerifier`` for a2a-sdk 1.3's card hooks.

Algorithms: ``EdDSA``, ``ES256``, ``RS256``, ``PS256`` (``ALGORITHMS``); ``none`` and HMAC
are refused.  Offline: nothing here fetches a ``jku``.  docs/a2a.md has the rules, the
profiles and every ambiguity of §8.4.1 with the card that shows it.
"""

from ._card import SignatureReport, VerifiedCard, sign_card, verify_card
from ._jwk import KeySet, TrustedKey, jwk_from_key
from ._jws import ALGORITHMS
from ._profiles import DEFAULT_PROFILES, PROFILES, payload

__all__ = [
    "ALGORITHMS",
    "PROFILES",
    "DEFAULT_PROFILES",
    "KeySet",
    "TrustedKey",
    "SignatureReport",
    "VerifiedCard",
    "jwk_from_key",
    "payload",
    "sign_card",
    "verify_card",
]

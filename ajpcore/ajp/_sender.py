"""Sender identity, offline: an agent's offer tied to the key in its own Provenance declaration.

The AJP reference SDK 0.3 establishes an agent sender's key before it checks an
offer's signature (its declaration key resolver); ``verify_sender`` runs the
same flow on the declaration document the caller fetched from
``from.declaration_url``, and ``receive_offer(..., declaration=...)`` runs it
inside the receive path.  Every refusal is a ``SenderIdentityError`` (HTTP 403)
whose ``.code`` is the SDK's code for that failure (see ``verify_sender``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Optional, Sequence, Tuple, Union

from .. import _core
from ..errors import AjpError, DecodeError, SenderIdentityError
from ..keys import Ed25519PublicKey
from ..provenance import declaration_digest, verify_declaration
from ..provenance.pins import KeyPins
from ._messages import JobOffer

__all__ = ["SenderIdentity", "verify_sender", "DELEGATION_CAPABILITY"]

DELEGATION_CAPABILITY = "delegate:agents"
"""The capability the AJP specification requires of an agent that hires another agent
(``require_capabilities=(DELEGATION_CAPABILITY,)``)."""


@dataclass(frozen=True)
class SenderIdentity:
    """Who sent an offer, established offline from its verified declaration.

    ``provenance_id``: the sender's id (equal to ``from.provenance_id`` and the
    declaration's own id).  ``public_key``/``fingerprint``: the key the offer
    must be signed with, taken from the declaration.  ``declaration_digest``:
    ``sha256:`` + hex of the declaration's signing payload (which state of the
    declaration was checked).  ``coverage``: ``"declaration"`` (spec 0.2+: every
    field signed) or ``"identity"`` (0.1: only id and key signed, so
    ``capabilities`` and ``constraints`` are the document's unsigned claims).
    ``capabilities``/``constraints``: the declaration's lists (strings only).
    ``retrieved_from``: where the declaration was fetched from.
    """

    provenance_id: str
    public_key: Ed25519PublicKey
    fingerprint: str
    declaration_digest: str
    coverage: str
    capabilities: Tuple[str, ...]
    constraints: Tuple[str, ...]
    retrieved_from: str


def _strings(value: Any) -> Tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def verify_sender(
    offer: Any,
    declaration: Any,
    *,
    retrieved_from: Any,
    pins: Optional[KeyPins] = None,
    require_capabilities: Union[str, Sequence[str]] = (),
    backend: Optional[str] = None,
) -> SenderIdentity:
    """Establish an agent sender's key from the declaration the caller fetched.

    ``offer``: a ``JobOffer`` (or its JSON object).  ``declaration``: the
    document as fetched (bytes or str, decoded strictly) or already decoded.
    ``retrieved_from``: the URL it was fetched from, which must be the offer's
    ``from.declaration_url``.  ``pins``: a ``KeyPins`` store (first use pins,
    another key later is ``KEY_ROTATED``).  ``require_capabilities``: capability
    strings the declaration must list under a signature that covers them
    (``DELEGATION_CAPABILITY`` is the AJP specification's rule for agents
    hiring agents).

    The reference SDK 0.3's flow, each failure raising ``SenderIdentityError``
    (403) with its code:

    - ``SENDER_IDENTITY_FAILED``: the sender is human (humans are authenticated
      by the HMAC signature, ``secret=``);
    - ``NO_DECLARATION_URL``: the offer has no ``from.declaration_url``;
    - ``DECLARATION_LOCATION_MISMATCH``: ``retrieved_from`` is not that URL, or
      the declaration's location check is not ``match``;
    - ``DECLARATION_UNPARSEABLE``: the document is not strict JSON;
    - ``NO_PUBLIC_KEY``: the declaration has no ``identity.public_key``;
    - ``DECLARATION_INVALID``: its signature does not verify (or it has none);
    - ``DECLARATION_ID_MISMATCH``: its ``provenance_id`` is not ``from.provenance_id``;
    - ``KEY_ROTATED`` (``KeyRotated``): ``pins`` holds another key for that id;
    - ``CAPABILITY_NOT_DECLARED`` (ajpcore's code): a required capability is
      missing, or the signature (spec 0.1) does not cover capabilities.

    Raises ``ValidationError`` when ``offer`` is a JSON object that is not a
    well-formed JobOffer, ``KeyUsageError`` for an unknown ``backend``.
    """
    if not isinstance(offer, JobOffer):
        offer = JobOffer.from_dict(offer)
    sender = offer.sender
    if sender.type == "human":
        raise SenderIdentityError(
            "a human sender is authenticated by its HMAC signature (secret=), not by a Provenance declaration"
        )
    provenance_id = sender.provenance_id
    declaration_url = sender.declaration_url
    if not declaration_url:
        raise SenderIdentityError(
            "sender did not provide from.declaration_url, so its key cannot be established offline",
            "NO_DECLARATION_URL",
        )
    if retrieved_from != declaration_url:
        raise SenderIdentityError(
            "the declaration was not retrieved from the sender's from.declaration_url",
            "DECLARATION_LOCATION_MISMATCH",
        )
    if isinstance(declaration, (bytes, bytearray, memoryview, str)):
        try:
            declaration = _core.impl.decode(declaration)
        except DecodeError as exc:
            raise SenderIdentityError(f"sender declaration is not strict JSON: {exc}", "DECLARATION_UNPARSEABLE") from None
    result = verify_declaration(declaration, retrieved_from, backend=backend)
    if result.public_key is None:
        raise SenderIdentityError(
            f"sender declaration publishes no key: {result.reason}", "NO_PUBLIC_KEY"
        )
    if not result.valid:
        raise SenderIdentityError(f"sender declaration did not verify: {result.reason}", "DECLARATION_INVALID")
    if result.location != "match":
        raise SenderIdentityError(
            "sender declaration was not served from the location its provenance id names",
            "DECLARATION_LOCATION_MISMATCH",
        )
    if result.provenance_id != provenance_id:
        raise SenderIdentityError(
            f"sender declaration is for `{result.provenance_id}`, not `{provenance_id}`", "DECLARATION_ID_MISMATCH"
        )
    assert isinstance(declaration, dict) and result.fingerprint is not None and provenance_id is not None
    key = Ed25519PublicKey.from_string(result.public_key)  # verify_declaration parsed it already
    capabilities = _strings(declaration.get("capabilities"))
    wanted = (require_capabilities,) if isinstance(require_capabilities, str) else tuple(require_capabilities)
    for capability in wanted:
        if result.coverage != "declaration":
            raise SenderIdentityError(
                f"capability `{capability}` cannot be checked: a spec 0.1 signature does not cover capabilities",
                "CAPABILITY_NOT_DECLARED",
            )
        if capability not in capabilities:
            raise SenderIdentityError(f"sender does not declare capability `{capability}`", "CAPABILITY_NOT_DECLARED")
    if pins is not None:
        check: Any = pins.check  # Any: an asyncio pin store passed here by mistake returns a coroutine
        outcome = check(provenance_id, result.fingerprint, key)
        if outcome is not None:  # nothing was checked: never an acceptance
            getattr(outcome, "close", lambda: None)()
            raise TypeError("`pins` is an asyncio store (its methods are coroutines): await it in an async receiver")
    try:
        digest = declaration_digest(declaration)
    except AjpError as exc:  # only a 0.1 declaration (whose signature never canonicalises it) gets here
        raise SenderIdentityError(f"sender declaration cannot be canonicalised: {exc}", "DECLARATION_INVALID") from None
    return SenderIdentity(
        provenance_id=provenance_id,
        public_key=key,
        fingerprint=result.fingerprint,
        declaration_digest=digest,
        coverage=str(result.coverage),
        capabilities=capabilities,
        constraints=_strings(declaration.get("constraints")),
        retrieved_from=retrieved_from,
    )

"""Provenance declarations (PROVENANCE.yml / ``.well-known/provenance.json``), verified offline.

A declaration is the parsed document (a dict).  Spec 0.2 (and 0.3, see the
package docstring) sign ``"provenance-declaration-v1:" + canonical JSON`` of the
whole declaration with ``identity.signature`` removed; spec 0.1 signed only
``"<provenance_id>:<public_key>"``.  ``verify_declaration`` returns the
reference verifier's result with snake_case names; the package docstring
lists, rule by rule, which specification and reference version each follows
and where ajpcore is stricter.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Dict, Optional

from .. import _core
from ..errors import AjpError, KeyFormatError, SignatureError, ValidationError, WeakKey
from ..keys import Ed25519PrivateKey, Ed25519PublicKey, _strict_b64decode
from ._payload import sign_payload
from .location import _is_canonical, canonical_provenance_id, check_location

__all__ = [
    "DECLARATION_DOMAIN",
    "SIGNATURE_COVERAGE",
    "DeclarationVerification",
    "declaration_signing_payload",
    "declaration_digest",
    "verify_declaration",
    "sign_declaration",
]

DECLARATION_DOMAIN = b"provenance-declaration-v1:"
"""Domain-separation prefix of a spec 0.2+ declaration signature."""

SIGNATURE_COVERAGE: Dict[str, str] = {"0.1": "identity", "0.2": "declaration", "0.3": "declaration"}
"""What a signature covers per spec version: only ``provenance_id:public_key`` (0.1) or every field.

``"0.3"`` is known since provenance-protocol/provenance-protocol commit 3b3f3b4;
the npm package 0.3.0 knows only 0.1 and 0.2 (it answers "not known to this
verifier" for a 0.3 declaration that ajpcore verifies)."""

_ALGORITHM = "ed25519"


@dataclass(frozen=True)
class DeclarationVerification:
    """The outcome of ``verify_declaration`` (the reference verifier's result, snake_case).

    ``signed``: an ``identity.signature`` was present to check.  ``valid``: it
    verified against ``identity.public_key``.  ``reason``: why this is not a
    clean pass (None when it is).  ``fingerprint``: lowercase hex SHA-256 of
    the key's SPKI DER, to pin per ``provenance_id``.  ``location``:
    ``"match"``, ``"mismatch"`` or ``"unchecked"``.  ``coverage``:
    ``"declaration"`` (0.2+: every field), ``"identity"`` (0.1: constraints not
    protected) or None.  ``trustworthy``: valid signature AND location match.
    """

    signed: bool = False
    valid: bool = False
    reason: Optional[str] = None
    provenance_id: Optional[str] = None
    public_key: Optional[str] = None
    fingerprint: Optional[str] = None
    location: str = "unchecked"
    coverage: Optional[str] = None
    trustworthy: bool = False


def declaration_signing_payload(decl: Any) -> bytes:
    """The bytes a spec 0.2+ declaration signature covers.

    ``b"provenance-declaration-v1:" + canonicalize(decl without identity.signature)``
    (RFC 8785); ``public_key`` and ``algorithm`` stay covered.  ``decl`` is not
    mutated.  Raises ``ValidationError`` if ``decl`` is not a dict or its
    ``identity`` is present but not a dict, ``EncodeError`` for a value with no
    canonical JSON form.
    """
    if not isinstance(decl, dict):
        raise ValidationError([("$", "a declaration must be an object")])
    covered = dict(decl)
    if "identity" in decl:
        identity = decl["identity"]
        if not isinstance(identity, dict):
            raise ValidationError([("$.identity", "must be an object when present")])
        covered["identity"] = {k: v for k, v in identity.items() if k != "signature"}
    body: bytes = _core.impl.canonicalize(covered)
    return DECLARATION_DOMAIN + body


def declaration_digest(decl: Any) -> str:
    """``"sha256:" + lowercase hex SHA-256`` of ``declaration_signing_payload(decl)``.

    The same for two declarations that differ only in formatting, key order or
    signature; different after any change to any other field.  Raises as
    ``declaration_signing_payload``.
    """
    return "sha256:" + hashlib.sha256(declaration_signing_payload(decl)).hexdigest()


def _verify_signature(
    public_key: Ed25519PublicKey, signature: str, payload: bytes, backend: Optional[str]
) -> Optional[str]:
    """None if the base64 signature verifies, else the reference verifier's reason."""
    try:
        raw = _strict_b64decode(signature, 64, "Ed25519 signature")
    except KeyFormatError:
        return "identity.signature is malformed"
    try:
        public_key.verify(raw, payload, backend=backend)
    except SignatureError:
        return "Signature does not verify"
    return None


def verify_declaration(
    decl: Any, retrieved_from: Optional[str] = None, *, backend: Optional[str] = None
) -> DeclarationVerification:
    """Verify a parsed declaration offline: its signature, and where it was served from.

    ``retrieved_from``: the URL the declaration was fetched from (see
    ``check_location``).  ``backend``: the Ed25519 library (``None``/
    ``"cryptography"`` or ``"pynacl"``); the verdict is the same on both.  Never raises for a bad declaration: every refusal is
    a ``DeclarationVerification`` whose ``reason`` says why, with the
    reference verifier's wording.  A valid signature proves the declaration is
    unaltered since the key holder signed it, not who the holder is; only
    ``trustworthy`` (signature valid and location ``match``) ties it to the
    project its ``provenance_id`` names.
    """
    if not isinstance(decl, dict):
        return DeclarationVerification(reason="Declaration must be a parsed object")
    provenance_id = decl.get("provenance_id")
    provenance_id = provenance_id if isinstance(provenance_id, str) else None
    identity = decl.get("identity")
    identity = identity if isinstance(identity, dict) else None
    public_key = identity.get("public_key") if identity is not None else None
    public_key = public_key if isinstance(public_key, str) else None
    signature = identity.get("signature") if identity is not None else None
    signature = signature if isinstance(signature, str) else None
    location = check_location(provenance_id, retrieved_from) if retrieved_from else "unchecked"
    facts: Dict[str, Any] = {
        "provenance_id": provenance_id,
        "public_key": public_key,
        "location": location,
    }

    def outcome(reason: Optional[str], **more: Any) -> DeclarationVerification:
        return DeclarationVerification(reason=reason, **{**facts, **more})

    if identity is None:
        return outcome("No identity block")
    if not public_key:
        return outcome("identity.public_key is missing")
    algorithm = identity.get("algorithm")
    if algorithm is None:
        algorithm = _ALGORITHM
    if not isinstance(algorithm, str) or algorithm.lower() != _ALGORITHM:
        shown = algorithm if isinstance(algorithm, str) else _describe(algorithm)
        return outcome(f"Unsupported algorithm: {shown}")
    try:
        key = Ed25519PublicKey.from_string(public_key)
    except WeakKey as exc:
        return outcome(f"identity.public_key is refused by the strict Ed25519 policy: {exc}")
    except KeyFormatError:
        return outcome("identity.public_key is not a valid Ed25519 key")
    facts["fingerprint"] = key.fingerprint
    if not signature:
        return outcome("identity.signature is absent — key advertised, file not attested")
    facts["signed"] = True

    spec_version = decl.get("provenance")
    spec_version = spec_version if isinstance(spec_version, str) else "0.1"
    if provenance_id is None and spec_version == "0.1":
        return outcome("provenance_id is required to verify a 0.1 signature")
    coverage = SIGNATURE_COVERAGE.get(spec_version)
    if coverage is None:
        return outcome(
            f"Spec version {spec_version} is not known to this verifier — cannot check its signature"
        )
    facts["coverage"] = coverage
    try:
        if coverage == "declaration":
            payload = declaration_signing_payload(decl)
        else:
            payload = f"{provenance_id}:{public_key}".encode("utf-8")
    except AjpError as exc:
        return outcome(f"Declaration cannot be canonicalised: {exc}")
    except UnicodeEncodeError:
        return outcome("Declaration cannot be canonicalised: provenance_id has a lone surrogate")
    failure = _verify_signature(key, signature, payload, backend)
    if failure is not None:
        return outcome(failure)
    trustworthy = location == "match"
    return outcome(
        None if trustworthy else "Signature valid, but retrieval location was not confirmed" + _id_note(provenance_id),
        valid=True,
        trustworthy=trustworthy,
    )


def _id_note(provenance_id: Optional[str]) -> str:
    """Why the location could not be confirmed when the id itself is the reason."""
    if provenance_id is None or _is_canonical(provenance_id):
        return ""
    try:
        return f": provenance_id is not in canonical form (`{canonical_provenance_id(provenance_id)}`)"
    except AjpError:
        return ": provenance_id is not a provenance id"


def _describe(value: Any) -> str:
    try:
        encoded: bytes = _core.impl.canonicalize(value)
        return encoded.decode("utf-8")
    except AjpError:
        return type(value).__name__


def sign_declaration(decl: Any, private_key: Any) -> Dict[str, Any]:
    """A copy of ``decl`` whose ``identity.signature`` signs its spec 0.2+ payload.

    ``identity.public_key`` is set to the signing key's SPKI text and
    ``identity.algorithm`` to ``"ed25519"`` when absent; ``decl`` is not mutated.  ``private_key`` is an
    ``Ed25519PrivateKey`` or its base64 PKCS#8 text.  Raises ``ValidationError``
    for a non-object declaration or identity, ``KeyFormatError`` for a bad key,
    ``EncodeError`` for a value with no canonical JSON form.
    """
    if not isinstance(decl, dict):
        raise ValidationError([("$", "a declaration must be an object")])
    key = private_key if isinstance(private_key, Ed25519PrivateKey) else Ed25519PrivateKey.from_string(private_key)
    identity = decl.get("identity", {})
    if not isinstance(identity, dict):
        raise ValidationError([("$.identity", "must be an object when present")])
    signed = dict(decl)
    signed["identity"] = {k: v for k, v in identity.items() if k != "signature"}
    signed["identity"]["public_key"] = key.public_key.to_string()
    signed["identity"].setdefault("algorithm", _ALGORITHM)
    signed["identity"]["signature"] = sign_payload(key, declaration_signing_payload(signed))
    return signed

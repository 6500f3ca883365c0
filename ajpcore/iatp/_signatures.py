"""Manifest signatures, an ajpcore extension (IATP defines none)."""

from __future__ import annotations

import base64
from typing import Any, Dict, Mapping, Optional, Union

from ..errors import BadSignature, KeyFormatError, MalformedSignature, UnsupportedScheme
from ._manifest import CapabilityManifest


# ---------------------------------------------------------------------------
# Manifest signatures (ajpcore extension)
# ---------------------------------------------------------------------------

MANIFEST_SIGNATURE_CONTEXT = b"iatp-manifest-v1:"
"""Domain-separation prefix of the bytes a manifest signature covers."""

_ED25519_PREFIX = "ed25519:"
_UNSIGNED = object()


def _manifest_body(manifest: Union[CapabilityManifest, Mapping[str, Any]]) -> Dict[str, Any]:
    if isinstance(manifest, CapabilityManifest):
        return manifest._raw  # read only: signing_bytes copies what it drops the signature from
    if isinstance(manifest, Mapping):
        return CapabilityManifest.from_dict(manifest)._raw
    raise TypeError(f"Expected `CapabilityManifest` or a JSON object, got `{type(manifest).__name__}`")


def manifest_signing_bytes(manifest: Union[CapabilityManifest, Mapping[str, Any]]) -> bytes:
    """``b"iatp-manifest-v1:" + signing_bytes(manifest)``: the bytes a manifest signature covers.

    ``signing_bytes`` is RFC 8785 canonical JSON of the manifest without its
    top-level ``signature``; every other member, at every depth, extra members
    included, is covered.  A dict is validated first (``ValidationError``).
    """
    from ..signing import signing_bytes

    return MANIFEST_SIGNATURE_CONTEXT + signing_bytes(_manifest_body(manifest))


def _parse_manifest_signature(value: Any) -> bytes:
    from ..signing import parse_signature

    if value is _UNSIGNED:
        raise MalformedSignature("The manifest has no `signature` - at `$.signature`")
    try:
        scheme, raw = parse_signature(value)
    except (MalformedSignature, UnsupportedScheme) as exc:
        raise type(exc)(f"{exc} - at `$.signature`") from None
    if scheme != "ed25519":
        raise UnsupportedScheme(f"Manifest signatures are `ed25519`, got `{scheme}` - at `$.signature`")
    return raw


def sign_manifest(manifest: Union[CapabilityManifest, Mapping[str, Any]], private_key: Any) -> CapabilityManifest:
    """Sign a manifest with ``private_key`` (``ajpcore.keys.Ed25519PrivateKey``); return the signed copy.

    The signature is ``"ed25519:" + base64(Ed25519(manifest_signing_bytes(m)))``
    (standard alphabet, padded, 88 characters) in the top-level ``signature``
    member; an existing signature is replaced.  ``identity.verification_key``
    must name the same key (any accepted public-key form), so the result
    verifies; raises ``KeyFormatError`` when it is absent, unusable or another key.
    """
    from ..keys import Ed25519PublicKey

    typed = manifest if isinstance(manifest, CapabilityManifest) else CapabilityManifest.from_dict(manifest)
    claimed = typed.identity.verification_key
    public = private_key.public_key
    if claimed is None:
        raise KeyFormatError(
            "Manifest names no `identity.verification_key`; set it to "
            f"`{public.to_string(form='ed25519')}` - at `$.identity.verification_key`"
        )
    try:
        claimed_key = Ed25519PublicKey.from_string(claimed)
    except KeyFormatError as exc:
        raise type(exc)(
            f"`identity.verification_key` is not a usable Ed25519 key: {exc} - at `$.identity.verification_key`"
        ) from None
    if claimed_key != public:
        raise KeyFormatError("Private key does not match `identity.verification_key` - at `$.identity.verification_key`")
    raw = private_key.sign(manifest_signing_bytes(typed))
    return typed.with_signature(_ED25519_PREFIX + base64.b64encode(raw).decode("ascii"))


def verify_manifest(
    manifest: Union[CapabilityManifest, Mapping[str, Any]],
    *,
    public_key: Any = None,
    backend: Optional[str] = None,
) -> None:
    """Check a manifest's ``signature`` against its own ``identity.verification_key``.

    The claimed key is parsed only now, with the strict Ed25519 policy; a key
    that is absent or unusable (malformed, non-canonical, small order) refuses
    the signature with ``BadSignature`` naming why.  A valid signature proves
    only that the holder of the claimed key wrote the manifest; to bind the
    manifest to a key you already trust, pass it as ``public_key`` (an
    ``Ed25519PublicKey`` or any text form it reads): the claimed key must then
    be that key.  ``backend``: ``None`` / ``"cryptography"`` or ``"pynacl"``
    (same verdict).  A dict is validated first (``ValidationError``).

    Returns ``None`` when the signature holds; raises ``MalformedSignature``
    (missing, or not ``ed25519:`` + 88 canonical base64 characters),
    ``UnsupportedScheme`` (another scheme) or ``BadSignature``; a ``public_key``
    that is not a usable key raises ``KeyFormatError``.
    """
    from ..keys import Ed25519PublicKey

    typed = manifest if isinstance(manifest, CapabilityManifest) else CapabilityManifest.from_dict(manifest)
    raw = _parse_manifest_signature(typed.extra.get("signature", _UNSIGNED))
    pinned = None
    if public_key is not None:
        pinned = public_key if isinstance(public_key, Ed25519PublicKey) else Ed25519PublicKey.from_string(public_key)
    claimed = typed.identity.verification_key
    where = " - at `$.identity.verification_key`"
    if claimed is None:
        raise BadSignature("The manifest names no key to check its signature with" + where)
    try:
        key = Ed25519PublicKey.from_string(claimed)
    except KeyFormatError as exc:
        raise BadSignature(f"`identity.verification_key` is not a usable Ed25519 key: {exc}{where}") from exc
    if pinned is not None and pinned != key:
        raise BadSignature("`identity.verification_key` is not the expected public key" + where)
    key.verify(raw, manifest_signing_bytes(typed), backend=backend)

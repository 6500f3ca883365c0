"""Provenance declarations (PROVENANCE.yml / ``.well-known/provenance.json``), verified offline.

A declaration is the parsed document (a dict).  Spec 0.2 and 0.3 sign
``"provenance-declaration-v1:" + canonical JSON`` of the whole declaration
with ``identity.signature`` removed; spec 0.1 signed only
``"<provenance_id>:<public_key>"``.  Keys are base64 SPKI DER Ed25519 keys,
signatures base64 of the raw 64 bytes.

``verify_declaration`` returns what the reference verifier (npm
``provenance-protocol``) returns, with snake_case names, and is stricter in
three documented places, all of which can only turn a pass into a refusal:

- keys and signatures are decoded strictly (``Ed25519PublicKey.from_string``:
  canonical base64, no whitespace, exact DER prefix; signatures exactly 88
  canonical base64 characters) and the strict Ed25519 policy applies (no
  small-order or non-canonical keys, no small-order R, S < L), where the
  reference strips whitespace and accepts whatever WebCrypto accepts;
- the location check compares structurally, the way the reference does since
  its October 2026 audit (the owner/name of an id must sit exactly where the
  platform puts it in a URL; a domain id's path must start the URL path; a
  port other than 443 is a mismatch), never "anywhere in the path";
- a location that is not ``https://`` is ``unchecked`` (the specification
  says a declaration MUST be served over HTTPS), as is one a WHATWG URL parser
  (what actually fetched it) could read differently from ``urlsplit``:
  whitespace or control characters, a backslash, non-ASCII, userinfo
  (``user@host``), a host that is not plain ``[a-z0-9.-]``, or ``.``/``..``
  path segments;
- a public key that is not a strictly encoded, policy-abiding Ed25519 key is
  refused before the signature is looked at (``fingerprint`` None, reason
  ``identity.public_key is not a valid Ed25519 key``, or ``... is refused by
  the strict Ed25519 policy: ...`` for a weak key), where the reference
  fingerprints any base64 and fails later with "identity.signature is
  malformed".
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Tuple
from urllib.parse import unquote, urlsplit

from . import _core
from .errors import AjpError, KeyFormatError, SignatureError, ValidationError, WeakKey
from .keys import Ed25519PublicKey, _strict_b64decode

__all__ = [
    "DECLARATION_DOMAIN",
    "SIGNATURE_COVERAGE",
    "DeclarationVerification",
    "declaration_signing_payload",
    "declaration_digest",
    "parse_provenance_id",
    "check_location",
    "verify_declaration",
]

DECLARATION_DOMAIN = b"provenance-declaration-v1:"
"""Domain-separation prefix of a spec 0.2+ declaration signature."""

SIGNATURE_COVERAGE: Dict[str, str] = {"0.1": "identity", "0.2": "declaration", "0.3": "declaration"}
"""What a signature covers per spec version: only ``provenance_id:public_key`` (0.1) or every field."""

_ALGORITHM = "ed25519"
_PROVENANCE_ID = re.compile(r"provenance:([a-z0-9-]+):(.+)", re.IGNORECASE | re.DOTALL)
# Characters a WHATWG URL parser (what fetches the file) reads differently from urlsplit:
# whitespace and controls are stripped, "\\" is a path separator, non-ASCII hosts are IDNA-mapped.
_AMBIGUOUS_URL_CHARS = re.compile(r"[\x00-\x20\x7f\\]|[^\x00-\x7f]")
_PLAIN_HOST = re.compile(r"[a-z0-9.-]+")


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
    return DECLARATION_DOMAIN + _core.impl.canonicalize(covered)


def declaration_digest(decl: Any) -> str:
    """``"sha256:" + lowercase hex SHA-256`` of ``declaration_signing_payload(decl)``.

    The same for two declarations that differ only in formatting, key order or
    signature; different after any change to any other field.  Raises as
    ``declaration_signing_payload``.
    """
    return "sha256:" + hashlib.sha256(declaration_signing_payload(decl)).hexdigest()


def parse_provenance_id(provenance_id: Any) -> Optional[Tuple[str, str]]:
    """``(platform, path)`` of ``provenance:<platform>:<path>`` (platform lowercased), else None.

    No trimming: an id with surrounding whitespace is not an id.
    """
    if not isinstance(provenance_id, str):
        return None
    match = _PROVENANCE_ID.fullmatch(provenance_id)
    if match is None:
        return None
    return match.group(1).lower(), match.group(2)


def _path_segments(path: str) -> List[str]:
    return [unquote(s).lower() for s in path.split("/") if s]


def _github_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    # github.com/<owner>/<repo>/..., raw.githubusercontent.com/<owner>/<repo>/<ref>/...,
    # api.github.com/repos/<owner>/<repo>/...
    if host in ("github.com", "www.github.com", "raw.githubusercontent.com"):
        return segs[:2]
    if host == "api.github.com":
        return segs[1:3] if segs[:1] == ["repos"] else None
    return None


def _huggingface_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host not in ("huggingface.co", "www.huggingface.co"):
        return None
    if segs[:1] and segs[0] in ("spaces", "datasets", "models"):
        return segs[1:3]
    return segs[:2]


def _npm_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host in ("npmjs.com", "www.npmjs.com"):
        if segs[:1] != ["package"]:
            return None
        segs = segs[1:]
    elif host != "registry.npmjs.org":
        return None
    if segs and segs[0].startswith("@"):  # scoped: @scope/name, or one %2f-encoded segment
        return segs[0].split("/") if "/" in segs[0] else segs[:2]
    return segs[:1]


def _pypi_identity(host: str, segs: List[str]) -> Optional[List[str]]:
    if host != "pypi.org":
        return None
    return segs[1:2] if segs[:1] == ["project"] else None


_PLATFORM_IDENTITY = {
    "github": _github_identity,
    "huggingface": _huggingface_identity,
    "npm": _npm_identity,
    "pypi": _pypi_identity,
}
# The hosts each platform serves declarations from; any other host is "unchecked".
_HOST_PLATFORM = {
    "github.com": "github",
    "www.github.com": "github",
    "raw.githubusercontent.com": "github",
    "api.github.com": "github",
    "huggingface.co": "huggingface",
    "www.huggingface.co": "huggingface",
    "npmjs.com": "npm",
    "www.npmjs.com": "npm",
    "registry.npmjs.org": "npm",
    "pypi.org": "pypi",
}


def check_location(provenance_id: Any, retrieved_from: Any) -> str:
    """Does the URL a declaration was fetched from agree with its ``provenance_id``?

    Returns ``"match"``, ``"mismatch"`` or ``"unchecked"`` (the id or the URL
    cannot be interpreted unambiguously, the URL is not https, or the host is
    not one the id's platform publishes on; never reported as agreement).

    - ``provenance:domain:<host>[/<path>]``: the URL host equals ``<host>``
      exactly (case-insensitive; a subdomain or parent is a mismatch), the port
      is absent or 443, and the URL path starts with ``<path>``'s segments.
    - ``provenance:github:<owner>/<repo>``: served from github.com,
      raw.githubusercontent.com or api.github.com/repos with ``<owner>/<repo>``
      as the first two path segments (another platform's host is a mismatch;
      an unknown host is unchecked).  Likewise huggingface, npm and pypi.
    """
    parsed = parse_provenance_id(provenance_id)
    if parsed is None or not isinstance(retrieved_from, str):
        return "unchecked"
    platform, id_path = parsed
    if _AMBIGUOUS_URL_CHARS.search(retrieved_from):
        return "unchecked"
    try:
        url = urlsplit(retrieved_from)
        port = url.port
    except ValueError:
        return "unchecked"
    host = (url.hostname or "").lower()
    if url.scheme.lower() != "https" or not _PLAIN_HOST.fullmatch(host) or "@" in url.netloc:
        return "unchecked"
    port_ok = port is None or port == 443
    segs = _path_segments(url.path)
    if "." in segs or ".." in segs:
        return "unchecked"  # a fetcher resolves dot segments (RFC 3986 §5.2.4); a path check must not guess

    if platform == "domain":
        declared = [s for s in id_path.split("/") if s]
        if not declared:
            return "unchecked"
        if host != declared[0].lower() or not port_ok:
            return "mismatch"
        want = [s.lower() for s in declared[1:]]
        return "match" if segs[: len(want)] == want else "mismatch"

    url_platform = _HOST_PLATFORM.get(host)
    if url_platform is None:
        return "unchecked"
    if url_platform != platform or not port_ok:
        return "mismatch"
    expected = [s for s in id_path.lower().split("/") if s]
    if not expected:
        return "unchecked"
    got = _PLATFORM_IDENTITY[url_platform](host, segs)
    return "match" if got == expected else "mismatch"


def _verify_signature(public_key: Ed25519PublicKey, signature: str, payload: bytes) -> Optional[str]:
    """None if the base64 signature verifies, else the reference verifier's reason."""
    try:
        raw = _strict_b64decode(signature, 64, "Ed25519 signature")
    except KeyFormatError:
        return "identity.signature is malformed"
    try:
        public_key.verify(raw, payload)
    except SignatureError:
        return "Signature does not verify"
    return None


def verify_declaration(decl: Any, retrieved_from: Optional[str] = None) -> DeclarationVerification:
    """Verify a parsed declaration offline: its signature, and where it was served from.

    ``retrieved_from``: the URL the declaration was fetched from (see
    ``check_location``).  Never raises for a bad declaration: every refusal is
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
    failure = _verify_signature(key, signature, payload)
    if failure is not None:
        return outcome(failure)
    trustworthy = location == "match"
    return outcome(
        None if trustworthy else "Signature valid, but retrieval location was not confirmed",
        valid=True,
        trustworthy=trustworthy,
    )


def _describe(value: Any) -> str:
    try:
        return _core.impl.canonicalize(value).decode("utf-8")
    except AjpError:
        return type(value).__name__

"""Provenance Protocol payloads, verified offline: declarations, attestations, notices,
challenges, revocations, and key pins.

Every signed payload is domain-separated (``provenance-<purpose>-v1:``) and,
for documents, covers the RFC 8785 canonical JSON of the document without its
signature.  ajpcore judges bytes the caller fetched; nothing here reads the
network or the clock (``now`` is always passed in).

Which specification each rule follows
--------------------------------------
"SPEC" is the Provenance specification "Declarations 0.1 and 0.2 ·
Attestations 0.1 · Notices 0.1" (ilucky21c/provenance-protocol, SPEC.md at
commit 06ec76c); "npm 0.3.0" is the published reference package
``provenance-protocol`` 0.3.0, whose declaration vectors this package passes.

- Declaration signatures (``verify_declaration``): the SPEC's 0.1 rule
  (``<provenance_id>:<public_key>``) and 0.2 rule (``provenance-declaration-v1:`` +
  canonical JSON).  Version ``"0.3"`` is verified with the 0.2 rule, as the
  reference verifier does since provenance-protocol/provenance-protocol commit
  3b3f3b4; npm 0.3.0 calls a 0.3 declaration "not known to this verifier", so
  here a refusal of npm 0.3.0 can be a pass.  Any other version: "not known".
- Retrieval location (``check_location``): the structural rules of the
  reference verifier at provenance-protocol/provenance-protocol commit e921359
  (owner/name exactly where each platform puts it; path segments
  percent-decoded before comparing; a port other than 443 is a mismatch) and
  the SPEC's ``provenance:domain:<host>[/<path>]`` ids (exact host; the URL
  path starts with the id's path).  npm 0.3.0 knows no ``domain:`` ids
  (``unchecked`` there, ``match`` here when served from home), compares raw
  (not percent-decoded) segments, and accepts the id's segments anywhere in the
  path: so a URL can be ``match`` here and ``mismatch``/``unchecked`` there,
  and the reverse (``github.com/x/y/owner/name`` matched anywhere by npm 0.3.0
  is a ``mismatch`` here).
- Identity spelling (``canonical_provenance_id``): ajpcore's own rule, which no
  reference version has.  ``check_location`` answers ``match`` only for an id in its
  one canonical spelling (lowercase prefix and platform, no empty path segments, the
  path folded only as its platform folds names: host for ``domain``, owner/name for
  ``github`` and ``huggingface``, nothing for ``npm``, PEP 503 for ``pypi``), never for
  an IP literal or localhost host, and compares ``domain`` paths case-sensitively;
  the references fold every path segment's case.  ``check_declaration_url`` is the
  gate before a fetch.  See docs/provenance-identity.md.
- Stricter than every reference version, turning only passes into refusals:
  keys and signatures are decoded strictly (canonical base64, no whitespace,
  exact DER prefix, 88-character signatures) and the strict Ed25519 policy
  applies (no small-order or non-canonical keys, no small-order R, S < L),
  where the references strip whitespace and accept what WebCrypto accepts; a
  location that is not ``https://``, or that a WHATWG URL parser could read
  differently from ``urlsplit`` (whitespace, controls, backslash, non-ASCII,
  userinfo, a host outside ``[a-z0-9.-]``, ``.``/``..`` segments), is
  ``unchecked``; a public key that is not a valid key is refused before the
  signature is looked at.
- Attestations and withdrawals (``verify_attestation``, ``verify_withdrawal``):
  the SPEC's Attestations 0.1 and its normative vectors
  ``test-vectors/attestations-0.1.json`` (commit 53f2b47), all of which pass;
  timestamps are strict RFC 3339 (``ajpcore.timestamps``), 5 minutes of clock
  skew apply to a future ``issued_at``, the signature is checked before the
  dates.  Unknown format versions are ``unchecked``.
- Notices (``verify_notice``): the SPEC's Notices 0.1 and its normative vectors
  ``test-vectors/notices-0.1.json`` (commit 8d6dbcc), all of which pass; a key
  rotation counts only when signed by the old key named in ``key_fingerprint``.
  Notice format 0.2 (provenance-protocol/provenance-protocol, schema
  ``notice-0.2.json``) is not known here: ``unchecked``.
- Challenges and revocations: the SPEC's domain-separated forms
  (``provenance-challenge-v1:<id>:<nonce>``, ``provenance-revocation-v1:<id>``);
  the 0.1 forms are deliberately not offered.
- Key pins (``MemoryKeyPins``, ``FileKeyPins``, ``SQLiteKeyPins``, ``RedisKeyPins``): the SPEC's "Continuity" and
  the AJP reference SDK 0.3's ``knownKeys`` (a different key is
  ``KEY_ROTATED``), plus rotation by notice, which the SDK does not have.
"""

from .attestations import (
    ATTESTATION_DOMAIN,
    ATTESTATION_VERSIONS,
    CLOCK_SKEW_SECONDS,
    WITHDRAWAL_DOMAIN,
    AttestationVerification,
    WithdrawalVerification,
    attestation_signing_payload,
    sign_attestation,
    sign_withdrawal,
    verify_attestation,
    verify_withdrawal,
    withdrawal_signing_payload,
)
from .challenges import (
    CHALLENGE_DOMAIN,
    REVOCATION_DOMAIN,
    SignedPayloadVerification,
    challenge_payload,
    new_nonce,
    revocation_payload,
    sign_challenge,
    sign_revocation,
    verify_challenge,
    verify_revocation,
)
from .declarations import (
    DECLARATION_DOMAIN,
    SIGNATURE_COVERAGE,
    DeclarationVerification,
    declaration_digest,
    declaration_signing_payload,
    sign_declaration,
    verify_declaration,
)
from .location import (
    canonical_provenance_id,
    check_declaration_url,
    check_location,
    parse_provenance_id,
    require_canonical_provenance_id,
)
from .notices import (
    NOTICE_DOMAIN,
    NOTICE_EVENTS,
    NOTICE_VERSIONS,
    NoticeVerification,
    notice_signing_payload,
    sign_notice,
    verify_notice,
)
from .pins import AsyncKeyPins, KeyPins, MemoryKeyPins
from ._pins_file import PIN_FILE_VERSION, FileKeyPins
from ._pins_sqlite import AsyncSQLiteKeyPins, SQLiteKeyPins
from ._pins_redis import AsyncRedisKeyPins, RedisKeyPins

__all__ = [
    # declarations
    "DECLARATION_DOMAIN",
    "SIGNATURE_COVERAGE",
    "DeclarationVerification",
    "declaration_signing_payload",
    "declaration_digest",
    "sign_declaration",
    "verify_declaration",
    "parse_provenance_id",
    "check_location",
    "canonical_provenance_id",
    "require_canonical_provenance_id",
    "check_declaration_url",
    # attestations and withdrawals
    "ATTESTATION_DOMAIN",
    "WITHDRAWAL_DOMAIN",
    "ATTESTATION_VERSIONS",
    "CLOCK_SKEW_SECONDS",
    "AttestationVerification",
    "WithdrawalVerification",
    "attestation_signing_payload",
    "sign_attestation",
    "verify_attestation",
    "withdrawal_signing_payload",
    "sign_withdrawal",
    "verify_withdrawal",
    # notices
    "NOTICE_DOMAIN",
    "NOTICE_VERSIONS",
    "NOTICE_EVENTS",
    "NoticeVerification",
    "notice_signing_payload",
    "sign_notice",
    "verify_notice",
    # challenges and revocations
    "CHALLENGE_DOMAIN",
    "REVOCATION_DOMAIN",
    "SignedPayloadVerification",
    "new_nonce",
    "challenge_payload",
    "sign_challenge",
    "verify_challenge",
    "revocation_payload",
    "sign_revocation",
    "verify_revocation",
    # key pins
    "KeyPins",
    "AsyncKeyPins",
    "MemoryKeyPins",
    "FileKeyPins",
    "SQLiteKeyPins",
    "AsyncSQLiteKeyPins",
    "RedisKeyPins",
    "AsyncRedisKeyPins",
    "PIN_FILE_VERSION",
]

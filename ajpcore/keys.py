"""Ed25519 keys: strict text forms, fingerprints, and verification whose verdict
does not depend on the library underneath.

Text forms (one spelling per key, anything else is refused):

- private key: base64 (standard alphabet, padded, canonical) of the 48-byte
  PKCS#8 DER ``302e020100300506032b657004220420 || seed`` (Provenance's form);
- public key: base64 of the 44-byte SPKI DER ``302a300506032b6570032100 || key``
  (Provenance's form), or ``"ed25519:"`` followed by the raw 32 bytes as
  canonical padded base64 (44 chars) or as *lowercase* hex (64 chars), the IATP
  form.  Uppercase hex is refused: a key has one spelling, so key strings can be
  compared, cached and pinned as text.

A public key must pass the strict policy of the core's byte checks
(``ed25519_check_public_key``: canonical y < p, not of small order), else
``WeakKey``; every other problem is ``KeyFormatError``.  ``verify`` runs the
signature byte checks (``ed25519_check_signature``: canonical R, R not of small
order, S < L) in front of libsodium (``pynacl``, the default: about twice as fast)
or OpenSSL (``cryptography``), so both give the same verdict; the equation is the
cofactorless one both libraries use.  ``DEFAULT_BACKEND`` names the library a
``backend=None`` verify uses (``"pynacl"``, or ``"cryptography"`` where PyNaCl is
missing); through libsodium the checks and the call are one core call
(``ed25519_sodium_verify``), which holds the GIL only for the checks.  A public key whose y has no x on the curve passes the
byte checks (deciding that needs point arithmetic) but verifies nothing, on
both backends.

Parsed keys are cached (bounded LRU) by their text or bytes, with their loaded
library key objects, so a key string seen on every request is parsed once.
"""

from __future__ import annotations

import base64
import binascii
import functools
import hashlib
import hmac
import re
from typing import Any, Optional

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric import ed25519 as _ossl

from . import _core
from .errors import BadSignature, KeyFormatError, KeyUsageError, WeakKey

__all__ = [
    "Ed25519PrivateKey",
    "Ed25519PublicKey",
    "SPKI_PREFIX",
    "PKCS8_PREFIX",
    "KEY_CACHE_SIZE",
    "DEFAULT_BACKEND",
    "clear_key_cache",
]

SPKI_PREFIX = bytes.fromhex("302a300506032b6570032100")
"""DER of SubjectPublicKeyInfo{id-Ed25519} up to the 32 key bytes (RFC 8410 §4)."""
PKCS8_PREFIX = bytes.fromhex("302e020100300506032b657004220420")
"""DER of OneAsymmetricKey v1{id-Ed25519, OCTET STRING{OCTET STRING}} up to the 32-byte seed (RFC 8410 §7)."""
KEY_CACHE_SIZE = 1024
"""Entries kept by each key cache (public keys by text, by bytes; private keys by text, by seed)."""

_HAVE_SODIUM: bool
DEFAULT_BACKEND: str
try:  # libsodium through PyNaCl (a dependency): the faster Ed25519 verifier, so the default
    import nacl.bindings  # noqa: F401  (the core's ed25519_sodium_verify calls its libsodium)

    _HAVE_SODIUM, DEFAULT_BACKEND = True, "pynacl"
except ImportError:  # pragma: no cover - only where PyNaCl was removed by hand
    _HAVE_SODIUM, DEFAULT_BACKEND = False, "cryptography"
"""The Ed25519 library ``verify(..., backend=None)`` uses: ``"pynacl"`` when installed, else ``"cryptography"``."""

_B64_CHARS = re.compile(r"[A-Za-z0-9+/]+={0,2}")
_LOWER_HEX_64 = re.compile(r"[0-9a-f]{64}")
_ANY_HEX_64 = re.compile(r"[0-9a-fA-F]{64}")


def _strict_b64decode(text: str, nbytes: int, what: str) -> bytes:
    """Decode padded standard base64 of exactly ``nbytes`` bytes in its one canonical spelling."""
    expected = 4 * ((nbytes + 2) // 3)
    if len(text) != expected:
        raise KeyFormatError(f"{what} must be {expected} base64 characters, got {len(text)}")
    if not _B64_CHARS.fullmatch(text):
        raise KeyFormatError(f"{what} is not padded standard base64 (RFC 4648 §4)")
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error:
        raise KeyFormatError(f"{what} is not padded standard base64 (RFC 4648 §4)") from None
    if len(raw) != nbytes:
        raise KeyFormatError(f"{what} must decode to {nbytes} bytes, got {len(raw)}")
    # RFC 4648 §3.5: the pad bits must be zero, so one byte string has one text.
    if base64.b64encode(raw).decode("ascii") != text:
        raise KeyFormatError(f"{what} is not canonical base64 (non-zero pad bits)")
    return raw


def _message_bytes(data: Any) -> Any:
    if isinstance(data, (bytes, bytearray, memoryview)):
        return data
    raise KeyUsageError(f"Ed25519 message must be bytes, got `{type(data).__name__}`")


class Ed25519PublicKey:
    """An Ed25519 public key that passed the strict policy.  Immutable, hashable, cached.

    Build with ``from_string`` or ``from_bytes``; ``.raw`` is the 32-byte
    encoding, ``.fingerprint`` the lowercase hex SHA-256 of its SPKI DER.
    """

    __slots__ = ("_raw", "_ossl", "_fingerprint", "_torsion_free")

    def __init__(self, raw: bytes, _token: object = None) -> None:
        if _token is not _CONSTRUCT:
            raise KeyUsageError("use Ed25519PublicKey.from_bytes() or .from_string()")
        self._raw = raw
        self._ossl: Optional[_ossl.Ed25519PublicKey] = None  # loaded on the first OpenSSL verify
        self._fingerprint: Optional[str] = None
        self._torsion_free: Optional[bool] = None

    @classmethod
    def from_bytes(cls, raw: Any) -> "Ed25519PublicKey":
        """The key whose RFC 8032 encoding is ``raw`` (32 bytes).

        Raises ``KeyFormatError`` for a non-bytes value or another length,
        ``WeakKey`` for a non-canonical (y >= p) or small-order encoding.
        """
        if isinstance(raw, (bytearray, memoryview)):
            raw = bytes(raw)
        elif not isinstance(raw, bytes):
            raise KeyFormatError(f"Ed25519 public key must be bytes, got `{type(raw).__name__}`")
        _core.impl.ed25519_check_public_key(raw)
        return _public_from_bytes(bytes(raw))

    @classmethod
    def from_string(cls, text: Any, *, check_torsion: bool = False) -> "Ed25519PublicKey":
        """Parse a public key from base64 SPKI DER or ``"ed25519:"`` + base64/lowercase hex.

        With ``check_torsion=True`` also run ``check_torsion()`` (once per key).
        Raises ``KeyFormatError`` for any other text (wrong length, wrong DER
        prefix, whitespace, non-canonical base64, uppercase hex), ``WeakKey``
        for a key the strict policy refuses.
        """
        if not isinstance(text, str):
            raise KeyFormatError(f"Ed25519 public key text must be str, got `{type(text).__name__}`")
        key = _public_from_string(str(text))
        if check_torsion:
            key.check_torsion()
        return key

    @property
    def raw(self) -> bytes:
        """The 32-byte RFC 8032 encoding."""
        return self._raw

    @property
    def fingerprint(self) -> str:
        """Lowercase hex SHA-256 of the 44-byte SPKI DER (Provenance's key fingerprint)."""
        fp = self._fingerprint
        if fp is None:
            fp = self._fingerprint = hashlib.sha256(SPKI_PREFIX + self._raw).hexdigest()
        return fp

    def to_string(self, form: str = "spki") -> str:
        """``"spki"``: base64 of the SPKI DER; ``"ed25519"``: ``"ed25519:"`` + base64 of the raw key.

        Raises ``KeyUsageError`` for another form.
        """
        if form == "spki":
            return base64.b64encode(SPKI_PREFIX + self._raw).decode("ascii")
        if form == "ed25519":
            return "ed25519:" + base64.b64encode(self._raw).decode("ascii")
        raise KeyUsageError(f"unknown public key form `{form}` (expected `spki` or `ed25519`)")

    def check_torsion(self) -> None:
        """Refuse a key with a torsion component (order 8L instead of L); checked once per key.

        Uses libsodium's ``crypto_core_ed25519_is_valid_point`` (canonical, on
        the curve, not of small order, in the prime-order subgroup).  Raises
        ``WeakKey`` when it fails, ``KeyUsageError`` if PyNaCl (or that
        libsodium function) is missing.
        """
        ok = self._torsion_free
        if ok is None:
            bindings = _nacl_bindings()
            if not getattr(bindings, "has_crypto_core_ed25519", False):  # minimal libsodium builds
                raise KeyUsageError("this libsodium lacks crypto_core_ed25519: cannot check torsion")
            ok = self._torsion_free = bool(bindings.crypto_core_ed25519_is_valid_point(self._raw))
        if not ok:
            raise WeakKey(
                "Ed25519 public key is not in the prime-order subgroup "
                "(torsion component, or not on the curve)"
            )

    def verify(self, signature: Any, data: Any, *, backend: Optional[str] = None) -> None:
        """Check a raw 64-byte Ed25519 signature of ``data`` under the strict policy.

        ``backend``: ``None`` (``DEFAULT_BACKEND``: libsodium when PyNaCl is
        installed), ``"pynacl"`` (libsodium) or ``"cryptography"`` (OpenSSL);
        the verdict is the same on all.  Returns None when valid;
        raises ``BadSignature`` on a mismatch or a signature the policy refuses
        (length, non-canonical or small-order R, S >= L), ``MalformedSignature``
        if ``signature`` is not bytes, ``KeyUsageError`` if ``data`` is not
        bytes or the backend is unknown.
        """
        if backend is None:
            backend = DEFAULT_BACKEND
        elif backend != "cryptography" and backend != "pynacl":
            raise KeyUsageError(f"unknown Ed25519 backend `{backend}` (expected `cryptography` or `pynacl`)")
        if type(data) is not bytes:
            _core.impl.ed25519_check_signature(signature)  # a refused signature is told before a refused message
            data = _message_bytes(data)
        if backend == "pynacl":
            if not _HAVE_SODIUM:  # pragma: no cover - PyNaCl is a dependency
                raise KeyUsageError("the `pynacl` backend is not installed")
            # The strict checks, then libsodium, in one core call that holds the GIL only for the checks.
            if not _core.impl.ed25519_sodium_verify(signature, data, self._raw):
                raise BadSignature("Ed25519 signature does not match the data and key")
            return
        _core.impl.ed25519_check_signature(signature)
        ossl = self._ossl
        if ossl is None:
            ossl = self._ossl = _ossl.Ed25519PublicKey.from_public_bytes(self._raw)
        try:
            ossl.verify(signature, data)
        except InvalidSignature:
            raise BadSignature("Ed25519 signature does not match the data and key") from None

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ed25519PublicKey):
            return NotImplemented
        return self._raw == other._raw

    def __hash__(self) -> int:
        return hash((Ed25519PublicKey, self._raw))

    def __repr__(self) -> str:
        return f"Ed25519PublicKey({self.to_string()!r})"


class Ed25519PrivateKey:
    """An Ed25519 private key (a 32-byte seed, RFC 8032 §5.1.5).  Immutable, cached.

    Build with ``generate``, ``from_seed`` or ``from_string``; ``.sign(data)``
    gives the raw 64-byte signature, ``.public_key`` the matching public key.
    """

    __slots__ = ("_key", "_public")

    def __init__(self, key: _ossl.Ed25519PrivateKey, _token: object = None) -> None:
        if _token is not _CONSTRUCT:
            raise KeyUsageError("use Ed25519PrivateKey.generate(), .from_seed() or .from_string()")
        self._key = key
        self._public = Ed25519PublicKey.from_bytes(key.public_key().public_bytes_raw())

    @classmethod
    def generate(cls) -> "Ed25519PrivateKey":
        """A new random key (OpenSSL's CSPRNG)."""
        return cls(_ossl.Ed25519PrivateKey.generate(), _CONSTRUCT)

    @classmethod
    def from_seed(cls, seed: Any) -> "Ed25519PrivateKey":
        """The key of a 32-byte seed.  Raises ``KeyFormatError`` for a non-bytes value or another length."""
        if isinstance(seed, (bytearray, memoryview)):
            seed = bytes(seed)
        elif not isinstance(seed, bytes):
            raise KeyFormatError(f"Ed25519 seed must be bytes, got `{type(seed).__name__}`")
        if len(seed) != 32:
            raise KeyFormatError(f"Ed25519 seed must be 32 bytes, got {len(seed)}")
        return _private_from_seed(bytes(seed))

    @classmethod
    def from_string(cls, text: Any) -> "Ed25519PrivateKey":
        """Parse base64 of the 48-byte PKCS#8 DER (``302e020100300506032b657004220420 || seed``).

        Strict: 64 canonical base64 characters, no whitespace, exactly that DER
        prefix.  Raises ``KeyFormatError`` otherwise (the message never
        contains key material).
        """
        if not isinstance(text, str):
            raise KeyFormatError(f"Ed25519 private key text must be str, got `{type(text).__name__}`")
        return _private_from_string(str(text))

    @property
    def public_key(self) -> Ed25519PublicKey:
        """The matching public key."""
        return self._public

    def sign(self, data: Any) -> bytes:
        """The raw 64-byte Ed25519 signature R || S of ``data`` (deterministic, RFC 8032 §5.1.6).

        Raises ``KeyUsageError`` if ``data`` is not bytes.
        """
        if type(data) is not bytes:
            data = _message_bytes(data)
        return self._key.sign(data)

    def seed(self) -> bytes:
        """The 32-byte seed (secret)."""
        return self._key.private_bytes_raw()

    def to_string(self) -> str:
        """Base64 of the 48-byte PKCS#8 DER: the text ``from_string`` reads (secret)."""
        return base64.b64encode(PKCS8_PREFIX + self.seed()).decode("ascii")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Ed25519PrivateKey):
            return NotImplemented
        return hmac.compare_digest(self.seed(), other.seed())

    def __hash__(self) -> int:
        return hash((Ed25519PrivateKey, self._public.raw))

    def __repr__(self) -> str:
        return f"Ed25519PrivateKey(public_key={self._public.to_string()!r})"


_CONSTRUCT = object()


@functools.lru_cache(maxsize=KEY_CACHE_SIZE)
def _public_from_bytes(raw: bytes) -> Ed25519PublicKey:
    return Ed25519PublicKey(raw, _CONSTRUCT)


@functools.lru_cache(maxsize=KEY_CACHE_SIZE)
def _public_from_string(text: str) -> Ed25519PublicKey:
    if text.startswith("ed25519:"):
        body = text[8:]
        if len(body) == 64:
            if not _LOWER_HEX_64.fullmatch(body):
                if _ANY_HEX_64.fullmatch(body):
                    raise KeyFormatError("Ed25519 public key hex must be lowercase")
                raise KeyFormatError("Ed25519 public key is not 64 hex digits")
            raw = bytes.fromhex(body)
        elif len(body) == 44:
            raw = _strict_b64decode(body, 32, "Ed25519 public key")
        else:
            raise KeyFormatError(
                "`ed25519:` public key must be followed by 44 base64 or 64 hex characters, "
                f"got {len(body)}"
            )
    else:
        der = _strict_b64decode(text, 44, "Ed25519 SPKI public key")
        if der[:12] != SPKI_PREFIX:
            raise KeyFormatError("Ed25519 SPKI public key has the wrong DER prefix (not id-Ed25519)")
        raw = der[12:]
    return Ed25519PublicKey.from_bytes(raw)


@functools.lru_cache(maxsize=KEY_CACHE_SIZE)
def _private_from_seed(seed: bytes) -> Ed25519PrivateKey:
    return Ed25519PrivateKey(_ossl.Ed25519PrivateKey.from_private_bytes(seed), _CONSTRUCT)


@functools.lru_cache(maxsize=KEY_CACHE_SIZE)
def _private_from_string(text: str) -> Ed25519PrivateKey:
    der = _strict_b64decode(text, 48, "Ed25519 PKCS#8 private key")
    if der[:16] != PKCS8_PREFIX:
        raise KeyFormatError("Ed25519 PKCS#8 private key has the wrong DER prefix (not id-Ed25519 v1)")
    return Ed25519PrivateKey.from_seed(der[16:])


def clear_key_cache() -> None:
    """Forget every cached key (e.g. to drop private keys from memory after a rotation)."""
    for cache in (_public_from_bytes, _public_from_string, _private_from_seed, _private_from_string):
        cache.cache_clear()


def _nacl_bindings() -> Any:
    try:
        import nacl.bindings
    except ImportError:  # pragma: no cover - pynacl is a dependency
        raise KeyUsageError("the `pynacl` backend is not installed") from None
    return nacl.bindings

"""``ajpcore a2a sign|verify|jwks``: A2A Agent Card signatures (``ajpcore.a2a``) from the shell.

Exit status: 0 signed / valid, 1 a card whose signatures do not verify (bad, untrusted
key, refused algorithm, malformed JWS, unsigned), 2 malformed input or usage (a card that
is not strict JSON, an unreadable key or JWKS).  Private keys are read from files only: PEM
(PKCS#8 or traditional) for Ed25519, P-256 and RSA, or ajpcore's base64 PKCS#8 Ed25519 text.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from .. import canonicalize
from ..errors import KeyFormatError, SignatureError
from ..keys import Ed25519PrivateKey
from ._io import (
    EXIT_INVALID,
    EXIT_OK,
    MAX_KEY_FILE_BYTES,
    CliError,
    Subcommands,
    add_file_argument,
    complain,
    private_key_file,
    read_document,
    read_input,
    write,
)

def load_private_key(path: str) -> Any:
    """A signing key from ``path``: PEM (Ed25519, P-256, RSA) or ajpcore's Ed25519 key text; CliError otherwise."""
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    if path != "-" and not os.path.exists(path):
        raise CliError(f"--key: cannot read {path}: No such file or directory")
    data = read_input(path, MAX_KEY_FILE_BYTES)
    if b"-----BEGIN" not in data:
        return private_key_file(path)
    try:
        key = load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as exc:
        raise CliError(f"--key: {path} is not an unencrypted PEM private key ({exc})") from None
    if isinstance(key, ed25519.Ed25519PrivateKey):
        from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat

        return Ed25519PrivateKey.from_seed(key.private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption()))
    if isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
        return key
    raise CliError(f"--key: {path} holds a `{type(key).__name__}`; Agent Cards are signed with Ed25519, P-256 or RSA")


def _alg_for(key: Any, alg: Any) -> str:
    from cryptography.hazmat.primitives.asymmetric import ec

    if alg is not None:
        return str(alg)
    if isinstance(key, Ed25519PrivateKey):
        return "EdDSA"
    return "ES256" if isinstance(key, ec.EllipticCurvePrivateKey) else "RS256"


def cmd_a2a_sign(args: argparse.Namespace) -> int:
    from .. import a2a

    key = load_private_key(args.key)  # usage problems first (exit 2)
    signed = a2a.sign_card(read_document(args), key, kid=args.kid, alg=_alg_for(key, args.alg), jku=args.jku, profile=args.profile)
    write(canonicalize(signed) + b"\n")
    return EXIT_OK


def cmd_a2a_verify(args: argparse.Namespace) -> int:
    from .. import a2a

    keys = a2a.KeySet.from_jwks(read_input(args.jwks, args.max_bytes))
    card = read_document(args)
    try:
        result = a2a.verify_card(card, keys, algorithms=args.alg, profile=args.profile, allowed_jku=args.allowed_jku)
    except SignatureError as exc:
        complain(f"ajpcore a2a verify: invalid: {type(exc).__name__}: {str(exc).replace(chr(10), '; ')}")
        return EXIT_INVALID
    lines = [f"valid: {result.alg} signature by `{result.kid}` under profile `{result.profile}`"]
    if result.unsigned_members:
        lines.append(f"not covered by the signature ({len(result.unsigned_members)}): " + " ".join(result.unsigned_members))
    write(("\n".join(lines) + "\n").encode("utf-8"))
    return EXIT_OK


def cmd_a2a_jwks(args: argparse.Namespace) -> int:
    from .. import a2a

    key = load_private_key(args.key)
    try:
        jwk = a2a.jwk_from_key(key, kid=args.kid, alg=args.alg)
    except KeyFormatError as exc:
        raise CliError(str(exc)) from None
    write(canonicalize({"keys": [jwk]}) + b"\n")
    return EXIT_OK


def add_commands(sub: Subcommands) -> None:
    from ..a2a import ALGORITHMS, PROFILES

    p = sub.add_parser(
        "a2a",
        help="sign and verify A2A Agent Cards (JWS over RFC 8785, A2A v1.0 section 8.4)",
        description="Exit 0 signed/valid, 1 a card whose signatures do not verify, 2 malformed input or usage.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = actions.add_parser("sign", help="print the card (canonical JSON) with one more entry in `signatures`")
    add_file_argument(q)
    q.add_argument("--key", required=True, metavar="KEYFILE", help="private key file: PEM (Ed25519, P-256, RSA) or ajpcore's Ed25519 key")
    q.add_argument("--kid", required=True, metavar="K", help="the key id verifiers select the key by")
    q.add_argument("--alg", choices=ALGORITHMS, help="default: EdDSA, ES256 or RS256 by the key's type")
    q.add_argument("--jku", metavar="URL", help="the JWKS URL to name in the protected header (verifiers never fetch it from ajpcore)")
    q.add_argument("--profile", choices=PROFILES,
                   help="what the signature covers (default: A2A section 8.4.1 as both SDKs read it, default and empty values omitted)")
    q.set_defaults(func=cmd_a2a_sign)
    q = actions.add_parser("verify", help="check a card's signatures against a JWKS of trusted keys: exit 0 valid, 1 refused")
    add_file_argument(q)
    q.add_argument("--jwks", required=True, metavar="FILE", help="JWKS document of the public keys you trust (selected by `kid`)")
    q.add_argument("--alg", action="append", choices=ALGORITHMS, help="allow only this algorithm (repeatable; default: all four)")
    q.add_argument("--profile", choices=PROFILES, help="accept this canonicalization only (default: served, then spec, then sdk)")
    q.add_argument("--allowed-jku", action="append", metavar="URL", help="refuse a signature whose `jku` is not one of these (repeatable)")
    q.set_defaults(func=cmd_a2a_verify)
    q = actions.add_parser("jwks", help="print the JWKS (public key only) of a signing key, to publish or to verify with")
    q.add_argument("--key", required=True, metavar="KEYFILE", help="private key file, as for `sign`")
    q.add_argument("--kid", required=True, metavar="K")
    q.add_argument("--alg", choices=ALGORITHMS, help="bind the key to one algorithm in its JWK")
    q.set_defaults(func=cmd_a2a_jwks)

"""``ajpcore keygen``, ``sign``, ``verify`` and ``fingerprint``: signatures over any JSON object."""

from __future__ import annotations

import argparse
import os

from .. import canonicalize
from ..errors import SignatureError
from ..keys import Ed25519PrivateKey
from ..signing import sign, verify
from ._io import (
    EXIT_INVALID,
    EXIT_OK,
    CliError,
    Subcommands,
    add_file_argument,
    any_key_arg,
    complain,
    load_object,
    private_key_file,
    public_key_arg,
    read_document,
    secret_from_env,
    write,
)

DEFAULT_KEY_FILE = "ajpcore-ed25519.key"


def cmd_sign(args: argparse.Namespace) -> int:
    if args.secret_env is not None:
        secret = secret_from_env(args.secret_env)
        body = load_object(read_document(args))
        signature = sign(body, secret=secret)
    else:
        key = private_key_file(args.key)
        body = load_object(read_document(args))
        signature = sign(body, private_key=key)
    signed = dict(body)
    signed["signature"] = signature
    write(canonicalize(signed))
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    # Usage problems (secret, key) first, exit 2, before the document is judged.
    secret = secret_from_env(args.secret_env) if args.secret_env is not None else None
    public = public_key_arg(args.public_key) if secret is None else None
    body = load_object(read_document(args))
    try:
        verify(body, secret=secret, public_key=public)
    except SignatureError as exc:
        complain(f"ajpcore verify: invalid: {type(exc).__name__}: {exc}")
        return EXIT_INVALID
    write(f"valid: {body['signature'].partition(':')[0]} signature\n".encode())
    return EXIT_OK


def _write_private_key(path: str, text: str) -> None:
    """Create ``path`` with mode 0600 holding ``text``; never overwrite an existing file."""
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise CliError(f"refusing to overwrite {path}") from None
    except OSError as exc:
        raise CliError(f"cannot create {path}: {exc.strerror}") from None
    with os.fdopen(fd, "w", encoding="ascii") as f:
        os.fchmod(f.fileno(), 0o600)  # the umask may only have narrowed it; make it exact
        f.write(text + "\n")


def cmd_keygen(args: argparse.Namespace) -> int:
    key = Ed25519PrivateKey.generate()
    _write_private_key(args.out, key.to_string())
    public = key.public_key
    write(
        (
            f"private_key_file: {args.out}\n"
            f"public_key: {public.to_string('spki')}\n"
            f"public_key_ed25519: {public.to_string('ed25519')}\n"
            f"fingerprint: {public.fingerprint}\n"
        ).encode("ascii")
    )
    return EXIT_OK


def cmd_fingerprint(args: argparse.Namespace) -> int:
    key = any_key_arg(args.key)
    public = key.public_key if isinstance(key, Ed25519PrivateKey) else key
    write(public.fingerprint.encode("ascii") + b"\n")
    return EXIT_OK


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("sign", help="print a JSON document with its signature member set (HMAC-SHA256 or Ed25519)")
    add_file_argument(p)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--secret-env", metavar="VAR", help="sign with HMAC-SHA256 under the secret held in environment variable VAR")
    how.add_argument("--key", metavar="KEYFILE", help="sign with Ed25519 under the private key in KEYFILE (base64 PKCS#8; - reads standard input)")
    p.set_defaults(func=cmd_sign)

    p = sub.add_parser("verify", help="check a document's signature: exit 0 valid, 1 invalid, 2 malformed input")
    add_file_argument(p)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--secret-env", metavar="VAR", help="HMAC-SHA256 secret held in environment variable VAR")
    how.add_argument("--public-key", metavar="KEY", help="Ed25519 public key (base64 SPKI DER or ed25519:<base64|hex>), or a file holding it")
    p.set_defaults(func=cmd_verify)

    p = sub.add_parser("keygen", help="create an Ed25519 private key file (mode 0600); print its public key")
    p.add_argument("--out", default=DEFAULT_KEY_FILE, help=f"private key file to create (default: {DEFAULT_KEY_FILE})")
    p.set_defaults(func=cmd_keygen)

    p = sub.add_parser("fingerprint", help="print the SHA-256 fingerprint (hex, of the SPKI DER) of an Ed25519 key")
    p.add_argument("key", help="public key (base64 SPKI or ed25519:...), or a file or - holding a public or private key")
    p.set_defaults(func=cmd_fingerprint)

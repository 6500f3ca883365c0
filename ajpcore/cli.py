"""The ``ajpcore`` command: canonicalize, check, sign and verify documents from the shell.

Exit status: 0 success, 1 a well-formed document that fails a check (bad
signature, invalid envelope), 2 malformed input or usage.  Errors are one line
on stderr, naming the problem and its location.  Secrets are read from the
environment or from files, never from the command line.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import resources
from typing import Callable, List, Optional

from . import BACKEND, __version__, canonicalize, decode
from .errors import AjpError

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_MALFORMED = 2


class CliError(Exception):
    """A usage or input problem: printed as one line, exit 2."""

    def __init__(self, message: str, status: int = EXIT_MALFORMED) -> None:
        super().__init__(message)
        self.status = status


def _read_input(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise CliError(f"cannot read {path}: {exc.strerror}") from None


def _example_bytes(name: str) -> bytes:
    return resources.files("ajpcore.examples").joinpath(name).read_bytes()


def _load_json(data: bytes):
    """Parse a document strictly (I-JSON); a refusal is a DecodeError, reported as one line, exit 2."""
    return decode(data)


def _write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


# -- subcommands -------------------------------------------------------------


def cmd_canonicalize(args: argparse.Namespace) -> int:
    value = _load_json(_read_input(args.file))
    _write(canonicalize(value))
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    from .errors import SignatureError
    from .signing import sign, verify

    offer = _load_json(_example_bytes("offer.json"))
    secret = b"ajpcore-demo-secret"
    signed = dict(offer)
    signed["signature"] = sign(offer, secret=secret)
    _write(
        b"JobOffer signed with HMAC-SHA256 under the demo secret `%s` (backend %s):\n" % (secret, BACKEND.encode())
        + canonicalize(signed)
        + b"\n"
    )
    verify(signed, secret=secret)  # raises (exit 2) if ajpcore cannot check its own signature
    _write(b"verify: valid\n")
    tampered = dict(signed)
    tampered["budget"] = dict(signed["budget"], max_usd=signed["budget"]["max_usd"] * 1000)
    try:
        verify(tampered, secret=secret)
    except SignatureError as exc:
        _write(f"tampered copy (budget.max_usd x1000): refused - {type(exc).__name__}: {exc}\n".encode())
        return EXIT_OK
    _write(b"tampered copy (budget.max_usd x1000): ACCEPTED - this is a bug\n")
    return EXIT_INVALID


# -- decode-check --


def cmd_decode_check(args: argparse.Namespace) -> int:
    decode(_read_input(args.file))
    return EXIT_OK


# -- keygen, sign, verify, fingerprint --


def _secret_from_env(name: str) -> bytes:
    """The HMAC secret from environment variable ``name`` (raw bytes where the OS has them)."""
    import os

    if os.environ.get(name) is None:
        raise CliError(f"environment variable `{name}` is not set (it must hold the HMAC secret)")
    value = os.environb.get(name.encode(), b"") if os.supports_bytes_environ else os.environ[name].encode("utf-8")
    if not value:
        raise CliError(f"environment variable `{name}` is empty (it must hold the HMAC secret)")
    return value


def _private_key_from_file(path: str):
    from .keys import Ed25519PrivateKey

    try:
        text = _read_input(path).decode("ascii").strip()
    except UnicodeDecodeError:
        raise CliError(f"{path} is not a base64 PKCS#8 Ed25519 private key") from None
    return Ed25519PrivateKey.from_string(text)


def _signed_body(args: argparse.Namespace) -> dict:
    body = _load_json(_read_input(args.file))
    if not isinstance(body, dict):
        raise CliError(f"a signed document must be a JSON object, got {type(body).__name__}")
    return body


def cmd_sign(args: argparse.Namespace) -> int:
    from .signing import sign

    body = _signed_body(args)
    if args.secret_env is not None:
        signature = sign(body, secret=_secret_from_env(args.secret_env))
    else:
        signature = sign(body, private_key=_private_key_from_file(args.key))
    signed = dict(body)
    signed["signature"] = signature
    _write(canonicalize(signed))
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from .errors import SignatureError
    from .signing import verify

    body = _signed_body(args)
    try:
        if args.secret_env is not None:
            verify(body, secret=_secret_from_env(args.secret_env))
        else:
            verify(body, public_key=_read_key_text(args.public_key))
    except SignatureError as exc:
        print(f"ajpcore verify: invalid: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    _write(f"valid: {body['signature'].partition(':')[0]} signature\n".encode())
    return EXIT_OK


import base64  # noqa: E402
import os  # noqa: E402

DEFAULT_KEY_FILE = "ajpcore-ed25519.key"


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


def _read_key_text(arg: str) -> str:
    """A key given as text, as ``-`` (standard input) or as a file holding one key line."""
    if arg == "-" or os.path.isfile(arg):
        data = _read_input(arg)
        try:
            text = data.decode("ascii")
        except UnicodeDecodeError:
            raise CliError(f"{arg} does not hold a key (not ASCII text)") from None
        return text[:-1] if text.endswith("\n") else text
    return arg


def cmd_keygen(args: argparse.Namespace) -> int:
    from .keys import Ed25519PrivateKey

    key = Ed25519PrivateKey.generate()
    _write_private_key(args.out, key.to_string())
    public = key.public_key
    _write(
        (
            f"private_key_file: {args.out}\n"
            f"public_key: {public.to_string('spki')}\n"
            f"public_key_ed25519: {public.to_string('ed25519')}\n"
            f"fingerprint: {public.fingerprint}\n"
        ).encode("ascii")
    )
    return EXIT_OK


def cmd_fingerprint(args: argparse.Namespace) -> int:
    from .errors import WeakKey
    from .keys import PKCS8_PREFIX, Ed25519PrivateKey, Ed25519PublicKey

    text = _read_key_text(args.key)
    private_prefix = base64.b64encode(PKCS8_PREFIX).decode("ascii")[:20]
    try:
        if text.startswith(private_prefix):
            public = Ed25519PrivateKey.from_string(text).public_key
        else:
            public = Ed25519PublicKey.from_string(text)
    except WeakKey as exc:
        raise CliError(str(exc), EXIT_INVALID) from None
    _write(public.fingerprint.encode("ascii") + b"\n")
    return EXIT_OK


# -- check, manifest --


def _add_file(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", nargs="?", default="-", help="JSON document (default: standard input)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ajpcore", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"ajpcore {__version__} ({BACKEND})")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("canonicalize", help="write the RFC 8785 canonical form of a JSON document")
    _add_file(p)
    p.set_defaults(func=cmd_canonicalize)

    p = sub.add_parser("demo", help="run ajpcore's main job on the bundled example JobOffer")
    p.set_defaults(func=cmd_demo)

    # decode-check parser
    p = sub.add_parser("decode-check", help="check that a document is strictly valid I-JSON (silent, exit 0) or exit 2")
    _add_file(p)
    p.set_defaults(func=cmd_decode_check)

    # keygen, sign, verify, fingerprint parsers
    p = sub.add_parser("sign", help="print a JSON document with its `signature` set (HMAC-SHA256 or Ed25519)")
    _add_file(p)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--secret-env", metavar="VAR", help="sign with HMAC-SHA256 under the secret held in environment variable VAR")
    how.add_argument("--key", metavar="FILE", help="sign with Ed25519 under the private key in FILE (base64 PKCS#8)")
    p.set_defaults(func=cmd_sign)

    p = sub.add_parser("verify", help="check a document's `signature`: exit 0 valid, 1 invalid, 2 malformed input")
    _add_file(p)
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

    # check, manifest parsers

    return parser


def main(argv: Optional[List[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except CliError as exc:
        print(f"ajpcore {args.command}: {exc}", file=sys.stderr)
        return exc.status
    except AjpError as exc:
        message = str(exc).replace("\n", "; ")
        print(f"ajpcore {args.command}: {message}", file=sys.stderr)
        return EXIT_MALFORMED


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

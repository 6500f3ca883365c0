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

from . import BACKEND, __version__, canonicalize
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
    """Parse a document strictly: the strict decoder when present, else json with duplicate checks."""
    try:
        from . import decode  # type: ignore[attr-defined]
    except ImportError:  # the strict decoder lands with its own issue
        decode = None
    if decode is not None:
        return decode(data)

    def pairs(items):
        out = {}
        for k, v in items:
            if k in out:
                raise CliError(f"duplicate member name `{k}`")
            out[k] = v
        return out

    def reject_constant(name):
        raise CliError(f"`{name}` is not JSON")

    try:
        return json.loads(data, object_pairs_hook=pairs, parse_constant=reject_constant)
    except (ValueError, UnicodeDecodeError) as exc:
        raise CliError(f"JSON is malformed: {exc}") from None


def _write(data: bytes) -> None:
    sys.stdout.buffer.write(data)
    sys.stdout.buffer.flush()


# -- subcommands -------------------------------------------------------------


def cmd_canonicalize(args: argparse.Namespace) -> int:
    value = _load_json(_read_input(args.file))
    _write(canonicalize(value))
    return EXIT_OK


def cmd_demo(args: argparse.Namespace) -> int:
    offer = _load_json(_example_bytes("offer.json"))
    canonical = canonicalize(offer)
    _write(b"canonical JobOffer (backend %s):\n" % BACKEND.encode() + canonical + b"\n")
    return EXIT_OK


# -- decode-check --


# -- keygen, sign, verify, fingerprint --


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

    # keygen, sign, verify, fingerprint parsers

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

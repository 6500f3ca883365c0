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
    offer = _load_json(_example_bytes("offer.json"))
    canonical = canonicalize(offer)
    _write(b"canonical JobOffer (backend %s):\n" % BACKEND.encode() + canonical + b"\n")
    return EXIT_OK


# -- decode-check --


def cmd_decode_check(args: argparse.Namespace) -> int:
    decode(_read_input(args.file))
    return EXIT_OK


# -- keygen, sign, verify, fingerprint --


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

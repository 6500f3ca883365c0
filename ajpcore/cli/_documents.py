"""``ajpcore canonicalize``, ``decode-check`` and ``demo``: documents in, canonical bytes out."""

from __future__ import annotations

import argparse

from .. import BACKEND, canonicalize, decode
from ..errors import SignatureError
from ..signing import sign, verify
from ._io import EXIT_INVALID, EXIT_OK, Subcommands, add_file_argument, example_bytes, load_object, read_document, write


def cmd_canonicalize(args: argparse.Namespace) -> int:
    write(canonicalize(decode(read_document(args))))
    return EXIT_OK


def cmd_decode_check(args: argparse.Namespace) -> int:
    decode(read_document(args))
    return EXIT_OK


DEMO_SECRET = b"ajpcore-demo-secret"


def cmd_demo(args: argparse.Namespace) -> int:
    offer = load_object(example_bytes("offer.json"))
    signed = dict(offer)
    signed["signature"] = sign(offer, secret=DEMO_SECRET)
    write(
        b"JobOffer signed with HMAC-SHA256 under the demo secret `%s` (backend %s):\n" % (DEMO_SECRET, BACKEND.encode())
        + canonicalize(signed)
        + b"\n"
    )
    verify(signed, secret=DEMO_SECRET)  # raises (exit 2) if ajpcore cannot check its own signature
    write(b"verify: valid\n")
    tampered = dict(signed)
    tampered["budget"] = dict(signed["budget"], max_usd=signed["budget"]["max_usd"] * 1000)
    try:
        verify(tampered, secret=DEMO_SECRET)
    except SignatureError as exc:
        write(f"tampered copy (budget.max_usd x1000): refused - {type(exc).__name__}: {exc}\n".encode())
        return EXIT_OK
    write(b"tampered copy (budget.max_usd x1000): ACCEPTED - this is a bug\n")
    return EXIT_INVALID


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("canonicalize", help="write the RFC 8785 canonical form of a JSON document")
    add_file_argument(p)
    p.set_defaults(func=cmd_canonicalize)

    p = sub.add_parser("demo", help="run ajpcore's main job on the bundled example JobOffer")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("decode-check", help="check that a document is strictly valid I-JSON (silent, exit 0) or exit 2")
    add_file_argument(p)
    p.set_defaults(func=cmd_decode_check)

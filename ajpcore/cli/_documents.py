"""``ajpcore canonicalize``, ``decode-check`` and ``demo``: documents in, canonical bytes out.

The demo signs the bundled offer, verifies it, refuses a tampered copy, then shows what an
``ajp.Receiver`` answers: the offer accepted, its retry a duplicate, a reused job id and an offer
for another agent refused.
"""

from __future__ import annotations

import argparse
from typing import Any, Dict

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
    else:
        write(b"tampered copy (budget.max_usd x1000): ACCEPTED - this is a bug\n")
        return EXIT_INVALID
    return _demo_receive(signed)


DEMO_NOW = "2026-03-05T10:01:00Z"
"""The receiver's clock in the demo: inside the bundled offer's window (10:00 to 10:05 UTC)."""


def _demo_receive(signed: Dict[str, Any]) -> int:
    """What an ``ajp.Receiver`` answers on ``POST /jobs``: the offer, its honest retry, a reuse, a relay."""
    from ..ajp import MemoryReplayGuard, Receiver

    me = signed["to"]["provenance_id"]
    receiver = Receiver(recipient=me, secret=DEMO_SECRET, replay_guard=MemoryReplayGuard())
    wire = canonicalize(signed)
    reused = dict(signed, task=dict(signed["task"], instruction="Transfer the budget elsewhere."))
    reused["signature"] = sign(reused, secret=DEMO_SECRET)
    relayed = dict(signed, to={"provenance_id": "provenance:github:example/someone-else"})
    relayed["signature"] = sign(relayed, secret=DEMO_SECRET)
    cases = [
        ("receive (Receiver for %s): the offer" % me, wire, 202, False),
        ("the same bytes again (a retry)", wire, 202, True),
        ("another body under the same job id", canonicalize(reused), 409, False),
        ("a validly signed offer for another agent", canonicalize(relayed), 403, False),
    ]
    for label, body, expected, duplicate in cases:
        answer = receiver.answer_offer(body, now=DEMO_NOW)
        verdict = "accepted" if answer.accepted else "duplicate, not run again" if answer.duplicate else "refused"
        write(f"{label}: {answer.status} {verdict} - {answer.body.decode()}\n".encode())
        if (answer.status, answer.duplicate) != (expected, duplicate):
            write(f"expected {expected}: this is a bug\n".encode())
            return EXIT_INVALID
    return EXIT_OK


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("canonicalize", help="write the RFC 8785 canonical form of a JSON document")
    add_file_argument(p)
    p.set_defaults(func=cmd_canonicalize)

    p = sub.add_parser("demo", help="sign, verify and receive the bundled example JobOffer")
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser("decode-check", help="check that a document is strictly valid I-JSON (silent, exit 0) or exit 2")
    add_file_argument(p)
    p.set_defaults(func=cmd_decode_check)

"""``ajpcore provenance verify-attestation|verify-notice`` and the sender-identity options of
``ajpcore check offer`` (``--declaration``, ``--retrieved-from``, ``--pins``).

Exit status: 0 valid, 1 refused (a forged, altered, stale or not-yet-valid
document, an unknown version, an identity that cannot be established), 2
malformed input or usage (not strict JSON, a bad key, a corrupt pin file).
"""

from __future__ import annotations

import argparse
from typing import List, Optional

from ..errors import KeyPinsCorrupt, ValidationError
from ._check import CHECK_KINDS, AddArguments, CheckRun, check_now, register_check, rule_problem
from ._io import (
    EXIT_INVALID,
    EXIT_OK,
    CliError,
    Subcommands,
    add_file_argument,
    complain,
    load_json,
    public_key_arg,
    read_document,
    read_input,
)


def _refused(command: str, status: str, reason: Optional[str]) -> int:
    complain(f"ajpcore {command}: {status}: {reason}")
    return EXIT_INVALID


def cmd_verify_attestation(args: argparse.Namespace) -> int:
    from ..provenance import verify_attestation

    key = public_key_arg(args.issuer_key, "--issuer-key")  # usage problems first (exit 2)
    now = check_now(args)
    result = verify_attestation(load_json(read_document(args)), key, now=now)
    if not result.valid:
        return _refused("provenance verify-attestation", result.status, result.reason)
    print(
        f"valid attestation `{result.attestation_id}` ({result.kind}) by `{result.issuer}`, "
        f"valid until {result.valid_until}"
    )
    return EXIT_OK


def cmd_verify_notice(args: argparse.Namespace) -> int:
    from ..provenance import verify_notice

    key = public_key_arg(args.key, "--key")
    result = verify_notice(load_json(read_document(args)), key)
    if not result.valid:
        return _refused("provenance verify-notice", result.status, result.reason)
    print(f"valid notice `{result.notice_id}` ({result.event}) for `{result.provenance_id}`")
    if result.new_public_key is not None:
        print(f"new key: {result.new_public_key.to_string()} (fingerprint {result.new_key_fingerprint})")
    return EXIT_OK


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser(
        "provenance",
        help="verify Provenance attestations and notices offline",
        description="Exit 0 valid, 1 refused (forged, altered, expired, not yet valid, unknown version), 2 malformed input or usage.",
    )
    actions = p.add_subparsers(dest="action", required=True, metavar="ACTION")
    q = actions.add_parser(
        "verify-attestation",
        help="check an attestation against the issuer's key at --now: exit 0 valid, 1 expired/not yet valid/invalid/unchecked",
    )
    add_file_argument(q)
    q.add_argument("--issuer-key", required=True, metavar="KEY", help="the issuer's public key (text, or a file holding it)")
    q.add_argument("--now", metavar="T", help="RFC 3339 time to judge the validity window at (default: now)")
    q.set_defaults(func=cmd_verify_attestation)
    q = actions.add_parser(
        "verify-notice",
        help="check an operator notice against the agent's key (for a key rotation: the OLD key)",
    )
    add_file_argument(q)
    q.add_argument("--key", required=True, metavar="KEY", help="the agent's public key, the old one for a rotation (text or file)")
    q.set_defaults(func=cmd_verify_notice)


# -- check offer: the sender's key from its declaration ----------------------------------------


def _add_identity_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--declaration", metavar="DECL", help="offer: the sender's Provenance declaration as fetched; its key verifies the offer")
    p.add_argument("--retrieved-from", metavar="URL", help="offer: the URL the declaration was fetched from (must be from.declaration_url)")
    p.add_argument("--pins", metavar="PINS.json", help="offer: key pin file (created if absent; first use pins the key, another key is refused)")


def _with_identity(plain: CheckRun) -> CheckRun:
    def run(data: bytes, args: argparse.Namespace) -> List[str]:
        if args.declaration is None:
            if args.retrieved_from is not None or args.pins is not None:
                raise CliError("--retrieved-from and --pins need --declaration")
            return plain(data, args)
        from .. import ajp
        from ..provenance import FileKeyPins

        if args.secret_env is not None or args.public_key is not None:
            raise CliError("--declaration gives the sender's key: drop --secret-env/--public-key")
        if args.retrieved_from is None:
            raise CliError("--declaration needs --retrieved-from URL (where it was fetched from)")
        declaration = read_input(args.declaration, args.max_bytes)
        try:
            pins = None if args.pins is None else FileKeyPins(args.pins)
        except KeyPinsCorrupt as exc:
            raise CliError(f"--pins: {exc}") from None
        now = check_now(args)
        offer = ajp.JobOffer.from_json(data)
        check = ajp.validate_offer(offer, now=now, strict=True)
        if check.errors:
            raise ValidationError([rule_problem(message) for message in check.errors])
        identity = ajp.verify_sender(offer, declaration, retrieved_from=args.retrieved_from, pins=pins)
        offer.verify(public_key=identity.public_key)
        return [
            f"valid JobOffer `{offer.job_id}`",
            *(f"warning: {w}" for w in check.warnings),
            f"sender: `{identity.provenance_id}`, key fingerprint {identity.fingerprint} "
            f"(declaration {identity.declaration_digest}, coverage {identity.coverage})",
            "signature: valid under the declared key",
        ]

    return run


def _both(first: Optional[AddArguments], second: AddArguments) -> AddArguments:
    def add(p: argparse.ArgumentParser) -> None:
        if first is not None:
            first(p)
        second(p)

    return add


_offer = CHECK_KINDS["offer"]
register_check(
    "offer",
    _offer.help + "; with --declaration, the sender's key comes from its Provenance declaration",
    _with_identity(_offer.run),
    _both(_offer.add_arguments, _add_identity_arguments),
)

"""IATP capability manifests: the ``check manifest`` row and ``ajpcore manifest sign|verify``."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, List

from ..errors import SignatureError, ValidationError
from ._check import check_public_key, print_problems, register_check
from ._io import EXIT_INVALID, EXIT_OK, CliError, Subcommands, add_file_argument, private_key_file, public_key_arg, read_document, write, complain

if TYPE_CHECKING:
    from ..iatp import CapabilityManifest


def _manifest_from(data: bytes) -> CapabilityManifest:
    from ..iatp import CapabilityManifest

    return CapabilityManifest.from_json(data)


def _check_manifest(data: bytes, args: argparse.Namespace) -> List[str]:
    from ..iatp import spec_warnings, trust_score, verify_manifest

    if args.secret_env is not None:
        raise CliError("manifests are signed with Ed25519: use --public-key, not --secret-env")
    pinned = check_public_key(args)
    manifest = _manifest_from(data)
    score = trust_score(manifest)
    identity = manifest.identity
    lines = [
        f"valid IATP capability manifest: agent `{identity.agent_id}` of `{identity.owner}`,"
        f" trust_level `{manifest.trust_level.value}`, protocol {manifest.protocol_version}",
        f"trust score {score.score}/10: {score.decision} ("
        + ", ".join(f"{label} {points:+d}" for label, points in score.terms)
        + ")",
    ]
    lines += [f"warning: {message} - at `{path}`" for path, message in spec_warnings(manifest)]
    if pinned is not None:
        verify_manifest(manifest, public_key=pinned)
        lines.append(f"signature: valid, by the pinned key (fingerprint {pinned.fingerprint})")
    elif manifest.signature is not None:
        lines.append("signature: present, not verified (give --public-key KEY to verify it)")
    else:
        lines.append("signature: none")
    return lines


register_check("manifest", "an IATP capability manifest", _check_manifest)


def cmd_manifest_sign(args: argparse.Namespace) -> int:
    from ..iatp import sign_manifest

    key = private_key_file(args.key)
    try:
        manifest = _manifest_from(read_document(args))
    except ValidationError as exc:
        return print_problems("manifest", exc.errors)
    write(sign_manifest(manifest, key).to_json())
    return EXIT_OK


def cmd_manifest_verify(args: argparse.Namespace) -> int:
    from ..iatp import verify_manifest

    pinned = None if args.public_key is None else public_key_arg(args.public_key)
    try:
        manifest = _manifest_from(read_document(args))
        verify_manifest(manifest, public_key=pinned)
    except ValidationError as exc:
        return print_problems("manifest", exc.errors)
    except SignatureError as exc:
        complain(f"ajpcore manifest: invalid: {type(exc).__name__}: {exc}")
        return EXIT_INVALID
    how = "the pinned key" if pinned is not None else "its claimed key"
    write(f"valid: ed25519 manifest signature by {how} {manifest.identity.verification_key}\n".encode())
    return EXIT_OK


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("manifest", help="sign or verify an IATP capability manifest (ajpcore's iatp-manifest-v1 signature)")
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("sign", help="print the canonical manifest with its signature set")
    add_file_argument(q)
    q.add_argument("--key", metavar="KEYFILE", required=True, help="Ed25519 private key file (base64 PKCS#8); must match identity.verification_key")
    q.set_defaults(func=cmd_manifest_sign)
    q = actions.add_parser("verify", help="check the signature against identity.verification_key: exit 0 valid, 1 invalid, 2 malformed")
    add_file_argument(q)
    q.add_argument("--public-key", metavar="KEY", help="also require the claimed key to be this one (base64 SPKI DER or ed25519:<base64|hex>, or a file holding it)")
    q.set_defaults(func=cmd_manifest_verify)

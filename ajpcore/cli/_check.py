"""``ajpcore check KIND FILE``: validate an envelope and verify its signature, one table row per kind.

A kind is registered with ``register_check(name, help, run, add_arguments=None)``;
``run(data, args)`` decodes and validates ``data``, verifies its signature when
a key is given, and returns the lines to print on success.  It raises
``ValidationError`` (every problem, exit 1), another ``AjpError`` for a document
that fails (exit 1), or ``DecodeError``/``CliError`` for malformed input or
usage (exit 2).  ``add_arguments`` adds the kind's own options to the ``check``
parser (their help should say which kind reads them).
"""

from __future__ import annotations

import argparse
import re
from datetime import datetime, timezone
from typing import Callable, List, Optional, Sequence, Tuple

from ..errors import AjpError, DecodeError, ValidationError
from ..keys import Ed25519PublicKey
from ._io import EXIT_INVALID, EXIT_OK, CliError, Subcommands, add_file_argument, public_key_arg, read_document, secret_from_env, complain

CheckRun = Callable[[bytes, argparse.Namespace], List[str]]
AddArguments = Callable[[argparse.ArgumentParser], None]


class CheckKind:
    """One row of ``ajpcore check``: its name, help line, runner and extra options."""

    __slots__ = ("name", "help", "run", "add_arguments")

    def __init__(self, name: str, help: str, run: CheckRun, add_arguments: Optional[AddArguments] = None) -> None:
        self.name = name
        self.help = help
        self.run = run
        self.add_arguments = add_arguments


CHECK_KINDS: dict[str, CheckKind] = {}


def register_check(name: str, help: str, run: CheckRun, add_arguments: Optional[AddArguments] = None) -> None:
    """Add a kind to ``ajpcore check`` (one table row)."""
    CHECK_KINDS[name] = CheckKind(name, help, run, add_arguments)


def print_problems(command: str, problems: Sequence[Tuple[str, str]]) -> int:
    """Every problem of a refused document on stderr, one ``<reason> - at `<path>``` line each; exit 1."""
    for path, reason in problems:
        complain(f"ajpcore {command}: {reason} - at `{path}`")
    return EXIT_INVALID


def print_failure(command: str, exc: AjpError) -> int:
    """A refusal that is not a list of problems (a bad signature, a refused key), one line per line; exit 1."""
    if isinstance(exc, ValidationError):
        return print_problems(command, exc.errors)
    for line in str(exc).split("\n"):
        complain(f"ajpcore {command}: {type(exc).__name__}: {line}")
    return EXIT_INVALID


def cmd_check(args: argparse.Namespace) -> int:
    kind = CHECK_KINDS[args.kind]
    data = read_document(args)
    try:
        lines = kind.run(data, args)
    except DecodeError as exc:
        if isinstance(exc, ValidationError):
            return print_problems("check", exc.errors)
        raise
    except AjpError as exc:
        return print_failure("check", exc)
    for line in lines:
        print(line)
    return EXIT_OK


def check_now(args: argparse.Namespace) -> datetime:
    """``--now`` as an aware datetime (strict RFC 3339), else the current time."""
    from ..timestamps import parse_timestamp

    if args.now is None:
        return datetime.now(timezone.utc)
    try:
        return parse_timestamp(args.now)
    except AjpError as exc:
        raise CliError(f"--now: {exc}") from None


def check_secret(args: argparse.Namespace) -> Optional[bytes]:
    """The HMAC secret named by ``--secret-env``, or None when none was asked for."""
    return None if args.secret_env is None else secret_from_env(args.secret_env)


def check_public_key(args: argparse.Namespace) -> Optional[Ed25519PublicKey]:
    """``--public-key`` (text or key file) parsed up front: a bad key is a usage error (exit 2)."""
    return None if args.public_key is None else public_key_arg(args.public_key)


_RULE_MEMBER = re.compile(r"\b(?:(?:from|to|task|budget|callback|context)\.[a-z_]+|issued_at|expires_at|signature|ajp|job_id)\b")


def rule_problem(message: str) -> Tuple[str, str]:
    """``(path, reason)`` of one acceptance-rule message: the member it names (expiry rules: ``expires_at``)."""
    if message.startswith(("offer has expired", "offer lifetime")):
        return "$.expires_at", message
    found = _RULE_MEMBER.search(message)
    return ("$." + found.group(0) if found else "$"), message


def _check_ajp(class_name: str) -> CheckRun:
    """The ``check`` row of one AJP envelope: schema, acceptance rules (offers), signature."""

    def run(data: bytes, args: argparse.Namespace) -> List[str]:
        from .. import ajp

        cls = getattr(ajp, class_name)
        is_offer = cls is ajp.JobOffer
        secret = check_secret(args)  # usage problems first (exit 2), before judging the document
        public = check_public_key(args)
        now = check_now(args) if is_offer else None
        envelope = cls.from_json(data)
        lines = [f"valid {class_name} `{envelope.job_id}`"]
        if is_offer:
            check = ajp.validate_offer(envelope, now=now, strict=True)
            if check.errors:
                raise ValidationError([rule_problem(message) for message in check.errors])
            lines += [f"warning: {w}" for w in check.warnings]
        if secret is None and public is None:
            lines.append("signature: not checked (give --secret-env VAR or --public-key KEY)")
        elif is_offer:
            envelope.verify(secret=secret, public_key=public)
            lines.append("signature: valid")
        elif getattr(args, "sdk_subset", False):
            view = envelope.verify(secret=secret, public_key=public, mode="sdk")
            unsigned = ", ".join(view.unsigned_members) or "none"
            lines.append(f"signature: valid over the reference SDK's subset only; not signed: {unsigned}")
        else:
            envelope.verify(secret=secret, public_key=public)
            lines.append("signature: valid over the full body")
        return lines

    return run


register_check("offer", "an AJP JobOffer (strict acceptance rules at --now)", _check_ajp("JobOffer"))
register_check("result", "an AJP JobResult (full-body signature; the SDK subset with --sdk-subset)", _check_ajp("JobResult"))
register_check("status", "an AJP JobStatus", _check_ajp("JobStatus"))


def add_commands(sub: Subcommands) -> None:
    kinds = "; ".join(f"{kind.name}: {kind.help}" for kind in CHECK_KINDS.values())
    p = sub.add_parser(
        "check",
        help="validate (and verify) an envelope: " + ", ".join(CHECK_KINDS),
        description=(
            f"Validate an envelope and verify its signature when a key is given. Kinds: {kinds}. "
            "Exit 0 valid, 1 invalid or bad signature (each problem on stderr with its JSON path), "
            "2 malformed input or usage."
        ),
    )
    p.add_argument("kind", choices=sorted(CHECK_KINDS), help="envelope kind")
    add_file_argument(p)
    p.add_argument("--now", metavar="T", help="RFC 3339 time to judge expiry against (default: now)")
    key = p.add_mutually_exclusive_group()
    key.add_argument("--secret-env", metavar="VAR", help="verify an HMAC signature with the secret in $VAR")
    key.add_argument("--public-key", metavar="KEY", help="verify an Ed25519 signature with this public key (text, or a file holding it)")
    p.add_argument(
        "--sdk-subset",
        action="store_true",
        help="result/status: accept a signature over the reference SDK's subset only, listing the unsigned members",
    )
    for kind in CHECK_KINDS.values():
        if kind.add_arguments is not None:
            kind.add_arguments(p)
    p.set_defaults(func=cmd_check)

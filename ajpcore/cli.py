"""The ``ajpcore`` command: canonicalize, check, sign and verify documents from the shell.

Exit status: 0 success, 1 a well-formed document that fails a check (bad
signature, invalid envelope), 2 malformed input or usage.  Errors are one line
on stderr, naming the problem and its location.  Secrets are read from the
environment or from files, never from the command line.
"""

from __future__ import annotations

import argparse
import base64
import os
import sys
from importlib import resources
from typing import Callable, List, Optional

from . import BACKEND, __version__, canonicalize, decode
from .errors import AjpError, DecodeError, KeyFormatError, SignatureError, ValidationError, WeakKey
from .keys import PKCS8_PREFIX, Ed25519PrivateKey, Ed25519PublicKey
from .signing import sign, verify

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

    if os.environ.get(name) is None:
        raise CliError(f"environment variable `{name}` is not set (it must hold the HMAC secret)")
    value = os.environb.get(name.encode(), b"") if os.supports_bytes_environ else os.environ[name].encode("utf-8")
    if not value:
        raise CliError(f"environment variable `{name}` is empty (it must hold the HMAC secret)")
    return value


def _private_key_from_file(path: str):

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


class CheckKind:
    """One row of ``ajpcore check KIND FILE``: how to read, validate and verify one envelope kind.

    ``run(data, args)`` decodes and validates ``data``, verifies its signature when
    ``--secret-env`` or ``--public-key`` is given, and returns the lines to print on
    success.  It raises ``ValidationError``/``InvalidMessage``/``SignatureError`` for a
    document that fails (exit 1) and ``DecodeError``/``CliError`` for malformed input
    (exit 2).
    """

    __slots__ = ("name", "help", "run")

    def __init__(self, name: str, help: str, run: Callable[[bytes, argparse.Namespace], List[str]]) -> None:
        self.name = name
        self.help = help
        self.run = run


CHECK_KINDS: "dict[str, CheckKind]" = {}


def register_check(name: str, help: str, run: Callable[[bytes, argparse.Namespace], List[str]]) -> None:
    """Add a kind to ``ajpcore check`` (one table row)."""
    CHECK_KINDS[name] = CheckKind(name, help, run)


def _check_now(args: argparse.Namespace):
    """``--now`` as an aware datetime (strict RFC 3339), else the current time."""
    from datetime import datetime, timezone

    from .timestamps import parse_timestamp

    if args.now is None:
        return datetime.now(timezone.utc)
    try:
        return parse_timestamp(args.now)
    except AjpError as exc:
        raise CliError(f"--now: {exc}") from None


def _check_secret(args: argparse.Namespace) -> Optional[bytes]:
    """The HMAC secret named by ``--secret-env``, or None when none was asked for."""
    return None if args.secret_env is None else _secret_from_env(args.secret_env)


def _print_problems(exc: ValidationError) -> int:
    """Every problem of a refused document on stderr, one ``<reason> - at `<path>``` line each; exit 1."""
    for path, reason in exc.errors:
        print(f"{reason} - at `{path}`", file=sys.stderr)
    return EXIT_INVALID


def cmd_check(args: argparse.Namespace) -> int:

    kind = CHECK_KINDS[args.kind]
    data = _read_input(args.file)
    try:
        lines = kind.run(data, args)
    except ValidationError as exc:
        return _print_problems(exc)
    except DecodeError:
        raise
    except AjpError as exc:
        for line in str(exc).split("\n"):
            print(f"ajpcore check {args.kind}: {type(exc).__name__}: {line}", file=sys.stderr)
        return EXIT_INVALID
    for line in lines:
        print(line)
    return EXIT_OK


def _check_ajp(class_name: str) -> Callable[[bytes, argparse.Namespace], List[str]]:
    """The ``check`` row of one AJP envelope: schema, acceptance rules (offers), signature."""

    def run(data: bytes, args: argparse.Namespace) -> List[str]:
        from . import ajp

        cls = getattr(ajp, class_name)
        secret = _check_secret(args)  # usage problems first (exit 2), before judging the document
        now = _check_now(args) if cls is ajp.JobOffer else None
        envelope = cls.from_json(data)
        lines = [f"valid {class_name} `{envelope.job_id}`"]
        if cls is ajp.JobOffer:
            check = ajp.validate_offer(envelope, now=now, strict=True)
            check.raise_for_errors()
            lines += [f"warning: {w}" for w in check.warnings]
        if secret is None and args.public_key is None:
            lines.append("signature: not checked (give --secret-env VAR or --public-key KEY)")
        elif cls is ajp.JobOffer:
            envelope.verify(secret=secret, public_key=args.public_key)
            lines.append("signature: valid")
        elif getattr(args, "sdk_subset", False):
            view = envelope.verify(secret=secret, public_key=args.public_key, mode="sdk")
            unsigned = ", ".join(view.unsigned_members) or "none"
            lines.append(f"signature: valid over the reference SDK's subset only; not signed: {unsigned}")
        else:
            envelope.verify(secret=secret, public_key=args.public_key)
            lines.append("signature: valid over the full body")
        return lines

    return run


register_check("offer", "an AJP JobOffer (strict acceptance rules at --now)", _check_ajp("JobOffer"))
register_check("result", "an AJP JobResult (full-body or SDK-subset signature)", _check_ajp("JobResult"))
register_check("status", "an AJP JobStatus", _check_ajp("JobStatus"))


def _add_check_parser(sub) -> None:
    p = sub.add_parser(
        "check",
        help="validate (and verify) an envelope: " + ", ".join(CHECK_KINDS),
        description="Exit 0 valid, 1 invalid or bad signature (problems on stderr with JSON paths), 2 malformed or usage.",
    )
    p.add_argument("kind", choices=sorted(CHECK_KINDS), help="envelope kind")
    _add_file(p)
    p.add_argument("--now", metavar="T", help="RFC 3339 time to judge expiry against (default: now)")
    key = p.add_mutually_exclusive_group()
    key.add_argument("--secret-env", metavar="VAR", help="verify an HMAC signature with the secret in $VAR")
    key.add_argument("--public-key", metavar="KEY", help="verify an Ed25519 signature with this public key")
    p.add_argument("--sdk-subset", action="store_true",
                   help="result/status: accept a signature over the reference SDK's subset only, listing the unsigned members")
    p.set_defaults(func=cmd_check)


def _manifest_from(data: bytes):
    from .iatp import CapabilityManifest

    return CapabilityManifest.from_json(data)


def _pinned_key(args: argparse.Namespace):
    """``--public-key`` (text or a key file) parsed up front, so a bad key is a usage error (exit 2)."""

    if getattr(args, "public_key", None) is None:
        return None
    try:
        return Ed25519PublicKey.from_string(_read_key_text(args.public_key))
    except KeyFormatError as exc:
        raise CliError(f"--public-key: {exc}") from None


def _check_manifest(data: bytes, args: argparse.Namespace) -> List[str]:
    from .iatp import spec_warnings, trust_score, verify_manifest

    if args.secret_env is not None:
        raise CliError("manifests are signed with Ed25519: use --public-key, not --secret-env")
    pinned = _pinned_key(args)
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


register_check("manifest", "IATP capability manifest", _check_manifest)


def cmd_manifest_sign(args: argparse.Namespace) -> int:
    from .iatp import sign_manifest

    key = _private_key_from_file(args.key)
    try:
        manifest = _manifest_from(_read_input(args.file))
    except ValidationError as exc:
        return _print_problems(exc)
    _write(sign_manifest(manifest, key).to_json())
    return EXIT_OK


def cmd_manifest_verify(args: argparse.Namespace) -> int:
    from .iatp import verify_manifest

    pinned = _pinned_key(args)
    try:
        manifest = _manifest_from(_read_input(args.file))
        verify_manifest(manifest, public_key=pinned)
    except ValidationError as exc:
        return _print_problems(exc)
    except SignatureError as exc:
        print(f"ajpcore manifest verify: invalid: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INVALID
    how = "the pinned key" if pinned is not None else "its claimed key"
    _write(f"valid: ed25519 manifest signature by {how} {manifest.identity.verification_key}\n".encode())
    return EXIT_OK


def _add_manifest_parser(sub) -> None:
    p = sub.add_parser("manifest", help="sign or verify an IATP capability manifest (ajpcore's iatp-manifest-v1 signature)")
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("sign", help="print the canonical manifest with its `signature` set")
    _add_file(q)
    q.add_argument("--key", metavar="FILE", required=True, help="Ed25519 private key file (base64 PKCS#8); must match identity.verification_key")
    q.set_defaults(func=cmd_manifest_sign)
    q = actions.add_parser("verify", help="check the signature against identity.verification_key: exit 0 valid, 1 invalid, 2 malformed")
    _add_file(q)
    q.add_argument("--public-key", metavar="KEY", help="also require the claimed key to be this one (base64 SPKI DER or ed25519:<base64|hex>)")
    q.set_defaults(func=cmd_manifest_verify)


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
    _add_check_parser(sub)
    _add_manifest_parser(sub)

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

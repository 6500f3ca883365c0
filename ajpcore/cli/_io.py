"""What every ``ajpcore`` command shares: exit codes, the one-line error, bounded input, keys.

Inputs are read whole, so every read is bounded: a document by ``--max-bytes``
(default 64 MiB), a key file by 64 KiB.  A key argument is either key text or the
name of a file (or ``-``) holding one key line; both spellings work everywhere.
"""

from __future__ import annotations

import argparse
import base64
import errno
import os
import sys
from contextlib import contextmanager
from importlib import resources
from typing import TYPE_CHECKING, Any, Iterator, List, Union

from .. import decode
from ..errors import KeyFormatError, WeakKey
from ..keys import PKCS8_PREFIX, SPKI_PREFIX, Ed25519PrivateKey, Ed25519PublicKey

EXIT_OK = 0
EXIT_INVALID = 1
EXIT_MALFORMED = 2

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
"""Largest document a command reads (``--max-bytes``): a bound, so ``/dev/zero`` is an error, not an OOM."""
MAX_KEY_FILE_BYTES = 64 * 1024

if TYPE_CHECKING:
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]
    """What a command group's ``add_commands`` receives: the ``ajpcore`` sub-parsers."""
else:
    Subcommands = argparse._SubParsersAction

_PRIVATE_TEXT_PREFIX = base64.b64encode(PKCS8_PREFIX).decode("ascii")[:20]
_PUBLIC_TEXT_PREFIX = base64.b64encode(SPKI_PREFIX).decode("ascii")[:16]


class CliError(Exception):
    """A usage or input problem: printed as one line ``ajpcore <command>: <message>``, exit 2 by default."""

    def __init__(self, message: str, status: int = EXIT_MALFORMED) -> None:
        super().__init__(message)
        self.status = status


def json_type_name(value: object) -> str:
    """The JSON name of a decoded value's type: ``object``, ``array``, ``string``, ``number``, ``boolean``, ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def max_bytes_arg(text: str) -> int:
    """argparse type of ``--max-bytes``: a positive byte count, optionally with a K/M/G (binary) suffix."""
    scale = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}.get(text[-1:].lower(), 1)
    digits = text[:-1] if scale != 1 else text
    if not digits.isdigit() or int(digits) == 0:
        raise argparse.ArgumentTypeError(f"expected a positive byte count such as 1048576 or 64M, got {text!r}")
    return int(digits) * scale


def add_file_argument(p: argparse.ArgumentParser) -> None:
    """The ``FILE`` positional (default: standard input) and the ``--max-bytes`` bound that goes with it."""
    p.add_argument("file", nargs="?", default="-", help="JSON document (default: standard input)")
    p.add_argument(
        "--max-bytes",
        type=max_bytes_arg,
        default=DEFAULT_MAX_BYTES,
        metavar="N",
        help="refuse a larger input (exit 2); K, M and G suffixes allowed (default: 64M)",
    )


def read_input(path: str, limit: int = DEFAULT_MAX_BYTES) -> bytes:
    """The bytes of ``path`` (``-``: standard input), at most ``limit`` of them, else CliError (exit 2)."""
    name = "standard input" if path == "-" else path
    try:
        if path == "-":
            data = sys.stdin.buffer.read(limit + 1)
        else:
            with open(path, "rb") as f:
                data = f.read(limit + 1)
    except OSError as exc:
        raise CliError(f"cannot read {name}: {exc.strerror or exc}") from None
    if len(data) > limit:
        raise CliError(f"{name} is larger than {limit} bytes (raise --max-bytes to read it)")
    return data


def read_document(args: argparse.Namespace) -> bytes:
    """The ``FILE`` argument of a command, bounded by its ``--max-bytes``."""
    limit: int = getattr(args, "max_bytes", DEFAULT_MAX_BYTES)
    return read_input(args.file, limit)


def example_bytes(name: str) -> bytes:
    """A document bundled in ``ajpcore/examples``."""
    return resources.files("ajpcore.examples").joinpath(name).read_bytes()


def load_json(data: bytes) -> Any:
    """Parse a document strictly (I-JSON); a refusal is a DecodeError, reported as one line, exit 2."""
    return decode(data)


def load_object(data: bytes) -> dict[str, Any]:
    """A document that must be a JSON object (a signed body)."""
    body = load_json(data)
    if not isinstance(body, dict):
        raise CliError(f"a signed document must be a JSON object, got {json_type_name(body)}")
    return body


_HELD: List[List[bytes]] = []
"""Open ``held_output`` blocks, innermost last: ``write`` appends to it instead of writing."""


@contextmanager
def held_output() -> Iterator[None]:
    """Hold everything ``write`` is given and write it in one piece when the block ends.

    ``main`` runs the demo so: its report (a few KB, well under a pipe's 64 KiB buffer)
    then reaches a pipe in one write, which the reader cannot close halfway, so
    ``ajpcore demo | head -c1`` exits 0 every time instead of racing head's exit.
    """
    chunks: List[bytes] = []
    _HELD.append(chunks)
    try:
        yield
    finally:
        _HELD.pop()
        if chunks:
            write(b"".join(chunks))


def complain(message: str) -> None:
    """``message`` as one line on standard error, where every command says why it failed.

    A standard error that is closed (``2>&-``), full (``2>/dev/full``) or otherwise unwritable
    is passed over, and dropped so the interpreter's exit does not try it again: the exit
    status still says what happened, and no command ends in a traceback for want of a place
    to say why.
    """
    stream = sys.stderr
    if stream is None:
        return
    try:
        print(message, file=stream, flush=True)
    except (OSError, ValueError):
        # What is left in its buffer could never be written: a sink in its place, so that neither the
        # interpreter's exit flush (exit 120) nor argparse (which reads None as stdout) tries it again.
        silence_stderr()


def silence_stderr() -> None:
    """Standard error becomes a sink (``os.devnull``): for a stream closed at start (``2>&-``, None)
    or one a write failed on."""
    sys.stderr = open(os.devnull, "w", encoding="utf-8")


def write(data: bytes) -> None:
    """Write all of ``data`` to standard output and flush (a closed pipe surfaces here, and ``main`` ends quietly).

    Inside ``held_output`` the bytes are kept for that block's single write instead.

    ``BufferedWriter.write`` returns a short count, without raising, when the reader closes
    the pipe in the middle of a large write (CPython keeps the error for the next call), so
    the rest is written until it is all out or the closed pipe raises ``BrokenPipeError``.
    """
    if _HELD:
        _HELD[-1].append(bytes(data))
        return
    if sys.stdout is None:  # started with stdout closed (`>&-`): an I/O error, as the OS would report it
        raise OSError(errno.EBADF, "standard output is closed")
    out = sys.stdout.buffer
    rest = memoryview(data)
    while rest:
        written = out.write(rest)
        if not written:  # None (a non-blocking stdout that would block) or 0: nothing went out
            raise BlockingIOError("standard output accepts no more bytes")
        rest = rest[written:]
    out.flush()


def secret_from_env(name: str) -> bytes:
    """The HMAC secret from environment variable ``name`` (raw bytes where the OS has them)."""
    if os.environ.get(name) is None:
        raise CliError(f"environment variable `{name}` is not set (it must hold the HMAC secret)")
    value = os.environb.get(name.encode(), b"") if os.supports_bytes_environ else os.environ[name].encode("utf-8")
    if not value:
        raise CliError(f"environment variable `{name}` is empty (it must hold the HMAC secret)")
    return value


def _looks_like_key_text(arg: str) -> bool:
    return arg.startswith(("ed25519:", _PRIVATE_TEXT_PREFIX, _PUBLIC_TEXT_PREFIX))


def key_text(arg: str, option: str) -> tuple[str, str]:
    """``(text, where)`` of a key argument: the text itself, or one key line read from a file or ``-``.

    A file's trailing newline (LF or CRLF) and surrounding blanks are dropped.  An
    argument that is neither an existing file nor key-shaped text is reported as the
    missing file it most likely names.
    """
    if arg != "-" and not os.path.exists(arg):
        if _looks_like_key_text(arg) or "/" not in arg and "." not in arg:
            return arg, option
        raise CliError(f"{option}: cannot read {arg}: No such file or directory")
    data = read_input(arg, MAX_KEY_FILE_BYTES)
    name = "standard input" if arg == "-" else arg
    try:
        text = data.decode("ascii").strip()
    except UnicodeDecodeError:
        raise CliError(f"{option}: {name} does not hold a key (not ASCII text)") from None
    if "\n" in text:
        raise CliError(f"{option}: {name} holds more than one line; a key file holds one key")
    return text, f"{option}: {name}"


def public_key_arg(arg: str, option: str = "--public-key") -> Ed25519PublicKey:
    """An Ed25519 public key given as text or as a key file; every problem is CliError (exit 2)."""
    text, where = key_text(arg, option)
    if text.startswith(_PRIVATE_TEXT_PREFIX):
        raise CliError(
            f"{where} is a private key (PKCS#8); give the public key instead "
            "(`ajpcore fingerprint` and `ajpcore keygen` print it)"
        )
    try:
        return Ed25519PublicKey.from_string(text)
    except KeyFormatError as exc:
        raise CliError(f"{where}: {exc}") from None


def private_key_file(path: str, option: str = "--key") -> Ed25519PrivateKey:
    """An Ed25519 private key read from a file (or ``-``): never from the command line itself."""
    if path != "-" and not os.path.exists(path):
        raise CliError(f"{option}: cannot read {path}: No such file or directory")
    text, where = key_text(path, option)
    if not text.startswith(_PRIVATE_TEXT_PREFIX) and _looks_like_key_text(text):
        raise CliError(f"{where} is a public key; signing needs the private key file (base64 PKCS#8)")
    try:
        return Ed25519PrivateKey.from_string(text)
    except KeyFormatError as exc:
        raise CliError(f"{where}: {exc}") from None


def any_key_arg(arg: str) -> Union[Ed25519PublicKey, Ed25519PrivateKey]:
    """A public or private key (text, file or ``-``), for commands that only need the public half.

    A key the strict policy refuses (``WeakKey``) is exit 1, any other problem exit 2.
    """
    text, where = key_text(arg, "key")
    try:
        if text.startswith(_PRIVATE_TEXT_PREFIX):
            return Ed25519PrivateKey.from_string(text)
        return Ed25519PublicKey.from_string(text)
    except WeakKey as exc:
        raise CliError(f"{where}: {exc}", EXIT_INVALID) from None
    except KeyFormatError as exc:
        raise CliError(f"{where}: {exc}") from None

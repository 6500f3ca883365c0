"""The ajpcore command: canonicalize, check, sign and verify documents from the shell.

Exit status: 0 success, 1 a well-formed document that fails a check (bad
signature, invalid envelope), 2 malformed input or usage (one line on stderr,
``ajpcore <command>: <problem>``), 130 interrupted, 141 output pipe closed.
No command ends in a traceback.  Secrets are read from the environment or from
files, never from the command line.

Each command group is one module with an ``add_commands(sub)`` function, listed
once in ``COMMAND_GROUPS``: adding a group is a new module and one line here.
"""

from __future__ import annotations

import argparse
import os
import sys
from contextlib import nullcontext
from types import ModuleType
from typing import Callable, List, Optional

from .. import __version__
from .._core import BACKEND, PURE_REASON, SIMD
from ..errors import AjpError
from . import _a2a, _check, _conformance, _documents, _manifest, _provenance, _signatures
from ._check import CHECK_KINDS, CheckKind, register_check
from ._io import EXIT_MALFORMED, CliError, Subcommands, complain, held_output, silence_stderr

__all__ = ["main", "build_parser", "version_text", "register_check", "CheckKind", "CHECK_KINDS", "CliError", "Subcommands"]

COMMAND_GROUPS: List[ModuleType] = [_documents, _signatures, _check, _manifest, _provenance, _conformance, _a2a]
"""Modules whose ``add_commands(sub)`` adds their subcommands, in ``--help`` order."""

HELD_COMMANDS = frozenset({"demo"})
"""Commands whose whole output is written at once at the end (``_io.held_output``): small reports
that several checks build, so a reader that stops early (``| head -c1``) always sees the same exit."""

EXIT_INTERRUPTED = 130
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a tool killed by a closed pipe

DESCRIPTION = (
    "Canonicalize, check, sign and verify AJP/IATP documents. "
    "Exit 0 success, 1 a well-formed document that fails a check, 2 malformed input or usage."
)


def version_text() -> str:
    """``ajpcore 0.2.0, native core (avx2)`` (its SIMD level) or ``ajpcore 0.2.0, pure Python core (<why>)``."""
    core = f"native core ({SIMD})" if BACKEND == "c" else f"pure Python core ({PURE_REASON})"
    return f"ajpcore {__version__}, {core}"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="ajpcore", description=DESCRIPTION)
    parser.add_argument("-V", "--version", action="version", version=version_text(), help="print the version and the core in use, then exit")
    sub: Subcommands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for group in COMMAND_GROUPS:
        group.add_commands(sub)
    return parser


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot raise again on a closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # no real stdout (embedded, captured, closed): nothing to protect
        pass


def main(argv: Optional[List[str]] = None) -> int:
    """Run the ``ajpcore`` command; returns its exit status (``argparse`` exits 2 itself on bad usage)."""
    command = "ajpcore"
    if sys.stderr is None:  # started with stderr closed (2>&-): argparse before 3.11 writes its usage error there
        silence_stderr()
    try:
        args = build_parser().parse_args(argv)
        command = f"ajpcore {args.command}"
        func: Callable[[argparse.Namespace], int] = args.func
        with held_output() if args.command in HELD_COMMANDS else nullcontext():
            return func(args)
    except CliError as exc:
        complain(f"{command}: {exc}")
        return exc.status
    except AjpError as exc:
        message = str(exc).replace("\n", "; ")
        complain(f"{command}: {message}")
        return EXIT_MALFORMED
    except BrokenPipeError:
        _quiet_stdout()
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt:
        complain(f"{command}: interrupted")
        return EXIT_INTERRUPTED
    except MemoryError:
        complain(f"{command}: out of memory (a smaller --max-bytes bounds what is read)")
        return EXIT_MALFORMED
    except RecursionError:
        complain(f"{command}: input nested too deeply for this interpreter's stack")
        return EXIT_MALFORMED
    except OSError as exc:
        complain(f"{command}: {exc.strerror or exc}")
        return EXIT_MALFORMED

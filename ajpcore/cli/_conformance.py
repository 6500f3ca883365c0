"""``ajpcore conformance run [DIR]`` and ``ajpcore conformance export DIR`` (the pack itself: ``ajpcore.conformance``).

``run`` prints one line per failing case (``FAIL <file> <id>: <what differed>``) and a
summary line; exit 0 when every case passes, 1 otherwise, 2 when the pack cannot be
read.  ``export`` writes the bundled pack's files into DIR and prints their paths.
"""

from __future__ import annotations

import argparse

from ._io import EXIT_INVALID, EXIT_OK, Subcommands, write


# ``ajpcore.conformance`` imports every protocol (ajpcore.ajp and its state backends): imported by
# the two commands that use it, so the other commands start without it (~3x faster to start).


def cmd_conformance_run(args: argparse.Namespace) -> int:
    from ..conformance import run

    report = run(args.directory)
    write("".join(f"{failure}\n" for failure in report.failures).encode("utf-8") + report.summary().encode("utf-8") + b"\n")
    return EXIT_OK if report.passed else EXIT_INVALID


def cmd_conformance_export(args: argparse.Namespace) -> int:
    from ..conformance import export

    write("".join(f"{path}\n" for path in export(args.directory)).encode("utf-8"))
    return EXIT_OK


def add_commands(sub: Subcommands) -> None:
    p = sub.add_parser("conformance", help="run the AJP conformance pack with ajpcore, or export it for another implementation")
    actions = p.add_subparsers(dest="action", required=True)
    q = actions.add_parser("run", help="check every case: one line per failing case and a summary; exit 0 all pass, 1 a case fails, 2 unreadable pack")
    q.add_argument("directory", nargs="?", default=None, metavar="DIR", help="a pack folder (default: the pack bundled with ajpcore)")
    q.set_defaults(func=cmd_conformance_run)
    q = actions.add_parser("export", help="write the bundled pack's JSON files into DIR (created if needed) and print their paths")
    q.add_argument("directory", metavar="DIR")
    q.set_defaults(func=cmd_conformance_export)

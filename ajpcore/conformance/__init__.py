"""The AJP conformance pack: plain JSON cases any implementation can run, and ajpcore's runner.

The pack is five files, each ``{"version": 1, "cases": [...]}`` (the field contract is
in the README, section "Conformance"; ``a2a.json``'s in docs/a2a.md): ``canonical.json`` (JSON text to RFC 8785 text),
``signatures.json`` (signed bodies and their verdict), ``decode.json`` (bytes an I-JSON
receiver accepts or refuses), ``envelopes.json`` (whole JobOffers and the HTTP
status a strict receiver answers) and ``a2a.json`` (A2A Agent Card payloads per
canonicalization profile, signed cards and key sets with their verdict).  The same files live in the repository's
``conformance/`` folder (made by ``conformance/generate.py``) and, for installed
copies, in this package's ``pack/`` folder; a test keeps the two identical.

``run(directory)`` checks every case with ajpcore; ``export(directory)`` writes the
bundled pack out.  ``ajpcore conformance run|export`` are the command-line forms.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ..errors import AjpError
from . import runner

__all__ = ["PACK_FILES", "PACK_VERSION", "CaseFailure", "PackError", "Report", "export", "load_pack", "run"]

PACK_VERSION = 1
PACK_FILES: Tuple[str, ...] = ("canonical.json", "signatures.json", "decode.json", "envelopes.json", "a2a.json")

_CHECKS: Dict[str, Callable[[List[Dict[str, Any]]], List[Tuple[str, str]]]] = {
    "canonical.json": runner.check_canonical,
    "signatures.json": runner.check_signatures,
    "decode.json": runner.check_decode,
    "envelopes.json": runner.check_envelopes,
    "a2a.json": runner.check_a2a,
}

PathLike = Union[str, "os.PathLike[str]"]


class PackError(AjpError, ValueError):
    """A pack file is missing, not JSON, or breaks the field contract (``- at `file`:id``)."""

    status = 500
    code = "INTERNAL"


@dataclass(frozen=True)
class CaseFailure:
    """One case ajpcore did not pass: ``file``, case ``id`` and what differed."""

    file: str
    id: str
    message: str

    def __str__(self) -> str:
        return f"FAIL {self.file} {self.id}: {self.message}"


@dataclass(frozen=True)
class Report:
    """The outcome of ``run``: cases per file and every failure, in pack order."""

    counts: Dict[str, int] = field(default_factory=dict)
    failures: List[CaseFailure] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def passed(self) -> bool:
        return not self.failures

    def summary(self) -> str:
        """One line: ``conformance: N cases, P passed, F failed (canonical.json 287, ...)``."""
        per_file = ", ".join(f"{name} {n}" for name, n in self.counts.items())
        failed = len(self.failures)
        return f"conformance: {self.total} cases, {self.total - failed} passed, {failed} failed ({per_file})"


_REQUIRED = {
    "canonical.json": ("input",),
    "signatures.json": ("body", "expect"),
    "decode.json": ("input_b64", "expect"),
    "envelopes.json": ("message_b64", "now", "expect_status"),
    "a2a.json": (),
}


def _read(directory: Optional[PathLike], name: str) -> bytes:
    try:
        if directory is None:
            return resources.files(__name__).joinpath("pack").joinpath(name).read_bytes()
        with open(os.path.join(os.fspath(directory), name), "rb") as f:
            return f.read()
    except OSError as exc:
        raise PackError(f"cannot read `{name}`: {exc.strerror or exc}") from None


def load_pack(directory: Optional[PathLike] = None) -> Dict[str, List[Dict[str, Any]]]:
    """The cases of every pack file, from ``directory`` or (None) the bundled pack.

    Checks the contract's frame: ``{"version": 1, "cases": [...]}``, each case an
    object with a unique string ``id``, a string ``why`` and its file's required
    fields.  Raises PackError naming the file and case otherwise.
    """
    pack: Dict[str, List[Dict[str, Any]]] = {}
    for name in PACK_FILES:
        data = _read(directory, name)
        try:
            doc = json.loads(data)
        except ValueError as exc:
            raise PackError(f"`{name}` is not JSON: {exc}") from None
        if not isinstance(doc, dict) or doc.get("version") != PACK_VERSION or not isinstance(doc.get("cases"), list):
            raise PackError(f'`{name}` must be {{"version": {PACK_VERSION}, "cases": [...]}}')
        seen = set()
        for i, case in enumerate(doc["cases"]):
            if not isinstance(case, dict) or not isinstance(case.get("id"), str) or not isinstance(case.get("why"), str):
                raise PackError(f"case {i} needs a string `id` and `why` - at `{name}`")
            if case["id"] in seen:
                raise PackError(f"duplicate case id - at `{name}`:{case['id']}")
            seen.add(case["id"])
            missing = [k for k in _REQUIRED[name] if k not in case]
            if missing:
                raise PackError(f"missing `{'`, `'.join(missing)}` - at `{name}`:{case['id']}")
        pack[name] = doc["cases"]
    return pack


def run(directory: Optional[PathLike] = None) -> Report:
    """Check every case of the pack in ``directory`` (None: the bundled pack) with ajpcore.

    Uses the active core twin (``ajpcore.BACKEND``; ``AJPCORE_NO_EXTENSIONS=1``
    selects the pure one).  Raises PackError when the pack cannot be read.
    """
    pack = load_pack(directory)
    report = Report()
    for name in PACK_FILES:
        cases = pack[name]
        report.counts[name] = len(cases)
        report.failures.extend(CaseFailure(name, cid, message) for cid, message in _CHECKS[name](cases))
    return report


def export(directory: PathLike) -> List[str]:
    """Write the bundled pack's files into ``directory`` (created if needed); returns the paths.

    The bytes are the bundled files' exactly.  Raises PackError when a file
    cannot be written.
    """
    target = os.fspath(directory)
    written = []
    try:
        os.makedirs(target, exist_ok=True)
        for name in PACK_FILES:
            path = os.path.join(target, name)
            with open(path, "wb") as f:
                f.write(_read(None, name))
            written.append(path)
    except OSError as exc:
        raise PackError(f"cannot write the pack to `{target}`: {exc.strerror or exc}") from None
    return written

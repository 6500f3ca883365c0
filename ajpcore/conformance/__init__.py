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

import base64
import binascii
import json
import os
import secrets
import stat
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, Callable, Dict, List, Optional, Tuple, Union

from ..errors import AjpError
from . import runner

__all__ = ["MAX_PACK_FILE_BYTES", "PACK_FILES", "PACK_VERSION", "CaseFailure", "PackError", "Report", "export", "load_pack", "run"]

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

MAX_PACK_FILE_BYTES = 32 * 1024 * 1024
"""The largest pack file ``load_pack`` reads (the bundled files are under 400 kB each)."""


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_int(value: Any) -> bool:
    return type(value) is int  # not a bool


def _is_base64(value: Any) -> bool:
    if type(value) is not str:
        return False
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return False
    return True


def _is_id_list(value: Any) -> bool:
    return type(value) is list and all(type(v) is str for v in value)


def _is_capacity(value: Any) -> bool:
    return type(value) is int and value >= 1


# What each field of a case must be: (field, check, what the contract says).  Fields a file
# does not name here are not read by the runner and may hold anything.
_STR = (_is_str, "a string")
_FIELD_TYPES: Dict[str, Dict[str, Tuple[Callable[[Any], bool], str]]] = {
    "canonical.json": {"input": _STR, "canonical": _STR, "error": _STR, "js_lax": _STR},
    "signatures.json": {"body": (lambda v: type(v) is dict, "an object"), "expect": _STR, "secret": _STR,
                        "public_key": _STR, "mode": _STR, "js_lax": _STR},
    "decode.json": {"input_b64": (_is_base64, "canonical base64 text"), "expect": _STR, "reason": _STR},
    "envelopes.json": {"message_b64": (_is_base64, "canonical base64 text"), "now": _STR,
                       "expect_status": (_is_int, "an integer"), "expect_code": _STR,
                       "follows": (_is_id_list, "an array of case ids"),
                       "replay_capacity": (_is_capacity, "a positive integer"), "secret": _STR, "public_key": _STR},
}
_OBJECT = (lambda v: type(v) is dict, "an object")
_STRINGS = (lambda v: type(v) is list and all(type(x) is str for x in v), "an array of strings")
_FIELD_TYPES["a2a.json"] = {
    "card": _OBJECT, "jwks": _OBJECT, "jwks_text": _STR, "expect": _STR, "expect_profile": _STR,
    "expect_kid": _STR, "expect_unsigned": _STRINGS, "profile": _STR, "algorithms": _STRINGS,
    "allowed_jku": _STRINGS,
    "payloads": (lambda v: type(v) is dict and all(type(x) is str for x in v.values()), "an object of strings"),
    "unsigned": (lambda v: type(v) is dict and all(_STRINGS[0](x) for x in v.values()), "an object of string arrays"),
}


def _a2a_case_shape(case: Dict[str, Any]) -> Optional[str]:
    """Why an a2a.json case has neither shape docs/a2a.md gives it, or None."""
    if "payloads" in case:
        if "card" not in case or "unsigned" not in case:
            return "a payload case has `card`, `payloads` and `unsigned`"
        if set(case["unsigned"]) != set(case["payloads"]):
            return "`unsigned` names the profiles `payloads` names"
        return None
    if "expect" not in case or ("jwks" in case) == ("jwks_text" in case):
        return "a verify case has `expect` and exactly one of `jwks` and `jwks_text`"
    return None


_CASE_SHAPES: Dict[str, Callable[[Dict[str, Any]], Optional[str]]] = {"a2a.json": _a2a_case_shape}
# Pairs of which a case holds exactly one.
_ONE_OF = {
    "canonical.json": ("canonical", "error"),
    "signatures.json": ("secret", "public_key"),
    "envelopes.json": ("secret", "public_key"),
}


def _read(directory: Optional[PathLike], name: str) -> bytes:
    """The bytes of one pack file: a regular file of at most MAX_PACK_FILE_BYTES.

    Opened without blocking (a FIFO planted as a pack file cannot hang the runner) and
    checked before reading (a link to ``/dev/zero`` or another device is refused at once).
    """
    if directory is None:
        return resources.files(__name__).joinpath("pack").joinpath(name).read_bytes()
    path = os.path.join(os.fspath(directory), name)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise PackError(f"cannot read `{name}`: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise PackError(f"cannot read `{name}`: not a regular file")
        if info.st_size > MAX_PACK_FILE_BYTES:
            raise PackError(f"cannot read `{name}`: larger than {MAX_PACK_FILE_BYTES} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(MAX_PACK_FILE_BYTES + 1)
    except OSError as exc:
        raise PackError(f"cannot read `{name}`: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_PACK_FILE_BYTES:  # it grew while being read
        raise PackError(f"cannot read `{name}`: larger than {MAX_PACK_FILE_BYTES} bytes")
    return data


def _check_fields(name: str, case: Dict[str, Any]) -> None:
    where = f"- at `{name}`:{case['id']}"
    missing = [k for k in _REQUIRED[name] if k not in case]
    if missing:
        raise PackError(f"missing `{'`, `'.join(missing)}` {where}")
    for key, (valid, what) in _FIELD_TYPES[name].items():
        if key in case and not valid(case[key]):
            raise PackError(f"`{key}` must be {what} {where}")
    pair = _ONE_OF.get(name)
    if pair is not None and (pair[0] in case) == (pair[1] in case):
        raise PackError(f"a case has exactly one of `{pair[0]}` and `{pair[1]}` {where}")
    shape = _CASE_SHAPES.get(name)
    wrong = shape(case) if shape is not None else None
    if wrong is not None:
        raise PackError(f"{wrong} {where}")


def load_pack(directory: Optional[PathLike] = None) -> Dict[str, List[Dict[str, Any]]]:
    """The cases of every pack file, from ``directory`` or (None) the bundled pack.

    Checks the contract's frame: ``{"version": 1, "cases": [...]}``, each case an
    object with a unique string ``id``, a string ``why``, its file's required
    fields, and every field the runner reads of the type the contract gives it
    (strings; ``input_b64``/``message_b64`` canonical base64; ``expect_status`` an
    integer; ``follows`` an array of ids; ``replay_capacity`` a positive integer;
    exactly one of ``canonical``/``error`` and of ``secret``/``public_key``).  A
    pack file is a regular file of at most ``MAX_PACK_FILE_BYTES``.  Raises
    PackError naming the file and case otherwise.
    """
    pack: Dict[str, List[Dict[str, Any]]] = {}
    for name in PACK_FILES:
        data = _read(directory, name)
        try:
            doc = json.loads(data)
        except (ValueError, RecursionError) as exc:  # UnicodeDecodeError is a ValueError
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
            _check_fields(name, case)
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

    The bytes are the bundled files' exactly.  Each file is written to a new temporary
    file beside its target (created exclusively, never through a link) and renamed over
    it, so a symbolic link planted in ``directory`` under a pack file's name is replaced,
    never followed: its target is left untouched.  Raises PackError when a file cannot
    be written.
    """
    target = os.fspath(directory)
    written = []
    try:
        os.makedirs(target, exist_ok=True)
        for name in PACK_FILES:
            path = os.path.join(target, name)
            _replace_file(path, _read(None, name))
            written.append(path)
    except OSError as exc:
        raise PackError(f"cannot write the pack to `{target}`: {exc.strerror or exc}") from None
    return written


def _replace_file(path: str, data: bytes) -> None:
    """Atomically make ``path`` a regular file holding ``data`` (mode 0666 less the umask)."""
    folder, base = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    for _ in range(100):
        temporary = os.path.join(folder, f".{base}.{secrets.token_hex(8)}.tmp")
        try:
            fd = os.open(temporary, flags, 0o666)
            break
        except FileExistsError:
            continue
    else:  # pragma: no cover - 100 collisions of 64 random bits
        raise FileExistsError(f"no free temporary name beside `{path}`")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)  # rename(2) replaces a link at `path`, never its target
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise

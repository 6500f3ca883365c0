"""Key continuity: the key fingerprint a receiver saw per ``provenance_id``, and rotations.

The first key seen for an id is pinned (trust on first use).  The same key
later is fine; a different one raises ``KeyRotated`` (HTTP 403, code
``KEY_ROTATED``) until ``accept_rotation`` is given a valid ``key-rotation``
notice signed by the pinned key: that moves the pin to the key the notice
vouches for and keeps the notice as the audit trail.  A chain A -> B -> C
moves one step per notice; a notice from a key the store never pinned (or no
longer pins) is refused with ``KeyRotationRefused``.

``MemoryKeyPins`` lives in the process; ``FileKeyPins`` keeps the pins in a
JSON file written atomically (temporary file, fsync, rename, fsync of the
directory), so a crash leaves either the old file or the new one, never a
torn one; a file that cannot be read back exactly raises ``KeyPinsCorrupt``,
never reads as an empty store.  Both are thread-safe within one process.
``FileKeyPins`` reads the file once, when built: two processes sharing one
file need a lock of their own (or one store each).
"""

from __future__ import annotations

import copy
import os
import re
import tempfile
import threading
from typing import Any, Dict, List, Optional, Protocol, Tuple

from .. import _core
from ..errors import (
    DecodeError,
    KeyFormatError,
    KeyPinsCorrupt,
    KeyRotated,
    KeyRotationRefused,
    KeyUsageError,
    ValidationError,
)
from ..keys import Ed25519PublicKey
from .notices import NoticeVerification, verify_notice

__all__ = ["KeyPins", "MemoryKeyPins", "FileKeyPins", "PIN_FILE_VERSION"]

PIN_FILE_VERSION = 1
"""The ``version`` member of a pin file this module writes and reads."""

_FINGERPRINT = re.compile(r"[0-9a-f]{64}")


class KeyPins(Protocol):
    """What ``ajp.verify_sender`` needs from a pin store."""

    def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> None:
        """Pin on first use; return if ``fingerprint`` is the pinned one; else raise ``KeyRotated``."""
        ...

    def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """Move a pin with a key-rotation notice signed by the pinned key, or raise ``KeyRotationRefused``."""
        ...

    def pinned(self, provenance_id: str) -> Optional[str]:
        """The fingerprint pinned for ``provenance_id``, or None."""
        ...


_Record = Dict[str, Any]  # {"fingerprint": str, "public_key": str | None, "rotations": [notice, ...]}


class _PinStore:
    """The rules both stores share; ``_commit`` makes a new state durable before it is used."""

    def __init__(self) -> None:
        self._pins: Dict[str, _Record] = {}
        self._lock = threading.Lock()

    def _commit(self, pins: Dict[str, _Record]) -> None:
        raise NotImplementedError

    def __len__(self) -> int:
        return len(self._pins)

    def pinned(self, provenance_id: str) -> Optional[str]:
        """The fingerprint pinned for ``provenance_id``, or None."""
        record = self._pins.get(provenance_id) if isinstance(provenance_id, str) else None
        return None if record is None else str(record["fingerprint"])

    def history(self, provenance_id: str) -> Tuple[Dict[str, Any], ...]:
        """The rotation notices accepted for ``provenance_id``, oldest first (copies)."""
        record = self._pins.get(provenance_id) if isinstance(provenance_id, str) else None
        return () if record is None else tuple(copy.deepcopy(n) for n in record["rotations"])

    def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> None:
        """Pin ``fingerprint`` for ``provenance_id`` on first use; accept it again later.

        ``public_key`` (optional, text or ``Ed25519PublicKey``) is the key itself:
        stored with the pin so a later rotation notice can be checked against it;
        its fingerprint must be ``fingerprint``.  Raises ``KeyRotated`` (403) when
        another key is pinned, ``ValidationError`` for an id that is not a
        non-empty string or a fingerprint that is not 64 lowercase hex digits,
        ``KeyUsageError`` when ``public_key`` does not have that fingerprint,
        ``KeyFormatError`` for a bad key, and for ``FileKeyPins`` ``OSError``
        when the file cannot be written (the pin is then not taken).
        """
        _check_id(provenance_id)
        if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
            raise ValidationError([("$.fingerprint", "must be 64 lowercase hex digits (SHA-256 of the SPKI DER)")])
        key_text = None
        if public_key is not None:
            key = public_key if isinstance(public_key, Ed25519PublicKey) else Ed25519PublicKey.from_string(public_key)
            if key.fingerprint != fingerprint:
                raise KeyUsageError("`public_key` does not have the fingerprint given")
            key_text = key.to_string()
        with self._lock:
            record = self._pins.get(provenance_id)
            if record is None:
                self._store(provenance_id, {"fingerprint": fingerprint, "public_key": key_text, "rotations": []})
                return
            if record["fingerprint"] != fingerprint:
                raise KeyRotated(provenance_id, record["fingerprint"], fingerprint)
            if key_text is not None and record["public_key"] is None:
                self._store(provenance_id, dict(record, public_key=key_text))

    def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """Move the pin of ``notice["provenance_id"]`` to the key the notice vouches for.

        The notice must be a valid ``key-rotation`` notice (``verify_notice``)
        under the key pinned for its id: the stored key, or ``public_key`` when
        the pin was taken from a fingerprint alone (its fingerprint must be the
        pinned one).  The notice is kept as the audit trail (``history``).
        Returns the notice's verification.  Raises ``KeyRotationRefused`` (403)
        for a notice that is invalid, not a rotation, signed by a key other
        than the pinned one, or for an id with no pin; ``OSError`` as ``check``.
        """
        provenance_id = notice.get("provenance_id") if isinstance(notice, dict) else None
        if not isinstance(provenance_id, str) or not provenance_id:
            raise KeyRotationRefused("the notice names no provenance_id")
        with self._lock:
            record = self._pins.get(provenance_id)
            if record is None:
                raise KeyRotationRefused(
                    f"no key is pinned for `{provenance_id}`: a rotation from a key this store never pinned is refused"
                )
            old_key: Any = record["public_key"]
            if public_key is not None:
                given = public_key if isinstance(public_key, Ed25519PublicKey) else _parse_or_refuse(public_key)
                if given.fingerprint != record["fingerprint"]:
                    raise KeyRotationRefused("`public_key` is not the pinned key")
                old_key = given
            if old_key is None:
                raise KeyRotationRefused(
                    "only the pinned key's fingerprint is stored: pass the pinned key as `public_key=`"
                )
            verification = verify_notice(notice, old_key)
            if not verification.valid:
                raise KeyRotationRefused(f"rotation notice refused under the pinned key: {verification.reason}")
            if verification.event != "key-rotation" or verification.new_public_key is None:
                raise KeyRotationRefused(f"a `{verification.event}` notice is not a key rotation")
            new_key = verification.new_public_key
            rotations: List[Any] = list(record["rotations"]) + [copy.deepcopy(notice)]
            self._store(
                provenance_id,
                {"fingerprint": new_key.fingerprint, "public_key": new_key.to_string(), "rotations": rotations},
            )
            return verification

    def _store(self, provenance_id: str, record: _Record) -> None:
        pins = dict(self._pins)
        pins[provenance_id] = record
        self._commit(pins)
        self._pins = pins


def _check_id(provenance_id: Any) -> None:
    if not isinstance(provenance_id, str) or not provenance_id:
        raise ValidationError([("$.provenance_id", "must be a non-empty string")])


def _parse_or_refuse(text: Any) -> Ed25519PublicKey:
    try:
        return Ed25519PublicKey.from_string(text)
    except KeyFormatError as exc:
        raise KeyRotationRefused(f"`public_key` is not a usable Ed25519 key: {exc}") from None


class MemoryKeyPins(_PinStore):
    """A ``KeyPins`` held in this process (lost when it exits)."""

    def _commit(self, pins: Dict[str, _Record]) -> None:
        return None

    def __repr__(self) -> str:
        return f"MemoryKeyPins({len(self._pins)} pins)"


class FileKeyPins(_PinStore):
    """A ``KeyPins`` kept in a JSON file at ``path``.

    The file is ``{"version": 1, "pins": {<provenance_id>: {"fingerprint":
    <64 hex>, "public_key": <SPKI base64> | null, "rotations": [<notice>,
    ...]}}}`` in canonical JSON.  A missing file is an empty store (created on
    the first pin).  Raises ``KeyPinsCorrupt`` when the file is not exactly
    that (invalid JSON, duplicate keys, unknown members, a key whose
    fingerprint is not the pinned one), ``OSError`` when it cannot be read.
    """

    def __init__(self, path: "os.PathLike[str] | str") -> None:
        super().__init__()
        self.path = os.fspath(path)
        self._pins = _load(self.path)

    def __repr__(self) -> str:
        return f"FileKeyPins({self.path!r}, {len(self._pins)} pins)"

    def _commit(self, pins: Dict[str, _Record]) -> None:
        data = _core.impl.canonicalize({"version": PIN_FILE_VERSION, "pins": pins}) + b"\n"
        directory = os.path.dirname(os.path.abspath(self.path))
        fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(self.path) + ".", suffix=".tmp", dir=directory)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, self.path)  # atomic on POSIX and Windows: readers see old or new, never half
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _fsync_directory(directory)


def _fsync_directory(directory: str) -> None:
    # The rename is durable only once the directory entry is on disk (POSIX); not possible on Windows.
    flags = getattr(os, "O_DIRECTORY", None)
    if flags is None:
        return
    fd = os.open(directory, os.O_RDONLY | flags)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _load(path: str) -> Dict[str, _Record]:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        return {}
    try:
        doc = _core.impl.decode(data)
    except DecodeError as exc:
        raise KeyPinsCorrupt(f"pin file `{path}` is not strict JSON: {exc}") from None

    def corrupt(why: str) -> KeyPinsCorrupt:
        return KeyPinsCorrupt(f"pin file `{path}` is corrupt: {why}")

    if not isinstance(doc, dict) or set(doc) != {"version", "pins"}:
        raise corrupt('expected exactly the members "version" and "pins"')
    if type(doc["version"]) is not int or doc["version"] != PIN_FILE_VERSION:
        raise corrupt(f"unknown version (this reader knows {PIN_FILE_VERSION})")
    if not isinstance(doc["pins"], dict):
        raise corrupt('"pins" is not an object')
    pins: Dict[str, _Record] = {}
    for pid, record in doc["pins"].items():
        if not pid or not isinstance(record, dict) or set(record) != {"fingerprint", "public_key", "rotations"}:
            raise corrupt(f"pin for {pid!r} is not {{fingerprint, public_key, rotations}}")
        fingerprint, key_text, rotations = record["fingerprint"], record["public_key"], record["rotations"]
        if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
            raise corrupt(f"pin for {pid!r} has a malformed fingerprint")
        if key_text is not None:
            try:
                key = Ed25519PublicKey.from_string(key_text)
            except KeyFormatError:
                raise corrupt(f"pin for {pid!r} has a malformed public key") from None
            if key.fingerprint != fingerprint:
                raise corrupt(f"pin for {pid!r} stores a key whose fingerprint is not the pinned one")
        if not isinstance(rotations, list) or not all(isinstance(n, dict) for n in rotations):
            raise corrupt(f"pin for {pid!r} has malformed rotations")
        pins[pid] = {"fingerprint": fingerprint, "public_key": key_text, "rotations": rotations}
    return pins

"""Key continuity: the key fingerprint a receiver saw per ``provenance_id``, and rotations.

The first key seen for an id is pinned (trust on first use).  The same key
later is fine; a different one raises ``KeyRotated`` (HTTP 403, code
``KEY_ROTATED``) until ``accept_rotation`` is given a valid ``key-rotation``
notice signed by the pinned key: that moves the pin to the key the notice
vouches for and keeps the notice as the audit trail.  A chain A -> B -> C
moves one step per notice; a notice from a key the store never pinned (or no
longer pins) is refused with ``KeyRotationRefused``.

A rotation moves a pin forward only: a notice whose ``id`` is already in the
id's history, or whose ``issued_at`` is not after the last accepted
rotation's, is refused (so K1 -> K2, K2 -> K1 cannot be followed by a replay
of the first notice moving the pin back to the retired K2).

This module holds the rules every store shares (pure functions of the current
record), the synchronous and asyncio bases of the stores (``_PinStore``,
``_AsyncPinStore``: every method over one ``_read`` and one atomic
``_update``) and ``MemoryKeyPins``, which lives in the process.
``FileKeyPins`` (``_pins_file``) keeps the pins in a JSON file written
atomically; ``SQLiteKeyPins`` and ``RedisKeyPins`` (and their asyncio twins)
share pins across processes and hosts; a first use and a rotation are atomic
in each (a lock, a file lock, a transaction, a compare-and-set).
"""

from __future__ import annotations

import copy
import re
import threading
from typing import Any, Callable, Dict, List, Optional, Protocol, Tuple, TypeVar

from .. import _core
from ..errors import (
    DecodeError,
    KeyFormatError,
    KeyRotated,
    KeyRotationRefused,
    KeyUsageError,
    StateUnavailable,
    ValidationError,
)
from ..keys import Ed25519PublicKey
from ..timestamps import _micros_or_none
from .notices import NoticeVerification, verify_notice

__all__ = ["KeyPins", "AsyncKeyPins", "MemoryKeyPins"]

_FINGERPRINT = re.compile(r"[0-9a-f]{64}")
T = TypeVar("T")


class KeyPins(Protocol):
    """What ``ajp.verify_sender`` needs from a pin store.

    Every store raises ``StateUnavailable`` (HTTP 503) when its storage cannot
    answer; never a pin it could not make durable.  ``blocking`` (class
    attribute): True when the methods wait on I/O (``FileKeyPins``,
    ``SQLiteKeyPins``, ``RedisKeyPins``), so an asyncio receiver runs them in a
    worker thread; False for ``MemoryKeyPins``.  The asyncio twins
    (``AsyncSQLiteKeyPins``, ``AsyncRedisKeyPins``) are ``AsyncKeyPins``.
    """

    blocking: bool

    def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> Optional[bool]:
        """Pin on first use (True: this call took the pin); False if ``fingerprint`` is the pinned one;
        else raise ``KeyRotated``.  (A store of before 0.6 answers None, read as False.)"""
        ...

    def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """Move a pin with a key-rotation notice signed by the pinned key, or raise ``KeyRotationRefused``."""
        ...

    def pinned(self, provenance_id: str) -> Optional[str]:
        """The fingerprint pinned for ``provenance_id``, or None."""
        ...


class AsyncKeyPins(Protocol):
    """The asyncio twin of ``KeyPins``: the same methods as coroutines, the same outcomes."""

    blocking: bool

    async def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> Optional[bool]: ...

    async def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification: ...

    async def pinned(self, provenance_id: str) -> Optional[str]: ...


_Record = Dict[str, Any]  # {"fingerprint": str, "public_key": str | None, "rotations": [notice, ...]}
_Decision = Tuple[Optional[_Record], T]  # (the record to store, or None for no change; the answer)


# -- the rules every store shares: pure functions of the current record -------------------------


def _check_id(provenance_id: Any) -> None:
    if not isinstance(provenance_id, str) or not provenance_id:
        raise ValidationError([("$.provenance_id", "must be a non-empty string")])


def _parse_or_refuse(text: Any) -> Ed25519PublicKey:
    try:
        return Ed25519PublicKey.from_string(text)
    except KeyFormatError as exc:
        raise KeyRotationRefused(f"`public_key` is not a usable Ed25519 key: {exc}") from None


def check_arguments(provenance_id: Any, fingerprint: Any, public_key: Any) -> Optional[str]:
    """Validate ``check``'s arguments; the key's text form (or None). Raises as ``KeyPins.check``."""
    _check_id(provenance_id)
    if not isinstance(fingerprint, str) or not _FINGERPRINT.fullmatch(fingerprint):
        raise ValidationError([("$.fingerprint", "must be 64 lowercase hex digits (SHA-256 of the SPKI DER)")])
    if public_key is None:
        return None
    key = public_key if isinstance(public_key, Ed25519PublicKey) else Ed25519PublicKey.from_string(public_key)
    if key.fingerprint != fingerprint:
        raise KeyUsageError("`public_key` does not have the fingerprint given")
    return key.to_string()


def decide_check(
    provenance_id: str, record: Optional[_Record], fingerprint: str, key_text: Optional[str]
) -> _Decision[bool]:
    """First use pins (answer True); the pinned key passes (storing its key when only its fingerprint was;
    answer False); else ``KeyRotated``."""
    if record is None:
        return {"fingerprint": fingerprint, "public_key": key_text, "rotations": []}, True
    if record["fingerprint"] != fingerprint:
        raise KeyRotated(provenance_id, record["fingerprint"], fingerprint)
    if key_text is not None and record["public_key"] is None:
        return dict(record, public_key=key_text), False
    return None, False


def rotation_id(notice: Any) -> str:
    """The provenance id a rotation notice is for; ``KeyRotationRefused`` when it names none."""
    provenance_id = notice.get("provenance_id") if isinstance(notice, dict) else None
    if not isinstance(provenance_id, str) or not provenance_id:
        raise KeyRotationRefused("the notice names no provenance_id")
    return provenance_id


def decide_rotation(
    provenance_id: str, record: Optional[_Record], notice: Any, public_key: Any
) -> _Decision[NoticeVerification]:
    """The record a valid rotation moves the pin to, with the notice's verification; else ``KeyRotationRefused``."""
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
        raise KeyRotationRefused("only the pinned key's fingerprint is stored: pass the pinned key as `public_key=`")
    verification = verify_notice(notice, old_key)
    if not verification.valid:
        raise KeyRotationRefused(f"rotation notice refused under the pinned key: {verification.reason}")
    if verification.event != "key-rotation" or verification.new_public_key is None:
        raise KeyRotationRefused(f"a `{verification.event}` notice is not a key rotation")
    history: List[Any] = list(record["rotations"])
    if any(isinstance(n, dict) and n.get("id") == notice.get("id") for n in history):
        raise KeyRotationRefused(f"rotation notice `{notice.get('id')}` was already accepted: a replay cannot move the pin")
    issued = _micros_or_none(notice.get("issued_at"))
    last = max((_micros_or_none(n.get("issued_at")) or 0 for n in history if isinstance(n, dict)), default=None)
    if issued is None or (last is not None and issued <= last):
        raise KeyRotationRefused(
            "rotation notice is not issued after the last accepted rotation: an older notice cannot move the pin"
        )
    new_key = verification.new_public_key
    return {
        "fingerprint": new_key.fingerprint,
        "public_key": new_key.to_string(),
        "rotations": history + [copy.deepcopy(notice)],
    }, verification


def parse_record(provenance_id: Any, record: Any, corrupt: Callable[[str], Exception]) -> _Record:
    """A stored record checked exactly (``corrupt(why)`` raised otherwise): shape, fingerprint, key."""
    pid = provenance_id
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
    return {"fingerprint": fingerprint, "public_key": key_text, "rotations": rotations}


def stored_record(provenance_id: str, text: Any, store: str) -> Optional[_Record]:
    """A pin as a shared store holds it (canonical JSON, or None when absent), read back exactly.

    A stored value that is not exactly a pin is ``StateUnavailable`` naming ``store``: a shared
    store never reads a damaged pin as "no pin" (which would be a first use again).
    """
    if text is None:
        return None

    def corrupt(why: str) -> StateUnavailable:
        return StateUnavailable(f"{store}: the stored pin for {provenance_id!r} is corrupt: {why}")

    try:
        doc = _core.impl.decode(text)
    except DecodeError as exc:
        raise corrupt(f"not strict JSON: {exc}") from None
    return parse_record(provenance_id, doc, corrupt)


# -- stores ---------------------------------------------------------------------------------


class _PinStore:
    """The methods every synchronous store shares, over ``_read`` (one record) and ``_update``.

    ``_update(provenance_id, decide)`` runs ``decide(current record)`` and stores
    the record it returns atomically with having read it: under a lock, a file
    lock, a transaction or a compare-and-set, so two writers never both decide
    on the same old record.
    """

    blocking = True

    def _read(self, provenance_id: str) -> Optional[_Record]:
        raise NotImplementedError

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        raise NotImplementedError

    def pinned(self, provenance_id: str) -> Optional[str]:
        """The fingerprint pinned for ``provenance_id``, or None."""
        record = self._read(provenance_id) if isinstance(provenance_id, str) and provenance_id else None
        return None if record is None else str(record["fingerprint"])

    def history(self, provenance_id: str) -> Tuple[Dict[str, Any], ...]:
        """The rotation notices accepted for ``provenance_id``, oldest first (copies)."""
        record = self._read(provenance_id) if isinstance(provenance_id, str) and provenance_id else None
        return () if record is None else tuple(copy.deepcopy(n) for n in record["rotations"])

    def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> bool:
        """Pin ``fingerprint`` for ``provenance_id`` on first use (True); accept it again later (False).

        ``public_key`` (optional, text or ``Ed25519PublicKey``) is the key itself:
        stored with the pin so a later rotation notice can be checked against it;
        its fingerprint must be ``fingerprint``.  Raises ``KeyRotated`` (403) when
        another key is pinned, ``ValidationError`` for an id that is not a
        non-empty string or a fingerprint that is not 64 lowercase hex digits,
        ``KeyUsageError`` when ``public_key`` does not have that fingerprint,
        ``KeyFormatError`` for a bad key, and ``StateUnavailable`` (503, also an
        ``OSError``) when the store cannot be read or written (the pin is then
        not taken).
        """
        key_text = check_arguments(provenance_id, fingerprint, public_key)
        if decide_check(provenance_id, self._read(provenance_id), fingerprint, key_text)[0] is None:
            return False  # the pinned key, nothing to store (a fresh read: a rotation elsewhere is seen)
        return self._update(provenance_id, lambda record: decide_check(provenance_id, record, fingerprint, key_text))

    def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """Move the pin of ``notice["provenance_id"]`` to the key the notice vouches for.

        The notice must be a valid ``key-rotation`` notice (``verify_notice``)
        under the key pinned for its id: the stored key, or ``public_key`` when
        the pin was taken from a fingerprint alone (its fingerprint must be the
        pinned one); its ``id`` must not be in the history already, and its
        ``issued_at`` must be after the last accepted rotation's.  The notice is
        kept as the audit trail (``history``).  Returns the notice's
        verification.  Raises ``KeyRotationRefused`` (403) for a notice that is
        invalid, not a rotation, signed by a key other than the pinned one, a
        replay or older than the last rotation, or for an id with no pin;
        ``StateUnavailable`` as ``check``.
        """
        provenance_id = rotation_id(notice)
        return self._update(provenance_id, lambda record: decide_rotation(provenance_id, record, notice, public_key))


class _AsyncPinStore:
    """The asyncio twin of ``_PinStore``: the same methods as coroutines, over async ``_read`` and ``_update``.

    The one base of the asyncio stores (``AsyncSQLiteKeyPins``, ``AsyncRedisKeyPins``), so their
    methods mean what the synchronous ones mean (the rules are the same pure functions).
    """

    blocking = False

    async def _read(self, provenance_id: str) -> Optional[_Record]:
        raise NotImplementedError

    async def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        raise NotImplementedError

    async def pinned(self, provenance_id: str) -> Optional[str]:
        """``_PinStore.pinned``, awaited."""
        record = await self._read(provenance_id) if isinstance(provenance_id, str) and provenance_id else None
        return None if record is None else str(record["fingerprint"])

    async def history(self, provenance_id: str) -> Tuple[Dict[str, Any], ...]:
        """``_PinStore.history``, awaited."""
        record = await self._read(provenance_id) if isinstance(provenance_id, str) and provenance_id else None
        return () if record is None else tuple(copy.deepcopy(n) for n in record["rotations"])

    async def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> bool:
        """``_PinStore.check``, awaited."""
        key_text = check_arguments(provenance_id, fingerprint, public_key)
        if decide_check(provenance_id, await self._read(provenance_id), fingerprint, key_text)[0] is None:
            return False
        return await self._update(provenance_id, lambda record: decide_check(provenance_id, record, fingerprint, key_text))

    async def accept_rotation(self, notice: Any, *, public_key: Any = None) -> NoticeVerification:
        """``_PinStore.accept_rotation``, awaited."""
        provenance_id = rotation_id(notice)
        return await self._update(
            provenance_id, lambda record: decide_rotation(provenance_id, record, notice, public_key)
        )


class MemoryKeyPins(_PinStore):
    """A ``KeyPins`` held in this process (lost when it exits); thread-safe."""

    blocking = False

    def __init__(self) -> None:
        self._pins: Dict[str, _Record] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._pins)

    def __repr__(self) -> str:
        return f"MemoryKeyPins({len(self._pins)} pins)"

    def check(self, provenance_id: str, fingerprint: str, public_key: Any = None) -> bool:
        """See ``_PinStore.check``; the usual call (the pinned key again, given as an ``Ed25519PublicKey``,
        whose text the pin holds) is answered from one read, with no change to store."""
        record = self._pins.get(provenance_id) if type(provenance_id) is str else None
        if (
            record is not None
            and type(fingerprint) is str
            and record["fingerprint"] == fingerprint
            and record["public_key"] is not None
            and type(public_key) is Ed25519PublicKey
            and public_key.fingerprint == fingerprint
        ):
            return False  # every argument check holds (the record's were checked when pinned); decide_check: no change
        return super().check(provenance_id, fingerprint, public_key)

    def _read(self, provenance_id: str) -> Optional[_Record]:
        return self._pins.get(provenance_id)

    def _update(self, provenance_id: str, decide: Callable[[Optional[_Record]], _Decision[T]]) -> T:
        with self._lock:
            record, answer = decide(self._pins.get(provenance_id))
            if record is not None:
                pins = dict(self._pins)
                pins[provenance_id] = record
                self._pins = pins
            return answer

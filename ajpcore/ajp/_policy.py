"""What a receiver is configured with: who it is and what it requires of senders.

The explicit values (``ANY_RECIPIENT``, ``SPEC_CAPABILITIES``) and the checks that turn a
host's ``recipient=`` and ``require_capabilities=`` into what the receive pipeline
(``_pipeline.py``) reads, once per policy: ``receive_offer`` per call, ``Receiver`` when
it is built.
"""

from __future__ import annotations

from typing import Any, Collection, FrozenSet, Optional, Sequence, Tuple, Union

from ._replay import AsyncReplayGuard, ReplayGuard
from ._sender import DELEGATION_CAPABILITY, _wanted

__all__ = [
    "ANY_RECIPIENT", "SPEC_CAPABILITIES", "NO_REPLAY_GUARD", "DEFAULT_MAX_BODY_BYTES", "Recipients", "Capabilities",
    "Guard",
]


class _Sentinel:
    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:
        return self._name.rsplit(".", 1)[-1]


class _AnyRecipient(_Sentinel):
    __slots__ = ()


class _SpecCapabilities(_Sentinel):
    __slots__ = ()


class _NoReplayGuard(_Sentinel):
    __slots__ = ()


ANY_RECIPIENT = _AnyRecipient("ajp.ANY_RECIPIENT")
"""``recipient=ANY_RECIPIENT`` accepts offers whatever their ``to.provenance_id`` (a relay that means it)."""

SPEC_CAPABILITIES = _SpecCapabilities("ajp.SPEC_CAPABILITIES")
"""The default of ``require_capabilities``: the AJP specification's rule, ``delegate:agents`` of every
agent and orchestrator sender (an agent hiring an agent must declare it); nothing of a human sender.
``require_capabilities=()`` opts out; a list of capabilities replaces the rule for agents."""

NO_REPLAY_GUARD = _NoReplayGuard("ajp.NO_REPLAY_GUARD")
"""``replay_guard=NO_REPLAY_GUARD``: this receiver keeps no record of accepted offers, so it accepts (and
its host runs) every re-send of one until it expires.  Only for a host that refuses replays elsewhere
(its job store's unique key on the sender's replay identity and ``job_id``, say) and means it."""

DEFAULT_MAX_BODY_BYTES = 1 << 20
"""The default bound on a request body (1 MiB): a larger one is refused (413) before any decoding."""

Recipients = Union[str, Collection[str], _AnyRecipient]
"""Who a receiver is: one ``provenance_id``, a collection of them, or ``ANY_RECIPIENT``."""
Capabilities = Union[str, Sequence[str], _SpecCapabilities]
"""``require_capabilities``: ``SPEC_CAPABILITIES`` (the default), one capability, or a sequence of them."""
Guard = Union[ReplayGuard, AsyncReplayGuard, _NoReplayGuard]
"""``replay_guard``: a replay guard of any backend, or ``NO_REPLAY_GUARD``."""

_SPEC_RULE = (DELEGATION_CAPABILITY,)


def _recipients(recipient: Any) -> Optional[FrozenSet[str]]:
    """The receiver's own ids (None: any), checked once when the policy is configured."""
    if recipient is ANY_RECIPIENT:
        return None
    if isinstance(recipient, str):
        ids: FrozenSet[Any] = frozenset((recipient,))
    elif isinstance(recipient, (bytes, bytearray, memoryview)) or not isinstance(recipient, Collection):
        raise TypeError(
            f"recipient must be a provenance id, a collection of them or ajp.ANY_RECIPIENT, got `{type(recipient).__name__}`"
        )
    else:
        ids = frozenset(recipient)
    if not ids:
        raise ValueError("recipient is empty: give this receiver's provenance id(s), or ajp.ANY_RECIPIENT")
    for one in ids:
        if not isinstance(one, str) or not one:
            raise TypeError(f"recipient ids must be non-empty strings, got {one!r}")
    return ids


def _capability_rule(require_capabilities: Any) -> Optional[Tuple[str, ...]]:
    """None for the specification's rule (decided per sender type), else the explicit tuple."""
    if require_capabilities is SPEC_CAPABILITIES:
        return None
    return _wanted(require_capabilities)


def _required(rule: Optional[Tuple[str, ...]], sender_type: str) -> Tuple[str, ...]:
    """The capabilities a sender of ``sender_type`` must declare under ``rule`` (none of a human)."""
    if rule is not None:
        return rule if sender_type != "human" else ()
    return _SPEC_RULE if sender_type != "human" else ()


def _replay_guard(replay_guard: Any) -> Any:
    """``replay_guard`` as given, once checked: a guard (an object with an ``admit`` method) or
    ``NO_REPLAY_GUARD``; None (the former default, which kept no record) is refused."""
    if replay_guard is NO_REPLAY_GUARD:
        return replay_guard
    if replay_guard is None:
        raise TypeError(
            "replay_guard is required: give a replay guard (ajp.MemoryReplayGuard(), SQLiteReplayGuard, "
            "RedisReplayGuard...) or, to accept every re-send because replays are refused elsewhere, "
            "ajp.NO_REPLAY_GUARD"
        )
    if not callable(getattr(replay_guard, "admit", None)):
        raise TypeError(f"replay_guard must have an `admit` method (a ReplayGuard), got `{type(replay_guard).__name__}`")
    return replay_guard


def _max_body_bytes(max_body_bytes: Any) -> int:
    """The body bound as given, once checked: an int >= 1."""
    if isinstance(max_body_bytes, bool) or not isinstance(max_body_bytes, int):
        raise TypeError(f"max_body_bytes must be an int (bytes), got `{type(max_body_bytes).__name__}`")
    if max_body_bytes < 1:
        raise ValueError("max_body_bytes must be at least 1")
    return max_body_bytes

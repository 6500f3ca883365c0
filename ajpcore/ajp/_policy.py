"""What a receiver is configured with: who it is and what it requires of senders.

The explicit values (``ANY_RECIPIENT``, ``SPEC_CAPABILITIES``) and the checks that turn a
host's ``recipient=`` and ``require_capabilities=`` into what the receive pipeline
(``_pipeline.py``) reads, once per policy: ``receive_offer`` per call, ``Receiver`` when
it is built.
"""

from __future__ import annotations

from typing import Any, Collection, FrozenSet, Optional, Sequence, Tuple, Union

from ._sender import DELEGATION_CAPABILITY, _wanted

__all__ = ["ANY_RECIPIENT", "SPEC_CAPABILITIES", "Recipients", "Capabilities"]


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


ANY_RECIPIENT = _AnyRecipient("ajp.ANY_RECIPIENT")
"""``recipient=ANY_RECIPIENT`` accepts offers whatever their ``to.provenance_id`` (a relay that means it)."""

SPEC_CAPABILITIES = _SpecCapabilities("ajp.SPEC_CAPABILITIES")
"""The default of ``require_capabilities``: the AJP specification's rule, ``delegate:agents`` of every
agent and orchestrator sender (an agent hiring an agent must declare it); nothing of a human sender.
``require_capabilities=()`` opts out; a list of capabilities replaces the rule for agents."""

Recipients = Union[str, Collection[str], _AnyRecipient]
"""Who a receiver is: one ``provenance_id``, a collection of them, or ``ANY_RECIPIENT``."""
Capabilities = Union[str, Sequence[str], _SpecCapabilities]
"""``require_capabilities``: ``SPEC_CAPABILITIES`` (the default), one capability, or a sequence of them."""

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

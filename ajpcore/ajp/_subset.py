"""What ``verify(mode="sdk")`` of a result or status vouches for: the reference SDK's signed subset."""

from __future__ import annotations

from typing import Any, ClassVar, Dict, Generic, List, Optional, Tuple, TypeVar

from .._envelope import Envelope
from .._jsoncopy import copy_json

__all__ = ["SignedSubset"]

_Received = TypeVar("_Received", bound=Envelope)
"""The envelope a subset was verified from (``JobResult`` or ``JobStatus``): a parameter, so
this module needs no import of ``_messages``, which imports it (no typing circle)."""

_SDK_SIGNED_TOP = frozenset(("job_id", "status", "output", "constraints_asserted", "completed_at", "agent", "signature"))


def _pointer(*steps: str) -> str:
    # RFC 6901: `~` is written `~0`, `/` is written `~1`.
    return "".join("/" + step.replace("~", "~0").replace("/", "~1") for step in steps)


class SignedSubset(Generic[_Received]):
    """What ``JobResult.verify(mode="sdk")`` (or ``JobStatus``'s) vouches for: the reference SDK's subset.

    - ``to_dict()``: only the signed members, as signed: ``job_id``, ``status``,
      ``output``, ``constraints_asserted``, ``completed_at`` (each when received)
      and ``agent`` as ``{"provenance_id": ...}``, plus ``signature``, so the
      dict verifies again under ``ajpcore.verify``.  A fresh copy.
    - ``to_dict(include_unsigned=True)``: the whole received body, a fresh copy.
    - ``unsigned_members``: every received member the signature does not cover,
      as RFC 6901 JSON Pointers in the body's order; a pointer to an object
      stands for its whole subtree: e.g. ``("/ajp", "/usage", "/agent/version",
      "/agent/model")``.
    - ``job_id``, ``status``, ``output``, ``constraints_asserted``,
      ``completed_at``, ``provenance_id``: the signed values (None when absent).
    - ``received``: the envelope as received, unsigned members included.
    """

    __slots__ = ("received", "unsigned_members", "_subset")
    mode: ClassVar[str] = "sdk"
    received: _Received
    unsigned_members: Tuple[str, ...]
    _subset: Dict[str, Any]

    def __init__(self, received: _Received, body: Dict[str, Any], subset: Dict[str, Any]) -> None:
        """``body``: the received body of ``received``; ``subset``: what the signature covers (as verified)."""
        unsigned: List[str] = []
        for key, value in body.items():
            if key not in _SDK_SIGNED_TOP:
                unsigned.append(_pointer(key))
            elif key == "agent":
                if isinstance(value, dict):
                    unsigned.extend(_pointer("agent", k) for k in value if k != "provenance_id")
                else:
                    unsigned.append(_pointer("agent"))
        object.__setattr__(self, "received", received)
        object.__setattr__(self, "unsigned_members", tuple(unsigned))
        object.__setattr__(self, "_subset", subset)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("`SignedSubset` is frozen")

    def __repr__(self) -> str:
        return f"SignedSubset(job_id={self.job_id!r}, unsigned_members={self.unsigned_members!r})"

    def to_dict(self, *, include_unsigned: bool = False) -> Dict[str, Any]:
        """The signed members only (default), or the whole received body; a fresh JSON value."""
        whole: Dict[str, Any] = self.received.to_dict() if include_unsigned else copy_json(self._subset)
        return whole

    @property
    def job_id(self) -> Optional[str]:
        value: Optional[str] = self._subset.get("job_id")
        return value

    @property
    def status(self) -> Optional[str]:
        value: Optional[str] = self._subset.get("status")
        return value

    @property
    def output(self) -> Any:
        return self._subset.get("output")

    @property
    def constraints_asserted(self) -> Optional[List[str]]:
        value: Optional[List[str]] = self._subset.get("constraints_asserted")
        return value

    @property
    def completed_at(self) -> Optional[str]:
        value: Optional[str] = self._subset.get("completed_at")
        return value

    @property
    def provenance_id(self) -> Optional[str]:
        value: Optional[str] = self._subset["agent"].get("provenance_id")
        return value

"""Number formatting (RFC 8785 §3.2.2.3): twin of ``native/number_format.pxi``.

The pure twin's number text is the rule itself: ``_format_double`` (ECMAScript's
``Number::toString``) and ``_format_int`` (the int rule beyond 2**53) live in
``ajpcore._core_rules``, below both twins, because the native core applies that
int rule on its rare path and the decoder's big-int rule is built on it.
"""

from __future__ import annotations

from .._core_rules import _format_double as _format_double
from .._core_rules import _format_int as _format_int

"""The enumerations of the IATP schemas, and ``ABSENT`` (a member absent where None is JSON null)."""

from __future__ import annotations

import enum

from .._envelope import ABSENT as ABSENT, _Absent as _Absent  # absent, where None is JSON null



# ---------------------------------------------------------------------------
# Enumerations of the schema
# ---------------------------------------------------------------------------


class TrustLevel(str, enum.Enum):
    """``trust_level``: the trust class an agent claims (IATP-001 section 3.2)."""

    VERIFIED_PARTNER = "verified_partner"
    TRUSTED = "trusted"
    STANDARD = "standard"
    UNKNOWN = "unknown"
    UNTRUSTED = "untrusted"


class ReversibilityLevel(str, enum.Enum):
    """``reversibility.level`` (IATP-002 section 2)."""

    FULL = "full"
    PARTIAL = "partial"
    NONE = "none"


class CompensationMethod(str, enum.Enum):
    """The standard compensation methods of IATP-002 section 3.1 (``custom:<name>`` is the other form)."""

    ROLLBACK = "rollback"
    DELETE = "delete"
    REFUND = "refund"
    REFUND_MINUS_FEE = "refund_minus_fee"
    COMPENSATING_TRANSACTION = "compensating_transaction"
    MANUAL_INTERVENTION = "manual_intervention"
    BEST_EFFORT = "best_effort"


class RetentionPolicy(str, enum.Enum):
    """``privacy.retention_policy``; ``temporary`` when absent."""

    EPHEMERAL = "ephemeral"
    TEMPORARY = "temporary"
    PERMANENT = "permanent"
    FOREVER = "forever"


class AuthMethod(str, enum.Enum):
    """An item of ``authentication.methods``."""

    NONE = "none"
    API_KEY = "api_key"
    OAUTH2 = "oauth2"
    MUTUAL_TLS = "mutual_tls"
    JWT = "jwt"


class ChainStatus(str, enum.Enum):
    """Where one transaction of a compensation chain stands (IATP-002 sections 5.2, 6.2)."""

    PENDING = "pending"
    COMPLETED = "completed"
    COMPENSATED = "compensated"
    FAILED = "failed"

"""Per-tenant API Gateway usage plans: which API key a tenant's requests are counted against.

The REST API takes its API keys from the authorizer (``apiKeySource: AUTHORIZER``): clients never
send one, the authorizer answers each request with the tenant's ``usageIdentifierKey``, and API
Gateway throttles and meters it against the usage plan that key belongs to (one plan per
subscription plan: ``<prefix>-free``, ``<prefix>-pro``, ...). So one tenant can no longer use up
the whole stage's rate.

The key's value is derived from the stage prefix and the tenant id, not stored: a value API
Gateway only ever takes from the authorizer is an identifier, not a credential.
"""

from __future__ import annotations

import hashlib


def usage_key(prefix: str, tenant_id: str) -> str:
    """The value of ``tenant_id``'s API Gateway API key in the stage ``prefix`` (44 characters)."""
    return "amu_" + hashlib.sha256(f"{prefix}\x00{tenant_id}".encode()).hexdigest()[:40]


def usage_key_name(prefix: str, tenant_id: str) -> str:
    """The API key's name, which the keys CLI finds it by."""
    return f"{prefix}-tenant-{tenant_id}"


def usage_plan_name(prefix: str, plan: str) -> str:
    return f"{prefix}-{plan}"

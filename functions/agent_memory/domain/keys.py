"""API keys: how they look and how they are stored (hashed, never in the clear).

A key is ``amk_`` followed by 43 URL-safe random characters (256 bits). Stores keep only its
SHA-256, so a leaked table cannot be replayed. The same hashing serves the local runtime and the
Lambda authorizer. `ports.KeyStore` is what both stores offer, `KeyInfo` what they list.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass

KEY_PREFIX = "amk_"


def new_api_key() -> str:
    return KEY_PREFIX + secrets.token_urlsafe(32)


def hash_api_key(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def new_key_id() -> str:
    return "key_" + secrets.token_hex(6)


def bearer_token(header: str | None) -> str | None:
    """The key from an ``Authorization: Bearer <key>`` header (the scheme is case-insensitive)."""
    if not header:
        return None
    scheme, _, token = header.strip().partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


@dataclass(frozen=True, slots=True)
class KeyInfo:
    """What a key store shows about a key: never the key, nor its hash.

    ``scopes`` and ``agents`` are space-separated, as they travel in the authorizer context.
    """

    key_id: str
    tenant_id: str
    plan: str
    scopes: str
    agents: str
    created_at: str
    revoked_at: str | None

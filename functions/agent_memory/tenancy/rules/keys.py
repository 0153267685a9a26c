"""API keys: how they look and how they are stored (hashed, never in the clear).

A key is ``amk_`` followed by 43 URL-safe random characters (256 bits). Stores keep only its
SHA-256, so a leaked table cannot be replayed. The same hashing serves the local runtime and the
Lambda authorizer. `ports.KeyStore` is what both stores offer, `KeyInfo` what they list.
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from datetime import datetime

from agent_memory.model.caller import ADMIN_SCOPE, DEFAULT_SCOPES

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


@dataclass(frozen=True, slots=True)
class IssuedKey:
    """A key as a store keeps it (``info`` and ``key_hash``), and the key itself, which the
    store never keeps: it is shown once to whoever created it."""

    key: str
    key_hash: str
    info: KeyInfo


@dataclass(frozen=True, slots=True)
class NewKey:
    """A key to create: whose, on which plan, for which agents (none: every agent) and scopes.

    ``admin`` adds the admin scope; ``key`` registers a given key (the development key) instead
    of a new random one. Both stores issue keys through `issue`, so they cannot differ on how a
    key's scopes and agents are written down.
    """

    tenant_id: str
    plan: str
    admin: bool = False
    agents: frozenset[str] = frozenset()
    key: str | None = None
    scopes: frozenset[str] = DEFAULT_SCOPES

    def issue(self, now: datetime) -> IssuedKey:
        key = self.key or new_api_key()
        scopes = set(self.scopes) | ({ADMIN_SCOPE} if self.admin else set())
        info = KeyInfo(
            key_id=new_key_id(),
            tenant_id=self.tenant_id,
            plan=self.plan,
            scopes=" ".join(sorted(scopes)),
            agents=" ".join(sorted(self.agents)),
            created_at=now.isoformat(),
            revoked_at=None,
        )
        return IssuedKey(key=key, key_hash=hash_api_key(key), info=info)

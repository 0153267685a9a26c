"""API keys and read grants, as the `keys` CLI commands and the authorizer read them."""

from __future__ import annotations

import builtins
from typing import Protocol

from agent_memory.model.caller import Caller
from agent_memory.tenancy.rules.keys import KeyInfo, NewKey

__all__ = ["KeyStore"]


class KeyStore(Protocol):
    """Where API keys live: SQLite locally (`LocalKeyStore`), DynamoDB when deployed.

    The `keys` CLI commands and the authorizer depend on this and nothing else, so both work
    against either store.
    """

    def create(self, new: NewKey) -> tuple[str, str]:
        """Store a new key (or ``new.key``) and return ``(key_id, key)``; only its hash is kept."""
        ...

    def lookup(self, key: str) -> Caller | None:
        """The caller an active key stands for; None for an unknown or revoked key."""
        ...

    def list(self) -> list[KeyInfo]:
        """Every key, revoked ones included, oldest first."""
        ...

    def revoke(self, key_id: str) -> bool:
        """Revoke an active key; False when no active key has that id."""
        ...

    def grant_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        """Let keys bound to agent ``reader`` read agent ``owner``'s memory; False if they could."""
        ...

    def revoke_read(self, tenant_id: str, reader: str, owner: str) -> bool:
        """Take that back; False if there was no such grant."""
        ...

    def readers_of(self, tenant_id: str, owner: str) -> builtins.list[str]:
        """The agents granted read access to ``owner``'s memory, sorted."""
        ...

"""How a provider key is kept by either secret store (a 0600 file, a Secrets Manager secret):
JSON ``{"value", "last4", "set_at"}``, so what may be shown of the key travels with it and
nothing else (tags, descriptions, file names) ever holds a part of it."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from datetime import datetime
from typing import Any

from agent_memory.errors import ConfigurationError
from agent_memory.tenancy.rules.tenant_settings import MAX_PROVIDER_KEY_CHARS, SecretInfo

#: The longest key accepted, in characters (the contract's bound; a provider key is well under it).
MAX_SECRET_CHARS = MAX_PROVIDER_KEY_CHARS


def check_secret_value(value: str) -> str:
    """The value unchanged (nothing stripped: a key is stored exactly as given); `ValueError` for an
    empty one or one over `MAX_SECRET_CHARS`. The message never holds the value."""
    if not isinstance(value, str) or not value:
        raise ValueError("a provider key must be a non-empty string")
    if len(value) > MAX_SECRET_CHARS:
        raise ValueError(f"a provider key must be at most {MAX_SECRET_CHARS} characters")
    return value


def encode_secret(value: str, set_at: datetime) -> tuple[SecretInfo, str]:
    """What may be shown of ``value``, and the record to store."""
    info = SecretInfo(last4=check_secret_value(value)[-4:], set_at=set_at)
    return info, json.dumps({"value": value, "last4": info.last4, "set_at": info.set_at.isoformat()})


def decode_secret(raw: Any, where: str) -> tuple[str, SecretInfo]:
    """The key and what may be shown of it; a malformed record is a `ConfigurationError` naming
    ``where`` it was read (a path, a secret name), never its content."""
    try:
        content = json.loads(raw)
        value, last4 = content["value"], content["last4"]
        set_at = datetime.fromisoformat(content["set_at"])
        ok = isinstance(value, str) and isinstance(last4, str) and len(last4) <= 4
    except (ValueError, TypeError, KeyError):
        ok = False
    if not ok:
        raise ConfigurationError(f"{where} is not a provider key in the expected format")
    return value, SecretInfo(last4=last4, set_at=set_at)


class SecretRecordReads(ABC):
    """The reads both secret stores answer from one decoded record (`_read`): the key itself, or
    only what may be shown of it."""

    @abstractmethod
    def _read(self, tenant_id: str) -> tuple[str, SecretInfo] | None:
        """The tenant's key and what may be shown of it; None when it has none."""

    def get_secret(self, tenant_id: str) -> str | None:
        read = self._read(tenant_id)
        return None if read is None else read[0]

    def secret_info(self, tenant_id: str) -> SecretInfo | None:
        read = self._read(tenant_id)
        return None if read is None else read[1]

"""Deterministic ids.

A record's id is derived from what it says and where it belongs, so that a client retry or a
scheduler re-run produces the same id: the FIFO queue deduplicates the message and the store
overwrites instead of duplicating.
"""

from __future__ import annotations

import base64
import hashlib
import unicodedata


def digest(*parts: str, length: int = 26) -> str:
    """A lowercase base32 digest of ``parts`` (unambiguous, URL- and path-safe)."""
    h = hashlib.sha256("\x1f".join(parts).encode("utf-8")).digest()
    return base64.b32encode(h).decode("ascii").lower().rstrip("=")[:length]


def content_hash(content: str) -> str:
    """Hash of the content after Unicode and whitespace normalisation (exact-duplicate check)."""
    normalised = " ".join(unicodedata.normalize("NFKC", content).split()).casefold()
    return hashlib.sha256(normalised.encode("utf-8")).hexdigest()


def memory_id(*parts: str) -> str:
    return "mem_" + digest(*parts)


def summary_id(tenant_id: str, agent_id: str, grain: str, time_key: str) -> str:
    return "sum_" + digest(tenant_id, agent_id, grain, time_key)

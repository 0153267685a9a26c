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
    """A lowercase base32 digest of ``parts`` (unambiguous, URL- and path-safe).

    Each part is length-prefixed rather than joined with a separator, so no two different tuples
    hash the same input (with a separator, ``("a\\x1fb",)`` and ``("a", "b")`` would collide).
    """
    h = hashlib.sha256()
    for part in parts:
        data = part.encode("utf-8", "surrogatepass")
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return base64.b32encode(h.digest()).decode("ascii").lower().rstrip("=")[:length]


def content_hash(content: str) -> str:
    """Hash of the content after Unicode and whitespace normalisation (exact-duplicate check).

    NFKC again after casefolding: casefolding can leave text that NFKC would still change (Greek
    letters with dialytika and tonos), and then an upper-case copy would not count as a duplicate.
    """
    folded = unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", content).casefold())
    normalised = " ".join(folded.split())
    return hashlib.sha256(normalised.encode("utf-8", "surrogatepass")).hexdigest()


def memory_id(*parts: str) -> str:
    return "mem_" + digest(*parts)


def summary_id(tenant_id: str, agent_id: str, grain: str, time_key: str) -> str:
    return "sum_" + digest(tenant_id, agent_id, grain, time_key)

"""What a store method does to the store, said where the method is declared: `writes` marks one
that changes what is stored, `counts` one that only bumps a best-effort count (access counts,
searches, document hits); every other method only reads.

The mark is part of the port: an adapter that keeps copies of the store (the serverless store,
`adapters.s3_sqlite_store`) serves each method by it (a read on the local copy, a write stored
back, a count kept for the next write), so a method added to a port is served right once it is
marked, with no list to keep in step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, TypeVar

__all__ = ["Effect", "counts", "effect_of", "writes"]

Effect = Literal["read", "write", "count"]
Method = TypeVar("Method", bound=Callable[..., Any])
_MARK = "__store_effect__"


def writes(method: Method) -> Method:
    """Mark a port method that changes what the store holds."""
    setattr(method, _MARK, "write")
    return method


def counts(method: Method) -> Method:
    """Mark a port method that bumps a best-effort count (lost, at worst, never an error)."""
    setattr(method, _MARK, "count")
    return method


def effect_of(method: Callable[..., Any]) -> Effect:
    """What ``method`` (a port's, as declared) does to the store."""
    effect: Effect = getattr(method, _MARK, "read")
    return effect

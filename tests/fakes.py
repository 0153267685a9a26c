"""Small test doubles shared across the suite."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any


def utc(*args: int) -> datetime:
    """``datetime(*args)`` in UTC: ``utc(2026, 11, 20, 9)`` is 09:00 UTC on 2026-11-20."""
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


class FixedClock:
    """A clock tests can set and move."""

    def __init__(self, now: datetime | None = None) -> None:
        self._now = now or datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    def now(self) -> datetime:
        return self._now

    def advance(self, **kwargs: float) -> None:
        self._now += timedelta(**kwargs)


#: An epoch second (2026-11-18) that clock-driven adapter tests start from.
T0 = 1_795_000_000.0


class SteppingClock:
    """Epoch seconds that a test moves by hand (``clock.now += 5``): the ``Callable[[], float]``
    clocks the queue and pending-writes adapters take."""

    def __init__(self, now: float = T0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class RefusingEmbedder:
    """A tenant's own embedding model whose provider refuses the tenant's key."""

    model_id, dimension = "refusing", 384

    def embed(self, texts: object) -> object:
        from agent_memory.errors import ProviderKeyRejectedError

        raise ProviderKeyRejectedError("the embedding provider refused the tenant's key (HTTP 401)")


def refusing_spaces() -> object:
    """`TenantSpaces` that search and write with `RefusingEmbedder` only."""
    from agent_memory.tenancy.models import SpaceEmbedder, TenantSpaces

    own = SpaceEmbedder("sp_refusing", RefusingEmbedder())  # type: ignore[arg-type]
    return TenantSpaces(own, (own,))


class RecordingFeed:
    """A `ChangeFeed` that keeps what it is handed (``events``), in order."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    def publish(self, events: Sequence[Any]) -> None:
        self.events.extend(events)

    def of_type(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


class FailingFeed:
    """A `ChangeFeed` that raises on every publish, as a broken adapter might."""

    def __init__(self) -> None:
        self.calls = 0

    def publish(self, events: Sequence[Any]) -> None:
        self.calls += 1
        raise RuntimeError("the feed is down")


def refused_connections(monkeypatch: Any) -> list[tuple[str, int]]:
    """Make every TCP connection the code opens fail as refused, recording where it was to go:
    a call out that must never leave shows as an empty list, and no packet is sent either way."""
    import socket

    opened: list[tuple[str, int]] = []

    def refuse(address: tuple[str, int], *args: Any) -> Any:
        opened.append(address)
        raise ConnectionRefusedError(111, "Connection refused")

    monkeypatch.setattr(socket, "create_connection", refuse)
    return opened

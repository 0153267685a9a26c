"""A per-tenant cache with a lifetime: what a warm process keeps of each tenant's configuration
(its topic dictionary, its settings) so a request pays no extra round trip.

Entries live ``ttl_s`` (or less, for a remembered failure), at most ``max_tenants`` of them, the
least recently used going first. A miss for an absent value is cached too: "this tenant has
none" is as worth remembering as what it has.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")


class TenantCache(Generic[T]):
    def __init__(self, ttl_s: float, max_tenants: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_s
        self._max_tenants = max_tenants
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, T]] = OrderedDict()
        self._lock = threading.Lock()

    def lookup(self, tenant_id: str) -> tuple[bool, T | None]:
        """``(True, value)`` while the tenant's entry lives, else ``(False, None)``."""
        now = self._clock()
        with self._lock:
            cached = self._entries.get(tenant_id)
            if cached is not None and cached[0] > now:
                self._entries.move_to_end(tenant_id)
                return True, cached[1]
        return False, None

    def remember(self, tenant_id: str, value: T, ttl_s: float | None = None) -> None:
        with self._lock:
            self._entries[tenant_id] = (self._clock() + (self.ttl_s if ttl_s is None else ttl_s), value)
            self._entries.move_to_end(tenant_id)
            while len(self._entries) > self._max_tenants:
                self._entries.popitem(last=False)

    def forget(self, tenant_id: str) -> None:
        with self._lock:
            self._entries.pop(tenant_id, None)

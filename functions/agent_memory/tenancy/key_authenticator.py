"""From an API key to a caller, with a short in-process cache of the answers.

The Lambda authorizer runs for every request that API Gateway's own authorizer cache misses
(each cache is per token, and per API Gateway node). A warm container keeps answers here for
``ttl_s``, so a client's burst costs one key-store read, not one per request. Misses are cached
too: a misconfigured client that retries a revoked key in a loop reads the table once a period.
The cache is keyed by the key's hash, so no key is kept in the clear, and it is bounded: the
least recently used entry goes first, so a flood of random keys cannot grow memory without end.

What the cache costs: a revoked key keeps working on a warm container for up to ``ttl_s``
(plus API Gateway's authorizer cache TTL). Failures of the store are never cached: they raise.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from agent_memory.model.caller import Caller
from agent_memory.ports import KeyStore
from agent_memory.tenancy.rules.keys import hash_api_key

DEFAULT_TTL_S = 60.0
DEFAULT_MAX_ENTRIES = 1024


class KeyAuthenticator:
    def __init__(
        self,
        store: KeyStore,
        ttl_s: float = DEFAULT_TTL_S,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_s < 0:
            raise ValueError("ttl_s must not be negative")
        if max_entries < 1:
            raise ValueError("max_entries must be at least 1")
        self.store = store
        self._ttl_s = ttl_s
        self._max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[str, tuple[float, Caller | None]] = OrderedDict()
        # A Lambda container runs one request at a time; the lock keeps it correct anywhere else.
        self._lock = threading.Lock()

    def authenticate(self, key: str) -> Caller | None:
        """The caller ``key`` stands for, or None for an unknown or revoked key."""
        digest = hash_api_key(key)
        now = self._clock()
        with self._lock:
            cached = self._entries.get(digest)
            if cached is not None and cached[0] > now:
                self._entries.move_to_end(digest)
                return cached[1]
        caller = self.store.lookup(key)  # outside the lock: a slow read must not stall the others
        with self._lock:
            self._entries[digest] = (now + self._ttl_s, caller)
            self._entries.move_to_end(digest)
            while len(self._entries) > self._max_entries:
                self._entries.popitem(last=False)
        return caller

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

"""The authenticator's cache: answers kept for a TTL, misses too, bounded, failures never kept."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.fakes import SteppingClock

from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
from agent_memory.errors import DependencyError
from agent_memory.model.caller import Caller
from agent_memory.tenancy.key_authenticator import KeyAuthenticator
from agent_memory.tenancy.rules.keys import NewKey, new_api_key


class CountingStore(LocalKeyStore):
    """The real local store, counting reads (and failing them on demand)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.lookups = 0
        self.failing = False

    def lookup(self, key: str) -> Caller | None:
        self.lookups += 1
        if self.failing:
            raise DependencyError("table unavailable")
        return super().lookup(key)


@pytest.fixture
def store(tmp_path: Path) -> CountingStore:
    return CountingStore(tmp_path / "auth.db")


@pytest.fixture
def tick() -> SteppingClock:
    return SteppingClock()


def test_a_known_key_is_read_once_per_ttl(store: CountingStore, tick: SteppingClock) -> None:
    # GIVEN a key and an authenticator with a 60 s cache
    key_id, key = store.create(NewKey("acme", "pro"))
    auth = KeyAuthenticator(store, ttl_s=60, clock=tick)

    # WHEN it is presented three times within the minute
    answers = [auth.authenticate(key) for _ in range(3)]

    # THEN the store was read once, and every answer is the caller
    assert store.lookups == 1
    assert {a.key_id for a in answers if a is not None} == {key_id} and None not in answers

    # WHEN the minute is over, THEN the store is read again
    tick.now += 60
    assert auth.authenticate(key) is not None
    assert store.lookups == 2


def test_a_revocation_is_seen_once_the_cached_answer_expires(
    store: CountingStore, tick: SteppingClock
) -> None:
    # GIVEN
    key_id, key = store.create(NewKey("acme", "pro"))
    auth = KeyAuthenticator(store, ttl_s=60, clock=tick)
    # WHEN / THEN
    assert auth.authenticate(key) is not None

    store.revoke(key_id)

    tick.now += 59
    assert auth.authenticate(key) is not None  # the price of the cache, bounded by the TTL
    tick.now += 1
    assert auth.authenticate(key) is None


def test_unknown_keys_are_cached_too(store: CountingStore, tick: SteppingClock) -> None:
    # GIVEN
    auth = KeyAuthenticator(store, ttl_s=60, clock=tick)
    bad = new_api_key()

    # WHEN / THEN
    assert [auth.authenticate(bad) for _ in range(5)] == [None] * 5
    assert store.lookups == 1


def test_the_cache_is_bounded_and_drops_the_least_recently_used(
    store: CountingStore, tick: SteppingClock
) -> None:
    # GIVEN a cache of two entries holding keys a and b, a used last
    _, a = store.create(NewKey("acme", "pro"))
    _, b = store.create(NewKey("acme", "pro"))
    _, c = store.create(NewKey("acme", "pro"))
    auth = KeyAuthenticator(store, ttl_s=60, max_entries=2, clock=tick)
    auth.authenticate(a)
    auth.authenticate(b)
    auth.authenticate(a)
    assert store.lookups == 2

    # WHEN a third key arrives
    auth.authenticate(c)

    # THEN b was dropped (read again), a was kept
    auth.authenticate(a)
    assert store.lookups == 3
    auth.authenticate(b)
    assert store.lookups == 4


def test_a_store_failure_raises_and_is_not_cached(store: CountingStore, tick: SteppingClock) -> None:
    # GIVEN a store that fails once
    _, key = store.create(NewKey("acme", "pro"))
    auth = KeyAuthenticator(store, clock=tick)
    store.failing = True

    # WHEN / THEN the failure surfaces (not as an unknown key), and the next request reads again
    with pytest.raises(DependencyError):
        auth.authenticate(key)
    store.failing = False
    assert auth.authenticate(key) is not None
    assert store.lookups == 2


def test_clear_forgets_every_answer(store: CountingStore, tick: SteppingClock) -> None:
    # GIVEN
    _, key = store.create(NewKey("acme", "pro"))
    auth = KeyAuthenticator(store, clock=tick)
    auth.authenticate(key)

    # WHEN
    auth.clear()
    auth.authenticate(key)

    # THEN
    assert store.lookups == 2


@pytest.mark.parametrize(("ttl_s", "max_entries"), [(-1, 10), (60, 0)])
def test_nonsense_limits_are_refused(store: CountingStore, ttl_s: float, max_entries: int) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError):
        KeyAuthenticator(store, ttl_s=ttl_s, max_entries=max_entries)

"""The local runtime's files are its owner's alone, and the development key is a real key: long
enough to be one, and revoked when it is replaced."""

from __future__ import annotations

import stat
from pathlib import Path

import numpy as np
import pytest

from agent_memory.adapters.local_pending import LocalPendingWrites
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.local import cli
from agent_memory.tenancy.rules.keys import NewKey


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_every_database_and_its_wal_is_0600_in_a_0700_directory(tmp_path: Path) -> None:
    # GIVEN a data directory made by the runtime's stores, each written to once
    data = tmp_path / "data"
    store = SqliteMemoryStore(data / "memory.db", dimension=3, model_id="m")
    store.stats("t", "a", __import__("datetime").datetime.now(__import__("datetime").UTC))
    LocalKeyStore(data / "auth.db").create(NewKey("t", "pro"))
    queue = LocalFifoQueue(data / "queue.db")
    LocalPendingWrites(data / "queue.db").add("t", "a", ["mem_1"])
    del queue
    # WHEN / THEN the directory is 0700 and every file in it (WAL and shared memory included) 0600
    assert mode(data) == 0o700
    files = [p for p in data.iterdir() if p.is_file()]
    assert {p.name for p in files} >= {"memory.db", "auth.db", "queue.db", "memory.db-wal", "queue.db-wal"}
    assert {p.name: mode(p) for p in files} == {p.name: 0o600 for p in files}
    store.close()


def test_files_made_world_readable_before_are_made_private_when_opened(tmp_path: Path) -> None:
    # GIVEN
    data = tmp_path / "old"
    data.mkdir(mode=0o755)
    LocalKeyStore(data / "auth.db")
    (data / "auth.db").chmod(0o644)
    # WHEN
    LocalKeyStore(data / "auth.db").list()
    # THEN
    assert mode(data / "auth.db") == 0o600


@pytest.mark.parametrize("shared_mode", [0o1777, 0o755])
def test_a_database_opened_in_a_directory_that_exists_leaves_its_mode_alone(
    tmp_path: Path, shared_mode: int
) -> None:
    # GIVEN a directory others use (as /tmp or a home directory is)
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(shared_mode)
    # WHEN a store opens a database file directly in it
    LocalKeyStore(shared / "auth.db").list()
    # THEN the file is the owner's alone and the directory keeps its mode
    assert mode(shared / "auth.db") == 0o600
    assert mode(shared) == shared_mode


@pytest.mark.parametrize("key", ["short", "x" * 31, "a" * 31 + " ", "ü" * 40, "a" * 20 + "\x00" + "b" * 20])
def test_a_chosen_dev_key_must_be_a_real_key(key: str) -> None:
    # WHEN / THEN
    assert not cli._acceptable_dev_key(key)
    assert cli._acceptable_dev_key("a" * 32)


def test_a_replaced_dev_key_is_revoked(tmp_path: Path) -> None:
    keys = LocalKeyStore(tmp_path / "auth.db")
    first, second = "k" * 40, "q" * 40
    cli._register_dev_key(keys, first, tmp_path)
    cli._register_dev_key(keys, first, tmp_path)  # the same key at the next start: kept
    assert keys.lookup(first) is not None
    # WHEN the variable now names another key
    cli._register_dev_key(keys, second, tmp_path)
    # THEN the first one no longer opens anything, the second one does
    assert keys.lookup(first) is None
    assert keys.lookup(second) is not None
    assert mode(tmp_path / "dev-key-id") == 0o600


def test_the_generated_dev_key_is_kept_private(tmp_path: Path) -> None:
    # WHEN
    key = cli._stored_dev_key(tmp_path / "d")
    # THEN
    assert len(key) >= cli.MIN_DEV_KEY_CHARS
    assert mode(tmp_path / "d" / "dev-key") == 0o600 and mode(tmp_path / "d") == 0o700
    assert cli._stored_dev_key(tmp_path / "d") == key


def test_vectors_still_round_trip_in_a_private_store(tmp_path: Path) -> None:
    # GIVEN
    store = SqliteMemoryStore(tmp_path / "m.db", dimension=3, model_id="m")
    # WHEN / THEN
    assert store.dimension == 3 and np.isfinite(store.unit_query(np.ones(3, dtype=np.float32))).all()
    store.close()

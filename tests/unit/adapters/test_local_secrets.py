"""The embedded runtime's provider keys: one 0600 file per tenant in a 0700 directory, named by a
digest of the tenant id, written atomically, and never echoed in an error or a log. The behaviour
both secret stores share is in tests/contract/test_secret_store_contract.py."""

from __future__ import annotations

import logging
import os
import stat
from datetime import timedelta
from pathlib import Path

import pytest
from tests.fakes import FixedClock

from agent_memory.adapters.local_secrets import LocalFileSecretStore
from agent_memory.adapters.secret_record import MAX_SECRET_CHARS
from agent_memory.errors import ConfigurationError
from agent_memory.model.ids import digest
from agent_memory.tenancy.rules.tenant_settings import SecretInfo

KEY = "sk-test-Zq8wLocalSecretValue-9f3K"
OTHER_KEY = "sk-test-Other-Tenant-Value-77Xy"


@pytest.fixture
def directory(tmp_path: Path) -> Path:
    return tmp_path / "secrets"


@pytest.fixture
def store(directory: Path, clock: FixedClock) -> LocalFileSecretStore:
    return LocalFileSecretStore(directory, clock=clock.now)


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _only_file(directory: Path) -> Path:
    [path] = list(directory.iterdir())
    return path


def test_the_time_a_key_was_set_is_the_stores_clocks(store: LocalFileSecretStore, clock: FixedClock) -> None:
    # WHEN a key is set, and replaced an hour later
    first = store.put_secret("acme", KEY)
    clock.advance(hours=1)
    second = store.put_secret("acme", OTHER_KEY)

    # THEN each is described with the clock's time when it was set
    assert first == SecretInfo(last4=KEY[-4:], set_at=clock.now() - timedelta(hours=1))
    assert store.secret_info("acme") == second == SecretInfo(last4=OTHER_KEY[-4:], set_at=clock.now())


def test_the_file_is_0600_in_a_0700_directory_named_by_a_digest(
    store: LocalFileSecretStore, directory: Path
) -> None:
    # WHEN
    store.put_secret("acme", KEY)

    # THEN
    path = _only_file(directory)
    assert path.name == f"{digest('acme')}.json"
    assert _mode(path) == 0o600
    assert _mode(directory) == 0o700


def test_an_existing_directory_open_to_others_is_tightened(directory: Path) -> None:
    # GIVEN
    directory.mkdir(mode=0o755)
    directory.chmod(0o755)

    # WHEN
    LocalFileSecretStore(directory)

    # THEN
    assert _mode(directory) == 0o700


def test_a_tenant_id_cannot_reach_outside_the_directory(
    store: LocalFileSecretStore, directory: Path, tmp_path: Path
) -> None:
    # GIVEN
    (tmp_path / "x").write_text("not a key")

    # WHEN
    store.put_secret("../x", KEY)
    store.put_secret("../../etc/passwd", KEY)

    # THEN
    assert (tmp_path / "x").read_text() == "not a key"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["secrets", "x"]
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        [f"{digest('../x')}.json", f"{digest('../../etc/passwd')}.json"]
    )


def test_a_file_others_can_read_is_refused_without_its_content(
    store: LocalFileSecretStore, directory: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN
    caplog.set_level(logging.DEBUG)
    store.put_secret("acme", KEY)
    path = _only_file(directory)
    path.chmod(0o644)

    # WHEN
    with pytest.raises(ConfigurationError) as raised:
        store.get_secret("acme")

    # THEN
    assert str(path) in str(raised.value)
    assert KEY not in str(raised.value)
    assert KEY not in caplog.text
    with pytest.raises(ConfigurationError):
        store.secret_info("acme")


def test_a_symlink_in_place_of_the_file_is_refused(
    store: LocalFileSecretStore, directory: Path, tmp_path: Path
) -> None:
    # GIVEN a 0600 file elsewhere, linked where the tenant's key belongs
    store.put_secret("acme", KEY)
    path = _only_file(directory)
    elsewhere = tmp_path / "elsewhere.json"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="provider key file"):
        store.get_secret("acme")


def test_a_file_not_in_the_expected_format_is_an_error_that_does_not_show_it(
    store: LocalFileSecretStore, directory: Path
) -> None:
    # GIVEN
    store.put_secret("acme", KEY)
    path = _only_file(directory)
    path.write_text(f'{{"value": "{KEY}"}}')

    # WHEN
    with pytest.raises(ConfigurationError) as raised:
        store.get_secret("acme")

    # THEN
    assert "expected format" in str(raised.value)
    assert KEY not in str(raised.value)


def test_writes_leave_no_temp_files(store: LocalFileSecretStore, directory: Path) -> None:
    # WHEN
    for value in (KEY, OTHER_KEY, KEY):
        store.put_secret("acme", value)
    store.put_secret("globex", OTHER_KEY)

    # THEN
    assert sorted(p.name for p in directory.iterdir()) == sorted(
        [f"{digest('acme')}.json", f"{digest('globex')}.json"]
    )


def test_a_write_that_fails_keeps_the_old_key_and_leaves_no_temp_file(
    store: LocalFileSecretStore, directory: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a stored key, and a disk that fails the next fsync
    store.put_secret("acme", KEY)

    def failing_fsync(fd: int) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "fsync", failing_fsync)

    # WHEN
    with pytest.raises(OSError, match="disk full"):
        store.put_secret("acme", OTHER_KEY)

    # THEN
    monkeypatch.undo()
    assert [p.name for p in directory.iterdir()] == [f"{digest('acme')}.json"]
    assert store.get_secret("acme") == KEY


@pytest.mark.parametrize("value", ["", "x" * (MAX_SECRET_CHARS + 1)])
def test_an_empty_or_oversized_key_writes_no_file(
    store: LocalFileSecretStore, directory: Path, value: str
) -> None:
    # WHEN
    with pytest.raises(ValueError, match="provider key"):
        store.put_secret("acme", value)

    # THEN
    assert list(directory.iterdir()) == []

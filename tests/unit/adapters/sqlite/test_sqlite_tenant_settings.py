"""`SqliteTenantSettingsStore`: what only its own SQLite file shows. The behaviour both settings
stores share is in tests/contract/test_tenant_settings_contract.py."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import pytest
from tests.contract.test_tenant_settings_contract import FULL, T0

from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore
from agent_memory.errors import ConflictError
from agent_memory.tenancy.rules.tenant_settings import TenantSettings


def test_a_store_reopened_on_the_same_file_carries_the_history_on_and_another_file_has_none(
    tmp_path: Path,
) -> None:
    # GIVEN settings written through one store, which is then closed
    first = SqliteTenantSettingsStore(tmp_path / "tenant_settings.db")
    first.put_settings("acme", FULL, 0, "alice", T0)
    first.close()

    # WHEN the same file is opened again, and another file beside it
    reopened = SqliteTenantSettingsStore(tmp_path / "tenant_settings.db")
    elsewhere = SqliteTenantSettingsStore(tmp_path / "other.db")

    # THEN the history goes on from version 1 in the same file only
    with pytest.raises(ConflictError, match="read them again"):
        reopened.put_settings("acme", TenantSettings(), 0, "bob", T0)
    second = reopened.put_settings("acme", TenantSettings(), 1, "bob", T0 + timedelta(hours=1))
    assert second.version == 2
    assert reopened.get_settings("acme") == second
    assert elsewhere.get_settings("acme") is None
    reopened.close()
    elsewhere.close()

"""One contract for tenant settings stores, run on every adapter: SQLite (local) and DynamoDB (moto).

Versioned, per-tenant settings: the first put names version 0, each change names the version it
read, and a stale one is a conflict that changes nothing. Adapter-specific behaviour (DynamoDB's
stored item and a missing table, SQLite's file) stays in each adapter's own tests.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.errors import ConflictError
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.ports.tenancy import TenantSettingsStore
from agent_memory.tenancy.rules.embedding_spaces import EmbeddingState
from agent_memory.tenancy.rules.tenant_settings import (
    ModelChoice,
    ModelProvider,
    RankingDefaults,
    TenantSettings,
)

TABLE = "agent-memory-tenant-settings"
T0 = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
FULL = TenantSettings(
    embedding=ModelChoice(provider=ModelProvider.OPENAI, model="text-embedding-3-small",
                          endpoint="https://api.example.com/v1", dimension=512),
    summary=ModelChoice(provider=ModelProvider.BEDROCK, model="anthropic.claude-3-haiku-20240307-v1:0"),
    retention_hours={Grain.WORKING: 24, Grain.DAILY: 240, Grain.YEARLY: None},
    ttl_days={MemoryKind.CONVERSATION: 3, MemoryKind.TASK: None},
    max_working_per_agent=500,
    ranking=RankingDefaults(lexical_weight=0.3, recency_weight=0.0),
    merge_near_duplicates=False,
)  # fmt: skip

#: Opens a store on the test's own file or table: each call a fresh store on the same data.
OpenStore = Callable[[], TenantSettingsStore]


def create_tenant_settings_table(client: Any, name: str = TABLE) -> None:
    """The settings table as the CDK stack defines it: one item per ``tenant_id``."""
    client.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "tenant_id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "tenant_id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )


def _sqlite(path: Path) -> Iterator[OpenStore]:
    from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore

    opened: list[SqliteTenantSettingsStore] = []

    def open_store() -> TenantSettingsStore:
        opened.append(SqliteTenantSettingsStore(path))
        return opened[-1]

    yield open_store
    for store in opened:
        store.close()


def _dynamodb() -> Iterator[OpenStore]:
    from agent_memory.adapters.dynamodb_tenant_settings import DynamoDbTenantSettingsStore

    with mock_aws():
        client: Any = boto3.client("dynamodb", region_name="us-east-1")
        create_tenant_settings_table(client)
        yield lambda: DynamoDbTenantSettingsStore(TABLE, client=client)


@pytest.fixture(params=["sqlite", "dynamodb"])
def open_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[OpenStore]:
    if request.param == "sqlite":
        yield from _sqlite(tmp_path / "settings.db")
        return
    yield from _dynamodb()


@pytest.fixture
def store(open_store: OpenStore) -> TenantSettingsStore:
    return open_store()


def test_a_tenant_with_nothing_stored_has_no_settings(store: TenantSettingsStore) -> None:
    # WHEN / THEN
    assert store.get_settings("acme") is None


def test_the_first_put_names_version_zero_and_yields_version_one(store: TenantSettingsStore) -> None:
    # WHEN
    stored = store.put_settings("acme", FULL, 0, "admin@acme", T0)

    # THEN what is returned is what is read back
    assert stored.version == 1
    assert store.get_settings("acme") == stored
    assert (stored.tenant_id, stored.updated_by, stored.updated_at) == ("acme", "admin@acme", T0)


def test_each_change_names_the_version_it_read_and_bumps_it(store: TenantSettingsStore) -> None:
    # GIVEN
    store.put_settings("acme", TenantSettings(), 0, "alice", T0)

    # WHEN
    second = store.put_settings("acme", FULL, 1, "bob", T0 + timedelta(hours=1))

    # THEN
    read = store.get_settings("acme")
    assert read is not None and read == second
    assert (read.version, read.updated_by, read.updated_at) == (2, "bob", T0 + timedelta(hours=1))
    assert read.settings == FULL


@pytest.mark.parametrize(("stored_versions", "stale"), [(0, 1), (1, 0), (2, 1), (1, 2), (1, 5)])
def test_a_put_naming_a_stale_version_is_a_conflict_and_changes_nothing(
    store: TenantSettingsStore, stored_versions: int, stale: int
) -> None:
    # GIVEN settings changed `stored_versions` times
    for version in range(stored_versions):
        store.put_settings("acme", TenantSettings(max_working_per_agent=version + 1), version, "alice", T0)
    before = store.get_settings("acme")

    # WHEN
    with pytest.raises(ConflictError, match="read them again"):
        store.put_settings("acme", FULL, stale, "mallory", T0 + timedelta(days=1))

    # THEN
    assert store.get_settings("acme") == before


def test_tenants_are_isolated_even_when_their_ids_differ_only_in_case(store: TenantSettingsStore) -> None:
    # GIVEN
    store.put_settings("acme", FULL, 0, "alice", T0)

    # WHEN
    other = store.get_settings("ACME")
    globex = store.get_settings("globex")

    # THEN acme's settings are acme's alone, and ACME starts its own history at version 0
    assert other is None and globex is None
    upper = store.put_settings("ACME", TenantSettings(), 0, "bob", T0)
    assert upper.version == 1
    acme = store.get_settings("acme")
    assert acme is not None and acme.settings == FULL and acme.updated_by == "alice"
    read_upper = store.get_settings("ACME")
    assert read_upper is not None and read_upper.settings == TenantSettings()


def test_a_round_trip_keeps_every_field(store: TenantSettingsStore, open_store: OpenStore) -> None:
    # GIVEN
    store.put_settings("acme", FULL, 0, "alice", T0)

    # WHEN read through a fresh store on the same file or table
    read = open_store().get_settings("acme")

    # THEN
    assert read is not None
    settings = read.settings
    assert settings == FULL
    assert settings.embedding is not None and settings.embedding.endpoint == "https://api.example.com/v1"
    assert settings.embedding.dimension == 512
    assert settings.retention_hours == {Grain.WORKING: 24, Grain.DAILY: 240, Grain.YEARLY: None}
    assert settings.ttl_days == {MemoryKind.CONVERSATION: 3, MemoryKind.TASK: None}
    assert settings.ranking.overrides() == {"lexical_weight": 0.3, "recency_weight": 0.0}
    assert settings.merge_near_duplicates is False
    assert settings.max_working_per_agent == 500


def test_an_aware_time_in_another_zone_is_read_back_as_the_same_instant(store: TenantSettingsStore) -> None:
    # GIVEN
    plus_one = T0.astimezone(timezone(timedelta(hours=1)))

    # WHEN
    store.put_settings("acme", FULL, 0, "alice", plus_one)

    # THEN
    read = store.get_settings("acme")
    assert read is not None and read.updated_at == T0 and read.updated_at.tzinfo == UTC


@pytest.mark.parametrize("start_version", [0, 1])
def test_two_threads_racing_from_the_same_version_one_wins(
    store: TenantSettingsStore, start_version: int
) -> None:
    # GIVEN two admins who both read `start_version`
    if type(store).__name__ == "DynamoDbTenantSettingsStore":
        pytest.skip(
            "moto does not apply a conditional put atomically across threads (both won in 2 of 3 "
            "full runs); DynamoDB does, and the conflict rule itself is tested sequentially above"
        )
    if start_version:
        store.put_settings("acme", TenantSettings(), 0, "setup", T0)
    barrier = threading.Barrier(2)
    won: list[str] = []
    lost: list[str] = []

    def put(actor: str, settings: TenantSettings) -> None:
        barrier.wait()
        try:
            store.put_settings("acme", settings, start_version, actor, T0)
        except ConflictError:
            lost.append(actor)
        else:
            won.append(actor)

    threads = [
        threading.Thread(target=put, args=("alice", TenantSettings(max_working_per_agent=1))),
        threading.Thread(target=put, args=("bob", TenantSettings(max_working_per_agent=2))),
    ]

    # WHEN they write at once
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)

    # THEN exactly one wins, and what is stored is the winner's
    assert len(won) == 1 and len(lost) == 1
    read = store.get_settings("acme")
    assert read is not None and read.version == start_version + 1 and read.updated_by == won[0]
    assert read.settings.max_working_per_agent == (1 if won[0] == "alice" else 2)


def test_the_embedding_state_is_compare_and_set_per_tenant_apart_from_the_settings(
    store: TenantSettingsStore,
) -> None:
    # GIVEN a tenant's settings and a fill towards its own model
    states: Any = store  # every adapter implements both ports over one table
    store.put_settings("acme", FULL, 0, "k", T0)
    filling = EmbeddingState().choose(FULL.embedding, T0)
    first = states.put_embedding_state("acme", filling, 0)
    # WHEN the job saves progress from the version it read, and a stale writer tries too
    progressed = states.put_embedding_state("acme", first.model_copy(update={"embedded": 64}), first.version)
    with pytest.raises(ConflictError):
        states.put_embedding_state("acme", first.model_copy(update={"embedded": 1}), first.version)
    # THEN the state read back is the job's, versioned, and the settings never moved
    assert states.get_embedding_state("acme") == progressed and progressed.version == 2
    assert progressed.target == FULL.embedding and progressed.started_at == T0
    stored = store.get_settings("acme")
    assert stored is not None and stored.version == 1
    # AND no other tenant has a state
    assert states.get_embedding_state("ACME") is None and states.get_embedding_state("other") is None

"""Read grants in both key stores: a key bound to agents carries the agents it may also read, a
grant and a revocation say whether they changed anything, grants never leak across tenants or
into the key listing."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest
from moto import mock_aws
from tests.tables import create_tenants_table

from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore
from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
from agent_memory.domain.keys import NewKey
from agent_memory.ports import KeyStore

TABLE = "agent-memory-tenants"


@pytest.fixture(params=["local", "dynamodb"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KeyStore]:
    if request.param == "local":
        yield LocalKeyStore(tmp_path / "auth.db")
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tenants_table(client, TABLE)
        yield DynamoDbKeyStore(TABLE, client=client)


def test_a_bound_key_reads_what_its_agent_was_granted_until_it_is_revoked(store: KeyStore) -> None:
    # GIVEN a key bound to the supervisor agent
    _, key = store.create(NewKey("acme", "pro", agents=frozenset({"supervisor"})))

    # WHEN the supervisor is granted read access to two agents, twice to one, then one revoked
    first = store.grant_read("acme", "supervisor", "worker-1")
    again = store.grant_read("acme", "supervisor", "worker-1")
    store.grant_read("acme", "supervisor", "worker-2")
    granted = store.lookup(key)
    revoked = store.revoke_read("acme", "supervisor", "worker-2")
    revoked_again = store.revoke_read("acme", "supervisor", "worker-2")

    # THEN the key reads what was granted at each moment, and each call says if it changed anything
    assert (first, again, revoked, revoked_again) == (True, False, True, False)
    assert granted is not None and granted.reads == {"worker-1", "worker-2"}
    caller = store.lookup(key)
    assert caller is not None and caller.reads == {"worker-1"} and caller.agents == {"supervisor"}
    assert store.readers_of("acme", "worker-1") == ["supervisor"]
    assert store.readers_of("acme", "worker-2") == []


def test_grants_stay_in_their_tenant_and_out_of_the_key_listing(store: KeyStore) -> None:
    # GIVEN globex's supervisor granted globex's worker, and an acme key bound to a "supervisor" too
    store.grant_read("globex", "supervisor", "worker-1")
    _, acme_key = store.create(NewKey("acme", "pro", agents=frozenset({"supervisor"})))
    _, unbound = store.create(NewKey("acme", "pro"))

    # WHEN / THEN the acme key reads nothing extra, nor does an unbound key carry grants
    acme = store.lookup(acme_key)
    assert acme is not None and acme.reads == frozenset()
    everyone = store.lookup(unbound)
    assert everyone is not None and everyone.reads == frozenset()
    assert store.readers_of("acme", "worker-1") == []
    assert [info.tenant_id for info in store.list()] == ["acme", "acme"]

"""API keys and read grants in the DynamoDB tenants table: moto for behaviour, Stubber for
pagination and errors.

The behaviour shared with the local store runs against both (`any_store`), so `keys` commands
and the authorizer see the same thing whichever store they are given.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from botocore.stub import Stubber
from moto import mock_aws
from tests.tables import create_tenants_table

from agent_memory.adapters.dynamodb_keys import KEY_ID_INDEX, DynamoDbKeyStore
from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
from agent_memory.errors import ConfigurationError, ConflictError, DependencyError
from agent_memory.model.caller import DEFAULT_SCOPES, Caller
from agent_memory.ports import KeyStore
from agent_memory.tenancy.rules.keys import KeyInfo, NewKey, new_api_key

TABLE = "agent-memory-tenants"


@pytest.fixture
def ddb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tenants_table(client, TABLE)
        yield client


@pytest.fixture
def keys(ddb: Any) -> DynamoDbKeyStore:
    return DynamoDbKeyStore(TABLE, client=ddb)


@pytest.fixture(params=["local", "dynamodb"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[KeyStore]:
    if request.param == "local":
        yield LocalKeyStore(tmp_path / "auth.db")
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tenants_table(client, TABLE)
        yield DynamoDbKeyStore(TABLE, client=client)


def stubbed() -> tuple[DynamoDbKeyStore, Stubber]:
    client = boto3.client("dynamodb", region_name="us-east-1")
    return DynamoDbKeyStore(TABLE, client=client), Stubber(client)


# --- behaviour both stores share ----------------------------------------------------------------


def test_a_created_key_looks_up_as_its_tenant_plan_and_default_scopes(any_store: KeyStore) -> None:
    # GIVEN a new key for tenant acme on plan pro
    key_id, key = any_store.create(NewKey("acme", "pro"))

    # WHEN it is looked up
    caller = any_store.lookup(key)

    # THEN it stands for that tenant, with the default scopes and every agent
    assert caller == Caller(tenant_id="acme", key_id=key_id, plan="pro", scopes=DEFAULT_SCOPES)
    assert key.startswith("amk_") and key_id.startswith("key_")


def test_admin_and_agent_limits_are_kept(any_store: KeyStore) -> None:
    # GIVEN
    _, key = any_store.create(NewKey("acme", "starter", admin=True, agents=frozenset({"b-bot", "a-bot"})))

    # WHEN
    caller = any_store.lookup(key)

    # THEN
    assert caller is not None
    assert caller.scopes == DEFAULT_SCOPES | {"admin"}
    assert caller.agents == {"a-bot", "b-bot"}


def test_unknown_keys_are_not_found(any_store: KeyStore) -> None:
    # GIVEN
    any_store.create(NewKey("acme", "pro"))

    # WHEN / THEN
    assert any_store.lookup(new_api_key()) is None
    assert any_store.lookup("") is None


def test_a_revoked_key_no_longer_looks_up_and_cannot_be_revoked_twice(any_store: KeyStore) -> None:
    # GIVEN two keys of one tenant
    revoked_id, revoked_key = any_store.create(NewKey("acme", "pro"))
    _, other_key = any_store.create(NewKey("acme", "pro"))

    # WHEN one is revoked
    assert any_store.revoke(revoked_id) is True

    # THEN only that one stops working; revoking it again, or an unknown id, reports False
    assert any_store.lookup(revoked_key) is None
    assert any_store.lookup(other_key) is not None
    assert any_store.revoke(revoked_id) is False
    assert any_store.revoke("key_000000000000") is False


def test_list_shows_every_key_oldest_first_without_the_key(any_store: KeyStore) -> None:
    # GIVEN three keys, one revoked
    first_id, first_key = any_store.create(NewKey("acme", "pro"))
    second_id, second_key = any_store.create(NewKey("globex", "free", agents=frozenset({"bot"})))
    third_id, _ = any_store.create(NewKey("acme", "pro", admin=True))
    any_store.revoke(second_id)

    # WHEN listed
    infos = any_store.list()

    # THEN in creation order, with revocation times and space-separated lists, and no secret
    assert [i.key_id for i in infos] == [first_id, second_id, third_id]
    assert [i.revoked_at is not None for i in infos] == [False, True, False]
    assert infos[1] == KeyInfo(
        key_id=second_id,
        tenant_id="globex",
        plan="free",
        scopes="forget read write",
        agents="bot",
        created_at=infos[1].created_at,
        revoked_at=infos[1].revoked_at,
    )
    assert infos[2].scopes.split() == ["admin", "forget", "read", "write"]
    assert infos[0].created_at <= infos[1].created_at <= infos[2].created_at
    assert all(first_key not in repr(i) and second_key not in repr(i) for i in infos)


def test_a_bound_key_reads_what_its_agent_was_granted_until_it_is_revoked(any_store: KeyStore) -> None:
    # GIVEN a key bound to the supervisor agent
    _, key = any_store.create(NewKey("acme", "pro", agents=frozenset({"supervisor"})))

    # WHEN the supervisor is granted read access to two agents, twice to one, then one revoked
    first = any_store.grant_read("acme", "supervisor", "worker-1")
    again = any_store.grant_read("acme", "supervisor", "worker-1")
    any_store.grant_read("acme", "supervisor", "worker-2")
    granted = any_store.lookup(key)
    revoked = any_store.revoke_read("acme", "supervisor", "worker-2")
    revoked_again = any_store.revoke_read("acme", "supervisor", "worker-2")

    # THEN the key reads what was granted at each moment, and each call says if it changed anything
    assert (first, again, revoked, revoked_again) == (True, False, True, False)
    assert granted is not None and granted.reads == {"worker-1", "worker-2"}
    caller = any_store.lookup(key)
    assert caller is not None and caller.reads == {"worker-1"} and caller.agents == {"supervisor"}
    assert any_store.readers_of("acme", "worker-1") == ["supervisor"]
    assert any_store.readers_of("acme", "worker-2") == []


def test_grants_stay_in_their_tenant_and_out_of_the_key_listing(any_store: KeyStore) -> None:
    # GIVEN globex's supervisor granted globex's worker, and an acme key bound to a "supervisor" too
    any_store.grant_read("globex", "supervisor", "worker-1")
    _, acme_key = any_store.create(NewKey("acme", "pro", agents=frozenset({"supervisor"})))
    _, unbound = any_store.create(NewKey("acme", "pro"))

    # WHEN / THEN the acme key reads nothing extra, nor does an unbound key carry grants
    acme = any_store.lookup(acme_key)
    assert acme is not None and acme.reads == frozenset()
    everyone = any_store.lookup(unbound)
    assert everyone is not None and everyone.reads == frozenset()
    assert any_store.readers_of("acme", "worker-1") == []
    assert [info.tenant_id for info in any_store.list()] == ["acme", "acme"]


# --- the DynamoDB table itself -----------------------------------------------------------------


def test_the_item_holds_the_hash_of_the_key_never_the_key(keys: DynamoDbKeyStore, ddb: Any) -> None:
    # GIVEN a key limited to one agent
    key_id, key = keys.create(NewKey("acme", "pro", agents=frozenset({"bot"})))

    # WHEN / THEN the table holds one item, keyed by the SHA-256 of the key, with the documented attributes
    [item] = ddb.scan(TableName=TABLE)["Items"]
    assert item["key_hash"] == {"S": hashlib.sha256(key.encode()).hexdigest()}
    assert {name: value["S"] for name, value in item.items() if name != "created_at"} == {
        "key_hash": hashlib.sha256(key.encode()).hexdigest(),
        "key_id": key_id,
        "tenant_id": "acme",
        "plan": "pro",
        "scopes": "forget read write",
        "agents": "bot",
    }
    assert item["created_at"]["S"].endswith("+00:00")
    assert key not in str(item)


def test_revoking_keeps_the_item_and_stamps_it(keys: DynamoDbKeyStore, ddb: Any) -> None:
    # GIVEN
    key_id, _ = keys.create(NewKey("acme", "pro"))

    # WHEN
    keys.revoke(key_id)

    # THEN
    [item] = ddb.scan(TableName=TABLE)["Items"]
    assert item["key_id"] == {"S": key_id}
    assert item["revoked_at"]["S"] >= item["created_at"]["S"]


def test_registering_a_key_twice_is_a_conflict_that_changes_nothing(keys: DynamoDbKeyStore) -> None:
    # GIVEN a key registered for acme
    key = new_api_key()
    key_id, _ = keys.create(NewKey("acme", "pro", key=key))

    # WHEN the same key is registered for another tenant
    with pytest.raises(ConflictError):
        keys.create(NewKey("globex", "unlimited", admin=True, key=key))

    # THEN it still stands for acme only
    assert keys.lookup(key) == Caller(tenant_id="acme", key_id=key_id, plan="pro", scopes=DEFAULT_SCOPES)
    assert len(keys.list()) == 1


def test_ensure_registers_a_key_once(keys: DynamoDbKeyStore) -> None:
    # GIVEN
    key = new_api_key()

    # WHEN
    keys.ensure(key, "dev", "pro", admin=True)
    keys.ensure(key, "dev", "pro", admin=True)

    # THEN
    assert [i.tenant_id for i in keys.list()] == ["dev"]
    caller = keys.lookup(key)
    assert caller is not None and "admin" in caller.scopes


def test_revoke_finds_the_key_by_its_id_on_the_index() -> None:
    # GIVEN the index answers with the key's hash
    store, stub = stubbed()
    stub.add_response(
        "query",
        {"Items": [{"key_hash": {"S": "ab" * 32}, "key_id": {"S": "key_1"}}]},
        {
            "TableName": TABLE,
            "IndexName": KEY_ID_INDEX,
            "KeyConditionExpression": "#key_id = :key_id",
            "ExpressionAttributeNames": {"#key_id": "key_id"},
            "ExpressionAttributeValues": {":key_id": {"S": "key_1"}},
        },
    )
    stub.add_response("update_item", {})

    # WHEN revoked, THEN one query on the index and one conditional update of that item
    with stub:
        assert store.revoke("key_1") is True
    stub.assert_no_pending_responses()


def test_list_reads_every_page_of_the_scan() -> None:
    # GIVEN a table that answers the scan in two pages
    store, stub = stubbed()

    def item(n: int) -> dict[str, Any]:
        return {
            "key_id": {"S": f"key_{n}"},
            "tenant_id": {"S": "acme"},
            "plan": {"S": "pro"},
            "scopes": {"S": "read"},
            "agents": {"S": ""},
            "created_at": {"S": f"2026-11-2{n}T00:00:00+00:00"},
        }

    stub.add_response("scan", {"Items": [item(2)], "LastEvaluatedKey": {"key_hash": {"S": "x"}}})
    stub.add_response("scan", {"Items": [item(1)]})

    # WHEN listed, THEN both pages come back, oldest first, the second read starting after the first
    with stub:
        infos = store.list()
    stub.assert_no_pending_responses()
    assert [i.key_id for i in infos] == ["key_1", "key_2"]
    assert infos[0].revoked_at is None


def test_a_missing_table_is_a_configuration_error_that_names_it() -> None:
    with mock_aws():
        # GIVEN
        store = DynamoDbKeyStore("no-such-table", client=boto3.client("dynamodb", region_name="us-east-1"))
        # WHEN / THEN
        with pytest.raises(ConfigurationError, match="no-such-table"):
            store.lookup(new_api_key())
        with pytest.raises(ConfigurationError, match="no-such-table"):
            store.create(NewKey("acme", "pro"))


def test_throttling_is_a_dependency_error_not_a_missing_key() -> None:
    # GIVEN
    store, stub = stubbed()
    stub.add_client_error("get_item", "ProvisionedThroughputExceededException", http_status_code=400)

    # WHEN / THEN
    with stub, pytest.raises(DependencyError):
        store.lookup(new_api_key())

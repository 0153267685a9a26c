"""`agent-memory keys` against the deployed tenants table (moto), and `invoke` of the new handlers.

The CLI runs in-process (`cli.main([...])`) as a shell would run it; the table is the one the
stack creates. Keys made by the CLI are then presented to the authorizer, as API Gateway would.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.payloads import EVENTS, load_event
from tests.tables import create_tenants_table

from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore
from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
from agent_memory.handlers import authorizer
from agent_memory.local import cli
from agent_memory.local.lambda_context import LocalContext
from agent_memory.model.caller import DEFAULT_SCOPES
from agent_memory.tenancy.rules.keys import NewKey, bearer_token, hash_api_key

TABLE = "agent-memory-tenants"


@pytest.fixture
def cli_env(local_env: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """`local_env`, restore points for what `cli.main` writes into ``os.environ``, a fresh authorizer."""
    monkeypatch.delenv("POWERTOOLS_LOG_LEVEL", raising=False)
    monkeypatch.delenv("AGENT_MEMORY_TENANTS_TABLE", raising=False)
    authorizer.reset()
    yield local_env
    authorizer.reset()


@pytest.fixture
def ddb(cli_env: Path) -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tenants_table(client, TABLE)
        yield client


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def printed_json(out: str) -> Any:
    """The indented JSON document `invoke` prints last (log lines before it are single lines)."""
    lines = out.splitlines()
    start = max(i for i, line in enumerate(lines) if line == "{")
    return json.loads("\n".join(lines[start:]))


def token_event(tmp_path: Path, key: str) -> Path:
    path = tmp_path / "token.json"
    path.write_text(json.dumps(load_event("authorizer_token.json", authorizationToken=f"Bearer {key}")))
    return path


def test_keys_create_with_table_writes_the_deployed_table_not_the_local_store(
    ddb: Any, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN a key is created with --table
    code, out, err = run_cli(
        capsys, "keys", "create", "--tenant", "acme", "--plan", "pro", "--agent", "bot", "--table", TABLE
    )

    # THEN it is printed once, and the table maps its hash to the tenant
    assert code == 0
    created = json.loads(out)
    assert (created["tenant_id"], created["plan"]) == ("acme", "pro")
    assert "not kept" in err
    caller = DynamoDbKeyStore(TABLE, client=ddb).lookup(created["api_key"])
    assert caller is not None
    assert (caller.tenant_id, caller.key_id, caller.agents) == ("acme", created["key_id"], {"bot"})
    assert caller.scopes == DEFAULT_SCOPES
    [item] = ddb.scan(TableName=TABLE)["Items"]
    assert item["key_hash"]["S"] == hash_api_key(created["api_key"])
    # AND nothing went to the local store
    assert not (cli_env / "auth.db").exists()


def test_the_table_setting_selects_the_table_for_list_and_revoke_and_the_authorizer_follows(
    ddb: Any,
    cli_env: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN the deployed table named in the environment, and two keys made with the CLI
    monkeypatch.setenv("AGENT_MEMORY_TENANTS_TABLE", TABLE)
    made = []
    for extra in ([], ["--admin"]):
        code, out, _ = run_cli(capsys, "keys", "create", "--tenant", "acme", "--plan", "starter", *extra)
        assert code == 0
        made.append(json.loads(out))

    # WHEN listed, THEN both show, without the key or its hash
    code, out, _ = run_cli(capsys, "keys", "list")
    assert code == 0
    listed = {info["key_id"]: info for info in map(json.loads, out.splitlines())}
    assert set(listed) == {k["key_id"] for k in made}
    assert listed[made[1]["key_id"]]["scopes"].split() == ["admin", "forget", "read", "write"]
    for created in made:
        assert created["api_key"] not in out and hash_api_key(created["api_key"]) not in out

    # AND the authorizer, invoked through the CLI, allows the first key
    code, out, _ = run_cli(capsys, "invoke", "authorizer", str(token_event(tmp_path, made[0]["api_key"])))
    assert code == 0
    policy = printed_json(out)
    assert policy["principalId"] == made[0]["key_id"]
    assert policy["context"]["tenant_id"] == "acme"

    # WHEN the first key is revoked
    code, out, _ = run_cli(capsys, "keys", "revoke", made[0]["key_id"])
    assert (code, out.strip()) == (0, f"revoked {made[0]['key_id']}")

    # THEN the list shows it revoked, a second revoke fails, and a cold authorizer refuses it
    _, out, _ = run_cli(capsys, "keys", "list")
    revoked = {info["key_id"]: info["revoked_at"] for info in map(json.loads, out.splitlines())}
    assert revoked[made[0]["key_id"]] is not None and revoked[made[1]["key_id"]] is None
    code, _, err = run_cli(capsys, "keys", "revoke", made[0]["key_id"])
    assert code == 1 and made[0]["key_id"] in err
    authorizer.reset()
    with pytest.raises(Exception, match=r"^Unauthorized$"):
        authorizer.handler(json.loads(token_event(tmp_path, made[0]["api_key"]).read_text()), LocalContext())


def test_a_missing_table_is_a_clear_error_not_a_traceback(
    ddb: Any, cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # WHEN / THEN
    for argv in (
        ["keys", "create", "--tenant", "acme", "--plan", "pro", "--table", "no-such-table"],
        ["keys", "list", "--table", "no-such-table"],
        ["keys", "revoke", "key_000000000000", "--table", "no-such-table"],
    ):
        code, out, err = run_cli(capsys, *argv)
        assert code == 1, argv
        assert out == ""
        assert err.startswith("error: ") and "no-such-table" in err and "does not exist" in err


def test_invoke_authorizer_on_the_sample_event_uses_the_local_keys_without_a_table(
    cli_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the sample event's key registered in the local auth.db
    sample_key = bearer_token(load_event("authorizer_token.json")["authorizationToken"]) or ""
    key_id, _ = LocalKeyStore(cli_env / "auth.db").create(NewKey("dev", "pro", key=sample_key))

    # WHEN the authorizer is invoked on the sample event
    code, out, _ = run_cli(capsys, "invoke", "authorizer", str(EVENTS / "authorizer_token.json"))

    # THEN it allows the sample API for that key
    assert code == 0
    policy = printed_json(out)
    assert policy["principalId"] == key_id
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow"
    assert policy["context"]["tenant_id"] == "dev"


def test_invoke_bootstrap_on_a_delete_event_keeps_the_index(
    cli_env: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN the sample custom resource event, turned into a Delete
    event = load_event("cfn_bootstrap_create.json", RequestType="Delete", PhysicalResourceId="agent-memory")
    path = tmp_path / "delete.json"
    path.write_text(json.dumps(event))

    # WHEN invoked, THEN it answers the framework with the same physical id (and needs no cluster)
    code, out, _ = run_cli(capsys, "invoke", "bootstrap", str(path))
    assert code == 0
    assert printed_json(out) == {"PhysicalResourceId": "agent-memory"}

"""The TOKEN authorizer on the sample event, against the tenants table in moto.

What API Gateway relies on: an Allow policy over the whole API and stage with the caller in the
context for a good key, and exactly ``Exception("Unauthorized")`` (its 401) for anything else.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws
from tests.payloads import load_event
from tests.tables import create_tenants_table

from agent_memory import container
from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore
from agent_memory.errors import ConfigurationError
from agent_memory.handlers import authorizer
from agent_memory.local.lambda_context import LocalContext
from agent_memory.model.caller import DEFAULT_SCOPES, Caller
from agent_memory.tenancy.rules.keys import NewKey, bearer_token, hash_api_key, new_api_key

TABLE = "tenants"
EVENT = "authorizer_token.json"
#: The key in events/authorizer_token.json.
SAMPLE_KEY = bearer_token(load_event(EVENT)["authorizationToken"]) or ""
API_WILDCARD = "arn:aws:execute-api:us-east-1:123456789012:abc123/v1/*/*"


@pytest.fixture
def ddb(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        create_tenants_table(client, TABLE)
        monkeypatch.setenv("AGENT_MEMORY_TENANTS_TABLE", TABLE)
        monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
        container.reset()
        authorizer.reset()
        yield client
        authorizer.reset()
        container.reset()


@pytest.fixture
def keys(ddb: Any) -> DynamoDbKeyStore:
    return DynamoDbKeyStore(TABLE, client=ddb)


def authorize(**overrides: Any) -> dict[str, Any]:
    result: dict[str, Any] = authorizer.handler(load_event(EVENT, **overrides), LocalContext())
    return result


def assert_unauthorized(**overrides: Any) -> None:
    with pytest.raises(Exception) as raised:  # API Gateway matches this exact type and message
        authorize(**overrides)
    assert type(raised.value) is Exception
    assert str(raised.value) == "Unauthorized"


def test_a_valid_key_gets_an_allow_policy_over_the_api_with_the_caller_as_context(
    keys: DynamoDbKeyStore,
) -> None:
    # GIVEN the sample event's key, registered for tenant acme and limited to one agent
    key_id, _ = keys.create(NewKey("acme", "pro", agents=frozenset({"support-bot"}), key=SAMPLE_KEY))

    # WHEN the authorizer runs on the sample event
    result = authorize()

    # THEN it allows every method of the same API and stage, for that key
    assert result["principalId"] == key_id
    assert result["policyDocument"] == {
        "Version": "2012-10-17",
        "Statement": [{"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": [API_WILDCARD]}],
    }
    # AND the context is the caller, all strings, which the API function reads back unchanged
    expected = Caller(
        tenant_id="acme", key_id=key_id, plan="pro", scopes=DEFAULT_SCOPES, agents=frozenset({"support-bot"})
    )
    assert result["context"] == expected.to_authorizer()
    assert all(isinstance(v, str) for v in result["context"].values())
    assert Caller.from_authorizer(result["context"]) == expected


def test_the_context_reaches_the_api_function_as_its_tenant(keys: DynamoDbKeyStore) -> None:
    # GIVEN the authorizer's answer for an admin key of tenant globex
    keys.create(NewKey("globex", "unlimited", admin=True, key=SAMPLE_KEY))
    context = authorize()["context"]

    # WHEN API Gateway hands it to the API function (plus the principalId it adds)
    caller = Caller.from_authorizer({**context, "principalId": "ignored"})

    # THEN the API function serves that tenant, plan and scopes
    assert (caller.tenant_id, caller.plan) == ("globex", "unlimited")
    caller.require_scope("admin")
    caller.require_agent("any-agent")


def test_an_unknown_key_is_unauthorized(keys: DynamoDbKeyStore) -> None:
    # GIVEN
    keys.create(NewKey("acme", "pro"))  # some other key

    # WHEN / THEN
    assert_unauthorized()


def test_a_revoked_key_is_unauthorized(keys: DynamoDbKeyStore) -> None:
    # GIVEN
    key_id, _ = keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))
    # WHEN
    keys.revoke(key_id)

    # THEN
    assert_unauthorized()


@pytest.mark.parametrize(
    "header",
    [
        "",
        "Bearer",
        "Bearer   ",
        "Basic dXNlcjpwYXNz",
        SAMPLE_KEY,  # the key without its scheme
        None,
        42,
    ],
)
def test_a_malformed_header_is_unauthorized_without_reading_the_table(
    keys: DynamoDbKeyStore, ddb: Any, header: Any
) -> None:
    # GIVEN the sample key is valid, but the table is gone: any read would fail loudly
    keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))
    ddb.delete_table(TableName=TABLE)

    # WHEN / THEN a malformed header is refused as unauthorized, with no read of the table
    assert_unauthorized(authorizationToken=header)


def test_the_bearer_scheme_is_case_insensitive(keys: DynamoDbKeyStore) -> None:
    # GIVEN
    keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))

    # WHEN / THEN
    assert authorize(authorizationToken=f"bearer {SAMPLE_KEY}")["context"]["tenant_id"] == "acme"


@pytest.mark.parametrize("method_arn", [None, "", "not-an-arn", "arn:aws:execute-api:us-east-1"])
def test_an_event_without_a_usable_method_arn_fails_closed(keys: DynamoDbKeyStore, method_arn: Any) -> None:
    # GIVEN
    keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))

    # WHEN / THEN
    assert_unauthorized(methodArn=method_arn)


def test_the_policy_follows_the_partition_of_the_method_arn(keys: DynamoDbKeyStore) -> None:
    # GIVEN
    keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))
    arn = "arn:aws-cn:execute-api:cn-north-1:123456789012:xyz789/prod/GET/v1/agents/a/stats"

    # WHEN
    [statement] = authorize(methodArn=arn)["policyDocument"]["Statement"]

    # THEN
    assert statement["Resource"] == ["arn:aws-cn:execute-api:cn-north-1:123456789012:xyz789/prod/*/*"]


def test_warm_invocations_answer_from_the_cache_without_reading_the_table(
    keys: DynamoDbKeyStore, ddb: Any
) -> None:
    # GIVEN a good key and an unknown one, each seen once
    key_id, _ = keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))
    unknown = new_api_key()
    assert authorize()["principalId"] == key_id
    assert_unauthorized(authorizationToken=f"Bearer {unknown}")

    # WHEN the table disappears
    ddb.delete_table(TableName=TABLE)

    # THEN both answers still come from the cache, for any route of the API
    other_route = "arn:aws:execute-api:us-east-1:123456789012:abc123/v1/GET/v1/agents/support-bot/stats"
    assert authorize(methodArn=other_route)["principalId"] == key_id
    assert_unauthorized(authorizationToken=f"Bearer {unknown}")

    # AND a key not seen before needs the table, whose failure is not a 401 (API Gateway: 500)
    with pytest.raises(ConfigurationError, match=TABLE):
        authorize(authorizationToken=f"Bearer {new_api_key()}")


def test_the_key_is_never_logged_and_a_refusal_is_not_an_error(keys: DynamoDbKeyStore) -> None:
    # GIVEN the service's log stream captured at DEBUG, and one allowed and one refused request
    handler = authorizer.logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous = handler.setStream(stream)
    authorizer.logger.setLevel("DEBUG")
    try:
        key_id, _ = keys.create(NewKey("acme", "pro", key=SAMPLE_KEY))
        authorize()
        unknown = new_api_key()
        assert_unauthorized(authorizationToken=f"Bearer {unknown}")
    finally:
        authorizer.logger.setLevel("INFO")
        handler.setStream(previous)

    # WHEN / THEN the log lines say what happened, hold neither key nor hash, and nothing is an error
    logged = stream.getvalue()
    lines = [json.loads(line) for line in logged.splitlines()]
    assert any(line.get("reason") == "unknown or revoked key" for line in lines)
    assert any(line.get("tenant_id") == "acme" and line.get("key_id") == key_id for line in lines)
    assert {line["level"] for line in lines} <= {"DEBUG", "INFO"}
    for secret in (SAMPLE_KEY, hash_api_key(SAMPLE_KEY), unknown, hash_api_key(unknown)):
        assert secret not in logged

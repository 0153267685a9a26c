"""Enrolling tenants in their plan's usage plan, against API Gateway in moto."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.apigateway_usage import ApiGatewayUsagePlans
from agent_memory.errors import ConfigurationError
from agent_memory.tenancy.rules.usage import usage_key

PREFIX = "agent-memory-dev"


@pytest.fixture
def apigateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    with mock_aws():
        client = boto3.client("apigateway", region_name="us-east-1")
        for plan in ("free", "pro"):
            client.create_usage_plan(name=f"{PREFIX}-{plan}")
        client.create_usage_plan(name="agent-memory-prod-free")  # another stage's: never touched
        yield client


def members(client: Any, name: str) -> set[str]:
    (plan,) = [p for p in client.get_usage_plans()["items"] if p["name"] == name]
    return {k["name"] for k in client.get_usage_plan_keys(usagePlanId=plan["id"])["items"]}


def test_a_tenant_is_in_exactly_its_plans_usage_plan_and_moves_with_its_plan(apigateway: Any) -> None:
    # GIVEN
    plans = ApiGatewayUsagePlans(PREFIX, apigateway)
    key_id = plans.enroll("acme", "free")
    # WHEN / THEN
    assert members(apigateway, f"{PREFIX}-free") == {f"{PREFIX}-tenant-acme"}
    assert plans.enroll("acme", "free") == key_id  # idempotent: one key, one membership
    plans.enroll("acme", "pro")
    assert members(apigateway, f"{PREFIX}-free") == set()
    assert members(apigateway, f"{PREFIX}-pro") == {f"{PREFIX}-tenant-acme"}
    assert members(apigateway, "agent-memory-prod-free") == set()
    # the key's value is the one the authorizer names for this tenant
    (key,) = apigateway.get_api_keys(includeValues=True)["items"]
    assert key["value"] == usage_key(PREFIX, "acme")


def test_two_tenants_get_two_keys(apigateway: Any) -> None:
    # GIVEN
    plans = ApiGatewayUsagePlans(PREFIX, apigateway)
    # WHEN / THEN
    assert plans.enroll("acme", "free") != plans.enroll("globex", "free")
    assert (
        usage_key(PREFIX, "acme") != usage_key(PREFIX, "globex") != usage_key("agent-memory-prod", "globex")
    )


def test_a_plan_without_a_usage_plan_is_a_configuration_error(apigateway: Any) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="agent-memory-dev-starter"):
        ApiGatewayUsagePlans(PREFIX, apigateway).enroll("acme", "starter")

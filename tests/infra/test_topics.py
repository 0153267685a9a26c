"""The topics table: tenant-partitioned items with a TTL, PITR, and least-privilege access (the API
function reads, replaces and counts; the search function only reads; nothing else touches it)."""

from __future__ import annotations

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

FUNCTIONS = ("Api", "Search", "Writer", "Authorizer", "Retention", "SummarizeDispatch", "SummarizeWorker")
EXPECTED = {
    "Api": [
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:DeleteItem",
        "dynamodb:UpdateItem",
        "dynamodb:Query",
    ],
    "Search": "dynamodb:GetItem",
}


def _table_arn(synth: Synth) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [synth.logical_id(synth.stack.api.topics.table), "Arn"]}


def test_table_is_keyed_by_tenant_with_a_ttl_on_demand_and_pitr(synth: Synth) -> None:
    # WHEN
    props = synth.props(synth.stack.api.topics.table)
    # THEN
    assert props["KeySchema"] == [
        {"AttributeName": "tenant_id", "KeyType": "HASH"},
        {"AttributeName": "sk", "KeyType": "RANGE"},
    ]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expires_at", "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert "GlobalSecondaryIndexes" not in props


@pytest.mark.parametrize("name", ["Api", "Search"])
def test_api_and_search_functions_are_configured_for_the_table(synth: Synth, name: str) -> None:
    # WHEN
    env = synth.function(name)["Environment"]["Variables"]
    # THEN
    assert env["AGENT_MEMORY_TOPICS"] == "dynamodb"
    assert env["AGENT_MEMORY_TOPICS_TABLE"] == {"Ref": synth.logical_id(synth.stack.api.topics.table)}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_only_the_api_and_search_functions_touch_the_table_with_only_their_calls(
    synth: Synth, name: str
) -> None:
    # GIVEN
    table = _table_arn(synth)
    on_table = [
        s
        for s in synth.function_statements(name)
        if table in as_list(s["Resource"])
        or {"Fn::Join": ["", [table, "/index/*"]]} in as_list(s["Resource"])
    ]
    # WHEN / THEN
    if name not in EXPECTED:
        assert on_table == [], name
        return
    assert on_table == [{"Action": EXPECTED[name], "Effect": "Allow", "Resource": table}]


def test_the_authorizer_cannot_read_topics_and_the_topic_functions_cannot_read_keys(synth: Synth) -> None:
    # GIVEN
    tenants = {"Fn::GetAtt": [synth.logical_id(synth.stack.api.tenants), "Arn"]}
    # WHEN / THEN (the Api function changes read grants there: test_api.py)
    assert not [s for s in synth.function_statements("Search") if tenants in as_list(s["Resource"])]

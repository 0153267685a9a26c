"""The idempotency table behind ``Idempotency-Key``: Powertools' layout, TTL, PITR, and item access
for the API function alone (least privilege)."""

from __future__ import annotations

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

FUNCTIONS = ("Api", "Search", "Writer", "Authorizer", "Retention", "SummarizeDispatch", "SummarizeWorker")


def _table_arn(synth: Synth) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [synth.logical_id(synth.stack.api.idempotency.table), "Arn"]}


def test_table_has_powertools_key_ttl_on_demand_and_pitr(synth: Synth) -> None:
    # WHEN
    props = synth.props(synth.stack.api.idempotency.table)
    # THEN
    assert props["KeySchema"] == [{"AttributeName": "id", "KeyType": "HASH"}]
    assert props["AttributeDefinitions"] == [{"AttributeName": "id", "AttributeType": "S"}]
    assert props["TimeToLiveSpecification"] == {"AttributeName": "expiration", "Enabled": True}
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert "GlobalSecondaryIndexes" not in props


def test_api_function_is_configured_for_the_table(synth: Synth) -> None:
    # GIVEN
    function = synth.function("Api")
    env = function["Environment"]["Variables"]
    # WHEN / THEN
    assert env["AGENT_MEMORY_IDEMPOTENCY"] == "dynamodb"
    assert env["AGENT_MEMORY_IDEMPOTENCY_TABLE"] == {
        "Ref": synth.logical_id(synth.stack.api.idempotency.table)
    }
    # a request that dies holds its key no longer than the function may run
    assert int(env["AGENT_MEMORY_IDEMPOTENCY_IN_PROGRESS_S"]) == function["Timeout"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_only_the_api_function_may_touch_the_table_and_only_its_items(synth: Synth, name: str) -> None:
    # GIVEN
    table = _table_arn(synth)
    on_table = [
        s
        for s in synth.function_statements(name)
        if table in as_list(s["Resource"])
        or {"Fn::Join": ["", [table, "/index/*"]]} in as_list(s["Resource"])
    ]
    # WHEN / THEN
    if name != "Api":
        assert on_table == [], name
        return
    assert on_table == [
        {
            "Action": ["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:UpdateItem", "dynamodb:DeleteItem"],
            "Effect": "Allow",
            "Resource": table,
        }
    ]

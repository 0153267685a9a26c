"""The tenant settings table and the provider-key secrets: every function that serves a tenant
reads its settings (one item), only the API function writes them, only the API function sets
and deletes keys, only the summarize worker reads a key, and no function may list either."""

from __future__ import annotations

import json

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

FUNCTIONS = ("Api", "Search", "Writer", "Authorizer", "Retention", "SummarizeDispatch", "SummarizeWorker")
TABLE_ACTIONS = {
    "Api": {"dynamodb:GetItem", "dynamodb:PutItem"},
    "Search": {"dynamodb:GetItem"},
    "Writer": {"dynamodb:GetItem"},
    "Retention": {"dynamodb:GetItem"},
    "SummarizeWorker": {"dynamodb:GetItem", "dynamodb:PutItem"},  # the re-embedding's state
}
SECRET_ACTIONS = {
    "Api": {
        "secretsmanager:CreateSecret",
        "secretsmanager:PutSecretValue",
        "secretsmanager:GetSecretValue",
        "secretsmanager:DescribeSecret",
        "secretsmanager:DeleteSecret",
    },
    "SummarizeWorker": {"secretsmanager:GetSecretValue"},
    # a query, and every memory, embedded by a tenant's own model with its key
    "Search": {"secretsmanager:GetSecretValue"},
    "Writer": {"secretsmanager:GetSecretValue"},
}


def test_the_table_is_keyed_by_tenant_on_demand_with_pitr(synth: Synth) -> None:
    # WHEN
    props = synth.props(synth.stack.tenant_settings.table)
    # THEN
    assert props["KeySchema"] == [{"AttributeName": "tenant_id", "KeyType": "HASH"}]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}


def test_each_function_may_do_exactly_its_part(synth: Synth) -> None:
    # GIVEN
    table = {"Fn::GetAtt": [synth.logical_id(synth.stack.tenant_settings.table), "Arn"]}
    # WHEN / THEN
    for function in FUNCTIONS:
        statements = synth.function_statements(function)
        on_table = {a for s in statements if s["Resource"] == table for a in as_list(s["Action"])}
        assert on_table == TABLE_ACTIONS.get(function, set()), function
        secrets = {a for s in statements for a in as_list(s["Action"]) if a.startswith("secretsmanager:")}
        assert secrets == SECRET_ACTIONS.get(function, set()), function
        for s in statements:
            if any(a.startswith("secretsmanager:") for a in as_list(s["Action"])):
                assert "tenants/*" in json.dumps(s["Resource"]), function  # the prefix, never "*"
        env = synth.function(function)["Environment"]["Variables"]
        reads = function in TABLE_ACTIONS
        assert (env.get("AGENT_MEMORY_TENANT_SETTINGS") == "dynamodb") == reads, function
        assert (env.get("AGENT_MEMORY_SECRETS") == "secretsmanager") == (function in SECRET_ACTIONS), function

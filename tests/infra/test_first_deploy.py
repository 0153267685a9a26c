"""What a first `cdk deploy` into a new account needs from the template, and what lets a deploy
that failed be run again: a summary model a new account can enable, an alarm topic CloudWatch
may publish to, nothing left behind by a rollback that would block the retry, and function
resource policies that stay far below Lambda's 20 KB as routes are added."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list, committed_context, render

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

#: Lambda's limit on a function's resource-based policy (bytes).
LAMBDA_POLICY_LIMIT = 20_480
#: The longest statement id CloudFormation makes for an AWS::Lambda::Permission.
LONGEST_SID = 100
#: Resources kept by a rollback of the first deploy on purpose: the account's API Gateway logging
#: role and setting, which other APIs of the account rely on; neither has a name to collide with.
ACCOUNT_WIDE = {"AWS::IAM::Role", "AWS::ApiGateway::Account"}


def test_the_default_summary_model_is_one_a_new_account_can_enable() -> None:
    # GIVEN
    from agent_memory_stack.config import RETIRED_MODELS, base_model_id, inference_profile, parse_config

    # WHEN
    model = parse_config(committed_context()).summary_model_id
    # THEN a current Claude model through an inference profile (Claude 4.5 has no on-demand id)
    assert base_model_id(model) not in RETIRED_MODELS
    assert inference_profile(model) and base_model_id(model).startswith("anthropic.claude-haiku-4-5")


@pytest.mark.parametrize(
    "model", ["anthropic.claude-3-haiku-20240307-v1:0", "us.anthropic.claude-3-5-haiku-20241022-v1:0"]
)
def test_a_legacy_summary_model_stops_the_synth_with_a_reason(model: str) -> None:
    # GIVEN
    from agent_memory_stack.config import ConfigError, parse_config

    # WHEN / THEN
    with pytest.raises(ConfigError, match="Legacy or retired model on Bedrock"):
        parse_config({**committed_context(), "summary_model_id": model})


def test_cloudwatch_may_publish_to_the_alarm_topic(synth: Synth) -> None:
    # GIVEN
    (topic_id,) = synth.of_type("AWS::SNS::Topic")
    (policy,) = synth.of_type("AWS::SNS::TopicPolicy").values()
    # WHEN
    statements = policy["Properties"]["PolicyDocument"]["Statement"]
    allows = [
        s
        for s in statements
        if s["Effect"] == "Allow"
        and s["Principal"] == {"Service": "cloudwatch.amazonaws.com"}
        and "sns:Publish" in as_list(s["Action"])
    ]
    # THEN the policy (which replaces SNS's default one) lets this account's alarms publish
    assert policy["Properties"]["Topics"] == [{"Ref": topic_id}]
    (allow,) = allows
    assert allow["Resource"] == {"Ref": topic_id}
    assert render(allow["Condition"]["ArnLike"]["aws:SourceArn"]) == (
        "arn:<AWS::Partition>:cloudwatch:<AWS::Region>:<AWS::AccountId>:alarm:*"
    )
    assert allow["Condition"]["StringEquals"] == {"aws:SourceAccount": {"Ref": "AWS::AccountId"}}
    # AND plain-HTTP publishing is still refused
    assert any(s["Effect"] == "Deny" for s in statements)


@pytest.mark.parametrize("variant", ["synth", "files"])
def test_a_failed_first_deploy_leaves_nothing_that_blocks_a_retry(variant: str, request: Any) -> None:
    # GIVEN
    template: Synth = request.getfixturevalue(variant)
    # WHEN
    kept = {lid: r for lid, r in template.resources.items() if r.get("DeletionPolicy") == "Retain"}
    # THEN what holds data is kept on delete but deleted by the rollback of a failed create
    assert {r["Type"] for r in kept.values()} <= ACCOUNT_WIDE, sorted(kept)
    assert not [lid for lid, r in kept.items() if "RoleName" in r.get("Properties", {})]
    data = [r for r in template.resources.values() if r.get("DeletionPolicy") == "RetainExceptOnCreate"]
    assert {r["Type"] for r in data} >= {"AWS::DynamoDB::Table"}
    # AND no table is protected from the rollback's delete (the stack would be stuck)
    assert not [
        lid
        for lid, r in template.of_type("AWS::DynamoDB::Table").items()
        if r["Properties"].get("DeletionProtectionEnabled")
    ]


def test_the_domain_is_deleted_when_the_first_deploy_rolls_back(synth: Synth) -> None:
    # WHEN
    (domain,) = synth.of_type("AWS::OpenSearchService::Domain").values()
    # THEN
    assert domain["DeletionPolicy"] == "RetainExceptOnCreate"
    assert domain["UpdateReplacePolicy"] == "Retain"  # a replacement keeps the old domain's data


def _permissions(template: Synth, function: Any) -> list[dict[str, Any]]:
    target = {"Fn::GetAtt": [template.logical_id(function), "Arn"]}
    return [
        p["Properties"]
        for p in template.of_type("AWS::Lambda::Permission").values()
        if p["Properties"]["FunctionName"] == target
        and p["Properties"]["Principal"] == "apigateway.amazonaws.com"
    ]


def _policy_bytes(function_arn: str, permissions: list[dict[str, Any]]) -> int:
    """The function's resource policy as Lambda stores it, each statement at its longest."""
    statements = [
        {
            "Sid": "s" * LONGEST_SID,
            "Effect": "Allow",
            "Principal": {"Service": p["Principal"]},
            "Action": p["Action"],
            "Resource": function_arn,
            "Condition": {"ArnLike": {"AWS:SourceArn": render(p["SourceArn"])}},
        }
        for p in permissions
    ]
    return len(json.dumps({"Version": "2012-10-17", "Id": "default", "Statement": statements}))


@pytest.mark.parametrize("name", ["Api", "Search"])
def test_one_invoke_permission_covers_every_route_of_a_function(synth: Synth, name: str) -> None:
    # GIVEN
    function = synth.stack.factory.functions[name]
    arn = "arn:aws:lambda:ap-southeast-2:123456789012:function:" + "f" * 64
    # WHEN
    permissions = _permissions(synth, function)
    # THEN one statement for the whole API, whatever the number of routes
    (permission,) = permissions
    rest_api = synth.logical_id(synth.stack.api.rest_api)
    assert render(permission["SourceArn"]) == (
        f"arn:<AWS::Partition>:execute-api:<AWS::Region>:<AWS::AccountId>:<{rest_api}>/*/*/*"
    )
    assert _policy_bytes(arn, permissions) < LAMBDA_POLICY_LIMIT // 20

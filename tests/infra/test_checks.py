"""The checks AWS engineers run: cdk-nag AwsSolutions and cfn-lint, over both variants."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

#: Every kind of finding the stack acknowledges. A new kind must be added here on purpose, with
#: its reason in the code that causes it.
ACKNOWLEDGED = {
    "AwsSolutions-IAM5",  # X-Ray "*", one domain's paths, function versions (ARN:*), profile's model region
    "AwsSolutions-IAM4",  # the account-wide API Gateway logging role's AWS managed policy
    "AwsSolutions-L1",  # Python 3.12 pinned with the layer; the Provider framework's Node runtime
    "AwsSolutions-OS1",  # no VPC: SigV4 + FGAC, no NAT for the functions
    "AwsSolutions-OS3",  # access by IAM role, not IP
    "AwsSolutions-OS4",  # no dedicated masters in the default size
    "AwsSolutions-APIG3",  # no WAF by default
    "AwsSolutions-COG4",  # API keys through a Lambda authorizer, not Cognito
    "AwsSolutions-SQS3",  # the schedules' DLQ is itself a dead-letter queue
    "AwsSolutions-S1",  # the serverless store's bucket: no access-log bucket billed per write
}


def _acknowledgments(synth: Synth) -> dict[str, str]:
    from aws_cdk import Validations

    found = {}
    for construct in synth.stack.node.find_all():
        for entry in construct.node.metadata:
            if entry.type == Validations.ACKNOWLEDGED_RULES_METADATA_KEY:
                for rule, reason in entry.data.items():
                    found[f"{construct.node.path} {rule}"] = reason
    return found


@pytest.mark.parametrize("variant", ["synth", "alt", "files"])
def test_every_acknowledged_finding_is_a_known_kind_with_a_reason(
    variant: str, request: pytest.FixtureRequest
) -> None:
    # GIVEN a stack that synthesized with AwsSolutionsChecks (any other finding fails the synth)
    synth: Synth = request.getfixturevalue(variant)
    # WHEN its acknowledged findings are read from the template
    acknowledgments = _acknowledgments(synth)
    # THEN there are some, each of a known rule and with a reason of 40 characters or more
    assert acknowledgments
    for where, reason in acknowledgments.items():
        rule = where.split(" ", 1)[1].removeprefix("AwsSolutions::").split("[", 1)[0]
        assert rule in ACKNOWLEDGED, where
        assert len(reason) >= 40, where


def test_no_finding_is_acknowledged_for_the_whole_stack(synth: Synth) -> None:
    # WHEN / THEN
    # Acknowledgments sit on the construct that causes them, never on the stack or app.
    assert not [w for w in _acknowledgments(synth) if w.split(" ")[0] == synth.stack.node.path]


def test_cdk_nag_fails_synth_on_an_unacknowledged_finding(tmp_path: Path) -> None:
    # GIVEN the app as `cdk synth` builds it, plus a queue without encryption or TLS enforcement
    from aws_cdk import App
    from aws_cdk import aws_sqs as sqs

    import app as cdk_app
    from agent_memory_stack.config import parse_config

    app = App(outdir=str(tmp_path), context={"aws:cdk:bundling-stacks": []})
    stack = cdk_app.build(app, parse_config({}))
    sqs.Queue(stack, "Careless", encryption=sqs.QueueEncryption.UNENCRYPTED)
    # WHEN it is synthesized THEN cdk-nag stops it, naming the finding
    with pytest.raises(RuntimeError, match="ValidationFailed") as failure:
        app.synth()
    message = str(failure.value)
    for rule in ("AwsSolutions-SQS2", "AwsSolutions-SQS3", "AwsSolutions-SQS4"):
        assert f"{rule}" in message
    assert "agent-memory-dev/Careless/Resource" in message


@pytest.mark.parametrize("variant", ["synth", "alt", "files"])
def test_cfn_lint_finds_nothing_but_cdks_own_dependson(variant: str, request: pytest.FixtureRequest) -> None:
    # GIVEN
    synth: Synth = request.getfixturevalue(variant)
    from cfnlint.api import ManualArgs, lint_file

    # WHEN
    # W3005: CDK writes DependsOn next to GetAtt for the same resource; harmless and not ours.
    matches = lint_file(synth.path, ManualArgs(ignore_checks=["W3005"], regions=["us-east-1"]))
    # THEN
    assert [str(m) for m in matches] == []


def test_resource_count_stays_reviewable(synth: Synth) -> None:
    # WHEN / THEN
    # Not a limit (CloudFormation allows 500): a jump here means a construct started multiplying.
    # The change feed added 21 (bus, rule, webhooks table, delivery queue and its dead letters, the
    # delivery function with its role, logs and alarms, and the three webhook routes).
    assert 120 <= len(synth.resources) <= 290

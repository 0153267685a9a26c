"""What the smoke test (`local.smoke`) asks AWS about a deployed stack, which its HTTP API cannot
tell: the stack's outputs, whether the account may call the summary model, whether a dead-letter
queue holds messages, whether an alarm is in ALARM. Each answer is None when all is well, else
a sentence saying what is wrong and what to do. Run with the operator's credentials."""

from __future__ import annotations

from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

#: Logical ids of the stack's queues that hold what failed (every one has a depth alarm too).
DEAD_LETTER_MARKS = ("DeadLetters", "RunFailures")

MODEL_ACCESS = (
    "enable it in the Bedrock console (Model access): an Anthropic model needs the one-time "
    "first-use form and the account's AWS Marketplace subscription to the model (README, Deploy)"
)


class DeploymentProbe:
    """One stack, in the region of the default session (or ``region``)."""

    def __init__(self, stack_name: str, region: str | None = None, session: Any | None = None) -> None:
        self.stack_name = stack_name
        self._session = session or boto3.session.Session(region_name=region)
        self._outputs: dict[str, str] | None = None

    def outputs(self) -> dict[str, str]:
        if self._outputs is None:
            stacks = self._session.client("cloudformation").describe_stacks(StackName=self.stack_name)[
                "Stacks"
            ]
            self._outputs = {o["OutputKey"]: o["OutputValue"] for o in stacks[0].get("Outputs", [])}
        return self._outputs

    def api_url(self) -> str:
        return self.outputs()["ApiUrl"]

    def model_access(self) -> str | None:
        """Call the summary model once with a one-token answer: refused means no model access."""
        model = self.outputs().get("SummaryModelId")
        if not model:
            return "the stack has no SummaryModelId output (deployed before it had one): not checked"
        try:
            self._session.client("bedrock-runtime").converse(
                modelId=model,
                messages=[{"role": "user", "content": [{"text": "Say OK."}]}],
                inferenceConfig={"maxTokens": 1},
            )
        except ClientError as exc:
            error = exc.response.get("Error", {})
            refused = f"{error.get('Code')}: {error.get('Message')}"
            return f"the summary model {model} refused this account ({refused}): {MODEL_ACCESS}"
        except BotoCoreError as exc:
            return f"the summary model {model} could not be reached: {exc}"
        return None

    def dead_letters(self) -> str | None:
        sqs = self._session.client("sqs")
        holding = []
        for resource in self._resources("AWS::SQS::Queue"):
            if any(mark in resource["LogicalResourceId"] for mark in DEAD_LETTER_MARKS):
                attributes = sqs.get_queue_attributes(
                    QueueUrl=resource["PhysicalResourceId"], AttributeNames=["ApproximateNumberOfMessages"]
                )["Attributes"]
                if int(attributes.get("ApproximateNumberOfMessages", 0)):
                    holding.append(
                        f"{resource['LogicalResourceId']} ({attributes['ApproximateNumberOfMessages']})"
                    )
        if not holding:
            return None
        return (
            f"dead-letter queues hold messages: {', '.join(holding)}: read why in the functions' logs, "
            "fix the cause, then redrive (docs/infrastructure.md, Operations)"
        )

    def alarms_firing(self) -> str | None:
        pages = self._session.client("cloudwatch").get_paginator("describe_alarms")
        firing = [
            alarm["AlarmName"]
            for page in pages.paginate(AlarmNamePrefix=f"{self.stack_name}-", StateValue="ALARM")
            for alarm in page["MetricAlarms"]
        ]
        if not firing:
            return None
        return f"alarms in ALARM: {', '.join(sorted(firing))} (the dashboard {self.stack_name} shows why)"

    def _resources(self, resource_type: str) -> list[dict[str, Any]]:
        pages = self._session.client("cloudformation").get_paginator("list_stack_resources")
        return [
            r
            for page in pages.paginate(StackName=self.stack_name)
            for r in page["StackResourceSummaries"]
            if r["ResourceType"] == resource_type
        ]

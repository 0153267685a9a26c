"""The synthesized stack, run offline: each Lambda function with the environment and the IAM role
the template gives it.

- `Deployment` resolves the template's intrinsics (``Ref``, ``Fn::GetAtt``, ``Fn::Join``,
  ``Fn::Sub``, pseudo parameters) to deterministic names and ARNs in account 123456789012,
  us-east-1, and creates every SQS queue and DynamoDB table of the template in moto under them.
- `Deployment.run(function, event)` clears the process's settings, sets exactly the function's
  template environment (plus what Lambda itself sets), rebuilds the container and calls the
  function's real handler.
- While a function runs, every AWS call its code makes is checked against that function's
  policy statements, action and resource, wildcards as IAM evaluates them: a call its role does
  not allow fails with ``AccessDenied`` as it would in AWS. Botocore calls are checked in
  ``BaseClient._make_api_call``; OpenSearch HTTP calls (``es:ESHttp<Method>`` on the domain's
  path) in the opensearch-py connection. Bedrock runtime is answered by a recording fake,
  OpenSearch by `fake_opensearch.FakeDomain`; SQS, DynamoDB and Scheduler by moto.
- Local fallbacks are a deployment defect (Lambda's file system is read-only outside /tmp, and
  a file in /tmp is per container): opening an SQLite database while a function runs fails.
- A thread pool a function starts (the embedder's, for a batch of texts) runs its tasks as that
  function: each task carries the submitting context, so its calls are checked like the rest.
"""

from __future__ import annotations

import contextvars
import io
import json
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from typing import Any

import numpy as np
from botocore.client import BaseClient
from botocore.exceptions import ClientError
from botocore.response import StreamingBody
from opensearchpy import Urllib3HttpConnection

ACCOUNT = "123456789012"
REGION = "us-east-1"
#: Where a geographic inference profile of `REGION` may route a model call.
OTHER_REGION = "us-west-2"
PARTITION = "aws"

#: Operations IAM authorizes by another action's name.
IAM_ACTION = {
    "sqs:SendMessageBatch": "sqs:SendMessage",
    "sqs:DeleteMessageBatch": "sqs:DeleteMessage",
    "sqs:ChangeMessageVisibilityBatch": "sqs:ChangeMessageVisibility",
    "bedrock:Converse": "bedrock:InvokeModel",
    "bedrock:ConverseStream": "bedrock:InvokeModelWithResponseStream",
    "lambda:Invoke": "lambda:InvokeFunction",
    "s3:HeadObject": "s3:GetObject",
    "s3:ListObjectsV2": "s3:ListBucket",
    "s3:CreateMultipartUpload": "s3:PutObject",
    "s3:UploadPart": "s3:PutObject",
    "s3:CompleteMultipartUpload": "s3:PutObject",
}
#: Actions every function has for its runtime (logs, traces), not made by the code.
RUNTIME_ACTIONS = ("xray:", "logs:")
#: Settings that describe a deployment (which adapter, which resource, which model, which rules):
#: a function that reads one must have it in its environment, or it runs on a default that was
#: never chosen for it. The rest are tuning knobs whose defaults are the product's.
DEPLOYMENT_SETTINGS = frozenset(
    {
        "store", "queue", "pending", "idempotency", "topics", "embedder", "summarizer",
        "write_queue_url", "dead_letter_queue_url", "pending_table", "idempotency_table",
        "tenants_table", "topics_table", "summarize_queue_url", "retention_function", "usage_plans",
        "opensearch_endpoint", "opensearch_service", "opensearch_index_alias", "store_bucket",
        "store_prefix", "export_bucket",
        "change_feed", "event_bus_name", "webhooks", "webhooks_table", "webhook_queue_url",
        "embedding_dimension", "bedrock_embedding_model_id", "bedrock_summary_model_id",
        "timezone", "plans", "retention_max_unsummarized_days", "forget_grace_days",
        "max_working_per_agent", "default_ttls", "max_receive_count",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Call:
    function: str
    action: str
    resource: str
    allowed: bool


@dataclass
class Function:
    name: str  # the factory's name: Api, Writer, ...
    logical_id: str
    handler: str
    environment: dict[str, str]
    statements: list[dict[str, Any]]
    timeout_s: int

    def allows(self, action: str, resource: str, context: Mapping[str, str] | None = None) -> bool:
        """IAM's answer for one call: a Deny that applies wins, else an Allow that applies. A
        statement applies when its action, resource and every condition match the call, whose
        condition keys are ``context`` (``{"s3:prefix": "stores/"}``)."""
        allowed = False
        for statement in self.statements:
            if _matches(statement, action, resource) and conditions_hold(
                statement.get("Condition", {}), context or {}
            ):
                if statement.get("Effect", "Allow") == "Deny":
                    return False
                allowed = True
        return allowed


#: Condition operators the harness evaluates, by how a value of the call compares to one of the
#: statement's; an operator missing here fails the test rather than being ignored.
_OPERATORS: dict[str, Callable[[str, str], bool]] = {
    "StringEquals": lambda value, wanted: value == wanted,
    "StringEqualsIgnoreCase": lambda value, wanted: value.lower() == wanted.lower(),
    "StringLike": lambda value, wanted: _wildcard(wanted, value, case=True),
    "ArnEquals": lambda value, wanted: value == wanted,
    "ArnLike": lambda value, wanted: _wildcard(wanted, value, case=True),
    "Bool": lambda value, wanted: value.lower() == wanted.lower(),
}


def conditions_hold(conditions: Mapping[str, Mapping[str, Any]], context: Mapping[str, str]) -> bool:
    """Whether every condition of a statement holds for a call with these condition keys.

    As IAM evaluates them: a key the call does not carry fails a positive operator (unless the
    operator ends in ``IfExists``) and passes a negated one (``StringNotEquals``, ``StringNotLike``,
    ...); one value of the statement's list matching is enough; ``Null`` asks whether the key is
    absent.
    """
    for operator, keys in conditions.items():
        for key, wanted in keys.items():
            values = [str(v) for v in _as_list(wanted)]
            present = key in context
            if operator == "Null":
                if (values[0].lower() == "true") == present:
                    return False
                continue
            base = operator.removesuffix("IfExists")
            negated = "Not" in base
            compare = _OPERATORS.get(base.replace("Not", "", 1) if negated else base)
            if compare is None:
                raise AssertionError(f"condition operator {operator}: the harness cannot evaluate it")
            if not present:
                if operator.endswith("IfExists") or negated:
                    continue
                return False
            matched = any(compare(context[key], v) for v in values)
            if matched == negated:
                return False
    return True


def _as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def _wildcard(pattern: str, value: str, case: bool) -> bool:
    regex = "".join(".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.fullmatch(regex, value, 0 if case else re.IGNORECASE) is not None


def _matches(statement: dict[str, Any], action: str, resource: str) -> bool:
    """IAM's matching: actions case-insensitively, resources case-sensitively, ``*`` and ``?``."""
    actions = _as_list(statement.get("Action", []))
    resources = _as_list(statement.get("Resource", []))
    return any(_wildcard(a, action, case=False) for a in actions) and any(
        _wildcard(r, resource, case=True) for r in resources
    )


# --- resolving the template ---------------------------------------------------------------------


class Deployment:
    """The template's resources under deterministic names, and its functions."""

    def __init__(self, template: dict[str, Any], functions: dict[str, str]) -> None:
        self.template = template
        self.resources: dict[str, dict[str, Any]] = template["Resources"]
        self.names = {lid: self._physical_name(lid, r) for lid, r in self.resources.items()}
        self.calls: list[Call] = []
        self.invoked: list[tuple[str, Any]] = []  # asynchronous invokes: (function name, event)
        self.settings_read: dict[str, set[str]] = {}  # function -> the Settings fields its runs read
        self.opensearch_domain: str | None = None
        self.functions = {name: self._function(name, lid) for name, lid in functions.items()}
        self.bedrock = FakeBedrock()
        self._current: contextvars.ContextVar[Function | None] = contextvars.ContextVar("fn", default=None)

    # names and attributes

    def _physical_name(self, logical_id: str, resource: dict[str, Any]) -> str:
        props = resource.get("Properties", {})
        kind = resource["Type"]
        explicit = {
            "AWS::SQS::Queue": "QueueName",
            "AWS::DynamoDB::Table": "TableName",
            "AWS::Lambda::Function": "FunctionName",
            "AWS::OpenSearchService::Domain": "DomainName",
            "AWS::Scheduler::ScheduleGroup": "Name",
            "AWS::SNS::Topic": "TopicName",
            "AWS::Logs::LogGroup": "LogGroupName",
            "AWS::Events::EventBus": "Name",
            "AWS::IAM::Role": "RoleName",
        }.get(kind)
        if explicit and isinstance(props.get(explicit), str):
            return str(props[explicit])
        if kind == "AWS::SQS::Queue" and props.get("FifoQueue"):
            return f"{logical_id}.fifo"
        if kind == "AWS::OpenSearchService::Domain":
            return logical_id.lower()[:28]
        if kind == "AWS::S3::Bucket":
            return logical_id.lower()[:63]
        return logical_id

    def arn(self, logical_id: str) -> str:
        kind = self.resources[logical_id]["Type"]
        name = self.names[logical_id]
        return {
            "AWS::SQS::Queue": f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{name}",
            "AWS::DynamoDB::Table": f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{name}",
            "AWS::Lambda::Function": f"arn:{PARTITION}:lambda:{REGION}:{ACCOUNT}:function:{name}",
            "AWS::OpenSearchService::Domain": f"arn:{PARTITION}:es:{REGION}:{ACCOUNT}:domain/{name}",
            "AWS::SNS::Topic": f"arn:{PARTITION}:sns:{REGION}:{ACCOUNT}:{name}",
            "AWS::Logs::LogGroup": f"arn:{PARTITION}:logs:{REGION}:{ACCOUNT}:log-group:{name}:*",
            "AWS::IAM::Role": f"arn:{PARTITION}:iam::{ACCOUNT}:role/{name}",
            "AWS::S3::Bucket": f"arn:{PARTITION}:s3:::{name}",
            "AWS::Events::EventBus": f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{name}",
            "AWS::Scheduler::ScheduleGroup": (
                f"arn:{PARTITION}:scheduler:{REGION}:{ACCOUNT}:schedule-group/{name}"
            ),
        }.get(kind, f"arn:{PARTITION}:{kind.split('::')[1].lower()}:{REGION}:{ACCOUNT}:{name}")

    def ref(self, logical_id: str) -> str:
        pseudo = {
            "AWS::Partition": PARTITION,
            "AWS::Region": REGION,
            "AWS::AccountId": ACCOUNT,
            "AWS::URLSuffix": "amazonaws.com",
            "AWS::StackName": "agent-memory",
            "AWS::NoValue": "",
        }
        if logical_id in pseudo:
            return pseudo[logical_id]
        kind = self.resources[logical_id]["Type"]
        if kind == "AWS::SQS::Queue":
            return f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{self.names[logical_id]}"
        if kind in ("AWS::SNS::Topic",):
            return self.arn(logical_id)
        return self.names[logical_id]

    def get_att(self, logical_id: str, attribute: str) -> str:
        if attribute == "Arn":
            return self.arn(logical_id)
        kind = self.resources[logical_id]["Type"]
        if kind == "AWS::OpenSearchService::Domain" and attribute == "DomainEndpoint":
            return f"search-{self.names[logical_id]}.{REGION}.es.amazonaws.com"
        if kind == "AWS::SQS::Queue" and attribute == "QueueName":
            return self.names[logical_id]
        if kind == "AWS::SQS::Queue" and attribute == "QueueUrl":
            return self.ref(logical_id)
        return f"{self.names[logical_id]}.{attribute}"  # an attribute no function setting uses

    def resolve(self, value: Any) -> Any:
        if isinstance(value, dict):
            if "Ref" in value:
                return self.ref(value["Ref"])
            if "Fn::GetAtt" in value:
                target = value["Fn::GetAtt"]
                lid, attr = target if isinstance(target, list) else target.split(".", 1)
                return self.get_att(lid, attr)
            if "Fn::Join" in value:
                sep, parts = value["Fn::Join"]
                return sep.join(str(self.resolve(p)) for p in parts)
            if "Fn::Sub" in value:
                text = value["Fn::Sub"] if isinstance(value["Fn::Sub"], str) else value["Fn::Sub"][0]
                return re.sub(
                    r"\$\{([^}]+)\}",
                    lambda m: (
                        self.get_att(*m.group(1).split(".", 1)) if "." in m.group(1) else self.ref(m.group(1))
                    ),
                    text,
                )
            if "Fn::Select" in value:
                index, items = value["Fn::Select"]
                return self.resolve(items)[int(index)]
            if "Fn::Split" in value:
                sep, text = value["Fn::Split"]
                return str(self.resolve(text)).split(sep)
            return {k: self.resolve(v) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v) for v in value]
        return value

    # functions

    def _function(self, name: str, logical_id: str) -> Function:
        props = self.resources[logical_id]["Properties"]
        role = props["Role"]["Fn::GetAtt"][0]
        statements: list[dict[str, Any]] = []
        for policy in self.resources.values():
            if policy["Type"] == "AWS::IAM::Policy" and {"Ref": role} in policy["Properties"]["Roles"]:
                statements += self.resolve(policy["Properties"]["PolicyDocument"]["Statement"])
        for managed in self.resources[role]["Properties"].get("ManagedPolicyArns", []):
            resolved = self.resolve(managed)
            if not str(resolved).endswith(("AWSLambdaBasicExecutionRole", "AWSLambdaVPCAccessExecutionRole")):
                raise AssertionError(f"{name}: a managed policy the harness cannot read: {resolved}")
        environment = {
            k: str(v) for k, v in self.resolve(props.get("Environment", {}).get("Variables", {})).items()
        }
        return Function(
            name, logical_id, props["Handler"], environment, statements, int(props.get("Timeout", 3))
        )

    def domain_name(self) -> str | None:
        for lid, resource in self.resources.items():
            if resource["Type"] == "AWS::OpenSearchService::Domain":
                return self.names[lid]
        return None

    # provisioning in moto

    def provision(self) -> None:
        import boto3

        sqs = boto3.client("sqs", region_name=REGION)
        dynamodb = boto3.client("dynamodb", region_name=REGION)
        for lid, resource in self.resources.items():
            if resource["Type"] == "AWS::S3::Bucket":
                boto3.client("s3", region_name=REGION).create_bucket(Bucket=self.names[lid])
                continue
            if resource["Type"] not in ("AWS::SQS::Queue", "AWS::DynamoDB::Table"):
                continue
            props = self.resolve(resource.get("Properties", {}))
            if resource["Type"] == "AWS::SQS::Queue":
                attributes = {"FifoQueue": "true"} if props.get("FifoQueue") else {}
                if props.get("ContentBasedDeduplication"):
                    attributes["ContentBasedDeduplication"] = "true"
                if "VisibilityTimeout" in props:
                    attributes["VisibilityTimeout"] = str(props["VisibilityTimeout"])
                sqs.create_queue(QueueName=self.names[lid], Attributes=attributes)
            elif resource["Type"] == "AWS::DynamoDB::Table":
                dynamodb.create_table(
                    TableName=self.names[lid],
                    KeySchema=props["KeySchema"],
                    AttributeDefinitions=props["AttributeDefinitions"],
                    BillingMode="PAY_PER_REQUEST",
                    **(
                        {"GlobalSecondaryIndexes": [_gsi(i) for i in props["GlobalSecondaryIndexes"]]}
                        if props.get("GlobalSecondaryIndexes")
                        else {}
                    ),
                )

    # running a function

    @contextmanager
    def as_function(self, name: str) -> Iterator[Function]:
        """The process set up as ``name``'s Lambda container: its environment only, its role."""
        from agent_memory import container
        from agent_memory.adapters.opensearch.opensearch_client import clear_client_cache
        from agent_memory.settings import get_settings

        function = self.functions[name]
        saved = dict(os.environ)
        token = self._current.set(function)
        read = self.settings_read.setdefault(name, set())
        try:
            for key in list(os.environ):
                if key.startswith(("AGENT_MEMORY_", "POWERTOOLS_")):
                    del os.environ[key]
            os.environ.update(function.environment)
            os.environ.update(
                {
                    "AWS_REGION": REGION,
                    "AWS_DEFAULT_REGION": REGION,
                    "AWS_LAMBDA_FUNCTION_NAME": self.names[function.logical_id],
                    "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "512",
                    # no X-Ray daemon here; the Tracer's calls are the runtime's, not the code's
                    "POWERTOOLS_TRACE_DISABLED": "true",
                }
            )
            get_settings.cache_clear()
            container.reset()
            clear_client_cache()
            _cold_start_observability()
            get_settings()  # validated first: the validator reads every selector, the code may not
            with _recording_settings(read):
                yield function
        finally:
            self._current.reset(token)
            os.environ.clear()
            os.environ.update(saved)
            get_settings.cache_clear()
            container.reset()
            clear_client_cache()
            _cold_start_observability()

    def run(self, name: str, event: Any) -> Any:
        import importlib

        from agent_memory.local.lambda_context import LocalContext

        with self.as_function(name) as function:
            module_name, attr = function.handler.rsplit(".", 1)
            handler = getattr(importlib.import_module(module_name), attr)
            return handler(event, LocalContext(function_name=self.names[function.logical_id]))

    def run_async(self, name: str, event: Any) -> Any:
        """An asynchronous invoke (Scheduler, the admin route): a run that raises goes, after
        Lambda's retries, to the function's on-failure destination, sent with its role."""
        try:
            return self.run(name, event)
        except Exception as exc:  # whatever the function raised, Lambda records it
            destination = self.on_failure(name)
            if destination is None:
                raise
            import boto3

            queue = destination.rsplit(":", 1)[1]
            url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{queue}"
            token = self._current.set(self.functions[name])
            try:
                assert self.check("sqs:SendMessage", destination), f"{name} may not send to {destination}"
            finally:
                self._current.reset(token)
            body = {
                "requestPayload": event,
                "responseContext": {"functionError": "Unhandled"},
                "error": str(exc),
            }
            boto3.client("sqs", region_name=REGION).send_message(QueueUrl=url, MessageBody=json.dumps(body))
            return None

    def route_events(self, entries: list[dict[str, Any]]) -> dict[str, Any]:
        """EventBridge: each entry, as the EventBridge event a rule's SQS target receives, to the
        queues of the template's rules on its bus whose pattern it matches (``source`` and
        ``detail-type`` lists). Sent by EventBridge, not by the function that put the events."""
        import uuid

        import boto3

        sqs = boto3.client("sqs", region_name=REGION)
        rules = [r["Properties"] for r in self.resources.values() if r["Type"] == "AWS::Events::Rule"]
        token = self._current.set(None)
        try:
            for entry in entries:
                event = {
                    "version": "0",
                    "id": str(uuid.uuid4()),
                    "detail-type": entry["DetailType"],
                    "source": entry["Source"],
                    "account": ACCOUNT,
                    "time": str(entry.get("Time", "")),
                    "region": REGION,
                    "resources": [],
                    "detail": json.loads(entry["Detail"]),
                }
                for rule in rules:
                    pattern = rule.get("EventPattern", {})
                    if self.resolve(rule.get("EventBusName")) != entry.get("EventBusName") or not all(
                        event.get(key) in values for key, values in pattern.items()
                    ):
                        continue
                    for target in rule.get("Targets", []):
                        queue = str(self.resolve(target["Arn"])).rsplit(":", 1)[1]
                        url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{queue}"
                        sqs.send_message(QueueUrl=url, MessageBody=json.dumps(event))
        finally:
            self._current.reset(token)
        return {"FailedEntryCount": 0, "Entries": [{"EventId": str(uuid.uuid4())} for _ in entries]}

    def on_failure(self, name: str) -> str | None:
        """The ARN of ``name``'s on-failure destination (its ``EventInvokeConfig``), if any."""
        logical_id = self.functions[name].logical_id
        for resource in self.resources.values():
            if resource["Type"] != "AWS::Lambda::EventInvokeConfig":
                continue
            props = resource["Properties"]
            if props["FunctionName"] == {"Ref": logical_id}:
                return str(self.resolve(props["DestinationConfig"]["OnFailure"]["Destination"]))
        return None

    # the checks made on every call

    def current(self) -> Function | None:
        return self._current.get()

    def poll(self, name: str, queue_url: str) -> None:
        """Lambda's SQS poller, which receives, deletes and reads attributes with ``name``'s role."""
        account, queue = queue_url.rstrip("/").split("/")[-2:]
        arn = f"arn:{PARTITION}:sqs:{REGION}:{account}:{queue}"
        token = self._current.set(self.functions[name])
        try:
            for action in ("sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:GetQueueAttributes"):
                assert self.check(action, arn), (
                    f"{name}'s event source mapping may not call {action} on {arn}"
                )
        finally:
            self._current.reset(token)

    def check(self, action: str, resource: str, context: Mapping[str, str] | None = None) -> bool:
        function = self.current()
        if function is None:
            return True  # the test itself arranging state, not a function
        allowed = function.allows(action, resource, context)
        self.calls.append(Call(function.name, action, resource, allowed))
        return allowed


@contextmanager
def _recording_settings(read: set[str]) -> Iterator[None]:
    """Note every field of `Settings` the code reads while a function runs."""
    from agent_memory.settings import Settings

    fields = set(Settings.model_fields)
    original = Settings.__getattribute__

    def getattribute(self: Any, attr: str) -> Any:
        if attr in fields:
            read.add(attr)
        return original(self, attr)

    Settings.__getattribute__ = getattribute  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        Settings.__getattribute__ = original  # type: ignore[method-assign]


def unset_deployment_settings(deployment: Deployment) -> dict[str, list[str]]:
    """Per function, the deployment settings its runs read that its environment does not set."""
    missing: dict[str, list[str]] = {}
    for name, read in deployment.settings_read.items():
        env = deployment.functions[name].environment
        unset = sorted(f for f in read & DEPLOYMENT_SETTINGS if f"AGENT_MEMORY_{f.upper()}" not in env)
        if unset:
            missing[name] = unset
    return missing


def _cold_start_observability() -> None:
    """What a cold start reads from the environment at import: the metrics' namespace and service
    (imported once per test process, possibly under another test's environment)."""
    from agent_memory.observability import metrics

    metrics.provider.namespace = os.environ.get("POWERTOOLS_METRICS_NAMESPACE")
    metrics.provider.service = os.environ.get("POWERTOOLS_SERVICE_NAME")
    metrics.namespace = metrics.provider.namespace
    metrics.service = metrics.provider.service


def _gsi(index: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in index.items() if k in ("IndexName", "KeySchema", "Projection")}


# --- botocore: IAM on every call, Bedrock answered by a fake -----------------------------------


class FakeBedrock:
    """Bedrock runtime as a recording fake: embeddings of the asked dimension, a summary text."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []

    def answer(self, operation: str, params: dict[str, Any]) -> dict[str, Any]:
        self.requests.append((operation, params))
        if operation == "InvokeModel":
            body = json.loads(params["body"])
            seed = abs(hash(body.get("inputText", ""))) % 2**32
            vector = np.random.default_rng(seed).standard_normal(int(body.get("dimensions", 1024)))
            vector /= np.linalg.norm(vector)
            data = json.dumps({"embedding": vector.tolist(), "inputTextTokenCount": 8}).encode()
            return {"body": StreamingBody(io.BytesIO(data), len(data)), "contentType": "application/json"}
        if operation == "Converse":
            texts = [
                block.get("text", "")
                for message in params.get("messages", [])
                for block in message.get("content", [])
            ]
            summary = "Summary: " + " ".join(texts)[-400:]
            return {
                "output": {"message": {"role": "assistant", "content": [{"text": summary}]}},
                "stopReason": "end_turn",
                "usage": {"inputTokens": 100, "outputTokens": 20, "totalTokens": 120},
                "metrics": {"latencyMs": 5},
            }
        raise AssertionError(f"Bedrock runtime {operation}: not faked")


def _resources(service: str, operation: str, params: dict[str, Any]) -> list[str]:
    """The ARNs a call acts on, as IAM sees them."""
    if service == "sqs":
        if "QueueUrl" in params:
            account, name = params["QueueUrl"].rstrip("/").split("/")[-2:]
            return [f"arn:{PARTITION}:sqs:{REGION}:{account}:{name}"]
        if "QueueName" in params:
            return [f"arn:{PARTITION}:sqs:{REGION}:{ACCOUNT}:{params['QueueName']}"]
    if service == "dynamodb":
        tables = (
            list(params["RequestItems"])
            if "RequestItems" in params
            else [next(iter(v.values()))["TableName"] for v in params.get("TransactItems", [])]
            if "TransactItems" in params
            else [params["TableName"]]
        )
        return [f"arn:{PARTITION}:dynamodb:{REGION}:{ACCOUNT}:table/{t}" for t in tables]
    if service == "bedrock-runtime":
        model = params["modelId"]
        if model.startswith("arn:"):
            return [model]
        profile = re.match(r"^(us|eu|apac|global|us-gov|ca|jp|au)\.(.+)$", model)
        if profile:
            # A cross-region profile in this region, and its model where the profile routes the
            # call: another region of its geography, or (global) no region at all.
            where = "" if profile.group(1) == "global" else OTHER_REGION
            return [
                f"arn:{PARTITION}:bedrock:{REGION}:{ACCOUNT}:inference-profile/{model}",
                f"arn:{PARTITION}:bedrock:{where}::foundation-model/{profile.group(2)}",
            ]
        return [f"arn:{PARTITION}:bedrock:{REGION}::foundation-model/{model}"]
    if service == "lambda":
        name = params["FunctionName"]
        return [
            name if name.startswith("arn:") else f"arn:{PARTITION}:lambda:{REGION}:{ACCOUNT}:function:{name}"
        ]
    if service == "scheduler":
        return [f"arn:{PARTITION}:scheduler:{REGION}:{ACCOUNT}:schedule/*"]
    if service == "sts":
        return []
    if service == "comprehend":  # its detection calls name no resource: IAM checks them on "*"
        return ["*"]
    if service == "s3":
        bucket = f"arn:{PARTITION}:s3:::{params['Bucket']}"
        return [bucket] if operation == "ListObjectsV2" else [f"{bucket}/{params['Key']}"]
    if service == "events":
        buses = {e.get("EventBusName", "default") for e in params.get("Entries", [])}
        return [
            bus if bus.startswith("arn:") else f"arn:{PARTITION}:events:{REGION}:{ACCOUNT}:event-bus/{bus}"
            for bus in sorted(buses)
        ]
    if service == "secretsmanager":
        name = params.get("SecretId") or params["Name"]
        # AWS appends six random characters to a secret's name in its ARN
        return [
            name
            if name.startswith("arn:")
            else f"arn:{PARTITION}:secretsmanager:{REGION}:{ACCOUNT}:secret:{name}-Ab12Cd"
        ]
    raise AssertionError(f"{service}.{operation}: the harness does not know its resource")


def _condition_keys(service: str, operation: str, params: dict[str, Any]) -> dict[str, str]:
    """The service-specific condition keys a call carries that the stack's policies test."""
    if service == "s3" and operation == "ListObjectsV2":
        return {"s3:prefix": params.get("Prefix", "")}
    return {}


@contextmanager
def enforce(deployment: Deployment) -> Iterator[None]:
    """Check every botocore and OpenSearch call against the running function's policy."""
    original_call = BaseClient._make_api_call
    original_request = Urllib3HttpConnection.perform_request
    original_connect = sqlite3.connect
    original_submit = ThreadPoolExecutor.submit
    from tests.deployed.fake_opensearch import FakeDomain

    domain = FakeDomain()
    deployment.opensearch = domain  # type: ignore[attr-defined]
    domain_name = deployment.domain_name()

    def make_api_call(client: BaseClient, operation: str, params: dict[str, Any]) -> Any:
        model = client.meta.service_model
        service = model.service_name
        if service == "sts":
            return original_call(client, operation, params)
        prefix = model.signing_name if service != "bedrock-runtime" else "bedrock"
        action = IAM_ACTION.get(f"{prefix}:{operation}", f"{prefix}:{operation}")
        for resource in _resources(service, operation, params):
            if not deployment.check(action, resource, _condition_keys(service, operation, params)):
                raise ClientError(
                    {
                        "Error": {
                            "Code": "AccessDeniedException" if service != "sqs" else "AccessDenied",
                            "Message": f"not authorized to perform: {action} on resource: {resource}",
                        }
                    },
                    operation,
                )
        if service == "sqs" and operation in ("SendMessage", "SendMessageBatch"):
            for entry in params.get("Entries", [params]):
                for name in ("MessageGroupId", "MessageDeduplicationId"):
                    value = entry.get(name)
                    if value is not None and not 1 <= len(value) <= 128:  # SQS refuses; moto does not
                        raise ClientError(
                            {"Error": {"Code": "InvalidParameterValue", "Message": f"{name} over 128"}},
                            operation,
                        )
        if service == "bedrock-runtime":
            return deployment.bedrock.answer(operation, params)
        if service == "events" and operation == "PutEvents":
            return deployment.route_events(params["Entries"])
        if service == "lambda" and operation == "Invoke" and params.get("InvocationType") == "Event":
            # Lambda queues an asynchronous invoke: the test runs it (`Deployment.invoked`)
            deployment.invoked.append((params["FunctionName"], json.loads(params.get("Payload") or b"{}")))
            return {"StatusCode": 202}
        if service == "s3" and operation in ("HeadObject", "GetObject"):
            try:
                return original_call(client, operation, params)
            except ClientError as exc:
                # S3 tells a missing key (404) only to a role that may list the bucket (a listing
                # of no particular prefix: a grant conditioned on s3:prefix does not count); to
                # others it answers 403, as if the key existed and were forbidden.
                bucket = f"arn:{PARTITION}:s3:::{params['Bucket']}"
                missing = exc.response.get("Error", {}).get("Code") in ("404", "NoSuchKey", "NotFound")
                if missing and not deployment.check("s3:ListBucket", bucket):
                    forbidden = {"Error": {"Code": "403", "Message": "Forbidden"}}
                    raise ClientError(forbidden, operation) from None  # type: ignore[arg-type]
                raise
        return original_call(client, operation, params)

    def perform_request(
        connection: Any,
        method: str,
        url: str,
        params: Any = None,
        body: bytes | None = None,
        timeout: Any = None,
        ignore: Any = (),
        headers: Any = None,
    ) -> tuple[int, dict[str, str], str]:
        action = f"es:ESHttp{method.capitalize()}"
        resource = (
            f"arn:{PARTITION}:es:{REGION}:{ACCOUNT}:domain/{domain_name}{url.split('?', maxsplit=1)[0]}"
        )
        if not deployment.check(action, resource):
            raw = json.dumps({"Message": f"User is not authorized to perform: {action} on {resource}"})
            connection._raise_error(403, raw, "application/json")
        if body and connection.http_compress:
            import gzip

            with suppress(OSError):
                body = gzip.decompress(body)
        status, payload = domain.handle(method, url, params or {}, body)
        raw = json.dumps(payload)
        if not 200 <= status < 300 and status not in (ignore or ()):
            connection._raise_error(status, raw, "application/json")
        return status, {"content-type": "application/json"}, raw

    def connect(*args: Any, **kwargs: Any) -> sqlite3.Connection:
        function = deployment.current()
        database = str(args[0] if args else kwargs.get("database"))
        if function is not None and function.environment.get("AGENT_MEMORY_STORE") == "s3":
            from agent_memory.settings import get_settings

            if database.startswith(str(get_settings().store_cache_dir)):
                return original_connect(*args, **kwargs)  # the serverless store's copy in /tmp
        if deployment.current() is not None:
            raise sqlite3.OperationalError(
                f"{deployment.current().name}: a local SQLite database in a Lambda function "  # type: ignore[union-attr]
                f"({args[0] if args else kwargs.get('database')}): a setting is missing from its environment"
            )
        return original_connect(*args, **kwargs)

    def submit(pool: ThreadPoolExecutor, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future[Any]:
        """A task runs in the submitting context: a pool thread of a function is that function
        (a context variable is not inherited by a pool's threads, whose calls would go unchecked)."""
        return original_submit(pool, contextvars.copy_context().run, fn, *args, **kwargs)

    BaseClient._make_api_call = make_api_call  # type: ignore[method-assign]
    Urllib3HttpConnection.perform_request = perform_request  # type: ignore[method-assign,assignment]
    sqlite3.connect = connect  # type: ignore[assignment]
    ThreadPoolExecutor.submit = submit  # type: ignore[method-assign,assignment]
    try:
        yield
    finally:
        BaseClient._make_api_call = original_call  # type: ignore[method-assign]
        Urllib3HttpConnection.perform_request = original_request  # type: ignore[method-assign]
        sqlite3.connect = original_connect
        ThreadPoolExecutor.submit = original_submit  # type: ignore[method-assign]


def unused_grants(functions: dict[str, Function], calls: list[Call]) -> dict[str, list[str]]:
    """Per function, each (action, resource) of its policy that no recorded call needed."""
    unused: dict[str, list[str]] = {}
    for name, function in functions.items():
        used = [c for c in calls if c.function == name and c.allowed]
        for statement in function.statements:
            for action in _as_list(statement["Action"]):
                if action.startswith(RUNTIME_ACTIONS):
                    continue
                for resource in _as_list(statement["Resource"]):
                    if not any(
                        _wildcard(action, c.action, case=False) and _wildcard(resource, c.resource, case=True)
                        for c in used
                    ):
                        unused.setdefault(name, []).append(f"{action} on {resource}")
    return unused

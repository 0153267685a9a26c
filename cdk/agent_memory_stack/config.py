"""The stack's configuration: one pydantic model read from ``cdk.json`` context, checked at synth.

Everything a deployer may change lives under the context key ``agent_memory`` (a JSON object in
``cdk.json``, or a JSON string with ``-c agent_memory='{...}'``); ``-c stage=prod`` overrides just
the stage. A bad value stops ``cdk synth`` before any resource exists, with one line per problem
naming the field (``agent_memory.opensearch.data_nodes: ...``) instead of a CloudFormation
rollback twenty minutes into a deployment.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from agent_memory.model.grains import Grain
from agent_memory.settings import known_timezone
from agent_memory_stack.environment import settings_env

CONTEXT_KEY = "agent_memory"

GRAINS = tuple(g.value for g in Grain)  # the one grain list: the functions'

#: The retention periods CloudWatch Logs accepts (days).
#: The day counts CloudWatch Logs accepts, in `logs.RetentionDays`'s order (function_factory maps them).
LOG_RETENTION_DAYS = (
    1,
    3,
    5,
    7,
    14,
    30,
    60,
    90,
    120,
    150,
    180,
    365,
    400,
    545,
    731,
    1096,
    1827,
    2192,
    2557,
    2922,
    3288,
    3653,
)

#: The default summary model: Anthropic's Claude Haiku 4.5 through the global cross-region
#: inference profile (an Active model on Bedrock, which a new account can enable).
DEFAULT_SUMMARY_MODEL = "global.anthropic.claude-haiku-4-5-20251001-v1:0"

#: Models Bedrock lists as Legacy or past their end of life: an account that has not used one
#: before cannot enable it, so every summary job of a new deployment would end in its DLQ.
RETIRED_MODELS = frozenset(
    {
        "anthropic.claude-instant-v1",
        "anthropic.claude-v2",
        "anthropic.claude-v2:1",
        "anthropic.claude-3-haiku-20240307-v1:0",
        "anthropic.claude-3-sonnet-20240229-v1:0",
        "anthropic.claude-3-opus-20240229-v1:0",
        "anthropic.claude-3-5-haiku-20241022-v1:0",
        "anthropic.claude-3-5-sonnet-20240620-v1:0",
        "anthropic.claude-3-5-sonnet-20241022-v2:0",
    }
)

#: Geographic prefixes of Bedrock cross-region inference profile ids (``us.anthropic...``).
INFERENCE_PROFILE_PREFIXES = ("us", "eu", "apac", "us-gov", "ca", "jp", "au", "global")

_MODEL_ID = re.compile(r"^(?:(?P<profile>[a-z-]+)\.)?[a-z0-9-]+\.[A-Za-z0-9.:_-]+$")


class ConfigError(ValueError):
    """The context does not describe a deployable stack; the message lists every problem."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class DomainConfig(_Strict):
    """The managed OpenSearch domain (``store: "opensearch"``, the default).

    The defaults are the smallest layout that still survives the loss of one Availability Zone:
    two burstable data nodes in two AZs, no dedicated masters. Production sizes go in cdk.json.
    """

    engine_version: str = Field(default="2.19", pattern=r"^2\.\d{1,2}$")
    data_node_type: str = Field(default="t3.medium.search", pattern=r"^[a-z0-9]+\.[a-z0-9]+\.search$")
    data_nodes: int = Field(default=2, ge=1, le=20)
    master_node_type: str = Field(default="m6g.large.search", pattern=r"^[a-z0-9]+\.[a-z0-9]+\.search$")
    #: 0 (data nodes elect a master among themselves), 3 or 5.
    master_nodes: Literal[0, 3, 5] = 0
    volume_gib: int = Field(default=20, ge=10, le=3072)

    @model_validator(mode="before")
    @classmethod
    def _no_engine_choice(cls, data: object) -> object:
        """``knn_engine`` was a choice of faiss or lucene; new indexes are now made on lucene only,
        the engine the store is tested on (docs/decisions.md, "New indexes are made on lucene")."""
        if isinstance(data, dict) and "knn_engine" in data:
            raise ValueError(
                "knn_engine is no longer a setting: new indexes are made on lucene, the engine the "
                "store is tested on (an index already on faiss keeps working and moves to lucene at "
                "its next schema upgrade); remove knn_engine"
            )
        return data

    @property
    def zone_awareness(self) -> bool:
        return self.data_nodes >= 2

    @property
    def availability_zones(self) -> int | None:
        """Three AZs when the data nodes spread evenly over three, else two; None for one node."""
        if not self.zone_awareness:
            return None
        return 3 if self.data_nodes % 3 == 0 else 2


class PlanLimits(_Strict):
    """One subscription plan's API Gateway usage plan: every tenant on it gets these, each."""

    rate_limit: float = Field(gt=0, le=10_000)
    burst_limit: int = Field(ge=1, le=5_000)
    #: Requests a tenant may make per day; null: no quota.
    requests_per_day: int | None = Field(default=None, ge=1)


DEFAULT_PLAN_LIMITS: dict[str, PlanLimits] = {
    "free": PlanLimits(rate_limit=5, burst_limit=10, requests_per_day=10_000),
    "starter": PlanLimits(rate_limit=20, burst_limit=40, requests_per_day=100_000),
    "pro": PlanLimits(rate_limit=100, burst_limit=200, requests_per_day=1_000_000),
    "unlimited": PlanLimits(rate_limit=500, burst_limit=1000),
}


class ApiConfig(_Strict):
    """API Gateway stage limits, per-tenant usage plans and the authorizer cache."""

    rate_limit: float = Field(default=50, gt=0, le=10_000)
    burst_limit: int = Field(default=100, ge=1, le=5_000)
    #: How long API Gateway reuses an authorizer answer per key: a revoked key works this long.
    authorizer_cache_s: int = Field(default=60, ge=0, le=3600)
    #: Per-tenant throttles and quotas, one usage plan per subscription plan (tenancy/rules/usage.py).
    plan_limits: dict[str, PlanLimits] = Field(default_factory=lambda: dict(DEFAULT_PLAN_LIMITS))
    #: A WAF web ACL with a rate-based rule: requests per 5 minutes from one IP; null: no WAF.
    waf_rate_limit: int | None = Field(default=None, ge=100, le=2_000_000_000)


class ScheduleConfig(_Strict):
    """Retries of the cascade and retention schedules before an event goes to their DLQ."""

    retry_attempts: int = Field(default=3, ge=0, le=185)
    max_event_age_minutes: int = Field(default=120, ge=1, le=1440)


class RetentionConfig(_Strict):
    """Retention knobs besides the plans (docs/retention.md); the functions get them as settings."""

    #: A write without ``ttl_days`` gets its kind's default lifetime.
    default_ttls: bool = True
    #: Days a forgotten record stays before cleanup purges it.
    forget_grace_days: int = Field(default=7, ge=0, le=3650)
    #: Working memories kept per agent; past it the least worth, then the oldest, go first.
    max_working_per_agent: int = Field(default=10_000, ge=1, le=10_000_000)
    #: Days a record past its cutoff is kept while its parent summary does not exist.
    max_unsummarized_days: int = Field(default=30, ge=1, le=3650)


class ConsoleConfig(_Strict):
    """The operator console as a static site (S3 + CloudFront); the local runtime always has it."""

    #: Off by default: a deployment serves the API only until an operator asks for the console.
    enabled: bool = False


#: Retention overrides: plan -> grain -> hours a record of that grain is kept (null: for ever),
#: merged by the functions over their defaults (functions/agent_memory/governance/rules/plans.py, read
#: from ``AGENT_MEMORY_PLANS``). Empty: the defaults, which live in one place, the code.
Plans = dict[str, dict[str, int | None]]


class StackConfig(_Strict):
    """Everything the stack is built from. Field docs are the reference for cdk.json."""

    stage: str = Field(default="dev", pattern=r"^[a-z][a-z0-9-]{0,11}$")
    service_name: str = Field(default="agent-memory", pattern=r"^[a-z][a-z0-9-]{0,62}$")
    metrics_namespace: str = Field(default="AgentMemory", pattern=r"^[A-Za-z][A-Za-z0-9/_.-]{0,254}$")
    #: The memory store: a managed OpenSearch domain, or ``serverless``: each tenant's memory a
    #: SQLite file in S3, nothing billed while idle (``-c store=serverless``; docs/decisions.md,
    #: "The serverless store"). OpenSearch Serverless is not offered: its vector collections do
    #: not accept the ids the store chooses for its documents.
    store: Literal["opensearch", "serverless"] = "opensearch"
    opensearch: DomainConfig = DomainConfig()
    index_alias: str = Field(default="agent-memory", pattern=r"^[a-z][a-z0-9-]{0,62}$")
    embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    #: Whether tenants may add Amazon Comprehend's DetectPiiEntities to redaction on write (billed
    #: per character read, only for tenants that choose it; the local engine is always there).
    pii_comprehend: bool = True
    #: Titan Text Embeddings v2 sizes; the index is created with it and refuses another later.
    embedding_dimension: Literal[256, 512, 1024] = 1024
    #: The summary, pattern and profile model: an Anthropic model the account has access to
    #: (README, "Deploy": the model access step). Claude Haiku 4.5 is reached through an inference
    #: profile only; ``global.`` routes to any commercial region, ``us.``/``eu.``/``jp.``/``au.``/
    #: ``apac.`` keep the calls in one geography.
    summary_model_id: str = DEFAULT_SUMMARY_MODEL
    #: IANA zone of the cascade's period boundaries and of the schedules' clocks.
    timezone: str = "UTC"
    plans: Plans = Field(default_factory=dict)
    retention: RetentionConfig = RetentionConfig()
    log_retention_days: int = 30
    api: ApiConfig = ApiConfig()
    console: ConsoleConfig = ConsoleConfig()
    schedules: ScheduleConfig = ScheduleConfig()
    #: Deliveries of a write before SQS moves it to the write DLQ.
    max_receive_count: int = Field(default=5, ge=1, le=1000)
    #: Most concurrent writer invocations (protects the vector store; FIFO groups still scale).
    writer_max_concurrency: int = Field(default=10, ge=2, le=1000)
    #: Most concurrent summarize workers (protects the Bedrock model quota).
    summarizer_max_concurrency: int = Field(default=2, ge=2, le=1000)
    #: Keep the tables, the domain and the buckets when the stack is deleted or a resource replaced
    #: (CloudFormation's ``RetainExceptOnCreate``: a first deploy that rolls back deletes them,
    #: so a retry starts clean). ``false``: the stack deletes them with itself.
    retain_data: bool = True
    #: An existing SNS topic that every alarm notifies; none: the stack creates one.
    alarm_topic_arn: str | None = Field(
        default=None, pattern=r"^arn:aws[a-z-]*:sns:[a-z0-9-]+:\d{12}:[\w-]+$"
    )
    #: An e-mail address subscribed to the stack's alarm topic (it must confirm the subscription).
    alarm_email: str | None = Field(default=None, pattern=r"^[^@\s]+@[^@\s]+\.[^@\s]+$")

    _known_zone = field_validator("timezone")(known_timezone)

    @field_validator("embedding_model_id", "summary_model_id")
    @classmethod
    def _model_id(cls, value: str) -> str:
        match = _MODEL_ID.match(value)
        if match is None or value.startswith("arn:"):
            raise ValueError(f"{value!r} is not a Bedrock model id (e.g. amazon.titan-embed-text-v2:0)")
        profile = match.group("profile")
        if profile is not None and profile not in INFERENCE_PROFILE_PREFIXES:
            raise ValueError(f"{value!r}: unknown inference profile prefix {profile!r}")
        if base_model_id(value) in RETIRED_MODELS:
            raise ValueError(
                f"{value!r} is a Legacy or retired model on Bedrock: an account that has not used it "
                f"cannot enable it (choose a current one, e.g. {DEFAULT_SUMMARY_MODEL})"
            )
        return value

    @field_validator("log_retention_days")
    @classmethod
    def _retention(cls, value: int) -> int:
        if value not in LOG_RETENTION_DAYS:
            raise ValueError(f"CloudWatch Logs accepts one of {LOG_RETENTION_DAYS}, not {value}")
        return value

    @field_validator("plans")
    @classmethod
    def _plans(cls, plans: Plans) -> Plans:
        for name, grains in plans.items():
            if not re.fullmatch(r"[a-z][a-z0-9_-]{0,31}", name):
                raise ValueError(f"plan name {name!r} must be lowercase letters, digits, - or _")
            unknown = sorted(set(grains) - set(GRAINS))
            if unknown:
                raise ValueError(f"plan {name!r}: unknown grains {unknown} (known: {list(GRAINS)})")
            for grain, hours in grains.items():
                if hours is not None and hours < 1:
                    raise ValueError(f"plan {name!r}: {grain} must be kept at least 1 hour, or null")
        return plans

    @model_validator(mode="after")
    def _known_embedding_model(self) -> StackConfig:
        if not base_model_id(self.embedding_model_id).startswith("amazon.titan-embed-text-v2"):
            # Other models have other sizes: the index would be built for a dimension they never emit.
            raise ValueError(
                "embedding_model_id: only Amazon Titan Text Embeddings v2 "
                "(256/512/1024 dimensions) is supported"
            )
        return self

    # --- derived names ---------------------------------------------------------------------------

    @property
    def prefix(self) -> str:
        """The name every named resource starts with (``agent-memory-dev``)."""
        return f"agent-memory-{self.stage}"

    @property
    def plans_json(self) -> str:
        return json.dumps(self.plans, sort_keys=True, separators=(",", ":"))

    def retention_environment(self) -> dict[str, str]:
        """What a function applying retention reads (governance/retention.py, the API's forget
        and admin routes and the retention function): local days, the plans, the knobs."""
        return settings_env(
            timezone=self.timezone,
            plans=self.plans_json,
            default_ttls=self.retention.default_ttls,
            forget_grace_days=self.retention.forget_grace_days,
            max_working_per_agent=self.retention.max_working_per_agent,
            retention_max_unsummarized_days=self.retention.max_unsummarized_days,
        )


def inference_profile(model_id: str) -> bool:
    """Whether the id names a cross-region inference profile (``us.anthropic...``)."""
    head, _, rest = model_id.partition(".")
    return head in INFERENCE_PROFILE_PREFIXES and "." in rest


def base_model_id(model_id: str) -> str:
    """The foundation model behind an id: the id itself, or a profile's id without its prefix."""
    return model_id.partition(".")[2] if inference_profile(model_id) else model_id


def _as_mapping(raw: Any, where: str) -> dict[str, Any]:
    if raw is None:
        return {}
    if isinstance(raw, str):
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where}: not valid JSON ({exc.msg} at {exc.pos})") from exc
    if not isinstance(raw, Mapping):
        raise ConfigError(f"{where}: expected a JSON object, got {type(raw).__name__}")
    return dict(raw)


#: What ``-c stage=<name>`` changes on top of cdk.json, before the stage's own overrides
#: (``agent_memory.stages.<name>`` in cdk.json). cdk.json's values are the dev sizing; prod gets
#: memory-optimised data nodes in three AZs with three dedicated masters and a higher stage
#: throttle (each tenant is held to its plan's usage plan).
STAGE_PRESETS: dict[str, dict[str, Any]] = {
    "prod": {
        "opensearch": {
            "data_node_type": "r7g.large.search",
            "data_nodes": 3,
            "master_nodes": 3,
            "master_node_type": "m7g.large.search",
            "volume_gib": 100,
        },
        "api": {"rate_limit": 500, "burst_limit": 1000},
        "log_retention_days": 90,
        "retain_data": True,
    }
}


def _merged(base: dict[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``over`` laid on it, objects merged key by key."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merged(dict(out[key]), value)
        else:
            out[key] = value
    return out


def parse_config(context: Any, stage: str | None = None) -> StackConfig:
    """Validate the ``agent_memory`` context object (plus an optional ``stage`` override).

    The stage's preset (`STAGE_PRESETS`) and then its ``stages.<stage>`` object in the context
    are laid over the context's values.
    """
    values = _as_mapping(context, f"context {CONTEXT_KEY!r}")
    per_stage = _as_mapping(values.pop("stages", None), f"context {CONTEXT_KEY!r}.stages")
    if stage is not None:
        values["stage"] = stage
    effective = str(values.get("stage", "dev"))
    values = _merged(values, STAGE_PRESETS.get(effective, {}))
    values = _merged(values, _as_mapping(per_stage.get(effective), f"stages.{effective}"))
    try:
        return StackConfig.model_validate(values)
    except ValidationError as exc:
        lines = []
        for error in exc.errors(include_url=False, include_input=False):
            path = ".".join(str(p) for p in (CONTEXT_KEY, *error["loc"]))
            lines.append(f"  {path}: {error['msg'].removeprefix('Value error, ')}")
        raise ConfigError("invalid stack configuration in cdk.json:\n" + "\n".join(lines)) from None


def load_config(node: Any) -> StackConfig:
    """The validated configuration from a construct node's context (``app.node``)."""
    stage = node.try_get_context("stage")
    context = dict(_as_mapping(node.try_get_context(CONTEXT_KEY), f"context {CONTEXT_KEY!r}"))
    store = node.try_get_context("store")
    if store is not None:  # ``-c store=serverless``
        context["store"] = store
    return parse_config(context, stage)

"""One settings object, read from the environment once per cold start and validated then.

Every variable has the prefix ``AGENT_MEMORY_`` (``AGENT_MEMORY_STORE=sqlite``). Powertools reads
its own ``POWERTOOLS_*`` variables. `get_settings()` is a cached factory: nothing reads the
environment at import time, and tests call `get_settings.cache_clear()` after changing it.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from agent_memory.errors import ConfigurationError
from agent_memory.writing.rules.dedup import DedupScope

#: (choice, value, resource): choosing that adapter needs that resource named, in every function.
_NAMED_RESOURCES = (
    ("queue", "sqs", "write_queue_url"),
    ("store", "opensearch", "opensearch_endpoint"),
    ("store", "s3", "store_bucket"),
    ("pending", "dynamodb", "pending_table"),
    ("idempotency", "dynamodb", "idempotency_table"),
    ("topics", "dynamodb", "topics_table"),
    ("tenant_settings", "dynamodb", "tenant_settings_table"),
    ("change_feed", "eventbridge", "event_bus_name"),
    ("webhooks", "dynamodb", "webhooks_table"),
)


def known_timezone(value: str) -> str:
    """``value`` if it names an IANA time zone, else a ValueError naming it. The service's
    settings and the stack's configuration check the same zone the same way, so a stack that
    synthesizes never deploys functions that refuse their own settings at cold start."""
    try:
        ZoneInfo(value)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ValueError(f"unknown IANA timezone {value!r}") from exc
    return value


class Settings(BaseSettings):
    """What every function and the local runtime may be configured with.

    The defaults are the embedded local runtime. A Lambda deployment sets ``store``,
    ``queue``, ``embedder`` and the resource names (the CDK stack does).
    """

    model_config = SettingsConfigDict(env_prefix="AGENT_MEMORY_", extra="ignore", frozen=True)

    # --- where things live -------------------------------------------------------------------
    data_dir: Path = Path(".agent-memory")
    store: Literal["sqlite", "opensearch", "s3"] = "sqlite"
    #: The serverless store (``store=s3``): each tenant's SQLite file in this bucket under
    #: ``store_prefix``, copied to ``store_cache_dir`` (a function's ``/tmp``) to be read and
    #: written; a read trusts its copy for ``store_fresh_s`` seconds without asking S3 (so the
    #: reads of one search share one HEAD; a write shows a quarter second later at most).
    store_bucket: str | None = None
    store_prefix: str = "stores/"
    store_cache_dir: Path = Path("/tmp/agent-memory-stores")
    store_fresh_s: float = Field(default=0.25, ge=0, le=60)
    queue: Literal["local", "sqs"] = "local"
    pending: Literal["local", "dynamodb"] = "local"
    write_queue_url: str | None = None
    dead_letter_queue_url: str | None = None
    pending_table: str | None = None
    #: Where the first answers of writes sent with an ``Idempotency-Key`` are kept (SQLite in
    #: ``data_dir``, or a DynamoDB table), how long a key is remembered, and how long a request
    #: that died holds its key before a retry may run again (at least the API function's timeout).
    idempotency: Literal["local", "dynamodb"] = "local"
    idempotency_table: str | None = None
    idempotency_ttl_s: int = Field(default=86_400, ge=60, le=7 * 86_400)
    idempotency_in_progress_s: float = Field(default=30.0, gt=0, le=900)
    #: DynamoDB table of API keys (hash -> tenant, plan, scopes), read by the Lambda authorizer
    #: and written by `agent-memory keys` when deployed.
    tenants_table: str | None = None
    #: The stage's usage-plan prefix (``agent-memory-dev``): the authorizer names each tenant's
    #: API Gateway API key, and the keys CLI enrolls tenants in their plan's usage plan.
    usage_plans: str | None = None
    #: The retention function that `POST /v1/admin/retention` hands its run to (in AWS); unset, the
    #: route runs retention in place (the embedded runtime).
    retention_function: str | None = None
    #: Per-tenant topic dictionaries and unknown-topic counts: SQLite (``topics.db``) or a
    #: DynamoDB table; read through a per-tenant cache of ``topics_cache_s`` seconds.
    topics: Literal["local", "dynamodb"] = "local"
    topics_table: str | None = None
    topics_cache_s: float = Field(default=60.0, ge=0, le=3600)
    #: Each tenant's own settings (``/v1/admin/settings``): SQLite (``tenant_settings.db``) or a
    #: DynamoDB table; read through a per-tenant cache of ``tenant_settings_cache_s`` seconds.
    tenant_settings: Literal["local", "dynamodb"] = "local"
    tenant_settings_table: str | None = None
    tenant_settings_cache_s: float = Field(default=60.0, ge=0, le=3600)
    #: Tenants' provider keys: 0600 files under ``<data_dir>/secrets`` locally, or AWS Secrets
    #: Manager under ``secrets_prefix`` (encrypted with ``secrets_kms_key_id``, or the AWS key).
    secrets: Literal["local", "secretsmanager"] = "local"
    secrets_prefix: str = "agent-memory"
    secrets_kms_key_id: str | None = None
    #: The change feed (`feed.rules.events`): ``local``, an outbox in ``data_dir`` the local
    #: runtime delivers to tenants' webhooks; ``eventbridge``, the bus ``event_bus_name``; ``none``.
    change_feed: Literal["local", "eventbridge", "none"] = "local"
    event_bus_name: str | None = None
    #: Tenants' webhooks (``/v1/admin/webhooks``): SQLite (``webhooks.db``) or a DynamoDB table.
    webhooks: Literal["local", "dynamodb"] = "local"
    webhooks_table: str | None = None
    #: The deployed webhook delivery queue: a failed delivery is put off there for its back-off.
    webhook_queue_url: str | None = None
    #: A delivery waits ``webhook_timeout_s`` for an answer; a failed one is tried again after
    #: ``webhook_retry_base_s`` x 2^(attempt - 1) seconds (at most ``webhook_retry_max_s``), at
    #: most ``webhook_attempts`` times in all (the local outbox; SQS uses its redrive policy).
    webhook_timeout_s: float = Field(default=5.0, gt=0, le=30)
    webhook_retry_base_s: float = Field(default=2.0, gt=0, le=3600)
    webhook_retry_max_s: float = Field(default=900.0, gt=0, le=43_200)
    webhook_attempts: int = Field(default=8, ge=1, le=100)
    #: Whether requests this service makes to tenant-named URLs (webhooks, OpenAI-compatible
    #: endpoints) may go to this machine (loopback, and plain http to it): for receivers and model
    #: servers beside the local runtime. Off: only public addresses (`tenancy.rules.outbound`).
    outbound_allow_loopback: bool = False
    #: SQS queue of summarize jobs (one per agent-period), fed by the dispatcher.
    summarize_queue_url: str | None = None
    aws_region: str | None = Field(default=None, validation_alias="AWS_REGION")
    #: OpenSearch: the domain endpoint (https://...), the SigV4 service of a managed domain
    #: ("es", the only one: OpenSearch Serverless is refused, see `_no_serverless`), and the
    #: alias every operation goes through.
    opensearch_endpoint: str | None = None
    opensearch_service: Literal["es"] = "es"
    opensearch_index_alias: str = "agent-memory"
    opensearch_timeout_s: float = Field(default=10.0, gt=0)
    #: Exports (``/v1/admin/exports``): files and job states under ``<data_dir>/exports``, or in
    #: the bucket ``export_bucket`` under ``export_prefix``, fetched by a pre-signed URL valid
    #: ``export_url_ttl_s``; deleted after ``export_expiry_days`` (deployed: the bucket's rule).
    export_bucket: str | None = None
    export_prefix: str = "exports/"
    export_url_ttl_s: int = Field(default=900, ge=60, le=43_200)
    export_expiry_days: int = Field(default=7, ge=1, le=365)

    # --- embeddings ----------------------------------------------------------------------------
    embedder: Literal["hashing", "minilm", "minilm-memory", "bedrock"] = "minilm"
    embedding_dimension: int = Field(default=384, ge=8, le=4096)
    bedrock_embedding_model_id: str = "amazon.titan-embed-text-v2:0"
    #: Threads of the local model (0: one per CPU, at most 4). `agent-memory serve` with several
    #: API processes gives each its share of the CPUs: two processes of two threads on two cores
    #: embed a query in twice the time of two of one.
    embedder_threads: int = Field(default=0, ge=0, le=64)

    #: The update judge supersession by meaning asks (`adapters.judges`): the shipped MiniLM
    #: cross-encoder, or none (its nearness rules alone). The deployed stack runs without it: its
    #: runtime (onnxruntime) is not in the Lambda layer (docs/decisions.md).
    update_judge: Literal["none", "minilm"] = "minilm"
    #: The answer judge a search asks about a question of the present and two statements of one
    #: person it found (`recall.rules.current_first`, *Answered first*): the shipped MiniLM
    #: cross-encoder, or none (the ranking's rules alone). Off unless chosen: it reads up to four
    #: pairs a search, a model run each, which more than doubled search p95 at 10,000 memories on
    #: a 2-core machine (docs/decisions.md). Not deployed, as the update judge.
    answer_judge: Literal["none", "minilm"] = "none"

    # --- summaries ---------------------------------------------------------------------------
    #: An optional cross-encoder over the head of each search's ranking (docs/decisions.md).
    reranker: Literal["none", "bedrock"] = "none"
    #: Whether a tenant may choose Amazon Comprehend's DetectPiiEntities for redaction on write
    #: (the function that accepts writes is granted the call when the stack enables it).
    pii_comprehend: bool = False
    bedrock_rerank_model_arn: str = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"
    summarizer: Literal["local", "bedrock"] = "local"
    bedrock_summary_model_id: str = "anthropic.claude-3-haiku-20240307-v1:0"
    #: The local runtime fires the cascade and retention on their schedules; off for tests.
    scheduler_enabled: bool = True
    #: Processes serving the local HTTP API (`local.api_workers`); 0: one per CPU on Linux, where
    #: they share the port, and 1 elsewhere. The writer and the scheduler run in the first alone.
    api_workers: int = Field(default=0, ge=0, le=64)
    #: The embedded store searches an agent with at least this many live vectors through a
    #: vector index kept next to the database (`sqlite_ann`: an int8 sketch scanned, the best
    #: candidates rescored exactly), smaller ones exactly; 0 turns the index off.
    ann_min_vectors: int = Field(default=10_000, ge=0)

    # --- behaviour -----------------------------------------------------------------------------
    #: Cosine above which a new working-memory write is merged into its nearest neighbour.
    dedup_threshold: float = Field(default=0.92, gt=0.0, le=1.0)
    #: Whose writes may merge (`writing.rules.dedup.DedupScope`): one conversation of one end user by
    #: default; ``user`` across that user's conversations; ``agent`` across end users.
    dedup_scope: DedupScope = DedupScope.CONVERSATION
    #: Recency decay constant in days: recency = exp(-days_ago / recency_tau_days).
    recency_tau_days: float = Field(default=90.0, gt=0.0)
    #: How much recency and importance shape the score (0 = not at all, 1 = fully).
    recency_weight: float = Field(default=0.1, ge=0.0, le=1.0)
    importance_weight: float = Field(default=0.2, ge=0.0, le=1.0)
    #: Weight of the lexical (BM25) evidence against the vector similarity in relevance.
    lexical_weight: float = Field(default=0.4, ge=0.0, le=1.0)
    #: How much a memory of a time the query names ("last May") is lifted: score x (1 + boost).
    time_boost: float = Field(default=0.3, ge=0.0, le=2.0)
    #: How much a memory said by someone the query names is lifted: score x (1 + boost).
    speaker_boost: float = Field(default=0.4, ge=0.0, le=1.0)
    #: Pattern recognition (`derived.rules.patterns`): a cluster of at least ``pattern_min_members``
    #: experiences from at least ``pattern_min_runs`` runs (or days), each joining at a mean cosine
    #: of ``pattern_similarity`` or more, becomes a pattern; the job looks back
    #: ``pattern_window_days`` at the newest ``pattern_max_experiences`` experiences of an agent.
    pattern_min_members: int = Field(default=3, ge=2, le=1_000)
    pattern_min_runs: int = Field(default=2, ge=1, le=1_000)
    pattern_similarity: float = Field(default=0.7, gt=0.0, le=1.0)
    pattern_window_days: int = Field(default=90, ge=1, le=3_650)
    pattern_max_experiences: int = Field(default=500, ge=10, le=5_000)
    #: Profiles (`derived.rules.profiles`): a person with at least ``profile_min_statements`` statements
    #: about themselves gets a profile of at most ``profile_max_statements`` of them; the job reads
    #: the newest ``profile_max_records`` memories of the last ``profile_window_days``.
    profile_min_statements: int = Field(default=3, ge=1, le=100)
    profile_max_statements: int = Field(default=30, ge=1, le=200)
    profile_window_days: int = Field(default=365, ge=1, le=3_650)
    profile_max_records: int = Field(default=5_000, ge=10, le=50_000)
    #: Turns of the same conversation a new turn is embedded and indexed with (0: each turn alone).
    context_turns: int = Field(default=2, ge=0, le=10)
    #: Period boundaries of the grain cascade follow this IANA timezone.
    timezone: str = "UTC"
    #: The operator console's origin when it is deployed as a static site (``https://d1.cloudfront.net``):
    #: the one origin the API answers CORS for. None: no cross-origin page may read the API.
    console_origin: str | None = Field(default=None, pattern=r"^https://[A-Za-z0-9.-]+(:\d{1,5})?$")
    #: Deliveries of a write before it is moved to the dead-letter queue (local queue; SQS uses
    #: the redrive policy of the queue).
    max_receive_count: int = Field(default=5, ge=1, le=1000)

    # --- retention (see governance/rules/plans.py) -------------------------------------------------------
    #: JSON ``{"plan": {"grain": hours-or-null}}`` merged over the default plans.
    plans: str | None = None
    #: An unsummarized record is kept past its grain's cutoff until its parent summary exists,
    #: but never longer than this (a cascade that never runs must not keep memory for ever).
    retention_max_unsummarized_days: int = Field(default=30, ge=1)
    #: Days a forgotten (soft-deleted) record stays before cleanup purges it.
    forget_grace_days: int = Field(default=7, ge=0)
    #: Working memories kept per agent; past it the least important, then oldest, go first.
    max_working_per_agent: int = Field(default=10_000, ge=1)
    #: A write without ``ttl_days`` gets its kind's default lifetime
    #: (`governance.rules.plans.DEFAULT_TTL_DAYS`).
    default_ttls: bool = True

    _known_zone = field_validator("timezone")(known_timezone)

    @field_validator("opensearch_service", mode="before")
    @classmethod
    def _no_serverless(cls, value: object) -> object:
        """OpenSearch Serverless (``aoss``) is no store of this service: its vector collections
        refuse a caller-chosen document id, and every write here names its document's
        (docs/decisions.md, "No OpenSearch Serverless"). Refused when the settings load, so a
        function configured for it stops at its cold start, saying why, instead of failing on
        its first write."""
        if isinstance(value, str) and value.strip().lower() == "aoss":
            raise ValueError(
                "AGENT_MEMORY_OPENSEARCH_SERVICE=aoss: OpenSearch Serverless is not supported (its "
                "vector collections refuse the document ids every write sets); use a managed "
                "OpenSearch domain (service 'es') or the serverless store (AGENT_MEMORY_STORE=s3)"
            )
        return value

    @classmethod
    def variable(cls, name: str) -> str:
        """The environment variable the field ``name`` is read from (``AGENT_MEMORY_<NAME>``)."""
        return f"{cls.model_config.get('env_prefix', '')}{name.upper()}"

    @model_validator(mode="after")
    def _resources_named(self) -> Settings:
        missing = [
            f"{self.variable(resource)} ({choice}={value})"
            for choice, value, resource in _NAMED_RESOURCES
            if getattr(self, choice) == value and not getattr(self, resource)
        ]
        if missing:
            raise ValueError("missing settings: " + ", ".join(missing))
        return self

    def resource(self, name: str) -> str:
        """The value of the resource setting ``name`` (a queue URL, a table name), which the
        adapter chosen for it needs; a `ConfigurationError` naming its variable when it is unset.

        The validator refuses the gaps of `_NAMED_RESOURCES` when the settings load; this covers
        the ones only some functions need (the dead-letter queue URL: only the writer has it).
        """
        value = getattr(self, name)
        if not value:
            raise ConfigurationError(f"{self.variable(name)} is required here")
        return str(value)

    @property
    def sqlite_path(self) -> Path:
        return self.data_dir / "memory.db"

    @property
    def queue_path(self) -> Path:
        return self.data_dir / "queue.db"

    @property
    def auth_path(self) -> Path:
        return self.data_dir / "auth.db"

    @property
    def topics_path(self) -> Path:
        return self.data_dir / "topics.db"

    @property
    def tenant_settings_path(self) -> Path:
        return self.data_dir / "tenant_settings.db"

    @property
    def secrets_path(self) -> Path:
        return self.data_dir / "secrets"

    @property
    def idempotency_path(self) -> Path:
        return self.data_dir / "idempotency.db"

    @property
    def changes_path(self) -> Path:
        return self.data_dir / "changes.db"

    @property
    def webhooks_path(self) -> Path:
        return self.data_dir / "webhooks.db"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    return Settings()

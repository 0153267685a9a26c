"""The composition root: the only place that knows which adapter serves which port.

One `Container(settings)` per process (a Lambda cold start, or the local server's start): each
member is built on first use, from the validated settings, and kept. The module-level functions
(`container.store()`, ...) read the process's container; tests call `reset()` after changing
the environment, which drops it and the settings together.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from agent_memory.adapters.clock import SystemClock
from agent_memory.domain.patterns import PatternJob, PatternRules
from agent_memory.domain.profiles import ProfileJob, ProfileRules
from agent_memory.domain.scoring import RankingWeights
from agent_memory.domain.tenant_settings import ModelChoice
from agent_memory.feed_wiring import FeedParts
from agent_memory.ports import (
    Clock,
    DeadLetterQueue,
    Embedder,
    Idempotency,
    JobQueue,
    KeyStore,
    MemoryStore,
    PendingWrites,
    Reranker,
    RetentionStarter,
    Summarizer,
    TopicStore,
    WriteQueue,
)
from agent_memory.ports.tenancy import SecretStore, TenantConfigurationStore
from agent_memory.services.agent_jobs import AgentJobDispatch
from agent_memory.services.agents import AgentsService
from agent_memory.services.context import ContextService
from agent_memory.services.dispatch import DispatchService
from agent_memory.services.feedback import FeedbackApplier, FeedbackService
from agent_memory.services.forget import ForgetService
from agent_memory.services.idempotency import IdempotentWriteService
from agent_memory.services.knowledge_documents import KnowledgeService, KnowledgeWriter
from agent_memory.services.memories import MemoryService
from agent_memory.services.memory_history import MemoryHistoryService
from agent_memory.services.pattern_recognition import PatternService
from agent_memory.services.person_profiles import ProfileService
from agent_memory.services.pii_redaction import PiiRedaction
from agent_memory.services.read_grants import ReadGrantService
from agent_memory.services.reembedding import ReembedService
from agent_memory.services.search import SearchService
from agent_memory.services.search_stats import SearchStatsService
from agent_memory.services.store_writes import WriterService
from agent_memory.services.summarize import SummarizeService
from agent_memory.services.supersession_review import SupersessionReview
from agent_memory.services.tenant_configuration import SettingsCache, TenantSettingsService
from agent_memory.services.tenant_models import TenantEmbedders, TenantSummarizers
from agent_memory.services.timeline import TimelineService
from agent_memory.services.topics import TopicCache, TopicService
from agent_memory.services.write import WriteService
from agent_memory.settings import Settings, get_settings

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from agent_memory.adapters.local_queue import LocalFifoQueue
    from agent_memory.services.exports import ExportService
    from agent_memory.services.retention_rules import RetentionService

#: Rules or weights made from the settings (`from_settings`).
Rules = TypeVar("Rules", bound="DataclassInstance")


class Container:
    """Every adapter and service of one process, built from ``settings`` on first use."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # --- adapters ------------------------------------------------------------------------------

    @cached_property
    def clock(self) -> Clock:
        return SystemClock()

    @cached_property
    def embedder(self) -> Embedder:
        from agent_memory.adapters.embedders import build_embedder

        return build_embedder(self.settings)

    @cached_property
    def opensearch_client(self) -> Any:
        """The process-wide OpenSearch client (the store's, and the index bootstrap's)."""
        from agent_memory.adapters.opensearch.opensearch_client import build_client

        return build_client(self.settings)

    @cached_property
    def store(self) -> MemoryStore:
        settings, emb = self.settings, self.embedder
        if settings.store == "s3":
            from agent_memory.adapters.s3_sqlite_store import S3SqliteStore
            from agent_memory.adapters.s3_tenant_files import S3TenantFiles

            files = S3TenantFiles(
                settings.resource("store_bucket"), settings.store_prefix, region=settings.aws_region
            )
            return S3SqliteStore(
                files, settings.store_cache_dir, emb.dimension, emb.model_id, fresh_s=settings.store_fresh_s
            )
        if settings.store == "opensearch":
            from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore

            return OpenSearchStore(
                self.opensearch_client,
                settings.opensearch_index_alias,
                emb.dimension,
                emb.model_id,
            )
        from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return SqliteMemoryStore(
            settings.sqlite_path,
            dimension=emb.dimension,
            model_id=emb.model_id,
            ann_min_vectors=settings.ann_min_vectors,
        )

    @cached_property
    def local_queue(self) -> LocalFifoQueue:
        from agent_memory.adapters.local_queue import LocalFifoQueue

        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        return LocalFifoQueue(self.settings.queue_path, max_receive_count=self.settings.max_receive_count)

    @cached_property
    def write_queue(self) -> WriteQueue:
        if self.settings.queue == "sqs":
            from agent_memory.adapters.sqs_queue import SqsWriteQueue

            return SqsWriteQueue(self.settings.resource("write_queue_url"))
        return self.local_queue

    @cached_property
    def dead_letters(self) -> DeadLetterQueue:
        """The writer puts poison here; `agent-memory dlq list | redrive` reads and replays it."""
        settings = self.settings
        if settings.queue == "sqs":
            from agent_memory.adapters.sqs_queue import SqsDeadLetters

            return SqsDeadLetters(
                settings.resource("dead_letter_queue_url"), redrive_to=settings.write_queue_url
            )
        return self.local_queue

    @cached_property
    def pending(self) -> PendingWrites:
        settings = self.settings
        if settings.pending == "dynamodb":
            from agent_memory.adapters.dynamodb_pending import DynamoDbPendingWrites

            return DynamoDbPendingWrites(settings.resource("pending_table"))
        from agent_memory.adapters.local_pending import LocalPendingWrites

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        return LocalPendingWrites(settings.queue_path)

    @cached_property
    def idempotency(self) -> Idempotency:
        from agent_memory.adapters.powertools_idempotency import PowertoolsIdempotency

        settings = self.settings
        layer: Any
        if settings.idempotency == "dynamodb":
            from agent_memory.adapters.dynamodb_idempotency import dynamodb_layer

            layer = dynamodb_layer(settings.resource("idempotency_table"))
        else:
            from agent_memory.adapters.powertools_idempotency import SqliteIdempotencyLayer

            settings.data_dir.mkdir(parents=True, exist_ok=True)
            layer = SqliteIdempotencyLayer(settings.idempotency_path)
        return PowertoolsIdempotency(
            layer,
            expires_after_s=settings.idempotency_ttl_s,
            in_progress_s=settings.idempotency_in_progress_s,
        )

    @cached_property
    def topic_store(self) -> TopicStore:
        if self.settings.topics == "dynamodb":
            from agent_memory.adapters.dynamodb_topics import DynamoDbTopicStore

            return DynamoDbTopicStore(self.settings.resource("topics_table"))
        from agent_memory.adapters.sqlite.sqlite_topics import SqliteTopicStore

        return SqliteTopicStore(self.settings.topics_path)

    @cached_property
    def topic_cache(self) -> TopicCache:
        """One per process: writes and searches of a warm container share it (services/topics.py)."""
        return TopicCache(self.topic_store, ttl_s=self.settings.topics_cache_s)

    @cached_property
    def tenant_settings_store(self) -> TenantConfigurationStore:
        if self.settings.tenant_settings == "dynamodb":
            from agent_memory.adapters.dynamodb_tenant_settings import DynamoDbTenantSettingsStore

            return DynamoDbTenantSettingsStore(self.settings.resource("tenant_settings_table"))
        from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore

        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        return SqliteTenantSettingsStore(self.settings.tenant_settings_path)

    @cached_property
    def settings_cache(self) -> SettingsCache:
        """One per process, like the topic cache (services/tenant_settings.py)."""
        store = self.tenant_settings_store
        return SettingsCache(store, ttl_s=self.settings.tenant_settings_cache_s, states=store)

    @cached_property
    def secret_store(self) -> SecretStore:
        s = self.settings
        if s.secrets == "secretsmanager":
            from agent_memory.adapters.secretsmanager_secrets import SecretsManagerSecretStore

            return SecretsManagerSecretStore(
                s.secrets_prefix, kms_key_id=s.secrets_kms_key_id, region=s.aws_region
            )
        from agent_memory.adapters.local_secrets import LocalFileSecretStore

        return LocalFileSecretStore(s.secrets_path)

    @cached_property
    def tenant_settings_service(self) -> TenantSettingsService:
        from agent_memory.adapters.embedders import enabled_embedding_models
        from agent_memory.adapters.summarizers import enabled_summary_models
        from agent_memory.domain.plans import load_plans

        return TenantSettingsService(
            self.settings_cache,
            self.secret_store,
            self.store,
            self.clock,
            load_plans(self.settings.plans),
            self.settings.max_working_per_agent,
            summary_models=enabled_summary_models(self.settings),
            embedding_models=enabled_embedding_models(self.settings),
            reembedding=self.reembed_service,
            comprehend_available=self.settings.pii_comprehend,
            outbound=self.feed.outbound,
        )

    @cached_property
    def pii_redaction(self) -> PiiRedaction:
        if not self.settings.pii_comprehend:  # no botocore client to build for the local engine
            return PiiRedaction(self.settings_cache)
        from agent_memory.adapters.comprehend_pii import ComprehendPiiDetector

        return PiiRedaction(self.settings_cache, ComprehendPiiDetector())

    @cached_property
    def tenant_embedders(self) -> TenantEmbedders:
        from agent_memory.adapters.embedders import build_tenant_embedder

        def build(choice: ModelChoice, key: str | None) -> Embedder:
            return build_tenant_embedder(choice, key, self.settings)

        return TenantEmbedders(self.embedder, self.settings_cache, self.secret_store, build)

    @cached_property
    def reembed_service(self) -> ReembedService:
        return ReembedService(
            self.store,
            self.tenant_settings_store,
            self.settings_cache,
            self.tenant_embedders,
            self.job_queue,
            self.clock,
        )

    @cached_property
    def tenant_summarizers(self) -> TenantSummarizers:
        from agent_memory.adapters.summarizers import build_tenant_summarizer

        def build(choice: ModelChoice, key: str | None) -> Summarizer:
            return build_tenant_summarizer(choice, key, self.settings, self.embedder)

        return TenantSummarizers(self.summarizer, self.settings_cache, self.secret_store, build)

    @cached_property
    def summarizer(self) -> Summarizer:
        from agent_memory.adapters.summarizers import build_summarizer

        return build_summarizer(self.settings, self.embedder)

    @cached_property
    def local_jobs(self) -> LocalFifoQueue:
        """The local job queue's file: its own, so jobs and writes never wait for each other."""
        from agent_memory.adapters.local_queue import LocalFifoQueue

        self.settings.data_dir.mkdir(parents=True, exist_ok=True)
        # A job may run for minutes (a year healed at once): do not redeliver it while it runs.
        return LocalFifoQueue(
            self.settings.data_dir / "jobs.db",
            max_receive_count=self.settings.max_receive_count,
            visibility_timeout_s=900,
        )

    @cached_property
    def job_queue(self) -> JobQueue:
        """SQS when a summarize queue is named (the dispatcher needs no write queue to use it)."""
        settings = self.settings
        if settings.summarize_queue_url or settings.queue == "sqs":
            from agent_memory.adapters.sqs_jobs import SqsJobQueue

            return SqsJobQueue(settings.resource("summarize_queue_url"))
        from agent_memory.adapters.local_jobs import LocalJobQueue

        return LocalJobQueue(self.local_jobs)

    @cached_property
    def key_store(self) -> KeyStore:
        """API keys: the deployed tenants table, or the local ``auth.db``."""
        if self.settings.tenants_table:
            from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore

            return DynamoDbKeyStore(self.settings.tenants_table)
        from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore

        return LocalKeyStore(self.settings.auth_path)

    @cached_property
    def feed(self) -> FeedParts:  # the change feed and the tenants' webhooks
        return FeedParts(self.settings, lambda: self.store, self.clock)

    @cached_property
    def reranker(self) -> Reranker | None:
        if self.settings.reranker == "bedrock":
            from agent_memory.adapters.bedrock_rerank import BedrockReranker

            return BedrockReranker(self.settings.bedrock_rerank_model_arn)
        return None

    @cached_property
    def retention_starter(self) -> RetentionStarter | None:
        """Where the admin route hands a retention run (the retention function), or None: here."""
        if not self.settings.retention_function:
            return None
        from agent_memory.adapters.lambda_retention import LambdaRetentionStarter

        return LambdaRetentionStarter(self.settings.retention_function)

    # --- services ------------------------------------------------------------------------------

    @cached_property
    def ranking(self) -> RankingWeights:
        return ranking(self.settings)

    @cached_property
    def write_service(self) -> WriteService:
        from agent_memory.domain.plans import default_ttl_days

        ttls = default_ttl_days if self.settings.default_ttls else None
        return WriteService(
            self.write_queue,
            self.pending,
            self.clock,
            default_ttl_days=ttls,
            topics=self.topic_cache,
            settings=self.settings_cache,
        )

    @cached_property
    def idempotent_write_service(self) -> IdempotentWriteService:
        return IdempotentWriteService(self.write_service, self.idempotency)

    @cached_property
    def search_service(self) -> SearchService:
        return SearchService(
            self.store,
            self.embedder,
            self.clock,
            self.ranking,
            topics=self.topic_cache,
            reranker=self.reranker,
            knowledge=self.store,
            settings=self.settings_cache,
            embedders=self.tenant_embedders,
        )

    @cached_property
    def knowledge_service(self) -> KnowledgeService:
        return KnowledgeService(self.store, self.write_queue, self.pending, self.clock)

    @cached_property
    def knowledge_writer(self) -> KnowledgeWriter:
        return KnowledgeWriter(self.store, self.embedder, self.pending, self.tenant_embedders)

    @cached_property
    def pattern_rules(self) -> PatternRules:
        return from_settings(self.settings, PatternRules, "pattern_")

    @cached_property
    def pattern_service(self) -> PatternService:
        return PatternService(
            self.store,
            self.embedder,
            self.summarizer,
            self.write_queue,
            self.pending,
            self.clock,
            self.pattern_rules,
            self.settings.timezone,
            summarizers=self.tenant_summarizers,
            embedders=self.tenant_embedders,
        )

    @cached_property
    def pattern_dispatch(self) -> AgentJobDispatch:
        return AgentJobDispatch(
            "patterns",
            self.store,
            self.job_queue,
            self.pending,
            self.clock,
            self.pattern_rules.window_days,
            PatternJob,
        )

    @cached_property
    def profile_rules(self) -> ProfileRules:
        return from_settings(self.settings, ProfileRules, "profile_")

    @cached_property
    def profile_service(self) -> ProfileService:
        return ProfileService(
            self.store,
            self.summarizer,
            self.write_queue,
            self.pending,
            self.clock,
            self.profile_rules,
            self.settings.timezone,
            summarizers=self.tenant_summarizers,
        )

    @cached_property
    def profile_dispatch(self) -> AgentJobDispatch:
        return AgentJobDispatch(
            "profiles",
            self.store,
            self.job_queue,
            self.pending,
            self.clock,
            self.profile_rules.window_days,
            ProfileJob,
        )

    @cached_property
    def feedback_applier(self) -> FeedbackApplier:
        return FeedbackApplier(self.store, self.pending, self.clock, feed=self.feed.feed)

    @cached_property
    def feedback_service(self) -> FeedbackService:
        return FeedbackService(self.store, self.write_queue, self.pending, self.clock)

    @cached_property
    def memory_service(self) -> MemoryService:
        return MemoryService(self.store, self.pending, self.clock)

    @cached_property
    def forget_service(self) -> ForgetService:
        return ForgetService(
            self.store, self.job_queue, self.clock, self.settings.timezone, feed=self.feed.feed
        )

    @cached_property
    def writer_service(self) -> WriterService:
        s = self.settings
        return WriterService(
            self.store,
            self.embedder,
            self.pending,
            self.dead_letters,
            self.clock,
            dedup_threshold=s.dedup_threshold,
            context_turns=s.context_turns,
            dedup_scope=s.dedup_scope,
            timezone=s.timezone,
            settings=self.settings_cache,
            embedders=self.tenant_embedders,
            feed=self.feed.feed,
            # Re-makes a summary it hid (a source forgotten before its put): the stack gives the
            # writer function the summarize queue; a deployment without one only hides it.
            jobs=self.job_queue if s.summarize_queue_url or s.queue != "sqs" else None,
        )

    @cached_property
    def dispatch_service(self) -> DispatchService:
        return DispatchService(self.store, self.job_queue, self.clock, self.settings.timezone)

    @cached_property
    def summarize_service(self) -> SummarizeService:
        return SummarizeService(
            self.store,
            self.summarizer,
            self.write_queue,
            self.job_queue,
            self.clock,
            self.settings.timezone,
            summarizers=self.tenant_summarizers,
            review=SupersessionReview(self.store, feed=self.feed.feed),
        )

    def retention_service(self) -> RetentionService:
        """Built per run, not kept: the plans are read afresh, so an upgrade counts at the next run."""
        from datetime import timedelta

        from agent_memory.domain.plans import load_plans
        from agent_memory.services.retention_rules import KeyStorePlans, RetentionService

        s = self.settings
        return RetentionService(
            self.store,
            KeyStorePlans(self.key_store),
            self.clock,
            load_plans(s.plans),
            self.job_queue,
            timezone=s.timezone,
            max_unsummarized=timedelta(days=s.retention_max_unsummarized_days),
            forget_grace=timedelta(days=s.forget_grace_days),
            max_working=s.max_working_per_agent,
            settings=self.settings_cache,
        )

    @cached_property
    def export_service(self) -> ExportService:
        from agent_memory.export_wiring import export_service

        return export_service(self)

    @cached_property
    def api_services(self) -> ApiServices:
        return ApiServices(self)


def ranking(settings: Settings) -> RankingWeights:
    return from_settings(settings, RankingWeights)


def from_settings(settings: Settings, rules: type[Rules], prefix: str = "") -> Rules:
    """``rules`` (a dataclass) from the settings named ``prefix`` and a field's name, one per
    field (``pattern_`` + ``min_members``); a field no setting names keeps its default."""
    names = (field.name for field in fields(rules))
    return rules(
        **{name: getattr(settings, prefix + name) for name in names if hasattr(settings, prefix + name)}
    )


@dataclass(frozen=True)
class ApiServices:
    """What the API function needs. Properties build lazily: a write never loads the model."""

    root: Container

    @property
    def write(self) -> WriteService:
        return self.root.write_service

    @property
    def idempotent_write(self) -> IdempotentWriteService:
        return self.root.idempotent_write_service

    @property
    def search(self) -> SearchService:
        return self.root.search_service

    @property
    def redaction(self) -> PiiRedaction:
        return self.root.pii_redaction

    @property
    def feedback(self) -> FeedbackService:
        return self.root.feedback_service

    @property
    def patterns(self) -> PatternService:
        return self.root.pattern_service

    @property
    def pattern_dispatch(self) -> AgentJobDispatch:
        return self.root.pattern_dispatch

    @property
    def tenant_settings(self) -> TenantSettingsService:
        return self.root.tenant_settings_service

    @property
    def knowledge(self) -> KnowledgeService:
        return self.root.knowledge_service

    @property
    def read_grants(self) -> ReadGrantService:
        return ReadGrantService(self.root.key_store, self.root.store, self.root.clock)

    @property
    def memories(self) -> MemoryService:
        return self.root.memory_service

    @property
    def forget(self) -> ForgetService:
        return self.root.forget_service

    @property
    def history(self) -> MemoryHistoryService:
        r = self.root
        return MemoryHistoryService(r.store, r.write_queue, r.pending, r.clock, feed=r.feed.feed)

    @property
    def context(self) -> ContextService:
        return ContextService(self.root.search_service)

    @property
    def agents(self) -> AgentsService:
        return AgentsService(self.root.store, self.root.clock)

    @property
    def timeline(self) -> TimelineService:
        return TimelineService(self.root.store, self.root.clock, self.root.settings.timezone)

    @property
    def search_stats(self) -> SearchStatsService:
        return SearchStatsService(self.root.store, self.root.clock)

    @property
    def topics(self) -> TopicService:
        return TopicService(self.root.topic_cache, self.root.clock)


# --- the process's container -------------------------------------------------------------------


@cache
def current() -> Container:
    """This process's container, built from the settings on first use."""
    return Container(get_settings())


def reset() -> None:
    """Forget the container and the settings (tests, after changing the environment)."""
    current.cache_clear()
    get_settings.cache_clear()


# The members under the names handlers and the local runtime call them by.
def clock() -> Clock:
    return current().clock


def embedder() -> Embedder:
    return current().embedder


def store() -> MemoryStore:
    return current().store


def write_queue() -> WriteQueue:
    return current().write_queue


def dead_letters() -> DeadLetterQueue:
    return current().dead_letters


def pending() -> PendingWrites:
    return current().pending


def idempotency() -> Idempotency:
    return current().idempotency


def topic_store() -> TopicStore:
    return current().topic_store


def topic_cache() -> TopicCache:
    return current().topic_cache


def summarizer() -> Summarizer:
    return current().summarizer


def job_queue() -> JobQueue:
    return current().job_queue


def key_store() -> KeyStore:
    return current().key_store


def reranker() -> Reranker | None:
    return current().reranker


def retention_starter() -> RetentionStarter | None:
    return current().retention_starter


def dispatch_service() -> DispatchService:
    return current().dispatch_service


def summarize_service() -> SummarizeService:
    return current().summarize_service


def writer_service() -> WriterService:
    return current().writer_service


def knowledge_writer() -> KnowledgeWriter:
    return current().knowledge_writer


def feedback_applier() -> FeedbackApplier:
    return current().feedback_applier


def pattern_service() -> PatternService:
    return current().pattern_service


def pattern_dispatch() -> AgentJobDispatch:
    return current().pattern_dispatch


def profile_service() -> ProfileService:
    return current().profile_service


def tenant_settings_service() -> TenantSettingsService:
    return current().tenant_settings_service


def profile_dispatch() -> AgentJobDispatch:
    return current().profile_dispatch


def retention_service() -> RetentionService:
    return current().retention_service()


def api_services() -> ApiServices:
    return current().api_services


def reembed_service() -> ReembedService:
    return current().reembed_service


def export_service() -> ExportService:
    return current().export_service

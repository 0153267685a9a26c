"""The composition root: the only place that knows which adapter serves which port.

Built lazily and once per process (a Lambda cold start, or the local server's start) from the
validated settings. Tests call `reset()` after changing the environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any

from agent_memory.adapters.clock import SystemClock
from agent_memory.domain.scoring import RankingWeights
from agent_memory.ports import (
    Clock,
    DeadLetterQueue,
    Embedder,
    Idempotency,
    JobQueue,
    MemoryStore,
    PendingWrites,
    Reranker,
    RetentionStarter,
    Summarizer,
    TopicStore,
    WriteQueue,
)
from agent_memory.services.agents import AgentsService
from agent_memory.services.context import ContextService
from agent_memory.services.dispatch import DispatchService
from agent_memory.services.forget import ForgetService
from agent_memory.services.idempotency import IdempotentWriteService
from agent_memory.services.memories import MemoryService
from agent_memory.services.search import SearchService
from agent_memory.services.search_stats import SearchStatsService
from agent_memory.services.summarize import SummarizeService
from agent_memory.services.timeline import TimelineService
from agent_memory.services.topics import TopicCache, TopicService
from agent_memory.services.write import WriteService
from agent_memory.services.writer import WriterService
from agent_memory.settings import Settings, get_settings

if TYPE_CHECKING:
    from agent_memory.adapters.local_queue import LocalFifoQueue
    from agent_memory.services.retention import RetentionService


@cache
def clock() -> Clock:
    return SystemClock()


@cache
def embedder() -> Embedder:
    from agent_memory.adapters.embedders import build_embedder

    return build_embedder(get_settings())


@cache
def store() -> MemoryStore:
    settings = get_settings()
    emb = embedder()
    if settings.store == "opensearch":
        from agent_memory.adapters.opensearch_client import build_client
        from agent_memory.adapters.opensearch_store import OpenSearchStore

        return OpenSearchStore(
            build_client(settings),
            settings.opensearch_index_alias,
            emb.dimension,
            emb.model_id,
            serverless=settings.opensearch_service == "aoss",
        )
    from agent_memory.adapters.sqlite_store import SqliteMemoryStore

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return SqliteMemoryStore(settings.sqlite_path, dimension=emb.dimension, model_id=emb.model_id)


@cache
def _local_queue():  # type: ignore[no-untyped-def]
    from agent_memory.adapters.local_queue import LocalFifoQueue

    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return LocalFifoQueue(settings.queue_path, max_receive_count=settings.max_receive_count)


@cache
def write_queue() -> WriteQueue:
    settings = get_settings()
    if settings.queue == "sqs":
        from agent_memory.adapters.sqs_queue import SqsWriteQueue

        assert settings.write_queue_url is not None
        return SqsWriteQueue(settings.write_queue_url)
    return _local_queue()  # type: ignore[no-any-return]


@cache
def dead_letters() -> DeadLetterQueue:
    """The writer puts poison here; `agent-memory dlq list | redrive` reads and replays it."""
    settings = get_settings()
    if settings.queue == "sqs":
        from agent_memory.adapters.sqs_queue import SqsDeadLetters

        if settings.dead_letter_queue_url is None:
            from agent_memory.errors import ConfigurationError

            raise ConfigurationError("AGENT_MEMORY_DEAD_LETTER_QUEUE_URL is required with queue=sqs")
        return SqsDeadLetters(settings.dead_letter_queue_url, redrive_to=settings.write_queue_url)
    return _local_queue()  # type: ignore[no-any-return]


@cache
def pending() -> PendingWrites:
    settings = get_settings()
    if settings.pending == "dynamodb":
        from agent_memory.adapters.dynamodb_pending import DynamoDbPendingWrites

        assert settings.pending_table is not None
        return DynamoDbPendingWrites(settings.pending_table)
    from agent_memory.adapters.local_pending import LocalPendingWrites

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    return LocalPendingWrites(settings.queue_path)


@cache
def idempotency() -> Idempotency:
    from agent_memory.adapters.idempotency import PowertoolsIdempotency

    settings = get_settings()
    layer: Any
    if settings.idempotency == "dynamodb":
        from agent_memory.adapters.dynamodb_idempotency import dynamodb_layer

        assert settings.idempotency_table is not None
        layer = dynamodb_layer(settings.idempotency_table)
    else:
        from agent_memory.adapters.idempotency import SqliteIdempotencyLayer

        settings.data_dir.mkdir(parents=True, exist_ok=True)
        layer = SqliteIdempotencyLayer(settings.idempotency_path)
    return PowertoolsIdempotency(
        layer, expires_after_s=settings.idempotency_ttl_s, in_progress_s=settings.idempotency_in_progress_s
    )


@cache
def topic_store() -> TopicStore:
    settings = get_settings()
    if settings.topics == "dynamodb":
        from agent_memory.adapters.dynamodb_topics import DynamoDbTopicStore

        assert settings.topics_table is not None
        return DynamoDbTopicStore(settings.topics_table)
    from agent_memory.adapters.sqlite_topics import SqliteTopicStore

    return SqliteTopicStore(settings.topics_path)


@cache
def topic_cache() -> TopicCache:
    """One per process: writes and searches of a warm container share it (services/topics.py)."""
    return TopicCache(topic_store(), ttl_s=get_settings().topics_cache_s)


@cache
def summarizer() -> Summarizer:
    from agent_memory.adapters.summarizers import build_summarizer

    return build_summarizer(get_settings(), embedder())


@cache
def _local_jobs() -> LocalFifoQueue:
    """The local job queue's file: its own, so jobs and writes never wait for each other."""
    from agent_memory.adapters.local_queue import LocalFifoQueue

    settings = get_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    # A job may run for minutes (a year healed at once): do not redeliver it while it runs.
    return LocalFifoQueue(
        settings.data_dir / "jobs.db", max_receive_count=settings.max_receive_count, visibility_timeout_s=900
    )


@cache
def job_queue() -> JobQueue:
    """SQS when a summarize queue is named (the dispatcher needs no write queue to use it)."""
    settings = get_settings()
    if settings.summarize_queue_url:
        from agent_memory.adapters.sqs_jobs import SqsJobQueue

        return SqsJobQueue(settings.summarize_queue_url)
    if settings.queue == "sqs":
        from agent_memory.errors import ConfigurationError

        raise ConfigurationError("AGENT_MEMORY_SUMMARIZE_QUEUE_URL is required with queue=sqs")
    from agent_memory.adapters.local_jobs import LocalJobQueue

    return LocalJobQueue(_local_jobs())


@cache
def dispatch_service() -> DispatchService:
    return DispatchService(store(), job_queue(), clock(), get_settings().timezone)


@cache
def summarize_service() -> SummarizeService:
    return SummarizeService(
        store(), summarizer(), write_queue(), job_queue(), clock(), get_settings().timezone
    )


def retention_starter() -> RetentionStarter | None:
    """Where the admin route hands a retention run (the retention function), or None: run here."""
    settings = get_settings()
    if not settings.retention_function:
        return None
    from agent_memory.adapters.lambda_retention import LambdaRetentionStarter

    return LambdaRetentionStarter(settings.retention_function)


def retention_service() -> RetentionService:
    """Built per run, not cached: the plans are read afresh, so an upgrade counts at the next run."""
    from datetime import timedelta

    from agent_memory.domain.plans import load_plans
    from agent_memory.services.retention import KeyStorePlans, RetentionService

    settings = get_settings()
    keys: Any
    if settings.tenants_table:
        from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore

        keys = DynamoDbKeyStore(settings.tenants_table)
    else:
        from agent_memory.adapters.sqlite_keys import LocalKeyStore

        keys = LocalKeyStore(settings.auth_path)
    return RetentionService(
        store(),
        KeyStorePlans(keys),
        clock(),
        load_plans(settings.plans),
        job_queue(),
        timezone=settings.timezone,
        max_unsummarized=timedelta(days=settings.retention_max_unsummarized_days),
        forget_grace=timedelta(days=settings.forget_grace_days),
        max_working=settings.max_working_per_agent,
    )


def ranking(settings: Settings) -> RankingWeights:
    return RankingWeights(
        recency_tau_days=settings.recency_tau_days,
        recency_weight=settings.recency_weight,
        importance_weight=settings.importance_weight,
        lexical_weight=settings.lexical_weight,
        time_boost=settings.time_boost,
    )


@dataclass(frozen=True)
class ApiServices:
    """What the API function needs. Properties build lazily: a write never loads the model."""

    @property
    def write(self) -> WriteService:
        return _write_service()

    @property
    def idempotent_write(self) -> IdempotentWriteService:
        return _idempotent_write_service()

    @property
    def search(self) -> SearchService:
        return _search_service()

    @property
    def memories(self) -> MemoryService:
        return _memory_service()

    @property
    def forget(self) -> ForgetService:
        return _forget_service()

    @property
    def context(self) -> ContextService:
        return ContextService(_search_service())

    @property
    def agents(self) -> AgentsService:
        return AgentsService(store(), clock())

    @property
    def timeline(self) -> TimelineService:
        return TimelineService(store(), clock(), get_settings().timezone)

    @property
    def search_stats(self) -> SearchStatsService:
        return SearchStatsService(store(), clock())

    @property
    def topics(self) -> TopicService:
        return TopicService(topic_cache(), clock())


@cache
def _write_service() -> WriteService:
    from agent_memory.domain.plans import default_ttl_days

    ttls = default_ttl_days if get_settings().default_ttls else None
    return WriteService(write_queue(), pending(), clock(), default_ttl_days=ttls, topics=topic_cache())


@cache
def _idempotent_write_service() -> IdempotentWriteService:
    return IdempotentWriteService(_write_service(), idempotency())


@cache
def _search_service() -> SearchService:
    return SearchService(
        store(), embedder(), clock(), ranking(get_settings()), topics=topic_cache(), reranker=reranker()
    )


def reranker() -> Reranker | None:
    settings = get_settings()
    if settings.reranker == "bedrock":
        from agent_memory.adapters.bedrock_rerank import BedrockReranker

        return BedrockReranker(settings.bedrock_rerank_model_arn)
    return None


@cache
def _memory_service() -> MemoryService:
    return MemoryService(store(), pending(), clock())


@cache
def _forget_service() -> ForgetService:
    return ForgetService(store(), job_queue(), clock(), get_settings().timezone)


@cache
def writer_service() -> WriterService:
    return WriterService(
        store(),
        embedder(),
        pending(),
        dead_letters(),
        clock(),
        dedup_threshold=get_settings().dedup_threshold,
        context_turns=get_settings().context_turns,
        dedup_scope=get_settings().dedup_scope,
        timezone=get_settings().timezone,
    )


def api_services() -> ApiServices:
    return ApiServices()


_CACHED = (
    clock,
    embedder,
    store,
    _local_queue,
    write_queue,
    dead_letters,
    pending,
    _write_service,
    idempotency,
    _idempotent_write_service,
    _search_service,
    _memory_service,
    _forget_service,
    writer_service,
    summarizer,
    topic_store,
    topic_cache,
    _local_jobs,
    job_queue,
    dispatch_service,
    summarize_service,
)


def reset() -> None:
    """Forget every built adapter and the settings (tests, after changing the environment)."""
    for factory in _CACHED:
        factory.cache_clear()
    get_settings.cache_clear()

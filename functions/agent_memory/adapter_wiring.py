"""The adapters of the composition root: which adapter serves which port, from the settings.

`container.Container` is built on this (it adds the services), so this module knows the adapters
and nothing of the use cases; each member is built on first use and kept, like the services.
"""

from __future__ import annotations

from functools import cached_property
from typing import TYPE_CHECKING, Any

from agent_memory.adapters.clock import SystemClock
from agent_memory.feed_wiring import FeedParts
from agent_memory.knowledge.topics import TopicCache
from agent_memory.ports.clocks import Clock
from agent_memory.ports.embedding import AnswerJudge, Embedder, Reranker, UpdateJudge
from agent_memory.ports.idempotent_calls import Idempotency
from agent_memory.ports.key_store import KeyStore
from agent_memory.ports.memory_store import MemoryStore
from agent_memory.ports.queues import DeadLetterQueue, JobQueue, PendingWrites, WriteQueue
from agent_memory.ports.retention_store import RetentionStarter
from agent_memory.ports.summarizer import Summarizer
from agent_memory.ports.tenancy import SecretStore, TenantConfigurationStore
from agent_memory.ports.topic_store import TopicStore
from agent_memory.settings import Settings
from agent_memory.tenancy.models import TenantEmbedders, TenantSummarizers
from agent_memory.tenancy.rules.tenant_settings import ModelChoice
from agent_memory.tenancy.settings import SettingsCache

if TYPE_CHECKING:
    from agent_memory.adapters.apigateway_usage import ApiGatewayUsagePlans
    from agent_memory.adapters.deployment_probe import DeploymentProbe
    from agent_memory.adapters.local_queue import LocalFifoQueue
    from agent_memory.adapters.opensearch.opensearch_bootstrap import BootstrapResult


class AdapterWiring:
    """Every adapter of one process (and the per-process caches in front of the per-tenant
    tables), built from ``settings`` on first use."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    # --- the models ------------------------------------------------------------------------------

    @cached_property
    def clock(self) -> Clock:
        return SystemClock()

    @cached_property
    def embedder(self) -> Embedder:
        from agent_memory.adapters.embedders import build_embedder

        return build_embedder(self.settings)

    @cached_property
    def summarizer(self) -> Summarizer:
        from agent_memory.adapters.summarizers import build_summarizer

        return build_summarizer(self.settings, self.embedder)

    @cached_property
    def reranker(self) -> Reranker | None:
        if self.settings.reranker == "bedrock":
            from agent_memory.adapters.bedrock_rerank import BedrockReranker

            return BedrockReranker(self.settings.bedrock_rerank_model_arn)
        return None

    @cached_property
    def update_judge(self) -> UpdateJudge | None:
        if self.settings.update_judge == "minilm":
            from agent_memory.adapters.judges.minilm_update_judge import MiniLmUpdateJudge

            return MiniLmUpdateJudge(threads=self.settings.embedder_threads or 1)
        return None

    @cached_property
    def answer_judge(self) -> AnswerJudge | None:
        if self.settings.answer_judge == "minilm":
            from agent_memory.adapters.judges.minilm_answer_judge import MiniLmAnswerJudge

            return MiniLmAnswerJudge(threads=self.settings.embedder_threads or 1)
        return None

    @cached_property
    def tenant_embedders(self) -> TenantEmbedders:
        from agent_memory.adapters.embedders import build_tenant_embedder

        def build(choice: ModelChoice, key: str | None) -> Embedder:
            return build_tenant_embedder(choice, key, self.settings)

        return TenantEmbedders(self.embedder, self.settings_cache, self.secret_store, build)

    @cached_property
    def tenant_summarizers(self) -> TenantSummarizers:
        from agent_memory.adapters.summarizers import build_tenant_summarizer

        def build(choice: ModelChoice, key: str | None) -> Summarizer:
            return build_tenant_summarizer(choice, key, self.settings, self.embedder)

        return TenantSummarizers(self.summarizer, self.settings_cache, self.secret_store, build)

    # --- the store -------------------------------------------------------------------------------

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

    # --- the queues ------------------------------------------------------------------------------

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

    @property
    def local_writes(self) -> LocalFifoQueue | None:
        """The write queue when it is the local queue's file (the local runtime's workers drain
        it), else None (SQS: the deployed writer's to work)."""
        from agent_memory.adapters.local_queue import LocalFifoQueue

        queue = self.write_queue
        return queue if isinstance(queue, LocalFifoQueue) else None

    @property
    def local_job_fifo(self) -> LocalFifoQueue | None:
        """The local job queue's file when jobs are queued locally, else None (SQS)."""
        from agent_memory.adapters.local_jobs import LocalJobQueue

        jobs = self.job_queue
        return jobs.queue if isinstance(jobs, LocalJobQueue) else None

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
    def retention_starter(self) -> RetentionStarter | None:
        """Where the admin route hands a retention run (the retention function), or None: here."""
        if not self.settings.retention_function:
            return None
        from agent_memory.adapters.lambda_retention import LambdaRetentionStarter

        return LambdaRetentionStarter(self.settings.retention_function)

    # --- the per-tenant tables and their per-process caches --------------------------------------

    @cached_property
    def topic_store(self) -> TopicStore:
        if self.settings.topics == "dynamodb":
            from agent_memory.adapters.dynamodb_topics import DynamoDbTopicStore

            return DynamoDbTopicStore(self.settings.resource("topics_table"))
        from agent_memory.adapters.sqlite.sqlite_topics import SqliteTopicStore

        return SqliteTopicStore(self.settings.topics_path)

    @cached_property
    def topic_cache(self) -> TopicCache:
        """One per process: writes and searches of a warm container share it (knowledge/topics.py)."""
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
        """One per process, like the topic cache (tenancy/settings.py)."""
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
    def key_store(self) -> KeyStore:
        """API keys: the deployed tenants table, or the local ``auth.db``."""
        return self.keys_in(self.settings.tenants_table)

    def keys_in(self, table: str | None) -> KeyStore:
        """The API keys of the tenants table ``table`` (deployed), else of the local ``auth.db``
        (`local_keys`); `agent-memory keys` names the table it works on."""
        if table:
            from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore

            return DynamoDbKeyStore(table)
        return self.local_keys()

    def local_keys(self) -> KeyStore:
        """A handle of its own on the local ``auth.db``, the keys the local server checks bearer
        tokens against whatever `key_store` is."""
        from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore

        return LocalKeyStore(self.settings.auth_path)

    def usage_plans(self, prefix: str) -> ApiGatewayUsagePlans:
        """The stage's API Gateway usage plans (``<prefix>-<plan>``), which a tenant is put in."""
        from agent_memory.adapters.apigateway_usage import ApiGatewayUsagePlans

        return ApiGatewayUsagePlans(prefix)

    # --- what the operator's commands reach --------------------------------------------------------

    def index_bootstrap(self) -> BootstrapResult:
        """Create the OpenSearch indexes and aliases for this embedder (idempotent)."""
        from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap

        client, embedder = self.opensearch_client, self.embedder
        alias = self.settings.opensearch_index_alias
        return bootstrap(client, alias, embedder.dimension, embedder.model_id)

    def index_status(self) -> dict[str, Any]:
        """The indexes behind the aliases, their document counts and ``_meta``."""
        from agent_memory.adapters.opensearch.opensearch_bootstrap import status

        return status(self.opensearch_client, self.settings.opensearch_index_alias)

    def deployment_probe(self, stack: str) -> DeploymentProbe:
        """What the smoke test reads of a deployed stack (its outputs, its functions' logs)."""
        from agent_memory.adapters.deployment_probe import DeploymentProbe

        return DeploymentProbe(stack)

    # --- the change feed -------------------------------------------------------------------------

    @cached_property
    def feed(self) -> FeedParts:  # the change feed and the tenants' webhooks
        return FeedParts(self.settings, lambda: self.store, self.clock)

"""The composition root: the only place that knows which adapter serves which port (chosen in
`adapter_wiring`, which `Container` is built on) and which service each use case gets.

One `Container(settings)` per process (a Lambda cold start, or the local server's start): each
member is built on first use, from the validated settings, and kept. The module-level functions
(`container.store()`, ...) read the process's container; tests call `reset()` after changing
the environment, which drops it and the settings together.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, TypeVar

from agent_memory.adapter_wiring import AdapterWiring
from agent_memory.cascade.dispatch import DispatchService
from agent_memory.cascade.summarize import SummarizeService
from agent_memory.derived.agent_job_dispatch import AgentJobDispatch
from agent_memory.derived.derivation import DerivationParts
from agent_memory.derived.pattern_recognition import PatternRecognitionService
from agent_memory.derived.person_profiles import PersonProfilesService
from agent_memory.derived.rules.patterns import PatternJob, PatternRules
from agent_memory.derived.rules.profiles import ProfileJob, ProfileRules
from agent_memory.experience.feedback import FeedbackApplier, FeedbackService
from agent_memory.governance.forget import ForgetService
from agent_memory.governance.history import HistoryService
from agent_memory.governance.read_grants import ReadGrantsService
from agent_memory.knowledge.documents import DocumentsService, KnowledgeWriter
from agent_memory.knowledge.topics import TopicCache, TopicsService
from agent_memory.ports.clocks import Clock
from agent_memory.ports.embedding import Embedder, Reranker
from agent_memory.ports.idempotent_calls import Idempotency
from agent_memory.ports.key_store import KeyStore
from agent_memory.ports.memory_store import MemoryStore
from agent_memory.ports.queues import DeadLetterQueue, JobQueue, PendingWrites, WriteQueue
from agent_memory.ports.retention_store import RetentionStarter
from agent_memory.ports.summarizer import Summarizer
from agent_memory.ports.topic_store import TopicStore
from agent_memory.recall.agents import AgentsService
from agent_memory.recall.context import ContextService
from agent_memory.recall.memories import MemoriesService
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService
from agent_memory.recall.search_stats import SearchStatsService
from agent_memory.recall.timeline import TimelineService
from agent_memory.settings import Settings, get_settings
from agent_memory.supersession.review import ReviewService
from agent_memory.tenancy.reembed import ReembedService
from agent_memory.tenancy.settings import SettingsService
from agent_memory.writing.idempotent_write import IdempotentWriteService
from agent_memory.writing.pii_redaction import PiiRedaction
from agent_memory.writing.write import WriteService
from agent_memory.writing.writer import WriterService

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

    from agent_memory.adapters.apigateway_usage import ApiGatewayUsagePlans
    from agent_memory.adapters.deployment_probe import DeploymentProbe
    from agent_memory.adapters.local_queue import LocalFifoQueue
    from agent_memory.adapters.opensearch.opensearch_bootstrap import BootstrapResult
    from agent_memory.governance.export import ExportService
    from agent_memory.governance.retention import KeyStorePlans, RetentionService

#: Rules or weights made from the settings (`from_settings`).
Rules = TypeVar("Rules", bound="DataclassInstance")


class Container(AdapterWiring):
    """Every adapter (`AdapterWiring`: built on it) and service of one process, built from
    ``settings`` on first use."""

    @cached_property
    def tenant_settings_service(self) -> SettingsService:
        from agent_memory.adapters.embedders import enabled_embedding_models
        from agent_memory.adapters.summarizers import enabled_summary_models
        from agent_memory.governance.rules.plans import load_plans

        return SettingsService(
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
    def ranking(self) -> RankingWeights:
        return ranking(self.settings)

    @cached_property
    def write_service(self) -> WriteService:
        from agent_memory.governance.rules.plans import default_ttl_days

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
            answer_judge=self.answer_judge,
        )

    @cached_property
    def knowledge_service(self) -> DocumentsService:
        return DocumentsService(self.store, self.write_queue, self.pending, self.clock)

    @cached_property
    def knowledge_writer(self) -> KnowledgeWriter:
        return KnowledgeWriter(self.store, self.embedder, self.pending, self.tenant_embedders)

    @cached_property
    def pattern_rules(self) -> PatternRules:
        return from_settings(self.settings, PatternRules, "pattern_")

    @cached_property
    def derivation_parts(self) -> DerivationParts:
        """What the pattern and profile jobs are made with (`derived.derivation`)."""
        return DerivationParts(
            self.store,
            self.summarizer,
            self.write_queue,
            self.pending,
            self.clock,
            self.settings.timezone,
            self.tenant_summarizers,
        )

    @cached_property
    def pattern_service(self) -> PatternRecognitionService:
        return PatternRecognitionService(
            self.derivation_parts, self.pattern_rules, self.embedder, embedders=self.tenant_embedders
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
    def profile_service(self) -> PersonProfilesService:
        return PersonProfilesService(self.derivation_parts, self.profile_rules)

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
    def memory_service(self) -> MemoriesService:
        return MemoriesService(self.store, self.pending, self.clock)

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
            judge=self.update_judge,
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
            review=ReviewService(self.store, feed=self.feed.feed),
        )

    def retention_service(self) -> RetentionService:
        """Built per run, not kept: the plans are read afresh, so an upgrade counts at the next run."""
        from datetime import timedelta

        from agent_memory.governance.retention import RetentionService
        from agent_memory.governance.rules.plans import load_plans

        s = self.settings
        return RetentionService(
            self.store,
            self.key_plans(self.key_store),
            self.clock,
            load_plans(s.plans),
            self.job_queue,
            timezone=s.timezone,
            max_unsummarized=timedelta(days=s.retention_max_unsummarized_days),
            forget_grace=timedelta(days=s.forget_grace_days),
            max_working=s.max_working_per_agent,
            settings=self.settings_cache,
        )

    def key_plans(self, keys: KeyStore) -> KeyStorePlans:
        """Each tenant's plan, as its newest live key in ``keys`` names it."""
        from agent_memory.governance.retention import KeyStorePlans

        return KeyStorePlans(keys)

    @cached_property
    def export_service(self) -> ExportService:
        from agent_memory.export_wiring import export_service

        return export_service(self.settings, self.store, self.job_queue, self.clock)

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
    def patterns(self) -> PatternRecognitionService:
        return self.root.pattern_service

    @property
    def pattern_dispatch(self) -> AgentJobDispatch:
        return self.root.pattern_dispatch

    @property
    def tenant_settings(self) -> SettingsService:
        return self.root.tenant_settings_service

    @property
    def knowledge(self) -> DocumentsService:
        return self.root.knowledge_service

    @property
    def read_grants(self) -> ReadGrantsService:
        return ReadGrantsService(self.root.key_store, self.root.store, self.root.clock)

    @property
    def memories(self) -> MemoriesService:
        return self.root.memory_service

    @property
    def forget(self) -> ForgetService:
        return self.root.forget_service

    @property
    def history(self) -> HistoryService:
        r = self.root
        return HistoryService(r.store, r.write_queue, r.pending, r.clock, feed=r.feed.feed)

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
    def topics(self) -> TopicsService:
        return TopicsService(self.root.topic_cache, self.root.clock)


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


def pattern_service() -> PatternRecognitionService:
    return current().pattern_service


def pattern_dispatch() -> AgentJobDispatch:
    return current().pattern_dispatch


def profile_service() -> PersonProfilesService:
    return current().profile_service


def tenant_settings_service() -> SettingsService:
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


# What the local runtime and the operator's commands run on.
def local_writes() -> LocalFifoQueue | None:
    return current().local_writes


def local_job_fifo() -> LocalFifoQueue | None:
    return current().local_job_fifo


def local_keys() -> KeyStore:
    return current().local_keys()


def keys_in(table: str | None) -> KeyStore:
    return current().keys_in(table)


def key_plans(keys: KeyStore) -> KeyStorePlans:
    return current().key_plans(keys)


def usage_plans(prefix: str) -> ApiGatewayUsagePlans:
    return current().usage_plans(prefix)


def index_bootstrap() -> BootstrapResult:
    return current().index_bootstrap()


def index_status() -> dict[str, Any]:
    return current().index_status()


def deployment_probe(stack: str) -> DeploymentProbe:
    return current().deployment_probe(stack)

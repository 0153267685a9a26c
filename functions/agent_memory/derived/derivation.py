"""What the per-agent derivation jobs (patterns, profiles) share beyond the lifecycle.

Every derived kind lives one life (`derived.lifecycle.Lifecycle`, driven by its registry row,
`derived.rules.kinds`); summaries choose a period's children (`cascade.summarize`). Pattern
recognition (`derived.pattern_recognition`) and profile making (`derived.person_profiles`) choose
from a window of the agent's working memory, and share the rest of their making: the window, what
they made before (live, and what a forget hid to be re-made), the summarizer's statement of a group
within its budget, the record built under a deterministic id, and the finish (upserts held pending,
the made events, the job's own pending mark released). That is `Derivations`, the lifecycle with
those parts, and `DerivationService`, what each of the two services holds; what differs is the
code that groups and chooses.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import ClassVar, Generic, Literal, TypeVar

from agent_memory.derived.lifecycle import Lifecycle, is_stale, records_of
from agent_memory.derived.rules.kinds import DerivedKind
from agent_memory.experience.rules.confidence import Experience
from agent_memory.model.grains import Grain
from agent_memory.model.ids import content_hash
from agent_memory.model.jobs import AgentJobBase
from agent_memory.model.limits import MAX_CONTENT_BYTES, MAX_TAGS
from agent_memory.model.records import MemoryKind, MemoryRecord
from agent_memory.observability import logger
from agent_memory.ports import (
    Clock,
    DerivableMemory,
    PendingWrites,
    StoreQuery,
    Summarizer,
    SummaryInput,
    SummaryRequest,
    WriteQueue,
)
from agent_memory.tenancy.models import TenantSummarizers, summarizer_of

RulesT = TypeVar("RulesT")


@dataclass(frozen=True, slots=True)
class DerivationParts:
    """What every derivation job is made with, built once for all of them: the store, the
    deployment's summarizer and the tenants' own (when they chose one), the write queue and its
    pending marks, the clock, and the local time zone the days of its inputs are told in."""

    store: DerivableMemory
    summarizer: Summarizer
    queue: WriteQueue
    pending: PendingWrites
    clock: Clock
    timezone: str
    summarizers: TenantSummarizers | None


class Derivations(Lifecycle):
    """The lifecycle of a kind a per-agent job keeps (patterns, profiles), with the reads and
    the making that job adds: its window of working memory, what it made before, the model's
    statement of a group, and the record built from it."""

    def __init__(self, what: DerivedKind, parts: DerivationParts) -> None:
        super().__init__(what, parts.store, parts.queue, parts.pending)
        self._search = parts.store
        self._summarizer = parts.summarizer
        #: The tenant's own summary model, when it chose one.
        self._summarizers = parts.summarizers
        self._marks = parts.pending

    # -- reading --------------------------------------------------------------------------------

    def window(
        self, tenant: str, agent: str, now: datetime, days: int, kinds: tuple[MemoryKind, ...], limit: int
    ) -> list[MemoryRecord]:
        """The newest live working memories of ``kinds`` in the last ``days``: what is derived from."""
        found = self._search.search(
            StoreQuery(
                tenant_id=tenant,
                agent_id=agent,
                now=now,
                grains=(Grain.WORKING,),
                start=now - timedelta(days=days),
                end=now,
                kinds=kinds,
                limit=limit,
            )
        )
        return [c.record for c in found]

    def stored(self, tenant: str, agent: str, now: datetime, stale: Sequence[str]) -> dict[str, MemoryRecord]:
        """What the job made before, by id: live ones and those a forget hid to be re-made."""
        made = {r.id: r for r in records_of(self._search, tenant, agent, now, self.what)}
        for rid in stale:
            record = self.get(tenant, agent, rid)
            if record is not None and self.what.ours(record) and is_stale(self._search, record):
                made.setdefault(record.id, record)
        return made

    # -- making ---------------------------------------------------------------------------------

    def state(
        self,
        tenant: str,
        inputs: Sequence[SummaryInput],
        purpose: Literal["pattern", "profile"],
        subject: str | None = None,
        heading: str = "",
    ) -> str:
        """What ``inputs`` say, stated once by the tenant's summarizer (its ``purpose`` prompt):
        the inputs that fit its budget (at least one), under ``heading``, at most
        `MAX_CONTENT_BYTES`."""
        summarizer = summarizer_of(self._summarizers, self._summarizer, tenant)
        taken: list[SummaryInput] = []
        size = 0
        for item in inputs:
            size += len(item.text)
            if taken and size > summarizer.max_input_chars:
                break
            taken.append(item)
        made = summarizer.summarize(
            SummaryRequest(grain=Grain.WORKING, period="", children=taken, purpose=purpose, subject=subject)
        )
        text = f"{heading}\n{made.text.strip()}" if heading else made.text.strip()
        while len(text.encode("utf-8")) > MAX_CONTENT_BYTES:
            text = text[: len(text) * 9 // 10]
        return text

    def record(
        self,
        rid: str,
        tenant: str,
        agent: str,
        user_id: str | None,
        content: str,
        made_of: Sequence[str],
        read: Sequence[MemoryRecord],
        existing: MemoryRecord | None,
        now: datetime,
        *,
        occurred_at: datetime,
        importance: float,
        metadata: dict[str, object],
        experience: Experience | None = None,
        speaker: str | None = None,
    ) -> MemoryRecord:
        """A record of this kind on the agent's working memory under its deterministic id
        ``rid``: made of ``made_of`` (its sources), tagged as the sources ``read`` are, created
        when ``existing`` was (now, for a first one), at most one end user's."""
        return MemoryRecord(
            id=rid,
            tenant_id=tenant,
            agent_id=agent,
            user_id=user_id,
            user_ids=[user_id] if user_id else [],
            grain=Grain.WORKING,
            kind=self.what.kind,
            speaker=speaker,
            content=content,
            importance=importance,
            tags=list(dict.fromkeys(t for r in read for t in r.tags))[:MAX_TAGS],
            metadata=metadata,
            source_ids=list(made_of),
            experience=experience,
            content_hash=content_hash(content),
            created_at=existing.created_at if existing is not None else now,
            updated_at=now,
            occurred_at=occurred_at,
        )

    # -- writing --------------------------------------------------------------------------------

    def finish(
        self,
        job: AgentJobBase,
        records: Sequence[MemoryRecord],
        detail_of: Callable[[MemoryRecord], dict[str, object]],
    ) -> list[str]:
        """Queue ``records`` (one agent's) as upserts on its working-memory group, each pending
        until stored, with the made action and what it was made of (``detail_of``) in the audit
        trail; then release the job's own pending mark. Their ids, for the report."""
        self.queue(records)
        if records:
            self.made(records, detail_of)
        if job.pending_id is not None:
            self._marks.done(job.tenant_id, job.agent_id, [job.pending_id])
        return [r.id for r in records]


class DerivationService(Generic[RulesT]):
    """What every derivation service holds: the shared reads and writes for its `DerivedKind`
    (``what``, named by each subclass) made with `DerivationParts`, and its rules."""

    what: ClassVar[DerivedKind]

    def __init__(self, parts: DerivationParts, rules: RulesT) -> None:
        self._derived = Derivations(self.what, parts)
        self._clock = parts.clock
        self._rules = rules
        self._tz = parts.timezone

    def _log(self, message: str, job: AgentJobBase, report: object, counts: Sequence[str]) -> None:
        """The run's log line: the agent, why it ran, and the report's ``counts`` by name."""
        extra = {"agent_id": job.agent_id, "reason": job.reason, **{n: getattr(report, n) for n in counts}}
        logger.info(message, extra=extra)

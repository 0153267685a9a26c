"""The vectors a batch of writes is stored with: every text it needs embedded in as few model
calls as its size allows, each distinct text once, and a large batch embedded part after part
while the writer stores the writes already embedded.

The writer (`writing.writer.WriterService`) asks for a receive's vectors before it stores
any write of it. A small receive (a Lambda's ten messages) is embedded here in one call per model.
A larger one is embedded in parts of about `PIPELINE_TEXTS` new texts, in order, on a thread of
its own: the writer stores each write as soon as its part is embedded, so storing the first writes
(a few store searches and puts each, Python) overlaps embedding the next (the model's threads), and
a writer on two cores uses both. The writes are still stored one by one in their order, and each
with the vectors the whole batch embedded at once would have given.

Where the queue can say what comes next (the local queue's `peek`: `local.worker.QueueWorker`),
the texts of the next receive's writes are embedded too, on the same thread after this batch's
parts (`look_ahead`), while the writer stores this batch: the next batch then finds them in the
memo and its writes are stored without waiting for the model, so storing one batch and embedding
the next use both cores from the first write to the last (without it, the last part's writes
were stored with the model idle). A write's new texts (its own words and its setting) depend on
the write alone, never on what is stored, so embedding them early gives the vectors the batch
would have made; a look-ahead that guessed wrong only embedded texts no batch asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

from agent_memory.model.records import MemoryRecord
from agent_memory.observability import logger
from agent_memory.ports import Embedder, SpaceVector, Vector
from agent_memory.tenancy.models import TenantEmbedders, TenantSpaces, record_vectors, spaces_of
from agent_memory.tenancy.rules.embedding_spaces import DEFAULT_SPACE
from agent_memory.writing.memo_embedder import MemoEmbedder, Memos
from agent_memory.writing.rules.contextual import vector_texts

#: New texts in one embedding call of a pipelined batch: enough for the model's bulk shape
#: (MiniLM's bulk session takes 16 or more, and pads less the more texts a call sorts by length:
#: docs/decisions.md, "Bulk ingest: less CPU per write"), few enough that the first writes are
#: stored while the rest embed (a local receive of `WRITE_BATCH` turns is two parts).
PIPELINE_TEXTS = 48


@dataclass(frozen=True, slots=True)
class RecordVectors:
    """A record's vectors as its writer stores them: in the deployment's space (None when its
    tenant's records are embedded by the tenant's own model only) and in the tenant's own spaces,
    with the one its tenant's searches (and near-duplicate lookups) read."""

    search_space: str
    search: Vector
    default: Vector | None
    spaces: tuple[SpaceVector, ...]


#: A write's vectors, or their future while its part of a pipelined batch is still embedding.
Pending = RecordVectors | Future[RecordVectors | None]


class WriteVectors:
    """Embeds writes for one writer: its models' memos (`embedding_memo`), and the thread that
    embeds a large batch part after part (made on the first such batch)."""

    def __init__(self, embedder: Embedder, embedders: TenantEmbedders | None, memos: Memos) -> None:
        self._embedder = embedder
        self._embedders = embedders
        self._memos = memos
        self._thread: ThreadPoolExecutor | None = None
        #: The look-ahead in progress (`look_ahead`), waited for before a batch is split in parts.
        self._ahead: Future[None] | None = None

    def of_batch(self, records: Sequence[MemoryRecord]) -> list[Pending]:
        """Each record's vectors: made now in one call per model when the batch is small (or its
        texts were embedded ahead), else futures made part after part (`pipelined`)."""
        ahead, self._ahead = self._ahead, None
        if ahead is not None:  # what it embeds is most likely this batch's texts: not twice
            ahead.result()
        ends = self.parts(records)
        if len(ends) == 1:
            return list(self.embeddings(records))
        return list(self.pipelined(records, ends))

    def embeddings(self, records: Sequence[MemoryRecord]) -> list[RecordVectors]:
        """Each record's vectors in every space its tenant writes (`record_vectors`).

        Every text the records need goes to each model in one call (`MemoEmbedder.prefetch`, which
        the model runs in its best batch shape): each record's own words, its setting and the
        earlier turns' words of its context (`writing.rules.contextual.vector_texts`). Each distinct text
        is embedded once, and an earlier turn's words, or a setting shared by the turns of one
        speaker and day, are answered from the memo; the own words are also what the near-duplicate
        check and the statement comparison ask for next.
        """
        out: dict[int, RecordVectors] = {}
        by_tenant, tenants = self._prefetched(records)
        for tenant_id, positions in by_tenant.items():
            spaces = tenants[tenant_id]
            batch = [records[i] for i in positions]
            made = {w.space: record_vectors(self._memos.of(w.embedder), batch) for w in spaces.writes}
            for n, i in enumerate(positions):
                out[i] = RecordVectors(
                    search_space=spaces.search.space,
                    search=made[spaces.search.space][n],
                    default=made[DEFAULT_SPACE][n] if DEFAULT_SPACE in made else None,
                    spaces=tuple(SpaceVector(sp, v[n]) for sp, v in made.items() if sp != DEFAULT_SPACE),
                )
        return [out[i] for i in range(len(records))]

    def _prefetched(
        self, records: Sequence[MemoryRecord]
    ) -> tuple[dict[str, list[int]], dict[str, TenantSpaces]]:
        """Every text ``records`` need in each model's memo, one call per model for those it
        lacks; the records' positions by tenant, and each tenant's spaces."""
        by_tenant: dict[str, list[int]] = {}
        for i, record in enumerate(records):
            by_tenant.setdefault(record.tenant_id, []).append(i)
        tenants = {t: spaces_of(self._embedders, self._embedder, t) for t in by_tenant}
        wanted: dict[int, tuple[MemoEmbedder, list[str]]] = {}
        for tenant_id, positions in by_tenant.items():
            for w in tenants[tenant_id].writes:
                memo = self._memos.of(w.embedder)
                texts = wanted.setdefault(id(memo), (memo, []))[1]
                texts += [text for i in positions for text in vector_texts(records[i])]
        for memo, texts in wanted.values():
            memo.prefetch(texts)
        return by_tenant, tenants

    def look_ahead(self, records: Callable[[], Sequence[MemoryRecord]]) -> None:
        """Embed the texts of the writes ``records`` reads (the next receive's, most likely) on
        the embedding thread, after the parts already asked of it, into the memo (module
        docstring); the next `of_batch` waits for it. Never raises: a look-ahead that fails is
        logged, and the batch embeds what it needs itself."""

        def embed() -> None:
            try:
                self._prefetched(records())
            except Exception:
                logger.warning(
                    "embedding the next writes ahead failed; they embed with their batch", exc_info=True
                )

        self._ahead = self._executor().submit(embed)

    def _executor(self) -> ThreadPoolExecutor:
        if self._thread is None:
            self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="writer-embedding")
        return self._thread

    def parts(self, records: Sequence[MemoryRecord]) -> list[int]:
        """Where the batch's embedding parts end (record positions, the last one its length):
        each part at least `PIPELINE_TEXTS` texts the memo does not hold yet, a short rest joined
        to the last part rather than embedded in a call too small for the model's bulk shape."""
        memo = self._memos.of(self._embedder)
        ends: list[int] = []
        seen: set[str] = set()
        new = 0
        for i, record in enumerate(records):
            texts = [t for t in vector_texts(record) if t not in seen and not memo.holds(t)]
            seen.update(texts)
            new += len(texts)
            if new >= PIPELINE_TEXTS:
                ends.append(i + 1)
                new = 0
        if not ends or new >= PIPELINE_TEXTS // 2:
            ends.append(len(records))
        else:
            ends[-1] = len(records)
        return ends

    def pipelined(self, records: Sequence[MemoryRecord], ends: Sequence[int]) -> list[Pending]:
        """The records' vectors as futures, made part after part (``ends``) on the embedding
        thread; a part whose embedding fails resolves to None, so its writes are embedded one
        at a time by the writer (a failure then is each write's own) and the other parts stand."""
        futures: list[Future[RecordVectors | None]] = [Future() for _ in records]

        def embed_parts() -> None:
            start = 0
            try:
                for end in ends:
                    part = range(start, end)
                    try:
                        made: list[RecordVectors | None] = list(self.embeddings([records[i] for i in part]))
                    except Exception:
                        logger.exception("embedding a part of a batch failed; its writes embed one by one")
                        made = [None] * len(part)
                    for i, vector in zip(part, made, strict=True):
                        futures[i].set_result(vector)
                    start = end
            finally:  # whatever stopped it, no write waits forever: the rest embed one by one
                for future in futures[start:]:
                    if not future.done():
                        future.set_result(None)

        self._executor().submit(embed_parts)
        return list(futures)

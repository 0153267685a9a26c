"""Shared knowledge: putting, reading and deleting a tenant's documents, and storing them.

**Put** (the API) validates a document, answers whether it is new, and queues it on its own FIFO
group (`model.commands.knowledge_group_id`): splitting is cheap, but embedding a long document
is not, and the API never waits for a model. Puts are idempotent by id and version: the same
version with the same content changes nothing (``unchanged``); the same version with other
content is refused (409), because a version names one text and two texts under one name would
make citations lie. A new version replaces every passage of the old one.

**Store** (the writer) embeds and stores the passages in one step (`ports.KnowledgeStore.put_document`),
unless the document was deleted after the put was accepted: a delete is immediate, so a put
still in the queue must not bring the document back.

**Delete** (the API) is immediate: every passage is gone from search when the call returns.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import asdict
from enum import StrEnum

import numpy as np

from agent_memory.errors import ConflictError, DependencyError, NotFoundError
from agent_memory.knowledge.rules.passages import (
    KnowledgeDocument,
    NewDocument,
    Passage,
    PutOutcome,
    PutStatus,
    document_hash,
    passages_of,
    split_passages,
)
from agent_memory.model.caller import Caller
from agent_memory.model.commands import DocumentCommand
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import (
    Clock,
    DocumentPage,
    Embedder,
    ManagedKnowledge,
    PendingWrites,
    QueueMessage,
    StoredPassage,
    Vector,
    WritableKnowledge,
    WriteQueue,
)
from agent_memory.tenancy.models import TenantEmbedders, spaces_of
from agent_memory.writing.write import hold

#: Passages embedded per model call: a long document is many calls, none of them huge.
EMBED_BATCH = 64
#: The pending-writes slot of a tenant's knowledge (``#`` is in no agent id).
PENDING_SLOT = "#knowledge"


class DocumentsService:
    """The API side: put, read, list, delete (see the module docstring)."""

    def __init__(
        self, store: ManagedKnowledge, queue: WriteQueue, pending: PendingWrites, clock: Clock
    ) -> None:
        self._store = store
        self._queue = queue
        self._pending = pending
        self._clock = clock

    def put(self, caller: Caller, doc_id: str, new: NewDocument) -> PutOutcome:
        now = self._clock.now()
        stored = self._store.get_document(caller.tenant_id, doc_id)
        document = KnowledgeDocument(
            **asdict(new) | {"tags": list(dict.fromkeys(new.tags))},  # what the client put, tags once each
            tenant_id=caller.tenant_id,
            doc_id=doc_id,
            content_hash=document_hash(new.text),
            passages=len(split_passages(new.text, new.format)),
            created_at=stored.created_at if stored else now,
            updated_at=now,
        )
        if stored is not None and stored.version == document.version:
            if stored.same_as(document):
                return PutOutcome(PutStatus.UNCHANGED, stored)
            raise ConflictError(
                f"version {document.version!r} of document {doc_id!r} is stored with other content; "
                "put the new content under a new version"
            )
        command = DocumentCommand(document=document, accepted_at=now)
        slot = _pending_id(doc_id, document.version)
        self._pending.add(caller.tenant_id, PENDING_SLOT, [slot])
        try:
            self._queue.send(
                [
                    QueueMessage(
                        group_id=command.group_id,
                        dedup_id=_dedup_id(document),
                        body=command.model_dump_json(),
                    )
                ]
            )
        except DependencyError:
            self._pending.discard(caller.tenant_id, PENDING_SLOT, [slot])
            raise
        hold(self._pending, caller.tenant_id, PENDING_SLOT, [slot])  # queued: held past its lease
        metrics.add_metric(name="DocumentsAccepted", unit=MetricUnit.Count, value=1)
        logger.info("document accepted", extra={"doc_id": doc_id, "passages": document.passages})
        return PutOutcome(PutStatus.ACCEPTED, document)

    def get(self, tenant_id: str, doc_id: str) -> KnowledgeDocument:
        document = self._store.get_document(tenant_id, doc_id)
        if document is None:
            raise NotFoundError(f"no document {doc_id!r} (a document just put is stored within seconds)")
        return document

    def passages(self, tenant_id: str, doc_id: str) -> list[Passage]:
        self.get(tenant_id, doc_id)
        return self._store.passages(tenant_id, doc_id)

    def list(self, tenant_id: str, cursor: str | None, limit: int) -> DocumentPage:
        return self._store.list_documents(tenant_id, cursor, limit)

    def pending(self, tenant_id: str) -> int:
        """Documents accepted and not yet stored."""
        return self._pending.count(tenant_id, PENDING_SLOT)

    def delete(self, caller: Caller, doc_id: str) -> int:
        """Remove the document and its passages now; the passages removed. A put of it still in
        the queue is dropped when it arrives (the tombstone is later than its acceptance)."""
        removed = self._store.delete_document(caller.tenant_id, doc_id, self._clock.now())
        metrics.add_metric(name="PassagesDeleted", unit=MetricUnit.Count, value=removed)
        logger.info(
            "document deleted", extra={"doc_id": doc_id, "passages": removed, "key_id": caller.key_id}
        )
        return removed


class StoreOutcome(StrEnum):
    STORED = "stored"
    REPLAYED = "replayed"
    SUPERSEDED = "superseded"


class KnowledgeWriter:
    """The writer side: split, embed, store one document version (see the module docstring)."""

    def __init__(
        self,
        store: WritableKnowledge,
        embedder: Embedder,
        pending: PendingWrites,
        embedders: TenantEmbedders | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._pending = pending
        self._embedders = embedders

    def apply(self, command: DocumentCommand) -> StoreOutcome:
        document = command.document
        tenant, doc_id = document.tenant_id, document.doc_id
        outcome = self._store_unless_stale(command)
        self._pending.done(tenant, PENDING_SLOT, [_pending_id(doc_id, document.version)])
        metrics.add_metric(name=f"Documents{outcome.value.title()}", unit=MetricUnit.Count, value=1)
        logger.info("document written", extra={"doc_id": doc_id, "outcome": outcome.value})
        return outcome

    def _store_unless_stale(self, command: DocumentCommand) -> StoreOutcome:
        document = command.document
        tenant, doc_id = document.tenant_id, document.doc_id
        deleted = self._store.deleted_at(tenant, doc_id)
        if deleted is not None and deleted >= command.accepted_at:
            return StoreOutcome.SUPERSEDED  # deleted after it was accepted
        stored = self._store.get_document(tenant, doc_id)
        if stored is not None and stored.same_as(document):
            return StoreOutcome.REPLAYED
        if stored is not None and stored.updated_at > document.updated_at:
            return StoreOutcome.SUPERSEDED  # a later put is stored already (a redriven old one)
        passages = passages_of(document)
        vectors: list[Vector] = []
        if not spaces_of(self._embedders, self._embedder, tenant).deployment_only:
            # A tenant that chose its own embedding model sends no text to the deployment's:
            # its passages are found by their words alone (docs/decisions.md, "Embedding spaces").
            vectors = [np.zeros(self._embedder.dimension, dtype=np.float32) for _ in passages]
        for start in range(len(vectors), len(passages), EMBED_BATCH):
            batch = passages[start : start + EMBED_BATCH]
            vectors.extend(self._embedder.embed([p.embedded_text for p in batch]))
        self._store.put_document(
            document.model_copy(update={"passages": len(passages)}),
            [StoredPassage(p, v) for p, v in zip(passages, vectors, strict=True)],
        )
        metrics.add_metric(name="PassagesStored", unit=MetricUnit.Count, value=len(passages))
        return StoreOutcome.STORED


def _pending_id(doc_id: str, version: str) -> str:
    return f"{doc_id}@{version}"


def _dedup_id(document: KnowledgeDocument) -> str:
    """One per acceptance (as `writing.write.dedup_id`): a transport retry of this send is
    dropped by the queue, a later put of the same version is not."""
    once = f"{document.tenant_id}\x00{document.doc_id}\x00{uuid.uuid4().hex}"
    return hashlib.sha256(once.encode()).hexdigest()

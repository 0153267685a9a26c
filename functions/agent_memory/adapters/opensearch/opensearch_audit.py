"""`agent_memory.ports.AuditLog` on OpenSearch: the audit trail, in the events index.

Its own module so the audit port reads on its own; the documents and the query are built in
`opensearch_events`. Audit documents have deterministic ids (`opensearch_documents.audit_doc_id`),
so a retried forget does not write its event twice, and they stay when records are purged: the
events index is never touched by retention's deletes.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_cursors import audit_after, next_page_cursor
from agent_memory.adapters.opensearch.opensearch_documents import owned
from agent_memory.adapters.opensearch.opensearch_events import audit_event, audit_events_body
from agent_memory.adapters.opensearch.opensearch_responses import hits_of
from agent_memory.errors import ValidationFailedError
from agent_memory.ports import AuditEvent, AuditPage, AuditQuery


class OpenSearchAuditLog(OpenSearchBase):
    """`agent_memory.ports.AuditLog` (see the module docstring)."""

    def append_audit(self, events: Sequence[AuditEvent]) -> None:
        """One ``_bulk`` of audit documents (`OpenSearchBase._write_audit`)."""
        self._write_audit(events)

    def audit_events(self, query: AuditQuery) -> AuditPage:
        """Newest first by ``at``, ties by record id and action, paged with ``search_after``."""
        if query.limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = {"t": query.tenant_id, "a": query.agent_id, "r": query.record_id, "k": "audit"}
        after = None if query.cursor is None else audit_after(query.cursor, binding)
        body = audit_events_body(query.tenant_id, query.agent_id, query.record_id, query.limit, after)
        hits = hits_of(self._search_events(body, "reading the audit trail", query.tenant_id, query.agent_id))
        page = hits[: query.limit]
        events = [
            audit_event(h["_source"]) for h in page if owned(h["_source"], query.tenant_id, query.agent_id)
        ]
        return AuditPage(events=events, next_cursor=next_page_cursor(binding, hits, query.limit))

"""`agent_memory.ports.RetentionStore` on OpenSearch: what retention reads and hard-deletes.

Its own module because retention is the store's maintenance, unlike its other ports: it reads
and deletes across every agent of a tenant (no routing: every shard), with a longer timeout
(`MAINTENANCE_TIMEOUT_S`), by ``_delete_by_query`` in parallel slices. The bodies are built in
`opensearch_retention_queries`. Audit events stay: retention
never deletes from the events index.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from agent_memory.adapters.opensearch.opensearch_base import OpenSearchBase
from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_cursors import (
    encode_cursor,
    retention_after,
    retention_binding,
)
from agent_memory.adapters.opensearch.opensearch_documents import doc_id, to_record, ts
from agent_memory.adapters.opensearch.opensearch_responses import hits_of
from agent_memory.adapters.opensearch.opensearch_retention_queries import (
    DELETE_PAGE,
    MAINTENANCE_TIMEOUT_S,
    candidates_body,
    delete_by_query_params,
    expired_page_body,
    older_than_query,
    purge_query,
)
from agent_memory.errors import ConfigurationError, DependencyError, ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.ports import AuditAction, AuditEvent, Page


class OpenSearchRetention(OpenSearchBase):
    """`agent_memory.ports.RetentionStore` (see the module docstring)."""

    def retention_candidates(
        self, tenant_id: str, grain: Grain, cutoff: datetime, cursor: str | None = None, limit: int = 1000
    ) -> Page:
        """The tenant's ``grain`` records ending before ``cutoff``, sorted by (span end, id),
        paged with ``search_after``; the cursor (the last hit's sort values) is bound to the
        tenant, grain and cutoff, and a limit below 1 is refused, as on SQLite. No routing:
        every agent of the tenant, all shards."""
        if limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = retention_binding(tenant_id, Grain(grain).value, ts(cutoff))
        body = candidates_body(tenant_id, grain, cutoff, limit)
        if cursor is not None:
            body["search_after"] = retention_after(cursor, binding)
        hits = hits_of(
            self._search(body, "finding records past retention", request_timeout=MAINTENANCE_TIMEOUT_S)
        )
        records = [to_record(h["_source"]) for h in hits if h["_source"].get("tenant_id") == tenant_id]
        next_cursor = encode_cursor({**binding, "s": hits[-1]["sort"]}) if len(hits) == limit else None
        return Page(records=records, next_cursor=next_cursor)

    def delete_records(self, tenant_id: str, agent_id: str, record_ids: Sequence[str]) -> int:
        """One bulk request of deletes by document id per `DELETE_PAGE` ids (routed to the
        agent's shard); a missing document is not an error (idempotent)."""
        ids = list(dict.fromkeys(record_ids))
        deleted = 0
        for i in range(0, len(ids), DELETE_PAGE):
            lines = [
                self._action("delete", self.alias, doc_id(tenant_id, agent_id, rid), tenant_id, agent_id)
                for rid in ids[i : i + DELETE_PAGE]
            ]
            response = self._bulk(lines, "deleting records past retention")
            for item in response.get("items", []):
                result = item.get("delete", {})
                if result.get("result") == "deleted":
                    deleted += 1
                elif result.get("status") == 404 and result.get("error"):  # the index, not the record
                    raise ConfigurationError(f"deleting records past retention failed: {result}")
                elif result.get("status") not in (200, 404):
                    raise DependencyError(f"deleting records past retention failed: {result}")
        return deleted

    def purge(self, tenant_id: str, now: datetime, forgotten_before: datetime) -> int:
        """Expired or long-forgotten records of the tenant, by ``_delete_by_query`` with slices,
        like `delete_older_than`. The expired live records are read
        first (ids only, in pages) and audited, so an audit event exists for every record the
        delete takes; a run that dies in between audits them again on its next run."""
        self._audit_expired(tenant_id, now)
        return self._delete_by_query(
            purge_query(tenant_id, now, forgotten_before),
            "purging expired and forgotten records",
            lambda _deleted, failures: (
                f"purge of {tenant_id} had {len(failures)} failures; it is safe to run again"
            ),
        )

    def delete_older_than(self, tenant_id: str, grain: Grain, cutoff: datetime) -> int:
        """``_delete_by_query`` over every agent of the tenant (no routing: all shards), in
        parallel slices, waiting for the result (`opensearch_retention_queries.delete_by_query_params`)."""
        return self._delete_by_query(
            older_than_query(tenant_id, grain, cutoff),
            "deleting old records",
            lambda deleted, failures: (
                f"retention deleted {deleted} records of {tenant_id}/{grain} but "
                f"{len(failures)} deletions failed (first: {failures[0]}); it is safe to run again"
            ),
        )

    def _delete_by_query(
        self, query: dict[str, Any], what: str, failed: Callable[[Any, list[Any]], str]
    ) -> int:
        """Delete what ``query`` matches (`delete_by_query_params`: slices, waiting for the
        result) and answer how many went; a response naming any failure raises a
        `DependencyError` worded by ``failed`` (the count deleted, the failures), since a
        partial delete is safe to run again. One place for the two bulk deletes of retention
        (the purge and the deletion by age), so both judge a response alike."""
        params = delete_by_query_params(bool(self._refresh))
        with os_errors(what, self.alias):
            response: dict[str, Any] = self._client.delete_by_query(
                index=self.alias, body={"query": query}, params=params
            )
        failures = response.get("failures") or []
        if failures:
            raise DependencyError(failed(response.get("deleted", 0), failures))
        return int(response.get("deleted", 0))

    def _audit_expired(self, tenant_id: str, now: datetime) -> None:
        after: list[Any] | None = None
        while True:
            body = expired_page_body(tenant_id, now, after)
            hits = hits_of(
                self._search(body, "finding expired records", request_timeout=MAINTENANCE_TIMEOUT_S)
            )
            if not hits:
                return
            self._write_audit(
                [
                    AuditEvent(
                        tenant_id=tenant_id,
                        agent_id=hit["_source"]["agent_id"],
                        record_id=hit["_source"]["id"],
                        action=AuditAction.RETENTION,
                        actor="retention",
                        at=now,
                        detail={"rule": "expired"},
                    )
                    for hit in hits
                ]
            )
            after = hits[-1]["sort"]

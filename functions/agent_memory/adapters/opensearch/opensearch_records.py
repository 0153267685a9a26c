"""`agent_memory.ports.RecordStore` on OpenSearch: records written, read by id, listed, forgotten.

Its own module so the record port reads (and changes) apart from retrieval and retention; the
bodies it sends are built in `opensearch_queries`, `opensearch_scripts` and `opensearch_documents`.

* Documents read by id are checked to belong to the caller (routing is placement, not security);
  an id may be an alias (a write merged into a record), kept in the events index.
* A forget or a stale mark is one scripted ``_update`` (check and change atomic on the shard).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
from opensearchpy import NotFoundError

from agent_memory.adapters.opensearch.opensearch_client import error_type, os_errors
from agent_memory.adapters.opensearch.opensearch_cursors import list_after, next_page_cursor
from agent_memory.adapters.opensearch.opensearch_documents import (
    alias_doc_id,
    bulk_lines,
    doc_id,
    found_source,
    owned,
    to_document,
    to_record,
    unit,
)
from agent_memory.adapters.opensearch.opensearch_events import alias_document
from agent_memory.adapters.opensearch.opensearch_index import VECTOR_FIELD
from agent_memory.adapters.opensearch.opensearch_queries import (
    NEWEST_FIRST,
    OLDEST_FIRST,
    conversation_filters,
    list_filters,
    records_page_body,
    span_filters,
    stats_body,
    user_summaries_filters,
)
from agent_memory.adapters.opensearch.opensearch_responses import (
    aggregation,
    hits_of,
    item_failures,
    raise_for_items,
)
from agent_memory.adapters.opensearch.opensearch_scripts import (
    ACCESS_SCRIPT,
    EXPERIENCE_SCRIPT,
    SOFT_DELETE_SCRIPT,
    STALE_SCRIPT,
    VALIDITY_SCRIPT,
    record_script_body,
    validity_params,
)
from agent_memory.adapters.opensearch.opensearch_spaces import OpenSearchSpaces, space_vector
from agent_memory.errors import ValidationFailedError
from agent_memory.experience.rules.confidence import Experience
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.ports import AuditEvent, ListQuery, Page, StoredRecord, StoreStats

logger = logging.getLogger(__name__)

#: Documents per ``_bulk`` request (a few hundred KB of vectors at 384 dimensions).
BULK_CHUNK = 200
#: Records read per page by `records_in_span` (a day of a busy agent in a few pages).
SPAN_PAGE = 1000


class OpenSearchRecords(OpenSearchSpaces):
    """`agent_memory.ports.RecordStore` (see the module docstring)."""

    # -- writes -------------------------------------------------------------------------------

    def put(self, items: Sequence[StoredRecord]) -> None:
        """Index each record under its deterministic id (insert or overwrite), via ``_bulk``."""
        docs = [(self._record_action("index", item.record), self._document(item)) for item in items]
        for start in range(0, len(docs), BULK_CHUNK):
            chunk = docs[start : start + BULK_CHUNK]
            self._bulk_checked(bulk_lines(chunk), "storing records")

    def put_if(
        self, item: StoredRecord, read: MemoryRecord | None, events: Sequence[AuditEvent] = ()
    ) -> bool:
        """Optimistic concurrency on the shard: ``create`` when the record was absent (a
        document indexed meanwhile answers 409); otherwise the document is read with its
        ``_seq_no`` and ``_primary_term``, compared, and indexed back only at that sequence
        number (a forget, stale mark or delete in between answers 409). Then the events."""
        record = item.record
        action = self._record_action("create" if read is None else "index", record)
        if read is not None:
            (found,) = self._mget(
                [self._doc_ref(self.alias, action["index"]["_id"], record.tenant_id, record.agent_id)],
                "reading a record before storing it",
                _source_excludes=VECTOR_FIELD,
            )
            source = found_source(found)
            if source is None or not owned(source, record.tenant_id, record.agent_id):
                return False
            stored = to_record(source)
            if (stored.deleted_at, stored.updated_at) != (read.deleted_at, read.updated_at):
                return False
            action["index"].update(if_seq_no=found["_seq_no"], if_primary_term=found["_primary_term"])
        response = self._bulk([action, self._document(item)], "storing a record")
        if any(status == 409 for status, _ in item_failures(response)):
            return False  # changed (or made) since it was read: nothing written
        raise_for_items(response, "storing a record")
        self._write_audit(events)
        return True

    def _record_action(self, op: str, record: MemoryRecord) -> dict[str, Any]:
        """The ``_bulk`` action line of ``op`` on ``record``'s document."""
        _id = doc_id(record.tenant_id, record.agent_id, record.id)
        return self._action(op, self.alias, _id, record.tenant_id, record.agent_id)

    def _document(self, item: StoredRecord) -> dict[str, Any]:
        """``item`` as its document (the tenant's own spaces made ready for its vectors)."""
        vector = None if item.vector is None else unit(item.vector, self.dimension, self.model_id)
        for extra in item.spaces:
            self.ensure_space(extra.space, int(np.asarray(extra.vector).shape[-1]))
        spaces = {extra.space: space_vector(extra.vector) for extra in item.spaces}
        return to_document(item.record, vector, spaces)

    def add_alias(self, tenant_id: str, agent_id: str, alias_id: str, record_id: str) -> None:
        """An alias document in the events index: ``alias_id`` → ``record_id``, for this agent."""
        action = self._action(
            "index", self.events_alias, alias_doc_id(tenant_id, agent_id, alias_id), tenant_id, agent_id
        )
        source = alias_document(tenant_id, agent_id, alias_id, record_id)
        self._bulk_checked([action, source], "storing a record alias")

    def soft_delete(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """Forget the live record with that id (or alias) as of ``event.at``, then audit it.

        A record that is already forgotten, expired at ``event.at``, unknown, or another
        agent's is not live: nothing changes, no audit event, False.
        """
        target = self._resolve(tenant_id, agent_id, record_id)
        if target is None:
            return False
        key = (tenant_id, agent_id, target)
        return self._update_live(key, SOFT_DELETE_SCRIPT, event, "forgetting a record")

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        """A scripted ``_update``, then the audit event.

        A summary already marked at this instant or later is left as it is (a retry); the audit
        event has a deterministic id, so a retried mark adds nothing to the trail.
        """
        key = (tenant_id, agent_id, record_id)
        return self._update_live(key, STALE_SCRIPT, event, "forgetting a record", noop_counts=True)

    def set_experience(
        self, tenant_id: str, agent_id: str, record_id: str, experience: Experience, event: AuditEvent
    ) -> bool:
        """Only ``experience`` and ``updated_at`` change (`_update_live`)."""
        fields = {"experience": experience.model_dump(mode="json")}
        key = (tenant_id, agent_id, record_id)
        return self._update_live(key, EXPERIENCE_SCRIPT, event, "recording feedback", fields)

    def set_validity(
        self, tenant_id: str, agent_id: str, record_id: str, validity: RecordValidity, event: AuditEvent
    ) -> bool:
        """Only the four supersession fields and ``updated_at`` change (`_update_live`); the
        content and vectors stay."""
        fields = validity_params(validity)
        key = (tenant_id, agent_id, record_id)
        return self._update_live(key, VALIDITY_SCRIPT, event, "recording a supersession", fields)

    def _update_live(
        self,
        key: tuple[str, str, str],
        script: str,
        event: AuditEvent,
        what: str,
        fields: dict[str, Any] | None = None,
        noop_counts: bool = False,
    ) -> bool:
        """Run ``script`` (with ``fields`` as params) on the live record ``key`` (tenant, agent, id)
        as of ``event.at``, then write the audit event: one scripted ``_update``, so the check and
        the change are atomic on the shard, and a script that does nothing to a forgotten or
        expired record lets a forget racing it win. False (and no event): no such live record
        (``noop_counts``: a ``noop`` answer, nothing to change, still counts as done)."""
        tenant_id, agent_id, record_id = key
        body = record_script_body(script, tenant_id, agent_id, event.at)
        body["script"]["params"].update(fields or {})
        params: dict[str, Any] = {**self._route(tenant_id, agent_id), "retry_on_conflict": 3}
        if self._refresh:
            params["refresh"] = self._refresh
        with os_errors(what, self.alias):
            try:
                response = self._client.update(
                    index=self.alias, id=doc_id(tenant_id, agent_id, record_id), body=body, params=params
                )
            except NotFoundError as exc:
                if error_type(exc) == "index_not_found_exception":
                    raise
                return False  # document_missing_exception: no such record
        done = {"updated", "noop"} if noop_counts else {"updated"}
        if response.get("result") not in done:
            return False
        self._write_audit([event])
        return True

    def record_access(self, tenant_id: str, agent_id: str, record_ids: Sequence[str], at: datetime) -> None:
        """Best effort, never raises: one ``_bulk`` of scripted updates.

        Each update re-indexes its document (and its vector) in a new segment: access counting
        costs write capacity proportional to search traffic, which is why it is one bulk request
        per search and why failures are only logged.
        """
        ids = list(dict.fromkeys(record_ids))
        if not ids:
            return
        script = record_script_body(ACCESS_SCRIPT, tenant_id, agent_id, at)
        lines: list[dict[str, Any]] = []
        for record_id in ids:
            action = self._action(
                "update", self.alias, doc_id(tenant_id, agent_id, record_id), tenant_id, agent_id
            )
            action["update"]["retry_on_conflict"] = 3
            lines += [action, script]
        try:
            with os_errors("counting record accesses", self.alias):
                response = self._client.bulk(
                    body=lines, params={"require_alias": "true", **self._bookkeeping_refresh()}
                )
            failures = [f for f in item_failures(response) if f[0] != 404]
            if failures:
                logger.warning("record_access: %d updates failed, first: %s", len(failures), failures[0])
        except Exception as exc:  # best effort by contract: a search must not fail on its bookkeeping
            logger.warning(
                "record_access skipped for %d records of %s/%s: %s", len(ids), tenant_id, agent_id, exc
            )

    # -- reads --------------------------------------------------------------------------------

    def _resolve(self, tenant_id: str, agent_id: str, record_id: str) -> str | None:
        """``record_id`` if the agent has such a record, else what it is an alias of, else None."""
        record, target = self._lookup(tenant_id, agent_id, record_id)
        if record is not None:
            return record.id
        return target

    def _lookup(
        self, tenant_id: str, agent_id: str, record_id: str
    ) -> tuple[MemoryRecord | None, str | None]:
        """One ``_mget``: the record with that id, and the alias document with that id."""
        docs = [
            self._doc_ref(self.alias, doc_id(tenant_id, agent_id, record_id), tenant_id, agent_id),
            self._doc_ref(
                self.events_alias, alias_doc_id(tenant_id, agent_id, record_id), tenant_id, agent_id
            ),
        ]
        found = self._mget(docs, "reading a record", _source_excludes=VECTOR_FIELD)
        record_doc, alias_doc = [*found, {}, {}][:2]
        source = found_source(record_doc)
        if source and owned(source, tenant_id, agent_id):
            return to_record(source), None
        link = found_source(alias_doc)
        if link and owned(link, tenant_id, agent_id) and isinstance(link.get("record_id"), str):
            return None, str(link["record_id"])
        return None, None

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord | None:
        record, target = self._lookup(tenant_id, agent_id, record_id)
        if record is not None or target is None:
            return record
        source = self._own_document(
            tenant_id,
            agent_id,
            doc_id(tenant_id, agent_id, target),
            "reading a record",
            _source_excludes=VECTOR_FIELD,
        )
        return to_record(source) if source is not None else None

    def _own_document(
        self, tenant_id: str, agent_id: str, _id: str, what: str, **params: Any
    ) -> dict[str, Any] | None:
        """The ``_source`` of the caller's record document ``_id`` (one ``_mget``), or None when
        it does not exist or is not the caller's (routing is placement, not security)."""
        (doc,) = self._mget([self._doc_ref(self.alias, _id, tenant_id, agent_id)], what, **params)
        source = found_source(doc)
        return source if source and owned(source, tenant_id, agent_id) else None

    def conversation_tail(
        self, tenant_id: str, agent_id: str, conversation_id: str, before: datetime, limit: int
    ) -> list[MemoryRecord]:
        """`RecordStore.conversation_tail`: the turns before ``before``, exact to the microsecond.

        "Live" is "not forgotten" (``deleted_at`` absent): the port passes no clock, and an
        expired turn still says what the new one answers. One routed search, newest first
        (``occurred_at`` desc, id desc), ``size = limit + 1``. OpenSearch compares dates to the
        millisecond, so the range takes the whole millisecond of ``before``, the records are
        compared to ``before`` here to the microsecond, and the extra hit tells whether the
        millisecond of the oldest kept record goes on past the page (then the next page is
        read, with ``search_after``): the result is exact to the microsecond, like SQLite's.
        Near-real-time: turns written less than a refresh interval (~1 s) ago are not seen.
        """
        if limit < 1:
            return []
        before = before if before.tzinfo is not None else before.replace(tzinfo=UTC)
        filters = conversation_filters(tenant_id, agent_id, conversation_id, before)
        route = self._route(tenant_id, agent_id)
        kept: list[tuple[MemoryRecord, int]] = []  # (record, its millisecond as OpenSearch sorts it)
        after: list[Any] | None = None
        while True:
            body = records_page_body(filters, limit + 1, NEWEST_FIRST, after)
            hits = hits_of(self._search(body, "reading the last turns of a conversation", **route))
            for h in hits:
                if not owned(h["_source"], tenant_id, agent_id):
                    continue
                turn = to_record(h["_source"])
                if turn.occurred_at < before:
                    kept.append((turn, int(h["sort"][0])))
            if len(hits) <= limit:
                break  # the conversation has nothing older
            if len(kept) >= limit and int(hits[-1]["sort"][0]) < kept[limit - 1][1]:
                break  # every record of the oldest kept millisecond is in
            after = hits[-1]["sort"]
        turns = sorted((turn for turn, _ in kept), key=lambda r: (r.occurred_at, r.id))
        return turns[-limit:]

    def records_in_span(
        self, tenant_id: str, agent_id: str, grain: Grain, start: datetime, end: datetime, now: datetime
    ) -> list[MemoryRecord]:
        """Every live ``grain`` record overlapping ``[start, end)``, oldest first, read in pages.

        Routed to the agent's shard, sorted by (``occurred_at``, ``id``) and paged with
        ``search_after`` on those sort values: no point-in-time context to open and close, and
        no page repeats or skips a record that existed when the read began. The sort compares
        milliseconds, so the result is sorted once more here to the microsecond.
        """
        filters = span_filters(tenant_id, agent_id, grain, start, end, now)
        return self._read_all(tenant_id, agent_id, filters, "reading the records of a period")

    def summaries_of_user(
        self, tenant_id: str, agent_id: str, user_id: str, now: datetime
    ) -> list[MemoryRecord]:
        """Live summaries whose ``user_ids`` name ``user_id``, oldest first, read in pages."""
        filters = user_summaries_filters(tenant_id, agent_id, user_id, now)
        return self._read_all(tenant_id, agent_id, filters, "finding the summaries of an end user")

    def _read_all(
        self, tenant_id: str, agent_id: str, filters: list[dict[str, Any]], what: str
    ) -> list[MemoryRecord]:
        """Every record of the agent matching ``filters``, in pages of `SPAN_PAGE`."""
        route = self._route(tenant_id, agent_id)
        records: list[MemoryRecord] = []
        after: list[Any] | None = None
        while True:
            body = records_page_body(filters, SPAN_PAGE, OLDEST_FIRST, after)
            hits = hits_of(self._search(body, what, **route))
            records += [to_record(h["_source"]) for h in hits if owned(h["_source"], tenant_id, agent_id)]
            if len(hits) < SPAN_PAGE:
                return sorted(records, key=lambda r: (r.occurred_at, r.id))
            after = hits[-1]["sort"]

    def stats(self, tenant_id: str, agent_id: str, now: datetime) -> StoreStats:
        """Live records per grain and the oldest and newest record: one routed search of
        `opensearch_queries.stats_body`'s aggregations (the oldest and newest exact to the µs)."""
        response = self._search(
            stats_body(tenant_id, agent_id, now), "counting records", **self._route(tenant_id, agent_id)
        )
        buckets = aggregation(response, "grains").get("buckets", [])
        if not buckets:
            return StoreStats()

        def first(name: str) -> datetime | None:
            hits = aggregation(response, name).get("hits", {}).get("hits", [])
            value = hits[0].get("_source", {}).get("occurred_at") if hits else None
            return datetime.fromisoformat(value) if isinstance(value, str) else None

        return StoreStats(
            records={str(b["key"]): int(b["doc_count"]) for b in buckets},
            oldest=first("oldest"),
            newest=first("newest"),
        )

    def list(self, query: ListQuery) -> Page:
        """Live records, newest ``occurred_at`` first (ties: id descending), with ``search_after``.

        The cursor is urlsafe base64 of JSON: the sort values of the page's last record and the
        tenant, agent and grain it was issued for; any other cursor is a `ValidationFailedError`.
        """
        if query.limit < 1:
            raise ValidationFailedError("limit must be at least 1")
        binding = {"t": query.tenant_id, "a": query.agent_id, "g": query.grain.value if query.grain else None}
        filters = list_filters(query.tenant_id, query.agent_id, query.now, query.grain)
        after = None if query.cursor is None else list_after(query.cursor, binding)
        body = records_page_body(filters, query.limit + 1, NEWEST_FIRST, after)
        hits = hits_of(self._search(body, "listing records", **self._route(query.tenant_id, query.agent_id)))
        page = hits[: query.limit]
        next_cursor = next_page_cursor(binding, hits, query.limit)
        return Page(records=[to_record(h["_source"]) for h in page], next_cursor=next_cursor)

"""What every port of the OpenSearch store shares: the client, the aliases, the vector space,
the write parameters, and the I/O helpers through which every request goes.

The store is one class per port (`opensearch_store`); they meet here, so that a request is sent,
routed and checked the same way whichever port sends it, and so that the state they share is
made (and checked against the index) once.

* **Routing and isolation.** Every document request is routed by ``tenant:agent`` (the mapping
  requires it), so an agent's memory lives on one shard and its queries touch one shard.
* **Writes** name the alias (``require_alias``: a write never auto-creates an unmapped index)
  and carry the configured ``refresh``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from opensearchpy import OpenSearch

from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.adapters.opensearch.opensearch_documents import audit_doc_id, routing_key
from agent_memory.adapters.opensearch.opensearch_events import AppendOrder, audit_document
from agent_memory.adapters.opensearch.opensearch_index import check_index, events_alias_name
from agent_memory.adapters.opensearch.opensearch_responses import raise_for_items, raise_for_response
from agent_memory.errors import ConfigurationError
from agent_memory.ports import AuditEvent

#: One append order for every store of the process (`AppendOrder`).
_APPEND_ORDER = AppendOrder()


class OpenSearchBase:
    """The state and the request plumbing of `opensearch_store.OpenSearchStore`.

    ``refresh``: True (the default: every write request refreshes the shard it wrote, so it
    returns once a search can see it: the writer clears a pending mark only when the memory is
    searchable, as on SQLite, its near-duplicate check sees the write before, and a forget returns
    only once the memory is gone from search; a refresh of one shard costs milliseconds), or
    ``"wait_for"`` (the write waits for the next scheduled refresh: up to 1 s per request, which
    made a writer storing one memory at a time store one a second: docs/opensearch.md), or False
    (searchable within the refresh interval; reads by id are real-time regardless).
    ``refresh_counters``: the counters a search writes (access counts, document hits, search
    days) are never waited for, and searchable within the refresh interval; True refreshes after
    them too (the contract tests, which read a count right after the search that made it).
    ``check``: verify the index ``_meta`` (model, dimension, schema) once, now.
    """

    def __init__(
        self,
        client: OpenSearch,
        alias: str,
        dimension: int,
        model_id: str,
        *,
        refresh: bool | str = True,
        refresh_counters: bool = False,
        check: bool = True,
    ) -> None:
        if refresh not in (False, True, "wait_for", "true", "false"):
            raise ConfigurationError(f"refresh must be False, True or 'wait_for', not {refresh!r}")
        self._client = client
        self.alias = alias
        self.events_alias = events_alias_name(alias)
        self.dimension = dimension
        self.model_id = model_id
        self._refresh_counters = refresh_counters
        self._refresh: str | None = None
        if refresh not in (False, "false"):
            self._refresh = "wait_for" if refresh == "wait_for" else "true"
        if check:
            check_index(client, alias, dimension, model_id)

    # -- request plumbing ---------------------------------------------------------------------

    def _route(self, tenant_id: str, agent_id: str) -> dict[str, str]:
        return {"routing": routing_key(tenant_id, agent_id)}

    def _write_params(self) -> dict[str, str]:
        params = {"require_alias": "true"}  # never let a write auto-create an unmapped index
        if self._refresh:
            params["refresh"] = self._refresh
        return params

    def _bookkeeping_refresh(self) -> dict[str, str]:
        """The refresh of a counter's write: none (a search must not wait for its own bookkeeping),
        unless the store was built with ``refresh_counters``."""
        return {"refresh": "true"} if self._refresh_counters else {}

    def _bulk(self, lines: list[dict[str, Any]], what: str) -> dict[str, Any]:
        with os_errors(what, self.alias):
            response: dict[str, Any] = self._client.bulk(body=lines, params=self._write_params())
        return response

    def _bulk_checked(self, lines: list[dict[str, Any]], what: str) -> dict[str, Any]:
        """`_bulk`, raising for the first failed item (`opensearch_responses.raise_for_items`)."""
        response = self._bulk(lines, what)
        raise_for_items(response, what)
        return response

    def _action(self, op: str, index: str, _id: str, tenant_id: str, agent_id: str) -> dict[str, Any]:
        return {op: {"_index": index, "_id": _id, **self._route(tenant_id, agent_id)}}

    def _msearch(
        self, searches: list[tuple[dict[str, Any], dict[str, Any]]], what: str
    ) -> list[dict[str, Any]]:
        lines: list[dict[str, Any]] = []
        for header, body in searches:
            lines += [header, body]
        with os_errors(what, self.alias):
            response = self._client.msearch(body=lines)
        results: list[dict[str, Any]] = response.get("responses", [])
        for result in results:
            raise_for_response(result, what)
        return results

    def _search(self, body: dict[str, Any], what: str, **params: Any) -> dict[str, Any]:
        with os_errors(what, self.alias):
            response: dict[str, Any] = self._client.search(index=self.alias, body=body, params=params)
        return response

    def _search_events(
        self, body: dict[str, Any], what: str, tenant_id: str, agent_id: str
    ) -> dict[str, Any]:
        """A search of the agent's documents in the events index, routed to the agent's shard."""
        with os_errors(what, self.events_alias):
            response: dict[str, Any] = self._client.search(
                index=self.events_alias, body=body, params=self._route(tenant_id, agent_id)
            )
        return response

    def _mget(self, docs: list[dict[str, Any]], what: str, **params: Any) -> list[dict[str, Any]]:
        with os_errors(what, self.alias):
            response = self._client.mget(body={"docs": docs}, params=params)
        found: list[dict[str, Any]] = response.get("docs", [])
        for doc in found:
            raise_for_response(doc, what)
        return found

    def _doc_ref(self, index: str, _id: str, tenant_id: str, agent_id: str) -> dict[str, Any]:
        return {"_index": index, "_id": _id, **self._route(tenant_id, agent_id)}

    def _write_audit(self, events: Sequence[AuditEvent]) -> None:
        """Index audit events in the events index: the audit port appends them, and a forget, a
        stale mark and retention's purge each leave theirs.

        ``create``, not ``index``: an event written again (a retried forget; its id is
        deterministic) keeps the place in the order it was first given, as SQLite keeps its
        first row; the conflict that says so is not a failure."""
        lines: list[dict[str, Any]] = []
        for event, seq in zip(events, _APPEND_ORDER.take(len(events)), strict=True):
            lines.append(
                self._action(
                    "create", self.events_alias, audit_doc_id(event), event.tenant_id, event.agent_id
                )
            )
            lines.append(audit_document(event, seq))
        if lines:
            raise_for_items(self._bulk(lines, "writing audit events"), "writing audit events", allowed={409})

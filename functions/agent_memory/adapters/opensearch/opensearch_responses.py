"""What the store reads out of OpenSearch's answers, and the errors hidden inside them.

``_bulk``, ``_msearch`` and ``_mget`` answer 200 even when some of their items failed: each item
carries its own status. These checks turn a failed item into the same typed errors
`opensearch_client.os_errors` raises for a failed request (throttled or failing: retry later,
`DependencyError`; anything else: `ConfigurationError`), so no partial failure passes silently.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from agent_memory.errors import ConfigurationError, DependencyError


def hits_of(response: dict[str, Any]) -> list[dict[str, Any]]:
    hits: list[dict[str, Any]] = response.get("hits", {}).get("hits", [])
    return hits


def aggregation(response: dict[str, Any], name: str) -> dict[str, Any]:
    agg: dict[str, Any] = response.get("aggregations", {}).get(name, {})
    return agg


def item_failures(response: dict[str, Any]) -> list[tuple[int, str]]:
    """(status, reason) of every failed ``_bulk`` item."""
    failures: list[tuple[int, str]] = []
    if not response.get("errors"):
        return failures
    for item in response.get("items", []):
        for result in item.values():
            error = result.get("error")
            if error:
                reason = (error.get("reason") or error.get("type")) if isinstance(error, dict) else str(error)
                failures.append((int(result.get("status", 0)), str(reason)))
    return failures


def raise_for_items(response: dict[str, Any], what: str, allowed: Collection[int] = ()) -> None:
    """Raise for the first failed ``_bulk`` item whose status is not in ``allowed``."""
    failures = [f for f in item_failures(response) if f[0] not in allowed]
    if not failures:
        return
    status, reason = failures[0]
    total = len(response.get("items", []))
    message = f"{len(failures)} of {total} documents failed while {what}: {status} {reason}"
    if any(s == 429 or s >= 500 for s, _ in failures):
        raise DependencyError(message)
    raise ConfigurationError(message)


def raise_for_response(response: dict[str, Any], what: str) -> None:
    """An ``_msearch``/``_mget`` entry that carries an error instead of a result."""
    error = response.get("error")
    if not error:
        return
    status = int(response.get("status", 0))
    kind = error.get("type", "") if isinstance(error, dict) else str(error)
    reason = error.get("reason", kind) if isinstance(error, dict) else str(error)
    if status == 429 or status >= 500:
        raise DependencyError(f"OpenSearch failed while {what}: {status} {reason}")
    if kind == "index_not_found_exception":
        raise ConfigurationError(
            f"OpenSearch index missing while {what}: create it with `agent-memory index bootstrap`"
        )
    raise ConfigurationError(f"OpenSearch rejected a request while {what}: {status} {kind} {reason}")


def deleted_count(response: dict[str, Any]) -> int:
    """How many delete items of a ``_bulk`` answer deleted a document."""
    return sum(1 for item in response.get("items", []) if item.get("delete", {}).get("result") == "deleted")

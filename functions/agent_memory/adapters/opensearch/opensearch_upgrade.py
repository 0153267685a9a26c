"""Moving the records index of an older schema version to this one, while writes go on.

Its own module because it is the one long-running, multi-step operation on the cluster (a
``_reindex`` task polled to its end, a write block, a catch-up copy, an atomic alias move) and
the one whose failure must leave the service as it was; `opensearch_bootstrap.bootstrap` runs it
when `opensearch_index.check_index` finds an older schema.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from opensearchpy import OpenSearch, RequestError

from agent_memory.adapters.opensearch.opensearch_client import error_type, os_errors
from agent_memory.adapters.opensearch.opensearch_index import (
    Engine,
    check_records_mapping,
    meta_of,
    records_index_body,
    records_index_name,
)
from agent_memory.errors import ConfigurationError, DependencyError

#: Seconds `bootstrap` waits for each copy of an older index: the stack's bootstrap function
#: runs for 5 minutes. A copy still running then goes on in the cluster; run bootstrap again.
UPGRADE_WAIT_S = 240.0
#: Seconds between two looks at a running copy.
UPGRADE_POLL_S = 2.0
#: A change stamped up to this long before the new index was created may have been missed by
#: the first copy (the writers' clocks are not the cluster's), so the catch-up copies it again.
CATCH_UP_MARGIN = timedelta(minutes=5)
#: The times a write or an update of a record stamps: a record changed since the first copy
#: began has one of them at or after that instant.
_CHANGE_FIELDS = ("created_at", "updated_at", "deleted_at", "last_accessed_at")


def upgrade_records_index(
    client: OpenSearch,
    alias: str,
    old: str,
    dimension: int,
    model_id: str,
    *,
    engine: Engine,
    wait_s: float,
    sleep: Callable[[float], None],
) -> None:
    """Copy the records index ``old`` into this schema's index and move ``alias`` onto it.

    Writes go on through the alias while the bulk of the data is copied, so the copy runs twice:

    1. create ``{alias}-v{SCHEMA_VERSION}`` (no alias yet) and check its ``_meta``;
    2. ``_reindex`` everything with ``op_type: create``, ``conflicts: proceed``: a re-run (after
       a copy that outlived `wait_s`) skips what is already there instead of copying it again;
    3. block writes on ``old`` (writers get an error and retry: their queue redelivers);
    4. ``_reindex`` again, overwriting, every record stamped (created, updated, forgotten or
       accessed) since the new index was created, less `CATCH_UP_MARGIN`: what changed while
       step 2 ran;
    5. move the alias in one ``_aliases`` request (remove from ``old``, add to the new index as
       write index): readers and writers switch at once, never see neither or both.

    ``old`` is kept, write-blocked, for the operator to delete once satisfied. A failure in steps
    3-5 lifts the block again before it raises, so the deployment that failed leaves the service
    as it was.

    Its options have no defaults: `opensearch_bootstrap.bootstrap`, the one caller, owns them.
    The copy is made on ``engine`` whatever ``old`` was built on: the vectors come from
    ``_source``, so an index made on faiss by an earlier version moves onto lucene here.
    """
    new = records_index_name(alias)
    with os_errors(f"creating {new} to upgrade {old}"):
        try:
            client.indices.create(index=new, body=records_index_body(dimension, model_id, engine))
        except RequestError as exc:
            # Already there: an earlier run made it and stopped (its mapping is checked below).
            if error_type(exc) != "resource_already_exists_exception":
                raise
        mapping: dict[str, Any] = client.indices.get_mapping(index=new)
        settings: dict[str, Any] = client.indices.get_settings(index=new, name="index.creation_date")
    new_mapping = mapping.get(new, {}).get("mappings", {})
    if meta_of({"mappings": new_mapping}).get("kind") != "records":
        raise ConfigurationError(f"{new} exists but was not made by `agent-memory index bootstrap`")
    check_records_mapping(new, new_mapping, alias, dimension, model_id)
    since = _created_at(settings, new) - CATCH_UP_MARGIN

    _reindex(
        client,
        {"conflicts": "proceed", "source": {"index": old}, "dest": {"index": new, "op_type": "create"}},
        f"copying {old} into {new}",
        wait_s,
        sleep,
    )
    with os_errors(f"blocking writes on {old} to switch to {new}"):
        client.indices.add_block(index=old, block="write")
    try:
        changed = {
            "bool": {
                "should": [{"range": {field: {"gte": _stamp(since)}}} for field in _CHANGE_FIELDS],
                "minimum_should_match": 1,
            }
        }
        _reindex(
            client,
            {"source": {"index": old, "query": changed}, "dest": {"index": new}},
            f"copying the records of {old} changed since the copy began",
            wait_s,
            sleep,
        )
        with os_errors(f"moving the alias {alias} from {old} to {new}"):
            client.indices.update_aliases(
                body={
                    "actions": [
                        {"remove": {"index": old, "alias": alias}},
                        {"add": {"index": new, "alias": alias, "is_write_index": True}},
                    ]
                }
            )
    except BaseException as exc:
        try:
            with os_errors(f"lifting the write block on {old}"):
                client.indices.put_settings(index=old, body={"index": {"blocks": {"write": False}}})
        except Exception as unblock:
            raise DependencyError(
                f"the upgrade of {old} failed ({exc}) and its write block could not be lifted "
                f"({unblock}): writes to {alias} fail until `PUT {old}/_settings "
                '{"index.blocks.write": false}`'
            ) from exc
        raise


def _reindex(
    client: OpenSearch, body: dict[str, Any], what: str, wait_s: float, sleep: Callable[[float], None]
) -> dict[str, Any]:
    """One ``_reindex`` as a task (``wait_for_completion=false``), polled until done or `wait_s`.

    A task, not a request held open: the copy of a large index outlives any HTTP timeout, and
    goes on in the cluster when this process gives up waiting.
    """
    with os_errors(what):
        started: dict[str, Any] = client.reindex(
            body=body, params={"wait_for_completion": "false", "slices": "auto", "refresh": "true"}
        )
    task = started.get("task")
    if not isinstance(task, str):
        raise DependencyError(f"OpenSearch started no task while {what}: {started}")
    deadline = time.monotonic() + wait_s
    while True:
        with os_errors(what):
            state: dict[str, Any] = client.tasks.get(task_id=task)
        if state.get("completed"):
            break
        if time.monotonic() >= deadline:
            raise DependencyError(
                f"{what} is still running after {wait_s:.0f} s as task {task}, and goes on in the cluster: "
                f"run `agent-memory index bootstrap` again once `GET _tasks/{task}` says completed"
            )
        sleep(UPGRADE_POLL_S)
    response: dict[str, Any] = state.get("response") or {}
    failures = response.get("failures") or []
    if state.get("error") or failures:
        raise DependencyError(
            f"{what} failed: {state.get('error') or failures[0]}; the alias did not move, it is safe to "
            "run the bootstrap again"
        )
    return response


def _created_at(settings: dict[str, Any], index: str) -> datetime:
    """``index.creation_date`` (epoch milliseconds, the cluster's clock) of ``index``."""
    found = settings.get(index, {}).get("settings", {})
    raw = found.get("index", {}).get("creation_date", found.get("index.creation_date"))
    try:
        return datetime.fromtimestamp(int(raw) / 1000, UTC)
    except (TypeError, ValueError) as exc:
        raise DependencyError(f"OpenSearch did not say when {index} was created: {settings}") from exc


def _stamp(value: datetime) -> str:
    """The store's time format (fixed-width UTC with microseconds), for a range bound."""
    return value.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")

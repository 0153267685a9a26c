"""Creating the indexes behind the memory store, idempotently, and reporting what is deployed.

Its own module because it is the one write to the cluster's configuration that every deployment
makes (the CDK custom resource, `handlers/bootstrap.py`) and an operator runs by hand
(`agent-memory index bootstrap`, `index status`); the running functions never create an index.
What the indexes look like is `opensearch_index`; moving an older records index to this schema,
`opensearch_upgrade`.

The knowledge index (``{alias}-knowledge``, `opensearch_knowledge`) is made by every `bootstrap`,
after the records and events indexes (or alone by `bootstrap_knowledge`). An existing deployment
gets it by running the bootstrap again: a missing index is created like on a fresh cluster,
nothing is copied.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from opensearchpy import OpenSearch, RequestError

from agent_memory.adapters.opensearch.opensearch_client import error_type, os_errors
from agent_memory.adapters.opensearch.opensearch_index import (
    ENGINE,
    Engine,
    OlderSchemaError,
    check_index,
    check_knowledge_mapping,
    events_alias_name,
    events_index_body,
    events_index_name,
    knowledge_alias_name,
    knowledge_index_body,
    knowledge_index_name,
    meta_of,
    records_index_body,
    records_index_name,
)
from agent_memory.adapters.opensearch.opensearch_upgrade import UPGRADE_WAIT_S, upgrade_records_index
from agent_memory.errors import ConfigurationError

_ALIAS = re.compile(r"^[a-z0-9][a-z0-9._-]{0,200}$")


@dataclass(frozen=True, slots=True)
class BootstrapResult:
    alias: str
    index: str
    created: bool
    events_alias: str
    events_index: str
    events_created: bool
    #: The engine of the indexes this bootstrap makes (lucene); an index it found keeps its own.
    engine: str
    #: The knowledge alias and index, made (or checked) by every bootstrap.
    knowledge_alias: str
    knowledge_index: str
    knowledge_created: bool
    #: The index of an older schema that was copied into ``index`` (the alias moved off it).
    upgraded_from: str | None = None


@dataclass(frozen=True, slots=True)
class KnowledgeBootstrap:
    alias: str
    index: str
    created: bool


def _check_alias_name(alias: str) -> None:
    if not _ALIAS.match(alias) or alias.endswith(("-events", "-knowledge")):
        raise ConfigurationError(
            f"invalid OpenSearch index alias {alias!r}: lowercase letters, digits, '.', '_' and '-', "
            "starting with a letter or digit, and not ending in '-events' or '-knowledge'"
        )


def _ensure(client: OpenSearch, alias: str, index: str, body: dict[str, Any]) -> bool:
    """Create ``index`` with ``alias`` over it unless the alias exists. True if created here.

    The index and its alias are created in one request, so there is no window in which the
    index exists without its alias. A concurrent bootstrap that loses the race sees
    ``resource_already_exists_exception`` and carries on.
    """
    alias_body: dict[str, Any] = {"is_write_index": True}
    with os_errors(f"bootstrapping {alias}"):
        if client.indices.exists_alias(name=alias):
            return False
        if client.indices.exists(index=index):
            client.indices.put_alias(index=index, name=alias, body=alias_body)
            return False
        try:
            client.indices.create(index=index, body={**body, "aliases": {alias: alias_body}})
        except RequestError as exc:
            if error_type(exc) != "resource_already_exists_exception":
                raise
            if not client.indices.exists_alias(name=alias):
                client.indices.put_alias(index=index, name=alias, body=alias_body)
            return False
    return True


def _add_event_fields(client: OpenSearch, events_alias: str) -> None:
    """Put this version's events mapping on an events index made by an earlier one: new fields
    (``seq``) are added in place and its ``_meta`` moves to this version. Idempotent; a field of
    another type is refused by the cluster and raised as it says."""
    mappings = events_index_body()["mappings"]
    body = {"_meta": mappings["_meta"], "properties": mappings["properties"]}
    with os_errors(f"adding this version's fields to {events_alias}", events_alias):
        client.indices.put_mapping(index=events_alias, body=body)


def bootstrap(
    client: OpenSearch,
    alias: str,
    dimension: int,
    model_id: str,
    *,
    engine: Engine = ENGINE,
    wait_s: float = UPGRADE_WAIT_S,
    sleep: Callable[[float], None] = time.sleep,
) -> BootstrapResult:
    """Create the records, events and knowledge indexes with their aliases, then check them. Idempotent.

    Safe to run on every deployment (CDK custom resource) and by hand (CLI): an existing index is
    left as it is and only checked — a dimension or model mismatch raises `ConfigurationError`.
    An existing records index of an older schema version is upgraded (`upgrade_records_index`):
    copied into the index of this version, on ``engine`` (lucene) whatever engine the older one
    had, and the alias moved to it: an index made on faiss by an earlier version is served as it
    is until then (every request is the same on both engines), and its upgrade moves it onto the
    engine the suite tests. An events index of an older version takes the new fields in place
    (`_add_event_fields`). Then the knowledge index (`bootstrap_knowledge`), once the records
    index is known to be right, on ``engine``: always, so a deployment made before it existed
    gets it from its next bootstrap.
    """
    _check_alias_name(alias)
    index = records_index_name(alias)
    created = _ensure(client, alias, index, records_index_body(dimension, model_id, engine))
    events_alias, events_index = events_alias_name(alias), events_index_name(alias)
    events_created = _ensure(client, events_alias, events_index, events_index_body())
    upgraded_from: str | None = None
    for _ in range(2):  # at most one upgrade of each index, then the check must pass
        try:
            check_index(client, alias, dimension, model_id)
            break
        except OlderSchemaError as older:
            if older.kind == "events":
                _add_event_fields(client, events_alias)
                continue
            upgrade_records_index(
                client,
                alias,
                older.index,
                dimension,
                model_id,
                engine=engine,
                wait_s=wait_s,
                sleep=sleep,
            )
            created, upgraded_from = True, older.index
    else:
        check_index(client, alias, dimension, model_id)
    made = bootstrap_knowledge(client, alias, dimension, model_id, engine=engine)
    return BootstrapResult(
        alias,
        index,
        created,
        events_alias,
        events_index,
        events_created,
        engine,
        made.alias,
        made.index,
        made.created,
        upgraded_from=upgraded_from,
    )


def bootstrap_knowledge(
    client: OpenSearch,
    alias: str,
    dimension: int,
    model_id: str,
    *,
    engine: Engine = ENGINE,
) -> KnowledgeBootstrap:
    """Create the knowledge index (``{alias}-knowledge-v1``) with its alias unless the alias
    exists, then check its ``_meta`` (one mapping read). Idempotent, like `bootstrap`.

    Not upgraded: there is one knowledge schema version so far; an index of another model,
    dimension or version is refused with what to do.
    """
    _check_alias_name(alias)
    name, index = knowledge_alias_name(alias), knowledge_index_name(alias)
    created = _ensure(client, name, index, knowledge_index_body(dimension, model_id, engine))
    with os_errors(f"checking the index behind {name}", name):
        mappings: dict[str, Any] = client.indices.get_mapping(index=name)
    if not mappings:
        raise ConfigurationError(f"the OpenSearch alias {name!r} points at no index")
    for found, mapping in sorted(mappings.items()):
        check_knowledge_mapping(found, mapping.get("mappings", {}), alias, dimension, model_id)
    return KnowledgeBootstrap(name, index, created)


def status(client: OpenSearch, alias: str) -> dict[str, Any]:
    """What is deployed: the indexes behind the three aliases, their document counts and ``_meta``."""
    names = {"records": alias, "events": events_alias_name(alias), "knowledge": knowledge_alias_name(alias)}
    out: dict[str, Any] = {"alias": alias}
    for key, name in names.items():
        with os_errors(f"reading the status of {name}", name):
            if not client.indices.exists_alias(name=name):
                out[key] = {"exists": False}
                continue
            indices = sorted(client.indices.get_alias(name=name))
            mapping = client.indices.get_mapping(index=name)
            count = client.count(index=name)["count"]
        out[key] = {
            "exists": True,
            "indices": indices,
            "documents": count,
            "meta": meta_of(mapping[indices[0]]) if indices and indices[0] in mapping else {},
        }
    return out

"""Fine-grained access control: the functions' IAM roles mapped to an OpenSearch role.

Its own module because it is security configuration, not index design: on a managed domain with
fine-grained access control the security plugin refuses every principal not mapped to a role,
and the index bootstrap (`handlers/bootstrap.py`) maps the functions' roles to one that holds the
store's actions and nothing more.
"""

from __future__ import annotations

import re
from typing import Any

from opensearchpy import OpenSearch

from agent_memory.adapters.opensearch.opensearch_client import os_errors
from agent_memory.errors import ConfigurationError

#: Cluster-level actions of the store's multi-index requests (``_bulk``, ``_msearch``, ``_mget``),
#: which the security plugin authorises at cluster level before each item is checked per index.
#: ``cluster_composite_ops`` already holds them; they are named as well so the role keeps working
#: if that action group is ever narrowed.
DATA_CLUSTER_PERMISSIONS: tuple[str, ...] = (
    "cluster_composite_ops",
    "indices:data/write/bulk",
    "indices:data/read/msearch",
    "indices:data/read/mget",
)
#: Index-level actions on the aliases and their versioned indexes: ``crud`` (search with its
#: composite and terms aggregations, get, index, ``_update``, delete, ``_delete_by_query``), the
#: mapping read of the start-up check (`check_index`), and alias reads. No create, delete or
#: mapping change: that stays with the bootstrap, the master user.
DATA_INDEX_ACTIONS: tuple[str, ...] = (
    "crud",
    "indices:data/read/*",
    "indices:data/write/*",
    "indices:admin/mappings/get",
    "indices:admin/aliases/get",
)

_ROLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")


def data_index_patterns(alias: str) -> list[str]:
    """The indexes the data role covers: the records alias and every sibling named after it —
    the events and knowledge aliases (``{alias}-events``, ``{alias}-knowledge``) and every
    versioned index behind the three (``{alias}-v5``, ``{alias}-events-v1``,
    ``{alias}-knowledge-v1``). One wildcard rather than a list of names, so a new sibling index
    or schema version needs no change of the role (the index bootstrap handler passes the same
    two patterns)."""
    return [alias, f"{alias}-*"]


def data_role_name(alias: str) -> str:
    """The OpenSearch role of the functions that read and write memory behind ``alias``."""
    return f"{alias}-data"


def data_role_body(index_patterns: list[str]) -> dict[str, Any]:
    """The ``PUT _plugins/_security/api/roles/<name>`` body: the store's actions, nothing more."""
    return {
        "description": "agent-memory functions: read and write memory (mapped by the index bootstrap)",
        "cluster_permissions": list(DATA_CLUSTER_PERMISSIONS),
        "index_permissions": [
            {"index_patterns": list(index_patterns), "allowed_actions": list(DATA_INDEX_ACTIONS)}
        ],
    }


def map_backend_roles(
    client: OpenSearch,
    role_name: str,
    backend_roles: list[str],
    index_patterns: list[str],
) -> None:
    """Give IAM roles the store's permissions under fine-grained access control. Idempotent.

    On a managed domain with FGAC, IAM only lets a request reach the cluster; the security
    plugin then refuses (403) every principal that is not mapped to an OpenSearch role — every
    function but the bootstrap, whose role is the master user. Two PUTs, each replacing the
    whole document, so a re-run converges on exactly ``backend_roles``: a function removed from
    the stack loses its access, and an empty list unmaps everyone.
    """
    if not _ROLE_NAME.match(role_name):
        raise ConfigurationError(f"invalid OpenSearch security role name {role_name!r}")
    if not index_patterns or any(not p or p.strip("*") == "" for p in index_patterns):
        raise ConfigurationError(f"refusing to grant the data role on index patterns {index_patterns!r}")
    roles = sorted(set(backend_roles))
    with os_errors(f"mapping IAM roles to the OpenSearch role {role_name}"):
        client.security.create_role(role=role_name, body=data_role_body(index_patterns))
        client.security.create_role_mapping(
            role=role_name, body={"backend_roles": roles, "hosts": [], "users": []}
        )

"""`map_backend_roles`: the security REST API requests that let FGAC admit the functions' roles.

Same transport double as the adapter's request tests: the real client down to the socket,
responses shaped like the security plugin's documented ones.
"""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import Cluster

from agent_memory.adapters.opensearch.opensearch_roles import (
    DATA_CLUSTER_PERMISSIONS,
    DATA_INDEX_ACTIONS,
    data_role_name,
    map_backend_roles,
)
from agent_memory.errors import ConfigurationError, DependencyError

READER = "arn:aws:iam::123456789012:role/agent-memory-ApiFunctionRole-AAAA"
WRITER = "arn:aws:iam::123456789012:role/agent-memory-WriterFunctionRole-BBBB"
PATTERNS = ["mem", "mem-*"]


def created(role: str) -> dict[str, str]:
    return {"status": "CREATED", "message": f"'{role}' created."}


def test_puts_the_role_then_maps_the_iam_roles_to_it(cluster: Cluster, client: OpenSearch) -> None:
    # GIVEN a domain that accepts both security requests
    cluster.reply(created("mem-data"), status=201).reply(created("mem-data"), status=201)

    # WHEN two function roles are mapped (one listed twice)
    map_backend_roles(client, "mem-data", [WRITER, READER, WRITER], PATTERNS)

    # THEN the role is put first, with the store's cluster and index permissions on the aliases
    cluster.done()
    role, mapping = cluster.sent
    assert (role.method, role.path) == ("PUT", "/_plugins/_security/api/roles/mem-data")
    assert role.body["cluster_permissions"] == list(DATA_CLUSTER_PERMISSIONS)
    assert {"cluster_composite_ops", "indices:data/read/msearch", "indices:data/read/mget"} <= set(
        role.body["cluster_permissions"]
    )
    [index_permission] = role.body["index_permissions"]
    assert index_permission["index_patterns"] == PATTERNS
    assert index_permission["allowed_actions"] == list(DATA_INDEX_ACTIONS)
    assert {"crud", "indices:admin/mappings/get"} <= set(index_permission["allowed_actions"])
    # AND no index-management action is granted (creating and changing indexes is the master's)
    assert not any(a in ("indices_all", "indices:admin/create", "*") for a in DATA_INDEX_ACTIONS)
    # AND the mapping replaces the whole document: exactly these ARNs, once each, no users or hosts
    assert (mapping.method, mapping.path) == ("PUT", "/_plugins/_security/api/rolesmapping/mem-data")
    assert mapping.body == {"backend_roles": [READER, WRITER], "hosts": [], "users": []}


def test_rerunning_sends_the_same_requests(cluster: Cluster, client: OpenSearch) -> None:
    # GIVEN a role and mapping that already exist (the plugin answers 200 OK "updated")
    for _ in range(4):
        cluster.reply({"status": "OK", "message": "'mem-data' updated."})

    # WHEN mapped twice
    map_backend_roles(client, "mem-data", [READER], PATTERNS)
    map_backend_roles(client, "mem-data", [READER], PATTERNS)

    # THEN the second run sends exactly what the first did: a PUT replaces, nothing accumulates
    cluster.done()
    first, second = cluster.sent[:2], cluster.sent[2:]
    assert [(s.method, s.path, s.body) for s in first] == [(s.method, s.path, s.body) for s in second]


def test_an_empty_list_unmaps_everyone(cluster: Cluster, client: OpenSearch) -> None:
    # GIVEN
    cluster.reply().reply()

    # WHEN
    map_backend_roles(client, "mem-data", [], PATTERNS)

    # THEN
    cluster.done()
    assert cluster.sent[1].body["backend_roles"] == []


def test_a_403_from_a_non_master_caller_is_a_configuration_error(
    cluster: Cluster, client: OpenSearch
) -> None:
    # GIVEN a caller that is not the FGAC master user
    cluster.reply({"status": "FORBIDDEN", "message": "No permission to access REST API"}, status=403)

    # WHEN mapping, THEN the deployment fails with an access error, and no mapping is attempted
    with pytest.raises(ConfigurationError, match="403"):
        map_backend_roles(client, "mem-data", [READER], PATTERNS)
    assert len(cluster.sent) == 1


def test_a_failing_cluster_is_a_dependency_error(cluster: Cluster, client: OpenSearch) -> None:
    # GIVEN a domain that answers 503 to every attempt (the client retries first)
    for _ in range(8):
        cluster.reply({"error": {"type": "internal_error", "reason": "boom"}}, status=503)

    # WHEN mapping, THEN it is a retryable dependency failure, and the mapping is never put
    with pytest.raises(DependencyError):
        map_backend_roles(client, "mem-data", [READER], PATTERNS)
    assert {s.path for s in cluster.sent} == {"/_plugins/_security/api/roles/mem-data"}


@pytest.mark.parametrize(
    ("role", "patterns"),
    [("", PATTERNS), ("../all_access", PATTERNS), ("mem-data", []), ("mem-data", ["*"]), ("mem-data", [""])],
)
def test_bad_names_or_patterns_are_refused_before_any_request(
    cluster: Cluster, client: OpenSearch, role: str, patterns: list[str]
) -> None:
    with pytest.raises(ConfigurationError):
        map_backend_roles(client, role, [READER], patterns)
    assert cluster.sent == []


def test_the_data_role_is_named_after_the_alias() -> None:
    assert data_role_name("agent-memory") == "agent-memory-data"

"""The index bootstrap custom resource on the sample CloudFormation events.

The OpenSearch client is real down to the socket: the transport double of the adapter's request
tests records every request and replays documented responses, so these tests see exactly what
the handler would send a domain during `cdk deploy`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opensearchpy import OpenSearch
from tests.payloads import load_event
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    Cluster,
    RecordingConnection,
    knowledge_mapping_response,
)

from agent_memory import container
from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.opensearch.opensearch_client import client_options
from agent_memory.adapters.opensearch.opensearch_index import (
    events_index_body,
    knowledge_index_body,
    knowledge_index_name,
    records_index_body,
    records_index_name,
)
from agent_memory.errors import ConfigurationError
from agent_memory.handlers import bootstrap as bootstrap_handler
from agent_memory.local.lambda_context import LocalContext
from agent_memory.settings import Settings

EVENT = "cfn_bootstrap_create.json"
ENDPOINT = "https://search-agent-memory-abc.us-east-1.es.amazonaws.com"
TITAN = "amazon.titan-embed-text-v2:0"


class Env:
    """The cluster double and the settings each client was built from."""

    def __init__(self) -> None:
        self.cluster = Cluster()
        self.built_for: list[Settings] = []

    def build_client(self, settings: Settings) -> OpenSearch:
        self.built_for.append(settings)
        options = client_options(settings)
        options["connection_class"] = RecordingConnection
        return OpenSearch(hosts=[{"host": "cluster.test", "port": 9200}], cluster=self.cluster, **options)


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch) -> Iterator[Env]:
    monkeypatch.setenv("AGENT_MEMORY_STORE", "opensearch")
    monkeypatch.setenv("AGENT_MEMORY_OPENSEARCH_ENDPOINT", ENDPOINT)
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDER", "hashing")
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDING_DIMENSION", "16")
    state = Env()
    # the container builds the one client of the process (the store's and the bootstrap's)
    monkeypatch.setattr("agent_memory.adapters.opensearch.opensearch_client.build_client", state.build_client)
    container.reset()
    yield state
    container.reset()


def cfn_event(request_type: str = "Create", **properties: Any) -> dict[str, Any]:
    event = load_event(EVENT, RequestType=request_type)
    event["ResourceProperties"] = {**event["ResourceProperties"], **properties}
    if request_type != "Create":
        event["PhysicalResourceId"] = "agent-memory"
    return event


def mappings(alias: str, dim: int, model: str) -> dict[str, Any]:
    return {
        records_index_name(alias): {"mappings": records_index_body(dim, model)["mappings"]},
        f"{alias}-events-v1": {"mappings": events_index_body()["mappings"]},
    }


def knowledge(alias: str, dim: int, model: str) -> dict[str, Any]:
    return knowledge_mapping_response(dim, model, alias)


def run(event: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = bootstrap_handler.handler(event, LocalContext())
    return result


def test_create_makes_both_indexes_for_the_model_in_the_properties(env: Env) -> None:
    # GIVEN an empty domain
    cluster = env.cluster
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True})
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True})
    cluster.reply(mappings("agent-memory", 1024, TITAN))
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True})
    cluster.reply(knowledge("agent-memory", 1024, TITAN))

    # WHEN CloudFormation creates the resource (the sample event of an older template: Titan v2,
    # 1024, Engine faiss, which no longer chooses anything)
    result = run(load_event(EVENT))

    # THEN the three versioned indexes are created with their aliases, for the domain in the settings
    cluster.done()
    assert [(s.method, s.path) for s in cluster.sent] == [
        ("HEAD", "/_alias/agent-memory"),
        ("HEAD", f"/{records_index_name('agent-memory')}"),
        ("PUT", f"/{records_index_name('agent-memory')}"),
        ("HEAD", "/_alias/agent-memory-events"),
        ("HEAD", "/agent-memory-events-v1"),
        ("PUT", "/agent-memory-events-v1"),
        ("GET", "/agent-memory,agent-memory-events/_mapping"),
        ("HEAD", "/_alias/agent-memory-knowledge"),
        ("HEAD", f"/{knowledge_index_name('agent-memory')}"),
        ("PUT", f"/{knowledge_index_name('agent-memory')}"),
        ("GET", "/agent-memory-knowledge/_mapping"),
    ]
    [settings] = env.built_for
    assert settings.opensearch_endpoint == ENDPOINT
    created = cluster.sent[2].body
    assert created["mappings"] == records_index_body(1024, TITAN)["mappings"]
    assert created["mappings"]["properties"]["vector"]["method"]["engine"] == "lucene"
    assert created["aliases"] == {"agent-memory": {"is_write_index": True}}
    created_knowledge = cluster.sent[9].body
    assert created_knowledge["mappings"] == knowledge_index_body(1024, TITAN)["mappings"]
    assert created_knowledge["aliases"] == {"agent-memory-knowledge": {"is_write_index": True}}
    # AND the framework gets a stable physical id and the names as attributes
    assert result == {
        "PhysicalResourceId": "agent-memory",
        "Data": {
            "Alias": "agent-memory",
            "Index": records_index_name("agent-memory"),
            "EventsAlias": "agent-memory-events",
            "EventsIndex": "agent-memory-events-v1",
            "KnowledgeAlias": "agent-memory-knowledge",
            "KnowledgeIndex": knowledge_index_name("agent-memory"),
            "Created": "true",
            "Engine": "lucene",
        },
    }


def test_update_over_existing_indexes_only_checks_them(env: Env) -> None:
    # GIVEN
    env.cluster.reply().reply().reply(mappings("agent-memory", 1024, TITAN))
    env.cluster.reply().reply(knowledge("agent-memory", 1024, TITAN))

    # WHEN
    result = run(cfn_event("Update"))

    # THEN
    env.cluster.done()
    assert [s.method for s in env.cluster.sent] == ["HEAD", "HEAD", "GET", "HEAD", "GET"]
    assert result["PhysicalResourceId"] == "agent-memory"
    assert result["Data"]["Created"] == "false"


def test_an_update_to_another_embedding_model_fails_the_deployment(env: Env) -> None:
    # GIVEN indexes of Titan at 1024 dimensions
    env.cluster.reply().reply().reply(mappings("agent-memory", 1024, TITAN))

    # WHEN the stack is updated to 512 dimensions, THEN the resource fails, saying both sides
    with pytest.raises(ConfigurationError) as raised:
        run(cfn_event("Update", Dimension="512"))
    assert "1024" in str(raised.value) and "512" in str(raised.value)


def test_delete_keeps_the_indexes_and_sends_nothing(env: Env) -> None:
    # WHEN CloudFormation deletes the resource (no reply is queued: any request would fail the test)
    result = run(cfn_event("Delete"))

    # THEN nothing reached the cluster, and the physical id is echoed back
    assert env.cluster.sent == []
    assert env.built_for == []
    assert result == {"PhysicalResourceId": "agent-memory"}


def test_missing_properties_fall_back_to_the_settings(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a resource with no properties but its service token, and an alias in the settings
    monkeypatch.setenv("AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS", "mem2")
    container.reset()
    event = load_event(EVENT)
    event["ResourceProperties"] = {"ServiceToken": event["ServiceToken"]}
    embedder = HashingEmbedder(16)
    env.cluster.reply(status=404).reply(status=404).reply({"acknowledged": True})
    env.cluster.reply().reply(mappings("mem2", 16, embedder.model_id))
    env.cluster.reply().reply(knowledge("mem2", 16, embedder.model_id))

    # WHEN created
    result = run(event)

    # THEN the index is made for the alias and the configured embedder of the settings
    env.cluster.done()
    create = env.cluster.sent[2]
    assert create.path == f"/{records_index_name('mem2')}"
    assert create.body["mappings"]["_meta"]["embedding_model_id"] == embedder.model_id
    assert create.body["mappings"]["properties"]["vector"]["dimension"] == 16
    assert result["PhysicalResourceId"] == "mem2"


@pytest.mark.parametrize(
    ("properties", "needle"),
    [
        ({"Dimension": "many"}, "Dimension"),
        ({"Dimension": "3"}, "Dimension"),
        ({"Alias": ""}, "Alias"),
    ],
)
def test_invalid_properties_fail_before_any_request(
    env: Env, properties: dict[str, str], needle: str
) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=needle):
        run(cfn_event(**properties))
    assert env.cluster.sent == []


def test_an_unknown_request_type_fails(env: Env) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="Replace"):
        run(cfn_event("Replace"))


API_ROLE = "arn:aws:iam::123456789012:role/agent-memory-ApiFunctionServiceRole-1A2B3C"
WRITER_ROLE = "arn:aws:iam::123456789012:role/agent-memory-WriterFunctionServiceRole-4D5E6F"


def test_backend_roles_are_mapped_to_the_data_role_after_the_indexes(env: Env) -> None:
    # GIVEN existing indexes, and a domain whose security plugin accepts the master user's PUTs
    env.cluster.reply().reply().reply(mappings("agent-memory", 1024, TITAN))
    env.cluster.reply().reply(knowledge("agent-memory", 1024, TITAN))
    env.cluster.reply({"status": "OK", "message": "'agent-memory-data' updated."})
    env.cluster.reply({"status": "OK", "message": "'agent-memory-data' updated."})

    # WHEN the stack (a managed domain) updates the resource with the functions' role ARNs
    result = run(cfn_event("Update", BackendRoles=[WRITER_ROLE, API_ROLE]))

    # THEN after the index checks, the data role is put on the aliases and their indexes
    env.cluster.done()
    assert [(s.method, s.path) for s in env.cluster.sent[5:]] == [
        ("PUT", "/_plugins/_security/api/roles/agent-memory-data"),
        ("PUT", "/_plugins/_security/api/rolesmapping/agent-memory-data"),
    ]
    role, mapping = env.cluster.sent[5].body, env.cluster.sent[6].body
    [index_permission] = role["index_permissions"]
    assert index_permission["index_patterns"] == ["agent-memory", "agent-memory-*"]
    assert "crud" in index_permission["allowed_actions"]
    assert "cluster_composite_ops" in role["cluster_permissions"]
    # AND exactly the listed IAM roles are mapped to it
    assert mapping == {"backend_roles": [API_ROLE, WRITER_ROLE], "hosts": [], "users": []}
    assert result["PhysicalResourceId"] == "agent-memory"


def test_without_backend_roles_no_security_request_is_sent(env: Env) -> None:
    # GIVEN
    env.cluster.reply().reply().reply(mappings("agent-memory", 1024, TITAN))
    env.cluster.reply().reply(knowledge("agent-memory", 1024, TITAN))

    # WHEN
    run(cfn_event("Update"))

    # THEN
    env.cluster.done()
    assert not any("_security" in s.path for s in env.cluster.sent)


@pytest.mark.parametrize(
    "backend_roles",
    [
        f"{API_ROLE},{WRITER_ROLE}",  # a joined string, not a list
        ["agent-memory-ApiFunctionServiceRole"],  # a role name, not an ARN: FGAC would map nobody
        ["arn:aws:iam::123456789012:user/alice"],
    ],
)
def test_malformed_backend_roles_fail_before_any_request(env: Env, backend_roles: object) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="BackendRoles"):
        run(cfn_event(BackendRoles=backend_roles))
    assert env.cluster.sent == []

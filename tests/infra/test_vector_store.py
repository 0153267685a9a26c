"""The vector store: the managed domain, its policies, its clients' timeouts; no Serverless collection."""

from __future__ import annotations

import json

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list, committed_context, render

from agent_memory.adapters.opensearch.opensearch_index import EVENTS_SCHEMA_VERSION, SCHEMA_VERSION

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

STORE_USERS = ("Api", "Search", "Writer", "SummarizeDispatch", "SummarizeWorker", "Retention")
#: The functions that read shared knowledge, each read in a point in time that it closes.
KNOWLEDGE_READERS = ("Api", "Search")
CLOSE_SNAPSHOT = ["es:ESHttpDelete"]


def _role_arn(synth: Synth, function: str) -> dict[str, list[str]]:
    return {"Fn::GetAtt": [synth.logical_id(synth.stack.factory.functions[function].role), "Arn"]}


def test_domain_is_opensearch_2_encrypted_https_only_with_fgac_and_sizes_from_context(synth: Synth) -> None:
    # GIVEN
    sizes = committed_context()["opensearch"]
    domain = synth.resources[synth.logical_id(synth.stack.store.domain)]
    props = domain["Properties"]
    # WHEN / THEN
    assert props["EngineVersion"] == f"OpenSearch_{sizes['engine_version']}"
    assert props["EncryptionAtRestOptions"] == {"Enabled": True}
    assert props["NodeToNodeEncryptionOptions"] == {"Enabled": True}
    assert props["DomainEndpointOptions"] == {
        "EnforceHTTPS": True,
        "TLSSecurityPolicy": "Policy-Min-TLS-1-2-2019-07",
    }
    cluster = props["ClusterConfig"]
    assert (cluster["InstanceType"], cluster["InstanceCount"]) == (
        sizes["data_node_type"],
        sizes["data_nodes"],
    )
    assert cluster["ZoneAwarenessEnabled"] is True
    assert cluster["DedicatedMasterEnabled"] is False
    assert props["EBSOptions"] == {"EBSEnabled": True, "VolumeSize": sizes["volume_gib"], "VolumeType": "gp3"}
    security = props["AdvancedSecurityOptions"]
    assert security["Enabled"] is True
    assert security["InternalUserDatabaseEnabled"] is False
    assert security["MasterUserOptions"] == {"MasterUserARN": _role_arn(synth, "IndexBootstrap")}
    # kept on delete, deleted when the first deploy rolls back (a retry starts clean)
    assert domain["DeletionPolicy"] == "RetainExceptOnCreate"


def test_domain_publishes_slow_and_application_logs_through_a_native_resource_policy(synth: Synth) -> None:
    # WHEN
    publishing = synth.props(synth.stack.store.domain)["LogPublishingOptions"]
    # THEN
    assert set(publishing) == {"SEARCH_SLOW_LOGS", "INDEX_SLOW_LOGS", "ES_APPLICATION_LOGS"}
    assert all(option["Enabled"] for option in publishing.values())
    (policy,) = synth.of_type("AWS::Logs::ResourcePolicy").values()
    (statement,) = json.loads(render(policy["Properties"]["PolicyDocument"]))["Statement"]
    assert statement["Principal"] == {"Service": "es.amazonaws.com"}
    assert sorted(statement["Action"]) == ["logs:CreateLogStream", "logs:PutLogEvents"]
    assert len(statement["Resource"]) == 3
    # No Lambda-backed custom resources for access or log policies (the L2 defaults).
    assert not synth.of_type("Custom::OpenSearchAccessPolicy")
    assert not [r for r in synth.resources.values() if r["Type"] == "Custom::AWS"]


def test_domain_policy_allows_exactly_the_function_roles_and_only_the_bootstrap_may_put(synth: Synth) -> None:
    # GIVEN
    statements = synth.props(synth.stack.store.domain)["AccessPolicies"]["Statement"]
    closing = [s for s in statements if as_list(s["Action"]) == CLOSE_SNAPSHOT]
    by_principal = {
        json.dumps(s["Principal"]["AWS"], sort_keys=True): s for s in statements if s not in closing
    }
    # WHEN
    expected = {json.dumps(_role_arn(synth, f), sort_keys=True) for f in (*STORE_USERS, "IndexBootstrap")}
    # THEN
    assert set(by_principal) == expected, "no '*' principal, no anonymous access"
    for principal, statement in by_principal.items():
        assert statement["Effect"] == "Allow"
        assert render(statement["Resource"]).endswith(":domain/agent-memory-dev/*")
        is_bootstrap = principal == json.dumps(_role_arn(synth, "IndexBootstrap"), sort_keys=True)
        assert ("es:ESHttpPut" in statement["Action"]) is is_bootstrap
        assert "es:ESHttpDelete" not in statement["Action"]
    # AND the one DELETE: the knowledge readers closing their point in time, on that path alone
    assert sorted(json.dumps(s["Principal"]["AWS"], sort_keys=True) for s in closing) == sorted(
        json.dumps(_role_arn(synth, f), sort_keys=True) for f in KNOWLEDGE_READERS
    )
    for statement in closing:
        assert render(statement["Resource"]).endswith(":domain/agent-memory-dev/_search/point_in_time")


def test_store_users_sign_for_the_domain_with_the_same_methods(synth: Synth) -> None:
    # WHEN / THEN
    for name in STORE_USERS:
        env = synth.function(name)["Environment"]["Variables"]
        assert env["AGENT_MEMORY_STORE"] == "opensearch"
        assert env["AGENT_MEMORY_OPENSEARCH_SERVICE"] == "es"
        assert render(env["AGENT_MEMORY_OPENSEARCH_ENDPOINT"]).startswith("https://<")
        assert env["AGENT_MEMORY_EMBEDDING_DIMENSION"] == "1024"
        es = [s for s in synth.function_statements(name) if str(as_list(s["Action"])[0]).startswith("es:")]
        closing = [s for s in es if as_list(s["Action"]) == CLOSE_SNAPSHOT]
        assert [sorted(as_list(s["Action"])) for s in es if s not in closing] == [
            ["es:ESHttpGet", "es:ESHttpPost"]
        ]
        assert len(closing) == (name in KNOWLEDGE_READERS)
        for statement in closing:
            assert render(statement["Resource"]).endswith(":domain/agent-memory-dev/_search/point_in_time")


def test_bootstrap_custom_resource_creates_the_index_for_the_configured_model(synth: Synth) -> None:
    # GIVEN
    store = synth.stack.store
    resource = synth.resources[synth.logical_id(store.bootstrap)]
    props = resource["Properties"]
    # WHEN / THEN
    assert resource["Type"] == "Custom::IndexBootstrap"
    assert (props["Alias"], props["Dimension"], props["ModelId"]) == (
        "agent-memory",
        "1024",
        "amazon.titan-embed-text-v2:0",
    )
    # no engine to choose: the bootstrap makes new indexes on lucene, the one engine tested
    assert "Engine" not in props
    # a new index schema changes a property, so a deploy re-runs the bootstrap (which upgrades)
    assert props["SchemaVersion"] == str(SCHEMA_VERSION)
    assert props["EventsSchemaVersion"] == str(EVENTS_SCHEMA_VERSION)  # the events index's new fields too
    assert sorted(json.dumps(r) for r in props["BackendRoles"]) == sorted(
        json.dumps(_role_arn(synth, f)) for f in STORE_USERS
    )
    assert synth.logical_id(store.domain) in resource["DependsOn"]
    framework = synth.resources[props["ServiceToken"]["Fn::GetAtt"][0]]["Properties"]
    user_function = framework["Environment"]["Variables"]["USER_ON_EVENT_FUNCTION_ARN"]
    assert user_function == {"Fn::GetAtt": [synth.logical_id(store.bootstrap_function), "Arn"]}


def test_opensearch_serverless_is_not_offered(synth: Synth, alt: Synth, files: Synth) -> None:
    # GIVEN
    from agent_memory_stack.config import ConfigError, parse_config

    # WHEN / THEN no variant has a collection, and cdk.json cannot ask for one
    for variant in (synth, alt, files):
        assert not [r["Type"] for r in variant.resources.values() if "OpenSearchServerless" in r["Type"]]
        assert not [
            s
            for f in variant.stack.factory.functions
            for s in variant.function_statements(f)
            if any(a.startswith("aoss:") for a in as_list(s["Action"]))
        ]
    with pytest.raises(ConfigError, match="vector_store"):
        parse_config({**committed_context(), "vector_store": "serverless"})


def test_every_opensearch_call_with_its_retries_ends_before_its_function_must(synth: Synth) -> None:
    """The client waits ``opensearch_timeout_s`` per attempt and tries `MAX_RETRIES` more times:
    all of them must end before the function's timeout, or a slow domain gets the function killed
    mid-request instead of answered with an error."""
    from agent_memory.adapters.opensearch.opensearch_client import MAX_RETRIES
    from agent_memory.settings import Settings

    default = Settings.model_fields["opensearch_timeout_s"].default
    users = [
        n
        for n in synth.stack.factory.functions
        if "AGENT_MEMORY_OPENSEARCH_ENDPOINT" in synth.function(n)["Environment"]["Variables"]
    ]
    assert set(STORE_USERS) <= set(users)
    for name in users:
        # WHEN
        function = synth.function(name)
        per_attempt = float(
            function["Environment"]["Variables"].get("AGENT_MEMORY_OPENSEARCH_TIMEOUT_S", default)
        )
        # THEN
        assert per_attempt * (MAX_RETRIES + 1) < function["Timeout"], name
        assert per_attempt >= 2.5, name  # still long enough for a k-NN search of a large agent


def test_the_domain_is_created_after_the_policy_that_lets_it_write_its_logs(synth: Synth) -> None:
    # GIVEN
    policies = list(synth.of_type("AWS::Logs::ResourcePolicy"))
    # WHEN
    domain = synth.resources[synth.logical_id(synth.stack.store.domain)]
    # THEN
    assert len(policies) == 1
    assert policies[0] in domain.get("DependsOn", [])

"""cdk.json context is validated at synth, with one clear line per problem. Needs only pydantic."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.infra.support import committed_context

from agent_memory_stack.config import (
    ConfigError,
    StackConfig,
    base_model_id,
    inference_profile,
    load_config,
    parse_config,
)


def _error(context: Any, stage: str | None = None) -> str:
    with pytest.raises(ConfigError) as caught:
        parse_config(context, stage)
    return str(caught.value)


def test_committed_cdk_json_is_the_documented_default() -> None:
    # GIVEN cdk.json as committed WHEN parsed THEN it is exactly the model's defaults, so the file
    # and the field docs in config.py never drift apart
    assert parse_config(committed_context()) == StackConfig()
    # Retention defaults live in the functions (governance/rules/plans.py); cdk.json only overrides them.
    assert StackConfig().plans == {}


def test_no_context_means_defaults_and_stage_can_be_overridden() -> None:
    # WHEN / THEN
    assert parse_config(None).stage == "dev"
    config = parse_config(committed_context(), stage="prod")
    assert (config.stage, config.prefix) == ("prod", "agent-memory-prod")


def test_context_may_be_a_json_string_from_the_command_line() -> None:
    # WHEN
    config = parse_config(json.dumps({"store": "serverless", "embedding_dimension": 512}))
    # THEN
    assert (config.store, config.embedding_dimension) == ("serverless", 512)


def test_every_problem_is_reported_with_its_path() -> None:
    # WHEN
    message = _error(
        {
            "opensearch": {"data_nodes": 0, "data_node_type": "big"},
            "timezone": "Mars/Olympus",
            "embedding_dimension": 768,
            "store": "aurora",
        }
    )
    # THEN
    assert message.startswith("invalid stack configuration in cdk.json:")
    for path in (
        "agent_memory.opensearch.data_nodes",
        "agent_memory.opensearch.data_node_type",
        "agent_memory.timezone: unknown IANA timezone 'Mars/Olympus'",
        "agent_memory.embedding_dimension",
        "agent_memory.store",
    ):
        assert path in message, path


@pytest.mark.parametrize("engine", ["faiss", "lucene"])
def test_the_knn_engine_is_no_longer_a_choice(engine: str) -> None:
    # WHEN a cdk.json of an earlier version still names an engine THEN synth stops, saying why
    message = _error({"opensearch": {"knn_engine": engine}})
    assert "agent_memory.opensearch: knn_engine is no longer a setting" in message
    assert "made on lucene" in message and "faiss keeps working" in message


@pytest.mark.parametrize(
    ("context", "expected"),
    [
        (
            {"opensearch": {"data_node": 2}},
            "agent_memory.opensearch.data_node: Extra inputs are not permitted",
        ),
        ({"stage": "Prod_1"}, "agent_memory.stage"),
        ({"stage": "a-very-long-stage-name"}, "agent_memory.stage"),
        ({"log_retention_days": 31}, "CloudWatch Logs accepts one of"),
        ({"summary_model_id": "claude"}, "is not a Bedrock model id"),
        (
            {"summary_model_id": "xx.anthropic.claude-3-haiku-20240307-v1:0"},
            "unknown inference profile prefix 'xx'",
        ),
        ({"embedding_model_id": "cohere.embed-english-v3"}, "only Amazon Titan Text Embeddings v2"),
        ({"plans": {"free": {"hourly": 3}}}, "unknown grains ['hourly']"),
        ({"plans": {"free": {"daily": 0}}}, "at least 1 hour"),
        ({"plans": {"Free Tier": {"daily": 1}}}, "plan name 'Free Tier'"),
        ({"opensearch": {"master_nodes": 2}}, "agent_memory.opensearch.master_nodes"),
        ({"alarm_topic_arn": "my-topic"}, "agent_memory.alarm_topic_arn"),
        ("{not json", "not valid JSON"),
        ([1, 2], "expected a JSON object"),
    ],
)
def test_invalid_values_are_refused_with_a_clear_message(context: Any, expected: str) -> None:
    # WHEN / THEN
    assert expected in _error(context)


def test_inference_profiles_are_recognised_and_resolve_to_their_model() -> None:
    # WHEN / THEN
    assert inference_profile("us.anthropic.claude-3-5-haiku-20241022-v1:0")
    assert base_model_id("eu.amazon.titan-embed-text-v2:0") == "amazon.titan-embed-text-v2:0"
    assert not inference_profile("anthropic.claude-3-haiku-20240307-v1:0")
    assert base_model_id("amazon.titan-embed-text-v2:0") == "amazon.titan-embed-text-v2:0"


def test_plan_overrides_travel_as_compact_json_in_the_functions_format() -> None:
    # GIVEN overrides in hours, as AGENT_MEMORY_PLANS (governance/rules/plans.py) reads them
    config = parse_config({"plans": {"pro": {"working": 720, "yearly": None}, "team": {"daily": 2400}}})
    # WHEN / THEN they travel unchanged, compact, and the functions' own parser accepts them
    assert json.loads(config.plans_json) == {"pro": {"working": 720, "yearly": None}, "team": {"daily": 2400}}
    assert " " not in config.plans_json
    from agent_memory.governance.rules.plans import load_plans
    from agent_memory.model.grains import Grain

    plans = load_plans(config.plans_json)
    assert plans["pro"][Grain.WORKING] == 720
    assert plans["team"][Grain.DAILY] == 2400


def test_load_config_reads_the_app_context() -> None:
    # GIVEN
    class Node:
        def __init__(self, context: dict[str, Any]) -> None:
            self.context = context

        def try_get_context(self, key: str) -> Any:
            return self.context.get(key)

    # WHEN
    config = load_config(Node({"agent_memory": {"timezone": "Asia/Tokyo"}, "stage": "qa"}))
    # THEN
    assert (config.timezone, config.stage) == ("Asia/Tokyo", "qa")


def test_the_prod_stage_gets_the_production_sizing_and_a_stage_may_override_it() -> None:
    # GIVEN
    from agent_memory_stack.config import parse_config

    dev = parse_config(committed_context())
    # WHEN
    prod = parse_config(committed_context(), stage="prod")
    # THEN
    assert (dev.opensearch.data_node_type, dev.opensearch.master_nodes) == ("t3.medium.search", 0)
    assert prod.prefix == "agent-memory-prod"
    assert (prod.opensearch.data_node_type, prod.opensearch.data_nodes, prod.opensearch.master_nodes) == (
        "r7g.large.search",
        3,
        3,
    )
    assert prod.opensearch.availability_zones == 3
    assert prod.retain_data
    tuned = parse_config(
        {**committed_context(), "stages": {"prod": {"opensearch": {"data_nodes": 6}}}}, stage="prod"
    )
    assert (tuned.opensearch.data_nodes, tuned.opensearch.master_nodes) == (6, 3)


def test_the_prod_domain_has_dedicated_masters_in_three_zones(tmp_path: Any) -> None:
    # GIVEN
    from tests.infra.conftest import _synth

    synth = _synth(tmp_path, committed_context() | {"stage": "prod"})
    (domain,) = synth.of_type("AWS::OpenSearchService::Domain").values()
    cluster = domain["Properties"]["ClusterConfig"]
    # WHEN / THEN
    assert cluster["DedicatedMasterEnabled"] is True and cluster["DedicatedMasterCount"] == 3
    assert cluster["ZoneAwarenessConfig"] == {"AvailabilityZoneCount": 3}
    assert cluster["InstanceType"] == "r7g.large.search" and cluster["InstanceCount"] == 3

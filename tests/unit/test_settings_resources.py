"""Resource settings an adapter needs: refused when the settings load if every function needs
them, else refused by name when the function that needs one builds its adapter."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_memory.container import Container
from agent_memory.errors import ConfigurationError
from agent_memory.settings import Settings


def _sqs(tmp_path: Path, **extra: str) -> Settings:
    return Settings(
        data_dir=tmp_path,
        embedder="hashing",
        queue="sqs",
        write_queue_url="https://sqs.us-east-1.amazonaws.com/1/w.fifo",
        **extra,  # type: ignore[arg-type]
    )


def test_a_missing_resource_every_function_needs_is_refused_at_load(tmp_path: Path) -> None:
    # WHEN / THEN the write queue is chosen but not named
    with pytest.raises(ValueError, match="AGENT_MEMORY_WRITE_QUEUE_URL"):
        Settings(data_dir=tmp_path, queue="sqs")


def test_a_resource_only_some_functions_need_is_refused_by_name_where_it_is_used(tmp_path: Path) -> None:
    # GIVEN the API's settings: the write queue named, no dead-letter or summarize queue
    container = Container(_sqs(tmp_path))
    # WHEN / THEN building what needs them names the missing variable
    with pytest.raises(ConfigurationError, match="AGENT_MEMORY_DEAD_LETTER_QUEUE_URL"):
        _ = container.dead_letters
    with pytest.raises(ConfigurationError, match="AGENT_MEMORY_SUMMARIZE_QUEUE_URL"):
        _ = container.job_queue


def test_a_named_resource_is_returned_as_given(tmp_path: Path) -> None:
    # GIVEN
    settings = _sqs(tmp_path, dead_letter_queue_url="https://sqs.us-east-1.amazonaws.com/1/d.fifo")
    # WHEN / THEN
    assert settings.resource("dead_letter_queue_url") == "https://sqs.us-east-1.amazonaws.com/1/d.fifo"


def test_the_event_bus_and_the_webhooks_table_are_required_where_chosen(tmp_path: Path) -> None:
    # WHEN / THEN the change feed on EventBridge without its bus, webhooks in DynamoDB without the table
    with pytest.raises(ValueError, match="AGENT_MEMORY_EVENT_BUS_NAME"):
        Settings(data_dir=tmp_path, change_feed="eventbridge")
    with pytest.raises(ValueError, match="AGENT_MEMORY_WEBHOOKS_TABLE"):
        Settings(data_dir=tmp_path, webhooks="dynamodb")


def test_opensearch_serverless_is_refused_when_the_settings_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a function whose environment still names OpenSearch Serverless as the signing service
    monkeypatch.setenv("AGENT_MEMORY_OPENSEARCH_SERVICE", "aoss")
    # WHEN / THEN its settings load (the cold start) fails, saying why and what to use instead
    with pytest.raises(ValueError, match="OpenSearch Serverless is not supported") as refused:
        Settings(data_dir=tmp_path, store="opensearch", opensearch_endpoint="https://x.aoss.amazonaws.com")
    assert "managed OpenSearch domain" in str(refused.value)
    assert "document ids" in str(refused.value)

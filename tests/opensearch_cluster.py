"""The real OpenSearch node the cluster tests run against (``make test`` starts one:
scripts/opensearch.sh), shared by the contract suite, the stateful tests and the e2e tests.

A test that needs the cluster and finds none FAILS: in CI always, and on a developer's machine
too unless that machine says so with ``AGENT_MEMORY_SKIP_OPENSEARCH=1`` (or deselects the tests
with ``-m "not opensearch"``). A suite that silently skipped its only real-engine tests would pass
while the store it ships had never answered a request.
"""

from __future__ import annotations

import os
import uuid
from typing import Any

import pytest


def cluster_url() -> str:
    """``OPENSEARCH_URL``, or the test fails (skips only where a developer opted out, never in CI)."""
    url = os.environ.get("OPENSEARCH_URL")
    if url:
        return url
    why = "OPENSEARCH_URL is not set: no OpenSearch cluster (`make opensearch-up` starts one)"
    in_ci = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if os.environ.get("AGENT_MEMORY_SKIP_OPENSEARCH") == "1" and not in_ci:
        pytest.skip(f"{why}; skipped because AGENT_MEMORY_SKIP_OPENSEARCH=1")
    pytest.fail(f"{why}; set AGENT_MEMORY_SKIP_OPENSEARCH=1 to skip on a developer machine", pytrace=False)


def cluster_client(url: str) -> Any:
    """The adapter's own client on ``url``, once the cluster answers yellow or better."""
    from agent_memory.adapters.opensearch.opensearch_client import new_client
    from agent_memory.settings import Settings

    client = new_client(Settings(store="opensearch", opensearch_endpoint=url, opensearch_timeout_s=30))
    # "timeout" as a keyword would become the socket timeout in opensearch-py: pass it as a param
    client.cluster.health(params={"wait_for_status": "yellow", "timeout": "60s"}, request_timeout=70)
    return client


class Indexes:
    """One bootstrapped alias (records, events, knowledge) that tests share one after another.

    Creating three k-NN indexes costs seconds per test on a small node; emptying them costs a
    tenth of that. `clear` deletes every document (refreshed), so the next test starts from an
    empty store, as a fresh alias would give it.
    """

    def __init__(self, client: Any, dimension: int, model_id: str, prefix: str = "test") -> None:
        from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap

        self.client = client
        self.alias = f"{prefix}-{uuid.uuid4().hex[:12]}"
        bootstrap(client, self.alias, dimension, model_id)

    @property
    def names(self) -> str:
        from agent_memory.adapters.opensearch.opensearch_index import (
            events_index_name,
            knowledge_index_name,
            records_index_name,
        )

        return ",".join(
            name(self.alias) for name in (records_index_name, events_index_name, knowledge_index_name)
        )

    def clear(self) -> None:
        # a refresh first: delete-by-query deletes what a search sees, and a test's last write
        # may not have been made searchable (writes outside the store's refresh=True path)
        self.client.indices.refresh(index=self.names)
        self.client.delete_by_query(
            index=self.names,
            body={"query": {"match_all": {}}},
            params={"refresh": "true", "conflicts": "proceed"},
        )

    def delete(self) -> None:
        self.client.indices.delete(index=self.names)


def store_behind_api(mp: pytest.MonkeyPatch) -> None:
    """With ``AGENT_MEMORY_TEST_STORE=opensearch``: the local runtime's memory store is a fresh,
    bootstrapped alias on the test cluster instead of SQLite (everything else stays local), so the
    e2e tests drive the OpenSearch store through the HTTP API. Without it: nothing changes."""
    if os.environ.get("AGENT_MEMORY_TEST_STORE") != "opensearch":
        return
    from agent_memory import container
    from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap
    from agent_memory.adapters.opensearch.opensearch_client import clear_client_cache

    alias = f"e2e-{uuid.uuid4().hex[:12]}"
    mp.setenv("AGENT_MEMORY_STORE", "opensearch")
    mp.setenv("AGENT_MEMORY_OPENSEARCH_ENDPOINT", cluster_url())
    mp.setenv("AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS", alias)
    container.reset()
    clear_client_cache()
    embedder = container.embedder()
    bootstrap(container.current().opensearch_client, alias, embedder.dimension, embedder.model_id)

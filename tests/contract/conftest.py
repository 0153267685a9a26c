"""One store contract, many adapters: the `store` fixture yields a fresh, empty store of each kind.

SQLite always runs. OpenSearch runs when ``OPENSEARCH_URL`` names a cluster (``http://localhost:9200``
in CI, see .github/workflows/opensearch.yml); each test gets its own alias, bootstrapped and
deleted again (with its knowledge index), so tests never see each other's records (the agent
listing is cross-tenant).
The OpenSearch store writes with ``refresh=True`` so a test can search what it just wrote, on the
k-NN engine named by ``OPENSEARCH_ENGINE`` (``faiss``, the default, or ``lucene``).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.ports import MemoryStore

DIM = 8
MODEL = "contract-model"


@pytest.fixture(scope="session")
def opensearch_client() -> Any:
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        pytest.skip("OPENSEARCH_URL is not set: no OpenSearch cluster to run the contract against")
    from agent_memory.adapters.opensearch.opensearch_client import new_client
    from agent_memory.settings import Settings

    client = new_client(Settings(store="opensearch", opensearch_endpoint=url, opensearch_timeout_s=30))
    # "timeout" as a keyword would become the socket timeout in opensearch-py: pass it as a param
    client.cluster.health(params={"wait_for_status": "yellow", "timeout": "60s"}, request_timeout=70)
    return client


@pytest.fixture(params=["sqlite", pytest.param("opensearch", marks=pytest.mark.opensearch)])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "sqlite":
        from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore

        sqlite = SqliteMemoryStore(tmp_path / "memory.db", DIM, MODEL)
        yield sqlite
        sqlite.close()
        return
    from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap
    from agent_memory.adapters.opensearch.opensearch_index import (
        events_index_name,
        knowledge_index_name,
        records_index_name,
    )
    from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore

    client = request.getfixturevalue("opensearch_client")
    alias = f"contract-{uuid.uuid4().hex[:12]}"
    engine = os.environ.get("OPENSEARCH_ENGINE", "faiss")
    bootstrap(client, alias, DIM, MODEL, engine=engine)  # type: ignore[arg-type]
    try:
        yield OpenSearchStore(client, alias, DIM, MODEL, refresh=True)
    finally:
        indices = (records_index_name(alias), events_index_name(alias), knowledge_index_name(alias))
        client.indices.delete(index=",".join(indices))

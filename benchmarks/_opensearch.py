"""The OpenSearch store behind a benchmark's runtime (``--store opensearch``): the node that
``OPENSEARCH_URL`` names (`make opensearch-up` starts one), a fresh alias bootstrapped for each
runtime (on lucene, the one engine new indexes are made on); everything else (keys, queue,
pending marks) stays local."""

from __future__ import annotations

import os
import uuid


def use_opensearch_store(prefix: str) -> str:
    """Point the settings at a new bootstrapped alias (``{prefix}-<random>``) and reset the
    container; returns the alias. Raises SystemExit without ``OPENSEARCH_URL``."""
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        raise SystemExit("--store opensearch needs OPENSEARCH_URL (`make opensearch-up` prints it)")
    from agent_memory import container
    from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap

    alias = f"{prefix}-{uuid.uuid4().hex[:10]}"
    os.environ.update(
        {
            "AGENT_MEMORY_STORE": "opensearch",
            "AGENT_MEMORY_OPENSEARCH_ENDPOINT": url,
            "AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS": alias,
            "AGENT_MEMORY_OPENSEARCH_TIMEOUT_S": "60",
        }
    )
    container.reset()
    embedder = container.embedder()
    bootstrap(container.current().opensearch_client, alias, embedder.dimension, embedder.model_id)
    return alias

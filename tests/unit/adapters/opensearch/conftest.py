"""The OpenSearch request-shape suites' cluster: a recording transport double behind a real
opensearch-py client (the double itself lives in `test_opensearch_requests`)."""

from __future__ import annotations

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import Cluster, RecordingConnection

from agent_memory.adapters.opensearch.opensearch_client import client_options
from agent_memory.settings import Settings


@pytest.fixture
def cluster() -> Cluster:
    return Cluster()


@pytest.fixture
def client(cluster: Cluster) -> OpenSearch:
    options = client_options(Settings(store="sqlite"))
    options["connection_class"] = RecordingConnection
    return OpenSearch(hosts=[{"host": "cluster.test", "port": 9200}], cluster=cluster, **options)

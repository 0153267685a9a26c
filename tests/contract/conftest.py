"""One store contract, many adapters: the `store` fixture yields a fresh, empty store of each kind.

SQLite always runs, and the serverless store (SQLite files in S3) on moto's S3; on a real bucket
when ``AGENT_MEMORY_TEST_BUCKET`` names one. OpenSearch runs on the node ``OPENSEARCH_URL`` names
(`make test` starts one with scripts/opensearch.sh); without one its tests fail, unless a
developer opts out (tests/opensearch_cluster.py). The OpenSearch tests share one bootstrapped
alias per session, emptied after each test, so tests never see each other's records (the agent
listing is cross-tenant); the store refreshes after its writes (its default) and after the
counters a search writes (``refresh_counters``), so a test can search what it just wrote, on
lucene, the one k-NN engine new indexes are made on.
When lancedb is installed (the ``lancedb`` extra, not part of ``make test``), the SQLite store with
its search candidates from LanceDB runs too (`benchmarks/lancedb_store.py`).
"""

from __future__ import annotations

import importlib.util
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
    from tests.opensearch_cluster import cluster_client, cluster_url

    return cluster_client(cluster_url())


@pytest.fixture(scope="session")
def opensearch_indexes(opensearch_client: Any) -> Iterator[Any]:
    from tests.opensearch_cluster import Indexes

    indexes = Indexes(opensearch_client, DIM, MODEL, prefix="contract")
    yield indexes
    indexes.delete()


def _indexed_everywhere(path: Path, exact_max: int) -> MemoryStore:
    """The SQLite store searching every agent through its approximate index (`sqlite_ann`), made
    current before each search; ``exact_max`` 0 sends every search through the sketch."""
    from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
    from agent_memory.ports import Candidate, NearestQuery, StoreQuery

    class Indexed(SqliteMemoryStore):
        def search(self, query: StoreQuery) -> list[Candidate]:
            assert self.build_vector_index(query.tenant_id, query.agent_id)
            return super().search(query)

        def nearest(self, query: NearestQuery) -> Any:
            assert self.build_vector_index(query.tenant_id, query.agent_id)
            return super().nearest(query)

    store = Indexed(path, DIM, MODEL, ann_min_vectors=1)
    assert store._ann is not None, "usearch is part of the local extra"
    store._ann.exact_max = exact_max
    return store


def _s3_store(tmp_path: Path) -> Iterator[MemoryStore]:
    """The serverless store on a bucket of moto's S3: every tenant's file really uploaded and
    downloaded, conditionally, through boto3."""
    import boto3
    from moto import mock_aws

    from agent_memory.adapters.s3_sqlite_store import S3SqliteStore
    from agent_memory.adapters.s3_tenant_files import S3TenantFiles

    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="stores")
        store = S3SqliteStore(S3TenantFiles("stores", client=client), tmp_path / "cache", DIM, MODEL)
        yield store  # type: ignore[misc]
        store.close()


def _real_s3_store(tmp_path: Path) -> Iterator[MemoryStore]:
    """The serverless store on a real bucket, named by ``AGENT_MEMORY_TEST_BUCKET`` (credentials
    from the environment); each test under a prefix of its own, removed afterwards."""
    bucket = os.environ.get("AGENT_MEMORY_TEST_BUCKET")
    if not bucket:
        pytest.skip("AGENT_MEMORY_TEST_BUCKET is not set: no S3 bucket to run the contract against")
    import boto3

    from agent_memory.adapters.s3_sqlite_store import S3SqliteStore
    from agent_memory.adapters.s3_tenant_files import S3TenantFiles

    client = boto3.client("s3")
    prefix = f"contract-{uuid.uuid4().hex[:12]}/"
    store = S3SqliteStore(S3TenantFiles(bucket, prefix, client=client), tmp_path / "cache", DIM, MODEL)
    try:
        yield store  # type: ignore[misc]
    finally:
        store.close()
        listed = client.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
        for item in listed:
            client.delete_object(Bucket=bucket, Key=item["Key"])


@pytest.fixture(
    params=[
        "sqlite",
        "sqlite-ann-sketch",
        "sqlite-ann-exact",
        "s3-sqlite",
        # The SQLite store with LanceDB's candidates: measured, not shipped (the `lancedb` extra).
        *(
            ["sqlite-lancedb", "sqlite-lancedb-propose"]
            if importlib.util.find_spec("lancedb") is not None
            else []
        ),
        pytest.param("s3-sqlite-real", marks=pytest.mark.s3),
        pytest.param("opensearch", marks=pytest.mark.opensearch),
    ]
)
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[MemoryStore]:
    if request.param == "s3-sqlite":
        yield from _s3_store(tmp_path)
        return
    if request.param == "s3-sqlite-real":
        yield from _real_s3_store(tmp_path)
        return
    if request.param.startswith("sqlite-lancedb"):
        from benchmarks.lancedb_store import LanceDbMemoryStore

        lance = LanceDbMemoryStore(tmp_path / "memory.db", DIM, MODEL, optimize_every=3)
        if request.param.endswith("propose"):  # LanceDB proposes, SQL keeps: never a list of rowids
            lance.lance.pushdown_max = 0
        yield lance
        lance.close()
        return
    if request.param.startswith("sqlite"):
        from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore

        sqlite = (
            SqliteMemoryStore(tmp_path / "memory.db", DIM, MODEL)
            if request.param == "sqlite"
            else _indexed_everywhere(tmp_path / "memory.db", 0 if request.param.endswith("sketch") else 10**6)
        )
        yield sqlite
        sqlite.close()  # type: ignore[attr-defined]
        return
    from agent_memory.adapters.opensearch.opensearch_store import OpenSearchStore

    indexes = request.getfixturevalue("opensearch_indexes")
    try:
        yield OpenSearchStore(indexes.client, indexes.alias, DIM, MODEL, refresh_counters=True)
    finally:
        indexes.clear()

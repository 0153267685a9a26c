"""The serverless store's own promises, beyond the store contract: functions that share a tenant's
file never lose each other's writes (a stateful race against a plain model), a read sees what any
function stored before it began, counts ride along with the next write, and the uploads carry
the conditions that make all of that true (request shapes, pinned with botocore's Stubber)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import boto3
import numpy as np
import pytest
from botocore.stub import ANY, Stubber
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule
from moto import mock_aws
from tests.payloads import memory_record
from tests.strategies import examples

from agent_memory.adapters.s3_sqlite_store import S3SqliteStore
from agent_memory.adapters.s3_tenant_files import FileChangedError, S3TenantFiles
from agent_memory.ports import AuditEvent, ListQuery, StoredRecord

DIM = 8
NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)


def _vector() -> np.ndarray:
    v = np.zeros(DIM, dtype=np.float32)
    v[0] = 1.0
    return v


@pytest.fixture
def bucket() -> Iterator[object]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="stores")
        yield client


def _store(client: object, tmp_path: Path, name: str) -> S3SqliteStore:
    return S3SqliteStore(S3TenantFiles("stores", client=client), tmp_path / name, DIM, "m")


def _ids(store: S3SqliteStore, tenant: str = "t1") -> set[str]:
    page = store.list(ListQuery(tenant, "a1", NOW + timedelta(days=1), limit=500))
    return {r.id for r in page.records}


def test_two_functions_writing_one_tenant_lose_nothing_and_read_each_others_writes(
    bucket: object, tmp_path: Path
) -> None:
    # GIVEN two functions (two stores, two /tmp copies) on one tenant's file
    writer, other = _store(bucket, tmp_path, "w"), _store(bucket, tmp_path, "o")
    a, b = memory_record("mem_aaaaaaaaaaaaaaaa", "first"), memory_record("mem_bbbbbbbbbbbbbbbb", "second")
    # WHEN each writes after reading, so each upload races the other's
    assert _ids(writer) == set() and _ids(other) == set()
    writer.put([StoredRecord(a, _vector())])
    other.put([StoredRecord(b, _vector())])  # its copy was stale: it reads the new file first
    # THEN both writes are in the file, and either function reads both
    assert _ids(writer) == _ids(other) == {a.id, b.id}


def test_an_upload_that_finds_the_file_changed_is_done_again_on_the_new_file(
    bucket: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a write whose first upload loses a race to another function's
    store, rival = _store(bucket, tmp_path, "s"), _store(bucket, tmp_path, "r")
    a, b = memory_record("mem_aaaaaaaaaaaaaaaa", "mine"), memory_record("mem_bbbbbbbbbbbbbbbb", "theirs")
    upload = store.files.upload
    raced: list[int] = []

    def racing(tenant_id: str, path: Path, read_etag: str | None) -> str:
        if not raced:
            raced.append(1)
            rival.put([StoredRecord(b, _vector())])  # lands between our read and our upload
        return upload(tenant_id, path, read_etag)

    monkeypatch.setattr(store.files, "upload", racing)
    # WHEN
    store.put([StoredRecord(a, _vector())])
    # THEN the rival's write was not overwritten: ours was done again on top of it
    assert _ids(_store(bucket, tmp_path, "x")) == {a.id, b.id}


def test_counts_are_kept_locally_and_stored_with_the_next_write(bucket: object, tmp_path: Path) -> None:
    # GIVEN a stored record, and a search function that counts an access to it
    writer, search = _store(bucket, tmp_path, "w"), _store(bucket, tmp_path, "s")
    a = memory_record("mem_aaaaaaaaaaaaaaaa", "counted")
    writer.put([StoredRecord(a, _vector())])
    search.record_access("t1", "a1", [a.id], NOW)
    # WHEN that function next writes (an audit event)
    assert search.get("t1", "a1", a.id).access_count == 1  # type: ignore[union-attr]
    event = AuditEvent("t1", "a1", a.id, "forgotten", "test", NOW)  # type: ignore[arg-type]
    search.append_audit([event])
    # THEN the count was stored with it: another function reads it
    assert _store(bucket, tmp_path, "x").get("t1", "a1", a.id).access_count == 1  # type: ignore[union-attr]


def test_the_first_upload_may_not_overwrite_and_later_ones_name_the_etag_read() -> None:
    # GIVEN a stubbed S3 client
    client = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="y")
    files = S3TenantFiles("stores", client=client)
    stub = Stubber(client)
    stub.add_response(
        "put_object",
        {"ETag": '"e1"'},
        {"Bucket": "stores", "Key": "stores/t1.db", "Body": ANY, "IfNoneMatch": "*"},
    )
    stub.add_response(
        "put_object",
        {"ETag": '"e2"'},
        {"Bucket": "stores", "Key": "stores/t1.db", "Body": ANY, "IfMatch": '"e1"'},
    )
    stub.add_client_error("put_object", "PreconditionFailed", http_status_code=412)
    path = Path(__file__)
    # WHEN / THEN
    with stub:
        assert files.upload("t1", path, None) == '"e1"'
        assert files.upload("t1", path, '"e1"') == '"e2"'
        with pytest.raises(FileChangedError):
            files.upload("t1", path, '"e1"')
    stub.assert_no_pending_responses()


class RacingFunctions(RuleBasedStateMachine):
    """Functions writing and forgetting in one tenant's file in any order, each on its own copy,
    against a plain model: the records stored, and the ones forgotten."""

    def __init__(self) -> None:
        super().__init__()
        self.mock = mock_aws()
        self.mock.start()
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="stores")
        import tempfile

        self.tmp = Path(tempfile.mkdtemp(prefix="racing-"))
        self.functions = [_store(client, self.tmp, f"f{i}") for i in range(3)]
        self.live: set[str] = set()

    @rule(f=st.integers(0, 2), n=st.integers(0, 15))
    def write(self, f: int, n: int) -> None:
        record_id = f"mem_{chr(97 + n) * 16}"
        self.functions[f].put([StoredRecord(memory_record(record_id, f"memory {n}"), _vector())])
        self.live.add(record_id)

    @rule(f=st.integers(0, 2), n=st.integers(0, 15))
    def forget(self, f: int, n: int) -> None:
        record_id = f"mem_{chr(97 + n) * 16}"
        event = AuditEvent("t1", "a1", record_id, "forgotten", "test", NOW)  # type: ignore[arg-type]
        if self.functions[f].soft_delete("t1", "a1", record_id, event):
            self.live.discard(record_id)

    @invariant()
    def every_function_reads_exactly_the_model(self) -> None:
        for function in self.functions:
            assert _ids(function) == self.live

    def teardown(self) -> None:
        for function in self.functions:
            function.close()
        self.mock.stop()


RacingFunctions.TestCase.settings = settings(
    max_examples=examples(8),
    stateful_step_count=12,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_racing_functions_never_lose_a_write = RacingFunctions.TestCase


def test_a_function_serving_many_tenants_keeps_a_bounded_number_of_copies(
    bucket: object, tmp_path: Path
) -> None:
    # GIVEN a function that may keep two tenants' copies, and five tenants with memory
    writer = _store(bucket, tmp_path, "w")
    for n in range(5):
        writer.put([StoredRecord(memory_record(f"mem_{'abcde'[n] * 16}", "x", tenant=f"t{n}"), _vector())])
    reader = S3SqliteStore(S3TenantFiles("stores", client=bucket), tmp_path / "r", DIM, "m", max_copies=2)
    # WHEN it reads every tenant
    found = [reader.get(f"t{n}", "a1", f"mem_{'abcde'[n] * 16}") for n in range(5)]
    # THEN it read each one, and its disk holds two copies, not five
    assert all(found)
    assert len(list((tmp_path / "r").glob("*.db"))) == 2


def test_one_search_asks_s3_once_whatever_it_reads_and_counts(
    bucket: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a stored memory and a search function whose reads trust a copy a quarter second old
    a = memory_record("mem_aaaaaaaaaaaaaaaa", "the launch moved to March")
    _store(bucket, tmp_path, "w").put([StoredRecord(a, _vector())])
    search = S3SqliteStore(S3TenantFiles("stores", client=bucket), tmp_path / "s", DIM, "m", fresh_s=0.25)
    asked: list[str] = []
    etag = search.files.etag
    monkeypatch.setattr(search.files, "etag", lambda tenant: asked.append(tenant) or etag(tenant))
    # WHEN one search reads the memories and the knowledge, then counts the access and the search
    from agent_memory.ports import PassageQuery, StoreQuery

    search.search(StoreQuery("t1", "a1", NOW, vector=_vector(), text="launch"))
    search.search_passages(PassageQuery("t1", text="launch"))
    search.record_access("t1", "a1", [a.id], NOW)
    search.record_search("t1", "a1", NOW, 1)
    # THEN S3 was asked once, and the counts are on the copy
    assert asked == ["t1"]
    assert search.get("t1", "a1", a.id).access_count == 1  # type: ignore[union-attr]


def test_a_count_asks_s3_nothing_when_the_copy_is_at_hand(
    bucket: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a function whose reads always ask S3, which has just read a memory
    a = memory_record("mem_aaaaaaaaaaaaaaaa", "counted without asking")
    _store(bucket, tmp_path, "w").put([StoredRecord(a, _vector())])
    reader = _store(bucket, tmp_path, "r")
    asked: list[str] = []
    etag = reader.files.etag
    monkeypatch.setattr(reader.files, "etag", lambda tenant: asked.append(tenant) or etag(tenant))
    assert reader.get("t1", "a1", a.id) is not None
    # WHEN it counts an access and a search
    reader.record_access("t1", "a1", [a.id], NOW)
    reader.record_search("t1", "a1", NOW, 1)
    # THEN only the read asked
    assert asked == ["t1"]

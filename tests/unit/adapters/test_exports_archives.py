"""The two export archives, one contract: a state is made once, replaced only from the version
read, listed per tenant newest first; a file written in parts by writers that take over from each
other's checkpoints is the bytes written, fetched only once finished. Then what each adds: the
local archive's private files and expiry, the S3 archive's parts, its pre-signed URL and its
conditional writes (moto's S3)."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.local_exports import LocalExportArchive
from agent_memory.adapters.s3_exports import MIN_PART_BYTES, S3ExportArchive
from agent_memory.errors import ConflictError
from agent_memory.governance.rules.export_jobs import ExportScope, ExportState, new_export_id
from agent_memory.ports.export_store import ExportArchive

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def state(tenant: str = "t1", at: datetime = NOW) -> ExportState:
    return ExportState(
        id=new_export_id(),
        tenant_id=tenant,
        scope=ExportScope(user_id="u1"),
        requested_by="k1",
        created_at=at,
        updated_at=at,
    )


@pytest.fixture
def s3() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("s3", region_name="us-east-1")
        client.create_bucket(Bucket="exports-bucket")
        yield client


@pytest.fixture(params=["local", "s3"])
def archive(request: pytest.FixtureRequest, tmp_path: Path) -> ExportArchive:
    if request.param == "local":
        return LocalExportArchive(tmp_path / "exports")
    return S3ExportArchive("exports-bucket", client=request.getfixturevalue("s3"))


def fetch(archive: ExportArchive, tenant: str, export_id: str) -> bytes:
    location = archive.location(tenant, export_id, 60)
    assert location is not None
    if location.path is not None:
        return Path(location.path).read_bytes()
    assert isinstance(archive, S3ExportArchive)
    key = f"exports/{tenant}/{export_id}.jsonl"
    body: bytes = archive._client.get_object(Bucket="exports-bucket", Key=key)["Body"].read()
    return body


def test_a_state_is_made_once_and_replaced_only_from_the_version_read(archive: ExportArchive) -> None:
    # GIVEN
    made = state()
    archive.create(made)
    found = archive.read("t1", made.id)
    assert found is not None and found[0] == made

    # WHEN two runs replace it from the same read
    tag = archive.replace(made.model_copy(update={"status": "running"}), found[1])

    # THEN the second is refused, the first's stays, and a second create is refused too
    with pytest.raises(ConflictError):
        archive.replace(made.model_copy(update={"status": "failed"}), found[1])
    again = archive.read("t1", made.id)
    assert again is not None and (again[0].status, again[1]) == ("running", tag)
    with pytest.raises(ConflictError):
        archive.create(made)


def test_a_state_is_read_and_listed_by_its_tenant_only(archive: ExportArchive) -> None:
    # GIVEN two exports of t1 and one of t2
    older, newer, other = state(at=NOW - timedelta(hours=1)), state(), state("t2")
    for made in (older, newer, other):
        archive.create(made)
    # WHEN / THEN
    assert archive.read("t2", older.id) is None
    assert archive.read("t1", new_export_id()) is None
    assert [s.id for s in archive.recent("t1", 10)] == [newer.id, older.id]
    assert [s.id for s in archive.recent("t1", 1)] == [newer.id]
    assert [s.id for s in archive.recent("t2", 10)] == [other.id]
    assert archive.recent("t3", 10) == []


def test_writers_that_take_over_from_checkpoints_write_the_bytes_written(archive: ExportArchive) -> None:
    # GIVEN a writer that checkpoints after 6 MiB, writes more, and dies
    made = state()
    part = b"x" * 1023 + b"\n"
    first = archive.writer("t1", made.id, None)
    for _ in range(6 * 1024):
        first.write(part)
    checkpoint = first.checkpoint()
    assert checkpoint is not None
    first.write(b"lost after the checkpoint\n")
    assert archive.location("t1", made.id, 60) is None

    # WHEN a second writer takes over from the checkpoint and finishes
    second = archive.writer("t1", made.id, checkpoint)
    second.write(b"the end\n")
    size = second.finish()

    # THEN the file is what was written up to the checkpoint, then what the second wrote
    content = fetch(archive, "t1", made.id)
    assert content == part * 6 * 1024 + b"the end\n"
    assert size == len(content)


def test_a_small_file_is_one_part_and_an_aborted_one_is_gone(archive: ExportArchive) -> None:
    # GIVEN
    small, dropped = state(), state()
    writer = archive.writer("t1", small.id, None)
    writer.write(b'{"type":"export"}\n')
    # WHEN
    writer.finish()
    abandoned = archive.writer("t1", dropped.id, None)
    abandoned.write(b"half")
    abandoned.abort()
    # THEN
    assert fetch(archive, "t1", small.id) == b'{"type":"export"}\n'
    assert archive.location("t1", dropped.id, 60) is None


def test_the_s3_writer_checkpoints_only_when_its_buffer_can_be_a_part(s3: Any) -> None:
    # GIVEN
    archive = S3ExportArchive("exports-bucket", client=s3)
    writer = archive.writer("t1", new_export_id(), None)
    writer.write(b"x" * (MIN_PART_BYTES - 1))
    # WHEN / THEN under 5 MiB it cannot (only a last part may be smaller); at 5 MiB it uploads it
    assert writer.checkpoint() is None
    writer.write(b"x")
    checkpoint = writer.checkpoint()
    assert checkpoint is not None and len(checkpoint["parts"]) == 1 and checkpoint["size"] == MIN_PART_BYTES
    assert writer.checkpoint() == checkpoint  # nothing buffered: the same position


def test_the_s3_location_is_a_sigv4_url_of_the_file_valid_for_the_ttl(s3: Any) -> None:
    # GIVEN a finished export, in an archive with its own client
    archive = S3ExportArchive("exports-bucket", region="us-east-1")
    made = state()
    writer = archive.writer("t1", made.id, None)
    writer.write(b"{}\n")
    writer.finish()
    # WHEN
    location = archive.location("t1", made.id, 600)
    # THEN
    assert location is not None and location.url is not None and location.expires_at is not None
    query = parse_qs(urlsplit(location.url).query)
    assert query["X-Amz-Expires"] == ["600"] and query["X-Amz-Algorithm"] == ["AWS4-HMAC-SHA256"]
    assert urlsplit(location.url).path.endswith(f"exports/t1/{made.id}.jsonl")


def test_local_exports_are_the_owners_alone_and_expire(tmp_path: Path) -> None:
    # GIVEN an export finished, and one made long ago
    archive = LocalExportArchive(tmp_path / "exports", expiry_days=7)
    fresh, old = state(), state()
    for made in (fresh, old):
        archive.create(made)
        writer = archive.writer("t1", made.id, None)
        writer.write(b"{}\n")
        writer.finish()
    week_ago = (datetime.now(UTC) - timedelta(days=8)).timestamp()
    os.utime(tmp_path / "exports" / "t1" / f"{old.id}.json", (week_ago, week_ago))

    # WHEN the tenant's exports are listed
    listed = archive.recent("t1", 10)

    # THEN the old one is gone, file and state; the fresh one's files are private
    assert [s.id for s in listed] == [fresh.id]
    assert sorted(
        p.name for p in (tmp_path / "exports" / "t1").iterdir() if not p.name.endswith(".lock")
    ) == [
        f"{fresh.id}.json",
        f"{fresh.id}.jsonl",
    ]
    for path in (tmp_path / "exports" / "t1").iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE((tmp_path / "exports" / "t1").stat().st_mode) == 0o700

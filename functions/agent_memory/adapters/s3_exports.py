"""`ExportArchive` in the export bucket: ``exports/<tenant>/<id>.json`` (the job's state) and
``exports/<tenant>/<id>.jsonl`` (the file), fetched through a pre-signed URL.

The file is one multipart upload, written by the export's runs in turn: a part goes out whenever
`PART_BYTES` are buffered (so a writer holds at most one part in memory), and a checkpoint is the
upload id and the parts so far, made only when nothing is left in the buffer (S3 takes a part
under 5 MiB only as the last one). A run that died leaves an upload the next run goes on with
from the last checkpoint; one given up is aborted, and the bucket's lifecycle rule aborts any
left incomplete and deletes every export after its expiry, state included.

A state is replaced with ``If-Match`` on the ETag it was read at (a new one with
``If-None-Match: *``), so two runs of one export cannot both store theirs. Calls: GetObject,
PutObject (conditional), HeadObject, ListObjectsV2 (under the tenant's prefix only), the
multipart calls, and the pre-signing of a GetObject (no call). Errors name the operation and
S3's code, never a key's content.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.s3_errors import CHANGED, error_code, s3_error, unless_missing
from agent_memory.errors import ConfigurationError, ConflictError
from agent_memory.governance.rules.export_jobs import ExportState
from agent_memory.ports.export_store import ExportLocation

#: Bytes buffered before a part is uploaded (S3's minimum for all but the last part is 5 MiB).
PART_BYTES = 8 << 20
MIN_PART_BYTES = 5 << 20
#: States read to find a tenant's newest exports (by when each was last written).
MAX_LISTED = 100


class S3ExportArchive:
    """Export states and files in ``bucket`` under ``prefix`` (see the module docstring)."""

    def __init__(
        self,
        bucket: str,
        prefix: str = "exports/",
        client: Any | None = None,
        region: str | None = None,
        part_bytes: int = PART_BYTES,
    ) -> None:
        if not bucket:
            raise ConfigurationError("exports need their bucket (AGENT_MEMORY_EXPORT_BUCKET)")
        self.bucket = bucket
        self.prefix = prefix
        self._part_bytes = max(part_bytes, MIN_PART_BYTES)
        self._client = client or boto3.client(
            "s3",
            region_name=region,
            # SigV4: the only signature S3 accepts in newer regions, and on pre-signed URLs everywhere
            config=Config(signature_version="s3v4", retries={"mode": "standard", "max_attempts": 4}),
        )

    def _key(self, tenant_id: str, export_id: str, suffix: str) -> str:
        return f"{self.prefix}{tenant_id}/{export_id}{suffix}"

    def create(self, state: ExportState) -> None:
        self._put(state, {"IfNoneMatch": "*"})

    def read(self, tenant_id: str, export_id: str) -> tuple[ExportState, str] | None:
        def body_and_tag() -> tuple[bytes, str]:
            got = self._client.get_object(Bucket=self.bucket, Key=self._key(tenant_id, export_id, ".json"))
            return got["Body"].read(), str(got["ETag"])

        found = unless_missing("read an export", body_and_tag)
        if found is None:
            return None
        raw, tag = found
        state = ExportState.model_validate_json(raw)
        if state.tenant_id != tenant_id or state.id != export_id:
            return None
        return state, tag

    def replace(self, state: ExportState, tag: str) -> str:
        return self._put(state, {"IfMatch": tag})

    def _put(self, state: ExportState, condition: dict[str, str]) -> str:
        try:
            put = self._client.put_object(
                Bucket=self.bucket,
                Key=self._key(state.tenant_id, state.id, ".json"),
                Body=state.model_dump_json().encode("utf-8"),
                ContentType="application/json",
                **condition,
            )
        except ClientError as exc:
            if error_code(exc) in CHANGED:
                raise ConflictError("the export changed since it was read") from None
            raise s3_error("store an export", exc) from exc
        except BotoCoreError as exc:
            raise s3_error("store an export", exc) from exc
        return str(put["ETag"])

    def recent(self, tenant_id: str, limit: int) -> list[ExportState]:
        listed: list[tuple[datetime, str]] = []
        try:
            paginator = self._client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=f"{self.prefix}{tenant_id}/"):
                for item in page.get("Contents", []):
                    key = str(item["Key"])
                    if key.endswith(".json"):
                        listed.append((item["LastModified"], key))
        except ClientError as exc:
            raise s3_error("list exports", exc) from exc
        except BotoCoreError as exc:
            raise s3_error("list exports", exc) from exc
        listed.sort(reverse=True)
        states = []
        for _, key in listed[:MAX_LISTED]:
            export_id = key.rsplit("/", 1)[1].removesuffix(".json")
            found = self.read(tenant_id, export_id)
            if found is not None:
                states.append(found[0])
        states.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return states[:limit]

    def writer(self, tenant_id: str, export_id: str, resume: dict[str, Any] | None) -> S3ExportWriter:
        return S3ExportWriter(
            self._client, self.bucket, self._key(tenant_id, export_id, ".jsonl"), resume, self._part_bytes
        )

    def location(self, tenant_id: str, export_id: str, ttl_s: int) -> ExportLocation | None:
        key = self._key(tenant_id, export_id, ".jsonl")

        def signed_url() -> str:
            self._client.head_object(Bucket=self.bucket, Key=key)  # no URL for a file that is gone
            return str(
                self._client.generate_presigned_url(
                    "get_object",
                    Params={
                        "Bucket": self.bucket,
                        "Key": key,
                        "ResponseContentDisposition": f'attachment; filename="{export_id}.jsonl"',
                    },
                    ExpiresIn=ttl_s,
                )
            )

        url = unless_missing("find an export's file", signed_url)
        if url is None:
            return None
        return ExportLocation(url=url, expires_at=datetime.now(UTC) + timedelta(seconds=ttl_s))


class S3ExportWriter:
    """One export file as a multipart upload (`agent_memory.ports.export_store.ExportWriter`)."""

    def __init__(
        self, client: Any, bucket: str, key: str, resume: dict[str, Any] | None, part_bytes: int
    ) -> None:
        self._client = client
        self._bucket = bucket
        self._key = key
        self._part_bytes = part_bytes
        self._buffer = bytearray()
        if resume:
            self._upload_id = str(resume["upload_id"])
            self._parts: list[tuple[int, str]] = [(int(n), str(tag)) for n, tag in resume["parts"]]
            self._size = int(resume["size"])
        else:
            started = self._call(
                "start an export's file",
                "create_multipart_upload",
                Bucket=bucket,
                Key=key,
                ContentType="application/x-ndjson",
            )
            self._upload_id, self._parts, self._size = str(started["UploadId"]), [], 0

    def write(self, data: bytes) -> None:
        self._buffer += data
        if len(self._buffer) >= self._part_bytes:
            self._upload_part()

    def checkpoint(self) -> dict[str, Any] | None:
        if self._buffer and len(self._buffer) < MIN_PART_BYTES:
            return None  # only the last part may be smaller: wait for more
        if self._buffer:
            self._upload_part()
        return {"upload_id": self._upload_id, "parts": [list(p) for p in self._parts], "size": self._size}

    def finish(self) -> int:
        if self._buffer or not self._parts:
            self._upload_part()
        self._call(
            "complete an export's file",
            "complete_multipart_upload",
            Bucket=self._bucket,
            Key=self._key,
            UploadId=self._upload_id,
            MultipartUpload={"Parts": [{"PartNumber": n, "ETag": tag} for n, tag in self._parts]},
        )
        return self._size

    def abort(self) -> None:
        self._call(
            "abort an export's file",
            "abort_multipart_upload",
            Bucket=self._bucket,
            Key=self._key,
            UploadId=self._upload_id,
        )

    def _upload_part(self) -> None:
        number = len(self._parts) + 1
        body = bytes(self._buffer)
        part = self._call(
            "write an export's file",
            "upload_part",
            Bucket=self._bucket,
            Key=self._key,
            UploadId=self._upload_id,
            PartNumber=number,
            Body=body,
        )
        self._parts.append((number, str(part["ETag"])))
        self._size += len(body)
        self._buffer.clear()

    def _call(self, what: str, operation: str, **params: Any) -> dict[str, Any]:
        try:
            answer: dict[str, Any] = getattr(self._client, operation)(**params)
        except ClientError as exc:
            raise s3_error(what, exc) from exc
        except BotoCoreError as exc:
            raise s3_error(what, exc) from exc
        return answer

"""Each tenant's memory store as one file in an S3 bucket: read by ETag, written conditionally.

The I/O half of the serverless store (`adapters/s3_sqlite_store.py`): a file per tenant
under ``<prefix><tenant>.db``, downloaded when its ETag moved, uploaded with ``If-Match`` on the
ETag it was read at (``If-None-Match: *`` for a new one), so two functions that changed the same
tenant at once cannot both win: the second gets `FileChangedError`, reads the new file and does its
work again. S3 has been strongly consistent for reads after writes since 2020 and has taken
conditional writes since 2024; nothing else (no lock table, no queue) is needed.

Calls: HeadObject, GetObject, PutObject (conditional), ListObjectsV2 (the dispatcher's walk over
tenants). Errors name the operation and S3's code, never a key's content.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.s3_errors import CHANGED, error_code, s3_error, unless_missing
from agent_memory.errors import ConfigurationError

#: Suffix of a tenant's file.
SUFFIX = ".db"


class FileChangedError(Exception):
    """Another writer stored the tenant's file since it was read (a failed precondition)."""


class S3TenantFiles:
    """The tenants' files in ``bucket`` under ``prefix``."""

    def __init__(
        self, bucket: str, prefix: str = "stores/", client: Any | None = None, region: str | None = None
    ) -> None:
        if not bucket:
            raise ConfigurationError("the serverless store needs its bucket (AGENT_MEMORY_STORE_BUCKET)")
        self.bucket = bucket
        self.prefix = prefix
        self._client = client or boto3.client(
            "s3", region_name=region, config=Config(retries={"mode": "standard", "max_attempts": 4})
        )

    def key(self, tenant_id: str) -> str:
        return f"{self.prefix}{tenant_id}{SUFFIX}"

    def etag(self, tenant_id: str) -> str | None:
        """The file's ETag, or None when the tenant has no file yet."""
        head = self._read("head_object", tenant_id)
        return None if head is None else str(head["ETag"])

    def download(self, tenant_id: str, path: Path) -> str | None:
        """Write the tenant's file to ``path``; its ETag (None: there is none, nothing written)."""
        got = self._read("get_object", tenant_id)
        if got is None:
            return None
        partial = path.with_suffix(".part")
        with partial.open("wb") as out:
            for chunk in iter(lambda: got["Body"].read(1 << 20), b""):
                out.write(chunk)
        partial.replace(path)
        return str(got["ETag"])

    def upload(self, tenant_id: str, path: Path, read_etag: str | None) -> str:
        """Store ``path`` as the tenant's file if it is still the one read (``read_etag``; None:
        there was none); the new ETag, or `FileChangedError`."""
        condition = {"IfMatch": read_etag} if read_etag is not None else {"IfNoneMatch": "*"}
        try:
            with path.open("rb") as body:
                put = self._client.put_object(
                    Bucket=self.bucket, Key=self.key(tenant_id), Body=body, **condition
                )
        except ClientError as exc:
            if error_code(exc) in CHANGED:
                raise FileChangedError(tenant_id) from None
            raise s3_error("store a tenant's store", exc) from exc
        except BotoCoreError as exc:
            raise s3_error("store a tenant's store", exc) from exc
        return str(put["ETag"])

    def _read(self, operation: str, tenant_id: str) -> dict[str, Any] | None:
        """HeadObject or GetObject of the tenant's file; None when there is none."""
        call = getattr(self._client, operation)
        answer: dict[str, Any] | None = unless_missing(
            "read a tenant's store", lambda: call(Bucket=self.bucket, Key=self.key(tenant_id))
        )
        return answer

    def tenants(self) -> Iterator[str]:
        """Every tenant with a file, in key order."""
        paginator = self._client.get_paginator("list_objects_v2")
        try:
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.prefix):
                for item in page.get("Contents", []):
                    name = str(item["Key"])[len(self.prefix) :]
                    if name.endswith(SUFFIX) and "/" not in name:
                        yield name[: -len(SUFFIX)]
        except ClientError as exc:
            raise s3_error("list the tenants' stores", exc) from exc
        except BotoCoreError as exc:
            raise s3_error("list the tenants' stores", exc) from exc

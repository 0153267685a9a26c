"""AWS Signature Version 4 for deployments that put IAM auth in front of the API.

The only client module that imports boto3/botocore, and only when a `SigV4Auth` is built: the
rest of the client works without them installed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The headers SigV4 adds; everything else the request sends is signed as is.
_ADDED = frozenset({"authorization", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256"})


class SigV4Auth:
    """Signs each attempt with the credentials of a boto3 session (the default chain unless
    ``session`` is given). ``service`` is ``execute-api`` for API Gateway."""

    def __init__(self, region: str | None = None, service: str = "execute-api", session: Any = None) -> None:
        try:
            import boto3
            from botocore.auth import SigV4Auth as _Signer
            from botocore.awsrequest import AWSRequest
        except ImportError as exc:  # pragma: no cover - boto3 is a dependency of the package
            raise ImportError("SigV4 signing needs boto3: pip install boto3") from exc
        session = session or boto3.Session()
        credentials = session.get_credentials()
        if credentials is None:
            raise ValueError("no AWS credentials found for SigV4 signing")
        region = region or session.region_name
        if not region:
            raise ValueError("SigV4 signing needs a region (argument, AWS_REGION or the profile)")
        self._credentials = credentials
        self._region = region
        self._service = service
        self._signer_cls = _Signer
        self._request_cls = AWSRequest

    def headers(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes | None
    ) -> Mapping[str, str]:
        request = self._request_cls(method=method, url=url, data=body or b"", headers=dict(headers))
        frozen = self._credentials.get_frozen_credentials()  # refreshes temporary credentials
        self._signer_cls(frozen, self._service, self._region).add_auth(request)
        return {k: v for k, v in request.headers.items() if k.lower() in _ADDED}

    def __repr__(self) -> str:
        return f"SigV4Auth(region={self._region!r}, service={self._service!r})"

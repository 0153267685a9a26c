"""Tenants' provider keys in AWS Secrets Manager, for the deployed stack.

One secret per tenant, named ``{prefix}/tenants/{tenant_id}/provider-key`` (fixed text on both
sides of the id, so two ids never share a name; names are case-sensitive, and ``/`` or ``..`` mean
nothing special to Secrets Manager). Secrets Manager encrypts it with KMS (``kms_key_id``, or the
account's ``aws/secretsmanager`` key), and IAM can scope each function to ``{prefix}/tenants/*``.

The SecretString is JSON ``{"value", "last4", "set_at"}``: what may be shown of the key travels with
it, not in tags or a description, which ``ListSecrets`` and ``DescribeSecret`` would show to anyone
allowed to list. Replacing a key is a new version (``PutSecretValue``); deleting one is immediate
(``ForceDeleteWithoutRecovery``), so a tenant that clears its key is not left with a recoverable
copy for a week. A secret someone scheduled for deletion by hand is treated as absent, and is
restored when the tenant sets a key again.

No value is ever logged or put in an error. botocore writes request and response bodies to its
DEBUG log (``botocore.endpoint``, ``botocore.parsers``), which a Lambda whose log level is set to
DEBUG would ship; a filter on those two loggers drops what they log while this adapter's call is in
flight (in that thread or task only: other clients' debug logs are untouched). An AWS failure
becomes a `DependencyError` naming the operation and the AWS error code only, raised outside the
``except`` block so the original error
(whose message could echo request parameters) is neither chained nor kept as its context.
"""

from __future__ import annotations

import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.secret_record import SecretRecordReads, decode_secret, encode_secret
from agent_memory.errors import DependencyError
from agent_memory.tenancy.rules.tenant_settings import SecretInfo

_NOT_FOUND = "ResourceNotFoundException"
_EXISTS = "ResourceExistsException"
#: What Secrets Manager answers for a secret that is scheduled for deletion.
_SCHEDULED_FOR_DELETION = "InvalidRequestException"
#: botocore's loggers that write request and response bodies (so a key) at DEBUG.
BODY_LOGGERS = ("botocore.endpoint", "botocore.parsers")
_IN_FLIGHT: ContextVar[bool] = ContextVar("secretsmanager_call_in_flight", default=False)


class _QuietWhileInFlight(logging.Filter):
    """Drops botocore's records while a call of this adapter runs in the current context."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not _IN_FLIGHT.get()


_QUIET = _QuietWhileInFlight()


def _silence_bodies() -> None:
    """Put the filter on `BODY_LOGGERS` once per process (adding it again is a no-op)."""
    for name in BODY_LOGGERS:
        logging.getLogger(name).addFilter(_QUIET)


class SecretsManagerSecretStore(SecretRecordReads):
    """`SecretStore` on Secrets Manager (see the module docstring)."""

    def __init__(
        self,
        prefix: str,
        client: Any | None = None,
        kms_key_id: str | None = None,
        region: str | None = None,
    ) -> None:
        self.prefix = prefix.rstrip("/")
        self.kms_key_id = kms_key_id
        self.region = region
        self._client = client
        _silence_bodies()

    @property
    def client(self) -> Any:
        """Made on first use, so a function that never reads a key never pays for the client."""
        if self._client is None:
            import boto3

            self._client = boto3.client("secretsmanager", region_name=self.region)
        return self._client

    def secret_name(self, tenant_id: str) -> str:
        return f"{self.prefix}/tenants/{tenant_id}/provider-key"

    def put_secret(self, tenant_id: str, value: str) -> SecretInfo:
        """Create the tenant's secret, or add a new version to it (restoring it first if it was
        scheduled for deletion)."""
        info, payload = encode_secret(value, datetime.now(UTC))
        name = self.secret_name(tenant_id)
        kms = {"KmsKeyId": self.kms_key_id} if self.kms_key_id else {}
        _, code = self._call("create_secret", Name=name, SecretString=payload, **kms)
        if code == _EXISTS:
            _, code = self._call("put_secret_value", SecretId=name, SecretString=payload)
        if code == _SCHEDULED_FOR_DELETION:
            self._restore_and_put(name, payload)
        elif code is not None:
            raise _dependency("store the provider key", code)
        return info

    def delete_secret(self, tenant_id: str) -> bool:
        """Delete the secret at once. Secrets Manager answers a forced delete of a name that does
        not exist with success, so whether there was a key is asked first (``DescribeSecret``,
        which reads no value). A secret scheduled for deletion by hand counts as absent (as it does
        for `get_secret`) but is purged all the same, so no copy is left to recover."""
        name = self.secret_name(tenant_id)
        described, code = self._call("describe_secret", SecretId=name)
        if code == _NOT_FOUND:
            return False
        if code is not None:
            raise _dependency("delete the provider key", code)
        _, code = self._call("delete_secret", SecretId=name, ForceDeleteWithoutRecovery=True)
        if code == _NOT_FOUND:
            return False
        if code is not None:
            raise _dependency("delete the provider key", code)
        return "DeletedDate" not in described

    def _restore_and_put(self, name: str, payload: str) -> None:
        """Bring a secret scheduled for deletion back and give it the new value. If the new value
        cannot be stored, the restored (old) key is deleted again rather than left live."""
        _, code = self._call("restore_secret", SecretId=name)
        if code is not None:
            raise _dependency("restore the provider key secret", code)
        _, code = self._call("put_secret_value", SecretId=name, SecretString=payload)
        if code is not None:
            self._call("delete_secret", SecretId=name, ForceDeleteWithoutRecovery=True)
            raise _dependency("store the provider key", code)

    def _read(self, tenant_id: str) -> tuple[str, SecretInfo] | None:
        """The tenant's secret, parsed; None when there is none (or it is scheduled for deletion)."""
        name = self.secret_name(tenant_id)
        answer, code = self._call("get_secret_value", SecretId=name)
        if code in (_NOT_FOUND, _SCHEDULED_FOR_DELETION):
            return None
        if code is not None:
            raise _dependency("read the provider key", code)
        return decode_secret(answer.get("SecretString"), f"the secret {name}")

    def _call(self, operation: str, **params: Any) -> tuple[dict[str, Any], str | None]:
        """Call ``operation``: its answer and None, or an empty answer and the AWS error code (the
        class name for an error raised before any request, such as a missing region or a parameter
        botocore refused). Only the code leaves here, never the error, whose message may echo the
        request's parameters."""
        in_flight = _IN_FLIGHT.set(True)
        try:
            return getattr(self.client, operation)(**params), None
        except ClientError as exc:
            return {}, str(exc.response.get("Error", {}).get("Code", "")) or "ClientError"
        except BotoCoreError as exc:
            return {}, type(exc).__name__
        finally:
            _IN_FLIGHT.reset(in_flight)


def _dependency(what: str, code: str) -> DependencyError:
    return DependencyError(f"Secrets Manager: cannot {what} ({code})")

"""What an S3 error means to the service, for every adapter that talks to S3 (the serverless
store's tenant files, the exports): a bucket that is missing or forbidden is the deployment's
configuration, anything else a dependency that may recover."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import ConfigurationError, DependencyError

#: The codes of an object that is not there (a GET answers NoSuchKey, a HEAD 404 or NotFound).
MISSING = ("404", "NoSuchKey", "NotFound")
#: The codes of a conditional write that lost to another (If-Match, If-None-Match).
CHANGED = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")

T = TypeVar("T")


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def s3_error(what: str, exc: ClientError | BotoCoreError) -> Exception:
    """The service's error for a failed S3 call that was trying to ``what``."""
    code = error_code(exc) if isinstance(exc, ClientError) else ""
    if code in ("AccessDenied", "403", "NoSuchBucket"):
        return ConfigurationError(f"cannot {what}: {code} (check the bucket and IAM)")
    return DependencyError(f"cannot {what}: {code or type(exc).__name__}")


def unless_missing(what: str, call: Callable[[], T]) -> T | None:
    """``call()``'s answer, or None when the object it reads is not there; any other failure is
    the service's error for trying to ``what`` (`s3_error`)."""
    try:
        return call()
    except ClientError as exc:
        if error_code(exc) in MISSING:
            return None
        raise s3_error(what, exc) from exc
    except BotoCoreError as exc:
        raise s3_error(what, exc) from exc

"""What an S3 error means to the service, for every adapter that talks to S3 (the serverless
store's tenant files, the exports): a bucket that is missing or forbidden is the deployment's
configuration, anything else a dependency that may recover."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import ConfigurationError, DependencyError

#: The codes of an object that is not there (a GET answers NoSuchKey, a HEAD 404 or NotFound).
MISSING = ("404", "NoSuchKey", "NotFound")
#: The codes of a conditional write that lost to another (If-Match, If-None-Match).
CHANGED = ("PreconditionFailed", "412", "ConditionalRequestConflict", "409")


def error_code(exc: ClientError) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def s3_error(what: str, exc: ClientError | BotoCoreError) -> Exception:
    """The service's error for a failed S3 call that was trying to ``what``."""
    code = error_code(exc) if isinstance(exc, ClientError) else ""
    if code in ("AccessDenied", "403", "NoSuchBucket"):
        return ConfigurationError(f"cannot {what}: {code} (check the bucket and IAM)")
    return DependencyError(f"cannot {what}: {code or type(exc).__name__}")

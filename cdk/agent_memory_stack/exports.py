"""Exports (``/v1/admin/exports``): a private bucket for the export files and their jobs' states
(`functions/agent_memory/adapters/s3_exports.py`), written by the summarize worker (which runs
the export jobs) and read by the API function (which starts them, shows their progress and
signs the download URL).

An export holds an end user's memory, so the bucket keeps it briefly: every object under
``exports/`` expires after `EXPIRY_DAYS` (an export is then not found), and an upload a run left
incomplete is aborted after a day. Private, encrypted, TLS-only, not versioned (an expired export
must not live on in an old version). Both functions may list the prefix: S3 answers a missing
export's state with 404, not 403, only to a role that may list.
"""

from __future__ import annotations

from aws_cdk import CfnOutput, Duration
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_s3 as s3
from constructs import Construct

from agent_memory_stack.buckets import grant_prefix, private_bucket
from agent_memory_stack.config import StackConfig
from agent_memory_stack.environment import settings_env

PREFIX = "exports/"
#: Days an export (its file and its state) is kept.
EXPIRY_DAYS = 7
#: The API function starts exports and reads them; the worker writes their files in parts and
#: gives a failed one up.
API_ACTIONS = ("s3:GetObject", "s3:PutObject")
WORKER_ACTIONS = ("s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload")


class ExportBucket(Construct):
    """The export bucket and the grants of the functions that use it."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self.bucket = private_bucket(
            self,
            "Exports",
            config,
            "the functions write every export and sign every download: the API logs who started and "
            "fetched which; server access logs would need a second bucket",
            lifecycle_rules=[
                s3.LifecycleRule(
                    id="ExpireExports",
                    prefix=PREFIX,
                    expiration=Duration.days(EXPIRY_DAYS),
                    abort_incomplete_multipart_upload_after=Duration.days(1),
                )
            ],
        )
        CfnOutput(self, "ExportBucket", value=self.bucket.bucket_name, description="Exports (kept 7 days)")

    def attach(self, api_function: lambda_.Function, worker: lambda_.Function) -> None:
        """The bucket's setting and grants on the API function and the summarize worker."""
        for function, actions in ((api_function, API_ACTIONS), (worker, WORKER_ACTIONS)):
            for name, value in settings_env(export_bucket=self.bucket.bucket_name).items():
                function.add_environment(name, value)
            role = function.role
            assert role is not None
            grant_prefix(
                role,
                self.bucket,
                PREFIX,
                actions,
                "one state and one file per export under the prefix, named by random ids made when "
                "an admin starts an export",
            )

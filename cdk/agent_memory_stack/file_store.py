"""The serverless store (``-c store=serverless``): each tenant's memory a SQLite file in one S3
bucket (`functions/agent_memory/adapters/s3_sqlite_store.py`), in place of the OpenSearch domain.

Nothing here is billed by the hour: the bucket costs what it stores and the requests made to it
(benchmarks/cost_model.py). The functions that keep memory may read and write objects under
``stores/`` and list the bucket (S3 answers a missing tenant's file with 404, not 403, only to a
role that may list it, with no prefix: `buckets.grant_prefix`); nothing else may. The bucket is
private, encrypted, TLS-only and not versioned: a forgotten memory must not live on in an old
version of its tenant's file.
"""

from __future__ import annotations

from aws_cdk import CfnOutput
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from agent_memory_stack.bedrock import embedding_environment
from agent_memory_stack.buckets import grant_prefix, private_bucket
from agent_memory_stack.config import StackConfig
from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import FunctionFactory
from agent_memory_stack.store_construct import DataAccess, StoreConstruct

PREFIX = "stores/"
OBJECT_ACTIONS = ("s3:GetObject", "s3:PutObject")


class FileStore(StoreConstruct):
    """The bucket of tenants' files, and the grants of the functions that use it."""

    #: No OpenSearch domain to watch (`Observability`).
    domain = None

    def __init__(
        self, scope: Construct, construct_id: str, *, config: StackConfig, factory: FunctionFactory
    ) -> None:
        super().__init__(scope, construct_id, config=config, factory=factory)
        self.bucket = private_bucket(
            self,
            "Stores",
            config,
            "the functions are the only clients of the tenants' files and each request is theirs; "
            "server access logs would need a second bucket billed for every write",
        )
        self.endpoint = self.bucket.bucket_name
        CfnOutput(self, "StoreBucket", value=self.bucket.bucket_name, description="The tenants' memory files")

    def environment(self, function: str = "") -> dict[str, str]:
        """Settings of a function that reads or writes memory (the same for every ``function``)."""
        return {
            **settings_env(store="s3", store_bucket=self.bucket.bucket_name, store_prefix=PREFIX),
            **embedding_environment(self.config),
        }

    def _grant(self, function: lambda_.IFunction, access: DataAccess) -> None:
        """Read (and unless ``read_only``, write) the tenants' files, and list them: S3 answers a
        missing file with 404 only to a role that may list, and a tenant's first write finds none.
        ``admin`` and ``reads_knowledge`` change nothing here (no index to make, no snapshot to close)."""
        role = function.role
        assert role is not None
        actions = ["s3:GetObject"] if access.read_only else list(OBJECT_ACTIONS)
        grant_prefix(
            role,
            self.bucket,
            PREFIX,
            actions,
            "one file per tenant under the prefix, made when the tenant first writes",
        )

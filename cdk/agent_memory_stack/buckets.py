"""The stack's private buckets (the serverless store's tenant files, the exports) and the one
shape of grant their functions get: objects under one prefix, and a listing of that prefix only."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.nag import acknowledge, as_finding


def private_bucket(
    scope: Construct,
    construct_id: str,
    config: StackConfig,
    access_logs_reason: str,
    lifecycle_rules: Sequence[s3.LifecycleRule] = (),
) -> s3.Bucket:
    """A bucket no one outside the account reaches: public access blocked, encrypted, TLS only,
    owner-enforced, unversioned, kept or emptied on delete as the stack keeps data.
    ``access_logs_reason`` says why it has no server access logs (cdk-nag's S1)."""
    bucket = s3.Bucket(
        scope,
        construct_id,
        block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
        encryption=s3.BucketEncryption.S3_MANAGED,
        enforce_ssl=True,
        object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
        versioned=False,
        lifecycle_rules=list(lifecycle_rules) or None,
        removal_policy=RemovalPolicy.RETAIN if config.retain_data else RemovalPolicy.DESTROY,
        auto_delete_objects=not config.retain_data,
    )
    acknowledge(bucket, "S1", access_logs_reason)
    return bucket


def grant_prefix(
    role: iam.IRole, bucket: s3.IBucket, prefix: str, actions: Sequence[str], objects_reason: str
) -> None:
    """``actions`` on the objects under ``prefix``, and ``ListBucket`` of that prefix only (S3
    answers a missing object with 404, not 403, only to a role that may list)."""
    objects = bucket.arn_for_objects(f"{prefix}*")
    role.add_to_principal_policy(iam.PolicyStatement(actions=list(actions), resources=[objects]))
    role.add_to_principal_policy(
        iam.PolicyStatement(
            actions=["s3:ListBucket"],
            resources=[bucket.bucket_arn],
            conditions={"StringLike": {"s3:prefix": [f"{prefix}*"]}},
        )
    )
    acknowledge(role, f"IAM5[Resource::{as_finding(bucket, objects)}]", objects_reason)

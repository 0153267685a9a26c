"""The stack's private buckets (the serverless store's tenant files, the exports) and the one
shape of grant their functions get: objects under one prefix, and a listing of the bucket."""

from __future__ import annotations

from collections.abc import Sequence

from aws_cdk import aws_iam as iam
from aws_cdk import aws_s3 as s3
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.nag import acknowledge, as_finding
from agent_memory_stack.removal import retained


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
        removal_policy=retained(config.retain_data),
        auto_delete_objects=not config.retain_data,
    )
    acknowledge(bucket, "S1", access_logs_reason)
    return bucket


def grant_prefix(
    role: iam.IRole, bucket: s3.IBucket, prefix: str, actions: Sequence[str], objects_reason: str
) -> None:
    """``actions`` on the objects under ``prefix``, and ``ListBucket`` of the bucket.

    The listing is not limited to the prefix: S3 answers a missing object with 404 only to a role
    that may list the bucket, and it asks that with no prefix, so a grant conditioned on
    ``s3:prefix`` does not count and a missing tenant's file would answer 403. A listing shows
    key names only, of a private bucket that holds this stack's files alone.
    """
    objects = bucket.arn_for_objects(f"{prefix}*")
    role.add_to_principal_policy(iam.PolicyStatement(actions=list(actions), resources=[objects]))
    role.add_to_principal_policy(
        iam.PolicyStatement(actions=["s3:ListBucket"], resources=[bucket.bucket_arn])
    )
    acknowledge(role, f"IAM5[Resource::{as_finding(bucket, objects)}]", objects_reason)

"""The stack with the serverless store (``-c store=serverless``): nothing billed by the hour, one
private bucket of tenants' files, and each memory function granted exactly its prefix."""

from __future__ import annotations

import json

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

#: Resource types billed while idle beyond storage (hourly, or per month whatever the use).
BILLED_IDLE = (
    "AWS::OpenSearchService::Domain",
    "AWS::OpenSearchServerless::Collection",
    "AWS::EC2::NatGateway",
    "AWS::EC2::VPCEndpoint",
    "AWS::ElastiCache::CacheCluster",
    "AWS::RDS::DBInstance",
    "AWS::KMS::Key",
)
MEMORY_FUNCTIONS = ("Api", "Search", "Writer", "Retention", "SummarizeDispatch", "SummarizeWorker")


def test_nothing_billed_while_idle_and_no_opensearch_anywhere(files: Synth) -> None:
    # WHEN
    types = {r["Type"] for r in files.resources.values()}
    # THEN
    assert not types & set(BILLED_IDLE)
    assert not any(t.startswith(("AWS::OpenSearch", "AWS::EC2::")) for t in types)
    assert "IndexBootstrap" not in files.stack.factory.functions


def test_the_bucket_is_private_encrypted_tls_only_and_unversioned(files: Synth) -> None:
    # WHEN
    [(logical, bucket)] = [(k, r) for k, r in files.of_type("AWS::S3::Bucket").items() if "FileStore" in k]
    props = bucket["Properties"]
    # THEN
    assert props["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0][
        "ServerSideEncryptionByDefault"
    ] == {"SSEAlgorithm": "AES256"}
    assert "VersioningConfiguration" not in props  # a forgotten memory lives in no old version
    policies = [
        p
        for p in files.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": logical}
    ]
    statements = policies[0]["Properties"]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in statements
    )


def test_each_memory_function_reads_and_writes_the_tenants_files_and_may_list_the_bucket(
    files: Synth,
) -> None:
    for name in MEMORY_FUNCTIONS:
        # WHEN
        statements = files.function_statements(name)
        s3 = [  # the tenants' files (not the export bucket)
            s
            for s in statements
            if any(a.startswith("s3:") for a in as_list(s["Action"]))
            and "FileStore" in json.dumps(s["Resource"])
        ]
        actions = {a for s in s3 for a in as_list(s["Action"])}
        env = files.function(name)["Environment"]["Variables"]
        # THEN
        writes = {"s3:PutObject"} if name != "SummarizeDispatch" else set()  # the dispatcher only reads
        assert actions == {"s3:GetObject", "s3:ListBucket", *writes}, name
        # a listing of the bucket with no condition: S3 answers a missing tenant's file with 404
        # only then (with a listing of the prefix alone it answers 403)
        listing = [s for s in s3 if as_list(s["Action"]) == ["s3:ListBucket"]]
        assert "Condition" not in listing[0], name
        assert (env["AGENT_MEMORY_STORE"], env["AGENT_MEMORY_STORE_PREFIX"]) == ("s3", "stores/"), name
        assert not any(a.startswith("es:") for s in statements for a in as_list(s["Action"])), name

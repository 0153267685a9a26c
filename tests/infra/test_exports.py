"""The export bucket: private, encrypted, TLS-only, unversioned, every export expired after a week
and every upload left incomplete aborted; only the API function and the summarize worker may
touch it, and only its ``exports/`` prefix."""

from __future__ import annotations

import json

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list, render

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)


def _bucket(synth: Synth) -> tuple[str, dict[str, object]]:
    logical = synth.logical_id(synth.stack.exports.bucket)
    return logical, synth.resources[logical]["Properties"]


def _export_statements(synth: Synth, name: str) -> list[dict[str, object]]:
    logical = synth.logical_id(synth.stack.exports.bucket)
    return [s for s in synth.function_statements(name) if logical in json.dumps(s["Resource"])]


@pytest.mark.parametrize("variant", ["synth", "files"])
def test_the_bucket_is_private_encrypted_tls_only_unversioned_and_expires_exports(
    request: pytest.FixtureRequest, variant: str
) -> None:
    # GIVEN
    synth: Synth = request.getfixturevalue(variant)
    # WHEN
    logical, props = _bucket(synth)
    # THEN
    assert props["PublicAccessBlockConfiguration"] == dict.fromkeys(
        ("BlockPublicAcls", "BlockPublicPolicy", "IgnorePublicAcls", "RestrictPublicBuckets"), True
    )
    encryption = props["BucketEncryption"]["ServerSideEncryptionConfiguration"][0]  # type: ignore[index]
    assert encryption["ServerSideEncryptionByDefault"] == {"SSEAlgorithm": "AES256"}
    assert "VersioningConfiguration" not in props  # an expired export lives in no old version
    [rule] = props["LifecycleConfiguration"]["Rules"]  # type: ignore[index]
    assert rule["Prefix"] == "exports/" and rule["Status"] == "Enabled"
    assert rule["ExpirationInDays"] == 7
    assert rule["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 1}
    policies = [
        p
        for p in synth.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": logical}
    ]
    statements = policies[0]["Properties"]["PolicyDocument"]["Statement"]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}}
        for s in statements
    )


def test_only_the_api_and_the_worker_reach_the_bucket_objects_under_its_prefix(synth: Synth) -> None:
    # GIVEN
    bucket = synth.logical_id(synth.stack.exports.bucket)
    expected = {
        "Api": {"s3:GetObject", "s3:PutObject", "s3:ListBucket"},
        "SummarizeWorker": {"s3:GetObject", "s3:PutObject", "s3:AbortMultipartUpload", "s3:ListBucket"},
    }
    for name in synth.stack.factory.functions:
        # WHEN
        statements = _export_statements(synth, name)
        env = synth.function(name)["Environment"]["Variables"]
        # THEN
        actions = {a for s in statements for a in as_list(s["Action"])}
        assert actions == expected.get(name, set()), name
        assert ("AGENT_MEMORY_EXPORT_BUCKET" in env) == (name in expected), name
        for statement in statements:
            resource = str(render(statement["Resource"]))
            if as_list(statement["Action"]) == ["s3:ListBucket"]:
                # the bucket, unconditioned: a missing export answers 404, not 403
                assert resource == f"<{bucket}.Arn>" and "Condition" not in statement, name
            else:
                assert resource == f"<{bucket}.Arn>/exports/*", name

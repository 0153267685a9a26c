"""The operator console as a static site: private bucket, CloudFront with origin access control,
strict response headers, the files and the API's URL uploaded, and CORS for that origin only.

Off by default (cdk.json as committed has no console); these tests synthesize the stack with
``console.enabled``, cdk-nag included.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from tests.infra.conftest import _synth
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, committed_context, render

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)


@pytest.fixture(scope="module")
def console(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synth]:
    context = {**committed_context(), "console": {"enabled": True}}
    yield _synth(tmp_path_factory.mktemp("console"), context, account="123456789012", region="eu-west-1")


def origin_of(synth: Synth) -> str:
    return f"https://<{synth.logical_id(synth.stack.console.distribution)}.DomainName>"


def test_the_console_is_off_by_default(synth: Synth) -> None:
    # WHEN / THEN
    assert synth.stack.console is None
    assert synth.of_type("AWS::CloudFront::Distribution") == {}
    assert "AGENT_MEMORY_CONSOLE_ORIGIN" not in synth.function("Api")["Environment"]["Variables"]


def test_the_bucket_is_private_encrypted_and_read_by_cloudfront_only(console: Synth) -> None:
    # WHEN
    bucket = console.props(console.stack.console.bucket)
    # THEN
    assert bucket["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True,
        "BlockPublicPolicy": True,
        "IgnorePublicAcls": True,
        "RestrictPublicBuckets": True,
    }
    assert bucket["BucketEncryption"]["ServerSideEncryptionConfiguration"][0][
        "ServerSideEncryptionByDefault"
    ] == {"SSEAlgorithm": "AES256"}
    (policy,) = [
        p["Properties"]["PolicyDocument"]["Statement"]
        for p in console.of_type("AWS::S3::BucketPolicy").values()
        if p["Properties"]["Bucket"] == {"Ref": console.logical_id(console.stack.console.bucket)}
    ]
    reads = [s for s in policy if s["Effect"] == "Allow" and "s3:GetObject" in s["Action"]]
    assert [s["Principal"] for s in reads] == [{"Service": "cloudfront.amazonaws.com"}]
    assert any(
        s["Effect"] == "Deny" and s["Condition"] == {"Bool": {"aws:SecureTransport": "false"}} for s in policy
    )
    (oac,) = console.of_type("AWS::CloudFront::OriginAccessControl").values()
    assert oac["Properties"]["OriginAccessControlConfig"]["SigningBehavior"] == "always"


def test_the_distribution_serves_https_only_with_strict_headers(console: Synth) -> None:
    # WHEN
    dist = console.props(console.stack.console.distribution)["DistributionConfig"]
    # THEN
    assert dist["DefaultRootObject"] == "index.html"
    behavior = dist["DefaultCacheBehavior"]
    assert behavior["ViewerProtocolPolicy"] == "redirect-to-https"
    (headers,) = console.of_type("AWS::CloudFront::ResponseHeadersPolicy").values()
    security = headers["Properties"]["ResponseHeadersPolicyConfig"]["SecurityHeadersConfig"]
    csp = security["ContentSecurityPolicy"]["ContentSecurityPolicy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    assert "connect-src 'self' https://*.execute-api.eu-west-1.amazonaws.com" in csp
    assert security["FrameOptions"]["FrameOption"] == "DENY"
    assert security["StrictTransportSecurity"]["AccessControlMaxAgeSec"] == 365 * 86400


def test_the_files_and_the_apis_url_are_uploaded_and_the_cache_invalidated(console: Synth) -> None:
    # GIVEN
    (deployment,) = console.of_type("Custom::CDKBucketDeployment").values()
    props = deployment["Properties"]
    # WHEN / THEN
    assert len(props["SourceObjectKeys"]) == 2  # the console folder and config.json
    assert props["DestinationBucketName"] == {"Ref": console.logical_id(console.stack.console.bucket)}
    assert props["DistributionPaths"] == ["/*"]
    markers = json.dumps(render(props.get("SourceMarkers", [])))
    assert console.logical_id(console.stack.api.rest_api) in markers  # config.json names the API URL
    outputs = console.raw["Outputs"]
    assert any(k.startswith("ConsoleUrl") for k in outputs)


def test_the_api_answers_cors_for_the_console_origin_only(console: Synth) -> None:
    # GIVEN
    origin = origin_of(console)
    # WHEN / THEN
    for name in ("Api", "Search"):
        assert (
            render(console.function(name)["Environment"]["Variables"]["AGENT_MEMORY_CONSOLE_ORIGIN"])
            == origin
        )
    options = [
        m["Properties"]
        for m in console.of_type("AWS::ApiGateway::Method").values()
        if m["Properties"]["HttpMethod"] == "OPTIONS"
    ]
    assert options, "preflight methods"
    for method in options:
        assert method["AuthorizationType"] == "NONE"  # a preflight carries no key
        assert method["Integration"]["Type"] == "MOCK"
        allowed = method["Integration"]["IntegrationResponses"][0]["ResponseParameters"]
        assert render(allowed["method.response.header.Access-Control-Allow-Origin"]) == f"'{origin}'"
        assert "Authorization" in allowed["method.response.header.Access-Control-Allow-Headers"]
    refused = next(
        r["Properties"]
        for r in console.of_type("AWS::ApiGateway::GatewayResponse").values()
        if r["Properties"]["ResponseType"] == "UNAUTHORIZED"
    )
    assert (
        render(refused["ResponseParameters"]["gatewayresponse.header.Access-Control-Allow-Origin"])
        == f"'{origin}'"
    )


def test_cfn_lint_finds_nothing_in_the_stack_with_the_console(console: Synth) -> None:
    # GIVEN
    from cfnlint.api import ManualArgs, lint_file

    # WHEN
    # W3005: CDK writes DependsOn next to GetAtt for the same resource; harmless and not ours.
    matches = lint_file(console.path, ManualArgs(ignore_checks=["W3005"], regions=["eu-west-1"]))
    # THEN
    assert [str(m) for m in matches] == []

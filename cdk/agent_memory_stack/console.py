"""The operator console as a static site: a private S3 bucket behind CloudFront (origin access
control), optional (``console.enabled`` in cdk.json, off by default).

The console's files are the same package data the local runtime serves at ``/console``
(``functions/agent_memory/console``), uploaded by a `BucketDeployment` together with a
``config.json`` that names the API. The page and the API are two origins: the API function
answers CORS for this distribution's origin only (`Api`, ``AGENT_MEMORY_CONSOLE_ORIGIN``), and
the page's Content-Security-Policy lets it talk to API Gateway and nothing else. No key is ever
part of the site: the operator pastes one into the page, and it stays in that browser tab.
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, DefaultStackSynthesizer, Duration, RemovalPolicy, Stack
from aws_cdk import aws_cloudfront as cloudfront
from aws_cdk import aws_cloudfront_origins as origins
from aws_cdk import aws_s3 as s3
from aws_cdk import aws_s3_deployment as s3deploy
from constructs import Construct

from agent_memory_stack.config import StackConfig
from agent_memory_stack.nag import acknowledge, as_finding, logical_id

#: The console's files, as packaged with the functions.
CONSOLE_DIR = Path(__file__).resolve().parents[2] / "functions" / "agent_memory" / "console"


def content_security_policy(region: str) -> str:
    """The page's policy: its own files, and requests to API Gateway of the stack's region."""
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src 'self' https://*.execute-api.{region}.amazonaws.com; "
        "form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
    )


class ConsoleSite(Construct):
    """Bucket, distribution and response headers; `publish` uploads the files once the API exists."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self.config = config
        self.bucket = s3.Bucket(
            self,
            "Files",
            block_public_access=s3.BlockPublicAccess.BLOCK_ALL,
            encryption=s3.BucketEncryption.S3_MANAGED,
            enforce_ssl=True,
            object_ownership=s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
            # Build output only: re-deployed from the repository at every deploy.
            removal_policy=RemovalPolicy.DESTROY,
            auto_delete_objects=True,
        )
        acknowledge(
            self.bucket,
            "S1",
            "the bucket holds only the console's static files, readable through CloudFront alone; "
            "every data access goes through the API, whose access logs record it",
        )
        headers = cloudfront.ResponseHeadersPolicy(
            self,
            "Headers",
            comment=f"{config.prefix} console: CSP, HSTS, no framing, no referrer",
            security_headers_behavior=cloudfront.ResponseSecurityHeadersBehavior(
                content_security_policy=cloudfront.ResponseHeadersContentSecurityPolicy(
                    content_security_policy=content_security_policy(Stack.of(self).region), override=True
                ),
                content_type_options=cloudfront.ResponseHeadersContentTypeOptions(override=True),
                frame_options=cloudfront.ResponseHeadersFrameOptions(
                    frame_option=cloudfront.HeadersFrameOption.DENY, override=True
                ),
                referrer_policy=cloudfront.ResponseHeadersReferrerPolicy(
                    referrer_policy=cloudfront.HeadersReferrerPolicy.NO_REFERRER, override=True
                ),
                strict_transport_security=cloudfront.ResponseHeadersStrictTransportSecurity(
                    access_control_max_age=Duration.days(365), include_subdomains=True, override=True
                ),
            ),
        )
        self.distribution = cloudfront.Distribution(
            self,
            "Distribution",
            comment=f"{config.prefix} operator console",
            default_root_object="index.html",
            price_class=cloudfront.PriceClass.PRICE_CLASS_100,
            http_version=cloudfront.HttpVersion.HTTP2_AND_3,
            minimum_protocol_version=cloudfront.SecurityPolicyProtocol.TLS_V1_2_2021,
            default_behavior=cloudfront.BehaviorOptions(
                origin=origins.S3BucketOrigin.with_origin_access_control(self.bucket),
                viewer_protocol_policy=cloudfront.ViewerProtocolPolicy.REDIRECT_TO_HTTPS,
                cache_policy=cloudfront.CachePolicy.CACHING_OPTIMIZED,
                response_headers_policy=headers,
                compress=True,
            ),
        )
        for finding, reason in (
            ("CFR1", "an operator tool used from wherever operators are; every request needs an API key"),
            ("CFR2", "no WAF by default (a static page with no data; the API behind it checks every key)"),
            (
                "CFR3",
                "the files are public build output; who read which memory is in the API's access logs",
            ),
            (
                "CFR4",
                "the default *.cloudfront.net certificate cannot pin TLS 1.2; a custom domain with its own "
                "certificate does (minimum_protocol_version is set for that case)",
            ),
        ):
            acknowledge(self.distribution, finding, reason)

    @property
    def origin(self) -> str:
        """The origin the API answers CORS for."""
        return f"https://{self.distribution.distribution_domain_name}"

    @property
    def url(self) -> str:
        return f"https://{self.distribution.distribution_domain_name}/"

    def publish(self, api_url: str) -> s3deploy.BucketDeployment:
        """Upload the console's files and ``config.json`` (the API's URL), then invalidate the cache."""
        deployment = s3deploy.BucketDeployment(
            self,
            "Publish",
            sources=[
                s3deploy.Source.asset(str(CONSOLE_DIR)),
                s3deploy.Source.json_data("config.json", {"api_url": api_url}),
            ],
            destination_bucket=self.bucket,
            distribution=self.distribution,
            distribution_paths=["/*"],
            prune=True,
            memory_limit=256,
        )
        self._acknowledge_uploader()
        return deployment

    def _acknowledge_uploader(self) -> None:
        """The upload runs in CDK's own singleton function (one per stack), with CDK's policy."""
        stack = Stack.of(self)
        (uploader,) = [c for c in stack.node.children if c.node.id.startswith("Custom::CDKBucketDeployment")]
        bucket = f"cdk-{DefaultStackSynthesizer.DEFAULT_QUALIFIER}-assets-{stack.account}-{stack.region}"
        assets = as_finding(self, f"arn:{Aws.PARTITION}:s3:::{bucket}/*")
        findings = {
            "L1": "CDK's BucketDeployment function pins its runtime with each CDK release",
            "IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]": (
                "CDK's BucketDeployment function logs with the AWS managed basic execution policy"
            ),
            "IAM5[Resource::*]": "CloudFront invalidations cannot be scoped to one distribution by resource",
            f"IAM5[Resource::{assets}]": "the uploader reads the console's asset from the CDK assets bucket",
            f"IAM5[Resource::<{logical_id(self.bucket)}.Arn>/*]": (
                "the uploader replaces every file of the console's own bucket, and only that bucket"
            ),
        }
        for action in ("s3:GetObject*", "s3:GetBucket*", "s3:List*", "s3:DeleteObject*", "s3:Abort*"):
            findings[f"IAM5[Action::{action}]"] = (
                "CDK's grant for copying the console's files into its bucket (read, list, replace, prune)"
            )
        for finding, reason in findings.items():
            acknowledge(uploader, finding, reason)

"""The HTTP API: API Gateway REST, a Lambda TOKEN authorizer over the tenants table, two functions.

Searches go to their own function (more memory, its own concurrency and latency metrics); every
other route, admin included, to the API function. Every route needs the authorizer; the routes
are explicit (no ``{proxy+}``), so an unknown path is answered by API Gateway without invoking
anything. Errors API Gateway produces itself (401, 403, 404, 413, 429, 5xx) have the same body
as the function's: ``{"error": {"code", "message", "details"}}``. CORS is off: the clients are
agents and servers, not browsers.
"""

from __future__ import annotations

import json

from aws_cdk import Duration, RemovalPolicy, Size
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_sqs as sqs
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from agent_memory.handlers.routes import ROUTES
from agent_memory_stack.bedrock import grant_invoke
from agent_memory_stack.environment import settings_env
from agent_memory_stack.function_factory import FUNCTIONS, retention_days, set_settings
from agent_memory_stack.idempotency import IdempotencyTable
from agent_memory_stack.nag import acknowledge
from agent_memory_stack.parts import StackParts
from agent_memory_stack.queues import grant_send
from agent_memory_stack.tables import on_demand_table, string_key
from agent_memory_stack.topics import TopicsTable

#: ``Authorization`` values worth invoking the authorizer for (RFC 6750 b64token); anything else
#: is refused with 401 by API Gateway itself. The scheme is case-insensitive, as in the function.
TOKEN_PATTERN = r"^[Bb][Ee][Aa][Rr][Ee][Rr] +[A-Za-z0-9._~+/=-]{1,512}$"

#: (status, code, message) of the responses API Gateway sends without calling a function. A
#: message starting with ``$`` is a VTL expression that is already a JSON string.
GATEWAY_ERRORS: dict[str, tuple[str | None, str, str]] = {
    "UNAUTHORIZED": ("401", "unauthorized", "missing or invalid API key"),
    "ACCESS_DENIED": ("403", "forbidden", "$context.error.messageString"),
    # API Gateway's answer to a path or method it does not have.
    "MISSING_AUTHENTICATION_TOKEN": ("404", "not_found", "no such route"),
    "REQUEST_TOO_LARGE": ("413", "payload_too_large", "$context.error.messageString"),
    "THROTTLED": ("429", "throttled", "too many requests, retry later"),
    "QUOTA_EXCEEDED": ("429", "throttled", "request quota exceeded"),
    "BAD_REQUEST_BODY": ("400", "validation_error", "the request body must be a JSON object"),
    "BAD_REQUEST_PARAMETERS": ("400", "validation_error", "$context.error.messageString"),
    "AUTHORIZER_FAILURE": ("500", "internal_error", "the API key could not be checked, retry later"),
    "AUTHORIZER_CONFIGURATION_ERROR": ("500", "internal_error", "internal error"),
    "INTEGRATION_TIMEOUT": ("504", "timeout", "the request took too long"),
    "DEFAULT_4XX": (None, "bad_request", "$context.error.messageString"),
    "DEFAULT_5XX": (None, "internal_error", "internal error"),
}

ACCESS_LOG_FIELDS = {
    "requestId": "$context.requestId",
    "time": "$context.requestTime",
    "ip": "$context.identity.sourceIp",
    "method": "$context.httpMethod",
    "resource": "$context.resourcePath",
    "path": "$context.path",
    "status": "$context.status",
    "latencyMs": "$context.responseLatency",
    "integrationLatencyMs": "$context.integrationLatency",
    "responseBytes": "$context.responseLength",
    "tenant": "$context.authorizer.tenant_id",
    "keyId": "$context.authorizer.principalId",
    "authorizerStatus": "$context.authorizer.status",
    "error": "$context.error.message",
    "xrayTraceId": "$context.xrayTraceId",
}


def error_template(code: str, message: str) -> str:
    """The contract's error body as a gateway response template."""
    quoted = message if message.startswith("$") else json.dumps(message)
    return f'{{"error": {{"code": "{code}", "message": {quoted}, "details": []}}}}'


class Api(Construct):
    """Tenants table, authorizer, API and search functions, and the REST API in front of them."""

    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        parts: StackParts,
        *,
        summarize_queue: sqs.IQueue,
        console_origin: str | None = None,
    ) -> None:
        super().__init__(scope, construct_id)
        self.config = config = parts.config
        writes = parts.writes
        #: The deployed console's origin (``https://...cloudfront.net``): the one origin CORS allows.
        self.console_origin = console_origin
        self.tenants = self._tenants_table()

        self.authorizer_function = parts.factory.build(
            self,
            "Authorizer",
            "API Gateway TOKEN authorizer: hashed API key -> tenant, plan, scopes",
            settings_env(
                tenants_table=self.tenants.table_name,
                # each answer names the tenant's usage-plan key (tenancy/rules/usage.py)
                usage_plans=config.prefix,
            ),
        )
        # The table only: `Table.grant` would add its indexes, which a lookup by hash never reads.
        # BatchGetItem: a key bound to agents also reads their read grants (adapters/dynamodb_keys.py).
        self.authorizer_function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:GetItem", "dynamodb:BatchGetItem"], resources=[self.tenants.table_arn]
            )
        )

        self.idempotency = IdempotencyTable(self, "Idempotency")
        self.topics = TopicsTable(self, "Topics", retain=config.retain_data)
        self.api_function = parts.store.build_function(
            self,
            "Api",
            "REST API: write, get, list, forget, stats, admin",
            {
                **writes.queue_environment(),
                **writes.pending_environment(),
                **settings_env(summarize_queue_url=summarize_queue.queue_url),
                **config.retention_environment(),
                **self.idempotency.environment(FUNCTIONS["Api"].timeout),
                **self.topics.environment(),
                **settings_env(tenants_table=self.tenants.table_name),
                # what a tenant may choose as its summary model: the one the worker may invoke
                **settings_env(summarizer="bedrock", bedrock_summary_model_id=config.summary_model_id),
                # redaction on write: the tenants that choose it add Comprehend's findings
                **settings_env(pii_comprehend=config.pii_comprehend),
            },
        )
        if config.pii_comprehend:
            self._grant_pii_detection(self.api_function)
        # /v1/admin/agents/{agent}/readers: read grants are items of the tenants table (the keys'
        # own items are never written by the API).
        self.api_function.add_to_role_policy(
            iam.PolicyStatement(
                actions=["dynamodb:UpdateItem", "dynamodb:Scan"], resources=[self.tenants.table_arn]
            )
        )
        writes.grant_enqueue(self.api_function)
        writes.grant_pending(self.api_function)
        self.idempotency.grant(self.api_function)  # Idempotency-Key on POST memories
        self.topics.grant_api(self.api_function)  # dictionaries, and unknown topics of writes
        parts.store.grant_data_access(self.api_function, reads_knowledge=True)  # a document's passages
        # POST /v1/admin/summarize re-runs a period, and a forget re-makes the summaries made
        # from the record: both queue jobs as the dispatcher does.
        grant_send(summarize_queue, self.api_function)

        self.search_function = parts.store.build_function(
            self,
            "Search",
            "REST API: search (embed the query, k-NN + BM25, rerank)",
            self.topics.environment(),
        )
        parts.store.grant_data_access(self.search_function, reads_knowledge=True)  # passages searched
        self.topics.grant_search(self.search_function)  # a query's words widened by the dictionary
        grant_invoke(self.search_function, self, config.embedding_model_id)

        if console_origin is not None:
            for function in (self.api_function, self.search_function):
                set_settings(function, console_origin=console_origin)

        self.rest_api = self._rest_api()
        self._routes()
        self._gateway_responses()
        self.usage_plans = self._usage_plans()
        if config.api.waf_rate_limit is not None:
            self._waf(config.api.waf_rate_limit)

    # --- tenants -------------------------------------------------------------------------------

    def _tenants_table(self) -> dynamodb.Table:
        """API keys by hash (adapters/dynamodb_keys.py). Kept by default: it holds every key."""
        table = on_demand_table(self, "Tenants", "key_hash", retain=self.config.retain_data)
        table.add_global_secondary_index(
            index_name="key_id-index",
            partition_key=string_key("key_id"),
            projection_type=dynamodb.ProjectionType.KEYS_ONLY,
        )
        return table

    # --- REST API ------------------------------------------------------------------------------

    def _rest_api(self) -> apigw.RestApi:
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=retention_days(self.config.log_retention_days),
            removal_policy=RemovalPolicy.DESTROY,
        )
        api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=self.config.prefix,
            description="agent-memory HTTP API v1",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            # Per-tenant limits: the authorizer names each request's API key (the tenant's), so
            # usage plans throttle and meter tenants one by one; clients never send a key.
            api_key_source_type=apigw.ApiKeySourceType.AUTHORIZER,
            # Compress responses of 1 KiB or more for clients that accept it (search results).
            min_compression_size=Size.kibibytes(1),
            # Execution logs (errors only) need the account-wide API Gateway logging role; it is
            # kept on deletion because other APIs of the account rely on the same setting.
            cloud_watch_role=True,
            cloud_watch_role_removal_policy=RemovalPolicy.RETAIN,
            deploy_options=apigw.StageOptions(
                stage_name=self.config.stage,
                throttling_rate_limit=self.config.api.rate_limit,
                throttling_burst_limit=self.config.api.burst_limit,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,
                metrics_enabled=False,
                tracing_enabled=True,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG_FIELDS)),
            ),
            # With the console deployed, browsers on its origin ask first (OPTIONS, answered here
            # without the authorizer: a preflight carries no key); the functions add the headers.
            default_cors_preflight_options=None
            if self.console_origin is None
            else apigw.CorsOptions(
                allow_origins=[self.console_origin],
                allow_methods=["GET", "POST", "DELETE"],
                allow_headers=["Authorization", "Content-Type", "Idempotency-Key"],
                max_age=Duration.minutes(10),
            ),
        )
        acknowledge(
            api,
            "IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
            "the account-level API Gateway logging role that execution logs require; AWS's managed "
            "policy is the documented one and only allows writing to CloudWatch Logs",
        )
        acknowledge(
            api,
            "APIG3",
            "no WAF by default (about $6 a month before requests): every route needs an API key "
            "checked by the authorizer, and stage throttling bounds the request rate",
        )
        acknowledge(
            api,
            "COG4",
            "clients are agents with API keys (hashed in the tenants table), not Cognito users; the "
            "TOKEN authorizer authenticates every method",
        )
        return api

    def _usage_plans(self) -> dict[str, apigw.UsagePlan]:
        """One usage plan per subscription plan; `agent-memory keys` enrolls each tenant's key."""
        plans: dict[str, apigw.UsagePlan] = {}
        stage = apigw.UsagePlanPerApiStage(api=self.rest_api, stage=self.rest_api.deployment_stage)
        for plan, limits in sorted(self.config.api.plan_limits.items()):
            plans[plan] = self.rest_api.add_usage_plan(
                f"{plan.capitalize()}UsagePlan",
                name=f"{self.config.prefix}-{plan}",
                description=f"agent-memory {self.config.stage}: each tenant on the {plan} plan",
                throttle=apigw.ThrottleSettings(rate_limit=limits.rate_limit, burst_limit=limits.burst_limit),
                quota=apigw.QuotaSettings(limit=limits.requests_per_day, period=apigw.Period.DAY)
                if limits.requests_per_day
                else None,
                api_stages=[stage],
            )
        return plans

    def _waf(self, limit: int) -> None:
        """A regional web ACL in front of the stage: one rate-based rule per client IP."""
        acl = wafv2.CfnWebACL(
            self,
            "WebAcl",
            scope="REGIONAL",
            default_action=wafv2.CfnWebACL.DefaultActionProperty(allow={}),
            visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                cloud_watch_metrics_enabled=True,
                metric_name=f"{self.config.prefix}-waf",
                sampled_requests_enabled=True,
            ),
            rules=[
                wafv2.CfnWebACL.RuleProperty(
                    name="RatePerIp",
                    priority=0,
                    action=wafv2.CfnWebACL.RuleActionProperty(block={}),
                    statement=wafv2.CfnWebACL.StatementProperty(
                        rate_based_statement=wafv2.CfnWebACL.RateBasedStatementProperty(
                            limit=limit, aggregate_key_type="IP"
                        )
                    ),
                    visibility_config=wafv2.CfnWebACL.VisibilityConfigProperty(
                        cloud_watch_metrics_enabled=True,
                        metric_name=f"{self.config.prefix}-rate-per-ip",
                        sampled_requests_enabled=True,
                    ),
                )
            ],
        )
        wafv2.CfnWebACLAssociation(
            self,
            "WebAclAssociation",
            resource_arn=self.rest_api.deployment_stage.stage_arn,
            web_acl_arn=acl.attr_arn,
        )

    def _routes(self) -> None:
        authorizer = apigw.TokenAuthorizer(
            self,
            "KeyAuthorizer",
            handler=self.authorizer_function,
            identity_source=apigw.IdentitySource.header("Authorization"),
            validation_regex=TOKEN_PATTERN,
            results_cache_ttl=Duration.seconds(self.config.api.authorizer_cache_s),
        )
        validator = self.rest_api.add_request_validator(
            "Validator", validate_request_body=True, validate_request_parameters=True
        )
        json_object = self.rest_api.add_model(
            "JsonObject",
            content_type="application/json",
            description="Any JSON object: the function validates the fields",
            schema=apigw.JsonSchema(schema=apigw.JsonSchemaVersion.DRAFT4, type=apigw.JsonSchemaType.OBJECT),
        )
        # One invoke permission per function for the whole API, not one per route (and one more
        # per route for the console's test invoke): a function's resource policy is limited to
        # 20 KB, which the API function's sixty-odd per-route statements had nearly filled.
        api = apigw.LambdaIntegration(self.api_function, scope_permission_to_method=False)
        search = apigw.LambdaIntegration(self.search_function, scope_permission_to_method=False)

        def method(
            resource: apigw.IResource,
            verb: str,
            integration: apigw.Integration,
            *,
            body: bool = False,
            path: tuple[str, ...] = (),
            query: tuple[str, ...] = (),
        ) -> None:
            params = {f"method.request.path.{p}": True for p in path}
            params.update({f"method.request.querystring.{q}": False for q in query})
            resource.add_method(
                verb,
                integration,
                authorizer=authorizer,
                authorization_type=apigw.AuthorizationType.CUSTOM,
                request_validator=validator,
                api_key_required=True,
                request_parameters=params or None,
                request_models={"application/json": json_object} if body else None,
            )

        # The route table of the functions (handlers/routes.py): which function serves which route.
        integrations = {"Api": api, "Search": search}
        resources: dict[str, apigw.IResource] = {"": self.rest_api.root}
        for route in ROUTES:
            parent = ""
            for segment in route.path.strip("/").split("/"):
                here = f"{parent}/{segment}"
                if here not in resources:
                    resources[here] = resources[parent].add_resource(segment)
                parent = here
            method(
                resources[route.path],
                route.method,
                integrations[route.function],
                body=route.body,
                path=route.path_parameters,
                query=route.query,
            )

    def _gateway_responses(self) -> None:
        for name, (status, code, message) in GATEWAY_ERRORS.items():
            headers = {"WWW-Authenticate": "'Bearer'"} if name == "UNAUTHORIZED" else {}
            if self.console_origin is not None:  # so the console can read why it was refused
                headers = {
                    **headers,
                    "Access-Control-Allow-Origin": f"'{self.console_origin}'",
                    "Vary": "'Origin'",
                }
            self.rest_api.add_gateway_response(
                f"{name.title().replace('_', '')}Response",
                type=apigw.ResponseType.of(name),
                status_code=status,
                response_headers=headers or None,
                templates={"application/json": error_template(code, message)},
            )

    @staticmethod
    def _grant_pii_detection(function: lambda_.IFunction) -> None:
        """``comprehend:DetectPiiEntities`` (adapters/comprehend_pii.py), which names no resource."""
        assert function.role is not None
        function.role.add_to_principal_policy(
            iam.PolicyStatement(actions=["comprehend:DetectPiiEntities"], resources=["*"])
        )
        acknowledge(
            function.role,
            "IAM5[Resource::*]",
            "X-Ray's PutTraceSegments and PutTelemetryRecords (active tracing) and Comprehend's "
            "DetectPiiEntities (redaction on write) support no resource-level permissions; every "
            "other statement names its resources",
        )

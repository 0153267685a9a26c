"""The REST API: routes, the TOKEN authorizer, validation, throttling, logs, error bodies, CORS off."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from tests.infra.support import CDK_MISSING, SKIP_REASON, Synth, as_list, render

from agent_memory.handlers.routes import ROUTES as ROUTE_TABLE

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

#: The functions' route table (handlers/routes.py): the stack builds API Gateway from it.
ROUTES = {(r.method, r.path): r.function for r in ROUTE_TABLE}


def _paths(synth: Synth) -> dict[str, str]:
    """Resource logical id -> full path."""
    resources = synth.of_type("AWS::ApiGateway::Resource")
    root = synth.logical_id(synth.stack.api.rest_api)

    def path(logical: str) -> str:
        props = resources[logical]["Properties"]
        parent = props["ParentId"]
        prefix = "" if parent == {"Fn::GetAtt": [root, "RootResourceId"]} else path(parent["Ref"])
        return f"{prefix}/{props['PathPart']}"

    return {logical: path(logical) for logical in resources}


def _methods(synth: Synth) -> dict[tuple[str, str], dict[str, object]]:
    paths = _paths(synth)
    return {
        (m["Properties"]["HttpMethod"], paths[m["Properties"]["ResourceId"]["Ref"]]): m["Properties"]
        for m in synth.of_type("AWS::ApiGateway::Method").values()
    }


def test_routes_are_explicit_and_search_has_its_own_function(synth: Synth) -> None:
    # GIVEN
    methods = _methods(synth)
    # WHEN / THEN
    # the two routes that embed a query run on the search function, every other on the API function
    assert {route for route, function in ROUTES.items() if function == "Search"} == {
        ("POST", "/v1/agents/{agent_id}/memories/search"),
        ("POST", "/v1/agents/{agent_id}/context"),
    }
    assert set(methods) == set(ROUTES), "no {proxy+}, no OPTIONS (CORS off)"
    for route, function in ROUTES.items():
        uri = render(methods[route]["Integration"]["Uri"])
        target = synth.logical_id(synth.stack.factory.functions[function])
        assert f"<{target}.Arn>" in uri, route
        assert methods[route]["Integration"]["Type"] == "AWS_PROXY"


def test_every_route_of_the_api_function_is_deployed() -> None:
    """A route added to the handler but not to API Gateway would answer 403 in AWS only."""
    # GIVEN
    from agent_memory.handlers.api import app

    # WHEN
    handled = {
        (r.method, re.sub(r"<(\w+)>", r"{\1}", r.path))
        for r in app._static_routes + app._dynamic_routes  # the resolver's registry of routes
    }
    # THEN
    assert handled == set(ROUTES)


def test_the_route_tables_query_parameters_are_the_ones_the_contract_documents() -> None:
    # GIVEN
    from agent_memory.handlers.api import openapi_json

    document = json.loads(openapi_json())
    # WHEN / THEN
    for route in ROUTE_TABLE:
        operation = document["paths"][route.path][route.method.lower()]
        documented = {p["name"] for p in operation.get("parameters", []) if p["in"] == "query"}
        assert set(route.query) == documented, (route.method, route.path)
        assert ("requestBody" in operation) == route.body, (route.method, route.path)


def test_every_method_needs_the_token_authorizer_and_is_validated(synth: Synth) -> None:
    # GIVEN
    authorizer_id = next(iter(synth.of_type("AWS::ApiGateway::Authorizer")))
    validator_id = next(iter(synth.of_type("AWS::ApiGateway::RequestValidator")))
    # WHEN / THEN
    for route, method in _methods(synth).items():
        assert method["AuthorizationType"] == "CUSTOM", route
        assert method["AuthorizerId"] == {"Ref": authorizer_id}, route
        assert method["RequestValidatorId"] == {"Ref": validator_id}, route
        if "{agent_id}" in route[1]:
            assert method["RequestParameters"]["method.request.path.agent_id"] is True
        if route[0] == "POST" and not route[1].endswith(("/v1/admin/retention", "/restore")):
            assert "application/json" in method["RequestModels"], route
    validator = synth.resources[validator_id]["Properties"]
    assert (validator["ValidateRequestBody"], validator["ValidateRequestParameters"]) == (True, True)
    models = synth.of_type("AWS::ApiGateway::Model")
    assert [json.loads(json.dumps(m["Properties"]["Schema"]))["type"] for m in models.values()] == ["object"]


def test_authorizer_is_a_cached_token_authorizer_on_the_authorization_header(synth: Synth) -> None:
    # GIVEN
    (authorizer,) = synth.of_type("AWS::ApiGateway::Authorizer").values()
    props = authorizer["Properties"]
    # WHEN / THEN
    assert props["Type"] == "TOKEN"
    assert props["IdentitySource"] == "method.request.header.Authorization"
    assert props["AuthorizerResultTtlInSeconds"] == 60
    assert f"<{synth.logical_id(synth.stack.api.authorizer_function)}.Arn>" in render(props["AuthorizerUri"])
    pattern = re.compile(props["IdentityValidationExpression"])
    assert pattern.match("Bearer amk_Zm9vYmFyLWJhei1xdXV4LTEyMzQ1Njc4OTAtX19f")
    assert pattern.match("bearer amk_abc")
    assert not pattern.match("Basic dXNlcjpwYXNz")
    assert not pattern.match("Bearer ")


def test_authorizer_reads_only_the_tenants_table(synth: Synth) -> None:
    # GIVEN
    tenants = synth.stack.api.tenants
    env = synth.function("Authorizer")["Environment"]["Variables"]
    # WHEN / THEN
    assert env["AGENT_MEMORY_TENANTS_TABLE"] == {"Ref": synth.logical_id(tenants)}
    dynamo = [
        s for s in synth.function_statements("Authorizer") if "dynamodb:GetItem" in as_list(s["Action"])
    ]
    assert dynamo == [
        {
            # the key by its hash, and the read grants of the agents a key is bound to
            "Action": ["dynamodb:GetItem", "dynamodb:BatchGetItem"],
            "Effect": "Allow",
            "Resource": {"Fn::GetAtt": [synth.logical_id(tenants), "Arn"]},
        }
    ]
    assert not [s for s in synth.function_statements("Authorizer") if "es:" in json.dumps(s["Action"])]


def test_tenants_table_keys_hashes_on_demand_with_pitr_kept_on_delete(synth: Synth) -> None:
    # GIVEN
    table = synth.resources[synth.logical_id(synth.stack.api.tenants)]
    props = table["Properties"]
    # WHEN / THEN
    assert props["KeySchema"] == [{"AttributeName": "key_hash", "KeyType": "HASH"}]
    assert props["BillingMode"] == "PAY_PER_REQUEST"
    assert props["PointInTimeRecoverySpecification"] == {"PointInTimeRecoveryEnabled": True}
    assert props["GlobalSecondaryIndexes"] == [
        {
            "IndexName": "key_id-index",
            "KeySchema": [{"AttributeName": "key_id", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }
    ]
    # kept on delete, but not after a failed first deploy (see test_retry.py)
    assert "DeletionProtectionEnabled" not in props
    assert table["DeletionPolicy"] == "RetainExceptOnCreate"


def test_stage_throttles_traces_and_writes_json_access_logs(synth: Synth) -> None:
    # GIVEN
    (stage,) = synth.of_type("AWS::ApiGateway::Stage").values()
    props = stage["Properties"]
    # WHEN / THEN
    assert props["StageName"] == "dev"
    assert props["TracingEnabled"] is True
    (settings,) = props["MethodSettings"]
    assert settings["HttpMethod"] == "*" and settings["ResourcePath"] == "/*"
    assert (settings["ThrottlingRateLimit"], settings["ThrottlingBurstLimit"]) == (50, 100)
    assert settings["LoggingLevel"] == "ERROR"
    assert settings["DataTraceEnabled"] is False
    access = props["AccessLogSetting"]
    assert access["DestinationArn"]["Fn::GetAtt"][0] in synth.of_type("AWS::Logs::LogGroup")
    fields = json.loads(access["Format"])
    assert {"requestId", "status", "latencyMs", "tenant", "error"} <= set(fields)
    (api,) = synth.of_type("AWS::ApiGateway::RestApi").values()
    assert api["Properties"]["EndpointConfiguration"] == {"Types": ["REGIONAL"]}


@pytest.mark.parametrize(
    ("response_type", "status", "code"),
    [
        ("UNAUTHORIZED", "401", "unauthorized"),
        ("ACCESS_DENIED", "403", "forbidden"),
        ("MISSING_AUTHENTICATION_TOKEN", "404", "not_found"),
        ("REQUEST_TOO_LARGE", "413", "payload_too_large"),
        ("THROTTLED", "429", "throttled"),
        ("BAD_REQUEST_BODY", "400", "validation_error"),
        ("DEFAULT_5XX", None, "internal_error"),
    ],
)
def test_gateway_errors_have_the_contract_error_body(
    synth: Synth, response_type: str, status: str | None, code: str
) -> None:
    # GIVEN
    responses = {
        r["Properties"]["ResponseType"]: r["Properties"]
        for r in synth.of_type("AWS::ApiGateway::GatewayResponse").values()
    }
    response = responses[response_type]
    # WHEN / THEN
    assert response.get("StatusCode") == status
    # API Gateway substitutes $context.error.messageString with a quoted JSON string.
    body = response["ResponseTemplates"]["application/json"].replace(
        "$context.error.messageString", '"quoted"'
    )
    assert json.loads(body) == {
        "error": {"code": code, "message": json.loads(body)["error"]["message"], "details": []}
    }
    assert isinstance(json.loads(body)["error"]["message"], str)


def test_unauthorized_tells_the_client_the_scheme(synth: Synth) -> None:
    # GIVEN
    (response,) = [
        r["Properties"]
        for r in synth.of_type("AWS::ApiGateway::GatewayResponse").values()
        if r["Properties"]["ResponseType"] == "UNAUTHORIZED"
    ]
    # WHEN / THEN
    assert response["ResponseParameters"] == {"gatewayresponse.header.WWW-Authenticate": "'Bearer'"}


def test_api_function_reaches_queue_pending_store_and_summarize_jobs_but_not_bedrock(synth: Synth) -> None:
    # GIVEN
    idempotency = {"Fn::GetAtt": [synth.logical_id(synth.stack.api.idempotency.table), "Arn"]}
    topics = {"Fn::GetAtt": [synth.logical_id(synth.stack.api.topics.table), "Arn"]}
    tenants = {"Fn::GetAtt": [synth.logical_id(synth.stack.api.tenants), "Arn"]}
    settings = {"Fn::GetAtt": [synth.logical_id(synth.stack.tenant_settings.table), "Arn"]}
    webhooks = {"Fn::GetAtt": [synth.logical_id(synth.stack.change_feed.table), "Arn"]}
    # the idempotency, topics, settings and webhooks tables' item calls are checked in
    # test_idempotency.py, test_topics.py, test_tenant_settings.py and test_change_feed.py, the
    # tenants table's in test_the_api_function_changes_read_grants_only
    kept = (idempotency, topics, tenants, settings, webhooks)
    statements = [s for s in synth.function_statements("Api") if s["Resource"] not in kept]
    # WHEN
    actions = {a for s in statements for a in as_list(s["Action"])}
    # THEN
    pending = {"dynamodb:BatchGetItem", "dynamodb:BatchWriteItem", "dynamodb:UpdateItem", "dynamodb:Query"}
    assert pending <= actions
    assert not {a for a in actions if a.startswith("dynamodb:") and a not in pending}
    assert not {a for a in actions if a.startswith("bedrock:")}
    sends = [s["Resource"] for s in statements if "sqs:SendMessage" in as_list(s["Action"])]
    assert {"Fn::GetAtt": [synth.logical_id(synth.stack.summaries.queue), "Arn"]} in sends
    env = synth.function("Api")["Environment"]["Variables"]
    assert env["AGENT_MEMORY_SUMMARIZE_QUEUE_URL"] == {"Ref": synth.logical_id(synth.stack.summaries.queue)}


def test_search_function_may_embed_with_the_configured_model_only(synth: Synth) -> None:
    # GIVEN
    bedrock = [
        s for s in synth.function_statements("Search") if "bedrock:InvokeModel" in as_list(s["Action"])
    ]
    # WHEN / THEN
    assert [render(s["Resource"]) for s in bedrock] == [
        "arn:<AWS::Partition>:bedrock:<AWS::Region>::foundation-model/amazon.titan-embed-text-v2:0"
    ]


def test_each_tenant_is_throttled_by_its_plans_usage_plan(synth: Synth) -> None:
    # GIVEN
    (api,) = synth.of_type("AWS::ApiGateway::RestApi").values()
    # WHEN / THEN
    assert api["Properties"]["ApiKeySourceType"] == "AUTHORIZER"
    methods = [m["Properties"] for m in synth.of_type("AWS::ApiGateway::Method").values()]
    assert all(m["ApiKeyRequired"] for m in methods if m["HttpMethod"] != "OPTIONS")
    plans = {
        p["Properties"]["UsagePlanName"]: p["Properties"]
        for p in synth.of_type("AWS::ApiGateway::UsagePlan").values()
    }
    assert set(plans) == {f"agent-memory-dev-{p}" for p in ("free", "starter", "pro", "unlimited")}
    assert plans["agent-memory-dev-free"]["Throttle"] == {"RateLimit": 5, "BurstLimit": 10}
    assert plans["agent-memory-dev-free"]["Quota"] == {"Limit": 10000, "Period": "DAY"}
    assert "Quota" not in plans["agent-memory-dev-unlimited"]
    env = synth.function("Authorizer")["Environment"]["Variables"]
    assert env["AGENT_MEMORY_USAGE_PLANS"] == "agent-memory-dev"


def test_an_optional_waf_rate_rule_guards_the_stage(tmp_path: Any) -> None:
    # GIVEN
    from tests.infra.conftest import _synth
    from tests.infra.support import committed_context

    synth = _synth(
        tmp_path, {**committed_context(), "api": {**committed_context()["api"], "waf_rate_limit": 2000}}
    )
    (acl,) = synth.of_type("AWS::WAFv2::WebACL").values()
    (rule,) = acl["Properties"]["Rules"]
    # WHEN / THEN
    assert rule["Statement"]["RateBasedStatement"] == {"Limit": 2000, "AggregateKeyType": "IP"}
    assert len(synth.of_type("AWS::WAFv2::WebACLAssociation")) == 1


def test_the_api_function_changes_read_grants_only(synth: Synth) -> None:
    # GIVEN
    tenants = {"Fn::GetAtt": [synth.logical_id(synth.stack.api.tenants), "Arn"]}
    # WHEN
    on_tenants = [s for s in synth.function_statements("Api") if tenants in as_list(s["Resource"])]
    # THEN an update (ADD/DELETE in a grant's set) and the admin's listing scan: no GetItem or
    # PutItem, so the API can neither read a key's item nor make one
    assert on_tenants == [
        {"Action": ["dynamodb:UpdateItem", "dynamodb:Scan"], "Effect": "Allow", "Resource": tenants}
    ]

"""The API Gateway TOKEN authorizer: ``Authorization: Bearer <key>`` -> tenant, plan, scopes.

API Gateway calls this with the header value (``authorizationToken``) and the ARN of the
method being called (``methodArn``). A known, active key gets an IAM policy that allows every
method of the same API and stage, ``principalId`` = the key id, and the caller as the
authorizer context (`Caller.to_authorizer`), which the API function reads back with
`Caller.from_authorizer`. The policy covers the whole API on purpose: API Gateway caches it per
token and reuses it for every route, so a narrower policy would deny the key's next route until
the cache expires. Which routes a key may use (scopes, agents, admin) is decided by the API
function from the context.

Anything else — no header, another scheme, an unknown or revoked key — raises
``Exception("Unauthorized")``: exactly that message is what API Gateway turns into a 401 (any
other failure becomes a 500, which is right for a key store that cannot be read: a client must
not conclude that its key is bad). Keys are never logged, nor their hashes.

The key store is the DynamoDB tenants table (``AGENT_MEMORY_TENANTS_TABLE``), or, when that is
not set, the local ``auth.db``, so `agent-memory invoke authorizer` works on a laptop against the
keys of `agent-memory keys create`.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerResponse,
    APIGatewayRouteArn,
    parse_api_gateway_arn,
)
from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.observability import MetricUnit, logger, metrics, tracer
from agent_memory.settings import get_settings
from agent_memory.tenancy.key_authenticator import KeyAuthenticator
from agent_memory.tenancy.rules.keys import bearer_token
from agent_memory.tenancy.rules.usage import usage_key

#: The one message API Gateway maps to 401 Unauthorized.
UNAUTHORIZED = "Unauthorized"


@cache
def authenticator() -> KeyAuthenticator:
    """Built on first use and kept for the container's life, with its cache."""
    return KeyAuthenticator(container.key_store())


def reset() -> None:
    """Forget the key store and its cache (tests, after changing the environment)."""
    authenticator.cache_clear()


def _refused(reason: str) -> None:
    logger.info("request refused", extra={"reason": reason})
    metrics.add_metric(name="AuthorizationsRefused", unit=MetricUnit.Count, value=1)


def _route(method_arn: Any) -> APIGatewayRouteArn | None:
    """The parsed ``methodArn``: ``arn:aws:execute-api:region:account:api/stage/VERB/path``."""
    if not isinstance(method_arn, str) or not method_arn.startswith("arn:"):
        return None
    try:
        route = parse_api_gateway_arn(method_arn)
    except IndexError:
        return None
    return route if route.api_id and route.stage else None


# Never the event (it holds the API key), whatever POWERTOOLS_LOGGER_LOG_EVENT says.
@logger.inject_lambda_context(clear_state=True, log_event=False)
@metrics.log_metrics
@tracer.capture_lambda_handler(capture_response=False)
def authorize(event: dict[str, Any], context: LambdaContext) -> dict[str, Any] | None:
    """The policy for the event's key, or None when the request must be refused."""
    route = _route(event.get("methodArn"))
    if route is None:
        # API Gateway always sends one; without it no policy can be scoped, so fail closed.
        logger.error("authorizer event without a valid methodArn")
        _refused("no methodArn")
        return None
    token = event.get("authorizationToken")
    key = bearer_token(token if isinstance(token, str) else None)
    if key is None:
        _refused("not a bearer token")
        return None
    caller = authenticator().authenticate(key)
    if caller is None:
        _refused("unknown or revoked key")
        return None

    logger.append_keys(tenant_id=caller.tenant_id, key_id=caller.key_id)
    logger.info("request authorized")
    policy = APIGatewayAuthorizerResponse(
        principal_id=caller.key_id,
        region=route.region,
        aws_account_id=route.aws_account_id,
        api_id=route.api_id,
        stage=route.stage,
        context=caller.to_authorizer(),
        partition=route.partition,
    )
    policy.allow_all_routes()  # arn:{partition}:execute-api:{region}:{account}:{api}/{stage}/*/*
    answer = policy.asdict()
    prefix = get_settings().usage_plans
    if prefix:  # throttled and metered against the tenant's plan's usage plan (tenancy/rules/usage.py)
        answer["usageIdentifierKey"] = usage_key(prefix, caller.tenant_id)
    return answer


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    """The Lambda entry point. The 401 is raised here, outside the Powertools decorators, so an
    expected refusal is not logged by the tracer as an error with a traceback."""
    policy = authorize(event, context)
    if policy is None:
        raise Exception(UNAUTHORIZED)  # API Gateway's contract: exactly this type and message
    return policy

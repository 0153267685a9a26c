"""The retention run: invoked daily by EventBridge Scheduler (or by hand, or the admin route).

Event: ``{}`` from the schedule, ``{"reason", "tenants": [...]}`` from a tenant's admin route
(anything else is ignored). It cleans up every tenant with records (or the tenants named), per its plan
(`agent_memory.governance.retention`), and returns what it did. Safe to run twice: the second run
finds nothing more to delete.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.typing import LambdaContext

from agent_memory import container
from agent_memory.observability import logger, metrics, tracer


@logger.inject_lambda_context(clear_state=True)
@metrics.log_metrics
@tracer.capture_lambda_handler
def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, Any]:
    tenants = event.get("tenants") if isinstance(event, dict) else None
    named = [t for t in tenants if isinstance(t, str)] if isinstance(tenants, list) else None
    return container.retention_service().run(named).as_dict()

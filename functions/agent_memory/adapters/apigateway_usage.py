"""Enrolling a tenant in its subscription plan's API Gateway usage plan (`tenancy.rules.usage`).

`enroll` makes sure the tenant's API key exists (named and valued by `tenancy.rules.usage`) and sits in
exactly one of the stage's usage plans, its plan's: a tenant moved to another plan leaves the
old one. Idempotent; run by ``agent-memory keys create`` and ``agent-memory keys enroll``.
"""

from __future__ import annotations

from typing import Any

import boto3
from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.tenancy.rules.usage import usage_key, usage_key_name, usage_plan_name


class ApiGatewayUsagePlans:
    def __init__(self, prefix: str, client: Any | None = None) -> None:
        self.prefix = prefix
        self._client = client

    @property
    def client(self) -> Any:
        if self._client is None:
            self._client = boto3.client("apigateway")
        return self._client

    def enroll(self, tenant_id: str, plan: str) -> str:
        """Put ``tenant_id``'s API key in ``plan``'s usage plan (only there); returns its id."""
        try:
            plans = self._plans()
            wanted = usage_plan_name(self.prefix, plan)
            if wanted not in plans:
                known = ", ".join(sorted(plans)) or "none"
                raise ConfigurationError(f"no usage plan {wanted!r} in this region (found: {known})")
            key_id = self._key(tenant_id)
            for name, plan_id in plans.items():
                members = self._members(plan_id)
                if name == wanted and key_id not in members:
                    self.client.create_usage_plan_key(usagePlanId=plan_id, keyId=key_id, keyType="API_KEY")
                elif name != wanted and key_id in members:
                    self.client.delete_usage_plan_key(usagePlanId=plan_id, keyId=key_id)
            return key_id
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"cannot enroll tenant {tenant_id!r} in its usage plan: {exc}") from exc

    def _plans(self) -> dict[str, str]:
        plans: dict[str, str] = {}
        for page in self.client.get_paginator("get_usage_plans").paginate():
            for item in page.get("items", []):
                if item["name"].startswith(f"{self.prefix}-"):
                    plans[item["name"]] = item["id"]
        return plans

    def _key(self, tenant_id: str) -> str:
        name = usage_key_name(self.prefix, tenant_id)
        found = self.client.get_api_keys(nameQuery=name, includeValues=False).get("items", [])
        for item in found:
            if item["name"] == name:
                return str(item["id"])
        made = self.client.create_api_key(name=name, value=usage_key(self.prefix, tenant_id), enabled=True)
        return str(made["id"])

    def _members(self, plan_id: str) -> set[str]:
        members: set[str] = set()
        for page in self.client.get_paginator("get_usage_plan_keys").paginate(usagePlanId=plan_id):
            members.update(item["id"] for item in page.get("items", []))
        return members

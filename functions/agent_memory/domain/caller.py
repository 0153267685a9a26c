"""Who is calling, as the authorizer established it.

Tenant, plan, scopes and the agents a key may touch come from the API Gateway authorizer context
(in AWS the Lambda authorizer; locally the runtime's key check), never from the request body or
path, so no client can name another tenant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agent_memory.errors import ForbiddenError, UnauthorizedError

ADMIN_SCOPE = "admin"
READ_SCOPE = "read"
WRITE_SCOPE = "write"
FORGET_SCOPE = "forget"
#: Put and delete the tenant's shared knowledge (documents); reading it needs only ``read``.
KNOWLEDGE_SCOPE = "knowledge"
#: What a new key gets unless told otherwise; admin is never a default.
DEFAULT_SCOPES = frozenset({READ_SCOPE, WRITE_SCOPE, FORGET_SCOPE})


@dataclass(frozen=True, slots=True)
class Caller:
    tenant_id: str
    key_id: str = "unknown"
    plan: str = "free"
    scopes: frozenset[str] = frozenset()
    #: Agents this key may touch; empty = every agent of the tenant.
    agents: frozenset[str] = frozenset()
    #: Other agents whose memory a key bound to ``agents`` may read (never write or forget): an
    #: admin granted one of its agents read access to them. Off (empty) unless granted.
    reads: frozenset[str] = frozenset()

    @classmethod
    def from_authorizer(cls, context: Mapping[str, Any] | None) -> Caller:
        """Authorizer context values are strings: lists travel space-separated."""
        if not context or not context.get("tenant_id"):
            raise UnauthorizedError("missing or invalid API key")
        return cls(
            tenant_id=str(context["tenant_id"]),
            key_id=str(context.get("key_id") or "unknown"),
            plan=str(context.get("plan") or "free"),
            scopes=frozenset(str(context.get("scopes") or "").split()),
            agents=frozenset(str(context.get("agents") or "").split()),
            reads=frozenset(str(context.get("reads") or "").split()),
        )

    def to_authorizer(self) -> dict[str, str]:
        return {
            "tenant_id": self.tenant_id,
            "key_id": self.key_id,
            "plan": self.plan,
            "scopes": " ".join(sorted(self.scopes)),
            "agents": " ".join(sorted(self.agents)),
            "reads": " ".join(sorted(self.reads)),
        }

    def require_agent(self, agent_id: str, scope: str | None = None) -> None:
        """A key bound to agents may touch only them, and read (``scope`` read) those it was
        granted read access to."""
        if not self.agents or agent_id in self.agents:
            return
        if scope == READ_SCOPE and agent_id in self.reads:
            return
        raise ForbiddenError("this key may not access that agent")

    def require_scope(self, scope: str) -> None:
        if scope not in self.scopes and ADMIN_SCOPE not in self.scopes:
            raise ForbiddenError(f"this key lacks the {scope!r} scope")

    def require(self, scope: str, agent_id: str | None = None) -> Caller:
        """This caller, if it holds ``scope`` and (when named) may use ``agent_id``."""
        self.require_scope(scope)
        if agent_id is not None:
            self.require_agent(agent_id, scope)
        return self

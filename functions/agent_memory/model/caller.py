"""Who is calling, as the authorizer established it.

Tenant, plan, scopes and the agents a key may touch come from the API Gateway authorizer context
(in AWS the Lambda authorizer; locally the runtime's key check), never from the request body or
path, so no client can name another tenant.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum, auto
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


class Reach(StrEnum):
    """Which of the tenant's agents a route touches: what an agent-bound key is checked against.

    Every route declares one (`handlers.routes.Route.reach`), and `Caller.authorize` is the one
    rule that decides on it, so a key bound to agents cannot reach past them through a route that
    forgot to check.
    """

    #: The agents named in the path (``agent_id``, and ``reader_id`` of a read grant).
    PATH = auto()
    #: The agent named by the body's ``agent_id``; a body naming none means every agent.
    BODY = auto()
    #: Every agent of the tenant (settings, webhooks, topic dictionary, runs of jobs for all).
    TENANT = auto()
    #: The tenant's shared data, read by every agent (shared knowledge, topics, the API document).
    SHARED = auto()
    #: Answers only with what belongs to the caller's own agents (the agent list, its exports).
    OWN = auto()


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

    def authorize(self, scope: str | None, reach: Reach, named: Sequence[str] = ()) -> Caller:
        """This caller, if it may use a route that needs ``scope`` (None: any key of the tenant)
        and touches ``reach``, naming the agents ``named`` (the path's or the body's).

        A key bound to agents may touch only those (and read those it was granted), never the
        whole tenant: a route of ``TENANT`` reach, or of ``BODY`` reach whose body names no
        agent, is refused to it, the admin scope notwithstanding.
        """
        if scope is not None:
            self.require_scope(scope)
        if reach is Reach.BODY and not named:
            reach = Reach.TENANT
        if reach is Reach.TENANT and self.agents:
            raise ForbiddenError("this key is bound to agents: it may not act on every agent of the tenant")
        if reach in (Reach.PATH, Reach.BODY):
            for agent_id in named:
                self.require_agent(agent_id, scope)
        return self

"""Every route of the HTTP API, once: its method, path, the capability (router) it belongs to,
its query parameters, whether it takes a JSON body, and so which function serves it.

Each capability is one router module in `handlers/` (`memories` -> `memory_routes.py`, ...).
Two Lambda functions serve them: **Search** (more memory, its own concurrency and latency
metrics) takes the `recall` routes, which embed a query; **Api** takes the rest. The CDK API
construct builds API Gateway's resources and methods from this table, each function's entry
point (`handlers.api.api_handler`, `handlers.api.search_handler`) includes the routers of its
capabilities, and a test holds the routers to the table: the table is where to look and the one
place to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

from agent_memory.model.caller import (
    ADMIN_SCOPE,
    FORGET_SCOPE,
    KNOWLEDGE_SCOPE,
    READ_SCOPE,
    WRITE_SCOPE,
    Reach,
)

Function = Literal["Api", "Search"]
Capability = Literal[
    "memories", "recall", "insight", "topics", "knowledge", "admin", "exports", "webhooks", "openapi"
]

#: Which function serves each capability's routes.
FUNCTION_OF: dict[Capability, Function] = {
    "memories": "Api",
    "recall": "Search",
    "insight": "Api",
    "topics": "Api",
    "knowledge": "Api",
    "admin": "Api",
    "exports": "Api",
    "webhooks": "Api",
    "openapi": "Api",
}


#: Path parameters that name an agent: a route of `Reach.PATH` touches each one its path has.
AGENT_PARAMETERS = ("agent_id", "reader_id")


@dataclass(frozen=True)
class Route:
    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    capability: Capability
    #: The scope a key needs (None: any key of the tenant), and which agents the route touches.
    scope: str | None
    reach: Reach
    query: tuple[str, ...] = ()
    body: bool = False

    @property
    def function(self) -> Function:
        return FUNCTION_OF[self.capability]

    @property
    def path_parameters(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{(\w+)\}", self.path))

    def match(self, method: str, path: str) -> dict[str, str] | None:
        """The path parameters (URL-decoded) when ``method`` and ``path`` are this route's."""
        if method != self.method:
            return None
        template, parts = self.path.strip("/").split("/"), path.strip("/").split("/")
        if len(template) != len(parts):
            return None
        found: dict[str, str] = {}
        for want, got in zip(template, parts, strict=True):
            if want.startswith("{"):
                if not got:
                    return None
                found[want[1:-1]] = unquote(got)
            elif want != got:
                return None
        return found

    def named_agents(self, parameters: dict[str, str]) -> tuple[str, ...]:
        """The agents a request of this route names in its path."""
        return tuple(parameters[name] for name in AGENT_PARAMETERS if name in parameters)


AGENT = "/v1/agents/{agent_id}"

R, W, F, K, ADMIN = READ_SCOPE, WRITE_SCOPE, FORGET_SCOPE, KNOWLEDGE_SCOPE, ADMIN_SCOPE
PATH, BODY, TENANT, SHARED, OWN = Reach.PATH, Reach.BODY, Reach.TENANT, Reach.SHARED, Reach.OWN

ROUTES: tuple[Route, ...] = (
    Route("POST", f"{AGENT}/memories", "memories", W, PATH, body=True),
    Route("GET", f"{AGENT}/memories", "memories", R, PATH, query=("grain", "cursor", "limit")),
    Route("GET", f"{AGENT}/memories/{{memory_id}}", "memories", R, PATH),
    Route("POST", f"{AGENT}/memories/{{memory_id}}/feedback", "memories", W, PATH, body=True),
    Route("GET", f"{AGENT}/memories/{{memory_id}}/history", "memories", R, PATH),
    Route("POST", f"{AGENT}/memories/{{memory_id}}/history/{{version}}/restore", "memories", ADMIN, PATH),
    Route("DELETE", f"{AGENT}/memories/{{memory_id}}", "memories", F, PATH),
    Route("DELETE", f"{AGENT}/memories", "memories", F, PATH, query=("user_id",)),
    Route("GET", f"{AGENT}/audit", "memories", R, PATH, query=("record_id", "cursor", "limit")),
    Route("GET", f"{AGENT}/stats", "memories", R, PATH),
    Route("POST", f"{AGENT}/memories/search", "recall", R, PATH, body=True),
    Route("POST", f"{AGENT}/context", "recall", R, PATH, body=True),
    Route("GET", "/v1/agents", "insight", R, OWN, query=("cursor", "limit")),
    Route("GET", f"{AGENT}/timeline", "insight", R, PATH, query=("since", "until")),
    Route("GET", f"{AGENT}/periods/{{grain}}/{{time_key}}", "insight", R, PATH),
    Route("GET", f"{AGENT}/stats/searches", "insight", R, PATH, query=("days",)),
    Route("GET", "/v1/topics", "topics", R, SHARED),
    Route("GET", "/v1/topics/proposals", "topics", R, SHARED, query=("limit",)),
    Route("PUT", "/v1/admin/topics", "topics", ADMIN, TENANT, body=True),
    Route("PUT", "/v1/knowledge/documents/{doc_id}", "knowledge", K, TENANT, body=True),
    Route("GET", "/v1/knowledge/documents", "knowledge", R, SHARED, query=("cursor", "limit")),
    Route("GET", "/v1/knowledge/documents/{doc_id}", "knowledge", R, SHARED),
    Route("GET", "/v1/knowledge/documents/{doc_id}/passages", "knowledge", R, SHARED),
    Route("DELETE", "/v1/knowledge/documents/{doc_id}", "knowledge", K, TENANT),
    Route("POST", "/v1/admin/summarize", "admin", ADMIN, TENANT, body=True),
    Route("POST", "/v1/admin/retention", "admin", ADMIN, TENANT),
    Route("POST", "/v1/admin/patterns", "admin", ADMIN, BODY, body=True),
    Route("PUT", "/v1/admin/agents/{agent_id}/readers/{reader_id}", "admin", ADMIN, PATH),
    Route("DELETE", "/v1/admin/agents/{agent_id}/readers/{reader_id}", "admin", ADMIN, PATH),
    Route("GET", "/v1/admin/agents/{agent_id}/readers", "admin", ADMIN, PATH),
    Route("GET", "/v1/admin/settings", "admin", ADMIN, TENANT),
    Route("GET", "/v1/admin/settings/history", "admin", ADMIN, TENANT, query=("cursor", "limit")),
    Route("PUT", "/v1/admin/settings", "admin", ADMIN, TENANT, body=True),
    Route("POST", "/v1/admin/exports", "exports", ADMIN, BODY, body=True),
    Route("GET", "/v1/admin/exports", "exports", ADMIN, OWN, query=("limit",)),
    Route("GET", "/v1/admin/exports/{export_id}", "exports", ADMIN, OWN),
    Route("GET", "/v1/admin/exports/{export_id}/download", "exports", ADMIN, OWN),
    Route("GET", "/v1/admin/webhooks", "webhooks", ADMIN, TENANT),
    Route("PUT", "/v1/admin/webhooks", "webhooks", ADMIN, TENANT, body=True),
    Route("DELETE", "/v1/admin/webhooks", "webhooks", ADMIN, TENANT),
    Route("GET", "/v1/openapi.json", "openapi", None, SHARED),
)


def capabilities_of(function: Function) -> tuple[Capability, ...]:
    """The capabilities (routers) one function serves, in table order."""
    return tuple(dict.fromkeys(r.capability for r in ROUTES if r.function == function))


def route_for(method: str, path: str) -> tuple[Route, dict[str, str]] | None:
    """The route a request is for, and its path parameters; None for no route of the table."""
    for route in ROUTES:
        parameters = route.match(method, path)
        if parameters is not None:
            return route, parameters
    return None

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


@dataclass(frozen=True)
class Route:
    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    capability: Capability
    query: tuple[str, ...] = ()
    body: bool = False

    @property
    def function(self) -> Function:
        return FUNCTION_OF[self.capability]

    @property
    def path_parameters(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{(\w+)\}", self.path))


AGENT = "/v1/agents/{agent_id}"

ROUTES: tuple[Route, ...] = (
    Route("POST", f"{AGENT}/memories", "memories", body=True),
    Route("GET", f"{AGENT}/memories", "memories", query=("grain", "cursor", "limit")),
    Route("GET", f"{AGENT}/memories/{{memory_id}}", "memories"),
    Route("POST", f"{AGENT}/memories/{{memory_id}}/feedback", "memories", body=True),
    Route("GET", f"{AGENT}/memories/{{memory_id}}/history", "memories"),
    Route("POST", f"{AGENT}/memories/{{memory_id}}/history/{{version}}/restore", "memories"),
    Route("DELETE", f"{AGENT}/memories/{{memory_id}}", "memories"),
    Route("DELETE", f"{AGENT}/memories", "memories", query=("user_id",)),
    Route("GET", f"{AGENT}/audit", "memories", query=("record_id", "cursor", "limit")),
    Route("GET", f"{AGENT}/stats", "memories"),
    Route("POST", f"{AGENT}/memories/search", "recall", body=True),
    Route("POST", f"{AGENT}/context", "recall", body=True),
    Route("GET", "/v1/agents", "insight", query=("cursor", "limit")),
    Route("GET", f"{AGENT}/timeline", "insight", query=("since", "until")),
    Route("GET", f"{AGENT}/periods/{{grain}}/{{time_key}}", "insight"),
    Route("GET", f"{AGENT}/stats/searches", "insight", query=("days",)),
    Route("GET", "/v1/topics", "topics"),
    Route("GET", "/v1/topics/proposals", "topics", query=("limit",)),
    Route("PUT", "/v1/admin/topics", "topics", body=True),
    Route("PUT", "/v1/knowledge/documents/{doc_id}", "knowledge", body=True),
    Route("GET", "/v1/knowledge/documents", "knowledge", query=("cursor", "limit")),
    Route("GET", "/v1/knowledge/documents/{doc_id}", "knowledge"),
    Route("GET", "/v1/knowledge/documents/{doc_id}/passages", "knowledge"),
    Route("DELETE", "/v1/knowledge/documents/{doc_id}", "knowledge"),
    Route("POST", "/v1/admin/summarize", "admin", body=True),
    Route("POST", "/v1/admin/retention", "admin"),
    Route("POST", "/v1/admin/patterns", "admin", body=True),
    Route("PUT", "/v1/admin/agents/{agent_id}/readers/{reader_id}", "admin"),
    Route("DELETE", "/v1/admin/agents/{agent_id}/readers/{reader_id}", "admin"),
    Route("GET", "/v1/admin/agents/{agent_id}/readers", "admin"),
    Route("GET", "/v1/admin/settings", "admin"),
    Route("GET", "/v1/admin/settings/history", "admin", query=("cursor", "limit")),
    Route("PUT", "/v1/admin/settings", "admin", body=True),
    Route("POST", "/v1/admin/exports", "exports", body=True),
    Route("GET", "/v1/admin/exports", "exports", query=("limit",)),
    Route("GET", "/v1/admin/exports/{export_id}", "exports"),
    Route("GET", "/v1/admin/exports/{export_id}/download", "exports"),
    Route("GET", "/v1/admin/webhooks", "webhooks"),
    Route("PUT", "/v1/admin/webhooks", "webhooks", body=True),
    Route("DELETE", "/v1/admin/webhooks", "webhooks"),
    Route("GET", "/v1/openapi.json", "openapi"),
)


def capabilities_of(function: Function) -> tuple[Capability, ...]:
    """The capabilities (routers) one function serves, in table order."""
    return tuple(dict.fromkeys(r.capability for r in ROUTES if r.function == function))

"""Every route of the HTTP API, once: its method, path, query parameters, whether it takes a JSON
body, and which function serves it.

Two Lambda functions serve the one resolver of `handlers.api`: **Search** (more memory, its own
concurrency and latency metrics) takes the routes that embed a query; **Api** takes the rest.
The CDK API construct builds API Gateway's resources and methods from this table, and a test
holds the resolver's routes to it, so the table is where to look and the one place to change.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Function = Literal["Api", "Search"]


@dataclass(frozen=True)
class Route:
    method: Literal["GET", "POST", "PUT", "DELETE"]
    path: str
    function: Function = "Api"
    query: tuple[str, ...] = ()
    body: bool = False

    @property
    def path_parameters(self) -> tuple[str, ...]:
        return tuple(re.findall(r"\{(\w+)\}", self.path))


AGENT = "/v1/agents/{agent_id}"

ROUTES: tuple[Route, ...] = (
    Route("GET", "/v1/agents", query=("cursor", "limit")),
    Route("POST", f"{AGENT}/memories", body=True),
    Route("GET", f"{AGENT}/memories", query=("grain", "cursor", "limit")),
    Route("DELETE", f"{AGENT}/memories", query=("user_id",)),
    Route("POST", f"{AGENT}/memories/search", "Search", body=True),
    Route("POST", f"{AGENT}/context", "Search", body=True),
    Route("GET", f"{AGENT}/memories/{{memory_id}}"),
    Route("DELETE", f"{AGENT}/memories/{{memory_id}}"),
    Route("GET", f"{AGENT}/stats"),
    Route("GET", f"{AGENT}/stats/searches", query=("days",)),
    Route("GET", f"{AGENT}/timeline", query=("since", "until")),
    Route("GET", f"{AGENT}/periods/{{grain}}/{{time_key}}"),
    Route("GET", f"{AGENT}/audit", query=("record_id", "cursor", "limit")),
    Route("GET", "/v1/openapi.json"),
    Route("POST", "/v1/admin/summarize", body=True),
    Route("POST", "/v1/admin/retention"),
    Route("PUT", "/v1/admin/topics", body=True),
    Route("GET", "/v1/topics"),
    Route("GET", "/v1/topics/proposals", query=("limit",)),
)

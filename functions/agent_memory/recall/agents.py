"""The tenant's agents: which agents have memory, for an operator picking one to look at."""

from __future__ import annotations

from agent_memory.ports import AgentListing, AgentPage, AgentRef, Clock


class AgentsService:
    def __init__(self, store: AgentListing, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    def list(
        self, tenant_id: str, limit: int, cursor: str | None, only: frozenset[str] = frozenset()
    ) -> AgentPage:
        """The tenant's agents with live memories, by id. A key bound to agents (``only``) sees
        just those agents, never the names of the others."""
        items: list[AgentRef] = []
        while True:
            page = self._store.list_agents(tenant_id, self._clock.now(), cursor=cursor, limit=limit)
            items += [a for a in page.agents if not only or a.agent_id in only]
            cursor = page.next_cursor
            # A bound key's page may filter down to nothing: read on rather than answer an
            # empty page with a cursor (bound keys name a few agents; pages stay cheap).
            if not only or cursor is None or len(items) >= limit:
                return AgentPage(agents=items, next_cursor=cursor)

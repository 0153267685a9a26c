"""agent-memory as LangGraph's long-term store, and a node that puts the turn's memory in the state.

    from langgraph.graph import StateGraph
    from agent_memory.client import MemoryClient
    from agent_memory.integrations.langgraph_store import AgentMemoryStore, memory_context_node

    store = AgentMemoryStore(MemoryClient(url, api_key=key))
    store.put(("support-bot", "u-7"), "launch", {"text": "The launch moved to March 3."})
    store.search(("support-bot", "u-7"), query="when is the launch?")
    graph = StateGraph(State).add_node("recall", memory_context_node(store.client)) ...
    graph.compile(store=store)

A namespace is ``(agent_id,)`` or ``(agent_id, user_id, *labels)``: the first label is the agent
whose memory it is, the second the end user (the service's ``user_id``, so an erasure of that
user removes the user's items), and any further labels narrow it like folders. A key is the
caller's: the item's namespace, key and value travel in the memory's metadata, its text is what
the service embeds, and the memory's own id, dated text and grain come back on each
`MemoryItem`. Every put is a write through the API (queued, then stored); the store waits for
its writes before it answers, so a ``get`` after a ``put`` sees it. Updating a key forgets the
memory it had (in the audit trail) and writes the new value; ``delete`` forgets it.

Memories written by other means (the REST API, the tools, an MCP agent) show up in a search of
``(agent_id,)`` or ``(agent_id, user_id)`` too, with their memory id as key and
``{"content", "text", "kind", "tags"}`` as value, and can be read and deleted by that id.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.store.base import (
    BaseStore,
    GetOp,
    InvalidNamespaceError,
    ListNamespacesOp,
    MatchCondition,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
)

from agent_memory.client import MemoryClient, NotFoundError
from agent_memory.contract.v1 import MemoryOut, SearchResult, WriteItem

#: Where an item's own namespace, key and value are kept in the memory's metadata.
META = "langgraph"
#: The most memories one search of the service returns (the API's ``max_results`` bound).
MAX_FETCH = 100
#: The most labels a namespace may have: one tag per label past the user, within the API's 20.
MAX_NAMESPACE_DEPTH = 2 + 18
_MEMORY_ID = re.compile(r"^[a-z]{1,8}_[a-z2-7]{16,64}$")
_PATH_PART = re.compile(r"([^.\[\]]+)|\[(\*|-?\d+)\]")


def _digest(kind: str, labels: Sequence[str]) -> str:
    """A tag (at most 64 characters, any label) naming one namespace or item exactly."""
    return f"{kind}:" + hashlib.sha256(json.dumps(list(labels)).encode()).hexdigest()[:32]


@dataclass(frozen=True)
class Scope:
    """A namespace (or namespace prefix) read as the service's coordinates."""

    namespace: tuple[str, ...]

    @classmethod
    def of(cls, namespace: Sequence[str]) -> Scope:
        if not namespace:
            raise InvalidNamespaceError("a namespace starts with the agent id: ('support-bot', user_id, ...)")
        if len(namespace) > MAX_NAMESPACE_DEPTH:
            raise InvalidNamespaceError(f"a namespace has at most {MAX_NAMESPACE_DEPTH} labels")
        return cls(tuple(namespace))

    @property
    def agent_id(self) -> str:
        return self.namespace[0]

    @property
    def user_id(self) -> str | None:
        return self.namespace[1] if len(self.namespace) > 1 else None

    @property
    def folder_tags(self) -> list[str]:
        """One tag per label past the user, so that a search of any deeper prefix is one filter."""
        return [_digest("lgns", self.namespace[:depth]) for depth in range(3, len(self.namespace) + 1)]

    def item_tag(self, key: str) -> str:
        return _digest("lg", [*self.namespace, key])

    def holds(self, namespace: tuple[str, ...]) -> bool:
        return namespace[: len(self.namespace)] == self.namespace


class MemoryItem(SearchItem):
    """A LangGraph item that also carries what the service says of it: the memory's id, its dated,
    grain-tagged ``text``, its grain and whether it still holds (``current``)."""

    __slots__ = ("current", "grain", "memory_id", "text")

    def __init__(
        self,
        *,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        memory_id: str,
        text: str,
        grain: str | None,
        current: bool,
        score: float | None = None,
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        self.memory_id = memory_id
        self.text = text
        self.grain = grain
        self.current = current


def _as_item(memory: SearchResult | MemoryOut, score: float | None) -> MemoryItem:
    """The memory as the item it was put as, or, for one written by other means, under its id
    (its namespace is filled in by the caller, who knows the scope it was found in)."""
    occurred = memory.occurred_at
    assert occurred is not None  # a memory (not a shared passage) always has a time
    meta = memory.metadata.get(META)
    if isinstance(meta, Mapping):
        namespace, key = tuple(meta["namespace"]), str(meta["key"])
        value, created = json.loads(meta["value"]), datetime.fromisoformat(meta["created_at"])
    else:
        namespace, key, created = (), memory.id, occurred
        value = {
            "content": memory.content,
            "text": memory.text,
            "kind": str(memory.kind),
            "tags": memory.tags,
        }
    return MemoryItem(
        namespace=namespace,
        key=key,
        value=value,
        created_at=created,
        updated_at=occurred,
        memory_id=memory.id,
        text=memory.text,
        grain=None if memory.grain is None else str(memory.grain),
        current=memory.current,
        score=score,
    )


def _path_values(value: Any, path: str) -> Iterator[Any]:
    """The values at a LangGraph index path (``"a.b"``, ``"a[0]"``, ``"a[*].b"``; ``"$"`` the whole)."""
    found = [value]
    for name, index in _PATH_PART.findall("" if path == "$" else path):
        step: list[Any] = []
        for node in found:
            if name and isinstance(node, Mapping) and name in node:
                step.append(node[name])
            elif index == "*" and isinstance(node, list):
                step.extend(node)
            elif index and index != "*" and isinstance(node, list) and -len(node) <= int(index) < len(node):
                step.append(node[int(index)])
        found = step
    yield from found


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for child in value.values():
            yield from _strings(child)
    elif isinstance(value, list):
        for child in value:
            yield from _strings(child)


def _text_of(value: Mapping[str, Any], fields: Sequence[str] | None) -> str:
    """What the service embeds for a value: the text at the index fields (default: every string of
    the value), else the value as JSON."""
    texts = [s for path in fields or ["$"] for v in _path_values(value, path) for s in _strings(v)]
    text = "\n".join(t for t in texts if t.strip())
    return text or json.dumps(value, sort_keys=True, ensure_ascii=False)


_OPERATORS: dict[str, Callable[[Any, Any], bool]] = {
    "$eq": lambda a, b: a == b,
    "$ne": lambda a, b: a != b,
    "$gt": lambda a, b: float(a) > float(b),
    "$gte": lambda a, b: float(a) >= float(b),
    "$lt": lambda a, b: float(a) < float(b),
    "$lte": lambda a, b: float(a) <= float(b),
}


def _holds(actual: Any, wanted: Any) -> bool:
    """LangGraph's filter semantics (its stores compare as PostgreSQL's JSONB does): an operator
    dict (``$eq``, ``$ne``, ``$gt``, ``$gte``, ``$lt``, ``$lte``) applies each operator, another
    dict is a containment match on a nested value, a list matches element by element."""
    if isinstance(wanted, Mapping):
        if any(str(k).startswith("$") for k in wanted):
            unknown = set(wanted) - set(_OPERATORS)
            if unknown:
                raise ValueError(f"unsupported filter operator(s): {', '.join(sorted(unknown))}")
            try:
                return all(_OPERATORS[op](actual, operand) for op, operand in wanted.items())
            except (TypeError, ValueError):  # a comparison of unlike values matches nothing
                return False
        return isinstance(actual, Mapping) and all(_holds(actual.get(k), v) for k, v in wanted.items())
    if isinstance(wanted, list | tuple):
        return (
            isinstance(actual, list | tuple)
            and len(actual) == len(wanted)
            and all(_holds(a, w) for a, w in zip(actual, wanted, strict=True))
        )
    return bool(actual == wanted)


def _matches(value: Mapping[str, Any], filter: Mapping[str, Any] | None) -> bool:
    return all(_holds(value.get(field), wanted) for field, wanted in (filter or {}).items())


class AgentMemoryStore(BaseStore):
    """A LangGraph ``BaseStore`` over the agent-memory API (see the module's docstring).

    ``index_fields`` are the value's fields whose text is embedded (LangGraph's index paths;
    default every string in the value); a put's own ``index`` list overrides them. ``index=False``
    is accepted but the service embeds every memory. TTLs are not supported: retention and
    per-kind TTLs are the service's (the tenant's settings).
    """

    supports_ttl = False

    def __init__(
        self,
        client: MemoryClient,
        *,
        index_fields: Sequence[str] | None = None,
        wait_timeout_s: float = 10.0,
    ) -> None:
        self.client = client
        self.index_fields = list(index_fields) if index_fields else None
        self.wait_timeout_s = wait_timeout_s

    # --- the two methods LangGraph asks of a store ---------------------------------------------

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Run a batch as LangGraph's own stores do: every read sees the store as it was before
        the batch, then the puts are applied, the last put of a key winning, and stored before
        the call returns."""
        results: list[Result] = []
        puts: dict[tuple[tuple[str, ...], str], PutOp] = {}
        for op in ops:
            if isinstance(op, PutOp):
                puts.pop((op.namespace, op.key), None)
                puts[(op.namespace, op.key)] = op
                results.append(None)
            else:
                results.append(self._read(op))
        self._put(puts.values())
        return results

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """`batch` on a worker thread: the client is synchronous and thread-safe."""
        return await asyncio.to_thread(self.batch, list(ops))

    # --- reads ---------------------------------------------------------------------------------

    def _read(self, op: Op) -> Result:
        if isinstance(op, GetOp):
            return self._get(op.namespace, op.key)
        if isinstance(op, SearchOp):
            return self._search(op)
        if isinstance(op, ListNamespacesOp):
            return self._list_namespaces(op)
        raise TypeError(f"not a store operation: {op!r}")

    def _find(self, namespace: tuple[str, ...], key: str) -> list[MemoryItem]:
        """Every live memory holding the item (one, unless a write raced another)."""
        scope = Scope.of(namespace)
        response = self.client.search(
            scope.agent_id,
            None,
            grain="working",
            tags=[scope.item_tag(key)],
            user_id=scope.user_id,
            max_results=MAX_FETCH,
        )
        items = [_as_item(hit, None) for hit in response.results]
        return [i for i in items if i.namespace == namespace and i.key == key]

    def _held(self, namespace: tuple[str, ...], key: str) -> list[MemoryItem]:
        """The memories holding the item, or the memory written by other means whose id is ``key``
        (in its agent's and user's namespace)."""
        found = self._find(namespace, key)
        if found or len(namespace) > 2 or not _MEMORY_ID.match(key):
            return found
        try:
            memory = self.client.get(namespace[0], key)
        except NotFoundError:
            return []
        if memory.metadata.get(META) is not None or memory.user_id != Scope.of(namespace).user_id:
            return []
        item = _as_item(memory, None)
        item.namespace = namespace
        return [item]

    def _get(self, namespace: tuple[str, ...], key: str) -> MemoryItem | None:
        return next(iter(self._held(namespace, key)), None)

    def _search(self, op: SearchOp) -> list[SearchItem]:
        scope = Scope.of(op.namespace_prefix)
        wanted = op.offset + op.limit
        folder = scope.folder_tags[-1:]
        response = self.client.search(
            scope.agent_id,
            op.query,
            grain="working",
            tags=folder,
            user_id=scope.user_id,
            max_results=MAX_FETCH if op.filter else max(1, min(MAX_FETCH, wanted)),
        )
        items = []
        for hit in response.results:
            item = _as_item(hit, hit.score if op.query else None)
            if not item.namespace:  # written by other means: it lives at (agent, user)
                item.namespace = _home(scope.agent_id, hit.user_id)
                if folder:
                    continue
            if scope.holds(item.namespace) and _matches(item.value, op.filter):
                items.append(item)
        return list(items[op.offset : wanted])

    def _list_namespaces(self, op: ListNamespacesOp) -> list[tuple[str, ...]]:
        """The namespaces of the prefix's agent's items (the agent must be named: the API lists a
        tenant's agents, not their namespaces)."""
        conditions = op.match_conditions or ()
        prefix = next((c.path for c in conditions if c.match_type == "prefix"), ())
        if not prefix or prefix[0] == "*":
            raise InvalidNamespaceError("list_namespaces needs a prefix that names the agent")
        seen: dict[tuple[str, ...], None] = {}
        for memory in self.client.iter_memories(prefix[0], grain="working", page_size=MAX_FETCH):
            namespace = _as_item(memory, None).namespace or _home(memory.agent_id, memory.user_id)
            if all(_condition_holds(c, namespace) for c in conditions):
                seen.setdefault(namespace[: op.max_depth] if op.max_depth else namespace, None)
        return sorted(seen)[op.offset : op.offset + op.limit]

    # --- writes --------------------------------------------------------------------------------

    def _put(self, puts: Iterable[PutOp]) -> None:
        """Forget what each key held, write the new values (one request per agent) and wait until
        they are stored."""
        by_agent: dict[str, list[WriteItem]] = {}
        for put in puts:
            scope = Scope.of(put.namespace)
            held = self._held(put.namespace, put.key)
            for memory in held:
                self.client.forget(scope.agent_id, memory.memory_id)
            by_agent.setdefault(scope.agent_id, [])
            if put.value is None:
                continue
            created = held[0].created_at if held else datetime.now(UTC)
            by_agent[scope.agent_id].append(self._item(scope, put, created))
        for agent_id, items in by_agent.items():
            for start in range(0, len(items), MAX_FETCH):
                self.client.write(agent_id, items[start : start + MAX_FETCH])
            if items:
                self.client.wait_until_stored(agent_id, timeout_s=self.wait_timeout_s)

    def _item(self, scope: Scope, put: PutOp, created: datetime) -> WriteItem:
        value = dict(put.value or {})
        tag = scope.item_tag(put.key)
        fields = put.index if isinstance(put.index, list) else self.index_fields
        return WriteItem(
            content=_text_of(value, fields),
            user_id=scope.user_id,
            # Its own conversation: two keys holding the same words stay two memories.
            conversation_id=tag,
            tags=[tag, *scope.folder_tags],
            metadata={
                META: {
                    "namespace": list(put.namespace),
                    "key": put.key,
                    "value": json.dumps(value, ensure_ascii=False),
                    "created_at": created.isoformat(),
                }
            },
        )


def _home(agent_id: str, user_id: str | None) -> tuple[str, ...]:
    """The namespace of a memory written by other means: its agent's, and its user's if it has one."""
    return (agent_id, user_id) if user_id else (agent_id,)


def _condition_holds(condition: MatchCondition, namespace: tuple[str, ...]) -> bool:
    path = tuple(condition.path)
    if len(path) > len(namespace):
        return False
    part = (
        namespace[: len(path)]
        if condition.match_type == "prefix"
        else namespace[len(namespace) - len(path) :]
    )
    return all(p in ("*", n) for p, n in zip(path, part, strict=True))


# --- the context node ---------------------------------------------------------------------------


def _last_user_text(messages: Sequence[Any]) -> str | None:
    """The last user message's text: a LangChain ``HumanMessage`` or a ``{"role": "user"}`` dict."""
    for message in reversed(messages):
        if isinstance(message, Mapping):
            if message.get("role") in ("user", "human"):
                return str(message.get("content") or "") or None
        elif getattr(message, "type", None) == "human":
            return str(getattr(message, "text", None) or message.content) or None
    return None


def memory_context_node(
    client: MemoryClient,
    *,
    agent_id: str | None = None,
    state_key: str = "memory_context",
    token_budget: int = 1000,
    max_days_ago: float | None = None,
) -> Callable[[Mapping[str, Any], RunnableConfig], dict[str, str]]:
    """A graph node that puts the memory relevant to the last user message into ``state[state_key]``:
    the service's context block, one dated, grain-tagged line per memory or summary, packed to
    ``token_budget``. The agent is ``agent_id`` or the run's ``configurable["agent_id"]``; the end
    user is ``configurable["user_id"]`` when given. ``max_days_ago`` bounds how far back it looks
    (``1`` for the day's memory alone). With no user message the block is empty."""

    def recall(state: Mapping[str, Any], config: RunnableConfig) -> dict[str, str]:
        configurable = config.get("configurable") or {}
        agent = agent_id or configurable.get("agent_id")
        if not agent:
            raise ValueError(
                "give memory_context_node an agent_id or run the graph with configurable.agent_id"
            )
        query = _last_user_text(state.get("messages") or [])
        if query is None:
            return {state_key: ""}
        fields: dict[str, Any] = {"token_budget": token_budget, "user_id": configurable.get("user_id")}
        if max_days_ago is not None:
            fields["max_days_ago"] = float(max_days_ago)
        return {state_key: client.context(agent, query, **fields).context}

    return recall

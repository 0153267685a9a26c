"""LangGraph's own store interface and graph runtime over the local runtime on loopback: the store
behaves as LangGraph's `InMemoryStore` does for the same calls, finds by meaning, keeps namespaces,
users and tenants apart, forgets, and a compiled graph reads and writes memory through it (a
scripted fake chat model, no network)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterator
from typing import Annotated, Any, TypedDict

import pytest
from tests.e2e.conftest import unique
from tests.e2e.runnable_examples import RunExample, run_example_fixture  # noqa: F401 (the fixture)

from agent_memory.client import MemoryClient, NotFoundError
from agent_memory.local.server import LocalRuntime

pytest.importorskip("langgraph", reason="LangGraph is the `langgraph` extra")
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph.store.memory import InMemoryStore

from agent_memory.integrations.langgraph_store import (
    AgentMemoryStore,
    MemoryItem,
    memory_context_node,
)

NewKey = Callable[..., tuple[str, str, str]]
DATED = r"^\[\d{4}-\d{2}-\d{2}\] "


def _store(runtime: LocalRuntime, key: str) -> AgentMemoryStore:
    return AgentMemoryStore(MemoryClient(runtime.url, api_key=key, timeout_s=30.0))


@pytest.fixture
def store(runtime: LocalRuntime, new_key: NewKey) -> Iterator[AgentMemoryStore]:
    """A store over a fresh tenant's client."""
    _, _, key = new_key()
    store = _store(runtime, key)
    yield store
    store.client.close()


def _view(items: list[Any]) -> list[tuple[tuple[str, ...], str, Any]]:
    return sorted((tuple(i.namespace), i.key, i.value) for i in items)


def _script(store: BaseStore, agent: str) -> list[Any]:
    """The same calls on any LangGraph store; what each answered (items as comparable tuples)."""
    user, other = (agent, "u-1"), (agent, "u-2")
    store.put(user, "tea", {"text": "Alice drinks green tea.", "rank": 1, "meta": {"kind": "drink"}})
    store.put(user, "launch", {"text": "The launch moved to March 3.", "rank": 5})
    store.put((*user, "notes"), "city", {"text": "Bob prefers Lisbon.", "rank": 3})
    store.put(other, "tea", {"text": "Carol drinks black tea.", "rank": 2})
    answers: list[Any] = [store.get(user, "tea").value]  # type: ignore[union-attr]
    store.put(user, "tea", {"text": "Alice drinks mint tea now.", "rank": 4, "meta": {"kind": "drink"}})
    answers += [
        store.get(user, "tea").value,  # type: ignore[union-attr]
        store.get(other, "tea").value,  # type: ignore[union-attr]
        store.get(user, "missing"),
        _view(store.search(user)),
        _view(store.search((agent,))),
        _view(store.search((*user, "notes"))),
        _view(store.search(user, filter={"rank": {"$gte": 4}})),
        _view(store.search((agent,), filter={"meta": {"kind": "drink"}})),
        _view(store.search((agent,), filter={"rank": {"$ne": 5}, "text": "Bob prefers Lisbon."})),
        len(store.search((agent,), limit=2)),
        len(store.search((agent,), limit=3, offset=2)),
    ]
    store.delete(user, "tea")
    answers += [store.get(user, "tea"), _view(store.search(user))]
    batch = [PutOp(other, "a", {"text": "first"}), PutOp(other, "a", {"text": "second"}), GetOp(other, "a")]
    answers += [store.batch(batch), store.get(other, "a").value]  # type: ignore[union-attr]
    answers.append(sorted(store.list_namespaces(prefix=(agent,))))
    answers.append(sorted(store.list_namespaces(prefix=(agent,), max_depth=2)))
    answers.append(sorted(store.list_namespaces(prefix=(agent,), suffix=("notes",))))
    return answers


def test_the_store_answers_as_langgraphs_in_memory_store_does(store: AgentMemoryStore) -> None:
    # GIVEN LangGraph's reference store and ours, for the same agent name
    agent = unique("agent")

    # WHEN the same puts, gets, updates, searches with filters and pages, deletes, a batch and
    # namespace listings run on both
    expected = _script(InMemoryStore(), agent)
    answered = _script(store, agent)

    # THEN every answer is the same
    for step, (ours, reference) in enumerate(zip(answered, expected, strict=True)):
        assert ours == reference, f"step {step}"


def test_search_by_meaning_ranks_the_relevant_item_first_and_shows_the_dated_text(
    store: AgentMemoryStore,
) -> None:
    # GIVEN three items of one user
    agent = unique("agent")
    ns = (agent, "u-7")
    store.put(ns, "launch", {"text": "The product launch moved to March 3."})
    store.put(ns, "tea", {"text": "Alice drinks green tea every morning."})
    store.put(ns, "car", {"text": "Bob's car is a red Volvo."})

    # WHEN LangGraph searches by meaning
    hits = store.search(ns, query="when is the product launch?", limit=2)

    # THEN the launch comes first, scored, with the service's id and its dated, grain-tagged text
    assert hits[0].key == "launch"
    assert len(hits) == 2
    assert hits[0].score is not None and hits[0].score >= (hits[1].score or 0)
    assert isinstance(hits[0], MemoryItem)
    assert hits[0].grain == "working" and hits[0].current
    assert hits[0].memory_id.startswith("mem_")
    assert hits[0].text.endswith("The product launch moved to March 3.")
    assert re.match(DATED, hits[0].text)


def test_delete_forgets_the_memory_in_the_service_and_its_audit_trail(store: AgentMemoryStore) -> None:
    # GIVEN an item and the memory that holds it
    agent = unique("agent")
    store.put((agent, "u-1"), "k", {"text": "The vault code is 4412."})
    item = store.get((agent, "u-1"), "k")
    assert isinstance(item, MemoryItem)

    # WHEN LangGraph deletes it
    store.delete((agent, "u-1"), "k")

    # THEN the service has forgotten that memory, and says so in its audit trail
    with pytest.raises(NotFoundError):
        store.client.get(agent, item.memory_id)
    actions = [e.action for e in store.client.iter_audit(agent, record_id=item.memory_id)]
    assert actions == ["forget"]
    assert store.search((agent,), query="vault code") == []


def test_erasing_an_end_user_removes_their_items_and_no_one_elses(store: AgentMemoryStore) -> None:
    # GIVEN items of two end users of one agent
    agent = unique("agent")
    store.put((agent, "u-gone"), "k", {"text": "Dana lives at 12 Elm Street."})
    store.put((agent, "u-gone", "notes"), "k2", {"text": "Dana's dog is called Rex."})
    store.put((agent, "u-kept"), "k", {"text": "Eve lives at 3 Oak Road."})

    # WHEN the service erases one user (the right to erasure)
    erased = store.client.erase_user(agent, "u-gone")

    # THEN that user's items are gone from every namespace of theirs; the other user's remain
    assert erased.forgotten == 2
    assert store.search((agent,)) == store.search((agent, "u-kept"))
    assert [i.key for i in store.search((agent,))] == ["k"]
    assert store.get((agent, "u-gone"), "k") is None


def test_tenants_are_kept_apart_by_their_keys(
    runtime: LocalRuntime, new_key: NewKey, store: AgentMemoryStore
) -> None:
    # GIVEN an item in one tenant's store, and another tenant's store over the same agent name
    agent = unique("agent")
    store.put((agent, "u-1"), "k", {"text": "Frank's salary is 90k."})
    _, _, other_key = new_key()
    other = _store(runtime, other_key)

    # WHEN the other tenant reads the same namespace and key, and searches
    got = other.get((agent, "u-1"), "k")
    found = other.search((agent,), query="salary")

    # THEN it sees nothing
    assert got is None
    assert found == []
    other.client.close()


def test_memories_written_through_the_api_are_items_under_their_id(store: AgentMemoryStore) -> None:
    # GIVEN a memory written with the client, not the store
    agent = unique("agent")
    memory_id = store.client.remember(agent, "Gina prefers window seats.", user_id="u-9")
    store.client.wait_until_stored(agent)

    # WHEN LangGraph searches the user's namespace and gets it by its id
    [hit] = store.search((agent, "u-9"), query="seat preference")
    got = store.get((agent, "u-9"), memory_id)
    store.delete((agent, "u-9"), memory_id)

    # THEN it is an item keyed by its id whose value is its text, and delete forgot it
    assert hit.key == memory_id and hit.namespace == (agent, "u-9")
    assert hit.value["content"] == "Gina prefers window seats."
    assert got is not None and got.value == hit.value
    assert store.get((agent, "u-9"), memory_id) is None
    assert store.get((agent, "u-other"), memory_id) is None


def test_namespaces_langgraph_refuses_or_the_service_cannot_hold_are_refused(store: AgentMemoryStore) -> None:
    # WHEN / THEN LangGraph's own checks and ours: no agent, a label with a period, too deep
    with pytest.raises(InvalidNamespaceError):
        store.put((), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(("a.b",), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.put(tuple(f"l{i}" for i in range(21)), "k", {"text": "x"})
    with pytest.raises(InvalidNamespaceError):
        store.list_namespaces()


def test_the_async_api_and_abatch_answer_as_the_sync_one(store: AgentMemoryStore) -> None:
    # GIVEN an agent
    agent = unique("agent")
    ns = (agent, "u-1")

    async def run() -> list[Any]:
        await store.aput(ns, "a", {"text": "Hank flies to Oslo on Friday.", "n": 1})
        await store.aput(ns, "b", {"text": "Ivy is allergic to peanuts.", "n": 2})
        got = await store.aget(ns, "a")
        found = await store.asearch(ns, query="peanut allergy", limit=1)
        await store.adelete(ns, "a")
        batch = await store.abatch([GetOp(ns, "a"), SearchOp(ns, filter={"n": 2})])
        return [got.value if got else None, [i.key for i in found], batch[0], [i.key for i in batch[1]]]

    # WHEN the async methods run on an event loop
    answers = asyncio.run(run())

    # THEN they put, get, search, delete and batch as the sync ones do
    assert answers == [{"text": "Hank flies to Oslo on Friday.", "n": 1}, ["b"], None, ["b"]]


class State(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    memory_context: str


def test_a_compiled_graph_writes_through_the_store_and_recalls_into_its_state(
    store: AgentMemoryStore,
) -> None:
    # GIVEN a graph: a node that saves the user's words in the store, the context node, and a
    # scripted chat model that answers from the recalled context
    agent = unique("agent")
    model = GenericFakeChatModel(
        messages=iter([AIMessage(content="Noted."), AIMessage(content="Your launch is on March 3.")])
    )
    prompts: list[list[AnyMessage]] = []

    def save(state: State, *, store: BaseStore) -> dict[str, Any]:
        text = state["messages"][-1].content
        if "remember" in str(text):
            store.put((agent, "u-7"), "note", {"text": str(text).removeprefix("remember: ")})
        return {}

    def answer(state: State) -> dict[str, Any]:
        prompt = [SystemMessage(content=state["memory_context"]), *state["messages"]]
        prompts.append(prompt)
        return {"messages": [model.invoke(prompt)]}

    graph = (
        StateGraph(State)
        .add_node("save", save)
        .add_node("recall", memory_context_node(store.client, agent_id=agent, max_days_ago=1))
        .add_node("answer", answer)
        .add_edge(START, "save")
        .add_edge("save", "recall")
        .add_edge("recall", "answer")
        .add_edge("answer", END)
        .compile(store=store)
    )
    config: Any = {"configurable": {"user_id": "u-7"}}

    # WHEN one turn stores a fact and the next asks about it
    graph.invoke({"messages": [HumanMessage(content="remember: the launch moved to March 3")]}, config)
    out = graph.invoke({"messages": [HumanMessage(content="When is the launch?")]}, config)

    # THEN the second turn's state holds the fact as a dated, grain-tagged line and the model saw it
    assert re.search(
        r"^\[\d{4}-\d{2}-\d{2} · working\] the launch moved to March 3$", out["memory_context"], re.M
    )
    assert prompts[-1][0].content == out["memory_context"]
    assert out["messages"][-1].content == "Your launch is on March 3."


def test_the_example_agent_runs_against_the_local_runtime(
    run_example: RunExample, runtime: LocalRuntime
) -> None:
    # WHEN examples/langgraph_agent.py runs as a script, with a fresh tenant's key
    key, printed = run_example("langgraph_agent.py")

    # THEN its graph recalled the stored fact as a dated, grain-tagged line and answered, its search
    # found it, and the delete forgot it (the script's own assert; nothing is left to find)
    assert re.match(r"^\[\d{4}-\d{2}-\d{2} · working\] Alice moved the launch to March 3\.$", printed[0])
    assert printed[1] == "The launch is on March 3."
    assert printed[2].endswith("Alice moved the launch to March 3.")
    with MemoryClient(runtime.url, api_key=key) as client:
        assert client.search("support-bot", "launch").results == []

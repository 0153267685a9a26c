"""The Python client against the local runtime over loopback: every route of the contract, typed."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import UTC, datetime

import pytest
from tests.e2e.conftest import unique

from agent_memory.client import (
    AuthenticationError,
    BadRequestError,
    MemoryClient,
    NotFoundError,
    PermissionDeniedError,
)
from agent_memory.contract.v1 import MemoryOut
from agent_memory.local.server import LocalRuntime
from agent_memory.model.grains import Grain
from agent_memory.model.limits import MIN_CONTEXT_TOKENS

NewKey = Callable[..., tuple[str, str, str]]


@pytest.fixture
def connect(runtime: LocalRuntime) -> Iterator[Callable[[str], MemoryClient]]:
    clients: list[MemoryClient] = []

    def make(key: str) -> MemoryClient:
        clients.append(MemoryClient(runtime.url, api_key=key, timeout_s=30.0))
        return clients[-1]

    yield make
    for client in clients:
        client.close()


def test_write_search_get_list_forget_round_trip(
    connect: Callable[[str], MemoryClient], new_key: NewKey
) -> None:
    # GIVEN a tenant's client and an agent with no memory
    _, _, key = new_key()
    memory = connect(key)
    agent = unique("agent")

    # WHEN it writes an item (with the contract's fields) and a two-turn conversation
    [decision] = memory.write(
        agent,
        [{"content": "Alice moved the launch to March 3.", "topic": "launch date", "importance": 0.8,
          "kind": "decision", "tags": ["launch"], "occurred_at": "2026-11-20T14:03:00Z"}],
    ).accepted  # fmt: skip
    turns = memory.write_conversation(
        agent,
        [{"role": "user", "content": "Can we ship on March 3?"},
         {"role": "assistant", "content": "Yes, March 3 works."}],
        conversation_id="c-42",
    ).accepted  # fmt: skip
    stats = memory.wait_until_stored(agent, timeout_s=10)

    # THEN all three are stored, and search finds the decision by meaning, typed and dated
    assert stats.records[Grain.WORKING.value] == 3
    hits = memory.search(agent, "when is the launch?", grain="working", kinds=["decision"]).results
    assert [h.id for h in hits] == [decision.id]
    assert hits[0].text == "[2026-11-20] Alice moved the launch to March 3."
    assert hits[0].occurred_at == datetime(2026, 11, 20, 14, 3, tzinfo=UTC)

    # AND get returns the full record, and the conversation turns carry their conversation
    got = memory.get(agent, decision.id)
    assert isinstance(got, MemoryOut)
    assert (got.topic, got.importance, got.tags) == ("launch date", 0.8, ["launch"])
    assert {memory.get(agent, t.id).conversation_id for t in turns} == {"c-42"}

    # WHEN it forgets the decision
    forgotten = memory.forget(agent, decision.id)
    assert (forgotten.id, forgotten.status, forgotten.stale_summaries) == (decision.id, "forgotten", [])

    # THEN search, get and a second forget no longer find it
    assert decision.id not in [h.id for h in memory.search(agent, "launch", grain="all").results]
    with pytest.raises(NotFoundError) as caught:
        memory.get(agent, decision.id)
    assert (caught.value.status, caught.value.code) == (404, "not_found")
    with pytest.raises(NotFoundError):
        memory.forget(agent, decision.id)


def test_pages_walk_every_memory_newest_first(
    connect: Callable[[str], MemoryClient], new_key: NewKey
) -> None:
    # GIVEN five memories on five days
    _, _, key = new_key()
    memory = connect(key)
    agent = unique("agent")
    ids = [
        memory.remember(agent, f"note {day}", occurred_at=datetime(2026, 11, day, 9, tzinfo=UTC))
        for day in range(1, 6)
    ]
    memory.wait_until_stored(agent, timeout_s=10)

    # WHEN they are listed two at a time
    pages = list(memory.pages(agent, limit=2))

    # THEN three pages come back, together every memory once, newest first
    assert [len(p.items) for p in pages] == [2, 2, 1]
    assert pages[-1].next_cursor is None
    assert [m.id for m in memory.iter_memories(agent, page_size=2)] == list(reversed(ids))


def test_service_errors_arrive_as_typed_exceptions_with_the_contract_body(
    connect: Callable[[str], MemoryClient], new_key: NewKey
) -> None:
    # GIVEN
    _, _, key = new_key()
    _, _, bound_key = new_key(agents=frozenset({"only-this-agent"}))

    # WHEN / THEN
    # a wrong key: 401
    with pytest.raises(AuthenticationError) as unauthorized:
        connect("am_not-a-real-key").stats("bot")
    assert (unauthorized.value.status, unauthorized.value.code) == (401, "unauthorized")
    assert unauthorized.value.message

    # a key bound to another agent: 403
    with pytest.raises(PermissionDeniedError) as forbidden:
        connect(bound_key).stats("some-other-agent")
    assert forbidden.value.code == "forbidden"

    # what only the service checks (the list limit): 400 with the details of the contract
    with pytest.raises(BadRequestError) as invalid:
        connect(key).list_page("bot", limit=1000)
    assert invalid.value.code == "validation_error"
    assert any("limit" in [str(p) for p in d.loc] for d in invalid.value.details)

    # not admin: the maintenance routes are refused
    with pytest.raises(PermissionDeniedError):
        connect(key).run_retention()


def test_admin_runs_summaries_and_retention(connect: Callable[[str], MemoryClient], new_key: NewKey) -> None:
    # GIVEN an admin key, and a memory on 2026-11-20
    _, _, admin_key = new_key(admin=True)
    admin = connect(admin_key)
    agent = unique("agent")
    admin.remember(agent, "Alice moved the launch to March 3.", occurred_at="2026-11-20T14:03:00Z")
    admin.wait_until_stored(agent, timeout_s=10)

    # WHEN that day is summarized, and retention runs
    summarized = admin.summarize(grain="daily", period="2026-11-20")
    run = admin.run_retention()

    # THEN the day's job was queued for the agent with activity, and retention reported its run
    assert summarized.periods == ["2026-11-20"]
    assert summarized.jobs_queued >= 1
    assert run.status == "done" and run.report is not None  # run in place by the embedded runtime
    assert run.report.tenants >= 1
    assert run.report.total_deleted >= 0


def test_erasing_an_end_user_forgets_only_theirs_and_the_audit_trail_says_so(
    connect: Callable[[str], MemoryClient], new_key: NewKey
) -> None:
    # GIVEN three memories of end user u-1 and one of u-2
    _, _, key = new_key()
    memory = connect(key)
    agent = unique("agent")
    theirs = [
        memory.remember(agent, f"u-1 likes {thing}.", user_id="u-1") for thing in ("tea", "jazz", "rain")
    ]
    other = memory.remember(agent, "u-2 likes coffee.", user_id="u-2")
    memory.wait_until_stored(agent, timeout_s=10)

    # WHEN u-1 is erased
    erased = memory.erase_user(agent, "u-1")

    # THEN their three memories are gone, and only theirs
    assert (erased.user_id, erased.forgotten) == ("u-1", 3)
    assert [m.id for m in memory.iter_memories(agent)] == [other]
    for memory_id in theirs:
        with pytest.raises(NotFoundError):
            memory.get(agent, memory_id)
    # AND the audit trail, walked one event a page, names each of them as erased, newest first
    events = list(memory.iter_audit(agent, page_size=1))
    assert {e.record_id for e in events} == set(theirs)
    assert {e.action for e in events} == {"erase"}
    assert [e.at for e in events] == sorted((e.at for e in events), reverse=True)
    [one] = memory.audit_page(agent, record_id=theirs[0]).items
    assert one.record_id == theirs[0]


def test_context_packs_the_relevant_memories_oldest_first_within_the_budget(
    connect: Callable[[str], MemoryClient], new_key: NewKey
) -> None:
    # GIVEN three memories about the launch on three days, written newest first
    _, _, key = new_key()
    memory = connect(key)
    agent = unique("agent")
    days = [datetime(2026, 11, d, 9, tzinfo=UTC) for d in (20, 18, 16)]
    notes = [
        "The launch moved to March 3 after the review.",
        "The launch date is blocked on the security audit.",
        "The launch was first planned for February 10.",
    ]
    ids = [memory.remember(agent, n, occurred_at=d, importance=0.8) for n, d in zip(notes, days, strict=True)]
    memory.wait_until_stored(agent, timeout_s=10)

    # WHEN the agent asks for context about the launch, with room for everything
    block = memory.context(agent, "when is the launch?", token_budget=2000)

    # THEN each memory is one dated, grain-tagged line, oldest first, and the counts add up
    assert set(ids) <= {i.id for i in block.items}
    lines = block.context.splitlines()
    launch_lines = [ln for ln in lines if "launch" in ln]
    oldest_first = sorted(zip(days, notes, strict=True))
    assert launch_lines == [f"[{d.date().isoformat()} · working] {n}" for d, n in oldest_first]
    assert [i.occurred_at for i in block.items] == sorted(i.occurred_at for i in block.items)
    assert block.tokens == sum(i.tokens for i in block.items) + len(block.items) - 1
    assert (block.token_budget, block.dropped) == (2000, 0)

    # WHEN the budget holds less than all of it
    small = memory.context(agent, "when is the launch?", token_budget=MIN_CONTEXT_TOKENS)

    # THEN it stays within the budget and says how many relevant memories it left out
    assert small.tokens <= MIN_CONTEXT_TOKENS
    assert small.dropped >= 1
    assert len(small.items) + small.dropped == len(block.items)

"""The documented flows, end to end through the local HTTP server on loopback.

Write (202) -> the background writer stores -> search / get / list / stats / forget, exactly as a
client following the README's curl examples would see them.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from tests.e2e.conftest import GRAINS, Api, assert_error, settled_stats, wait_until
from tests.payloads import CONTRACT_ITEM, CONTRACT_SEARCH

from agent_memory import container
from agent_memory.local.server import LocalRuntime
from agent_memory.local.worker import QueueWorker

#: Every field the contract lists for a search result.
CONTRACT_RESULT_FIELDS = {
    "id", "grain", "time_key", "content", "text", "score", "similarity", "recency", "importance",
    "occurred_at", "source", "metadata", "tags",
}  # fmt: skip
WRITE_TO_SEARCHABLE_BUDGET_S = 2.0


def _ts(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def _write(api: Api, key: str, agent: str, body: dict[str, Any]) -> list[str]:
    status, accepted = api("POST", f"/v1/agents/{agent}/memories", body, key=key)
    assert status == 202, accepted
    assert all(a["status"] == "queued" for a in accepted["accepted"]), accepted
    return [a["id"] for a in accepted["accepted"]]


def _search(api: Api, key: str, agent: str, body: dict[str, Any]) -> list[dict[str, Any]]:
    status, found = api("POST", f"/v1/agents/{agent}/memories/search", body, key=key)
    assert status == 200, found
    return found["results"]  # type: ignore[no-any-return]


def _list_all(
    api: Api, key: str, agent: str, limit: int, grain: str | None = None
) -> list[list[dict[str, Any]]]:
    """Every page of the agent's list, following ``next_cursor`` until it is null."""
    pages: list[list[dict[str, Any]]] = []
    cursor: str | None = None
    while True:
        params = {"limit": limit, "cursor": cursor, "grain": grain}
        query = urlencode({k: v for k, v in params.items() if v is not None})
        status, page = api("GET", f"/v1/agents/{agent}/memories?{query}", key=key)
        assert status == 200, page
        pages.append(page["items"])
        cursor = page["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 50, "pagination does not end"


def _when_stored(api: Api, key: str, agent: str, memory_id: str) -> dict[str, Any]:
    """The memory, as soon as GET finds it."""

    def fetch() -> dict[str, Any] | None:
        status, memory = api("GET", f"/v1/agents/{agent}/memories/{memory_id}", key=key)
        return memory if status == 200 else None

    return wait_until(fetch)


# --- the README flow ----------------------------------------------------------------------------


def test_contract_example_is_searchable_with_its_dated_text_within_two_seconds(
    api: Api, new_key: Any
) -> None:
    # GIVEN a tenant's key and an agent with no memory yet
    _, _, key = new_key()
    agent = "support-bot"

    # WHEN the contract's example item is written
    started = time.monotonic()
    [memory_id] = _write(api, key, agent, {"items": [CONTRACT_ITEM]})

    # THEN the contract's search finds it, first, within the write-to-searchable budget
    def found() -> list[dict[str, Any]]:
        return [r for r in _search(api, key, agent, CONTRACT_SEARCH) if r["id"] == memory_id]

    [result] = wait_until(found, timeout_s=10)
    latency_s = time.monotonic() - started
    assert latency_s < WRITE_TO_SEARCHABLE_BUDGET_S, f"write->searchable took {latency_s:.3f} s"
    assert _search(api, key, agent, CONTRACT_SEARCH)[0]["id"] == memory_id

    # AND the result carries the contract's fields with the written values
    assert set(result) >= CONTRACT_RESULT_FIELDS
    assert result["text"] == "[2026-11-20] Alice moved the launch to March 3."
    assert result["content"] == CONTRACT_ITEM["content"]
    assert result["grain"] == "working" and result["time_key"] is None
    assert _ts(result["occurred_at"]) == _ts(CONTRACT_ITEM["occurred_at"])
    assert result["importance"] == 0.8
    assert result["tags"] == ["launch"]
    assert result["metadata"] == {"any": "json"}
    assert {k: v for k, v in result["source"].items() if v is not None} == CONTRACT_ITEM["source"]
    assert 0 < result["score"] <= 1 and 0 < result["similarity"] <= 1 and 0 < result["recency"] <= 1


def test_contract_example_round_trips_through_get(api: Api, new_key: Any) -> None:
    # GIVEN the contract's example item, written and stored
    _, _, key = new_key()
    [memory_id] = _write(api, key, "support-bot", {"items": [CONTRACT_ITEM]})
    settled_stats(api, key, "support-bot")

    # WHEN it is read back by the id the write returned
    status, memory = api("GET", f"/v1/agents/support-bot/memories/{memory_id}", key=key)

    # THEN every field the client sent comes back as sent
    assert status == 200, memory
    assert memory["id"] == memory_id and memory["agent_id"] == "support-bot"
    for field in ("content", "role", "conversation_id", "topic", "importance", "kind", "tags", "user_id",
                  "links", "metadata"):  # fmt: skip
        assert memory[field] == CONTRACT_ITEM[field], field
    assert {k: v for k, v in memory["source"].items() if v is not None} == CONTRACT_ITEM["source"]
    assert memory["text"] == "[2026-11-20] Alice moved the launch to March 3."
    # ttl_days counts from when the service accepted the memory, not from when it happened
    expires = _ts(memory["expires_at"]) - _ts(memory["created_at"])
    assert abs(expires - timedelta(days=30)) < timedelta(seconds=1)


def test_search_filters_by_kind_and_tag(api: Api, new_key: Any) -> None:
    # GIVEN the contract's decision, stored
    _, _, key = new_key()
    [memory_id] = _write(api, key, "support-bot", {"items": [CONTRACT_ITEM]})
    settled_stats(api, key, "support-bot")

    # WHEN the same question is asked of other kinds or tags, THEN nothing comes back
    assert _search(api, key, "support-bot", {**CONTRACT_SEARCH, "kinds": ["task"]}) == []
    assert _search(api, key, "support-bot", {**CONTRACT_SEARCH, "tags": ["billing"]}) == []
    assert _search(api, key, "support-bot", {**CONTRACT_SEARCH, "user_id": "u-8"}) == []
    # AND the matching filters find it
    hits = _search(api, key, "support-bot", {**CONTRACT_SEARCH, "tags": ["launch"], "user_id": "u-7"})
    assert [r["id"] for r in hits] == [memory_id]


def test_conversation_form_stores_each_message_as_a_conversation_turn(api: Api, new_key: Any) -> None:
    # GIVEN a tenant's key
    _, _, key = new_key()
    body = {
        "conversation_id": "c-42",
        "user_id": "u-7",
        "messages": [
            {"role": "user", "content": "Can we ship on March 3?", "occurred_at": "2026-11-20T14:02:00Z"},
            {"role": "assistant", "content": "Yes, March 3 works for the launch.",
             "occurred_at": "2026-11-20T14:02:30Z"},
        ],
    }  # fmt: skip

    # WHEN the conversation form is written
    ids = _write(api, key, "support-bot", body)

    # THEN one id per message comes back, and each is stored as a turn of that conversation
    assert len(ids) == 2 and len(set(ids)) == 2
    stats = settled_stats(api, key, "support-bot")
    assert stats["records"]["working"] == 2
    for memory_id, message in zip(ids, body["messages"], strict=True):
        status, memory = api("GET", f"/v1/agents/support-bot/memories/{memory_id}", key=key)
        assert status == 200, memory
        assert memory["kind"] == "conversation"
        assert (memory["role"], memory["content"]) == (message["role"], message["content"])
        assert (memory["conversation_id"], memory["user_id"]) == ("c-42", "u-7")
    # AND the turns are searchable
    hits = _search(api, key, "support-bot", {"query": "ship on March 3", "grain": "working"})
    assert {r["id"] for r in hits} == set(ids)


# --- dedup-on-write -----------------------------------------------------------------------------

FIRST = "The quarterly planning meeting with the design team moved to Thursday afternoon."
NEAR_DUPLICATE = "The quarterly planning meeting with the design team was moved to Thursday afternoon."
#: One word from FIRST, and another fact: never merged (`writing.rules.dedup`).
OTHER_DAY = "The quarterly planning meeting with the design team moved to Friday afternoon."
UNRELATED = "Carol fixed the flaky integration test in the billing service yesterday."


def test_near_duplicate_write_merges_into_the_existing_memory(api: Api, new_key: Any) -> None:
    # GIVEN one stored memory
    _, _, key = new_key()
    agent = "planner"
    [first_id] = _write(api, key, agent, {"items": [{"content": FIRST, "tags": ["planning"]}]})
    assert settled_stats(api, key, agent)["records"]["working"] == 1

    # WHEN a near duplicate (the same fact, reworded) is written
    [second_id] = _write(api, key, agent, {"items": [{"content": NEAR_DUPLICATE, "tags": ["design"]}]})
    assert second_id != first_id
    stats = settled_stats(api, key, agent)

    # THEN there is still one record, holding the newer wording and both writes' tags
    assert stats["records"]["working"] == 1
    status, merged = api("GET", f"/v1/agents/{agent}/memories/{second_id}", key=key)
    assert status == 200, merged
    assert merged["id"] == first_id
    assert merged["content"] == NEAR_DUPLICATE
    assert set(merged["tags"]) == {"planning", "design"}
    status, by_first = api("GET", f"/v1/agents/{agent}/memories/{first_id}", key=key)
    assert (status, by_first["content"]) == (200, NEAR_DUPLICATE)
    [listed] = _list_all(api, key, agent, limit=10)
    assert [m["id"] for m in listed] == [first_id]

    # AND the record shows both writes verbatim
    assert [(m["id"], m["content"]) for m in merged["merged_from"]] == [
        (first_id, FIRST),
        (second_id, NEAR_DUPLICATE),
    ]

    # WHEN an unrelated memory is written, THEN it is kept apart
    [third_id] = _write(api, key, agent, {"items": [{"content": UNRELATED}]})
    assert settled_stats(api, key, agent)["records"]["working"] == 2
    status, third = api("GET", f"/v1/agents/{agent}/memories/{third_id}", key=key)
    assert (status, third["id"], third["content"]) == (200, third_id, UNRELATED)

    # WHEN the same sentence names another day, THEN it is another fact, kept apart
    [fourth_id] = _write(api, key, agent, {"items": [{"content": OTHER_DAY}]})
    assert settled_stats(api, key, agent)["records"]["working"] == 3
    status, fourth = api("GET", f"/v1/agents/{agent}/memories/{fourth_id}", key=key)
    assert (status, fourth["id"], fourth["content"]) == (200, fourth_id, OTHER_DAY)


def test_retry_before_the_write_is_stored_names_the_same_memory(api: Api, new_key: Any) -> None:
    # GIVEN a write with an explicit occurred_at, and the same write sent again at once (a retry)
    _, _, key = new_key()
    item = {"content": UNRELATED, "occurred_at": "2026-11-21T08:00:00Z"}
    [first] = _write(api, key, "retry-bot", {"items": [item]})
    [again] = _write(api, key, "retry-bot", {"items": [item]})

    # WHEN / THEN both answers name the same memory, and only one record is ever stored
    assert first == again
    memory = _when_stored(api, key, "retry-bot", first)
    assert memory["content"] == UNRELATED
    # a read by id may see the record before search does (OpenSearch's real-time get); the
    # listing is a search, consistent once no write is pending, as the README tells clients
    assert settled_stats(api, key, "retry-bot")["records"]["working"] == 1
    [listed] = _list_all(api, key, "retry-bot", limit=10)
    assert [m["id"] for m in listed] == [first]


def test_retry_after_the_write_was_stored_settles(api: Api, new_key: Any) -> None:
    # GIVEN a write with an explicit occurred_at, already stored
    _, _, key = new_key()
    item = {"content": UNRELATED, "occurred_at": "2026-11-21T08:00:00Z"}
    [first] = _write(api, key, "retry-bot", {"items": [item]})
    assert settled_stats(api, key, "retry-bot")["records"]["working"] == 1

    # WHEN the client retries it (say its first answer timed out)
    [again] = _write(api, key, "retry-bot", {"items": [item]})

    # THEN it names the same memory, and the client's wait for its writes ends, with one record
    assert again == first
    stats = settled_stats(api, key, "retry-bot", timeout_s=10.0)
    assert stats["records"]["working"] == 1


# --- forget -------------------------------------------------------------------------------------


def test_forget_hides_the_memory_everywhere_and_only_once(api: Api, new_key: Any) -> None:
    # GIVEN two stored memories, both searchable
    _, _, key = new_key()
    agent = "forgetful"
    doomed_id, kept_id = _write(api, key, agent, {"items": [{"content": FIRST}, {"content": UNRELATED}]})
    assert settled_stats(api, key, agent)["records"]["working"] == 2
    search = {"query": "quarterly planning meeting", "grain": "working"}
    assert doomed_id in [r["id"] for r in _search(api, key, agent, search)]

    # WHEN one is forgotten
    status, body = api("DELETE", f"/v1/agents/{agent}/memories/{doomed_id}", key=key)

    # THEN the answer confirms it, and search, list, get and stats no longer see it
    assert (status, body) == (200, {"id": doomed_id, "status": "forgotten", "stale_summaries": []})
    assert doomed_id not in [r["id"] for r in _search(api, key, agent, search)]
    assert doomed_id not in [r["id"] for r in _search(api, key, agent, {"grain": "all"})]
    [listed] = _list_all(api, key, agent, limit=10)
    assert [m["id"] for m in listed] == [kept_id]
    status, body = api("GET", f"/v1/agents/{agent}/memories/{doomed_id}", key=key)
    assert status == 404
    assert_error(body, "not_found")
    stats = settled_stats(api, key, agent)
    assert stats["records"]["working"] == 1

    # AND forgetting it again is a 404, while the other memory is untouched
    status, body = api("DELETE", f"/v1/agents/{agent}/memories/{doomed_id}", key=key)
    assert status == 404
    assert_error(body, "not_found")
    status, kept = api("GET", f"/v1/agents/{agent}/memories/{kept_id}", key=key)
    assert (status, kept["content"]) == (200, UNRELATED)


def test_forget_by_the_id_of_a_merged_write_forgets_the_merged_memory(api: Api, new_key: Any) -> None:
    # GIVEN a write that was merged into an earlier near duplicate
    _, _, key = new_key()
    agent = "merge-forget"
    [first_id] = _write(api, key, agent, {"items": [{"content": FIRST}]})
    settled_stats(api, key, agent)
    [second_id] = _write(api, key, agent, {"items": [{"content": NEAR_DUPLICATE}]})
    assert settled_stats(api, key, agent)["records"]["working"] == 1

    # WHEN the client forgets the id its own write returned
    status, _ = api("DELETE", f"/v1/agents/{agent}/memories/{second_id}", key=key)

    # THEN the merged memory is gone under both ids
    assert status == 200
    assert settled_stats(api, key, agent)["records"]["working"] == 0
    for memory_id in (first_id, second_id):
        assert api("GET", f"/v1/agents/{agent}/memories/{memory_id}", key=key)[0] == 404


def test_forget_unknown_memory_is_404(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api("DELETE", "/v1/agents/nobody/memories/mem_" + "a" * 26, key=key)
    # THEN
    assert status == 404
    assert_error(body, "not_found")


# --- get, list, stats ---------------------------------------------------------------------------


def _distinct_items(n: int) -> list[dict[str, Any]]:
    """Items with unrelated contents (no dedup) and shuffled occurred_at, one day apart."""
    days = [3, 0, 4, 1, 2, 6, 5][:n]
    return [
        {"content": f"Entry {uuid.uuid4().hex} about {uuid.uuid4().hex}",
         "occurred_at": f"2026-11-{10 + d:02d}T09:00:00Z"}
        for d in days
    ]  # fmt: skip


def test_list_walks_every_memory_newest_first_in_pages(api: Api, new_key: Any) -> None:
    # GIVEN five stored memories written out of order
    _, _, key = new_key()
    agent = "lister"
    items = _distinct_items(5)
    ids = _write(api, key, agent, {"items": items})
    settled_stats(api, key, agent)
    newest_first = [
        i for _, i in sorted(zip([it["occurred_at"] for it in items], ids, strict=True), reverse=True)
    ]

    # WHEN the list is walked two at a time
    pages = _list_all(api, key, agent, limit=2)

    # THEN three pages (2, 2, 1) hold every memory once, newest occurred_at first; the last has no cursor
    assert [len(p) for p in pages] == [2, 2, 1]
    walked = [m["id"] for page in pages for m in page]
    assert walked == newest_first
    occurred = [_ts(m["occurred_at"]) for page in pages for m in page]
    assert occurred == sorted(occurred, reverse=True)
    # AND one page of everything agrees, and so does the working-grain filter; other grains are empty
    [everything] = _list_all(api, key, agent, limit=100)
    assert [m["id"] for m in everything] == newest_first
    assert [
        m["id"] for page in _list_all(api, key, agent, limit=3, grain="working") for m in page
    ] == newest_first
    assert _list_all(api, key, agent, limit=2, grain="daily") == [[]]


def test_list_items_are_full_memories(api: Api, new_key: Any) -> None:
    # GIVEN the contract's example, stored
    _, _, key = new_key()
    [memory_id] = _write(api, key, "support-bot", {"items": [CONTRACT_ITEM]})
    settled_stats(api, key, "support-bot")

    # WHEN it is listed and fetched
    [[listed]] = _list_all(api, key, "support-bot", limit=5)
    status, fetched = api("GET", f"/v1/agents/support-bot/memories/{memory_id}", key=key)

    # THEN list and get show the same memory; no tenant or internal fields leak
    assert status == 200
    assert listed == fetched
    assert not {"tenant_id", "content_hash", "deleted_at", "vector"} & set(fetched)


def test_stats_count_pending_writes_until_the_writer_stores_them(
    runtime: LocalRuntime, api: Api, new_key: Any
) -> None:
    # GIVEN an agent with nothing, and the background writer paused
    _, _, key = new_key()
    agent = "stats-bot"
    assert settled_stats(api, key, agent) == {
        "records": dict.fromkeys(GRAINS, 0), "pending_writes": 0, "oldest": None, "newest": None,
    }  # fmt: skip
    runtime.worker.stop()
    try:
        # WHEN three memories are accepted
        items = _distinct_items(3)
        _write(api, key, agent, {"items": items})

        # THEN stats count them as pending, not yet as records
        status, stats = api("GET", f"/v1/agents/{agent}/stats", key=key)
        assert status == 200
        assert stats["pending_writes"] == 3
        assert stats["records"]["working"] == 0
    finally:
        runtime.worker = QueueWorker(container.write_queue())  # type: ignore[arg-type]
        runtime.worker.start()

    # AND once the writer runs again, pending drops to 0 and the records and their span show up
    stats = settled_stats(api, key, agent)
    assert stats["records"] == {**dict.fromkeys(GRAINS, 0), "working": 3}
    occurred = sorted(_ts(i["occurred_at"]) for i in items)
    assert (_ts(stats["oldest"]), _ts(stats["newest"])) == (occurred[0], occurred[-1])


def test_unknown_route_is_a_documented_404(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, key = new_key()
    # WHEN
    status, body = api("GET", "/v1/nothing-here", key=key)
    # THEN
    assert status == 404
    assert_error(body, "not_found")


def test_health_needs_no_key(api: Api) -> None:
    # WHEN / THEN
    assert api("GET", "/health") == (200, {"status": "ok", "process": os.getpid()})


# --- start-up -----------------------------------------------------------------------------------

_STARTUP_PROBE = textwrap.dedent(
    """
    import sys
    from agent_memory.local.server import LocalRuntime
    from agent_memory.settings import get_settings

    runtime = LocalRuntime(get_settings(), host="127.0.0.1", port=0)
    runtime.start()
    handlers = ("agent_memory.handlers.api", "agent_memory.handlers.writer")
    missing = [m for m in handlers if m not in sys.modules]
    runtime.stop()
    print("missing:" + ",".join(missing))
    """
)


def test_runtime_imports_its_handlers_before_serving(tmp_path: Path) -> None:
    # GIVEN a fresh interpreter (nothing imported yet), as `agent-memory serve` is
    env = {
        **os.environ,
        "AGENT_MEMORY_DATA_DIR": str(tmp_path / "data"),
        "AGENT_MEMORY_EMBEDDER": "hashing",
        "POWERTOOLS_METRICS_DISABLED": "true",
        "POWERTOOLS_TRACE_DISABLED": "true",
    }
    # WHEN the runtime has started
    done = subprocess.run(
        [sys.executable, "-c", _STARTUP_PROBE],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    # THEN both handlers are loaded before the first request arrives, so no request thread imports
    # one concurrently with the worker thread importing the other
    assert done.stdout.strip().splitlines()[-1] == "missing:", done.stdout


def test_context_block_holds_the_written_memory_dated_and_tagged(api: Api, new_key: Any) -> None:
    # GIVEN the contract's decision, stored
    _, _, key = new_key()
    [memory_id] = _write(api, key, "support-bot", {"items": [CONTRACT_ITEM]})
    settled_stats(api, key, "support-bot")

    # WHEN the agent asks for prompt context about it
    status, block = api(
        "POST",
        "/v1/agents/support-bot/context",
        {"query": "when is the launch?", "token_budget": 500, "as_of": "2026-11-22T00:00:00Z"},
        key,
    )

    # THEN one dated, grain-tagged line holds it, within the budget
    assert status == 200, block
    assert block["context"] == "[2026-11-20 · working] Alice moved the launch to March 3."
    assert [i["id"] for i in block["items"]] == [memory_id]
    assert 0 < block["tokens"] <= block["token_budget"] == 500
    # AND a budget below the minimum is a validation error
    status, error = api("POST", "/v1/agents/support-bot/context", {"query": "x", "token_budget": 1}, key)
    assert status == 400
    assert_error(error, "validation_error")

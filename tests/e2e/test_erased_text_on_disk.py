"""Forgotten and erased memories leave no byte of their text in the data directory.

Right to erasure: once ``DELETE .../memories/{id}`` or an end user's erasure has answered, the
text is in no file under ``AGENT_MEMORY_DATA_DIR`` (the store, its write-ahead log, its text
index, the queue), and neither is a summary made from it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from tests.e2e.conftest import Api, settled_stats, wait_until

DAY = (datetime.now(UTC) - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
SECRET = "Quillon harbour locker combination is 8842-marigold-zephyr."
PRIVATE = "Ottilie Brankovic keeps her spare key under the blue heron planter."
KEPT = "The team moved the weekly review to Thursday afternoons."


def files_holding(data_dir: Path, texts: list[str]) -> dict[str, list[str]]:
    """Which files of the data directory hold which of ``texts`` (as UTF-8 bytes)."""
    found: dict[str, list[str]] = {}
    for path in data_dir.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            hits = [t for t in texts if t.encode() in raw]
            if hits:
                found[str(path.relative_to(data_dir))] = hits
    return found


def write(api: Api, key: str, agent: str, *items: dict[str, Any]) -> list[str]:
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": list(items)}, key=key)
    assert status == 202, body
    return [a["id"] for a in body["accepted"]]


def remade_without(api: Api, key: str, agent: str, text: str) -> bool:
    status, body = api("GET", f"/v1/agents/{agent}/memories?grain=daily", key=key)
    return status == 200 and bool(body["items"]) and all(text not in s["content"] for s in body["items"])


def test_a_forgotten_memory_and_an_erased_users_text_are_in_no_file(
    api: Api, new_key: Any, module_env: Path
) -> None:
    # GIVEN three stored memories of one day, summarized, one of them an end user's
    tenant, _, key = new_key()
    _, _, admin = new_key(tenant, admin=True)
    agent = "erasure"
    secret, _, _ = write(
        api,
        key,
        agent,
        {"content": SECRET, "occurred_at": DAY.isoformat()},
        {"content": PRIVATE, "occurred_at": DAY.isoformat(), "user_id": "u-ottilie"},
        {"content": KEPT, "occurred_at": DAY.isoformat()},
    )
    settled_stats(api, key, agent, timeout_s=20)
    status, body = api(
        "POST", "/v1/admin/summarize", {"grain": "daily", "period": DAY.date().isoformat()}, key=admin
    )
    assert status == 202, body
    wait_until(
        lambda: api("GET", f"/v1/agents/{agent}/memories?grain=daily", key=key)[1]["items"], timeout_s=20
    )
    assert files_holding(module_env, [SECRET, PRIVATE])  # the check can see them

    # WHEN one is forgotten, THEN no file holds its text right after the answer
    status, body = api("DELETE", f"/v1/agents/{agent}/memories/{secret}", key=key)
    assert status == 200, body
    assert files_holding(module_env, [SECRET]) == {}

    # WHEN the end user is erased (once the day's summary was re-made without the first)
    wait_until(lambda: remade_without(api, key, agent, SECRET), timeout_s=20)
    settled_stats(api, key, agent, timeout_s=20)
    status, body = api("DELETE", f"/v1/agents/{agent}/memories?user_id=u-ottilie", key=key)
    assert status == 200, body

    # THEN no file under the data directory holds either text, right after the answer
    assert files_holding(module_env, [SECRET, PRIVATE]) == {}
    # AND what is kept is still there
    assert files_holding(module_env, [KEPT])

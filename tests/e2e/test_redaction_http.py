"""Redaction on write through the local HTTP API: with the tenant setting on, a phone number, a
card number, an e-mail address and an IBAN written in a memory are in no stored record, summary,
export, file of the data directory or log line; with it off (the default) a write is stored as
written."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from tests.e2e.conftest import Api, unique, wait_until
from tests.e2e.test_exports_http import download, finished

from agent_memory.observability import logger

DAY = (datetime.now(UTC) - timedelta(days=2)).replace(hour=10, minute=0, second=0, microsecond=0)
PHONE = "+351 912 345 678"
CARD = "4539 1488 0343 6467"
EMAIL = "ines.duarte@example.org"
IBAN = "PT50 0002 0123 1234 5678 9015 4"
#: How each value could still show up: as written, and without its spaces.
VALUES = [v for value in (PHONE, CARD, EMAIL, IBAN) for v in {value, value.replace(" ", "")}]


@pytest.fixture
def logged() -> Iterator[io.StringIO]:
    """The service's log stream at DEBUG, captured while the test runs."""
    handler = logger.registered_handler
    assert isinstance(handler, logging.StreamHandler)
    stream = io.StringIO()
    previous = handler.setStream(stream)
    logger.setLevel("DEBUG")
    try:
        yield stream
    finally:
        logger.setLevel("INFO")
        handler.setStream(previous)


def _turn_redaction_on(api: Api, admin: str) -> None:
    status, body = api(
        "PUT", "/v1/admin/settings", {"version": 0, "settings": {"redaction": {"enabled": True}}}, key=admin
    )
    assert status == 200, body
    assert body["settings"]["redaction"] == {"enabled": True, "engine": "local"}


def _write(api: Api, key: str, agent: str) -> list[str]:
    items: list[dict[str, Any]] = [
        {"content": f"Ines asked us to call her on {PHONE} about the Porto flat.", "user_id": "ines"},
        {"content": f"She paid the deposit with card {CARD}; receipts go to {EMAIL}.", "user_id": "ines"},
        {
            "content": "The landlord wants the rent by transfer.",
            "user_id": "ines",
            "metadata": {"account": f"IBAN {IBAN}", "contact": {"mail": EMAIL}},
        },
        {
            "content": f"Reaching Ines at {EMAIL} worked on the first try.",
            "kind": "success",
            "context": f"Ines did not answer {PHONE} twice.",
            "outcome": "She replied by mail within the hour.",
        },
    ]
    for item in items:
        item["occurred_at"] = DAY.isoformat()
    status, body = api("POST", f"/v1/agents/{agent}/memories", {"items": items}, key=key)
    assert status == 202, body
    return [a["id"] for a in body["accepted"]]


def _memory(api: Api, key: str, agent: str, record_id: str) -> dict[str, Any] | None:
    status, body = api("GET", f"/v1/agents/{agent}/memories/{record_id}", key=key)
    return body if status == 200 else None  # type: ignore[no-any-return]


def _daily(api: Api, key: str, agent: str) -> list[dict[str, Any]]:
    status, body = api("GET", f"/v1/agents/{agent}/memories?grain=daily", key=key)
    assert status == 200, body
    return body["items"]  # type: ignore[no-any-return]


def _files_holding(data_dir: Path, values: list[str]) -> dict[str, list[str]]:
    """Which files of the data directory hold which of ``values`` (as UTF-8 bytes)."""
    found: dict[str, list[str]] = {}
    for path in data_dir.rglob("*"):
        if path.is_file():
            raw = path.read_bytes()
            hits = [v for v in values if v.encode() in raw]
            if hits:
                found[str(path.relative_to(data_dir))] = hits
    return found


def test_with_redaction_on_no_written_value_is_stored_summarized_or_logged(
    api: Api, new_key: Any, module_env: Path, logged: io.StringIO
) -> None:
    # GIVEN a tenant whose admin turned redaction on write on
    tenant, _, key = new_key()
    _, _, admin = new_key(tenant, admin=True)
    agent = unique("redacted")
    _turn_redaction_on(api, admin)

    # WHEN memories with a phone, a card, an e-mail and an IBAN are written, stored and summarized
    ids = _write(api, key, agent)
    wait_until(lambda: all(_memory(api, key, agent, i) for i in ids), timeout_s=10)
    status, body = api(
        "POST", "/v1/admin/summarize", {"grain": "daily", "period": DAY.date().isoformat()}, key=admin
    )
    assert status == 202, body
    (summary,) = wait_until(lambda: _daily(api, key, agent), timeout_s=10)
    status, found = api("POST", f"/v1/agents/{agent}/memories/search", {"query": "Ines phone card"}, key=key)
    started, job = api("POST", "/v1/admin/exports", {"user_id": "ines"}, key=admin)
    assert started == 202, job
    exported = download(api, admin, finished(api, admin, job["id"])["id"])

    # THEN every stored memory holds the placeholders, and nothing of the values
    memories = [_memory(api, key, agent, i) for i in ids]
    text = " ".join(str(m) for m in memories)
    for placeholder in ("[PHONE]", "[CARD]", "[EMAIL]", "[IBAN]"):
        assert placeholder in text, (placeholder, text)
    assert memories[2] is not None and memories[2]["metadata"]["contact"]["mail"] == "[EMAIL]"
    assert memories[3] is not None and "[PHONE]" in memories[3]["experience"]["context"]
    # and neither does the summary, a search's answer, any file of the data directory, or a log line
    assert status == 200 and found["results"], found
    assert sum(line["type"] == "memory" for line in exported) == 3, exported
    leaks = {
        "summary": str(summary),
        "search": str(found),
        "memories": text,
        "export": json.dumps(exported, ensure_ascii=False),
        "log": logged.getvalue(),
    }
    assert not {where: v for where, blob in leaks.items() for v in VALUES if v in blob}
    assert not _files_holding(module_env, VALUES)
    assert "personal data redacted" in logged.getvalue()


def test_with_redaction_off_a_write_is_stored_as_written(api: Api, new_key: Any) -> None:
    # GIVEN a tenant that never changed its settings (redaction is off by default)
    _, _, key = new_key()
    agent = unique("verbatim")
    # WHEN the same memories are written
    ids = _write(api, key, agent)
    stored = wait_until(lambda: _memory(api, key, agent, ids[1]), timeout_s=10)
    # THEN they are kept as written
    assert CARD in stored["content"] and EMAIL in stored["content"]

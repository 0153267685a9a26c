"""Integration fixtures: the real wiring (`container`) on the embedded adapters in a temp dir."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory import container
from agent_memory.local.lambda_context import LocalContext

EVENTS = Path(__file__).resolve().parents[2] / "events"


@pytest.fixture
def local_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Settings for the embedded runtime with the zero-dependency hashing embedder."""
    monkeypatch.setenv("AGENT_MEMORY_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENT_MEMORY_EMBEDDER", "hashing")
    monkeypatch.setenv("AGENT_MEMORY_STORE", "sqlite")
    monkeypatch.setenv("AGENT_MEMORY_QUEUE", "local")
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "true")
    container.reset()
    yield tmp_path / "data"
    container.reset()


def load_event(name: str, **overrides: Any) -> dict[str, Any]:
    event: dict[str, Any] = json.loads((EVENTS / name).read_text())
    event.update(overrides)
    return event


@pytest.fixture
def lambda_context() -> LocalContext:
    return LocalContext()

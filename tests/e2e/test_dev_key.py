"""`agent-memory serve` refuses a development key too short to be a key, before it binds a port."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_memory.local import cli

_CLI_ENV = (
    "AGENT_MEMORY_DATA_DIR",
    "POWERTOOLS_SERVICE_NAME",
    "POWERTOOLS_METRICS_NAMESPACE",
    "POWERTOOLS_TRACE_DISABLED",
    "POWERTOOLS_METRICS_DISABLED",
    "POWERTOOLS_LOG_LEVEL",
)


def test_serve_refuses_a_short_dev_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    for name in _CLI_ENV:  # `cli.main` sets these; restore them after the test
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_MEMORY_DEV_KEY", "hunter2")
    # WHEN / THEN
    assert cli.main(["serve", "--data-dir", str(tmp_path), "--port", "1"]) == 2
    assert "at least 32" in capsys.readouterr().err
    assert not (tmp_path / "auth.db").exists()  # nothing was registered

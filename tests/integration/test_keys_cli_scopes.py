"""`agent-memory keys create --scope`: a key for an operator who only looks (read scope)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_memory.adapters.sqlite.sqlite_keys import LocalKeyStore
from agent_memory.local import cli
from agent_memory.model.caller import DEFAULT_SCOPES


def create(capsys: pytest.CaptureFixture[str], *extra: str) -> str:
    assert cli.main(["keys", "create", "--tenant", "acme", "--plan", "pro", *extra]) == 0
    key: str = json.loads(capsys.readouterr().out)["api_key"]
    return key


def test_a_read_only_key_gets_the_read_scope_alone(
    local_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    key = create(capsys, "--scope", "read")

    # WHEN
    caller = LocalKeyStore(local_env / "auth.db").lookup(key)

    # THEN
    assert caller is not None and caller.scopes == frozenset({"read"})


def test_without_a_scope_a_key_gets_the_default_scopes(
    local_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    key = create(capsys)
    # WHEN
    caller = LocalKeyStore(local_env / "auth.db").lookup(key)
    # THEN
    assert caller is not None and caller.scopes == DEFAULT_SCOPES


def test_an_unknown_scope_is_refused(local_env: Path) -> None:
    # WHEN / THEN
    with pytest.raises(SystemExit):
        cli.main(["keys", "create", "--tenant", "acme", "--plan", "pro", "--scope", "admin"])

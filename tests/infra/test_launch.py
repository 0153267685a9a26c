"""cdk.json's app runs from cdk/ with a bare ``npx aws-cdk synth``: the launcher finds (or makes)
the project's environment and runs app.py with it."""

from __future__ import annotations

import json
import runpy
from pathlib import Path
from typing import Any

import pytest
from tests.infra.support import CDK_DIR


def test_cdk_json_runs_the_launcher_with_the_system_python() -> None:
    # WHEN / THEN
    assert json.loads((CDK_DIR / "cdk.json").read_text())["app"] == "python3 launch.py"


def test_the_launcher_runs_app_py_with_the_environments_python(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN
    ran: list[Any] = []
    monkeypatch.setattr("os.execv", lambda path, argv: ran.append((path, argv)))
    monkeypatch.setattr("subprocess.run", lambda *a, **k: pytest.fail("set up although the env exists"))
    module = runpy.run_path(str(CDK_DIR / "launch.py"))
    # WHEN / THEN
    assert module["main"]() == 0
    ((path, argv),) = ran
    assert Path(path) == module["VENV_PYTHON"]
    assert argv[1] == str(CDK_DIR / "app.py")


def test_the_launcher_sets_the_environment_up_first_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN
    calls: list[list[str]] = []

    # WHEN
    class Done:
        returncode = 0

    # THEN
    monkeypatch.setattr("os.execv", lambda path, argv: None)
    monkeypatch.setattr("subprocess.run", lambda command, **k: calls.append(command) or Done())
    module = runpy.run_path(str(CDK_DIR / "launch.py"))
    main = module["main"]
    main.__globals__["ROOT"] = tmp_path  # a clone with no .venv yet
    assert main() == 0
    assert calls == [["make", "-s", "-C", str(tmp_path), "install"]]

"""The runnable agents of examples/ (one per framework), run by the suite against the local runtime
so that none can rot: each script runs as ``python examples/NAME.py`` would run it, with
``AGENT_MEMORY_URL`` and ``AGENT_MEMORY_API_KEY`` set as its docstring asks."""

from __future__ import annotations

import runpy
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_memory.local.server import LocalRuntime

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

#: Runs one example by file name in a fresh tenant: ``(the tenant's key, the lines it printed)``,
#: blank ones left out.
RunExample = Callable[[str], tuple[str, list[str]]]


@pytest.fixture(name="run_example")
def run_example_fixture(
    runtime: LocalRuntime,
    new_key: Callable[..., tuple[str, str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> RunExample:
    """Run ``examples/NAME`` as a script (``__main__``, its folder first on ``sys.path``) against the
    module's runtime, with a fresh tenant's key; an example's own ``assert``s fail the test."""

    def run(name: str) -> tuple[str, list[str]]:
        _, _, key = new_key()
        monkeypatch.setenv("AGENT_MEMORY_URL", runtime.url)
        monkeypatch.setenv("AGENT_MEMORY_API_KEY", key)
        monkeypatch.syspath_prepend(str(EXAMPLES))
        capsys.readouterr()
        runpy.run_path(str(EXAMPLES / name), run_name="__main__")
        return key, [line for line in capsys.readouterr().out.splitlines() if line.strip()]

    return run

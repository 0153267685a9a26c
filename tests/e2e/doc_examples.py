"""The runnable examples of docs/integrations.md, run by the suite against the local runtime so
that none can rot: each is the ```python block after an ``<!-- example: NAME -->`` marker."""

from __future__ import annotations

import sys
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_memory.local.server import LocalRuntime

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations.md"


def example_code(name: str) -> str:
    """The source of one example, as the page shows it."""
    marker = f"<!-- example: {name} -->"
    text = DOC.read_text()
    assert marker in text, f"{DOC.name} has no example {name!r}"
    block = text.split(marker, 1)[1].split("```python\n", 1)[1]
    return block.split("\n```", 1)[0]


def run_example(name: str, url: str, key: str, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Run one example with ``AGENT_MEMORY_URL`` and ``AGENT_MEMORY_API_KEY`` set as the page asks;
    returns the names it defined, for the test to check."""
    monkeypatch.setenv("AGENT_MEMORY_URL", url)
    monkeypatch.setenv("AGENT_MEMORY_API_KEY", key)
    # A module of its own (in sys.modules while it runs), as a script has: frameworks resolve the
    # annotations of the classes it defines through their module.
    module = types.ModuleType(f"example_{name.replace('-', '_')}")
    monkeypatch.setitem(sys.modules, module.__name__, module)
    exec(compile(example_code(name), f"{DOC}:{name}", "exec"), module.__dict__)
    return module.__dict__


#: Runs one example by name in a fresh tenant: ``(the names it defined, the lines it printed)``.
Documented = Callable[[str], tuple[dict[str, Any], list[str]]]


@pytest.fixture(name="documented")
def documented_example(
    runtime: LocalRuntime,
    new_key: Callable[..., tuple[str, str, str]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Iterator[Documented]:
    """`run_example` against the module's runtime, with a fresh tenant's key; the clients the
    examples made are closed afterwards."""
    ran: list[dict[str, Any]] = []

    def run(name: str) -> tuple[dict[str, Any], list[str]]:
        _, _, key = new_key()
        capsys.readouterr()
        ran.append(run_example(name, runtime.url, key, monkeypatch))
        return ran[-1], capsys.readouterr().out.splitlines()

    yield run
    for names in ran:
        names["client"].close()

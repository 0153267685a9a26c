"""docs/integrations.md shows each runnable agent of examples/ as it is, and every one of them is run
by a test: a change to a script that the page does not follow, or a script no test runs, fails."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
DOC = ROOT / "docs" / "integrations.md"
SHOWN = re.compile(r"<!-- example: (\S+) -->\n```python\n(.*?)\n```", re.S)


def test_the_page_shows_each_example_as_the_script_is() -> None:
    # WHEN the page's example blocks are read
    shown = dict(SHOWN.findall(DOC.read_text()))

    # THEN there is one per script of examples/, word for word
    scripts = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").glob("*_agent.py"))
    assert sorted(shown) == scripts
    assert {path: (ROOT / path).read_text().rstrip("\n") for path in scripts} == shown


def test_every_example_is_run_by_an_e2e_test() -> None:
    # GIVEN the e2e tests' source
    tests = "\n".join(p.read_text() for p in (ROOT / "tests" / "e2e").glob("test_*.py"))

    # WHEN / THEN each script of examples/ is run by one of them
    assert [
        p.name for p in (ROOT / "examples").glob("*_agent.py") if f'run_example("{p.name}")' not in tests
    ] == []

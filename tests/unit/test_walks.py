"""The five walks of docs/architecture.md ("Five walks through the code"), checked on the text.

A walk is what a newcomer reads to follow one request or job through the code; it is only as short
as the core files it must open. So each walk names at most five files of the core (``model/`` and
the capability packages; the handlers, the contract, the ports and the adapters it passes are not
counted), and every file any walk names exists, so a move or a merge that leaves a walk behind
fails here. What a walk names after *Beside the walk* is read apart from it: it must exist, but it
is not counted.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from tests.unit.test_layout import CORE

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGE = ROOT / "functions" / "agent_memory"
#: The most core files one walk may make a reader open.
MAX_CORE_FILES = 5
#: What a walk names after this is beside it: checked to exist, not counted.
BESIDE = "*Beside the walk:*"
#: A file or folder of the package, as the doc quotes it (``writing/writer.py``, ``adapters/summarizers/``).
_PATH = re.compile(r"`([a-z_]+(?:/[a-z0-9_]+)*(?:\.py|/))`")
_WALK = re.compile(r"^(\d+)\. \*\*")
_BOLD = re.compile(r"\*\*`([^`]+)`\*\*")


def _walks() -> dict[int, str]:
    """Each walk's text by its number: a numbered item of the section and its indented lines."""
    lines = DOC.read_text().split("## Five walks through the code", 1)[1].split("\n## ", 1)[0].splitlines()
    walks: dict[int, list[str]] = {}
    current: list[str] | None = None
    for line in lines:
        start = _WALK.match(line)
        if start:
            current = walks.setdefault(int(start.group(1)), [])
        elif not line.startswith("   "):
            current = None
        if current is not None:
            current.append(line.strip())
    return {number: " ".join(text) for number, text in walks.items()}


def _paths(text: str) -> list[str]:
    return [p for p in _PATH.findall(text) if "/" in p]


def _core_files(walk: str) -> set[str]:
    on_the_walk = walk.split(BESIDE, 1)[0]
    return {p for p in _paths(on_the_walk) if p.endswith(".py") and p.split("/")[0] in CORE}


WALKS = _walks()


def test_the_section_has_five_walks() -> None:
    # WHEN / THEN
    assert sorted(WALKS) == [1, 2, 3, 4, 5]


@pytest.mark.parametrize("number", sorted(WALKS))
def test_a_walk_opens_at_most_five_core_files(number: int) -> None:
    # WHEN
    core = _core_files(WALKS[number])

    # THEN
    assert 0 < len(core) <= MAX_CORE_FILES, sorted(core)


@pytest.mark.parametrize("number", sorted(WALKS))
def test_a_walk_marks_its_core_files_in_bold_and_no_other(number: int) -> None:
    # WHEN
    on_the_walk = WALKS[number].split(BESIDE, 1)[0]

    # THEN
    assert set(_BOLD.findall(on_the_walk)) == _core_files(WALKS[number])


def test_every_file_a_walk_names_exists() -> None:
    # WHEN
    missing = sorted({p for walk in WALKS.values() for p in _paths(walk) if not (PACKAGE / p).exists()})

    # THEN
    assert missing == []


def test_the_core_is_counted_and_the_rest_is_not() -> None:
    # GIVEN a walk through a handler, two core files, a port, and a core file beside it
    walk = (
        "`handlers/writer.py` → **`writing/writer.py`** → **`model/ids.py`** → `ports/change_feed.py` "
        f"→ `adapters/summarizers/`. {BESIDE} `derived/derivation.py`."
    )

    # WHEN
    core = _core_files(walk)

    # THEN
    assert core == {"writing/writer.py", "model/ids.py"}

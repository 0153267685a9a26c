"""The importer's pure parts: batches cut the same way on every run (so a resumed import sends the
same requests), each of one agent and within the size; formats told from the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.client.importing import ImportSourceError, SourceItem, _batches, detect_format


def items_of(agents: list[str]) -> list[SourceItem]:
    return [SourceItem(agent, {"content": f"m{i}"}, f"line {i}") for i, agent in enumerate(agents)]


@given(agents=st.lists(st.sampled_from(["a", "b", "c"]), max_size=60), size=st.integers(1, 7), data=st.data())
def test_batches_partition_the_source_by_agent_within_the_size_and_a_resume_cuts_the_same(
    agents: list[str], size: int, data: st.DataObject
) -> None:
    # GIVEN a source of items for a few agents
    items = items_of(agents)

    # WHEN it is cut into batches, from the start and from a batch boundary on (a resume)
    full = list(_batches(items, size, skip=0))
    starts = [start for start, _ in full]
    resume_at = data.draw(st.sampled_from([*starts, len(items)]))
    resumed = list(_batches(items, size, skip=resume_at))

    # THEN the batches hold every item once, in order, each of one agent and at most `size`
    assert [i for _, batch in full for i in batch] == items
    assert all(len({i.agent_id for i in batch}) == 1 and 1 <= len(batch) <= size for _, batch in full)
    # AND the resumed run sends exactly the batches from that boundary on
    assert resumed == [(start, batch) for start, batch in full if start >= resume_at]


@pytest.mark.parametrize(
    ("name", "text", "expected"),
    [
        ("h.jsonl", '{"content": "x"}\n', "jsonl"),
        ("h.json", '{"content": "x"}\n{"content": "y"}\n', "jsonl"),
        ("l.json", json.dumps([{"sample_id": "1", "conversation": {}}]), "locomo"),
        ("m.json", json.dumps({"results": []}), "mem0"),
        ("m.json", json.dumps([{"id": "1", "memory": "x"}]), "mem0"),
    ],
)
def test_the_format_is_told_from_the_file(tmp_path: Path, name: str, text: str, expected: str) -> None:
    # GIVEN a file in one of the formats
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")

    # WHEN / THEN its format is recognised
    assert detect_format(path) == expected


def test_a_json_document_of_another_shape_is_refused_as_a_whole(tmp_path: Path) -> None:
    # GIVEN a JSON file that is none of the formats
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"rows": [1, 2]}), encoding="utf-8")

    # WHEN / THEN it is refused before anything is sent
    with pytest.raises(ImportSourceError, match="not a format"):
        detect_format(path)

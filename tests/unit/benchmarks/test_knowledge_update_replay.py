"""The offline replay of the knowledge-update cases' write-time marks: a case's turns go through
the writer's supersession service in order, and the marks are read off what it stored."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

# The benchmark scripts import their helpers as top-level modules (they run as scripts).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import knowledge_update
import knowledge_update_replay as kr
from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.writing.memo_embedder import MemoEmbedder
from knowledge_update import Case

POOL = ["The printer is jammed again.", "Can you suggest a film for tonight?"]


def _case(case_id: str, old: str, new: str, *, supersede: bool) -> Case:
    raw: dict[str, Any] = {
        "id": case_id,
        "half": "X",
        "category": "update-explicit" if supersede else "other-attribute",
        "supersede": supersede,
        "speaker": "Ana",
        "old": {"turns": [old], "date": "2024-01-10", "fact": 0},
        "new": {"turns": [new], "date": "2024-06-10", "fact": 0},
        "distractors": [{"date": "2024-03-01", "pool": [0, 1]}, {"date": "2024-07-01", "pool": [1]}],
        "question": {"date": "2024-08-01", "text": "Where do I live?"},
        "expect": "new",
    }
    return Case(raw)


def test_a_replayed_case_is_marked_as_the_writer_marks_it() -> None:
    # GIVEN a move the patterns read, and another person's home after the speaker's
    embedder = MemoEmbedder(HashingEmbedder(384))
    moved = _case("x-1", "I live in Berlin.", "I moved to Lisbon last month.", supersede=True)
    sister = _case("x-2", "I live in Berlin.", "My sister lives in Oslo.", supersede=False)
    # WHEN both are replayed through the write path
    rows = [kr.replay(moved, POOL, embedder), kr.replay(sister, POOL, embedder)]
    # THEN the move supersedes Berlin, and the sister's home marks nothing
    assert (rows[0].marked_right, rows[0].old_marked) == (True, True)
    assert (rows[1].marked_right, rows[1].old_marked, rows[1].others) == (False, False, [])
    assert kr.score(rows) == {
        "marked_right": "1/1 (100.0 %)",
        "wrongly_marked": "0/1 (0.0 %)",
        "other_marks": 0,
    }


def test_each_write_of_a_replayed_case_is_timed_when_asked() -> None:
    # GIVEN a case of one old turn, three distractor turns and one new turn
    moved = _case("x-1", "I live in Berlin.", "I moved to Lisbon last month.", supersede=True)
    spent: list[float] = []
    # WHEN it is replayed with a list for the CPU time of each write
    kr.replay(moved, POOL, MemoEmbedder(HashingEmbedder(384)), spent)
    # THEN each of its five writes is timed
    assert len(spent) == 5 and all(s >= 0.0 for s in spent)


def test_a_half_not_asked_for_is_not_even_read(tmp_path: Path, monkeypatch: Any) -> None:
    # GIVEN half C's cases, the pool, and a file of another half that is not JSON yet (a half
    # being written, or one held out)
    (tmp_path / "distractors.jsonl").write_text('{"text": "The printer is jammed again."}\n')
    (tmp_path / "cases_c.jsonl").write_text('{"id": "kc-1", "half": "C"}\n')
    (tmp_path / "cases_f.jsonl").write_text("not json, still being written\n")
    monkeypatch.setattr(knowledge_update, "DATA", tmp_path)
    # WHEN half C is loaded
    cases, pool = knowledge_update.load(["C"])
    # THEN its cases come back and the other file was never parsed
    assert [c.id for c in cases] == ["kc-1"] and pool == ["The printer is jammed again."]

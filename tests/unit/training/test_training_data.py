"""The hand-written training conversations: every question points at turns that exist, every file
is read by training, held-out people and conversations stay out of training, and an owned-only run
reads no LoCoMo and records weights free to ship.

Reads the JSON files as written (not through the benchmark's lenient parser, which drops what it
cannot resolve), so a mistyped evidence id fails here instead of silently losing a question.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "training"))

import build_pairs
import train_embedder

from agent_memory.adapters.embedders import HashingEmbedder

#: Speaker labels that name a role, not a person: both sets may have a "user" and an "assistant".
ROLES = {"user", "assistant"}
MULTI_HOP = 1


def _samples(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text(encoding="utf-8")))


def _turns(sample: dict[str, Any]) -> list[dict[str, Any]]:
    conversation = sample["conversation"]
    return [
        t
        for key, value in conversation.items()
        if key.startswith("session_") and isinstance(value, list)
        for t in value
    ]


def _speakers(paths: list[Path]) -> set[str]:
    return {t["speaker"] for p in paths for s in _samples(p) for t in _turns(s)} - ROLES


TRAIN = [*build_pairs.OWNED_CONVERSATIONS]
HELDOUT = [build_pairs.HELDOUT_CONVERSATIONS]


def test_every_training_file_in_the_data_folder_is_read_by_training() -> None:
    # WHEN / THEN the files named for training are exactly the conversations-train*.json there are
    assert set(TRAIN) == set(build_pairs.DATA.glob("conversations-train*.json"))
    assert build_pairs.HELDOUT_CONVERSATIONS not in TRAIN


@pytest.mark.parametrize("path", TRAIN, ids=lambda p: p.name)
def test_every_question_cites_turns_of_its_own_conversation(path: Path) -> None:
    # GIVEN a training file as written
    samples = _samples(path)
    assert samples
    # WHEN each question's evidence ids are looked up among its conversation's turns
    for sample in samples:
        turns = _turns(sample)
        ids = [t["dia_id"] for t in turns]
        # THEN turn ids are unique, every question has evidence, every id is a turn of that
        # conversation, and a multi-hop question cites at least two turns
        assert len(ids) == len(set(ids)), sample["sample_id"]
        assert all(t["text"].strip() and t["speaker"].strip() for t in turns)
        for qa in sample["qa"]:
            assert qa["evidence"], qa["question"]
            assert set(qa["evidence"]) <= set(ids), (sample["sample_id"], qa["question"])
            assert qa["category"] in build_pairs.locomo.CATEGORIES
            if qa["category"] == MULTI_HOP:
                assert len(set(qa["evidence"])) >= 2, qa["question"]


def test_the_parser_keeps_every_written_question_of_the_training_files() -> None:
    # WHEN the training conversations are loaded as training loads them
    loaded = build_pairs.owned_conversations()
    # THEN no question was dropped for unresolvable evidence, and conversation ids are unique
    written = sum(len(s["qa"]) for p in TRAIN for s in _samples(p))
    assert sum(len(c.questions) for c in loaded) == written
    assert len({c.sample_id for c in loaded}) == len(loaded)


def test_no_held_out_person_or_conversation_appears_in_training() -> None:
    # GIVEN the people who speak in the held-out set (role labels aside)
    held_out_people = _speakers(HELDOUT)
    assert held_out_people
    # WHEN the training files' speakers, conversation ids and words are collected
    train_ids = {s["sample_id"] for p in TRAIN for s in _samples(p)}
    words = {
        w
        for p in TRAIN
        for s in _samples(p)
        for text in [*(t["text"] for t in _turns(s)), *(q["question"] + " " + q["answer"] for q in s["qa"])]
        for w in re.findall(r"[A-Za-z]+", text)
    }
    # THEN no held-out person speaks or is named in training, and no conversation id is shared
    assert not held_out_people & _speakers(TRAIN)
    assert not held_out_people & words
    assert not train_ids & {s["sample_id"] for p in HELDOUT for s in _samples(p)}


def test_an_owned_only_build_never_reads_locomo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a LoCoMo file that is there, and a reader of it that fails if called
    locomo_file = tmp_path / "locomo10.json"
    locomo_file.write_text("[]", encoding="utf-8")

    def no_locomo(path: Path, half: str) -> list[Any]:
        raise AssertionError("LoCoMo read in an owned-only build")

    monkeypatch.setattr(build_pairs, "locomo_half", no_locomo)
    monkeypatch.setattr(build_pairs, "MiniLmEmbedder", lambda: HashingEmbedder(dimension=32))
    monkeypatch.setattr(build_pairs, "OWNED_PAIRS", tmp_path / "pairs-owned.jsonl")
    # WHEN pairs are built with --sources owned
    code = build_pairs.main(["--sources", "owned", "--locomo", str(locomo_file), "--out", str(tmp_path)])
    # THEN the owned pairs are written, all of them owned, and no LoCoMo pairs
    assert code == 0
    rows = [
        json.loads(line) for line in (tmp_path / "pairs-owned.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    assert rows and {r["source"] for r in rows} == {"owned"}
    assert not (tmp_path / build_pairs.LOCOMO_A_PAIRS).exists()


def test_an_owned_only_run_reads_only_the_owned_pairs() -> None:
    # WHEN / THEN --sources owned reads the committed pairs file alone; the default adds LoCoMo's
    assert train_embedder.pairs_files("owned") == [build_pairs.OWNED_PAIRS]
    assert build_pairs.OWNED_PAIRS in train_embedder.pairs_files(build_pairs.DEFAULT_SOURCES)
    assert len(train_embedder.pairs_files(build_pairs.DEFAULT_SOURCES)) == 2


def test_an_owned_only_run_refuses_pairs_of_another_source(tmp_path: Path) -> None:
    # GIVEN a pairs file holding a LoCoMo row
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text(json.dumps({"source": "locomo-A", "question": "q"}) + "\n", encoding="utf-8")
    # WHEN an owned-only run is started on it
    with pytest.raises(SystemExit) as stopped:
        train_embedder.main(["--sources", "owned", "--pairs", str(pairs), "--out", str(tmp_path)])
    # THEN it stops before training, and writes nothing
    assert stopped.value.code == 2
    assert not (tmp_path / "training.json").exists()


@pytest.mark.parametrize(
    ("by_source", "may_ship"),
    [
        ({"owned": 600}, True),
        ({"owned": 600, "locomo-A": 1228}, False),
        ({"locomo-A": 1228}, False),
        ({"owned": 1, "somewhere-else": 1}, False),
        ({}, False),
    ],
)
def test_weights_may_ship_only_when_every_pair_is_the_projects_own(
    by_source: dict[str, int], may_ship: bool
) -> None:
    # WHEN / THEN the record names each source's licence and ships only all-Apache data
    record = train_embedder.licence_record(by_source)
    assert record["weights_may_ship"] is may_ship
    assert set(record["data_licences"]) == set(by_source)


@pytest.mark.parametrize("path", [*TRAIN, *HELDOUT], ids=lambda p: p.name)
def test_the_readme_data_table_gives_each_files_counts(path: Path) -> None:
    # WHEN a file's counts are made as build_pairs.py prints them
    counts = build_pairs.describe(build_pairs.locomo.load_conversations(path))
    # THEN the data table of training/README.md gives them on that file's row
    readme = (build_pairs.DATA.parent / "README.md").read_text(encoding="utf-8")
    row = next(line for line in readme.splitlines() if line.startswith(f"| `data/{path.name}`"))
    assert counts in row

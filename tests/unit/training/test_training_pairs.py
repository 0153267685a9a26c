"""The memory embedder's training data: pairs shaped as the store indexes a turn, hard negatives
that are never the answer, batches without a question twice, and held-out data kept apart.

Runs on the project's own conversations (training/data) and the hashing embedder: no model, no
LoCoMo, no PyTorch (the trainer imports it only to train).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "training"))

import build_pairs
import train_embedder
from tests.strategies import FUZZ

from agent_memory.adapters.embedders import HashingEmbedder

OWNED = build_pairs.owned_conversations()
HELDOUT = build_pairs.locomo.load_conversations(build_pairs.HELDOUT_CONVERSATIONS)


def test_a_turn_is_written_as_the_store_embeds_it() -> None:
    # GIVEN the first conversation written for training
    turns = build_pairs.indexed_turns(OWNED[0])
    # WHEN / THEN its third turn carries speaker and day, and its context the two turns before it
    third = turns[2]
    assert third.text == (
        "Priya on 04 March 2024: Forty minutes late, a patient crashed right at handover. "
        "We got him back though."
    )
    assert third.context is not None
    assert third.context.splitlines()[0].startswith("Priya: Finally off shift.")
    assert third.context.splitlines()[1] == "Tom: Ouch. Did they at least let you leave on time?"
    assert len(third.context.splitlines()) == 3
    # AND the first turn of a session has no context
    assert turns[0].context is None


@pytest.mark.parametrize("negatives_by", build_pairs.NEGATIVES_BY)
def test_hard_negatives_are_never_evidence_nor_its_neighbours(negatives_by: str) -> None:
    # WHEN pairs are made for every owned conversation, negatives ranked either way
    rows = build_pairs.build(OWNED, HashingEmbedder(dimension=64), "owned", negatives_by)
    # THEN each question's evidence turn is its positive, and no negative is an evidence turn or
    # a turn right next to one
    assert len(rows) == sum(len(q.evidence) for c in OWNED for q in c.questions)
    for conversation in OWNED:
        turns = build_pairs.indexed_turns(conversation)
        text_of = {t.dia_id: t.text for t in turns}
        for question in conversation.questions:
            near = build_pairs._neighbours(turns, set(question.evidence))
            forbidden = {text_of[d] for d in near}
            for row in (r for r in rows if r["question"] == question.text):
                assert row["positive"] == text_of[row["evidence"]]
                assert len(row["negatives"]) == build_pairs.NEGATIVES
                assert not forbidden & set(row["negatives"])


def test_bm25_scores_the_rarer_shared_word_higher_and_ignores_function_words() -> None:
    # GIVEN three turns: one shares the rare word "kiln", one only the common "pottery", one nothing
    documents = build_pairs.WordIndex(
        [
            "the kiln cracked during the pottery firing",
            "pottery class again tonight",
            "pottery is fun, pottery is calm",
            "what did you do at the weekend",
        ]
    )
    # WHEN a question asks about the kiln
    scores = documents.scores("What happened to the kiln at pottery?")
    # THEN the turn with the rare word scores highest, and a turn sharing only "what"/"the" scores 0
    assert scores[0] > scores[2] > 0
    assert scores[0] > scores[1] > 0
    assert scores[3] == 0.0


def test_service_relevance_lifts_a_word_match_over_a_slightly_nearer_meaning() -> None:
    # GIVEN two turns, the second a little nearer in meaning, the first sharing the question's word
    documents = build_pairs.WordIndex(["the kiln cracked", "my hands are covered in clay"])
    cosines = np.asarray([0.50, 0.55], dtype=np.float32)
    # WHEN ranked as the service's relevance ranks them, and by the cosine alone
    service = build_pairs.service_relevance("What broke in the kiln?", cosines, documents)
    # THEN the word match comes first only for the service
    assert service[0] > service[1]
    assert cosines[0] < cosines[1]


def test_the_committed_owned_pairs_cover_every_owned_question() -> None:
    # GIVEN the pairs file in the repository
    rows = [json.loads(line) for line in build_pairs.OWNED_PAIRS.read_text(encoding="utf-8").splitlines()]
    # WHEN / THEN every (question, evidence) of the default files' conversations is in it, and
    # nothing else
    default = build_pairs.owned_conversations(build_pairs.DEFAULT_FILES)
    expected = {(c.sample_id, q.text, e) for c in default for q in c.questions for e in q.evidence}
    assert {(r["conversation"], r["question"], r["evidence"]) for r in rows} == expected
    assert {r["source"] for r in rows} == {"owned"}


def test_the_held_out_conversations_share_nothing_with_training() -> None:
    # WHEN / THEN no conversation, question or turn text of the held-out set is in the training set
    assert not {c.sample_id for c in OWNED} & {c.sample_id for c in HELDOUT}
    assert not {q.text for c in OWNED for q in c.questions} & {q.text for c in HELDOUT for q in c.questions}
    assert not {t.content for c in OWNED for t in c.turns} & {t.content for c in HELDOUT for t in c.turns}
    assert sum(len(c.questions) for c in HELDOUT) >= 40


@FUZZ
@given(
    questions=st.lists(st.sampled_from("abcdefgh"), min_size=1, max_size=60),
    size=st.integers(min_value=2, max_value=9),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_a_batch_never_holds_one_question_twice(questions: list[str], size: int, seed: int) -> None:
    # GIVEN rows, several per question (a question with several evidence turns)
    rows = [{"conversation": "c", "question": q, "n": i} for i, q in enumerate(questions)]
    # WHEN they are batched
    made = train_embedder.batches(rows, size, train_embedder.random.Random(seed))
    # THEN no batch repeats a question or exceeds the size, and no row is used twice
    for batch in made:
        assert len({r["question"] for r in batch}) == len(batch) <= size
    used = [r["n"] for b in made for r in b]
    assert len(used) == len(set(used))


@FUZZ
@given(
    negatives=st.integers(min_value=0, max_value=3),
    kept=st.integers(min_value=0, max_value=3),
    context_share=st.sampled_from([0.0, 1.0]),
    seed=st.integers(min_value=0, max_value=1000),
)
def test_a_training_row_gives_as_many_hard_negatives_as_asked_in_the_positives_view(
    negatives: int, kept: int, context_share: float, seed: int
) -> None:
    # GIVEN a row with `kept` hard negatives, each in both views
    row = {
        "question": "q",
        "positive": "p self",
        "positive_context": "p context",
        "negatives": [f"n{i} self" for i in range(kept)],
        "negatives_context": [f"n{i} context" for i in range(kept)],
    }
    # WHEN it is made into a training example with `negatives` hard negatives
    example = train_embedder.triplet(row, train_embedder.random.Random(seed), context_share, negatives)
    # THEN the question and positive come first, then exactly that many negatives, all in the
    # positive's view, none repeated while the row has enough
    question, positive, *chosen = example
    assert question == "q"
    assert len(chosen) == negatives
    view = "context" if context_share else "self"
    assert positive == f"p {view}"
    if negatives == 0:
        assert chosen == []  # in-batch negatives only: a pair
    elif kept:
        assert all(n.endswith(view) and n.startswith("n") for n in chosen)
        assert len(set(chosen)) == min(negatives, kept)
    else:
        assert set(chosen) == {"p self"}  # no negative: the positive's self text stands in


def test_a_run_that_trains_on_locomo_half_a_cannot_tune_on_it(tmp_path: Path) -> None:
    # GIVEN a LoCoMo-shaped file standing in for LoCoMo (the held-out own set's layout)
    locomo_file = build_pairs.HELDOUT_CONVERSATIONS
    # WHEN / THEN a run on the default sources (which read half A) is refused a tuning set
    with pytest.raises(ValueError, match="cannot be tuned on"):
        train_embedder.tuning_sets(build_pairs.DEFAULT_SOURCES, locomo_file)
    # AND an owned-only run with no LoCoMo file has nothing to tune on
    with pytest.raises(ValueError, match="nothing to tune on"):
        train_embedder.tuning_sets("owned", tmp_path / "missing.json")


def test_a_subset_of_the_owned_files_reads_only_those_and_an_unknown_name_is_refused() -> None:
    # WHEN only the first training file is asked for
    first = build_pairs.owned_conversations(["conversations-train.json"])
    # THEN its conversations, in order, and nothing of the other files
    assert [c.sample_id for c in first] == [c.sample_id for c in OWNED[: len(first)]]
    assert len(first) < len(OWNED)
    # AND a name that is no training file is refused, not read as "all"
    with pytest.raises(ValueError, match="no training file"):
        build_pairs.owned_conversations(["conversations-heldout.json"])

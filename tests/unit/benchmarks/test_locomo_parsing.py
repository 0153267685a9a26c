"""The pure parts of the LoCoMo benchmark: reading the data set, and scoring what search returned.

The conversation here is made up for the test (LoCoMo itself is CC BY-NC and stays out of the
repository); it has LoCoMo's shape, including the malformed evidence ids the real file holds.
"""

from __future__ import annotations

import argparse
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

# The benchmark scripts import their helpers as top-level modules (they run as scripts).
sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "benchmarks"))

import locomo

SAMPLE = {
    "sample_id": "conv-x",
    "conversation": {
        "speaker_a": "Ana",
        "speaker_b": "Ben",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ana", "dia_id": "D1:1", "text": "I adopted a dog named Pixel!"},
            {"speaker": "Ben", "dia_id": "D1:2", "text": "Congrats! What breed?"},
            {
                "speaker": "Ana",
                "dia_id": "D1:3",
                "text": "A beagle.",
                "img_url": ["https://example.invalid/p.jpg"],
                "blip_caption": "a photo of a beagle on a couch",
            },
        ],
        "session_2_date_time": "10:04 am on 19 June, 2023",
        "session_2": [
            {"speaker": "Ben", "dia_id": "D2:1", "text": "How is Pixel?"},
            {"speaker": "Ana", "dia_id": "D2:2", "text": "", "blip_caption": "a dog in the snow"},
        ],
        # a date without a session (the real data has those)
        "session_3_date_time": "9:00 am on 1 January, 2024",
    },
    "qa": [
        {"question": "What is Ana's dog called?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
        {"question": "Which breed?", "answer": "beagle", "evidence": ["D1:1; D1:03"], "category": 1},
        {"question": "When?", "answer": "May", "evidence": ["D1:1 D2:2", "D"], "category": 2},
        {"question": "Broken", "answer": "?", "evidence": ["D:11:26"], "category": 3},
        {"question": "Trick", "adversarial_answer": "no", "evidence": [], "category": 5},
    ],
}


def test_session_dates_are_read_as_utc() -> None:
    # WHEN / THEN
    assert locomo.parse_session_date("1:56 pm on 8 May, 2023") == datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert locomo.parse_session_date("12:09 am on 13 September, 2023") == datetime(
        2023, 9, 13, 0, 9, tzinfo=UTC
    )
    assert locomo.parse_session_date("10:04  AM on 19 June,  2023").hour == 10
    with pytest.raises(ValueError):
        locomo.parse_session_date("yesterday")


@pytest.mark.parametrize(
    ("raw", "ids", "skipped"),
    [
        (["D1:3"], ["D1:3"], 0),
        (["D8:6; D9:17"], ["D8:6", "D9:17"], 0),
        (["D30:05"], ["D30:5"], 0),
        (["D9:1 D4:4 D4:6"], ["D9:1", "D4:4", "D4:6"], 0),
        (["D1:2,D1:3", "D1:2"], ["D1:2", "D1:3"], 0),
        (["D"], [], 1),
        (["D:11:26"], [], 1),
        (["D2:1", "", "  "], ["D2:1"], 0),
    ],
)
def test_evidence_is_parsed_leniently(raw: list[str], ids: list[str], skipped: int) -> None:
    # WHEN / THEN
    assert locomo.parse_evidence(raw) == (ids, skipped)


def test_a_shared_photo_is_described_by_its_caption() -> None:
    # WHEN / THEN
    assert locomo.turn_content({"text": "Look!", "blip_caption": "a cat"}) == "Look! [shared a photo: a cat]"
    assert locomo.turn_content({"text": "", "blip_caption": "a cat"}) == "[shared a photo: a cat]"
    assert locomo.turn_content({"text": " Hi "}) == "Hi"
    with pytest.raises(ValueError):
        locomo.turn_content({"dia_id": "D1:1", "text": " "})


def test_agent_ids_fit_the_api_pattern() -> None:
    # WHEN / THEN
    assert locomo.agent_id_for("conv-26") == "locomo-conv-26"
    assert locomo.agent_id_for("a b/c:d") == "locomo-a-b-c-d"
    assert len(locomo.agent_id_for("x" * 300)) == 128


def test_a_conversation_becomes_sessions_of_dated_turns_and_scorable_questions() -> None:
    # WHEN
    conversation = locomo.parse_conversation(SAMPLE)
    # THEN
    assert conversation.agent_id == "locomo-conv-x"
    assert [s.number for s in conversation.sessions] == [1, 2]
    turns = conversation.turns
    assert [t.dia_id for t in turns] == ["D1:1", "D1:2", "D1:3", "D2:1", "D2:2"]
    start = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)
    assert [t.occurred_at for t in turns[:3]] == [start + timedelta(seconds=i) for i in range(3)]
    assert turns[2].content == "A beagle. [shared a photo: a photo of a beagle on a couch]"
    assert turns[4].content == "[shared a photo: a dog in the snow]"
    # the latest session with turns, plus a day (the dated session without turns does not count)
    assert conversation.as_of == datetime(2023, 6, 20, 10, 4, tzinfo=UTC)
    # category 5 and the question left without a valid id are dropped; "D" and "D:11:26" skipped
    assert [(q.category, q.evidence) for q in conversation.questions] == [
        (4, ("D1:1",)),
        (1, ("D1:1", "D1:3")),
        (2, ("D1:1", "D2:2")),
    ]
    assert [q.index for q in conversation.questions] == [0, 1, 2]
    assert conversation.malformed_evidence == 2


def test_write_requests_carry_the_turns_in_order_with_their_ids() -> None:
    # GIVEN
    conversation = locomo.parse_conversation(SAMPLE)
    # WHEN
    requests = locomo.write_requests(conversation)
    # THEN
    assert [ids for ids, _ in requests] == [["D1:1", "D1:2", "D1:3"], ["D2:1", "D2:2"]]
    first = requests[0][1]["items"][0]
    assert first == {
        "content": "I adopted a dog named Pixel!",
        "role": "user",
        "speaker": "Ana",
        "occurred_at": "2023-05-08T13:56:00Z",
        "conversation_id": "conv-x-s1",
        "kind": "conversation",
        "source": {"platform": "locomo", "message_id": "D1:1"},
    }
    assert all(
        "speaker" not in i for _, r in locomo.write_requests(conversation, speaker=False) for i in r["items"]
    )


def test_a_long_session_is_split_into_requests_the_api_accepts() -> None:
    # GIVEN
    long = {
        "sample_id": "long",
        "conversation": {
            "session_1_date_time": "1:00 pm on 1 May, 2023",
            "session_1": [{"speaker": "A", "dia_id": f"D1:{i}", "text": f"turn {i}"} for i in range(1, 251)],
        },
        "qa": [],
    }
    # WHEN
    requests = locomo.write_requests(locomo.parse_conversation(long))
    # THEN
    assert [len(r["items"]) for _, r in requests] == [100, 100, 50]
    assert [ids[0] for ids, _ in requests] == ["D1:1", "D1:101", "D1:201"]


def test_search_bodies_send_ranking_overrides_only_when_there_are_some() -> None:
    # GIVEN
    question = locomo.parse_conversation(SAMPLE).questions[0]
    as_of = datetime(2023, 6, 20, 10, 4, tzinfo=UTC)
    # WHEN
    plain = locomo.search_body(question, as_of, None)
    # THEN
    assert plain == {
        "query": "What is Ana's dog called?",
        "grain": "working",
        "max_results": 25,
        "as_of": "2023-06-20T10:04:00Z",
    }
    assert locomo.search_body(question, as_of, {"lexical_weight": 0.0})["ranking"] == {"lexical_weight": 0.0}


def test_ranking_overrides_go_on_top_of_every_configurations_own() -> None:
    # GIVEN the full row and the no-recency row, and an override of the lexical weight
    configs = locomo.parse_configs("full,no-recency")
    overrides = locomo._corpus.ranking_overrides(
        argparse.Namespace(ranking=["lexical_weight=0.3", "recency_weight=0.05"])
    )
    # WHEN applied
    full, no_recency = locomo.with_overrides(configs, overrides)
    # THEN each row sends the overrides, which win over the row's own weights
    assert full.ranking == {"lexical_weight": 0.3, "recency_weight": 0.05}
    assert no_recency.ranking == {"recency_weight": 0.05, "lexical_weight": 0.3}
    # AND no override leaves the rows as they are
    assert locomo.with_overrides(configs, {}) == configs


def test_results_map_to_turns_in_rank_order_and_a_profile_takes_a_place() -> None:
    # GIVEN a turn, a profile made of two turns, another turn and the first again
    response = {
        "results": [
            {"id": "m1", "source": {"platform": "locomo", "message_id": "D2:2"}},
            {"id": "prf_1", "source": None, "source_ids": ["m9", "m7"]},
            {"id": "m3", "source": {"platform": "locomo", "message_id": "D1:1"}},
            {"id": "m1", "source": {"platform": "locomo", "message_id": "D2:2"}},
        ]
    }
    # WHEN / THEN the profile holds its place and names no turn ...
    assert locomo.result_turns(response) == ["D2:2", "record:prf_1", "D1:1"]
    # ... or, credited with its sources, names them all in its one place
    sources = {"m9": "D5:1", "m7": "D2:2"}
    retrieved = locomo.result_turns(response, sources)
    assert retrieved == ["D2:2", "D5:1|D2:2", "D1:1"]
    assert locomo.recall_at(retrieved, ["D5:1", "D1:1"], 2) == 0.5
    assert locomo.all_found_at(retrieved, ["D5:1", "D1:1"], 3)


def test_recall_and_all_evidence_at_k() -> None:
    # GIVEN
    retrieved = ["D1:2", "D1:1", "D2:1", "D2:2"]
    # WHEN / THEN
    assert locomo.recall_at(retrieved, ["D1:1"], 1) == 0.0
    assert locomo.recall_at(retrieved, ["D1:1"], 2) == 1.0
    assert locomo.recall_at(retrieved, ["D1:1", "D2:2"], 2) == 0.5
    assert locomo.recall_at(retrieved, ["D1:1", "D2:2"], 4) == 1.0
    assert locomo.recall_at(retrieved, ["D9:9"], 25) == 0.0  # evidence that names no turn
    assert not locomo.all_found_at(retrieved, ["D1:1", "D2:2"], 2)
    assert locomo.all_found_at(retrieved, ["D1:1", "D2:2"], 4)
    with pytest.raises(ValueError):
        locomo.recall_at(retrieved, [], 5)


def test_scores_average_over_questions_overall_and_per_category() -> None:
    # GIVEN
    outcomes = [
        # single-hop, found first
        locomo.Outcome(4, ("D1:1",), ("D1:1", "D1:2")),
        # multi-hop, one of two in the top 5, the other at rank 6
        locomo.Outcome(1, ("D1:1", "D1:3"), ("D1:2", "D2:1", "D1:1", "D9:1", "D9:2", "D1:3")),
        # temporal, never found
        locomo.Outcome(2, ("D2:2",), ("D1:1",)),
    ]
    # WHEN
    scores = locomo.score(outcomes, ks=(5, 10))
    # THEN
    assert scores["questions"] == 3
    assert scores["recall"] == {"5": 50.0, "10": round(200 / 3, 2)}  # (1 + 0.5 + 0) / 3, (1 + 1 + 0) / 3
    assert scores["all_evidence"] == {"5": round(100 / 3, 2), "10": round(200 / 3, 2)}
    assert scores["by_category"]["1"] == {
        "questions": 1,
        "recall": {"5": 50.0, "10": 100.0},
        "all_evidence": {"5": 0.0, "10": 100.0},
    }
    assert scores["by_category"]["2"]["recall"] == {"5": 0.0, "10": 0.0}
    assert scores["by_category"]["4"]["recall"] == {"5": 100.0, "10": 100.0}
    assert "3" not in scores["by_category"]


def test_goal_check_and_configuration_choice() -> None:
    # GIVEN
    metrics = {"recall": {"5": 56.7, "10": 60.0}, "latency_ms": {"p95": 50.0}}
    # WHEN / THEN
    assert [g["pass"] for g in locomo.goal_check(metrics)] == [True, False, True]
    assert [c.name for c in locomo.parse_configs("dense-only, full")] == ["full", "dense-only"]
    with pytest.raises(ValueError, match="unknown"):
        locomo.parse_configs("full,no-such-thing")
    # every configuration names an ingest that exists, and the ablations differ from `full`
    assert all(c.ingest in locomo.INGESTS for c in locomo.CONFIGS.values())
    full = locomo.CONFIGS["full"]
    assert all(
        (c.ingest, c.ranking) != (full.ingest, full.ranking) for c in locomo.CONFIGS.values() if c != full
    )


def test_each_half_is_scored_on_its_own_conversations() -> None:
    # GIVEN three conversations (positions 0, 1, 2: halves A, B, A), one question each
    conversations = [locomo.parse_conversation({**SAMPLE, "sample_id": f"conv-{i}"}) for i in range(3)]
    found, missed = ("D1:1",), ("D9:9",)
    rows = [
        (conversations[0], conversations[0].questions[0], locomo.Outcome(4, ("D1:1",), found)),
        (conversations[1], conversations[1].questions[0], locomo.Outcome(4, ("D1:1",), missed)),
        (conversations[2], conversations[2].questions[0], locomo.Outcome(4, ("D1:1",), found)),
    ]
    # WHEN
    halves = locomo.halves(conversations, rows)
    # THEN A holds the first and third, B the second; the halves never share a conversation
    assert halves["A"]["questions"] == 2 and halves["A"]["recall"]["10"] == 100.0
    assert halves["B"]["questions"] == 1 and halves["B"]["recall"]["10"] == 0.0
    assert not set(locomo.HALVES["A"]) & set(locomo.HALVES["B"])
    assert sorted(locomo.HALVES["A"] + locomo.HALVES["B"]) == list(range(10))

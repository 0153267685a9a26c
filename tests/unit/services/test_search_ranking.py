"""Ranking pieces a request can turn: time named in the query, per-request weights, zero-hit logs."""

from __future__ import annotations

import logging
import re
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest, SearchResponse, WriteRequest
from agent_memory.model.caller import Caller
from agent_memory.model.queries import Found
from agent_memory.model.words import STOPWORDS
from agent_memory.recall.search import named_speakers, query_topic, without_names

NOW = datetime(2023, 11, 15, tzinfo=UTC)


def _write(world: World, content: str, occurred: datetime) -> str:
    body = {"items": [{"content": content, "occurred_at": occurred, "kind": "note"}]}
    [accepted] = world.write.accept(
        Caller("acme"), "bot", WriteRequest.model_validate(body).to_new_memories()
    )
    world.drain()
    return accepted


def _ids(world: World, **body: object) -> list[str]:
    request = SearchRequest.model_validate({"as_of": NOW, **body})
    return [r.id for r in world.search.search("acme", "bot", request.to_query())]


def test_a_time_named_in_the_query_lifts_the_memories_of_that_time(world: World) -> None:
    # GIVEN the same kind of event in June and in September
    june = _write(world, "We went camping by the lake with the kids.", datetime(2023, 6, 20, tzinfo=UTC))
    sept = _write(world, "We went camping in the mountains with friends.", datetime(2023, 9, 20, tzinfo=UTC))

    # WHEN the question names June, THEN June's comes first; WHEN it names September, September's
    assert _ids(world, query="where did we go camping in June?")[0] == june
    assert _ids(world, query="where did we go camping in September?")[0] == sept
    # AND the hint is a boost, not a filter: the other memory is still found
    assert set(_ids(world, query="where did we go camping in June?")) >= {june, sept}


def test_time_hints_can_be_turned_off_per_request(world: World) -> None:
    # GIVEN
    june = _write(world, "We went camping by the lake with the kids.", datetime(2023, 6, 20, tzinfo=UTC))
    _write(world, "We went camping in the mountains with friends.", datetime(2023, 9, 20, tzinfo=UTC))
    request = SearchRequest.model_validate(
        {"as_of": NOW, "query": "camping in June", "ranking": {"time_hints": False}}
    )
    june_hit = next(r for r in world.search.search("acme", "bot", request.to_query()) if r.id == june)
    # WHEN
    with_hint = next(
        r
        for r in world.search.search(
            "acme", "bot", SearchRequest.model_validate({"as_of": NOW, "query": "camping in June"}).to_query()
        )
        if r.id == june
    )
    # THEN
    assert with_hint.score == pytest.approx(june_hit.score * 1.3, rel=1e-4)


def test_what_the_person_the_query_names_said_is_lifted(world: World) -> None:
    # GIVEN the same thing said by two people
    body = {
        "items": [
            {
                "content": "I started pottery classes.",
                "speaker": name,
                "occurred_at": datetime(2023, 5, d, tzinfo=UTC),
            }
            for d, name in ((1, "Caroline"), (2, "Melanie"))
        ]
    }
    caroline, melanie = world.write.accept(
        Caller("acme"), "bot", WriteRequest.model_validate(body).to_new_memories()
    )
    world.drain()

    def scores(query: str, **ranking: object) -> dict[str, float]:
        request = SearchRequest.model_validate({"as_of": NOW, "query": query, "ranking": ranking})
        return {r.id: r.score for r in world.search.search("acme", "bot", request.to_query())}

    # WHEN the query names Caroline (any case), at two strengths and at the default
    query = "what classes did caroline start?"
    default, strong, weak = scores(query), scores(query, speaker_boost=0.4), scores(query, speaker_boost=0.1)
    # THEN hers is lifted by the strength (the default is 0.4), and hers alone
    assert default == strong
    assert strong[caroline] == pytest.approx(weak[caroline] * 1.4 / 1.1, rel=1e-4)
    assert strong[melanie] == pytest.approx(weak[melanie], rel=1e-4)
    # AND a name inside another word is not a name: "Carolines" names nobody
    assert scores("carolines pottery") == scores("carolines pottery", speaker_boost=0.0)


def test_the_name_a_query_holds_is_not_a_word_to_match(world: World) -> None:
    # GIVEN Caroline's own turn, and Melanie's turn that only addresses her by name
    body = {
        "items": [
            {"content": text, "speaker": name, "occurred_at": datetime(2023, 5, d, tzinfo=UTC)}
            for d, name, text in (
                (1, "Caroline", "I started pottery classes."),
                (2, "Melanie", "Caroline, how are your pottery classes going?"),
            )
        ]
    }
    caroline, melanie = world.write.accept(
        Caller("acme"), "bot", WriteRequest.model_validate(body).to_new_memories()
    )
    world.drain()

    def hits(**ranking: object) -> dict[str, Found]:
        request = SearchRequest.model_validate({"as_of": NOW, "query": "And Caroline?", "ranking": ranking})
        return {r.id: r for r in world.search.search("acme", "bot", request.to_query())}

    # WHEN the query names Caroline, with the speaker boost on and off
    boosted, plain = hits(), hits(speaker_boost=0.0)
    # THEN with the boost on, her name matches no word (and the rest is a function word): Melanie's
    # turn keeps its similarity and loses its lexical match; with it off, the name is a word
    assert boosted[melanie].similarity == plain[melanie].similarity
    assert boosted[melanie].score < plain[melanie].score
    assert boosted[caroline].score > boosted[melanie].score


def test_a_query_without_the_names_it_holds() -> None:
    # WHEN / THEN whole words in any case, a possessive with them, every word of a long name
    assert (
        without_names("What did Caroline's mom and CAROLINE say?", {"caroline"})
        == "What did   mom and   say?"
    )
    assert without_names("carolines plan", {"caroline"}) == "carolines plan"
    assert without_names("Mary Ann and Ann\u2019s dog", {"mary ann"}) == "    and   dog"
    assert without_names("Caroline?", {"caroline"}) is None
    assert without_names("What did Caroline do?", {"caroline"}) is None  # function words alone
    assert without_names("Caroline's plan", set()) == "Caroline's plan"


def test_the_names_a_query_holds_are_whole_words_of_known_speakers() -> None:
    # WHEN / THEN
    assert named_speakers("Did Caroline call Mel?", ["Caroline", "Melanie", None]) == {"caroline"}
    assert named_speakers(None, ["Caroline"]) == frozenset()
    assert named_speakers("caroline's plan", ["Caroline"]) == {"caroline"}
    assert named_speakers("what did Mary Ann say?", ["Mary Ann", "Ann Lee"]) == {"mary ann"}


_NAMES = ("Tim", "Mary Ann", "Jo")
_WORDS = (
    "tim",
    "TIM",
    "Tim's",
    "timber",
    "mary",
    "Ann",
    "ann\u2019s",
    "jo",
    "joy",
    "books",
    "what",
    "did",
    "read",
)


@settings(max_examples=300, deadline=None)
@given(
    words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=12),
    seps=st.lists(st.sampled_from((" ", ", ", "? ", " - ")), min_size=12, max_size=12),
    named=st.sets(st.sampled_from(_NAMES)),
)
def test_no_word_of_a_named_speaker_is_left_and_every_other_word_is(
    words: list[str], seps: list[str], named: set[str]
) -> None:
    # GIVEN a query of names, near-names and other words, and the speakers it is taken to name
    text = "".join(w + sep for w, sep in zip(words, seps, strict=False))
    gone = {part.casefold() for name in named for part in name.split()}
    # WHEN
    left = without_names(text, {n.casefold() for n in named})

    # THEN (a reference model: split into words, drop the named ones with their possessive)
    def base(word: str) -> str:
        return re.sub(r"['\u2019]s$", "", word).casefold()

    kept = [w for w in words if base(w) not in gone]
    if not named:
        assert left == text  # nobody named: the query is left as it is
    elif not any(re.findall(r"\w+", w.casefold())[0] not in STOPWORDS for w in kept):
        assert left is None
    else:
        assert left is not None
        assert re.findall(r"[\w'\u2019]+", left) == kept


def test_per_request_weights_replace_the_defaults(world: World) -> None:
    # GIVEN
    memory = _write(world, "Alice moved the launch to March 3.", datetime(2023, 11, 1, tzinfo=UTC))

    # WHEN
    def hit(**ranking: object) -> float:
        request = SearchRequest.model_validate({"as_of": NOW, "query": "launch", "ranking": ranking})
        [result] = [r for r in world.search.search("acme", "bot", request.to_query()) if r.id == memory]
        return result.score

    # THEN
    lexical_only = hit(lexical_weight=1.0, recency_weight=0.0, importance_weight=0.0)
    assert lexical_only == pytest.approx(1.0)  # the only lexical hit is the best one
    assert hit(lexical_weight=0.0, recency_weight=0.0, importance_weight=0.0) < lexical_only
    assert hit(recency_weight=1.0, recency_tau_days=1.0) < hit(recency_weight=1.0, recency_tau_days=1000.0)


def test_a_zero_hit_search_logs_the_agent_and_the_query_topic(
    world: World, caplog: pytest.LogCaptureFixture
) -> None:
    # WHEN / THEN
    with caplog.at_level(logging.INFO):
        assert _ids(world, query="What did Alice decide about the launch budget last year?") == []

    [line] = [r for r in caplog.records if r.getMessage() == "zero-hit search"]
    assert line.agent_id == "bot"  # type: ignore[attr-defined]
    assert line.query_topic == "alice decide launch budget"  # type: ignore[attr-defined]
    assert line.time_hints == ["last year"]  # type: ignore[attr-defined]


def test_query_topic_keeps_meaningful_words_only() -> None:
    # WHEN / THEN
    assert query_topic("what is the plan?") == "plan"
    assert query_topic("what is it?") is None
    assert query_topic(None) is None


#: When the new running shoes were said (`_shoes`).
HOKAS_SAID = datetime(2023, 6, 2, tzinfo=UTC)


def _old_unrelated_new(world: World, old: str, new: str, new_at: datetime = HOKAS_SAID) -> tuple[str, str]:
    """Notes (not conversation turns: the writer links none of them by meaning): ``old``, an
    unrelated turn, and ``new``, said at ``new_at``; the old and new ids."""
    body = {
        "items": [
            {"content": text, "occurred_at": at, "kind": "note"}
            for at, text in (
                (datetime(2023, 1, 2, tzinfo=UTC), old),
                (
                    datetime(2023, 3, 2, tzinfo=UTC),
                    "I cleaned out the garage, found my old skateboard from school.",
                ),
                (new_at, new),
            )
        ]
    }
    first, _, last = world.write.accept(
        Caller("acme"), "bot", WriteRequest.model_validate(body).to_new_memories()
    )
    world.drain()
    return first, last


def _shoes(world: World) -> tuple[str, str]:
    """The old running shoes, an unrelated turn, and the new ones said far from the old words."""
    return _old_unrelated_new(
        world,
        "My running shoes are Asics Gel-Nimbus.",
        "The new Hokas are so much better for my knees, binned the old Asics.",
    )


def test_a_question_about_the_present_meets_the_newer_statement_the_writer_did_not_link(world: World) -> None:
    # GIVEN the old running shoes, an unrelated turn, and the new ones said far from the old words
    old, new = _shoes(world)
    # WHEN asked about the present, THEN the newer statement comes first and the old one right after
    assert _ids(world, query="What running shoes do I use?")[:2] == [new, old]
    # AND asked in the past tense, the ranking is the question's words' (the old one first)
    assert _ids(world, query="What running shoes did I use?")[0] == old


def test_the_older_statement_a_search_puts_second_is_marked_in_the_answer_not_in_the_store(
    world: World,
) -> None:
    # GIVEN the old running shoes and the new ones said far from the old words, not linked at write
    old, new = _shoes(world)
    assert world.memories.get("acme", "bot", old).superseded_by is None

    # WHEN asked about the present, as the API answers it
    request = SearchRequest.model_validate({"as_of": NOW, "query": "What running shoes do I use?"})
    first, second = SearchResponse.of(world.search.search("acme", "bot", request.to_query())).results[:2]

    # THEN the old statement is in the answer, marked: no longer current since the new one was said
    assert (first.id, second.id) == (new, old)
    assert second.current is False
    assert second.valid_to == HOKAS_SAID
    assert second.superseded_by == new
    # AND the new one holds and says what it replaced
    assert first.current is True and first.supersedes == [old]
    # AND nothing was stored: read back, the old memory is as the writer left it
    stored = world.memories.get("acme", "bot", old)
    assert stored.superseded_by is None and stored.valid_to is None
    # AND a question in the past tense neither reorders nor marks
    request = SearchRequest.model_validate({"as_of": NOW, "query": "What running shoes did I use?"})
    assert all(r.current for r in world.search.search("acme", "bot", request.to_query()))


def test_a_later_statement_naming_the_old_person_again_comes_first_unmarked(world: World) -> None:
    # GIVEN notes (the writer links none of them by meaning): where Owen lived, an unrelated turn,
    # and where he lives now, which names Owen and Bath again (a restatement to the shape test)
    old, new = _old_unrelated_new(
        world,
        "My best mate Owen lives with his girlfriend in Bath.",
        "Owen lives at his mum's place now, after the split with his girlfriend in Bath.",
    )

    # WHEN asked about the present, as the API answers it
    request = SearchRequest.model_validate({"as_of": NOW, "query": "Where does Owen live?"})
    first, second = SearchResponse.of(world.search.search("acme", "bot", request.to_query())).results[:2]

    # THEN the later statement comes first and the older one right after it
    assert (first.id, second.id) == (new, old)
    # AND neither is marked: the order is a guess by meaning and recency, not a replacement read
    assert first.current is True and second.current is True and second.superseded_by is None
    # AND asked in the past tense, the ranking is the question's words' (the old one first)
    assert _ids(world, query="Where did Owen live?")[0] == old

"""Supersession through the writer, search and forget on the embedded store: the newer value
first, the older one kept and marked, ``as_of`` answering with what held then, never across
end users or speakers, and a forget giving the older value back."""

from __future__ import annotations

import math
from collections.abc import Sequence
from datetime import datetime, timedelta

import numpy as np
import pytest
from tests.payloads import memory_record
from tests.unit.services.conftest import World

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.errors import ConflictError, DependencyError, NotFoundError
from agent_memory.governance.history import HistoryService
from agent_memory.model.caller import Caller
from agent_memory.model.queries import Hit
from agent_memory.model.records import MemoryRecord
from agent_memory.ports import AuditAction, AuditQuery, Matrix, UpdateJudge
from agent_memory.supersession.marking import MarkingService, StatementVectors
from agent_memory.tenancy.rules.embedding_spaces import DEFAULT_SPACE
from agent_memory.writing.memo_embedder import MemoEmbedder

BERLIN = "I live in Berlin, in a flat near Tempelhof."
LISBON = "I moved to Lisbon last week, my new flat is in Alfama."


def _remember(world: World, content: str, when: datetime, **fields: object) -> str:
    request = WriteRequest.model_validate({"items": [{"content": content, "occurred_at": when, **fields}]})
    [accepted] = world.write.accept(Caller("acme"), "bot", request.to_new_memories())
    world.drain()
    return accepted


def _hits(world: World, query: str, **body: object) -> list[Hit]:
    found = world.search.search(
        "acme", "bot", SearchRequest.model_validate({"query": query, **body}).to_query()
    )
    return [h for h in found if isinstance(h, Hit)]


def _months_ago(world: World, months: float) -> datetime:
    return world.clock.now() - timedelta(days=30 * months)


def test_a_move_supersedes_the_old_home_and_both_are_kept(world: World) -> None:
    # GIVEN Berlin in March and Lisbon in June
    march, june = _months_ago(world, 8), _months_ago(world, 5)
    berlin = _remember(world, BERLIN, march)
    # WHEN the move is written
    lisbon = _remember(world, LISBON, june)
    # THEN Lisbon comes first and is current; Berlin is kept, below it and marked
    hits = _hits(world, "where do I live?")
    assert [h.id for h in hits[:2]] == [lisbon, berlin]
    assert hits[0].current and not hits[1].current
    old, new = world.store.get("acme", "bot", berlin), world.store.get("acme", "bot", lisbon)
    assert old is not None and new is not None
    assert (old.superseded_by, old.valid_to) == (lisbon, june)
    assert (new.supersedes, new.valid_from, new.superseded_by) == ([berlin], june, None)
    [event] = world.store.audit_events(AuditQuery("acme", "bot", record_id=berlin)).events
    assert event.action == AuditAction.SUPERSEDED and event.detail["by"] == lisbon


def test_as_of_answers_with_what_held_then(world: World) -> None:
    # GIVEN Berlin in March and Lisbon in June
    march, june = _months_ago(world, 8), _months_ago(world, 5)
    berlin = _remember(world, BERLIN, march)
    lisbon = _remember(world, LISBON, june)
    # WHEN asking as of April and as of July
    april = _hits(world, "where do I live?", as_of=(march + timedelta(days=30)).isoformat())
    july = _hits(world, "where do I live?", as_of=(june + timedelta(days=30)).isoformat())
    # THEN April finds Berlin, current then; July finds Lisbon first
    assert [h.id for h in april] == [berlin] and april[0].current
    assert july[0].id == lisbon and july[1].id == berlin and not july[1].current


def test_a_changed_preference_ranks_first_even_when_the_old_one_matches_more_words(world: World) -> None:
    # GIVEN green tea in March, "switched from green tea to black coffee" in July
    tea = _remember(world, "My favourite drink is green tea.", _months_ago(world, 8))
    coffee = _remember(world, "Actually I switched from green tea to black coffee.", _months_ago(world, 4))
    # WHEN asking about the favourite drink
    hits = _hits(world, "what is my favourite drink?")
    # THEN coffee first, tea after it and marked
    assert [h.id for h in hits[:2]] == [coffee, tea]
    assert hits[1].record.superseded_by == coffee


def test_a_late_write_of_an_older_fact_takes_its_place_in_the_past(world: World) -> None:
    # GIVEN Lisbon (June) written first, then Berlin (March) written late
    march, june = _months_ago(world, 8), _months_ago(world, 5)
    lisbon = _remember(world, LISBON, june)
    # WHEN the older fact arrives
    berlin = _remember(world, BERLIN, march)
    # THEN Berlin is superseded by Lisbon, not the other way round
    old, new = world.store.get("acme", "bot", berlin), world.store.get("acme", "bot", lisbon)
    assert old is not None and new is not None
    assert old.superseded_by == lisbon and old.valid_to == june
    assert new.superseded_by is None and new.supersedes == [berlin]


def test_two_end_users_or_two_speakers_never_supersede_each_other(world: World) -> None:
    # GIVEN Ana lives in Berlin, as end user and as a speaker
    march, june = _months_ago(world, 8), _months_ago(world, 5)
    ana = _remember(world, BERLIN, march, user_id="ana")
    ana_says = _remember(world, BERLIN + " ", march, speaker="Ana", conversation_id="c1")
    # WHEN Ben (another end user) and Ben (another speaker) move to Lisbon
    _remember(world, LISBON, june, user_id="ben")
    _remember(world, LISBON, june, speaker="Ben", conversation_id="c1")
    # THEN neither of Ana's memories is superseded
    for record_id in (ana, ana_says):
        record = world.store.get("acme", "bot", record_id)
        assert record is not None and record.superseded_by is None


def test_a_new_value_is_not_merged_into_the_old_one_even_when_the_texts_are_close(world: World) -> None:
    # GIVEN a fact, and a near-identical text with another value the same day
    day = _months_ago(world, 1)
    old = _remember(world, "My favourite colour is blue.", day)
    # WHEN the new value is written
    new = _remember(world, "My favourite colour is green.", day + timedelta(minutes=5))
    # THEN both are kept: the old one superseded, not overwritten
    kept = world.store.get("acme", "bot", old)
    assert new != old and kept is not None and kept.content == "My favourite colour is blue."
    assert kept.superseded_by == new


def test_forgetting_the_newer_memory_gives_the_older_value_back(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    before = world.store.get("acme", "bot", berlin)
    # WHEN the user forgets the move
    world.forget.forget("acme", "bot", lisbon, actor="key")
    # THEN Berlin holds again, with no trace of the forgotten memory in its fields
    after = world.store.get("acme", "bot", berlin)
    assert before is not None and before.superseded_by == lisbon
    assert after is not None and after.superseded_by is None and after.valid_to is None
    hits = _hits(world, "where do I live?")
    assert [h.id for h in hits] == [berlin] and hits[0].current


def _history_service(world: World) -> HistoryService:
    return HistoryService(world.store, world.queue, world.pending, world.clock)


def test_the_history_lists_each_change_with_who_made_it(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    # WHEN the older memory's history is read
    record, versions = _history_service(world).history("acme", "bot", berlin)
    # THEN version 1 is the write, version 2 the supersession by the writer, naming the successor
    assert record.id == berlin
    assert [(v.number, v.change, v.actor) for v in versions] == [
        (1, "written", "writer"),
        (2, "superseded", "writer"),
    ]
    assert versions[0].content == versions[1].content == BERLIN
    assert versions[0].validity.superseded_by is None and versions[1].validity.superseded_by == lisbon


def test_an_admin_restore_undoes_a_supersession_on_both_memories(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    service = _history_service(world)
    # WHEN an admin restores Berlin's version 1 (before the supersession)
    restored = service.restore("acme", "bot", berlin, 1, actor="admin-key")
    made = restored.version
    # THEN Berlin holds again, Lisbon no longer names it, and the restore is version 3 in the trail
    old, new = world.store.get("acme", "bot", berlin), world.store.get("acme", "bot", lisbon)
    assert old is not None and old.superseded_by is None and old.valid_to is None
    assert new is not None and new.supersedes == []
    assert (made.number, made.change, made.actor, made.detail["version"]) == (3, "restored", "admin-key", 1)
    # AND the version it answered is the one the history reads back; no text was queued
    assert service.history("acme", "bot", berlin)[1][-1] == made and not restored.text_pending


def test_restoring_an_earlier_wording_goes_through_the_writer(world: World) -> None:
    # GIVEN a memory that absorbed a near-identical later write
    first = _remember(world, "Alice moved the product launch to March 3.", _months_ago(world, 1))
    _remember(
        world, "Alice moved the product launch to March 3 .", _months_ago(world, 1) + timedelta(minutes=1)
    )
    merged = world.store.get("acme", "bot", first)
    assert merged is not None and len(merged.merged_from) == 2
    # WHEN an admin restores version 1 and the writer runs
    _history_service(world).restore("acme", "bot", first, 1, actor="admin-key")
    world.drain()
    # THEN the first wording is the content again, and both writes are still held
    restored = world.store.get("acme", "bot", first)
    assert restored is not None and restored.content == "Alice moved the product launch to March 3."
    assert [m.content for m in restored.merged_from] == [m.content for m in merged.merged_from]


def test_a_forgotten_memory_keeps_no_text_in_any_version_and_cannot_be_restored(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon, then Berlin forgotten
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    _remember(world, LISBON, _months_ago(world, 5))
    world.forget.forget("acme", "bot", berlin, actor="key")
    service = _history_service(world)
    # WHEN its history is read and a restore is tried
    _, versions = service.history("acme", "bot", berlin)
    with pytest.raises(ConflictError):
        service.restore("acme", "bot", berlin, 1, actor="admin-key")
    # THEN every version is there, none holds the text
    assert [v.change for v in versions] == ["written", "superseded", "forget"]
    assert all(v.content is None for v in versions)


def test_another_tenant_sees_no_history_and_restores_nothing(world: World) -> None:
    # GIVEN acme's memory
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    service = _history_service(world)
    # WHEN / THEN another tenant asks for it by id
    with pytest.raises(NotFoundError):
        service.history("other", "bot", berlin)
    with pytest.raises(NotFoundError):
        service.restore("other", "bot", berlin, 1, actor="admin-key")


def test_forgetting_a_memory_whose_predecessor_retention_removed_forgets_it_cleanly(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon, then Berlin deleted by retention (no forget of it ran)
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    world.store.delete_records("acme", "bot", [berlin])
    # WHEN the move is forgotten (it names a predecessor that is gone)
    result = world.forget.forget("acme", "bot", lisbon, actor="key")
    # THEN it is forgotten like any memory, and nothing else changed
    assert result.forgotten == [lisbon]
    assert world.store.get("acme", "bot", berlin) is None


def test_a_new_value_no_pattern_reads_supersedes_by_meaning(world: World) -> None:
    # GIVEN a manager named in January, in one conversation
    priya = _remember(world, "My manager is Priya.", _months_ago(world, 8), conversation_id="c1")
    # WHEN another is named in June, in another conversation, in words no pattern reads
    tomasz = _remember(world, "My manager is Tomasz now.", _months_ago(world, 3), conversation_id="c2")
    # THEN Priya is marked as superseded by Tomasz from June, and Tomasz comes first
    old = world.store.get("acme", "bot", priya)
    assert old is not None and old.superseded_by == tomasz and old.valid_to == _months_ago(world, 3)
    hits = _hits(world, "who is my manager?")
    assert [h.id for h in hits[:2]] == [tomasz, priya] and not hits[1].current


@pytest.mark.parametrize(
    ("first", "second"),
    [
        ("We have a cat called Luna.", "We also have a cat called Mochi now."),  # added
        ("My manager is Priya.", "My mentor is Tomasz now."),  # another subject
        ("My manager is Priya.", "Priya is still my manager, thankfully."),  # restated
    ],
)
def test_a_statement_that_adds_restates_or_speaks_of_something_else_supersedes_nothing(
    world: World, first: str, second: str
) -> None:
    # GIVEN a statement
    older = _remember(world, first, _months_ago(world, 8), conversation_id="c1")
    # WHEN a near one is written months later in another conversation
    _remember(world, second, _months_ago(world, 3), conversation_id="c2")
    # THEN the first still holds
    record = world.store.get("acme", "bot", older)
    assert record is not None and record.superseded_by is None and record.valid_to is None


def test_a_question_that_names_a_time_is_answered_with_what_held_then(world: World) -> None:
    # GIVEN Berlin eight months ago and the move to Lisbon five months ago
    march, june = _months_ago(world, 8), _months_ago(world, 5)
    berlin = _remember(world, BERLIN, march)
    _remember(world, LISBON, june)
    # WHEN asked, today, where I lived in the month of Berlin
    hits = _hits(world, f"where did I live in {march:%B}?")
    # THEN Berlin comes first, current for that time
    assert hits[0].id == berlin and hits[0].current


class _Counting:
    """An embedder that counts the texts it was asked to embed."""

    def __init__(self) -> None:
        self._inner = HashingEmbedder(64)
        self.texts: list[str] = []

    @property
    def model_id(self) -> str:
        return self._inner.model_id

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        return self._inner.embed(texts)


def test_a_statement_is_embedded_on_its_own_words_once_while_it_is_kept() -> None:
    # GIVEN own vectors through a memo that keeps two texts, and three statements
    embedder = _Counting()
    vectors = StatementVectors(MemoEmbedder(embedder, kept=2))
    berlin, lisbon, porto = (
        memory_record(i, text, content_hash=i)
        for i, text in [("b", BERLIN), ("l", LISBON), ("p", "I work in Porto three days a week.")]
    )
    # WHEN Lisbon is compared with Berlin twice
    first = vectors.nearest(lisbon, [berlin])
    again = vectors.nearest(lisbon, [berlin])
    # THEN each was embedded once, on its words alone, and compared the same way both times
    assert embedder.texts == [LISBON, BERLIN]
    assert first == again and first[0][0] is berlin
    # AND a third statement pushes out the one least recently used (Lisbon), which is embedded anew
    vectors.nearest(porto, [berlin])
    vectors.nearest(lisbon, [berlin])
    assert embedder.texts == [LISBON, BERLIN, porto.content, LISBON]


class _Unreachable(_Counting):
    """An embedder whose model cannot be reached."""

    def embed(self, texts: Sequence[str]) -> Matrix:
        raise DependencyError("the model is unreachable")


def test_a_statement_whose_own_vector_cannot_be_made_supersedes_nothing_and_is_still_written(
    world: World,
) -> None:
    # GIVEN a manager named eight months ago, and a writer whose statement embedding fails
    priya = _remember(world, "My manager is Priya.", _months_ago(world, 8), conversation_id="c1")
    service = MarkingService(world.store, embedder=_Unreachable())
    tomasz = memory_record(
        "t",
        "My manager is Tomasz now.",
        tenant="acme",
        agent="bot",
        at=_months_ago(world, 3),
        conversation_id="c2",
    )
    # WHEN the newer statement is compared by meaning
    [vector] = world.embedder.embed([tomasz.content])
    out = service.on_write(tomasz, vector, DEFAULT_SPACE, world.clock.now())
    # THEN it comes back as it was, and Priya still holds
    assert out == tomasz
    old = world.store.get("acme", "bot", priya)
    assert old is not None and old.superseded_by is None


class _Table(_Counting):
    """An embedder that answers each text with the vector a test gave it (own vectors with
    chosen cosines), and any other text with one far from all of them."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        super().__init__()
        self._vectors = vectors

    def embed(self, texts: Sequence[str]) -> Matrix:
        self.texts.extend(texts)
        rows = [self._vectors.get(t, [0.0, 0.0, 0.0, 1.0]) for t in texts]
        return np.asarray([np.asarray(r) / np.linalg.norm(r) for r in rows], dtype=np.float32)


LEEDS = "I'm renting in Leeds city centre."
GARAGE = "I cleaned out the garage, found my old skateboard from school."


def _by_meaning(
    world: World,
    newer: str,
    vectors: dict[str, list[float]],
    older: str = LEEDS,
    judge: UpdateJudge | None = None,
) -> tuple[str, MemoryRecord]:
    """``older`` (Leeds) eight months ago and an unrelated turn five months ago, each in its
    conversation; then ``newer`` compared by meaning with own vectors from ``vectors`` (and
    ``judge``): the older one's id and ``newer`` as the service returns it."""
    leeds = _remember(world, older, _months_ago(world, 8), conversation_id="c1")
    _remember(world, GARAGE, _months_ago(world, 5), conversation_id="c2")
    service = MarkingService(world.store, embedder=_Table(vectors), judge=judge)
    record = memory_record(
        "n", newer, tenant="acme", agent="bot", at=_months_ago(world, 3), conversation_id="c3"
    )
    [vector] = world.embedder.embed([newer])
    return leeds, service.on_write(record, vector, DEFAULT_SPACE, world.clock.now())


#: Own vectors of Leeds and the unrelated turn: a newer statement's first component is its cosine
#: with Leeds, its third its cosine with the unrelated turn.
_OWN = {LEEDS: [1.0, 0.0, 0.0, 0.0], GARAGE: [0.0, 0.0, 1.0, 0.0]}


def _standing_out(margin: float, near: float = 0.45) -> list[float]:
    """A unit vector ``near`` Leeds and ``margin`` nearer Leeds than the unrelated turn."""
    return [near, math.sqrt(1 - near**2 - (near - margin) ** 2), near - margin, 0.0]


@pytest.mark.parametrize("margin", [0.18, 0.22])
@pytest.mark.parametrize(
    ("newer", "supersedes"),
    [
        ("My office is in Bradford, an awful commute.", False),  # names a value: maybe another attribute
        ("Finally got a place of my own in Bradford, an awful commute.", True),  # says it changed
    ],
)
def test_a_statement_that_says_a_value_changed_needs_to_stand_out_less(
    world: World, newer: str, supersedes: bool, margin: float
) -> None:
    # GIVEN Leeds, an unrelated turn, and a newer statement nearer Leeds by {margin}
    # WHEN it is compared by meaning
    leeds, out = _by_meaning(world, newer, {**_OWN, newer: _standing_out(margin)})
    # THEN it supersedes Leeds only when it says that something changed
    old = world.store.get("acme", "bot", leeds)
    assert old is not None
    assert (old.superseded_by == "n", out.supersedes == [leeds]) == (supersedes, supersedes)


def test_a_request_near_the_new_statement_does_not_keep_it_from_replacing_the_old_one(
    world: World,
) -> None:
    # GIVEN Leeds, an unrelated turn, and a request about the new city that is nearer the newer
    # statement by their own words than Leeds is (a question states no value to replace)
    request = "Can you find me a removal van to Bradford?"
    newer = "Finally got a place of my own in Bradford, an awful commute."
    leeds = _remember(world, LEEDS, _months_ago(world, 8), conversation_id="c1")
    _remember(world, GARAGE, _months_ago(world, 6), conversation_id="c2")
    _remember(world, request, _months_ago(world, 5), conversation_id="c3")
    own = {**_OWN, request: [0.0, 1.0, 0.0, 0.0], newer: _standing_out(0.22)}
    service = MarkingService(world.store, embedder=_Table(own))
    record = memory_record(
        "n", newer, tenant="acme", agent="bot", at=_months_ago(world, 3), conversation_id="c4"
    )
    # WHEN the newer statement is compared by meaning
    [vector] = world.embedder.embed([newer])
    out = service.on_write(record, vector, DEFAULT_SPACE, world.clock.now())
    # THEN only statements compete: Leeds stands out among them and is superseded
    old = world.store.get("acme", "bot", leeds)
    assert old is not None and old.superseded_by == "n" and out.supersedes == [leeds]


def test_a_plan_or_a_wish_ends_nothing(world: World) -> None:
    # GIVEN Leeds, an unrelated turn, and a newer turn that would replace Leeds if it said a move
    # were done, but only wishes for one
    wish = "Thinking about getting a place of my own in Bradford, finally."
    # WHEN it is compared by meaning, standing out as much as a move that is done
    leeds, out = _by_meaning(world, wish, {**_OWN, wish: _standing_out(0.3)})
    # THEN Leeds still holds
    old = world.store.get("acme", "bot", leeds)
    assert old is not None and old.superseded_by is None and out.supersedes == []


def test_a_story_of_the_past_ends_nothing_by_meaning(world: World) -> None:
    # GIVEN Leeds, an unrelated turn, and a newer turn telling a story of the past that names
    # another city, standing out as much as a move that is done
    story = "Back when we had a flat in Bradford the landlord was a saint."
    leeds, out = _by_meaning(world, story, {**_OWN, story: _standing_out(0.3)})
    # WHEN it is written, THEN Leeds still holds
    old = world.store.get("acme", "bot", leeds)
    assert old is not None and old.superseded_by is None and out.supersedes == []


def test_a_story_of_the_past_ends_nothing_that_a_pattern_reads(world: World) -> None:
    # GIVEN Berlin, then a story of the past whose words a pattern reads as a home
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    # WHEN the story is written
    _remember(world, "Back when I lived in Hamburg we had a cat called Pixel.", _months_ago(world, 5))
    # THEN Berlin still holds
    old = world.store.get("acme", "bot", berlin)
    assert old is not None and old.superseded_by is None


def test_news_of_one_day_that_names_no_new_value_ends_nothing(world: World) -> None:
    # GIVEN Leeds, an unrelated turn, and a newer turn of one morning's news naming no new value
    news = "Missed the bus into the centre this morning and now I'm late for everything."
    # WHEN it is compared by meaning, standing out as much as a move that is done
    leeds, out = _by_meaning(world, news, {**_OWN, news: _standing_out(0.3)})
    # THEN Leeds still holds
    old = world.store.get("acme", "bot", leeds)
    assert old is not None and old.superseded_by is None and out.supersedes == []


@pytest.mark.parametrize(("older", "ended"), [("again this morning", False), ("since this morning", True)])
def test_news_of_one_day_is_replaced_only_when_it_said_a_value_began(
    world: World, older: str, ended: bool
) -> None:
    # GIVEN an unrelated turn, then one that tells of one morning, each in its conversation
    news = f"The cat knocked my coffee off the desk {older}."
    newer = "Spilled coffee on my keyboard, the E key sticks now."
    aside = "We binged a Danish crime series over the weekend."
    _remember(world, aside, _months_ago(world, 9), conversation_id="c1")
    first = _remember(world, news, _months_ago(world, 8), conversation_id="c2")
    own = {news: [1.0, 0.0, 0.0, 0.0], aside: [0.0, 0.0, 1.0, 0.0], newer: _standing_out(0.3)}
    service = MarkingService(world.store, embedder=_Table(own))
    record = memory_record(
        "n", newer, tenant="acme", agent="bot", at=_months_ago(world, 3), conversation_id="c3"
    )
    # WHEN a later turn near it by meaning is written
    [vector] = world.embedder.embed([newer])
    service.on_write(record, vector, DEFAULT_SPACE, world.clock.now())
    # THEN the news is ended only when it said that something began ("since")
    old = world.store.get("acme", "bot", first)
    assert old is not None and (old.superseded_by == "n") is ended


GYM = "My gym membership is £30 a month."


@pytest.mark.parametrize(
    ("newer", "supersedes"),
    [
        ("They put the gym up again, it's £36 a month from January.", True),  # the amount changed
        ("The gym put new mats down in January, smells like a tyre shop.", False),  # no amount
    ],
)
def test_a_changed_amount_needs_to_stand_out_less(world: World, newer: str, supersedes: bool) -> None:
    # GIVEN an amount eight months ago, an unrelated turn, and a newer statement near the amount
    # (cosine 0.3) and only 0.12 nearer it than the unrelated turn: less than a statement that
    # says a value changed must stand out (0.15)
    own = {GYM: [1.0, 0.0, 0.0, 0.0], GARAGE: [0.0, 0.0, 1.0, 0.0], newer: _standing_out(0.12, near=0.3)}
    # WHEN it is compared by meaning
    gym, out = _by_meaning(world, newer, own, older=GYM)
    # THEN the same kind of amount with another value supersedes the old one; nearness alone not
    old = world.store.get("acme", "bot", gym)
    assert old is not None
    assert (old.superseded_by == "n", out.supersedes == [gym]) == (supersedes, supersedes)


class _Judge:
    """An update judge that answers every pair with one probability, and keeps the pairs asked."""

    def __init__(self, probability: float, *, fails: bool = False) -> None:
        self.probability = probability
        self.fails = fails
        self.asked: list[tuple[str, str]] = []

    @property
    def model_id(self) -> str:
        return "test-judge"

    def replaces(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        self.asked.extend(pairs)
        if self.fails:
            raise DependencyError("the judge is unreachable")
        return [self.probability] * len(pairs)


OFFICE = "My office is in Bradford, an awful commute."
MOVED = "Finally got a place of my own in Bradford, an awful commute."


@pytest.mark.parametrize(
    ("newer", "probability", "supersedes"),
    [
        (OFFICE, 0.95, True),  # the rules alone would keep Leeds: the judge reads a replacement
        (OFFICE, 0.2, False),
        (MOVED, 0.95, True),
        (MOVED, 0.05, False),  # the rules alone would end Leeds: the judge reads none
    ],
)
def test_an_update_judge_decides_what_a_statement_replaces_by_meaning(
    world: World, newer: str, probability: float, supersedes: bool
) -> None:
    # GIVEN Leeds, an unrelated turn, and a newer statement near Leeds by own vectors, and a judge
    # that finds the pair a replacement with {probability}
    judge = _Judge(probability)
    # WHEN it is compared by meaning
    leeds, out = _by_meaning(world, newer, {**_OWN, newer: _standing_out(0.22)}, judge=judge)
    # THEN Leeds is superseded as the judge says, and the judge read Leeds then the newer statement
    old = world.store.get("acme", "bot", leeds)
    assert old is not None
    assert (old.superseded_by == "n", out.supersedes == [leeds]) == (supersedes, supersedes)
    assert (LEEDS, newer) in judge.asked


def test_a_judge_reads_only_statements_near_enough(world: World) -> None:
    # GIVEN Leeds, an unrelated turn, a judge sure of every pair, and a newer statement far from
    # both by own vectors (cosine 0.1 with Leeds)
    judge = _Judge(0.99)
    # WHEN it is compared by meaning
    leeds, out = _by_meaning(world, OFFICE, {**_OWN, OFFICE: _standing_out(0.05, near=0.1)}, judge=judge)
    # THEN the judge was asked nothing and Leeds still holds
    old = world.store.get("acme", "bot", leeds)
    assert old is not None and old.superseded_by is None and out.supersedes == []
    assert judge.asked == []


def test_a_plan_or_a_wish_ends_nothing_whatever_the_judge_says(world: World) -> None:
    # GIVEN Leeds, an unrelated turn, a wish for a move, and a judge sure it replaces Leeds
    wish = "Thinking about getting a place of my own in Bradford, finally."
    # WHEN it is compared by meaning
    leeds, out = _by_meaning(world, wish, {**_OWN, wish: _standing_out(0.3)}, judge=_Judge(0.99))
    # THEN Leeds still holds
    old = world.store.get("acme", "bot", leeds)
    assert old is not None and old.superseded_by is None and out.supersedes == []


@pytest.mark.parametrize(("newer", "supersedes"), [(OFFICE, False), (MOVED, True)])
def test_a_judge_that_fails_leaves_the_rules_choice_and_the_statement_is_still_written(
    world: World, newer: str, supersedes: bool
) -> None:
    # GIVEN Leeds, an unrelated turn, a newer statement the rules alone take as replacing Leeds
    # or not, and a judge that fails
    judge = _Judge(0.99, fails=True)
    # WHEN it is compared by meaning
    leeds, out = _by_meaning(world, newer, {**_OWN, newer: _standing_out(0.22)}, judge=judge)
    # THEN it is written with the rules' choice, and the judge was asked
    old = world.store.get("acme", "bot", leeds)
    assert old is not None
    assert (old.superseded_by == "n", out.supersedes == [leeds]) == (supersedes, supersedes)
    assert judge.asked

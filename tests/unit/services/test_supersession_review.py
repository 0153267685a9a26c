"""The daily summary's model reviews supersession: it confirms a write-time link, undoes one it
finds wrong (both memories current again, the history saying who undid it), adds one write time
missed, and changes nothing when it cannot judge (no model, or an answer that names no pair)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import pytest
from tests.fakes import RecordingFeed
from tests.unit.services.conftest import World
from tests.unit.services.test_supersession import BERLIN, LISBON, _months_ago, _remember

from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.cascade.summarize import SummarizeService
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import SummarizeJob
from agent_memory.ports import AuditAction, AuditQuery, SummaryRequest, SummaryText
from agent_memory.supersession.review import ReviewService
from agent_memory.supersession.rules.pairs import verdicts

STANDUP = "Our team standup is at 9 every morning."
MOVED_STANDUP = "From this week the standup happens at 10 instead."


class Judge:
    """A summarizer with a model that answers each pair by ``decide(older, newer)``."""

    def __init__(self, decide: Callable[[str, str], str | None], model_id: str = "judge-1") -> None:
        self.decide = decide
        self.requests: list[SummaryRequest] = []
        self.model_id = model_id
        self.prompt_version = "p1"
        self.max_input_chars = 50_000
        self.max_output_chars = 2_000

    def summarize(self, request: SummaryRequest) -> SummaryText:
        self.requests.append(request)
        lines = []
        for child in request.children:
            older, newer = (line.split(": ", 1)[1] for line in child.text.splitlines())
            said = self.decide(older, newer)
            if said is not None:
                lines.append(f"{child.label}: {said}")
        return SummaryText("\n".join(lines), self.model_id, self.prompt_version)


def _day(world: World, *ids: str) -> list:  # type: ignore[type-arg]
    return [r for i in ids if (r := world.store.get("acme", "bot", i)) is not None]


def _review(world: World, judge: Judge, *ids: str) -> tuple[int, int]:
    return ReviewService(world.store).review(_day(world, *ids), judge, world.clock.now())


def test_a_confirmed_link_stays_as_write_time_made_it(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon at write time
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    before = world.store.get("acme", "bot", berlin)
    # WHEN the model says the move replaces the old home
    done = _review(world, Judge(lambda old, new: "yes"), lisbon)
    # THEN nothing changes
    assert done == (0, 0)
    assert world.store.get("acme", "bot", berlin) == before


def test_a_link_the_model_refutes_is_undone_and_both_hold_again(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon at write time
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    judge = Judge(lambda old, new: "no")
    # WHEN the model says the newer one does not replace the older
    done = _review(world, judge, lisbon)
    # THEN the link is gone from both, and each one's history says the model undid it
    assert done == (1, 0)
    old, new = world.store.get("acme", "bot", berlin), world.store.get("acme", "bot", lisbon)
    assert old is not None and new is not None
    assert (old.superseded_by, old.valid_to, old.valid_from) == (None, None, None)
    assert (new.supersedes, new.valid_from) == ([], None)
    for record_id in (berlin, lisbon):
        latest = world.store.audit_events(AuditQuery("acme", "bot", record_id=record_id)).events[0]
        assert latest.action == AuditAction.SUPERSESSION_UNDONE and latest.actor == "summarizer:judge-1"
    [request] = judge.requests
    assert request.purpose == "supersession" and "OLDER" in request.children[0].text


def test_each_memory_the_model_changes_is_a_change_event(world: World) -> None:
    # GIVEN Berlin superseded by Lisbon, and a feed
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    feed = RecordingFeed()
    review = ReviewService(world.store, feed=feed)
    # WHEN the model undoes the link
    review.review(_day(world, lisbon), Judge(lambda old, new: "no"), world.clock.now())
    # THEN both memories are a memory.updated event
    assert sorted(e.data["memory_id"] for e in feed.events) == sorted([berlin, lisbon])
    assert {e.type for e in feed.events} == {"memory.updated"}


def test_an_update_write_time_missed_is_linked_by_the_model(world: World) -> None:
    # GIVEN two memories write time does not link (no pattern knows a standup's time)
    standup = _remember(world, STANDUP, _months_ago(world, 3))
    moved = _remember(world, MOVED_STANDUP, _months_ago(world, 1))
    assert world.store.get("acme", "bot", moved).supersedes == []  # type: ignore[union-attr]
    # WHEN the model says the newer one replaces the older
    done = _review(world, Judge(lambda old, new: "yes" if "10" in new else "no"), moved)
    # THEN the older one is superseded by the newer, from the newer's date
    assert done == (0, 1)
    old, new = world.store.get("acme", "bot", standup), world.store.get("acme", "bot", moved)
    assert old is not None and new is not None
    assert (old.superseded_by, old.valid_to) == (moved, new.occurred_at)
    assert new.supersedes == [standup]


@pytest.mark.parametrize("answer", ["", "I cannot tell.", "1: yes\n1: no", "7: no"])
def test_an_answer_that_decides_nothing_changes_nothing(world: World, answer: str) -> None:
    # GIVEN Berlin superseded by Lisbon
    berlin = _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    judge = Judge(lambda old, new: None)
    judge.summarize = lambda request: SummaryText(answer, "judge-1", "p1")  # type: ignore[method-assign]
    # WHEN
    done = _review(world, judge, lisbon)
    # THEN
    assert done == (0, 0)
    assert world.store.get("acme", "bot", berlin).superseded_by == lisbon  # type: ignore[union-attr]


def test_a_summarizer_without_a_model_is_not_asked(world: World) -> None:
    # GIVEN the bundled extractive summarizer (it cannot judge a pair)
    _remember(world, BERLIN, _months_ago(world, 8))
    lisbon = _remember(world, LISBON, _months_ago(world, 5))
    judge = Judge(lambda old, new: "no", model_id="local-extractive-v3/hashing")
    # WHEN / THEN
    assert _review(world, judge, lisbon) == (0, 0) and judge.requests == []


def test_verdicts_read_numbered_lines_and_leave_contradictions_undecided() -> None:
    answer = "1: yes\n2) No\n[3] yes\n3: no\nnoise\n4 - YES because\n9: yes"
    assert verdicts(answer, 4) == {1: True, 2: False, 4: True}


def test_the_daily_summary_is_made_from_the_links_as_the_model_left_them(
    world: World, tmp_path: Path
) -> None:
    # GIVEN a day in which Lisbon superseded Berlin, and a summary model that finds it wrong
    day = (world.clock.now() - timedelta(days=3)).replace(hour=9, minute=0, second=0, microsecond=0)
    _remember(world, BERLIN, day - timedelta(days=90))
    lisbon = _remember(world, LISBON, day)
    folded: list[str] = []

    class Model(Judge):
        def summarize(self, request: SummaryRequest) -> SummaryText:
            if request.purpose == "supersession":
                return super().summarize(request)
            folded.extend(c.text for c in request.children)
            return SummaryText(f"[{request.period}] The user moved.", self.model_id, self.prompt_version)

    jobs = LocalJobQueue(LocalFifoQueue(tmp_path / "review-jobs.db"))
    service = SummarizeService(
        world.store,
        Model(lambda old, new: "no"),
        world.queue,
        jobs,
        world.clock,
        review=ReviewService(world.store),
    )
    # WHEN the day is summarized
    job = SummarizeJob(tenant_id="acme", agent_id="bot", grain=Grain.DAILY, time_key=day.date().isoformat())
    service.run(job)
    # THEN the model undid the link first: the summary's input no longer says Lisbon replaced Berlin
    assert world.store.get("acme", "bot", lisbon).supersedes == []  # type: ignore[union-attr]
    assert folded == [LISBON]

"""A year and a few days of one agent's life, end to end, on a controlled clock.

Every day the agent has a conversation (written through the API's write service, stored by the
writer: working memory); the local scheduler fires the cascade's schedules as the clock passes
their times (daily, weekly, monthly, quarterly, yearly), and the jobs and writes they cause are
run the way the local workers run them. A dozen key events, each naming a person, an amount and
a date, are planted on days that sit on the boundaries of time (a leap-free February's end, weeks
that straddle months, the ISO week 53 that runs into 2027). At the end:

* every planted event is still found by search, as the dated sentence it was, at *every* grain,
  in the summary whose period covers it, and ``grain: all`` blends them;
* every summary was made from exactly the children the folding rules give it (so a grain that
  dropped a child fails here, and its events vanish from every grain above it);
* re-running the whole year changes nothing in the store.
"""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from tests.fakes import FixedClock
from tests.unit.services.cascade_world import AGENT, CALLER, TENANT, Cascade, build
from tests.unit.services.conftest import make_world

from agent_memory.cascade.rules.periods import CHILD_GRAIN, child_keys, covered_span, key_for_day
from agent_memory.contract.v1 import SearchRequest, WriteRequest
from agent_memory.local.scheduler import LocalScheduler
from agent_memory.model.grains import SUMMARY_GRAINS, Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import DispatchEvent
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.schedules import Schedule

START = date(2026, 1, 1)
END = date(2027, 1, 5)  # the Monday 2026-W53 is summarized, and the cascade refreshed

#: The day of each event, and the event as written: a first name and a surname (unique in the
#: corpus, the search handle), then what they did.
EVENTS: dict[date, str] = {
    date(2026, 1, 2): "Emeka Okafor signed the Acme lease for $48,000 on January 2.",
    date(2026, 2, 27): "Freya Lindqvist closed the seed round at $2.5M on February 27.",
    date(2026, 3, 30): "Kenji Takahashi shipped version 3 to 1,200 users on March 30.",
    date(2026, 4, 30): "Chloé Moreau won the Globex tender worth $310,000 on April 30.",
    date(2026, 5, 31): "Diego Castillo hired 4 engineers for the Lisbon office on May 31.",
    date(2026, 6, 30): "Hana Nakamura renewed the Initech contract for $95,000 on June 30.",
    date(2026, 8, 3): "Ivan Kowalski cut cloud costs by $12,000 a month from August 3.",
    date(2026, 9, 30): "Aisha Adeyemi passed the SOC 2 audit on September 30 with 0 findings.",
    date(2026, 10, 1): "Viktor Petrov opened the Tallinn office with 12 desks on October 1.",
    date(2026, 11, 26): "Nadia Haddad booked $1.1M of Q4 revenue on November 26.",
    date(2026, 12, 31): "Lena Fischer signed the Hooli partnership for $600,000 on December 31.",
    date(2027, 1, 2): "Bruno Silva closed the 2026 books at $7.4M revenue on January 2.",
}

_FIRST = ("Alex", "Sam", "Robin", "Kim", "Jules", "Noor", "Ari", "Tess")
_VERBS = ("reviewed", "discussed", "sketched", "tidied", "questioned", "skimmed", "debated", "revisited")
_NOUNS = (
    "backlog",
    "onboarding flow",
    "style guide",
    "test suite",
    "release checklist",
    "meeting notes",
    "search page",
    "error messages",
    "dashboard layout",
    "support macros",
)
_TAILS = ("again", "briefly", "after lunch", "without much progress", "over coffee", "at length", "quietly")


def chatter(rng: random.Random, n: int) -> list[str]:
    """Small talk of a work day: no amounts, no dates, at most a first name."""
    out = []
    for _ in range(n):
        who = f"{rng.choice(_FIRST)} " if rng.random() < 0.4 else "we "
        out.append(
            f"{who}{rng.choice(_VERBS)} the {rng.choice(_NOUNS)} {rng.choice(_TAILS)}".capitalize() + "."
        )
    return out


def conversation(c: Cascade, day: date, rng: random.Random) -> None:
    """One conversation of the day (the contract's conversation form), with its event if any."""
    turns = chatter(rng, 3)
    turns += [EVENTS[day]] if day in EVENTS else []
    at = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=9)
    messages = [
        {
            "role": "user" if i % 2 == 0 else "assistant",
            "content": t,
            "occurred_at": at + timedelta(minutes=7 * i),
        }
        for i, t in enumerate(turns)
    ]
    request = WriteRequest.model_validate({"conversation_id": f"c-{day.isoformat()}", "messages": messages})
    c.world.write.accept(CALLER, AGENT, request.to_new_memories())
    discard_unpublished_metrics()


@pytest.fixture(scope="module")
def lived(tmp_path_factory: pytest.TempPathFactory) -> Cascade:
    """The year, lived once for every test of this module (it is the expensive part)."""
    return live(tmp_path_factory.mktemp("lifecycle"))


def live(tmp_path: Path) -> Cascade:
    clock = FixedClock(datetime(2026, 1, 1, 8, tzinfo=UTC))
    c = build(make_world(tmp_path, clock), tmp_path)

    def fire(schedule: Schedule, at: datetime) -> None:
        if schedule.function != "summarize_dispatch":
            return  # retention is not under test here: the cascade must keep everything
        event = DispatchEvent.model_validate(schedule.local_event(at))
        c.dispatch.dispatch(event, at=event.scheduled_time)

    scheduler = LocalScheduler(
        timezone="UTC", state_path=tmp_path / "scheduler.json", clock=clock, invoke=fire
    )
    scheduler.run_pending()  # the first start: the schedules begin now
    rng = random.Random(5)
    day = START
    while day <= END:
        clock._now = datetime.combine(day, datetime.min.time(), UTC) + timedelta(hours=8)
        conversation(c, day, rng)
        clock._now += timedelta(hours=18)  # 02:00 the next day ... then the rest of the night
        c.run()
        scheduler.run_pending()
        c.run()
        clock._now += timedelta(hours=4)  # 06:00: past every schedule of the night
        scheduler.run_pending()
        c.run()
        day += timedelta(days=1)
    return c


def search(c: Cascade, query: str, grain: str, n: int = 10) -> list[tuple[str, str | None, str]]:
    response = c.world.search.search(
        TENANT, AGENT, SearchRequest(query=query, grain=grain, max_results=n).to_query()
    )  # type: ignore[arg-type]
    return [(str(r.record.grain), r.record.time_key, r.record.content) for r in response]


@pytest.mark.parametrize(("day", "text"), EVENTS.items(), ids=[text.split()[1] for text in EVENTS.values()])
def test_every_planted_event_is_found_at_every_grain_with_its_date(
    lived: Cascade, day: date, text: str
) -> None:
    # GIVEN
    line = f"[{day.isoformat()}] {text}"
    first_name, surname = text.split()[:2]
    # WHEN / THEN
    for grain in (Grain.WORKING, *SUMMARY_GRAINS):
        hits = search(lived, f"{surname} {first_name}", grain.value, n=3)
        assert hits, f"nothing found for {surname} at {grain.value}"
        found_grain, key, content = hits[0]
        assert found_grain == grain.value
        if grain is Grain.WORKING:
            assert content == text
            continue
        # the summary that holds it is the one whose period folds that day, and it kept the
        # event as its dated sentence
        assert key == key_for_day(grain, day), f"{surname} at {grain.value}"
        assert line in content.splitlines(), f"{surname} lost at {grain.value} {key}"
        start, end = covered_span(grain, key)
        assert start <= datetime.combine(day, datetime.min.time(), UTC) < end


def test_grain_all_shows_a_fact_once_and_names_every_summary_that_quotes_it(lived: Cascade) -> None:
    # WHEN the fact is searched across every grain
    hits = lived.world.search.search(
        TENANT,
        AGENT,
        SearchRequest(query="Fischer Hooli partnership", grain="all", max_results=10).to_query(),
    )
    fischer = [h for h in hits if "Fischer" in h.record.content]
    # THEN it takes one place, as the working memory that holds it, first
    assert len(fischer) == 1 and fischer[0] is hits[0]
    assert fischer[0].record.grain is Grain.WORKING
    # AND that hit names the summary of every grain up the cascade that quotes it, with its period
    also = {a.grain: a.period for a in fischer[0].also_in}
    assert set(also) == set(SUMMARY_GRAINS)
    day = fischer[0].record.occurred_at.date()
    assert all(also[g] == key_for_day(g, day) for g in SUMMARY_GRAINS)
    # AND the places it no longer takes go to other memories
    assert len(hits) == 10


def test_every_summary_folds_exactly_the_children_the_rules_give_it(lived: Cascade) -> None:
    # GIVEN
    now = lived.world.clock.now()
    records = lived.snapshot(now)
    by_id = {r.id: r for r in records}
    summaries = [r for r in records if r.grain.is_summary]
    counts = {g: sum(1 for r in summaries if r.grain is g) for g in SUMMARY_GRAINS}
    # a day whose chatter was all merged into earlier near-duplicates (dedup-on-write) has no
    # working memory left and so no summary; every other day (all have closed) has one
    days_with_memory = {r.occurred_at.date() for r in records if r.grain is Grain.WORKING}
    # WHEN / THEN
    assert {r.time_key for r in summaries if r.grain is Grain.DAILY} == {
        d.isoformat() for d in days_with_memory if d <= END
    }
    assert counts == {
        Grain.DAILY: len([d for d in days_with_memory if d <= END]),
        Grain.WEEKLY: 53,
        Grain.MONTHLY: 12,
        Grain.QUARTERLY: 4,
        Grain.YEARLY: 1,
    }
    for s in summaries:
        assert s.time_key is not None
        if s.grain is Grain.DAILY:
            start, end = covered_span(Grain.DAILY, s.time_key)
            day = sorted(
                (r for r in records if r.grain is Grain.WORKING and start <= r.occurred_at < end),
                key=lambda r: (r.occurred_at, r.id),
            )
            expected = [r.id for r in day]
        else:
            child = CHILD_GRAIN[s.grain]
            keys = child_keys(s.grain, s.time_key)
            expected = [i for k in keys if (i := summary_id(TENANT, AGENT, child.value, k)) in by_id]
        assert s.source_ids == expected, f"{s.grain.value} {s.time_key}"
        assert all(i in by_id for i in s.source_ids)
        assert s.importance == max(by_id[i].importance for i in s.source_ids)


def test_the_late_days_of_week_53_reached_every_grain_above_it(lived: Cascade) -> None:
    # WHEN / THEN
    # 2026-W53 was folded into December on Jan 1st before it closed, then refreshed up the cascade
    assert lived.outcomes["made"] > (END - START).days + 53 + 12 + 4 + 1  # some were made again
    year = lived.summary(Grain.YEARLY, "2026")
    assert year is not None and "[2027-01-02] Bruno Silva closed the 2026 books" in year.content


def test_re_running_the_whole_year_changes_nothing(lived: Cascade) -> None:
    # GIVEN
    from agent_memory.model.jobs import SummarizeRequest

    before = lived.snapshot(lived.world.clock.now())
    lived.world.clock.advance(days=1)
    for grain in SUMMARY_GRAINS:
        body = {"grain": grain.value, "from": "2026-01-01", "to": "2026-12-31"}
        lived.dispatch.dispatch(SummarizeRequest.model_validate(body))

    # WHEN
    outcomes = lived.run()

    # THEN
    assert "made" not in outcomes and outcomes["unchanged"] > 400
    assert lived.snapshot(lived.world.clock.now()) == before

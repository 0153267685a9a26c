"""The operator's reads: the timeline, one period opened up, the agents, and search outcomes.

Everything runs on the embedded adapters with real summaries made by the cascade, so the
counts asserted are the ones an operator would see in the console.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import pytest
from tests.unit.services.cascade_world import AGENT, TENANT, Cascade, build
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest
from agent_memory.errors import ValidationFailedError
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.recall.agents import AgentsService
from agent_memory.recall.search_stats import SearchStatsService
from agent_memory.recall.timeline import MAX_TIMELINE_DAYS, TimelineService

NEW_YORK = "America/New_York"


def item(content: str, at: datetime) -> dict[str, object]:
    return {"content": content, "occurred_at": at.isoformat()}


@pytest.fixture
def cascade(world: World, tmp_path: Path) -> Cascade:
    world.clock._now = datetime(2026, 11, 30, 12, tzinfo=UTC)
    return build(world, tmp_path, timezone=NEW_YORK)


@pytest.fixture
def timeline(cascade: Cascade) -> TimelineService:
    return TimelineService(cascade.store, cascade.world.clock, NEW_YORK)


def lane(response: object, grain: Grain) -> list[tuple[str, int, str | None]]:
    (found,) = [x for x in response.lanes if x.grain is grain]  # type: ignore[attr-defined]
    return [(p.time_key, p.records, p.summary_id) for p in found.periods]


def summarize_the_20th(cascade: Cascade, *also: dict[str, object]) -> list[str]:
    """Write Alice's and Bob's memories of Nov 20 (New York), and ``also``, then make Nov 20's
    daily summary: the memories' ids, in that order."""
    ids = cascade.remember(
        item("Alice moved the launch to March 3.", datetime(2026, 11, 20, 15, tzinfo=UTC)),
        item("Bob owns the press release.", datetime(2026, 11, 20, 18, tzinfo=UTC)),
        *also,
    )
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()
    return ids


def test_working_memory_is_counted_per_local_day_and_summaries_show_what_they_folded(
    cascade: Cascade, timeline: TimelineService
) -> None:
    # GIVEN three memories on Nov 20 in New York (one at 03:00 UTC, still the 19th there), and the
    # day summarized
    summarize_the_20th(cascade, item("The venue holds 300 people.", datetime(2026, 11, 21, 3, tzinfo=UTC)))

    # WHEN the operator looks at the week
    response = timeline.timeline(TENANT, AGENT, date(2026, 11, 16), date(2026, 11, 22))

    # THEN the working lane counts local days, and the daily lane holds the summary of the 20th
    assert response.timezone == NEW_YORK
    assert lane(response, Grain.WORKING) == [("2026-11-20", 3, None)]
    (day,) = response.lanes[0].periods
    assert day.start == datetime(2026, 11, 20, 5, tzinfo=UTC)  # local midnight, EST
    assert lane(response, Grain.DAILY) == [
        ("2026-11-20", 3, summary_id(TENANT, AGENT, "daily", "2026-11-20"))
    ]
    assert lane(response, Grain.WEEKLY) == []
    assert [x.grain for x in response.lanes] == list(Grain)


def test_the_default_timeline_is_the_last_four_weeks_up_to_today(
    cascade: Cascade, timeline: TimelineService
) -> None:
    # GIVEN
    cascade.remember(item("Old news.", datetime(2026, 10, 1, 15, tzinfo=UTC)))

    # WHEN
    response = timeline.timeline(TENANT, AGENT)

    # THEN
    assert (response.since, response.until) == (date(2026, 11, 3), date(2026, 11, 30))
    assert lane(response, Grain.WORKING) == []  # Oct 1 is before the window


@pytest.mark.parametrize(
    ("ask", "field"),
    [
        pytest.param(
            lambda t: t.timeline(TENANT, AGENT, date(2026, 11, 21), date(2026, 11, 20)),
            "since",
            id="a-backwards-timeline",
        ),
        pytest.param(
            lambda t: t.timeline(
                TENANT, AGENT, date(2025, 1, 1), date(2025, 1, 1) + timedelta(MAX_TIMELINE_DAYS)
            ),
            "since",
            id="a-too-long-timeline",
        ),
        pytest.param(
            lambda t: t.period(TENANT, AGENT, Grain.WORKING, "2026-11-20"),
            "time_key",
            id="a-period-of-working-memory",
        ),
        pytest.param(
            lambda t: t.period(TENANT, AGENT, Grain.DAILY, "2026-13-01"),
            "time_key",
            id="a-period-of-a-bad-key",
        ),
    ],
)
def test_a_bad_window_or_period_is_refused_naming_the_query_field(
    timeline: TimelineService, ask: Callable[[TimelineService], object], field: str
) -> None:
    # WHEN / THEN asking for it is a validation error that names the field at fault
    with pytest.raises(ValidationFailedError) as raised:
        ask(timeline)
    assert raised.value.details[0]["loc"] == ["query", field]


def test_a_period_shows_its_summary_its_children_and_its_parent(
    cascade: Cascade, timeline: TimelineService
) -> None:
    # GIVEN
    ids = summarize_the_20th(cascade, item("Another day entirely.", datetime(2026, 11, 21, 15, tzinfo=UTC)))

    # WHEN
    period = timeline.period(TENANT, AGENT, Grain.DAILY, "2026-11-20")

    # THEN
    assert period.summary is not None
    assert period.summary.id == summary_id(TENANT, AGENT, "daily", "2026-11-20")
    assert sorted(period.summary.source_ids) == sorted(ids[:2])
    assert period.child_grain is Grain.WORKING
    assert [c.id for c in period.children] == ids[:2]  # oldest first; the 21st is not in it
    assert period.children_total == 2
    assert period.missing_sources == []
    assert period.parent is not None
    assert (period.parent.grain, period.parent.time_key) == (Grain.WEEKLY, "2026-W47")
    assert (period.start, period.end) == (
        datetime(2026, 11, 20, 5, tzinfo=UTC),
        datetime(2026, 11, 21, 5, tzinfo=UTC),
    )


def test_a_source_gone_since_the_summary_was_made_is_named(
    cascade: Cascade, timeline: TimelineService
) -> None:
    # GIVEN a summarized day whose first memory retention has since deleted
    ids = summarize_the_20th(cascade)
    assert cascade.store.delete_records(TENANT, AGENT, [ids[0]]) == 1

    # WHEN the day is opened
    period = timeline.period(TENANT, AGENT, Grain.DAILY, "2026-11-20")

    # THEN the summary still says what it was made from, and which of those is gone
    assert period.summary is not None
    assert [c.id for c in period.children] == [ids[1]]
    assert period.missing_sources == [ids[0]]


def test_a_period_without_a_summary_still_lists_its_children(
    cascade: Cascade, timeline: TimelineService
) -> None:
    # GIVEN
    ids = cascade.remember(item("Not summarized yet.", datetime(2026, 11, 29, 15, tzinfo=UTC)))

    # WHEN
    period = timeline.period(TENANT, AGENT, Grain.DAILY, "2026-11-29")

    # THEN
    assert period.summary is None
    assert [c.id for c in period.children] == ids
    assert period.missing_sources == []


def test_a_yearly_period_has_no_parent_and_folds_quarters(timeline: TimelineService) -> None:
    # WHEN
    period = timeline.period(TENANT, AGENT, Grain.YEARLY, "2026")
    # THEN
    assert (period.parent, period.child_grain, period.children) == (None, Grain.QUARTERLY, [])


def test_agents_are_the_tenants_agents_with_memory_and_a_bound_key_sees_only_its_own(
    cascade: Cascade,
) -> None:
    # GIVEN
    at = datetime(2026, 11, 20, 15, tzinfo=UTC)
    for agent in ("support", "billing", "research"):
        cascade.remember(item(f"{agent} was here.", at), agent=agent)
    service = AgentsService(cascade.store, cascade.world.clock)

    # WHEN
    first = service.list(TENANT, limit=2, cursor=None)
    rest = service.list(TENANT, limit=2, cursor=first.next_cursor)
    bound = service.list(TENANT, limit=1, cursor=None, only=frozenset({"research", "nobody"}))

    # THEN
    assert [a.agent_id for a in first.agents] == ["billing", "research"]
    assert [a.agent_id for a in rest.agents] == ["support"] and rest.next_cursor is None
    assert [a.agent_id for a in bound.agents] == ["research"]
    assert service.list("another-tenant", limit=10, cursor=None).agents == []


def test_search_stats_count_searches_and_those_that_found_nothing(cascade: Cascade) -> None:
    cascade.remember(item("Alice moved the launch to March 3.", datetime(2026, 11, 20, 15, tzinfo=UTC)))
    search = cascade.world.search
    clock = cascade.world.clock
    stats = SearchStatsService(cascade.store, clock)

    # GIVEN a search yesterday that found something, and two today: one finds, one does not
    clock._now -= timedelta(days=1)
    search.search(TENANT, AGENT, SearchRequest(query="launch date").to_query())
    clock._now += timedelta(days=1)
    search.search(TENANT, AGENT, SearchRequest(query="launch date").to_query())
    search.search(TENANT, AGENT, SearchRequest(query="launch", kinds=["decision"]).to_query())  # no decisions

    # WHEN the operator asks for the last day, then the last week
    today = stats.stats(TENANT, AGENT, days=1)
    week = stats.stats(TENANT, AGENT, days=7)

    # THEN
    assert (today.searches, today.zero_hits) == (2, 1)
    assert [(d.day, d.searches, d.zero_hits) for d in week.by_day] == [
        (date(2026, 11, 29), 1, 0),
        (date(2026, 11, 30), 2, 1),
    ]
    assert (week.searches, week.zero_hits) == (3, 1)
    assert stats.stats(TENANT, "someone-else", days=7).searches == 0

"""The dispatcher: one job per agent with anything to fold, for every period a request names."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from pydantic import ValidationError
from tests.fakes import utc
from tests.unit.services.cascade_world import TENANT, Cascade, build
from tests.unit.services.conftest import World

from agent_memory.cascade.rules import periods as cascade_rules
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import (
    MAX_PERIODS_PER_REQUEST,
    DispatchEvent,
    SummarizeJob,
    SummarizeRequest,
)


@pytest.fixture
def cascade(world: World, tmp_path: Path) -> Cascade:
    world.clock._now = utc(2027, 1, 10)
    return build(world, tmp_path)


def queued(c: Cascade) -> list[SummarizeJob]:
    jobs = []
    while batch := c.jobs_queue.receive(10):
        jobs += [SummarizeJob.model_validate_json(m.body) for m in batch]
        c.jobs_queue.ack(m.receipt_handle for m in batch)
    return jobs


def test_a_monthly_run_queues_every_agent_with_anything_beneath_it_once(cascade: Cascade) -> None:
    # GIVEN five agents: working memory only, summaries only, both, and two outside November
    note = {"content": "Alice moved the launch.", "occurred_at": "2026-11-18T10:00:00Z"}
    cascade.remember(note, agent="only-working")
    cascade.remember(note, agent="both")
    cascade.remember(
        {"content": "Bob booked Lisbon.", "occurred_at": "2026-11-30T10:00:00Z"}, agent="december-week"
    )
    cascade.remember({"content": "Carmen left.", "occurred_at": "2026-11-01T10:00:00Z"}, agent="october-week")
    cascade.queue(Grain.WEEKLY, "2026-W47", agent="both")
    cascade.remember(
        {"content": "Dmitri paid $5.", "occurred_at": "2026-11-10T10:00:00Z"}, agent="weeks-only"
    )
    cascade.queue(Grain.WEEKLY, "2026-W46", agent="weeks-only")
    cascade.run()
    # retention took the working memory before the 15th: only weeks-only's summaries are left
    assert cascade.store.delete_older_than(TENANT, Grain.WORKING, utc(2026, 11, 15)) == 2

    # WHEN November is dispatched (its weeks run from Nov 2 to Nov 29; pages of two agents)
    response = cascade.dispatch.dispatch(SummarizeRequest(grain="monthly", period="2026-11"))

    # THEN each agent with a day in those weeks, at any grain, gets exactly one job
    jobs = queued(cascade)
    assert sorted(j.agent_id for j in jobs) == ["both", "only-working", "weeks-only"]
    assert {(j.grain, j.time_key, j.reason) for j in jobs} == {(Grain.MONTHLY, "2026-11", "backfill")}
    assert response.jobs_queued == 3 and response.periods == ["2026-11"]


def test_a_scheduled_run_takes_the_period_that_closed_before_it_fired(cascade: Cascade) -> None:
    # GIVEN
    cascade.remember({"content": "Alice moved the launch.", "occurred_at": "2026-12-31T23:00:00Z"})

    # WHEN
    response = cascade.dispatch.dispatch(SummarizeRequest(grain="daily"), at=utc(2027, 1, 1, 0, 15))

    # THEN
    assert response.periods == ["2026-12-31"]
    assert [(j.time_key, j.reason) for j in queued(cascade)] == [("2026-12-31", "schedule")]


def test_a_range_queues_one_job_per_agent_and_period_with_activity(cascade: Cascade) -> None:
    # GIVEN
    cascade.remember(
        {"content": "Alice moved the launch.", "occurred_at": "2026-01-05T10:00:00Z"},
        {"content": "Bob booked Lisbon.", "occurred_at": "2026-03-31T10:00:00Z"},
    )

    # WHEN
    response = cascade.dispatch.dispatch(
        SummarizeRequest.model_validate({"grain": "daily", "from": "2026-01-01", "to": "2026-03-31"})
    )

    # THEN
    assert len(response.periods) == 90 and response.jobs_queued == 2
    assert sorted(j.time_key for j in queued(cascade)) == ["2026-01-05", "2026-03-31"]


def test_nothing_to_fold_queues_nothing(cascade: Cascade) -> None:
    # WHEN / THEN
    assert cascade.dispatch.dispatch(SummarizeRequest(grain="yearly", period="2026")).jobs_queued == 0


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"grain": "daily", "period": "2026-11-21", "from": "2026-01-01", "to": "2026-01-02"}, "not both"),
        ({"grain": "daily", "from": "2026-01-01"}, "both 'from' and 'to'"),
        ({"grain": "weekly", "period": "2026-11-21"}, "not a weekly time key"),
        ({"grain": "weekly", "period": "2027-W53"}, "not a valid weekly period"),
        ({"grain": "daily", "from": "2026-03-01", "to": "2026-01-01"}, "ends"),
        ({"grain": "daily", "from": "2025-01-01", "to": "2026-12-31"}, "split it"),
        ({"grain": "working"}, "grain"),
        ({"grain": "daily", "extra": 1}, "extra"),
    ],
)
def test_invalid_requests_are_refused_with_a_reason(body: dict[str, object], message: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match=message):
        SummarizeRequest.model_validate(body)


def test_a_full_leap_year_of_days_fits_in_one_request() -> None:
    # GIVEN
    request = SummarizeRequest.model_validate({"grain": "daily", "from": "2028-01-01", "to": "2028-12-31"})
    # WHEN / THEN
    assert len(request.time_keys(utc(2029, 1, 1), "UTC")) == MAX_PERIODS_PER_REQUEST == 366


def test_a_range_of_millennia_is_refused_after_walking_one_period_more_than_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Walking every day of 0001-01-01..9999-12-30 before counting them took 28 s of an API
    process's CPU per request."""
    # GIVEN a count of the periods the check walks
    walked: list[str] = []
    real = cascade_rules.time_key_for

    def counted(grain: Grain, day: date) -> str:
        key = real(grain, day)
        walked.append(key)
        return key

    monkeypatch.setattr(cascade_rules, "time_key_for", counted)
    # WHEN / THEN
    with pytest.raises(ValidationError, match="more than 366 daily periods"):
        SummarizeRequest.model_validate({"grain": "daily", "from": "0001-01-01", "to": "9999-12-30"})
    assert len(walked) == MAX_PERIODS_PER_REQUEST + 1


def test_the_scheduler_event_may_carry_the_time_it_fired() -> None:
    # GIVEN
    event = DispatchEvent.model_validate({"grain": "weekly", "scheduled_time": "2027-01-04T01:15:00Z"})
    # WHEN / THEN
    assert event.scheduled_time == utc(2027, 1, 4, 1, 15)
    assert event.time_keys(event.scheduled_time, "UTC") == ["2026-W53"]
    assert event.from_ is None

"""The local scheduler: catching up after downtime, state across restarts, failures."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from tests.fakes import FixedClock

from agent_memory.local.scheduler import LocalScheduler
from agent_memory.schedules import SCHEDULES, Schedule


def utc(*args: int) -> datetime:
    return datetime(*args, tzinfo=UTC)  # type: ignore[misc]


class Calls(list[tuple[str, dict[str, object]]]):
    def __call__(self, schedule: Schedule, at: datetime) -> None:
        self.append((schedule.name, schedule.local_event(at)))


def scheduler(tmp_path: Path, clock: FixedClock, calls: Calls, **kwargs: object) -> LocalScheduler:
    return LocalScheduler(state_path=tmp_path / "scheduler.json", clock=clock, invoke=calls, **kwargs)  # type: ignore[arg-type]


def test_the_first_start_fires_nothing_and_later_ones_fire_what_came_due(tmp_path: Path) -> None:
    clock, calls = FixedClock(utc(2026, 12, 30, 12)), Calls()
    s = scheduler(tmp_path, clock, calls)
    assert s.run_pending() == 0 and calls == []

    # WHEN the clock passes the new year
    clock._now = utc(2027, 1, 1, 5)

    # THEN each schedule fired for each of its times (finest grain first), with its scheduled time
    assert s.run_pending() == 8
    assert calls == [
        ("summarize-daily", {"grain": "daily", "scheduled_time": "2026-12-31T00:15:00+00:00"}),
        ("summarize-daily", {"grain": "daily", "scheduled_time": "2027-01-01T00:15:00+00:00"}),
        ("summarize-monthly", {"grain": "monthly", "scheduled_time": "2027-01-01T02:15:00+00:00"}),
        ("summarize-quarterly", {"grain": "quarterly", "scheduled_time": "2027-01-01T03:15:00+00:00"}),
        ("summarize-yearly", {"grain": "yearly", "scheduled_time": "2027-01-01T04:15:00+00:00"}),
        ("retention", {}),
        ("patterns", {"job": "patterns", "scheduled_time": "2026-12-31T05:45:00+00:00"}),
        ("profiles", {"job": "profiles", "scheduled_time": "2026-12-31T05:55:00+00:00"}),
    ]
    assert s.run_pending() == 0  # nothing fires twice


def test_the_due_list_merges_schedules_in_time_order(tmp_path: Path) -> None:
    # GIVEN
    s = scheduler(tmp_path, FixedClock(), Calls())
    due = s.due(utc(2026, 12, 31, 1), utc(2027, 1, 1, 5))
    # WHEN / THEN
    assert [(t.isoformat(), sch.name) for t, sch in due] == [
        ("2026-12-31T05:15:00+00:00", "retention"),
        ("2026-12-31T05:45:00+00:00", "patterns"),
        ("2026-12-31T05:55:00+00:00", "profiles"),
        ("2027-01-01T00:15:00+00:00", "summarize-daily"),
        ("2027-01-01T02:15:00+00:00", "summarize-monthly"),
        ("2027-01-01T03:15:00+00:00", "summarize-quarterly"),
        ("2027-01-01T04:15:00+00:00", "summarize-yearly"),
    ]


def test_a_restart_catches_up_what_was_missed_while_it_was_off(tmp_path: Path) -> None:
    clock = FixedClock(utc(2026, 11, 20, 12))
    scheduler(tmp_path, clock, Calls()).run_pending()  # first start: state written

    # WHEN the machine was off for ten days and a new scheduler starts
    clock._now = utc(2026, 11, 30, 12)
    calls = Calls()
    # 10 days (and 10 retention, 10 pattern and 10 profile runs), 2 Mondays
    assert scheduler(tmp_path, clock, calls).run_pending() == 42

    assert [name for name, _ in calls].count("summarize-daily") == 10
    assert ("summarize-weekly", {"grain": "weekly", "scheduled_time": "2026-11-23T01:15:00+00:00"}) in calls
    assert (
        json.loads((tmp_path / "scheduler.json").read_text())["summarize-daily"]
        == "2026-11-30T00:15:00+00:00"
    )


def test_catching_up_is_bounded(tmp_path: Path) -> None:
    # GIVEN
    clock = FixedClock(utc(2020, 1, 1))
    scheduler(tmp_path, clock, Calls()).run_pending()
    clock._now = utc(2026, 1, 1, 12)
    calls = Calls()

    # WHEN
    scheduler(tmp_path, clock, calls, max_catch_up=3).run_pending()

    # THEN
    daily = [e["scheduled_time"] for n, e in calls if n == "summarize-daily"]
    assert daily == ["2025-12-30T00:15:00+00:00", "2025-12-31T00:15:00+00:00", "2026-01-01T00:15:00+00:00"]


def test_a_failed_firing_is_retried_and_does_not_stop_the_others(tmp_path: Path) -> None:
    # GIVEN
    clock, attempts = FixedClock(utc(2026, 11, 22, 12)), Calls()

    def flaky(schedule: Schedule, at: datetime) -> None:
        attempts(schedule, at)
        if schedule.name == "summarize-daily" and len(attempts) == 1:
            raise RuntimeError("store locked")

    # WHEN
    s = LocalScheduler(state_path=tmp_path / "s.json", clock=clock, invoke=flaky)
    s.run_pending()
    clock._now = utc(2026, 11, 23, 2)

    # THEN
    assert s.run_pending() == 1  # the daily failed; the weekly fired
    assert s.run_pending() == 1  # the daily, retried
    assert [n for n, _ in attempts] == ["summarize-daily", "summarize-weekly", "summarize-daily"]


def test_schedules_fire_in_the_configured_timezone(tmp_path: Path) -> None:
    # GIVEN
    clock, calls = FixedClock(utc(2026, 11, 20, 0)), Calls()
    s = scheduler(tmp_path, clock, calls, schedules=SCHEDULES[:1], timezone="Pacific/Auckland")
    s.run_pending()
    clock._now = utc(2026, 11, 21, 0)

    # WHEN
    s.run_pending()

    # THEN
    # 00:15 in Auckland (UTC+13) is 11:15 UTC the day before
    assert calls == [("summarize-daily", {"grain": "daily", "scheduled_time": "2026-11-20T11:15:00+00:00"})]


def test_adding_a_job_is_one_line(tmp_path: Path) -> None:
    # GIVEN
    retention = Schedule("retention", "cron(15 5 * * ? *)", "retention")
    clock, calls = FixedClock(utc(2026, 11, 20, 12)), Calls()
    s = scheduler(tmp_path, clock, calls, schedules=(*SCHEDULES, retention))
    s.run_pending()
    clock._now = utc(2026, 11, 21, 6)

    # WHEN
    s.run_pending()

    # THEN
    assert ("retention", {}) in calls
    assert retention.aws_input() == {}
    assert SCHEDULES[0].aws_input() == {"grain": "daily", "scheduled_time": "<aws.scheduler.scheduled-time>"}


def test_an_unreadable_state_file_starts_afresh(tmp_path: Path) -> None:
    # GIVEN
    (tmp_path / "scheduler.json").write_text("{not json")
    calls = Calls()
    # WHEN / THEN
    assert scheduler(tmp_path, FixedClock(), calls).run_pending() == 0
    assert json.loads((tmp_path / "scheduler.json").read_text())

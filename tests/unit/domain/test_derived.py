"""The registry of derived kinds: which row made a record, which memories feed each row, and the
jobs a row queues to re-make what a forget hid (what the forget walk and the writer both read)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from agent_memory.derived.rules.kinds import (
    DERIVED_KINDS,
    PATTERNS,
    PROFILES,
    SUMMARIES,
    Stale,
    derived_kind,
    is_derived,
)
from agent_memory.derived.rules.patterns import RECOGNISED_BY, RECOGNISER, PatternJob
from agent_memory.derived.rules.profiles import PROFILED_BY, PROFILER, ProfileJob
from agent_memory.model.grains import Grain
from agent_memory.model.jobs import SummarizeJob
from agent_memory.model.records import MemoryKind, MemoryRecord

T0 = datetime(2026, 11, 21, 9, tzinfo=UTC)


def record(rid: str, kind: MemoryKind, **fields: object) -> MemoryRecord:
    return MemoryRecord.model_validate(
        {
            "id": rid,
            "tenant_id": "acme",
            "agent_id": "bot",
            "kind": kind,
            "content": "x",
            "content_hash": "h",
            "created_at": T0,
            "updated_at": T0,
            "occurred_at": T0,
            **fields,
        }
    )


DAY = record("sum_day", MemoryKind.SUMMARY, grain=Grain.DAILY, time_key="2026-11-20")
YEAR = record("sum_year", MemoryKind.SUMMARY, grain=Grain.YEARLY, time_key="2026")
PATTERN = record("pat_1", MemoryKind.PATTERN, metadata={RECOGNISED_BY: RECOGNISER})
PROFILE = record("prf_1", MemoryKind.PROFILE, metadata={PROFILED_BY: PROFILER})
CLIENTS_PATTERN = record("mem_p", MemoryKind.PATTERN)
CLIENTS_PROFILE = record("mem_q", MemoryKind.PROFILE)
FACT = record("mem_f", MemoryKind.FACT)
SUCCESS = record("mem_s", MemoryKind.SUCCESS)


@pytest.mark.parametrize(
    ("made", "row"),
    [
        (DAY, SUMMARIES),
        (YEAR, SUMMARIES),
        (PATTERN, PATTERNS),
        (PROFILE, PROFILES),
        (CLIENTS_PATTERN, None),
        (CLIENTS_PROFILE, None),
        (FACT, None),
    ],
)
def test_each_record_is_told_to_the_row_whose_job_made_it(made: MemoryRecord, row: object) -> None:
    # WHEN / THEN a service's summary, pattern or profile finds its row; a caller's memory, even
    # of a derived kind, finds none (nothing re-makes or drops it)
    assert derived_kind(made) is row


def test_only_what_a_per_agent_job_keeps_is_derived_for_folding_and_retention() -> None:
    # WHEN / THEN patterns and profiles the service made are derived; summaries and a caller's
    # memories are not (the daily summary folds them, retention may remove them)
    assert [is_derived(r) for r in (PATTERN, PROFILE, DAY, CLIENTS_PATTERN, FACT)] == [
        True,
        True,
        False,
        False,
        False,
    ]


def test_each_row_says_which_memories_may_feed_it() -> None:
    # WHEN each row is asked about a working fact, a success and two summaries
    fed = {row.kind: [row.fed_by(r) for r in (FACT, SUCCESS, DAY, YEAR)] for row in DERIVED_KINDS}

    # THEN a fact feeds the day's summary and a profile, a success the day's summary and a
    # pattern; a daily summary feeds its week, a yearly one nothing
    assert fed == {
        MemoryKind.SUMMARY: [True, True, True, False],
        MemoryKind.PATTERN: [False, True, False, False],
        MemoryKind.PROFILE: [True, False, False, False],
    }


def test_a_stale_summary_is_re_made_by_its_periods_job() -> None:
    # WHEN the summary row is asked to re-make a stale day and a stale week
    jobs = SUMMARIES.remake("acme", "bot", [Stale.of(DAY), Stale("sum_w", Grain.WEEKLY, "2026-W47")])

    # THEN one forget job per period, keyed by its agent-period
    assert jobs == [
        SummarizeJob(
            tenant_id="acme", agent_id="bot", grain=Grain.DAILY, time_key="2026-11-20", reason="forget"
        ),
        SummarizeJob(
            tenant_id="acme", agent_id="bot", grain=Grain.WEEKLY, time_key="2026-W47", reason="forget"
        ),
    ]


def test_stale_patterns_and_profiles_are_re_made_by_one_job_per_agent_naming_them() -> None:
    # WHEN the pattern and profile rows are asked to re-make what a forget hid, and nothing
    patterns = PATTERNS.remake("acme", "bot", [Stale("pat_1"), Stale("pat_2")])
    profiles = PROFILES.remake("acme", "bot", [Stale("prf_1")])
    nothing = PATTERNS.remake("acme", "bot", [])

    # THEN one job each, naming the stale ids so its run continues them; none for nothing
    assert patterns == [
        PatternJob(tenant_id="acme", agent_id="bot", reason="forget", stale=["pat_1", "pat_2"])
    ]
    assert profiles == [ProfileJob(tenant_id="acme", agent_id="bot", reason="forget", stale=["prf_1"])]
    assert nothing == []

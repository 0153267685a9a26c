"""The summarize worker on the embedded adapters: what a summary folds and carries, re-runs that
change nothing, self-healing, refreshes of stale parents, and folding in chunks."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

import pytest
from tests.fakes import FixedClock, utc
from tests.unit.services.cascade_world import AGENT, TENANT, Cascade, build
from tests.unit.services.conftest import World

from agent_memory.adapters.summarizers.local import Budget, LocalExtractiveSummarizer
from agent_memory.cascade.rules.periods import covered_span
from agent_memory.cascade.summarize import (
    ChildNotStoredYetError,
    RunStats,
    SummarizeService,
    SummaryOutcome,
    fold,
)
from agent_memory.errors import ConfigurationError
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.records import MemoryKind
from agent_memory.ports import AuditEvent, SummaryInput, SummaryRequest, SummaryText


def item(content: str, at: datetime, **fields: object) -> dict[str, object]:
    return {"content": content, "occurred_at": at.isoformat(), **fields}


@pytest.fixture
def cascade(world: World, tmp_path: Path) -> Cascade:
    world.clock._now = utc(2027, 2, 1, 12)  # after every period the tests use
    return build(world, tmp_path)


def forget(c: Cascade, record_id: str) -> None:
    now = c.world.clock.now()
    assert c.store.soft_delete(
        TENANT, AGENT, record_id, AuditEvent(TENANT, AGENT, record_id, "forget", "t", now)
    )


# ------------------------------------------------------------------------------------------------
# a daily summary: what it folds, what it carries
# ------------------------------------------------------------------------------------------------


def test_a_daily_summary_folds_the_working_memory_of_its_day_and_says_where_it_came_from(
    cascade: Cascade,
) -> None:
    # GIVEN working memory just before, during and just after the 20th
    day = utc(2026, 11, 20)
    cascade.remember(item("Nadia closed the Q3 books late on the 19th.", day - timedelta(microseconds=1)))
    ids = cascade.remember(
        item("Alice moved the launch to March 3.", day, importance=0.9, tags=["launch"], user_id="u-1"),
        item(
            "Bob will tell the Globex team about the move.",
            day + timedelta(hours=9),
            tags=["launch", "globex"],
            user_id="u-1",
        ),
        item(
            "the standup ran long",
            day + timedelta(days=1) - timedelta(seconds=1),
            importance=0.2,
            user_id="u-1",
        ),
    )
    cascade.remember(item("Omar started on the 21st.", day + timedelta(days=1)))

    # WHEN the day is summarized
    cascade.queue(Grain.DAILY, "2026-11-20")
    assert cascade.run() == {"made": 1}

    # THEN one summary with a deterministic id, covering exactly the day, made of those three
    s = cascade.summary(Grain.DAILY, "2026-11-20")
    assert s is not None and s.id == summary_id(TENANT, AGENT, "daily", "2026-11-20")
    assert (s.grain, s.kind, s.time_key) == (Grain.DAILY, MemoryKind.SUMMARY, "2026-11-20")
    assert (s.period_start, s.period_end) == (day, day + timedelta(days=1))
    assert s.source_ids == ids
    assert "[2026-11-20] Alice moved the launch to March 3." in s.content.splitlines()
    assert "Nadia" not in s.content and "Omar" not in s.content
    # the most important child sets the importance; common tags and user carry over
    assert s.importance == 0.9
    assert s.tags == ["launch", "globex"]
    assert s.user_id == "u-1"
    assert s.metadata["summarizer_model_id"] == cascade.summarizer.model_id
    assert s.metadata["prompt_version"] == cascade.summarizer.prompt_version
    assert s.metadata["children_count"] == 3 and s.metadata["child_grain"] == "working"
    assert len(s.metadata["input_hash"]) == 64


def test_days_follow_the_configured_timezone(world: World, tmp_path: Path) -> None:
    # GIVEN Auckland (UTC+13): 12:00 UTC on the 20th is 01:00 on the 21st there
    world.clock._now = utc(2026, 12, 1)
    c = build(world, tmp_path, timezone="Pacific/Auckland")
    c.remember(item("Kenji landed in Auckland.", utc(2026, 11, 20, 12)))

    # WHEN the 20th and the 21st are summarized
    c.queue(Grain.DAILY, "2026-11-20")
    c.queue(Grain.DAILY, "2026-11-21")
    assert c.run() == {"empty": 1, "made": 1}

    # THEN the memory is in Auckland's 21st, which began at 11:00 UTC on the 20th
    s = c.summary(Grain.DAILY, "2026-11-21")
    assert s is not None and "[2026-11-21] Kenji landed in Auckland." in s.content
    assert s.period_start == utc(2026, 11, 20, 11)


def test_a_day_whose_midnight_does_not_exist_folds_what_happened_after_the_jump(
    world: World, tmp_path: Path
) -> None:
    # GIVEN Santiago, whose clocks jump from 00:00 to 01:00 on 2026-09-06 (04:00 UTC)
    world.clock._now = utc(2026, 10, 1)
    c = build(world, tmp_path, timezone="America/Santiago")
    c.remember(
        item("Rosa left at 23:59 on the 5th.", utc(2026, 9, 6, 3, 59, 59)),
        item("Sven arrived at 01:00 on the 6th.", utc(2026, 9, 6, 4, 0, 0)),
    )

    # WHEN both days are summarized
    c.queue(Grain.DAILY, "2026-09-05")
    c.queue(Grain.DAILY, "2026-09-06")
    c.run()

    # THEN each memory is in its own local day, and the 6th begins when the clocks jump
    fifth, sixth = c.summary(Grain.DAILY, "2026-09-05"), c.summary(Grain.DAILY, "2026-09-06")
    assert fifth is not None and sixth is not None
    assert "Rosa" in fifth.content and "Sven" not in fifth.content
    assert "Sven" in sixth.content and "Rosa" not in sixth.content
    assert fifth.period_end == sixth.period_start == utc(2026, 9, 6, 4)


def test_an_empty_period_makes_nothing(cascade: Cascade) -> None:
    # GIVEN
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.queue(Grain.MONTHLY, "2026-11")

    # WHEN / THEN
    assert cascade.run() == {"empty": 2}
    assert cascade.world.queue.depth() == 0
    assert cascade.store.stats(TENANT, AGENT, cascade.world.clock.now()).records == {}


def test_a_day_that_has_not_ended_is_never_summarized(cascade: Cascade) -> None:
    # GIVEN writes into today (the clock is at noon)
    today = cascade.world.clock.now().replace(hour=0)
    cascade.remember(item("The morning standup moved to 9:30.", today + timedelta(hours=9)))
    # WHEN a job (or a coarser period healing its days) asks for today
    cascade.queue(Grain.DAILY, today.date().isoformat())
    # THEN nothing is made: later writes of the day would be in no summary
    assert cascade.run() == {"unfinished": 1}
    assert cascade.summary(Grain.DAILY, today.date().isoformat()) is None


def test_a_summary_names_every_child_however_many(cascade: Cascade) -> None:
    # GIVEN a very busy day (more children than the old 1,000-id cap)
    day = utc(2026, 11, 20)
    ids: list[str] = []
    for batch in range(24):
        ids += cascade.remember(
            *(item(f"event number {batch}-{i}", day + timedelta(minutes=batch, seconds=i)) for i in range(50))
        )
    # WHEN it is summarized THEN every child is named (retention deletes only what is named)
    cascade.queue(Grain.DAILY, "2026-11-20")
    assert cascade.run() == {"made": 1}
    s = cascade.summary(Grain.DAILY, "2026-11-20")
    assert s is not None and sorted(s.source_ids) == sorted(ids) and len(ids) == 1_200


# ------------------------------------------------------------------------------------------------
# re-runs
# ------------------------------------------------------------------------------------------------


def test_a_re_run_of_unchanged_children_is_a_no_op_on_the_store(cascade: Cascade) -> None:
    # GIVEN a week summarized (its days healed on the way)
    cascade.remember(*(item(f"Alice shipped build {n}.", utc(2026, 11, 16 + n, 10)) for n in range(5)))
    cascade.queue(Grain.WEEKLY, "2026-W47")
    cascade.run()
    before = cascade.snapshot(cascade.world.clock.now())
    cascade.world.clock.advance(days=3)

    # WHEN the week and its days are run again
    cascade.queue(Grain.WEEKLY, "2026-W47")
    for d in range(16, 23):
        cascade.queue(Grain.DAILY, f"2026-11-{d}")
    outcomes = cascade.run()

    # THEN nothing was written: no summarizer call, the store is exactly as it was
    assert outcomes == {"unchanged": 6, "empty": 2}
    assert sum(r.calls for r in cascade.runs[-8:]) == 0
    assert cascade.snapshot(cascade.world.clock.now()) == before


def test_a_re_run_with_changed_children_overwrites_the_summary_in_place(cascade: Cascade) -> None:
    cascade.remember(item("Alice moved the launch to March 3.", utc(2026, 11, 20, 9)))
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()
    first = cascade.summary(Grain.DAILY, "2026-11-20")
    cascade.world.clock.advance(hours=1)

    # WHEN a late memory of that day arrives and the day is re-run
    cascade.remember(item("Priya approved a budget of $40,000.", utc(2026, 11, 20, 17)))
    cascade.queue(Grain.DAILY, "2026-11-20")
    assert cascade.run() == {"made": 1}

    # THEN the same record, re-made: new content and update time, same creation time
    again = cascade.summary(Grain.DAILY, "2026-11-20")
    assert first is not None and again is not None
    assert "Priya approved a budget of $40,000." in again.content
    assert again.created_at == first.created_at and again.updated_at > first.updated_at
    assert cascade.store.stats(TENANT, AGENT, cascade.world.clock.now()).records["daily"] == 1


def test_a_summary_is_kept_when_children_were_only_removed_since(cascade: Cascade) -> None:
    ids = cascade.remember(
        item("Alice moved the launch to March 3.", utc(2026, 11, 20, 9)),
        item("Bob booked flights to Lisbon.", utc(2026, 11, 20, 10)),
    )
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()

    # WHEN one child is gone (retention deleted it) and the day is re-run
    assert cascade.store.delete_records(TENANT, AGENT, [ids[1]]) == 1
    cascade.queue(Grain.DAILY, "2026-11-20")

    # THEN the summary still remembers it
    assert cascade.run() == {"kept": 1}
    s = cascade.summary(Grain.DAILY, "2026-11-20")
    assert s is not None and "Lisbon" in s.content


def test_a_summary_holding_a_forgotten_child_is_remade_not_kept(cascade: Cascade) -> None:
    """A forget that found no summary to mark (its version was still queued) leaves the stored
    summary live with the forgotten words: the next run re-makes it, never keeps it."""
    # GIVEN a day summarized from two memories
    ids = cascade.remember(
        item("Alice moved the launch to March 3.", utc(2026, 11, 20, 9)),
        item("Bob booked flights to Lisbon.", utc(2026, 11, 20, 10)),
    )
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()

    # WHEN one child is forgotten behind the summary's back and the day is re-run
    forget(cascade, ids[1])
    cascade.queue(Grain.DAILY, "2026-11-20")

    # THEN the summary is made again without it
    assert cascade.run() == {"made": 1}
    s = cascade.summary(Grain.DAILY, "2026-11-20")
    assert s is not None and "Lisbon" not in s.content and "launch" in s.content


def test_a_late_child_is_folded_into_what_the_summary_says_when_retention_took_the_others(
    cascade: Cascade,
) -> None:
    # GIVEN a day summarized from one memory, which retention then deleted (the summary named it)
    day = utc(2026, 11, 20)
    [first] = cascade.remember(item("Hannah viewed the flat on Elm Street.", day + timedelta(hours=9)))
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()
    assert cascade.store.delete_records(TENANT, AGENT, [first]) == 1
    # AND a late write into that day
    [late] = cascade.remember(item("Late note: Hannah signed the lease.", day + timedelta(hours=18)))

    # WHEN the day is made again (the retention run queues it)
    cascade.queue(Grain.DAILY, "2026-11-20")
    assert cascade.run() == {"made": 1}

    # THEN the summary still says what the deleted memory said, and now the late one too
    s = cascade.summary(Grain.DAILY, "2026-11-20")
    assert s is not None
    assert "viewed the flat" in s.content and "signed the lease" in s.content
    assert s.source_ids == [first, late]
    assert s.metadata["children_count"] == 2


def test_a_forgotten_summary_is_never_made_again(cascade: Cascade) -> None:
    # GIVEN
    cascade.remember(item("Alice moved the launch to March 3.", utc(2026, 11, 20, 9)))
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()
    forget(cascade, summary_id(TENANT, AGENT, "daily", "2026-11-20"))

    # WHEN
    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.queue(Grain.WEEKLY, "2026-W47")  # and a parent does not heal it, nor fold it

    # THEN
    assert cascade.run() == {"forgotten": 1, "empty": 1}
    s = cascade.summary(Grain.DAILY, "2026-11-20")
    assert s is not None and s.deleted_at is not None
    assert cascade.summary(Grain.WEEKLY, "2026-W47") is None


# ------------------------------------------------------------------------------------------------
# self-healing and refreshes
# ------------------------------------------------------------------------------------------------


def test_a_parent_makes_its_missing_children_first_recursively(cascade: Cascade) -> None:
    # GIVEN working memory in three weeks of November, each naming whom it is about, and no summary at all
    about = {
        "Alice": item("Alice moved the launch to March 3.", utc(2026, 11, 3, 9)),
        "Bob": item("Bob signed with Globex for $120,000.", utc(2026, 11, 11, 15)),
        "Carmen": item("Carmen joined the platform team.", utc(2026, 11, 26, 8)),
    }
    cascade.remember(*about.values())

    # WHEN only the month is run
    cascade.queue(Grain.MONTHLY, "2026-11")
    assert cascade.run() == {"made": 1}

    # THEN the days and weeks were made first, stored, and folded in order
    (stats,) = cascade.runs
    assert stats.healed == 6  # three days, three weeks
    days = [cascade.summary(Grain.DAILY, k) for k in ("2026-11-03", "2026-11-11", "2026-11-26")]
    weeks = [cascade.summary(Grain.WEEKLY, k) for k in ("2026-W45", "2026-W46", "2026-W48")]
    assert all(days) and all(weeks)
    month = cascade.summary(Grain.MONTHLY, "2026-11")
    assert month is not None
    assert month.source_ids == [w.id for w in weeks if w is not None]
    assert weeks[0] is not None and weeks[0].source_ids == [days[0].id]  # type: ignore[union-attr]
    for name in about:
        assert name in month.content


def test_a_partial_child_made_early_is_refreshed_up_the_cascade_when_it_completes(cascade: Cascade) -> None:
    # GIVEN December summarized on Jan 1st, before its last week (2026-W53, to Jan 3rd) closed
    cascade.world.clock._now = utc(2027, 1, 1, 2, 15)
    cascade.remember(item("Grace closed the year at $2.1M revenue.", utc(2026, 12, 30, 16)))
    cascade.queue(Grain.MONTHLY, "2026-12")
    cascade.queue(Grain.QUARTERLY, "2026-Q4")
    cascade.run()
    assert cascade.summary(Grain.WEEKLY, "2026-W53") is not None  # healed, partial

    # WHEN Jan 2nd, which belongs to week 53 and so to December, gets its daily summary
    cascade.world.clock._now = utc(2027, 1, 3, 0, 15)
    cascade.remember(item("Hiro signed the Initech deal on January 2.", utc(2027, 1, 2, 11)))
    cascade.queue(Grain.DAILY, "2027-01-02")
    outcomes = cascade.run()

    # THEN the week, the month and the quarter that already existed were made again with it
    assert outcomes["made"] == 4
    for grain, key in ((Grain.WEEKLY, "2026-W53"), (Grain.MONTHLY, "2026-12"), (Grain.QUARTERLY, "2026-Q4")):
        s = cascade.summary(grain, key)
        assert s is not None and "[2027-01-02] Hiro signed the Initech deal on January 2." in s.content
        assert "Grace" in s.content
    # while January, which holds no day of week 53, does not exist
    assert cascade.summary(Grain.MONTHLY, "2027-01") is None


def test_a_refresh_waits_until_the_child_that_triggered_it_is_stored(cascade: Cascade) -> None:
    # GIVEN
    from agent_memory.model.jobs import ExpectedChild, SummarizeJob

    cascade.remember(item("Alice moved the launch to March 3.", utc(2026, 11, 20, 9)))
    job = SummarizeJob(
        tenant_id=TENANT,
        agent_id=AGENT,
        grain=Grain.WEEKLY,
        time_key="2026-W47",
        reason="refresh",
        after=ExpectedChild(
            id=summary_id(TENANT, AGENT, "daily", "2026-11-20"), updated_at=cascade.world.clock.now()
        ),
    )

    # WHEN / THEN
    with pytest.raises(ChildNotStoredYetError):
        cascade.summarize.run(job)

    cascade.queue(Grain.DAILY, "2026-11-20")
    cascade.run()
    assert cascade.summarize.run(job).outcome is SummaryOutcome.MADE


# ------------------------------------------------------------------------------------------------
# boundaries of time, end to end
# ------------------------------------------------------------------------------------------------


def test_iso_week_53_and_its_new_year_days_belong_to_december(cascade: Cascade) -> None:
    # GIVEN
    cascade.remember(
        item("Ines presented the roadmap on December 28.", utc(2026, 12, 28, 10)),
        item("Jonas filed the patent on January 3.", utc(2027, 1, 3, 10)),
        item("Kavya started the new sprint on January 4.", utc(2027, 1, 4, 10)),
    )

    # WHEN
    cascade.queue(Grain.MONTHLY, "2026-12")
    cascade.queue(Grain.MONTHLY, "2027-01")
    cascade.run()

    # THEN
    december, january = cascade.summary(Grain.MONTHLY, "2026-12"), cascade.summary(Grain.MONTHLY, "2027-01")
    assert december is not None and january is not None
    assert "Ines" in december.content and "Jonas" in december.content and "Kavya" not in december.content
    assert "Kavya" in january.content and "Jonas" not in january.content
    assert (december.period_start, december.period_end) == covered_span(Grain.MONTHLY, "2026-12")
    assert december.period_end == january.period_start == utc(2027, 1, 4)


def test_a_leap_day_is_summarized_and_folded_into_march_by_its_week(world: World, tmp_path: Path) -> None:
    # GIVEN
    world.clock._now = utc(2028, 4, 2)
    c = build(world, tmp_path)
    c.remember(item("Liam renewed the lease for $8,000 on February 29.", utc(2028, 2, 29, 12)))

    c.queue(Grain.MONTHLY, "2028-02")
    c.queue(Grain.MONTHLY, "2028-03")
    # WHEN / THEN
    assert c.run() == {"empty": 1, "made": 1}

    day = c.summary(Grain.DAILY, "2028-02-29")
    march = c.summary(Grain.MONTHLY, "2028-03")
    assert day is not None and march is not None
    assert "[2028-02-29] Liam renewed the lease for $8,000 on February 29." in march.content
    assert c.summary(Grain.MONTHLY, "2028-02") is None


# ------------------------------------------------------------------------------------------------
# folding in chunks
# ------------------------------------------------------------------------------------------------


class Recording:
    """A summarizer double that records its calls and answers with their first line."""

    model_id = "recording"
    prompt_version = "v0"
    max_input_chars = 200
    max_output_chars = 40

    def __init__(self) -> None:
        self.calls: list[tuple[str, list[str], tuple[int, int] | None]] = []

    def summarize(self, request: SummaryRequest) -> SummaryText:
        children = request.children
        self.calls.append((request.period, [c.label for c in children], request.part))
        return SummaryText(
            text=f"{children[0].label}: {children[0].text}"[:40], model_id="recording", prompt_version="v0"
        )


def test_children_over_the_budget_are_mapped_in_parts_then_reduced() -> None:
    # GIVEN
    recording = Recording()
    items = [SummaryInput(f"2026-11-{d}", "x" * 30) for d in range(10, 20)]  # 44 characters each

    # WHEN
    text = fold(recording, Grain.DAILY, "2026-W47", items, stats := RunStats())

    # THEN
    # map: three parts of at most four (4 x 44 <= 200); reduce: the three partials in one call
    assert [c[2] for c in recording.calls] == [(1, 3), (2, 3), (3, 3), None]
    assert recording.calls[0][1] == ["2026-11-10", "2026-11-11", "2026-11-12", "2026-11-13"]
    assert recording.calls[-1][1] == [
        "2026-11-10..2026-11-13",
        "2026-11-14..2026-11-17",
        "2026-11-18..2026-11-19",
    ]
    assert stats.calls == 4 and text == "2026-11-10..2026-11-13: 2026-11-10: xxxx"


def test_a_day_too_big_for_one_call_keeps_its_salient_sentences(world: World, tmp_path: Path) -> None:
    # GIVEN
    world.clock._now = utc(2026, 12, 1)
    small = LocalExtractiveSummarizer(
        world.embedder, budgets={Grain.DAILY: Budget(6, 400)}, max_input_chars=900
    )
    c = build(world, tmp_path, summarizer=small)
    c.remember(
        *(
            item(f"the team went through routine ticket number {n} today", utc(2026, 11, 20, 8, n))
            for n in range(40)
        ),
        item("Mateo signed the Contoso renewal for $310,000.", utc(2026, 11, 20, 16)),
    )

    # WHEN
    c.queue(Grain.DAILY, "2026-11-20")
    c.run()

    # THEN
    (stats,) = c.runs
    assert stats.calls > 2  # mapped in parts, then reduced
    s = c.summary(Grain.DAILY, "2026-11-20")
    assert s is not None and "Mateo signed the Contoso renewal for $310,000." in s.content
    assert len(s.content) <= 400


def test_a_summarizer_whose_answers_cannot_be_folded_is_refused(world: World) -> None:
    # GIVEN
    recording = Recording()
    recording.max_output_chars = 90  # two answers and their labels would not fit in one call of 200
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="two of its answers"):
        SummarizeService(world.store, recording, world.queue, world.queue, FixedClock())  # type: ignore[arg-type]


def test_a_summarizer_that_answers_beyond_its_bound_is_an_error_not_an_endless_fold() -> None:
    # GIVEN
    class Verbose(Recording):
        def summarize(self, request: SummaryRequest) -> SummaryText:
            return SummaryText(text="y" * 150, model_id="verbose", prompt_version="v0")

    items = [SummaryInput(f"2026-11-{d}", "x" * 30) for d in range(10, 20)]
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="beyond its max_output_chars"):
        fold(Verbose(), Grain.DAILY, "2026-W47", items, RunStats())

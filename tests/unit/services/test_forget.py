"""Forget that reaches the summaries: a forgotten record's fact leaves every grain.

Each test lives a few days on the embedded adapters, summarizes them up to the year (the yearly
job heals every grain below it), forgets, runs the queued re-make jobs the way the workers do,
and then looks for the fact at every grain.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from tests.unit.services.cascade_world import AGENT, TENANT, Cascade, build
from tests.unit.services.conftest import World

from agent_memory.contract.v1 import SearchRequest
from agent_memory.derived.lifecycle import REMAKES, stamp
from agent_memory.errors import NotFoundError
from agent_memory.model.commands import WriteCommand
from agent_memory.model.grains import SUMMARY_GRAINS, Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.ports import AuditAction, AuditEvent
from agent_memory.writing.writer import WriteOutcome

VAULT = "The vault code for the Lisbon office is 7391-kestrel."
DAY = datetime(2026, 3, 10, 9, tzinfo=UTC)  # a Tuesday: 2026-W11, March, Q1, 2026
KEYS = {
    Grain.DAILY: "2026-03-10",
    Grain.WEEKLY: "2026-W11",
    Grain.MONTHLY: "2026-03",
    Grain.QUARTERLY: "2026-Q1",
    Grain.YEARLY: "2026",
}


def item(content: str, at: datetime, **fields: object) -> dict[str, object]:
    return {"content": content, "occurred_at": at.isoformat(), **fields}


def sid(grain: Grain, key: str | None = None) -> str:
    return summary_id(TENANT, AGENT, grain.value, key or KEYS[grain])


@pytest.fixture
def cascade(world: World, tmp_path: Path) -> Cascade:
    world.clock._now = datetime(2027, 1, 10, 12, tzinfo=UTC)  # every period used here has closed
    return build(world, tmp_path)


def summarize_year(c: Cascade) -> None:
    c.queue(Grain.YEARLY, "2026")
    c.run()
    for grain in SUMMARY_GRAINS:
        assert c.summary(grain, KEYS[grain]) is not None, grain


def found(c: Cascade, text: str, grain: Grain) -> list[str]:
    """Ids of the records of ``grain`` whose content holds ``text``, among the top hits."""
    response = c.world.search.search(
        TENANT,
        AGENT,
        SearchRequest.model_validate({"query": text, "grain": grain.value, "max_results": 50}).to_query(),
    )
    return [r.id for r in response if text in r.record.content]


def test_a_forgotten_fact_leaves_every_grain_and_the_rest_is_remembered(cascade: Cascade) -> None:
    # GIVEN a fact and other memories of the same day and week, summarized up to the year
    (vault,) = cascade.remember(item(VAULT, DAY, importance=0.9))
    cascade.remember(
        item("Rui approved the Lisbon office budget of $80,000.", DAY + timedelta(hours=2), importance=0.9),
        item("Mia booked the movers for the Lisbon office.", DAY + timedelta(days=1), importance=0.8),
    )
    summarize_year(cascade)
    for grain in SUMMARY_GRAINS:
        assert found(cascade, "7391-kestrel", grain) == [sid(grain)], grain

    # WHEN the fact is forgotten
    result = cascade.world.forget.forget(TENANT, AGENT, vault, actor="key_ops")

    # THEN every summary made from it, directly or through the cascade, is stale and hidden at once
    assert result.forgotten == [vault]
    assert result.stale_summaries == [sid(g) for g in SUMMARY_GRAINS]
    for grain in (Grain.WORKING, *SUMMARY_GRAINS):
        assert found(cascade, "7391-kestrel", grain) == [], grain
    with pytest.raises(NotFoundError):
        cascade.world.memories.get(TENANT, AGENT, sid(Grain.WEEKLY))

    # AND the queued job re-makes each of them without it; nothing else is lost
    assert cascade.run() == {"made": 1}
    for grain in SUMMARY_GRAINS:
        summary = cascade.summary(grain, KEYS[grain])
        assert summary is not None and summary.is_live(cascade.world.clock.now()), grain
        assert "7391" not in summary.content, grain
        assert found(cascade, "7391-kestrel", grain) == [], grain
        assert found(cascade, "$80,000", grain) == [sid(grain)], grain
    assert vault not in cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]).source_ids  # type: ignore[union-attr]

    # AND the audit trail says who forgot what, which summaries went stale and were re-made
    trail = cascade.world.memories.audit(TENANT, AGENT, None, limit=100, cursor=None).events
    forget = [e for e in trail if e.action == AuditAction.FORGET]
    assert [(e.record_id, e.actor, e.detail["stale_summaries"]) for e in forget] == [
        (vault, "key_ops", [sid(g) for g in SUMMARY_GRAINS])
    ]
    stale = {e.record_id: e.detail for e in trail if e.action == AuditAction.STALE}
    assert stale == {sid(g): {"because": vault} for g in SUMMARY_GRAINS}
    remade = {e.record_id: e.detail for e in trail if e.action == AuditAction.REMADE}
    assert set(remade) == {sid(g) for g in SUMMARY_GRAINS}
    assert remade[sid(Grain.DAILY)]["dropped"] == [vault]
    assert remade[sid(Grain.WEEKLY)]["dropped"] == []  # same children (the day), new content


def test_a_day_with_nothing_left_loses_its_summary_and_its_week_is_remade(cascade: Cascade) -> None:
    # GIVEN the day holds only the fact; another day of the week holds something else
    (vault,) = cascade.remember(item(VAULT, DAY))
    cascade.remember(item("Mia booked the movers for the Lisbon office.", DAY + timedelta(days=1)))
    summarize_year(cascade)

    # WHEN
    cascade.world.forget.forget(TENANT, AGENT, vault, actor="key_ops")
    cascade.run()

    # THEN the empty day's summary is gone (deleted, not hidden), the week folds the other day only
    assert cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]) is None
    week = cascade.summary(Grain.WEEKLY, KEYS[Grain.WEEKLY])
    assert week is not None and week.source_ids == [sid(Grain.DAILY, "2026-03-11")]
    assert "movers" in week.content and "7391" not in week.content
    emptied = [
        e
        for e in cascade.world.memories.audit(TENANT, AGENT, None, 100, None).events
        if e.action == "emptied"
    ]
    assert [(e.record_id, e.detail["dropped"]) for e in emptied] == [(sid(Grain.DAILY), [vault])]
    for grain in SUMMARY_GRAINS:
        assert found(cascade, "7391-kestrel", grain) == []


def test_a_period_with_nothing_left_at_all_is_deleted_up_the_whole_chain(cascade: Cascade) -> None:
    # GIVEN
    (vault,) = cascade.remember(item(VAULT, DAY))
    summarize_year(cascade)

    # WHEN
    cascade.world.forget.forget(TENANT, AGENT, vault, actor="key_ops")
    cascade.run()

    # THEN
    for grain in SUMMARY_GRAINS:
        assert cascade.summary(grain, KEYS[grain]) is None, grain


def test_a_record_written_after_its_day_was_summarized_makes_nothing_stale(cascade: Cascade) -> None:
    # GIVEN
    cascade.remember(item("Rui approved the Lisbon office budget of $80,000.", DAY))
    summarize_year(cascade)
    (late,) = cascade.remember(item(VAULT, DAY + timedelta(hours=1)))  # the day's summary predates it

    # WHEN
    result = cascade.world.forget.forget(TENANT, AGENT, late, actor="key_ops")

    # THEN
    assert result.stale_summaries == []
    assert cascade.run() == {}  # no job queued, no summarizer call
    assert cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]).is_live(cascade.world.clock.now())  # type: ignore[union-attr]


def test_forgetting_a_summary_remakes_its_parents_and_it_is_never_remade(cascade: Cascade) -> None:
    cascade.remember(item(VAULT, DAY), item("Mia booked the movers.", DAY + timedelta(days=1)))
    summarize_year(cascade)

    # WHEN the day's summary itself is forgotten
    result = cascade.world.forget.forget(TENANT, AGENT, sid(Grain.DAILY), actor="key_ops")
    assert result.stale_summaries == [sid(g) for g in SUMMARY_GRAINS if g is not Grain.DAILY]
    cascade.run()

    # THEN the week and above are re-made without that day; the day stays forgotten
    week = cascade.summary(Grain.WEEKLY, KEYS[Grain.WEEKLY])
    assert week is not None and week.source_ids == [sid(Grain.DAILY, "2026-03-11")]
    day = cascade.summary(Grain.DAILY, KEYS[Grain.DAILY])
    assert day is not None and day.deleted_at is not None
    assert found(cascade, "7391-kestrel", Grain.YEARLY) == []
    # AND a later re-run of the year does not bring it back
    cascade.queue(Grain.YEARLY, "2026")
    cascade.run()
    assert not cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]).is_live(cascade.world.clock.now())  # type: ignore[union-attr]


def test_two_forgets_before_the_remake_runs_make_one_chain_and_drop_both(cascade: Cascade) -> None:
    # GIVEN
    a, b = cascade.remember(
        item(VAULT, DAY),
        item("The alarm code of the Porto office is 5521-heron.", DAY + timedelta(days=1)),
    )
    cascade.remember(item("Mia booked the movers.", DAY + timedelta(days=2)))
    summarize_year(cascade)

    # WHEN
    first = cascade.world.forget.forget(TENANT, AGENT, a, actor="k")
    second = cascade.world.forget.forget(TENANT, AGENT, b, actor="k")

    # THEN
    assert first.stale_summaries == [sid(g) for g in SUMMARY_GRAINS]
    # the second one's day is new; the week above it is stale already and is marked again
    assert second.stale_summaries[0] == sid(Grain.DAILY, "2026-03-11")
    assert cascade.run().total() >= 1
    for grain in SUMMARY_GRAINS:
        assert found(cascade, "7391-kestrel", grain) == [], grain
        assert found(cascade, "5521-heron", grain) == [], grain
    assert "movers" in cascade.summary(Grain.YEARLY, "2026").content  # type: ignore[union-attr]


def test_a_remake_made_before_a_later_forget_is_not_stored(cascade: Cascade) -> None:
    """The race the writer closes: a re-made version waits in the queue while another forget
    marks the summary stale again; storing the waiting version would bring that fact back."""
    # GIVEN
    cascade.remember(item(VAULT, DAY), item("Mia booked the movers.", DAY + timedelta(hours=1)))
    summarize_year(cascade)
    # WHEN
    day = cascade.summary(Grain.DAILY, KEYS[Grain.DAILY])
    # THEN
    assert day is not None
    waiting = day.model_copy(update={"updated_at": cascade.world.clock.now()})

    cascade.world.clock._now += timedelta(seconds=5)
    event = AuditEvent(TENANT, AGENT, day.id, AuditAction.STALE, "k", cascade.world.clock.now())
    assert cascade.store.mark_stale(TENANT, AGENT, day.id, event)

    outcome = cascade.world.writer.apply(WriteCommand(op="upsert", record=waiting))
    assert outcome is WriteOutcome.SUPERSEDED
    assert cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]).deleted_at is not None  # type: ignore[union-attr]
    # a version made after the mark (it read the stale summary, and names its mark) is stored
    marked = cascade.summary(Grain.DAILY, KEYS[Grain.DAILY])
    fresh = day.model_copy(
        update={
            "updated_at": cascade.world.clock.now() + timedelta(seconds=1),
            "metadata": {**day.metadata, REMAKES: stamp(marked)},
        }
    )
    assert cascade.world.writer.apply(WriteCommand(op="upsert", record=fresh)) is WriteOutcome.UPSERTED


def test_a_week_made_from_a_day_that_a_forget_re_made_before_the_weeks_put_is_re_made_too(
    cascade: Cascade,
) -> None:
    """Days and weeks are written in different message groups, so a day's re-make can be stored
    before an older week version that read the day before the forget: that week quotes the
    forgotten fact while every summary it was made from is live again."""
    # GIVEN a day summarized, and its first week made from it and waiting in the write queue
    (vault,) = cascade.remember(item(VAULT, DAY))
    cascade.remember(item("Mia booked the movers.", DAY + timedelta(hours=1)))
    cascade.queue(Grain.DAILY, KEYS[Grain.DAILY])
    cascade.run()
    cascade.summarize.run(
        SummarizeJob(tenant_id=TENANT, agent_id=AGENT, grain=Grain.WEEKLY, time_key=KEYS[Grain.WEEKLY])
    )
    [week_version] = cascade.world.queue.receive(10)
    assert "7391-kestrel" in week_version.body
    # WHEN the fact is forgotten and its day re-made and stored before the waiting week
    cascade.world.clock._now += timedelta(seconds=5)
    cascade.world.forget.forget(TENANT, AGENT, vault, actor="key_ops")
    cascade.world.clock._now += timedelta(seconds=5)
    cascade.summarize.run(
        SummarizeJob(tenant_id=TENANT, agent_id=AGENT, grain=Grain.DAILY, time_key=KEYS[Grain.DAILY])
    )
    cascade.world.drain()
    assert "7391-kestrel" not in cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]).content  # type: ignore[union-attr]
    [prepared] = cascade.world.writer.prepare([week_version.body])
    assert prepared.command is not None
    outcome = cascade.world.writer.apply(prepared.command, prepared.vector)
    cascade.world.queue.ack([week_version.receipt_handle])

    # THEN the week is hidden at once, and its re-make leaves the fact out
    assert outcome is WriteOutcome.SUPERSEDED
    assert cascade.summary(Grain.WEEKLY, KEYS[Grain.WEEKLY]).deleted_at is not None  # type: ignore[union-attr]
    cascade.run()
    week = cascade.summary(Grain.WEEKLY, KEYS[Grain.WEEKLY])
    assert week is not None and week.deleted_at is None
    assert "7391-kestrel" not in week.content and "movers" in week.content


def test_erasing_a_user_whose_memories_retention_already_deleted_reaches_the_summaries(
    cascade: Cascade,
) -> None:
    # GIVEN two end users on one day, summarized up to the year
    (ines,) = cascade.remember(item(VAULT, DAY, user_id="u-ines"))
    cascade.remember(
        item("Rui approved the Lisbon office budget of $80,000.", DAY + timedelta(hours=1), user_id="u-rui")
    )
    summarize_year(cascade)
    assert cascade.summary(Grain.DAILY, KEYS[Grain.DAILY]).user_ids == ["u-ines", "u-rui"]  # type: ignore[union-attr]
    # AND retention deleted her working memory: the summaries are the only copy of her words
    assert cascade.store.delete_records(TENANT, AGENT, [ines]) == 1

    # WHEN she is erased, and the re-makes run
    result = cascade.world.forget.erase_user(TENANT, AGENT, "u-ines", actor="key_dpo")
    assert result.forgotten == [] and sid(Grain.DAILY) in result.stale_summaries
    cascade.run()

    # THEN no summary at any grain holds her words; Rui's are still there
    for grain in SUMMARY_GRAINS:
        assert found(cascade, "7391-kestrel", grain) == [], grain
        assert found(cascade, "$80,000", grain), grain
        assert "u-ines" not in cascade.summary(grain, KEYS[grain]).user_ids  # type: ignore[union-attr]


def test_forgetting_a_memory_whose_daily_summary_retention_deleted_reaches_the_week_above(
    cascade: Cascade,
) -> None:
    # GIVEN a fact summarized up to the year, whose daily summary retention then deleted (the
    # week lists it): the week, month, quarter and year hold the fact through it
    (vault,) = cascade.remember(item(VAULT, DAY))
    cascade.remember(item("Rui approved the Lisbon office budget of $80,000.", DAY + timedelta(days=1)))
    summarize_year(cascade)
    assert cascade.store.delete_records(TENANT, AGENT, [sid(Grain.DAILY)]) == 1

    # WHEN the fact is forgotten (the walk up finds no daily summary)
    result = cascade.world.forget.forget(TENANT, AGENT, vault, actor="key_ops")

    # THEN it goes on from the missing day to the summaries that folded it, which are re-made
    assert result.stale_summaries == [sid(g) for g in SUMMARY_GRAINS if g is not Grain.DAILY]
    cascade.run()
    for grain in SUMMARY_GRAINS:
        assert found(cascade, "7391-kestrel", grain) == [], grain
    assert found(cascade, "$80,000", Grain.WEEKLY) == [sid(Grain.WEEKLY)]


def test_erasing_an_end_user_forgets_their_memories_at_every_grain_and_keeps_the_others(
    cascade: Cascade,
) -> None:
    # GIVEN two end users of one agent, on shared days and on a day of their own each
    cascade.remember(
        item(VAULT, DAY, user_id="u-ines"),
        item("Ines prefers the window seat.", DAY + timedelta(days=7), user_id="u-ines"),
        item("Rui approved the Lisbon office budget of $80,000.", DAY + timedelta(hours=1), user_id="u-rui"),
        item("Rui likes his coffee black.", DAY + timedelta(days=40), user_id="u-rui"),
    )
    summarize_year(cascade)
    other_agent = cascade.remember(
        item("Ines works on the other agent.", DAY, user_id="u-ines"), agent="other"
    )

    # WHEN Ines is erased from this agent
    result = cascade.world.forget.erase_user(TENANT, AGENT, "u-ines", actor="key_dpo")
    assert len(result.forgotten) >= 2
    cascade.run()

    # THEN nothing of hers is findable at any grain, Rui's memories are, the other agent is untouched
    for grain in (Grain.WORKING, *SUMMARY_GRAINS):
        assert found(cascade, "7391-kestrel", grain) == [], grain
        assert found(cascade, "window seat", grain) == [], grain
    for grain in (Grain.WORKING, Grain.DAILY, Grain.YEARLY):
        assert found(cascade, "$80,000", grain), grain
    assert cascade.store.get(TENANT, "other", other_agent[0]).is_live(cascade.world.clock.now())  # type: ignore[union-attr]
    # the day that held only her memory has no summary any more; her week's summary is gone too
    assert cascade.summary(Grain.DAILY, "2026-03-17") is None
    assert cascade.summary(Grain.WEEKLY, "2026-W12") is None
    erased = [
        e for e in cascade.world.memories.audit(TENANT, AGENT, None, 100, None).events if e.action == "erase"
    ]
    assert {e.detail["user_id"] for e in erased} == {"u-ines"} and all(e.actor == "key_dpo" for e in erased)


def test_erasure_and_forget_stay_inside_the_tenant(cascade: Cascade, world: World) -> None:
    # GIVEN
    (mine,) = cascade.remember(item(VAULT, DAY, user_id="u-ines"))
    # WHEN / THEN
    with pytest.raises(NotFoundError):
        world.forget.forget("globex", AGENT, mine, actor="key_g")
    result = world.forget.erase_user("globex", AGENT, "u-ines", actor="key_g")
    assert result.forgotten == [] and result.stale_summaries == []
    assert cascade.store.get(TENANT, AGENT, mine).is_live(world.clock.now())  # type: ignore[union-attr]
    assert world.memories.audit("globex", AGENT, None, 10, None).events == []


def test_a_summary_says_what_a_memory_replaced_and_forgets_it_with_the_replaced_memory(
    cascade: Cascade,
) -> None:
    # GIVEN Berlin in March, the move to Lisbon in June, and June's day summarized
    june = datetime(2026, 6, 12, 9, tzinfo=UTC)
    [berlin] = cascade.remember(item("I live in Berlin, in a flat near Tempelhof.", DAY))
    cascade.remember(item("I moved to Lisbon last week, my new flat is in Alfama.", june))
    cascade.queue(Grain.DAILY, "2026-06-12")
    cascade.run()
    made = cascade.summary(Grain.DAILY, "2026-06-12")
    assert made is not None and "Berlin" in made.content and "Lisbon" in made.content
    # WHEN the Berlin memory is forgotten
    result = cascade.world.forget.forget(TENANT, AGENT, berlin, actor="key")
    cascade.run()
    # THEN June's summary was made stale by it and re-made without Berlin
    assert sid(Grain.DAILY, "2026-06-12") in result.stale_summaries
    remade = cascade.summary(Grain.DAILY, "2026-06-12")
    assert remade is not None and "Berlin" not in remade.content and "Lisbon" in remade.content

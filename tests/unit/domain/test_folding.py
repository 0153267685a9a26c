"""Folding summaries into the hits they repeat (recall/rules/ranking.py), checked against a plain model
of a cascade: records, daily summaries of them, weekly summaries of the dailies, and a ranking of
any subset of them in any order."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import memory_record

from agent_memory.model.grains import Grain
from agent_memory.model.queries import Hit
from agent_memory.recall.rules.ranking import fold_summaries

DAY0 = datetime(2026, 11, 2, 9, 0, tzinfo=UTC)


def _hit(record_id: str, grain: Grain, sources: list[str], day: int) -> Hit:
    record = memory_record(
        record_id,
        f"text of {record_id}",
        at=DAY0 + timedelta(days=day),
        grain=grain,
        time_key=None if grain == Grain.WORKING else f"{grain.value}-{record_id}",
        source_ids=sources,
    )
    return Hit(record=record, score=0.5, similarity=0.5, recency=1.0)


@st.composite
def rankings(draw: st.DrawFn) -> list[Hit]:
    """A small cascade (records -> dailies -> weeklies) and a ranking of a subset of it."""
    days = draw(st.integers(1, 4))
    hits: dict[str, Hit] = {}
    dailies = []
    for d in range(days):
        records = [f"r{d}_{i}" for i in range(draw(st.integers(1, 3)))]
        for r in records:
            hits[r] = _hit(r, Grain.WORKING, [], d)
        hits[f"d{d}"] = _hit(f"d{d}", Grain.DAILY, records, d)
        dailies.append(f"d{d}")
    hits["w0"] = _hit("w0", Grain.WEEKLY, dailies, 0)
    chosen = draw(st.lists(st.sampled_from(sorted(hits)), unique=True, min_size=1))
    return [hits[i] for i in draw(st.permutations(chosen))]


def _descendants(hit: Hit, by_id: dict[str, Hit]) -> set[str]:
    out, todo = set(), list(hit.record.source_ids)
    while todo:
        child = todo.pop()
        if child in by_id and child not in out:
            out.add(child)
            todo.extend(by_id[child].record.source_ids)
    return out


@given(rankings())
def test_every_hit_is_kept_or_named_once_by_a_descendant_it_repeats(ranked: list[Hit]) -> None:
    # WHEN
    out = fold_summaries(ranked)
    # THEN nothing is lost and nothing is shown twice
    by_id = {h.id: h for h in ranked}
    shown = [h.id for h in out]
    named = [a.id for h in out for a in h.also_in]
    assert sorted(shown + named) == sorted(by_id)
    # AND a record is never folded, and a summary only into a descendant of it
    assert all(by_id[i].record.grain != Grain.WORKING for i in named)
    for holder in out:
        for also in holder.also_in:
            assert holder.id in _descendants(by_id[also.id], by_id)
            assert (also.grain, also.period) == (by_id[also.id].record.grain, by_id[also.id].record.time_key)
    # AND a summary stays exactly when none of its descendants is among the hits
    for hit in ranked:
        if hit.record.grain != Grain.WORKING:
            assert (hit.id in shown) == (not _descendants(hit, by_id))


@given(rankings())
def test_a_holder_takes_the_best_place_of_what_it_holds_and_the_rest_keep_their_order(
    ranked: list[Hit],
) -> None:
    # WHEN
    out = fold_summaries(ranked)
    # THEN each shown hit's place is the best of its own and its folded summaries', in that order
    place = {h.id: i for i, h in enumerate(ranked)}
    best = [min([place[h.id], *(place[a.id] for a in h.also_in)]) for h in out]
    assert best == sorted(best)


def test_one_fact_quoted_up_the_cascade_takes_one_place() -> None:
    # GIVEN a record, its daily and weekly summaries, and another record of the same day
    record = _hit("r", Grain.WORKING, [], 0)
    other = _hit("o", Grain.WORKING, [], 0)
    daily = _hit("d", Grain.DAILY, ["r", "o"], 0)
    weekly = _hit("w", Grain.WEEKLY, ["d"], 0)
    # WHEN the weekly ranks first, then the record, the daily and the other record
    out = fold_summaries([weekly, record, daily, other])
    # THEN the record takes the first place and names both summaries; the sibling stays itself
    assert [h.id for h in out] == ["r", "o"]
    assert [(a.grain, a.id) for a in out[0].also_in] == [(Grain.DAILY, "d"), (Grain.WEEKLY, "w")]
    assert out[1].also_in == ()
    # AND both summaries fold into the one record of theirs that is ranked, in the weekly's place
    [only] = fold_summaries([weekly, other, daily])
    assert only.id == "o" and [a.id for a in only.also_in] == ["d", "w"]
    assert [h.id for h in fold_summaries([weekly, daily])] == ["d"]
    # AND without any descendant among the hits, a summary is left alone
    assert fold_summaries([weekly, other]) == [weekly, other]

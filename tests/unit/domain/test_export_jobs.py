"""The export's domain rules: what it may name, its ids, whose it is, which summaries are the end
user's alone, which records a window keeps, and a run's claim."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import ValidationError
from tests.payloads import memory_record

from agent_memory.governance.rules.export_jobs import (
    EXPORT_ID_PATTERN,
    ExportProgress,
    ExportScope,
    ExportState,
    new_export_id,
    overlaps,
    summary_is_only_theirs,
)
from agent_memory.model.caller import Caller
from agent_memory.model.grains import Grain

NOW = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)


def state(**scope: str) -> ExportState:
    return ExportState(
        id=new_export_id(),
        tenant_id="t1",
        scope=ExportScope(**scope),  # type: ignore[arg-type]
        requested_by="k1",
        created_at=NOW,
        updated_at=NOW,
    )


@pytest.mark.parametrize(
    "scope",
    [
        {},
        {"user_id": "u1", "agent_id": "a1"},
        {"user_id": "u1", "since": NOW, "until": NOW - timedelta(seconds=1)},
        {"user_id": "../u1"},
    ],
)
def test_a_scope_names_exactly_one_subject_and_a_sane_window(scope: dict[str, object]) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        ExportScope.model_validate(scope)


def test_ids_are_random_and_path_safe() -> None:
    # WHEN
    ids = {new_export_id() for _ in range(1000)}
    # THEN
    assert len(ids) == 1000
    assert all(re.fullmatch(EXPORT_ID_PATTERN, i) for i in ids)


def test_an_export_is_seen_by_its_tenant_and_by_keys_bound_to_its_agent() -> None:
    # GIVEN
    of_agent, of_user = state(agent_id="a1"), state(user_id="u1")
    admin = Caller("t1", scopes=frozenset({"admin"}))
    bound = Caller("t1", scopes=frozenset({"admin"}), agents=frozenset({"a1"}))
    # WHEN / THEN
    assert of_agent.visible_to(admin) and of_user.visible_to(admin)
    assert of_agent.visible_to(bound) and not of_user.visible_to(bound)
    assert not of_agent.visible_to(Caller("t2", scopes=frozenset({"admin"})))


def test_a_summary_is_the_users_alone_when_every_user_it_folds_is_them() -> None:
    # GIVEN
    def folding(*users: str) -> object:
        return memory_record("sum_x", "s", grain=Grain.DAILY, user_ids=list(users))

    # WHEN / THEN
    assert summary_is_only_theirs(folding("u1"), "u1")  # type: ignore[arg-type]
    assert summary_is_only_theirs(folding(), "u1")  # type: ignore[arg-type]
    assert not summary_is_only_theirs(folding("u1", "u2"), "u1")  # type: ignore[arg-type]


def test_a_window_keeps_a_record_whose_span_meets_it() -> None:
    # GIVEN a memory at noon and the day's summary (its period ends at the next midnight)
    memory = memory_record("mem_x", "m", at=NOW)
    day = NOW.replace(hour=0)
    summary = memory_record(
        "sum_x", "s", at=day, grain=Grain.DAILY, period_start=day, period_end=day + timedelta(days=1)
    )
    # WHEN / THEN
    assert overlaps(memory, NOW, NOW) and overlaps(memory, None, None)
    assert not overlaps(memory, NOW + timedelta(microseconds=1), None)
    assert not overlaps(memory, None, NOW - timedelta(microseconds=1))
    assert overlaps(summary, day + timedelta(hours=23), None)
    assert not overlaps(summary, day + timedelta(days=1), None)  # its period ends before that instant


def test_a_claim_holds_the_export_and_goes_back_to_its_checkpoints_progress() -> None:
    # GIVEN an export with progress past its last checkpoint
    export = state(user_id="u1")
    export.checkpoint.progress = ExportProgress(memories=10, estimated_total=40)
    export.progress = ExportProgress(memories=17, estimated_total=40)
    # WHEN
    claimed = export.claimed(NOW, timedelta(minutes=2))
    # THEN
    assert claimed.status == "running" and claimed.leased(NOW + timedelta(minutes=1))
    assert not claimed.leased(NOW + timedelta(minutes=2))
    assert claimed.progress.memories == 10

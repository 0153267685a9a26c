"""A memory's versions read back from the record and its audit trail (`governance.rules.versions`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.payloads import memory_record

from agent_memory.governance.rules.versions import Change, restorable, validity_detail, versions
from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.records import MergedWrite, RecordValidity

T0 = datetime(2026, 3, 10, 9, tzinfo=UTC)


def _merged() -> list[MergedWrite]:
    return [
        MergedWrite(id="mem_a", content="Launch on March 3.", occurred_at=T0, created_at=T0),
        MergedWrite(
            id="mem_b", content="Launch on March 3 .", occurred_at=T0, created_at=T0 + timedelta(hours=1)
        ),
    ]


def test_each_change_is_a_version_with_what_the_memory_said_and_whether_it_held() -> None:
    # GIVEN a merged record, superseded, restored to version 2, with feedback on the way
    record = memory_record("mem_a", "Launch on March 3 .", at=T0, merged_from=_merged())
    marked = RecordValidity(valid_to=T0 + timedelta(days=9), superseded_by="mem_c")
    changes = [
        Change(AuditAction.MERGED, "writer", T0 + timedelta(hours=1), {"absorbed": "mem_b"}),
        Change(
            AuditAction.SUPERSEDED,
            "writer",
            T0 + timedelta(days=9),
            {"by": "mem_c", **validity_detail(marked)},
        ),
        Change(AuditAction.FEEDBACK, "key_1", T0 + timedelta(days=10), {"confidence": 0.8}),
        Change(AuditAction.RESTORED, "key_admin", T0 + timedelta(days=11), {"version": 2}),
    ]
    # WHEN the versions are read (the trail in any order)
    history = versions(record, reversed(changes))
    # THEN one version per change, each with its text, validity and confidence
    assert [(v.number, v.change) for v in history] == [
        (1, "written"), (2, "merged"), (3, "superseded"), (4, "feedback"), (5, "restored")
    ]  # fmt: skip
    assert [v.content for v in history] == ["Launch on March 3."] + ["Launch on March 3 ."] * 4
    assert [v.validity.superseded_by for v in history] == [None, None, "mem_c", "mem_c", None]
    assert history[3].confidence == 0.8
    assert (
        restorable(history, 3) is not None
        and restorable(history, 5) is None
        and restorable(history, 9) is None
    )


def test_a_forgotten_memory_keeps_its_versions_without_text_and_restores_nothing() -> None:
    # GIVEN a record forgotten after it was merged
    record = memory_record(
        "mem_a", "Launch on March 3 .", at=T0, merged_from=_merged(), deleted_at=T0 + timedelta(days=2)
    )
    changes = [
        Change(AuditAction.MERGED, "writer", T0 + timedelta(hours=1), {"absorbed": "mem_b"}),
        Change(AuditAction.FORGET, "key_1", T0 + timedelta(days=2), {}),
    ]
    # WHEN its versions are read
    history = versions(record, changes)
    # THEN every version is there, none holds text, none may be restored
    assert [v.change for v in history] == ["written", "merged", "forget"]
    assert all(v.content is None for v in history)
    assert restorable(history, 1) is None

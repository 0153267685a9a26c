"""A forget that crashes part-way never leaves a forgotten memory's words visible: what was made
from the memory is hidden before the memory is forgotten, so a crash in between leaves the memory
live (the forget can be retried) and a retry finishes the work."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.fakes import FixedClock
from tests.unit.services.test_person_profiles import CAROLINE, Lab

from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.governance.forget import ForgetService
from agent_memory.ports import AuditEvent


class CrashError(RuntimeError):
    """The process died here."""


class CrashingStore:
    """The store, except that marking ``record_id`` stale crashes once."""

    def __init__(self, store: Any, record_id: str) -> None:
        self._store = store
        self._record_id: str | None = record_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._store, name)

    def mark_stale(self, tenant_id: str, agent_id: str, record_id: str, event: AuditEvent) -> bool:
        if record_id == self._record_id:
            self._record_id = None
            raise CrashError(record_id)
        return bool(self._store.mark_stale(tenant_id, agent_id, record_id, event))


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Lab:
    return Lab(tmp_path, clock)


def test_a_forget_that_crashes_while_hiding_a_profile_is_finished_by_its_retry(lab: Lab) -> None:
    # GIVEN a profile made from four statements
    ids = [lab.say(t, speaker="Caroline") for t in [*CAROLINE[:3], "My favourite food is pho."]]
    lab.make()
    [profile] = lab.profiles_now()
    forget = ForgetService(
        CrashingStore(lab.world.store, profile.id),
        LocalJobQueue(lab.jobs),
        lab.world.clock,
    )

    # WHEN forgetting one statement crashes as it hides the profile
    with pytest.raises(CrashError):
        forget.forget("acme", "bot", ids[0], actor="key_a")

    # THEN the statement is not forgotten yet, so the forget can be asked again
    statement = lab.world.store.get("acme", "bot", ids[0])
    assert statement is not None and statement.is_live(lab.world.clock.now())

    # WHEN it is retried
    result = forget.forget("acme", "bot", ids[0], actor="key_a")

    # THEN the statement is forgotten and the profile quoting it is hidden
    forgotten = lab.world.store.get("acme", "bot", ids[0])
    assert forgotten is not None and forgotten.deleted_at is not None
    assert profile.id in result.stale_summaries and lab.profiles_now() == []

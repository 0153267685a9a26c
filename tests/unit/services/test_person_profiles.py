"""Profiles on the embedded adapters: made from what each person said, searchable with their
sources, unchanged on a re-run, never mixing end users, and re-made without a forgotten statement."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.fakes import FixedClock
from tests.unit.services.conftest import World, make_world

from agent_memory.adapters.local_jobs import LocalJobQueue
from agent_memory.adapters.local_queue import LocalFifoQueue
from agent_memory.adapters.summarizers.local import LocalExtractiveSummarizer
from agent_memory.contract.v1 import WriteRequest
from agent_memory.derived.derivation import DerivationParts
from agent_memory.derived.person_profiles import PersonProfilesService
from agent_memory.derived.rules.profiles import PROFILED_BY, ProfileJob, ProfileRules
from agent_memory.governance.forget import ForgetService
from agent_memory.model.caller import Caller
from agent_memory.model.ids import summary_id
from agent_memory.model.queries import SearchQuery
from agent_memory.model.records import MemoryKind, MemoryRecord, MergedWrite
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import AuditAction, AuditQuery, StoredRecord

ACME = Caller("acme", key_id="key_a")
CAROLINE = [
    "I moved here from Sweden four years ago with my mom.",
    "I love painting sunsets, it calms me down.",
    "My kids are seven and ten, and they both play soccer.",
    "Did you see the game?",
]


class Lab:
    def __init__(self, tmp_path: Path, clock: FixedClock, rules: ProfileRules | None = None) -> None:
        self.world: World = make_world(tmp_path, clock)
        self.jobs = LocalFifoQueue(tmp_path / "jobs.db", max_receive_count=1000)
        self.forget = ForgetService(self.world.store, LocalJobQueue(self.jobs), clock)
        world, summarizer = self.world, LocalExtractiveSummarizer(self.world.embedder)
        self.profiles = PersonProfilesService(
            DerivationParts(world.store, summarizer, world.queue, world.pending, clock, "UTC", None),
            rules or ProfileRules(min_statements=3, per_day=5),
        )

    def say(
        self, content: str, speaker: str | None = None, user_id: str | None = None, **fields: object
    ) -> str:
        item = {"content": content, "speaker": speaker, "user_id": user_id, **fields}
        [rid] = self.world.write.accept(
            ACME, "bot", WriteRequest.model_validate({"items": [item]}).to_new_memories()
        )
        self.world.clock.advance(minutes=30)
        return rid

    def make(self, stale: list[str] | None = None) -> None:
        self.world.drain()
        self.profiles.run(ProfileJob(tenant_id="acme", agent_id="bot", stale=stale or []))
        self.world.drain()

    def profiles_now(self, query: str | None = None) -> list[MemoryRecord]:
        hits = self.world.search.search(
            "acme", "bot", SearchQuery(query=query, kinds=(MemoryKind.PROFILE,), max_results=50)
        )
        return [h.record for h in hits]  # type: ignore[union-attr]


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Lab:
    return Lab(tmp_path, clock)


def test_a_person_gets_a_profile_of_what_they_said_about_themselves(lab: Lab) -> None:
    # GIVEN Caroline's turns (one only a question) and two turns of someone else
    ids = [lab.say(text, speaker="Caroline") for text in CAROLINE]
    lab.say("I think so.", speaker="Melanie")
    lab.say("I have a cat.", speaker="Melanie")
    # WHEN profiles are made
    lab.make()
    # THEN Caroline has one profile, made of her three statements (not the question), naming her
    [profile] = lab.profiles_now()
    assert profile.speaker == "Caroline" and profile.metadata[PROFILED_BY] == "profile-job/v1"
    assert profile.source_ids == ids[:3]
    assert profile.content.splitlines()[0] == "What is known about Caroline:"
    assert "Sweden" in profile.content and "painting" in profile.content
    assert "Did you see the game" not in profile.content
    assert profile.metadata["subject"] == {"speaker": "Caroline"}
    # ... and a search about her finds it, with its sources
    [found] = lab.profiles_now("what does Caroline like to do")
    assert found.id == profile.id and found.source_ids == ids[:3]


def test_making_profiles_again_writes_nothing_and_new_statements_refresh_it(lab: Lab) -> None:
    # GIVEN a profile
    for text in CAROLINE:
        lab.say(text, speaker="Caroline")
    lab.make()
    [before] = lab.profiles_now()
    # WHEN the job runs again with nothing new
    report = lab.profiles.run(ProfileJob(tenant_id="acme", agent_id="bot"))
    # THEN nothing is written
    assert (report.made, report.refreshed, report.unchanged) == (0, 0, 1)
    assert lab.world.queue.depth() == 0
    # WHEN she says something new about herself
    new = lab.say("I started a job at the animal shelter.", speaker="Caroline")
    lab.make()
    # THEN the same profile holds it
    [after] = lab.profiles_now()
    assert after.id == before.id and new in after.source_ids and "animal shelter" in after.content
    events = lab.world.store.audit_events(AuditQuery("acme", "bot", record_id=before.id)).events
    assert [e.action for e in events].count(AuditAction.PROFILE_MADE) == 2


def test_a_profile_never_mixes_two_end_users(lab: Lab) -> None:
    # GIVEN the same speaker name under two end users, and an end user speaking under no name
    a = [lab.say(t, speaker="Sam", user_id="u1") for t in CAROLINE[:3]]
    b = [lab.say(t, speaker="Sam", user_id="u2") for t in CAROLINE[:3]]
    c = [lab.say(t, role="user", user_id="u3") for t in CAROLINE[:3]]
    lab.say("I can help with that, my records say so.", role="assistant", user_id="u3")
    # WHEN
    lab.make()
    # THEN three profiles, each of one end user's words only
    by_user = {p.user_id: p for p in lab.profiles_now()}
    assert set(by_user) == {"u1", "u2", "u3"}
    assert by_user["u1"].source_ids == a and by_user["u2"].source_ids == b and by_user["u3"].source_ids == c
    assert by_user["u3"].metadata["subject"] == {"user_id": "u3"}
    assert by_user["u3"].content.startswith("What is known about the user u3:")


def test_forgetting_a_statement_hides_the_profile_and_its_job_remakes_or_drops_it(lab: Lab) -> None:
    # GIVEN a profile of four statements
    ids = [lab.say(t, speaker="Caroline") for t in [*CAROLINE[:3], "My favourite food is pho."]]
    lab.make()
    [profile] = lab.profiles_now()
    # WHEN one statement is forgotten
    result = lab.forget.forget("acme", "bot", ids[0], actor="key_a")
    # THEN the profile is hidden at once and a profile job names it
    assert profile.id in result.stale_summaries and lab.profiles_now() == []
    jobs = [json.loads(m.body) for m in lab.jobs.receive(10)]
    [job] = [j for j in jobs if j.get("job") == "profiles"]
    assert job["stale"] == [profile.id]
    # WHEN the job runs
    lab.make(stale=job["stale"])
    # THEN the profile is back under its id, without what was forgotten, in content or sources
    [remade] = lab.profiles_now()
    assert remade.id == profile.id and ids[0] not in remade.source_ids and "Sweden" not in remade.content
    # WHEN two more are forgotten, leaving too few
    for rid in ids[1:3]:
        lab.forget.forget("acme", "bot", rid, actor="key_a")
    lab.make(stale=[profile.id])
    # THEN it is dropped, with the reason in the audit trail
    assert lab.profiles_now() == []
    events = lab.world.store.audit_events(AuditQuery("acme", "bot", record_id=profile.id)).events
    assert events[0].action == AuditAction.PROFILE_DROPPED


def test_a_forgotten_profile_is_not_made_again_and_client_profiles_are_left_alone(lab: Lab) -> None:
    # GIVEN a profile the user forgot, and a profile a client wrote itself
    for text in CAROLINE:
        lab.say(text, speaker="Caroline")
    lab.make()
    [profile] = lab.profiles_now()
    lab.forget.forget("acme", "bot", profile.id, actor="key_a")
    mine = lab.say("Caroline: prefers email", kind="profile")
    # WHEN the job runs again
    lab.make()
    # THEN the forgotten one stays forgotten and the client's is untouched
    assert [p.id for p in lab.profiles_now()] == [mine]


def test_erasing_an_end_user_erases_their_profile(lab: Lab) -> None:
    # GIVEN a profile of u1's words
    for text in CAROLINE[:3]:
        lab.say(text, speaker="Sam", user_id="u1")
    lab.make()
    [profile] = lab.profiles_now()
    # WHEN u1 is erased and the job runs
    lab.forget.erase_user("acme", "bot", "u1", actor="key_a")
    lab.make(stale=[profile.id])
    # THEN no profile, and none of u1's words in any live record
    assert lab.profiles_now() == []
    stored = lab.world.store.get("acme", "bot", profile.id)
    assert stored is not None and stored.deleted_at is not None


_ops = st.lists(
    st.tuples(
        st.sampled_from(["say", "forget"]),
        st.sampled_from([("Ann", "u1"), ("Ann", "u2"), ("Bo", "u1"), (None, "u1")]),
        st.integers(0, len(CAROLINE) - 1),
    ),
    min_size=1,
    max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_profiles_hold_only_live_statements_of_their_own_person(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, tuple[str | None, str], int]]
) -> None:
    # GIVEN a fresh store, and a plain model of which records are live and whose they are
    discard_unpublished_metrics()  # many examples in one test: keep Powertools below its flush
    lab = Lab(tmp_path_factory.mktemp("profiles"), FixedClock(), ProfileRules(min_statements=2, per_day=50))
    live: dict[str, tuple[str | None, str]] = {}
    # WHEN people speak and forget in any order, with the job run (stale ids and all) in between
    for op, person, text in ops:
        speaker, user = person
        if op == "say":
            role = "user" if speaker is None else None
            rid = lab.say(CAROLINE[text], speaker=speaker, user_id=user, role=role)
            lab.world.drain()
            stored = lab.world.store.get("acme", "bot", rid)  # a near duplicate merges into one record
            assert stored is not None
            live[stored.id] = person
        elif live:
            victim = sorted(live)[text % len(live)]
            result = lab.forget.forget("acme", "bot", victim, actor="key_a")
            del live[victim]
            # at once, before any job runs: no profile a search returns still holds it
            assert all(victim not in p.source_ids for p in lab.profiles_now())
            lab.make(stale=[s for s in result.stale_summaries if s.startswith("prf_")])
    lab.make()
    # THEN every profile's sources are live records of exactly its own person
    profiles = lab.profiles_now()
    for p in profiles:
        owners = {live.get(s) for s in p.source_ids}
        assert None not in owners, "a profile kept a forgotten statement"
        assert owners == {(p.speaker, p.user_id)}
    # ... and every person with enough statements has exactly one
    want = {person for person in live.values() if _statements(lab, live, person) >= 2}
    assert sorted((p.speaker, p.user_id) for p in profiles) == sorted(want, key=str)


def _statements(lab: Lab, live: dict[str, tuple[str | None, str]], person: tuple[str | None, str]) -> int:
    texts = [lab.world.store.get("acme", "bot", rid) for rid, who in live.items() if who == person]
    return sum(1 for r in texts if r is not None and not r.content.endswith("?"))


def test_a_profile_is_never_folded_into_its_days_summary(lab: Lab, tmp_path: Path) -> None:
    # GIVEN three statements of two days ago, and the profile made from them
    from tests.unit.services.cascade_world import build

    from agent_memory.model.grains import Grain

    day = lab.world.clock.now() - timedelta(days=2)
    for i, text in enumerate(CAROLINE[:3]):
        lab.say(text, speaker="Caroline", occurred_at=(day + timedelta(hours=i)).isoformat())
    lab.make()
    [profile] = lab.profiles_now()
    assert profile.occurred_at.date() == day.date()
    cascade = build(lab.world, tmp_path / "cascade")
    # WHEN that day is summarized
    cascade.queue(Grain.DAILY, day.date().isoformat(), agent="bot")
    cascade.run()
    # THEN the summary folds the statements, not the profile made from them
    summary = lab.world.store.get("acme", "bot", summary_id("acme", "bot", "daily", day.date().isoformat()))
    assert summary is not None and profile.id not in summary.source_ids
    assert len(summary.source_ids) == 3


def test_forgetting_a_memory_that_absorbed_a_statement_hides_the_profile_listing_it(lab: Lab) -> None:
    # GIVEN a profile listing a statement, and a memory holding that statement as a write it absorbed
    ids = [lab.say(t, speaker="Caroline") for t in [*CAROLINE[:3], "My favourite food is pho."]]
    lab.make()
    [profile] = lab.profiles_now()
    store = lab.world.store
    first = store.get("acme", "bot", ids[0])
    assert first is not None
    absorbed = MergedWrite(
        id=first.id, content=first.content, occurred_at=first.occurred_at, created_at=first.created_at
    )
    holder = first.model_copy(update={"id": "mem_holder", "merged_from": [absorbed]})
    [vector] = lab.world.writer.vectors([holder])
    store.put([StoredRecord(holder, vector)])
    # WHEN that memory is forgotten
    result = lab.forget.forget("acme", "bot", "mem_holder", actor="key_a")
    # THEN the profile listing the absorbed statement is hidden until re-made
    assert profile.id in result.stale_summaries and lab.profiles_now() == []

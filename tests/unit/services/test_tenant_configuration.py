"""A tenant's settings on the embedded adapters: changed by its admin (versioned, within the plan,
audited without the key), read through the cache, and in force for that tenant only: its ranking
in search, its TTLs on writes, its merging in the writer, its retention."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.fakes import FixedClock
from tests.unit.services.conftest import World, make_world
from tests.unit.services.test_retention import Jobs, Plans, daily_of, working

from agent_memory.adapters.local_secrets import LocalFileSecretStore
from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore
from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import ConflictError, DependencyError, ValidationFailedError
from agent_memory.governance.retention import RetentionService
from agent_memory.governance.rules.plans import DEFAULT_PLANS, load_plans
from agent_memory.model.caller import Caller
from agent_memory.model.grains import Grain
from agent_memory.model.queries import SearchQuery
from agent_memory.model.records import MemoryKind
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import AuditQuery, StoredRecord
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService
from agent_memory.tenancy.rules.tenant_settings import RankingDefaults, TenantSettings
from agent_memory.tenancy.settings import (
    SETTINGS_RECORD,
    TENANT_AUDIT_AGENT,
    SettingsCache,
    SettingsService,
)
from agent_memory.writing.write import WriteService
from agent_memory.writing.writer import WriterService

KEY = "sk-live-9f8e7d6c5b4a3210ZYXW"


class Ticker:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Lab:
    def __init__(self, tmp_path: Path, clock: FixedClock) -> None:
        self.world: World = make_world(tmp_path, clock)
        self.store = SqliteTenantSettingsStore(tmp_path / "tenant_settings.db")
        self.ticker = Ticker()
        self.cache = SettingsCache(self.store, ttl_s=60, clock=self.ticker)
        self.secrets = LocalFileSecretStore(tmp_path / "secrets")
        self.service = SettingsService(
            self.cache, self.secrets, self.world.store, clock, load_plans(None), max_working_per_agent=10_000
        )
        w = self.world
        self.write = WriteService(w.queue, w.pending, clock, settings=self.cache)
        self.writer = WriterService(w.store, w.embedder, w.pending, w.queue, clock, settings=self.cache)
        self.search = SearchService(w.store, w.embedder, clock, RankingWeights(), settings=self.cache)

    def admin(self, tenant: str, plan: str = "pro") -> Caller:
        return Caller(tenant, key_id=f"key_{tenant}", plan=plan, scopes=frozenset({"admin"}))

    def say(self, tenant: str, content: str, **fields: object) -> str:
        [rid] = self.write.accept(
            Caller(tenant, key_id="k"),
            "bot",
            WriteRequest.model_validate({"items": [{"content": content, **fields}]}).to_new_memories(),
        )
        self.world.clock.advance(minutes=1)
        return rid

    def drain(self) -> None:
        w = self.world
        while batch := w.queue.receive(10):
            for p in self.writer.prepare([m.body for m in batch]):
                assert p.command is not None, p.poison_reason
                self.writer.apply(p.command, p.vector)
            w.queue.ack(m.receipt_handle for m in batch)


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Lab:
    return Lab(tmp_path, clock)


def test_a_tenant_without_settings_reads_the_defaults_and_its_plan(lab: Lab) -> None:
    # WHEN
    view = lab.service.view(lab.admin("acme", plan="free"))
    # THEN
    assert (view.version, view.settings, view.provider_key) == (0, TenantSettings(), None)
    assert view.plan_retention_hours == DEFAULT_PLANS["free"]


def test_a_change_is_versioned_audited_and_never_records_the_key(lab: Lab) -> None:
    # GIVEN
    admin = lab.admin("acme")
    wanted = TenantSettings(merge_near_duplicates=False, ttl_days={MemoryKind.NOTE: 3})
    # WHEN the admin changes the settings and sets a key
    view = lab.service.update(admin, wanted, expected_version=0, provider_key=KEY)
    # THEN the new version is in force, the key shown by its last four characters only
    assert view.version == 1 and view.settings == wanted
    assert view.provider_key is not None and view.provider_key.last4 == "ZYXW"
    assert lab.secrets.get_secret("acme") == KEY
    # AND the audit trail names who changed what, before and after, and that a key was set
    [event] = lab.world.store.audit_events(AuditQuery("acme", TENANT_AUDIT_AGENT, SETTINGS_RECORD)).events
    assert event.actor == "key_acme" and event.detail["provider_key"] == "set"
    assert event.detail["changes"]["merge_near_duplicates"] == {"before": True, "after": False}
    assert KEY not in json.dumps(event.detail) and "ZYXW" not in json.dumps(event.detail)


def test_a_stale_version_conflicts_and_changes_nothing(lab: Lab) -> None:
    # GIVEN
    admin = lab.admin("acme")
    lab.service.update(admin, TenantSettings(merge_near_duplicates=False), expected_version=0)
    # WHEN another admin writes from the version it read before
    with pytest.raises(ConflictError):
        lab.service.update(admin, TenantSettings(), expected_version=0, provider_key=KEY)
    # THEN neither the settings nor the key changed
    view = lab.service.view(admin)
    assert view.version == 1 and view.settings.merge_near_duplicates is False
    assert view.provider_key is None


@pytest.mark.parametrize(
    ("plan", "asked", "problem"),
    [
        ("free", {Grain.WORKING: 49}, "retention_hours.working: 49 hours is longer than the plan's 48 hours"),
        ("free", {Grain.DAILY: None}, "retention_hours.daily: forever is longer"),
    ],
)
def test_retention_longer_than_the_plan_is_refused(
    lab: Lab, plan: str, asked: dict[Grain, int | None], problem: str
) -> None:
    # WHEN
    with pytest.raises(ValidationFailedError) as refused:
        lab.service.update(lab.admin("acme", plan=plan), TenantSettings(retention_hours=asked), 0)
    # THEN
    assert problem in refused.value.message
    assert lab.service.view(lab.admin("acme", plan=plan)).version == 0


def test_clearing_the_key_removes_it_and_is_audited(lab: Lab) -> None:
    # GIVEN
    admin = lab.admin("acme")
    lab.service.update(admin, TenantSettings(), 0, provider_key=KEY)
    lab.world.clock.advance(minutes=1)
    # WHEN
    view = lab.service.update(admin, TenantSettings(), 1, clear_provider_key=True)
    # THEN
    assert view.provider_key is None and lab.secrets.get_secret("acme") is None
    events = lab.world.store.audit_events(AuditQuery("acme", TENANT_AUDIT_AGENT, SETTINGS_RECORD)).events
    assert events[0].detail["provider_key"] == "cleared"


def test_other_processes_see_a_change_within_the_cache_lifetime(lab: Lab) -> None:
    # GIVEN another process's cache that read the settings before the change
    other = SettingsCache(lab.store, ttl_s=60, clock=lab.ticker)
    assert other.settings("acme").merge_near_duplicates is True
    # WHEN the admin changes them (in this process)
    lab.service.update(lab.admin("acme"), TenantSettings(merge_near_duplicates=False), 0)
    # THEN this process sees it at once, the other after its entry expires
    assert lab.cache.settings("acme").merge_near_duplicates is False
    assert other.settings("acme").merge_near_duplicates is True
    lab.ticker.now += 61
    assert other.settings("acme").merge_near_duplicates is False


def test_a_store_that_cannot_be_read_fails_the_request_rather_than_serving_the_defaults() -> None:
    # GIVEN a settings store that is down
    class Down:
        def get_settings(self, tenant_id: str) -> None:
            raise DependencyError("settings table unavailable")

    cache = SettingsCache(Down())  # type: ignore[arg-type]
    # WHEN / THEN: a tenant that chose its own models is never served by the operator's
    with pytest.raises(DependencyError):
        cache.settings("acme")


def test_each_tenants_settings_hold_for_that_tenant_only(lab: Lab) -> None:
    # GIVEN tenant a: no merging, notes live 3 days; tenant b: the defaults
    lab.service.update(
        lab.admin("a"), TenantSettings(merge_near_duplicates=False, ttl_days={MemoryKind.NOTE: 3}), 0
    )
    # WHEN both write the same note twice
    note = "Mia booked the movers for Lisbon."
    ids = {t: [lab.say(t, note), lab.say(t, note)] for t in ("a", "b")}
    lab.drain()
    # THEN a keeps two memories that expire in 3 days; b's second merged into its first, no expiry
    a = [lab.world.store.get("a", "bot", rid) for rid in ids["a"]]
    assert [r.id for r in a if r] == ids["a"]
    assert all(r is not None and r.expires_at == r.occurred_at + timedelta(days=3) for r in a)
    b = [lab.world.store.get("b", "bot", rid) for rid in ids["b"]]
    assert b[0] is not None and b[1] is not None and b[1].id == b[0].id == ids["b"][0]
    assert b[0].expires_at is None


def test_a_tenants_ranking_defaults_change_its_scores_only(lab: Lab) -> None:
    # GIVEN the same memory for two tenants; tenant a ranks without the word match
    for t in ("a", "b"):
        lab.say(t, "The quarterly budget review moved to Thursday.")
    lab.drain()
    lab.service.update(lab.admin("a"), TenantSettings(ranking=RankingDefaults(lexical_weight=0.0)), 0)
    query = SearchQuery(query="quarterly budget review")
    plain = SearchService(lab.world.store, lab.world.embedder, lab.world.clock, RankingWeights())
    # WHEN
    a_score, b_score = (lab.search.search(t, "bot", query)[0].score for t in ("a", "b"))
    default = plain.search("b", "bot", query)[0].score
    # THEN a's score lost its lexical share; b's is the deployment's ranking
    assert a_score < b_score and b_score == default
    # AND a search's own ranking still overrides the tenant's
    own = lab.search.search(
        "a", "bot", SearchQuery(query="quarterly budget review", ranking={"lexical_weight": 0.4})
    )
    # (b's memory was written a minute later: its recency differs in the sixth decimal)
    assert own[0].score == pytest.approx(b_score, abs=1e-5)


def test_retention_keeps_a_tenant_no_longer_than_its_own_setting(lab: Lab) -> None:
    # GIVEN two pro tenants (working memory kept 240 h), one of which keeps it 24 h
    now = lab.world.clock.now()
    old = {t: working(t, now - timedelta(hours=30), f"{t} old news") for t in ("a", "b")}
    records = [*old.values(), *(daily_of(r) for r in old.values())]
    vectors = lab.world.embedder.embed([r.content for r in records])
    lab.world.store.put([StoredRecord(r, v) for r, v in zip(records, vectors, strict=True)])
    lab.service.update(lab.admin("a"), TenantSettings(retention_hours={Grain.WORKING: 24}), 0)
    retention = RetentionService(
        lab.world.store, Plans({"a": "pro", "b": "pro"}), lab.world.clock, load_plans(None), Jobs(),  # type: ignore[arg-type]
        settings=lab.cache,
    )  # fmt: skip
    # WHEN
    retention.run()
    # THEN a's 30-hour-old memory is gone, b's is kept
    assert lab.world.store.get("a", old["a"].agent_id, old["a"].id) is None
    assert lab.world.store.get("b", old["b"].agent_id, old["b"].id) is not None


_TENANTS = ("t1", "t2", "t3")
_choices = st.builds(
    TenantSettings,
    merge_near_duplicates=st.booleans(),
    ttl_days=st.dictionaries(
        st.sampled_from([MemoryKind.NOTE, MemoryKind.FACT]), st.integers(1, 90), max_size=2
    ),
    ranking=st.builds(RankingDefaults, lexical_weight=st.one_of(st.none(), st.floats(0, 1))),
)
_ops = st.lists(
    st.tuples(
        st.sampled_from(_TENANTS),
        _choices,
        st.one_of(st.none(), st.text("abcdefXYZ0123", min_size=5, max_size=12)),
    ),
    min_size=1,
    max_size=12,
)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=_ops)
def test_interleaved_changes_of_several_tenants_never_cross(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, TenantSettings, str | None]]
) -> None:
    # GIVEN a plain model: each tenant's latest settings and key
    discard_unpublished_metrics()
    lab = Lab(tmp_path_factory.mktemp("settings"), FixedClock())
    model: dict[str, tuple[int, TenantSettings, str | None]] = {}
    # WHEN tenants change their settings in any order, each reading its own after every change
    for tenant, wanted, key in ops:
        version, _, old_key = model.get(tenant, (0, TenantSettings(), None))
        lab.service.update(lab.admin(tenant), wanted, version, provider_key=key)
        model[tenant] = (version + 1, wanted, key or old_key)
        # THEN every tenant reads exactly its own, through the admin view and the cache
        for t in _TENANTS:
            v, s, k = model.get(t, (0, TenantSettings(), None))
            view = lab.service.view(lab.admin(t))
            assert (view.version, view.settings) == (v, s)
            assert lab.cache.settings(t) == s
            assert (view.provider_key.last4 if view.provider_key else None) == (k[-4:] if k else None)
            assert lab.secrets.get_secret(t) == k

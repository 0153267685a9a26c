"""A tenant's change of embedding model on the embedded adapters: the re-embedding job fills the
new space (killed midway, it resumes and loses nothing), writes made meanwhile land in both
spaces, searches read the old space until the switch and the new one after it (every memory
found, none twice), the old space is dropped a cache lifetime later, and another tenant's
memories and searches never change."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tests.fakes import FixedClock
from tests.unit.services.conftest import World, make_world
from tests.unit.services.test_tenant_configuration import Ticker

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.local_secrets import LocalFileSecretStore
from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore
from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import DependencyError, ValidationFailedError
from agent_memory.governance.rules.plans import load_plans
from agent_memory.model.caller import Caller
from agent_memory.model.queries import SearchQuery
from agent_memory.observability import discard_unpublished_metrics
from agent_memory.ports import Job, Matrix, StoredRecord
from agent_memory.recall.rules.ranking import RankingWeights
from agent_memory.recall.search import SearchService
from agent_memory.tenancy.models import TenantEmbedders
from agent_memory.tenancy.reembed import ReembedService
from agent_memory.tenancy.rules.embedding_spaces import DEFAULT_SPACE, ReembedJob
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider, TenantSettings
from agent_memory.tenancy.settings import SettingsCache, SettingsService
from agent_memory.writing.write import WriteService
from agent_memory.writing.writer import WriterService

NEW = ModelChoice(provider=ModelProvider.LOCAL, model="hashing", dimension=64)


class Jobs:
    """The job queue: what was queued, with its delay."""

    def __init__(self) -> None:
        self.sent: list[tuple[Job, int]] = []

    def send(self, jobs: Sequence[Job], delay_s: int = 0) -> None:
        self.sent += [(j, delay_s) for j in jobs]


class Flaky:
    """The tenant's model, which can be made to fail after some calls (the job killed midway)
    and counts the texts it embedded."""

    def __init__(self, dimension: int) -> None:
        self.inner = HashingEmbedder(dimension)
        self.fail_after: int | None = None
        self.calls = 0
        self.texts = 0

    @property
    def model_id(self) -> str:
        return "flaky-" + self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> Matrix:
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise DependencyError("the model went away")
        self.calls += 1
        self.texts += len(texts)
        return self.inner.embed(texts)


class Lab:
    def __init__(self, tmp_path: Path, clock: FixedClock) -> None:
        discard_unpublished_metrics()  # many writes: more metrics than one flush holds
        self.world: World = make_world(tmp_path, clock)
        w = self.world
        self.settings_store = SqliteTenantSettingsStore(tmp_path / "tenant_settings.db")
        self.cache = SettingsCache(self.settings_store, ttl_s=60, clock=Ticker(), states=self.settings_store)
        self.secrets = LocalFileSecretStore(tmp_path / "secrets")
        self.model = Flaky(64)
        self.embedders = TenantEmbedders(w.embedder, self.cache, self.secrets, lambda choice, key: self.model)
        self.jobs = Jobs()
        self.reembed = ReembedService(
            w.store,
            self.settings_store,
            self.cache,
            self.embedders,
            self.jobs,
            clock,
            page_size=16,
            max_pages=3,
        )
        self.service = SettingsService(
            self.cache,
            self.secrets,
            w.store,
            clock,
            load_plans(None),
            max_working_per_agent=10_000,
            embedding_models={
                ModelProvider.LOCAL: frozenset({"hashing", "minilm"}),
                ModelProvider.OPENAI: None,
            },
            reembedding=self.reembed,
        )
        self.write = WriteService(w.queue, w.pending, clock, settings=self.cache)
        self.writer = WriterService(
            w.store, w.embedder, w.pending, w.queue, clock, settings=self.cache, embedders=self.embedders
        )
        self.search = SearchService(
            w.store, w.embedder, clock, RankingWeights(), settings=self.cache, embedders=self.embedders
        )

    def say(self, tenant: str, contents: list[str]) -> None:
        items = [{"content": c} for c in contents]
        self.write.accept(
            Caller(tenant, key_id="k"), "bot", WriteRequest.model_validate({"items": items}).to_new_memories()
        )
        self.world.clock.advance(minutes=1)
        while batch := self.world.queue.receive(10):
            for p in self.writer.prepare([m.body for m in batch]):
                assert p.command is not None, p.poison_reason
                self.writer.apply(p.command, p.vector)
            self.world.queue.ack(m.receipt_handle for m in batch)

    def found(self, tenant: str, query: str) -> list[str]:
        hits = self.search.search(tenant, "bot", SearchQuery(query=query, max_results=50))
        ids = [h.id for h in hits]
        assert len(ids) == len(set(ids)), "a memory answered twice"
        return [h.record.content for h in hits]  # type: ignore[union-attr]

    def run(self) -> object:
        return self.reembed.run(ReembedJob(tenant_id="acme"))

    def choose(self, choice: ModelChoice | None) -> None:
        stored = self.settings_store.get_settings("acme")
        self.service.update(
            Caller("acme", key_id="admin", plan="pro", scopes=frozenset({"admin"})),
            TenantSettings(embedding=choice),
            expected_version=stored.version if stored else 0,
        )


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Lab:
    return Lab(tmp_path, clock)


FACTS = [
    f"fact number {i} about the {animal} in the garden" for i, animal in enumerate(["cat", "owl", "fox"] * 30)
]


def test_a_change_of_model_moves_every_memory_and_searches_never_miss_one(lab: Lab) -> None:
    # GIVEN two tenants' memories
    lab.say("acme", FACTS)
    lab.say("other", ["the other tenant's owl", "the other tenant's fox"])
    before_other = lab.found("other", "owl")
    assert any("owl" in c for c in lab.found("acme", "owl in the garden"))
    # WHEN acme's admin chooses another model
    lab.choose(NEW)
    # THEN a fill is under way, and a job queued for it
    state = lab.reembed.state("acme")
    assert state.target == NEW and state.active is None and lab.jobs.sent
    # WHEN the job dies after two model calls (a page each)
    lab.model.fail_after = 2
    with pytest.raises(DependencyError):
        lab.run()
    # THEN part of the memories are in the new space, and searches still read the old one whole
    missing = lab.world.store.count_missing("acme", NEW.space)
    assert 0 < missing < len(FACTS)
    assert len([c for c in lab.found("acme", "fact number garden") if c.startswith("fact")]) == 50
    # WHEN a memory is written during the fill
    lab.model.fail_after = None
    lab.say("acme", ["a heron visited the pond during the move"])
    # THEN it is in both spaces at once
    assert lab.world.store.count_missing("acme", DEFAULT_SPACE) == 0
    # WHEN the job is redelivered and runs until nothing is missing
    for _ in range(10):
        report = lab.run()
        if report.remaining == 0:  # type: ignore[attr-defined]
            break
    # THEN it resumed (each memory embedded once), nothing is missing, but no switch yet: some
    # function may still read the old state and write the old space alone
    assert lab.model.texts <= len(FACTS) + 1 + 16  # the page in flight when it died may repeat
    assert lab.world.store.count_missing("acme", NEW.space) == 0
    assert lab.reembed.state("acme").active is None
    # WHEN a cache lifetime has passed and the job runs again
    lab.world.clock.advance(seconds=62)
    switched = lab.run()
    # THEN searches read the new space, and find every memory
    assert switched.switched  # type: ignore[attr-defined]
    assert lab.reembed.state("acme").active == NEW
    assert len(lab.found("acme", "fact number garden")) == 50
    assert any("heron" in c for c in lab.found("acme", "heron pond"))
    # WHEN another cache lifetime has passed
    lab.world.clock.advance(seconds=62)
    dropped = lab.run()
    # THEN the deployment-space vectors of acme are gone, its searches still whole
    assert dropped.dropped == [DEFAULT_SPACE]  # type: ignore[attr-defined]
    assert lab.world.store.count_missing("acme", DEFAULT_SPACE) == len(FACTS) + 1
    assert len(lab.found("acme", "fact number garden")) == 50
    # AND the other tenant never changed
    assert lab.world.store.count_missing("other", DEFAULT_SPACE) == 0
    assert lab.found("other", "owl") == before_other


def test_writes_after_the_switch_reach_the_new_space_only_and_no_text_goes_to_the_deployment_model(
    lab: Lab,
) -> None:
    # GIVEN acme moved to its own model
    lab.say("acme", FACTS[:5])
    lab.choose(NEW)
    while lab.run().remaining:  # type: ignore[attr-defined]
        pass
    lab.world.clock.advance(seconds=62)
    assert lab.run().switched  # type: ignore[attr-defined]
    # WHEN it writes and searches
    calls = lab.model.texts
    lab.say("acme", ["the kingfisher dived"])
    # THEN its model embedded the write, which has no deployment-space vector
    assert lab.model.texts > calls
    assert lab.world.store.count_missing("acme", DEFAULT_SPACE) >= 1
    assert any("kingfisher" in c for c in lab.found("acme", "kingfisher"))


def test_choosing_the_model_in_force_again_abandons_the_fill_and_retires_its_space(lab: Lab) -> None:
    # GIVEN a fill under way
    lab.say("acme", FACTS[:20])
    lab.choose(NEW)
    lab.run()
    assert lab.world.store.count_missing("acme", NEW.space) < 20
    # WHEN the admin goes back to the deployment's model
    lab.choose(None)
    # THEN nothing moves, and the partial space is dropped once nobody writes it
    state = lab.reembed.state("acme")
    assert not state.moving and state.active is None and NEW.space in state.retiring
    lab.world.clock.advance(seconds=62)
    assert lab.run().dropped == [NEW.space]  # type: ignore[attr-defined]
    assert lab.world.store.count_missing("acme", NEW.space) == 20
    assert len(lab.found("acme", "fact number garden")) == 20


def test_a_tenant_that_left_the_deployments_model_can_come_back_to_it(lab: Lab) -> None:
    # GIVEN acme moved to its own model, and the deployment-space vectors were dropped
    lab.say("acme", FACTS[:10])
    lab.choose(NEW)
    for _ in range(3):
        lab.run()
        lab.world.clock.advance(seconds=62)
    assert lab.reembed.state("acme").active == NEW
    assert lab.world.store.count_missing("acme", DEFAULT_SPACE) == 10
    # WHEN its admin chooses the deployment's model again
    lab.choose(None)
    state = lab.reembed.state("acme")
    # THEN a move back is under way, its searches still in its own space
    assert state.moving and state.target is None and state.active == NEW
    assert len(lab.found("acme", "fact number garden")) == 10
    # WHEN the job fills, switches and drops
    for _ in range(3):
        lab.run()
        lab.world.clock.advance(seconds=62)
    # THEN searches read the deployment's space again, complete, and its own space is gone
    state = lab.reembed.state("acme")
    assert state.active is None and not state.moving
    assert lab.world.store.count_missing("acme", DEFAULT_SPACE) == 0
    assert lab.world.store.count_missing("acme", NEW.space) == 10
    assert len(lab.found("acme", "fact number garden")) == 10


def test_a_model_not_enabled_or_without_a_size_is_refused(lab: Lab) -> None:
    # GIVEN
    admin = Caller("acme", key_id="admin", plan="pro", scopes=frozenset({"admin"}))
    bad = [
        ModelChoice(provider=ModelProvider.BEDROCK, model="amazon.titan-embed-text-v2:0"),
        ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint="https://api.example.com/v1"),
        ModelChoice(provider=ModelProvider.LOCAL, model="minilm", dimension=128),
    ]
    for choice in bad:
        # WHEN
        with pytest.raises(ValidationFailedError, match="embedding"):
            lab.service.update(admin, TenantSettings(embedding=choice), expected_version=0)
    # THEN nothing was stored, nothing moves
    assert lab.settings_store.get_settings("acme") is None and not lab.reembed.state("acme").moving


def test_a_vector_of_a_record_changed_since_it_was_read_is_not_stored(lab: Lab) -> None:
    # GIVEN a record read by the job
    lab.say("acme", ["the first wording"])
    [record] = lab.world.store.missing_in_space("acme", NEW.space, 10)
    # WHEN its writer changes it before the job stores the vector
    changed = record.model_copy(
        update={"updated_at": record.updated_at.replace(year=record.updated_at.year + 1)}
    )
    lab.world.store.put([StoredRecord(changed, np.ones(384, dtype=np.float32))])
    stored = lab.world.store.put_space_vectors("acme", NEW.space, [(record, np.ones(64, dtype=np.float32))])
    # THEN the stale vector is not stored, and another tenant's record is never written
    assert stored == 0
    assert (
        lab.world.store.put_space_vectors("other", NEW.space, [(changed, np.ones(64, dtype=np.float32))]) == 0
    )
    assert lab.world.store.count_missing("acme", NEW.space) == 1


class Built:
    """An embedder made for one tenant's choice and key: says which, in every vector's place."""

    def __init__(self, choice: ModelChoice, key: str | None) -> None:
        self.choice, self.key = choice, key
        self.inner = HashingEmbedder(choice.dimension or 8)

    @property
    def model_id(self) -> str:
        return self.choice.model

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> Matrix:
        return self.inner.embed(texts)


TENANTS = ["t1", "t2", "t3"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(st.tuples(st.sampled_from(TENANTS), st.booleans(), st.integers(0, 3)), max_size=25))
def test_a_tenants_model_and_key_never_serve_another_tenant(
    tmp_path_factory: pytest.TempPathFactory, ops: list[tuple[str, bool, int]]
) -> None:
    # GIVEN tenants that change their model and key in any order, and embed in between
    lab = Lab(tmp_path_factory.mktemp("iso"), FixedClock())
    lab.embedders = TenantEmbedders(lab.world.embedder, lab.cache, lab.secrets, Built)
    model: dict[str, tuple[str | None, str | None]] = {}
    for tenant, change, n in ops:
        admin = Caller(tenant, key_id="admin", plan="pro", scopes=frozenset({"admin"}))
        if change:
            # WHEN the tenant picks a model and a key of its own
            choice = ModelChoice(
                provider=ModelProvider.OPENAI,
                model=f"{tenant}-m{n}",
                endpoint="https://llm.example.com/v1",
                dimension=8 + n,
            )
            stored = lab.settings_store.get_settings(tenant)
            lab.service.update(
                admin,
                TenantSettings(embedding=choice),
                stored.version if stored else 0,
                provider_key=f"key-{tenant}-{n}",
            )
            model[tenant] = (choice.model, f"key-{tenant}-{n}")
        # THEN the embedders its writes use are its own model with its own key, or the deployment's
        spaces = lab.embedders.for_tenant(tenant)
        for w in spaces.writes:
            if isinstance(w.embedder, Built):
                assert w.embedder.choice.model.startswith(f"{tenant}-")
                assert w.embedder.key == model[tenant][1]
            else:
                assert w.embedder is lab.world.embedder
        if tenant in model:
            target = spaces.writes[-1].embedder
            assert isinstance(target, Built) and target.choice.model == model[tenant][0]

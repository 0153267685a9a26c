"""A tenant's own summary model: its jobs are summarized by it (with its own key), other tenants'
by the deployment's; a key the provider refuses fails the tenant's job with a clear error and
never falls back to the deployment's model or key."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from tests.fakes import FixedClock
from tests.unit.adapters.recording_transport import ENDPOINT, RecordingTransport, ok, status
from tests.unit.services.cascade_world import build
from tests.unit.services.conftest import World, make_world

from agent_memory.adapters.local_secrets import LocalFileSecretStore
from agent_memory.adapters.openai_http import OpenAICompatibleClient
from agent_memory.adapters.sqlite.sqlite_tenant_settings import SqliteTenantSettingsStore
from agent_memory.adapters.summarizers import enabled_summary_models
from agent_memory.adapters.summarizers.openai_compatible_summarizer import OpenAICompatibleSummarizer
from agent_memory.cascade.summarize import SummarizeService
from agent_memory.contract.v1 import WriteItem, WriteRequest
from agent_memory.errors import ProviderKeyRejectedError, ValidationFailedError
from agent_memory.governance.rules.plans import load_plans
from agent_memory.model.caller import Caller
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.model.jobs import SummarizeJob
from agent_memory.ports import Summarizer
from agent_memory.settings import Settings
from agent_memory.tenancy.models import TenantSummarizers
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider, TenantSettings
from agent_memory.tenancy.settings import SettingsCache, SettingsService

TENANT_KEY = "sk-own-tenant-key-7a6b5c4d3e2f"
DAY = datetime(2026, 11, 20, 9, tzinfo=UTC)
CHOICE = ModelChoice(provider=ModelProvider.OPENAI, model="llama-3.1-8b", endpoint=ENDPOINT)


def chat(text: str) -> dict[str, object]:
    return {"choices": [{"message": {"content": text}, "finish_reason": "stop"}], "usage": {}}


class Lab:
    def __init__(self, tmp_path: Path) -> None:
        self.world: World = make_world(tmp_path, FixedClock(datetime(2026, 12, 1, tzinfo=UTC)))
        self.cascade = build(self.world, tmp_path)
        self.cache = SettingsCache(SqliteTenantSettingsStore(tmp_path / "settings.db"))
        self.secrets = LocalFileSecretStore(tmp_path / "secrets")
        self.settings = SettingsService(
            self.cache,
            self.secrets,
            self.world.store,
            self.world.clock,
            load_plans(None),
            10_000,
            summary_models=enabled_summary_models(Settings(summarizer="local")),
        )
        self.transport = RecordingTransport()
        self.built: list[tuple[ModelChoice, str | None]] = []

        def factory(choice: ModelChoice, key: str | None) -> Summarizer:
            self.built.append((choice, key))
            client = OpenAICompatibleClient(
                choice.endpoint or "", key, transport=self.transport, sleep=lambda _: None
            )
            return OpenAICompatibleSummarizer(client, choice.model)

        self.models = TenantSummarizers(self.cascade.summarizer, self.cache, self.secrets, factory)
        self.summarize = SummarizeService(
            self.world.store,
            self.cascade.summarizer,
            self.world.queue,
            self.cascade.jobs,
            self.world.clock,
            summarizers=self.models,
        )

    def remember(self, tenant: str, text: str) -> None:
        item = WriteItem.model_validate({"content": text, "occurred_at": DAY.isoformat()})
        self.world.write.accept(
            Caller(tenant, key_id="k"), "bot", WriteRequest(items=[item]).to_new_memories()
        )
        self.world.drain()

    def run_day(self, tenant: str) -> None:
        self.summarize.run(
            SummarizeJob(tenant_id=tenant, agent_id="bot", grain=Grain.DAILY, time_key="2026-11-20")
        )
        self.world.drain()

    def daily(self, tenant: str) -> object:
        return self.world.store.get(tenant, "bot", summary_id(tenant, "bot", "daily", "2026-11-20"))


@pytest.fixture
def lab(tmp_path: Path) -> Lab:
    return Lab(tmp_path)


def test_a_tenants_own_summary_model_summarizes_its_days_with_its_own_key(lab: Lab) -> None:
    # GIVEN tenant a chose an OpenAI-compatible model and set its key; tenant b chose nothing
    admin = Caller("a", key_id="key_a", plan="pro", scopes=frozenset({"admin"}))
    lab.settings.update(admin, TenantSettings(summary=CHOICE), 0, provider_key=TENANT_KEY)
    for tenant in ("a", "b"):
        lab.remember(tenant, "Alice moved the launch to March 3.")
    lab.transport.answers.append(ok(chat("[2026-11-20] The launch moved to March 3.")))
    # WHEN both tenants' days are summarized
    lab.run_day("a")
    lab.run_day("b")
    # THEN a's summary is its model's, asked with its key; b's is the deployment's, no call made
    a, b = lab.daily("a"), lab.daily("b")
    assert a.content == "[2026-11-20] The launch moved to March 3."  # type: ignore[attr-defined]
    assert a.metadata["summarizer_model_id"] == "openai:llm.example.com/llama-3.1-8b"  # type: ignore[attr-defined]
    assert b.metadata["summarizer_model_id"] == lab.cascade.summarizer.model_id  # type: ignore[attr-defined]
    [request] = lab.transport.requests
    assert request.headers["Authorization"] == f"Bearer {TENANT_KEY}"
    assert json.loads(request.body)["model"] == "llama-3.1-8b"
    assert lab.built == [(CHOICE, TENANT_KEY)]


def test_a_refused_key_fails_the_tenants_job_and_never_falls_back(lab: Lab) -> None:
    # GIVEN tenant a's model, with a key its provider refuses
    admin = Caller("a", key_id="key_a", plan="pro", scopes=frozenset({"admin"}))
    lab.settings.update(admin, TenantSettings(summary=CHOICE), 0, provider_key=TENANT_KEY)
    lab.remember("a", "Alice moved the launch to March 3.")
    lab.transport.answers.append(status(401, '{"error": "invalid api key ' + TENANT_KEY + '"}'))
    # WHEN its day is summarized
    with pytest.raises(ProviderKeyRejectedError) as refused:
        lab.run_day("a")
    # THEN the job fails (the queue retries it, then dead-letters it) naming no key, nothing made
    assert TENANT_KEY not in str(refused.value) and refused.value.status == 424
    assert lab.daily("a") is None
    assert len(lab.transport.requests) == 1  # no retry of a refused key, and no other model asked


def test_a_new_key_or_model_takes_effect_at_the_next_job(lab: Lab) -> None:
    # GIVEN a tenant model built once
    admin = Caller("a", key_id="key_a", plan="pro", scopes=frozenset({"admin"}))
    lab.settings.update(admin, TenantSettings(summary=CHOICE), 0, provider_key=TENANT_KEY)
    assert lab.models.for_tenant("a") is lab.models.for_tenant("a")
    # WHEN the tenant rotates its key
    lab.settings.update(admin, TenantSettings(summary=CHOICE), 1, provider_key=TENANT_KEY + "-2")
    # THEN the next job's summarizer is built with the new key
    lab.models.for_tenant("a")
    assert [k for _, k in lab.built] == [TENANT_KEY, TENANT_KEY + "-2"]
    # AND choosing no model goes back to the deployment's
    lab.settings.update(admin, TenantSettings(), 2)
    assert lab.models.for_tenant("a") is lab.cascade.summarizer


@pytest.mark.parametrize(
    ("choice", "problem"),
    [
        (ModelChoice(provider=ModelProvider.BEDROCK, model="anthropic.claude-v2"), "bedrock model"),
        (ModelChoice(provider=ModelProvider.LOCAL, model="gpt-4"), "local model gpt-4 is not enabled"),
        (ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint=ENDPOINT), None),
    ],
)
def test_only_models_this_deployment_can_run_may_be_chosen(
    lab: Lab, choice: ModelChoice, problem: str | None
) -> None:
    # GIVEN a deployment summarizing locally (no Bedrock model may be invoked)
    admin = Caller("a", key_id="key_a", plan="pro", scopes=frozenset({"admin"}))
    # WHEN / THEN
    if problem is None:
        assert lab.settings.update(admin, TenantSettings(summary=choice), 0).settings.summary == choice
        return
    with pytest.raises(ValidationFailedError) as refused:
        lab.settings.update(admin, TenantSettings(summary=choice), 0)
    assert problem in refused.value.message


def test_an_own_embedding_model_is_refused_until_spaces_exist(lab: Lab) -> None:
    # GIVEN
    admin = Caller("a", key_id="key_a", plan="pro", scopes=frozenset({"admin"}))
    choice = ModelChoice(provider=ModelProvider.OPENAI, model="text-embedding-3-small", endpoint=ENDPOINT)
    # WHEN / THEN
    with pytest.raises(ValidationFailedError) as refused:
        lab.settings.update(admin, TenantSettings(embedding=choice), 0)
    assert "embedding" in refused.value.message

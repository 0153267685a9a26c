"""A tenant's settings (`tenancy.rules.tenant_settings`): model choices, bounds, the plan's limits, diffs."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic import ValidationError

from agent_memory.governance.rules.plans import DEFAULT_PLANS, MONTH, Retention, hours_of
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.tenancy.rules.tenant_settings import (
    MAX_TTL_DAYS,
    ModelChoice,
    ModelProvider,
    RankingDefaults,
    TenantSettings,
    changes,
    check_within_plan,
    effective_retention,
)

FREE = hours_of(DEFAULT_PLANS, "free")
UNLIMITED = hours_of(DEFAULT_PLANS, "unlimited")
MAX_HOURS = 24 * MAX_TTL_DAYS


# --- ModelChoice ---------------------------------------------------------------------------------


def test_an_openai_model_needs_its_endpoint() -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match="needs its endpoint"):
        ModelChoice(provider=ModelProvider.OPENAI, model="gpt-4o-mini")


@pytest.mark.parametrize("provider", [ModelProvider.BEDROCK, ModelProvider.LOCAL])
def test_a_bedrock_or_local_model_must_not_have_an_endpoint(provider: ModelProvider) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match="openai provider only"):
        ModelChoice(
            provider=provider, model="amazon.titan-embed-text-v2:0", endpoint="https://api.example.com"
        )
    assert ModelChoice(provider=provider, model="amazon.titan-embed-text-v2:0").endpoint is None


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://api.example.com/v1",
        "http://localhost:11434/v1",
        "http://LOCALHOST:11434/v1",
        "http://127.0.0.1:8000/v1",
        "http://[::1]:8000/v1",
    ],
)
def test_an_endpoint_is_https_or_plain_http_to_this_machine(endpoint: str) -> None:
    # WHEN
    choice = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint=endpoint)

    # THEN it is kept, with its host in lower case
    assert choice.endpoint == endpoint.replace("LOCALHOST", "localhost")


@pytest.mark.parametrize(
    ("endpoint", "message"),
    [
        ("http://api.example.com/v1", "plain http is allowed to localhost only"),
        ("http://10.0.0.5:8000/v1", "plain http is allowed to localhost only"),
        ("http://localhost.evil.example/v1", "plain http is allowed to localhost only"),
        ("ftp://api.example.com/v1", "must be an https:// URL"),
        ("api.example.com/v1", "must be an https:// URL"),
        ("https:///v1", "must be an https:// URL"),
        ("https://user:secret@api.example.com/v1", "must not hold credentials"),
        ("https://user@api.example.com/v1", "must not hold credentials"),
        ("https://api.example.com/v1?key=secret", "query or a fragment"),
        ("https://api.example.com/v1#frag", "query or a fragment"),
    ],
)
def test_an_endpoint_that_is_not_safe_to_call_or_to_log_is_refused(endpoint: str, message: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match=message):
        ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint=endpoint)


@pytest.mark.parametrize(
    ("endpoint", "kept"),
    [
        ("https://api.example.com/v1/", "https://api.example.com/v1"),
        ("https://api.example.com/", "https://api.example.com"),
        ("http://[::1]:8000/v1/", "http://[::1]:8000/v1"),
    ],
)
def test_a_trailing_slash_is_dropped_from_an_endpoint(endpoint: str, kept: str) -> None:
    # WHEN
    choice = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint=endpoint)

    # THEN
    assert choice.endpoint == kept


def test_an_endpoint_longer_than_2048_characters_is_refused() -> None:
    # GIVEN
    endpoint = "https://api.example.com/" + "a" * 2048
    # WHEN / THEN
    with pytest.raises(ValidationError):
        ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint=endpoint)


@pytest.mark.parametrize(
    "endpoint",
    [
        "https://api.example.com/v1\n",
        "https://api.exa\nmple.com/v1",
        " https://host/v1",
        "https://host/v1\t",
        "https://h/v1?",
        "https://h/v1#",
        "https://@h/v1",
        "https://h:99999/v1",
    ],
)
def test_an_endpoint_with_whitespace_empty_parts_or_a_bad_port_is_refused(endpoint: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint=endpoint)


@pytest.mark.parametrize(
    "model",
    ["amazon.titan-embed-text-v2:0", "text-embedding-3-small", "org/model@rev+1", "a", "m" * 200],
)
def test_a_model_id_of_the_allowed_characters_is_accepted(model: str) -> None:
    # WHEN / THEN
    assert ModelChoice(provider=ModelProvider.BEDROCK, model=model).model == model


@pytest.mark.parametrize(
    "model",
    ["", "text embedding", "model\nX-Injected: yes", "model\n", "-leading-dash", ".hidden", "m" * 201],
)
def test_a_model_id_with_spaces_newlines_or_a_bad_first_character_is_refused(model: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        ModelChoice(provider=ModelProvider.BEDROCK, model=model)


@pytest.mark.parametrize("dimension", [8, 256, 1024, 8192, None])
def test_a_dimension_within_bounds_is_accepted(dimension: int | None) -> None:
    # WHEN / THEN
    assert ModelChoice(provider=ModelProvider.LOCAL, model="m", dimension=dimension).dimension == dimension


@pytest.mark.parametrize("dimension", [7, 0, -1, 8193, True, 256.0, "256"])
def test_a_dimension_out_of_bounds_or_not_an_int_is_refused(dimension: Any) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        ModelChoice(provider=ModelProvider.LOCAL, model="m", dimension=dimension)


def test_a_model_choice_refuses_unknown_fields_and_is_frozen() -> None:
    # GIVEN
    choice = ModelChoice(provider=ModelProvider.BEDROCK, model="m")
    # WHEN / THEN
    with pytest.raises(ValidationError, match="Extra inputs"):
        ModelChoice.model_validate({"provider": "bedrock", "model": "m", "api_key": "sk-secret"})
    with pytest.raises(ValidationError):
        choice.model = "other"  # type: ignore[misc]


def test_the_space_is_stable_for_equal_choices() -> None:
    # GIVEN two equal choices made separately
    a = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint="https://h/v1", dimension=512)
    b = ModelChoice.model_validate(
        {"provider": "openai", "model": "m", "endpoint": "https://h/v1/", "dimension": 512}
    )

    # WHEN
    spaces = (a.space, b.space)

    # THEN
    assert spaces[0] == spaces[1]
    assert spaces[0].startswith("sp_")
    assert len(spaces[0]) > len("sp_")


@pytest.mark.parametrize(
    "other",
    [
        {"provider": "local", "model": "m", "dimension": 512},
        {"provider": "bedrock", "model": "n", "dimension": 512},
        {"provider": "bedrock", "model": "m", "dimension": 1024},
        {"provider": "bedrock", "model": "m"},
    ],
    ids=["provider", "model", "dimension", "no-dimension"],
)
def test_the_space_differs_when_provider_model_or_dimension_differ(other: dict[str, Any]) -> None:
    # GIVEN
    base = ModelChoice(provider=ModelProvider.BEDROCK, model="m", dimension=512)
    # WHEN / THEN
    assert ModelChoice.model_validate(other).space != base.space


def test_the_space_differs_when_the_endpoint_differs() -> None:
    # GIVEN the same model served by two endpoints
    a = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint="https://one.example/v1")
    b = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint="https://two.example/v1")

    # WHEN / THEN their vectors are kept apart
    assert a.space != b.space


# --- TenantSettings ------------------------------------------------------------------------------


def test_empty_settings_are_the_deployment_defaults() -> None:
    # WHEN
    settings = TenantSettings()

    # THEN
    assert settings.embedding is None and settings.summary is None
    assert settings.retention_hours == {} and settings.ttl_days == {}
    assert settings.max_working_per_agent is None
    assert settings.ranking.overrides() == {}
    assert settings.merge_near_duplicates is True


@pytest.mark.parametrize(
    "raw",
    [
        {"provider_key": "sk-secret"},
        {"ranking": {"semantic_weight": 0.5}},
        {"embedding": {"provider": "bedrock", "model": "m", "key": "x"}},
    ],
)
def test_settings_refuse_unknown_fields_at_every_level(raw: dict[str, Any]) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match="Extra inputs"):
        TenantSettings.model_validate(raw)


@pytest.mark.parametrize("hours", [1, 48, MAX_HOURS, None])
def test_retention_hours_within_range_or_null_are_accepted(hours: int | None) -> None:
    # WHEN / THEN
    assert TenantSettings(retention_hours={Grain.DAILY: hours}).retention_hours == {Grain.DAILY: hours}


@pytest.mark.parametrize("hours", [0, -1, MAX_HOURS + 1])
def test_retention_hours_out_of_range_are_refused_naming_the_grain(hours: int) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match=r"retention_hours\.weekly must be 1\.\."):
        TenantSettings(retention_hours={Grain.WEEKLY: hours})


@pytest.mark.parametrize("days", [1, 7, MAX_TTL_DAYS, None])
def test_ttl_days_within_range_or_null_are_accepted(days: int | None) -> None:
    # WHEN / THEN
    assert TenantSettings(ttl_days={MemoryKind.TASK: days}).ttl_days == {MemoryKind.TASK: days}


@pytest.mark.parametrize("days", [0, -5, MAX_TTL_DAYS + 1])
def test_ttl_days_out_of_range_are_refused_naming_the_kind(days: int) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError, match=r"ttl_days\.conversation must be 1\.\."):
        TenantSettings(ttl_days={MemoryKind.CONVERSATION: days})


@pytest.mark.parametrize(
    "raw",
    [{"retention_hours": {"hourly": 5}}, {"retention_hours": {"Daily": 5}}, {"ttl_days": {"gossip": 3}}],
)
def test_unknown_grain_or_kind_keys_are_refused(raw: dict[str, Any]) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        TenantSettings.model_validate(raw)


def test_json_keys_become_grains_and_kinds() -> None:
    # WHEN
    settings = TenantSettings.model_validate_json(
        '{"retention_hours": {"daily": 24, "yearly": null}, "ttl_days": {"error": 3}}'
    )

    # THEN
    assert settings.retention_hours == {Grain.DAILY: 24, Grain.YEARLY: None}
    assert settings.ttl_days == {MemoryKind.ERROR: 3}


@pytest.mark.parametrize("value", [0, 10_000_001, True, "5"])
def test_max_working_per_agent_is_a_strict_int_within_bounds(value: Any) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        TenantSettings.model_validate({"max_working_per_agent": value})


def test_ranking_defaults_override_only_what_they_set() -> None:
    # GIVEN
    ranking = RankingDefaults(lexical_weight=0.25, importance_weight=0.0)
    # WHEN
    overrides = ranking.overrides()
    # THEN an explicit zero is an override, an unset weight is not
    assert overrides == {"lexical_weight": 0.25, "importance_weight": 0.0}
    with pytest.raises(ValidationError):
        RankingDefaults(recency_weight=1.5)


# --- check_within_plan ---------------------------------------------------------------------------


@pytest.mark.parametrize("hours", [1, MAX_HOURS, None])
def test_a_grain_the_plan_keeps_forever_accepts_any_bound(hours: int | None) -> None:
    # GIVEN
    settings = TenantSettings(retention_hours=dict.fromkeys(Grain, hours))
    # WHEN / THEN
    assert check_within_plan(settings, UNLIMITED) == []


def test_asking_to_keep_a_limited_grain_forever_is_refused_naming_the_grain() -> None:
    # GIVEN
    settings = TenantSettings(retention_hours={Grain.MONTHLY: None})

    # WHEN
    problems = check_within_plan(settings, FREE)

    # THEN
    assert problems == [f"retention_hours.monthly: forever is longer than the plan's {6 * MONTH} hours"]


def test_asking_for_more_hours_than_a_limited_plan_is_refused_naming_each_grain() -> None:
    # GIVEN one grain over the plan, one at it, one under it
    settings = TenantSettings(
        retention_hours={
            Grain.WORKING: FREE[Grain.WORKING] + 1,  # type: ignore[operator]
            Grain.DAILY: FREE[Grain.DAILY],
            Grain.WEEKLY: 1,
        }
    )

    # WHEN
    problems = check_within_plan(settings, FREE)

    # THEN only the one over the plan is named, with what it asked and what the plan allows
    assert len(problems) == 1
    assert problems[0].startswith("retention_hours.working: 49 hours")
    assert "48 hours" in problems[0]


def test_fewer_hours_than_the_plan_and_no_retention_at_all_are_accepted() -> None:
    # GIVEN
    shorter = TenantSettings(retention_hours={g: 1 for g, h in FREE.items() if h is not None})
    # WHEN / THEN
    assert check_within_plan(shorter, FREE) == []
    assert check_within_plan(TenantSettings(), FREE) == []


# --- effective_retention -------------------------------------------------------------------------


def test_without_settings_the_plan_applies_as_a_copy() -> None:
    # WHEN
    retention = effective_retention(FREE, None)

    # THEN
    assert retention == FREE
    retention[Grain.DAILY] = 1
    assert FREE[Grain.DAILY] != 1


def test_the_tenants_shorter_bound_applies_and_the_rest_is_the_plan() -> None:
    # GIVEN
    settings = TenantSettings(retention_hours={Grain.DAILY: 24, Grain.WEEKLY: None})

    # WHEN
    retention = effective_retention(FREE, settings)

    # THEN the daily bound is the tenant's, the weekly (null: as long as the plan) and others the plan's
    assert retention == {**FREE, Grain.DAILY: 24}


def test_a_bound_longer_than_a_plan_that_shrank_later_is_held_to_the_plan() -> None:
    # GIVEN settings stored while on the pro plan, now read for a tenant on the free plan
    pro = hours_of(DEFAULT_PLANS, "pro")
    settings = TenantSettings(retention_hours={Grain.DAILY: pro[Grain.DAILY]})
    assert check_within_plan(settings, pro) == []

    # WHEN
    retention = effective_retention(FREE, settings)

    # THEN
    assert retention[Grain.DAILY] == FREE[Grain.DAILY]


def test_a_forever_plan_grain_with_tenant_hours_is_kept_for_the_tenants_hours() -> None:
    # GIVEN
    settings = TenantSettings(retention_hours={Grain.YEARLY: 100, Grain.DAILY: None})

    # WHEN
    retention = effective_retention(UNLIMITED, settings)

    # THEN
    assert retention[Grain.YEARLY] == 100
    assert retention[Grain.DAILY] is None
    assert retention[Grain.WORKING] is None


_PLANS = st.dictionaries(st.sampled_from(list(Grain)), st.none() | st.integers(min_value=1, max_value=10**7))
_TENANT_HOURS = st.dictionaries(
    st.sampled_from(list(Grain)), st.none() | st.integers(min_value=1, max_value=MAX_HOURS)
)


@given(plan=_PLANS, asked=_TENANT_HOURS)
def test_effective_retention_is_never_longer_than_the_plan(
    plan: Retention, asked: dict[Grain, int | None]
) -> None:
    """Every grain the plan limits is kept no longer than the plan (None: forever); a grain the
    tenant left unset (or null) is kept exactly as the plan keeps it."""
    settings = TenantSettings(retention_hours=asked)

    retention = effective_retention(plan, settings)

    for grain in Grain:
        limit = plan.get(grain)
        kept = retention.get(grain)
        if limit is not None:
            assert kept is not None and kept <= limit
        if asked.get(grain) is None:
            assert kept == limit
        else:
            assert kept is not None and kept <= asked[grain]  # type: ignore[operator]


# --- changes -------------------------------------------------------------------------------------


def test_changes_name_only_the_top_level_fields_that_changed_with_before_and_after() -> None:
    # GIVEN
    embedding = ModelChoice(
        provider=ModelProvider.BEDROCK, model="amazon.titan-embed-text-v2:0", dimension=512
    )
    before = TenantSettings(embedding=embedding, retention_hours={Grain.DAILY: 48})
    after = TenantSettings(
        embedding=embedding, retention_hours={Grain.DAILY: 24}, merge_near_duplicates=False
    )

    # WHEN
    diff = changes(before, after)

    # THEN
    assert diff == {
        "retention_hours": {"before": {"daily": 48}, "after": {"daily": 24}},
        "merge_near_duplicates": {"before": True, "after": False},
    }
    assert json.loads(json.dumps(diff)) == diff


def test_changes_from_nothing_are_against_the_defaults_and_are_json() -> None:
    # GIVEN
    after = TenantSettings(
        summary=ModelChoice(provider=ModelProvider.OPENAI, model="gpt-4o-mini", endpoint="https://h/v1"),
        ttl_days={MemoryKind.TASK: None},
        ranking=RankingDefaults(recency_weight=0.5),
    )

    # WHEN
    diff = changes(None, after)

    # THEN
    assert set(diff) == {"summary", "ttl_days", "ranking"}
    assert diff["summary"]["before"] is None
    assert diff["summary"]["after"]["provider"] == "openai"
    assert diff["ttl_days"] == {"before": {}, "after": {"task": None}}
    assert diff["ranking"]["after"]["recency_weight"] == 0.5
    assert json.loads(json.dumps(diff)) == diff


def test_no_change_is_an_empty_diff() -> None:
    # GIVEN
    settings = TenantSettings(retention_hours={Grain.DAILY: 48}, max_working_per_agent=100)
    # WHEN / THEN
    assert changes(settings, settings.model_copy()) == {}
    assert changes(None, TenantSettings()) == {}


def test_an_endpoint_is_normalised_so_one_endpoint_is_one_space() -> None:
    # GIVEN
    shouting = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint="HTTPS://API.Example.com/v1/")
    # WHEN
    plain = ModelChoice(provider=ModelProvider.OPENAI, model="m", endpoint="https://api.example.com/v1")
    # THEN
    assert shouting.endpoint == "https://api.example.com/v1" and shouting.space == plain.space


@pytest.mark.parametrize("value", [True, "5", 5.0])
def test_retention_and_ttl_take_whole_numbers_only(value: object) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationError):
        TenantSettings.model_validate({"retention_hours": {"working": value}})
    with pytest.raises(ValidationError):
        TenantSettings.model_validate({"ttl_days": {"note": value}})

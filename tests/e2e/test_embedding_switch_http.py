"""A change of embedding model over HTTP on the local runtime: one tenant switches its model and
its retention while another tenant's writes and searches go on unchanged; the switched tenant's
searches find every memory before, during and after its re-embedding (which the runtime's job
worker runs in the background), and no route, error body or log line shows its key.

The settings cache lives one second here, so the switch (a cache lifetime after the fill began)
and the drop of the old space (one more) happen within the test."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error, settled_stats, unique, wait_until
from tests.environment import configure_local_env

from agent_memory import container
from agent_memory.local.server import LocalRuntime
from agent_memory.settings import get_settings
from agent_memory.tenancy.rules.keys import NewKey

KEY = "sk-e2e-embedding-7d3f0c2b9a8e1f6dKQWX"
NOTES = [
    f"Meeting note {i}: the {topic} review moved to room {i}."
    for i, topic in enumerate(["budget", "design", "hiring"] * 8)
]
NEW_MODEL = {"provider": "local", "model": "hashing", "dimension": 128}


@pytest.fixture(scope="module")
def runtime(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalRuntime]:
    with pytest.MonkeyPatch.context() as mp:
        configure_local_env(mp, tmp_path_factory.mktemp("switch") / "data")
        mp.setenv("AGENT_MEMORY_TENANT_SETTINGS_CACHE_S", "1")
        rt = LocalRuntime(get_settings(), host="127.0.0.1", port=0)
        rt.start()
        yield rt
        rt.stop()
        container.reset()


@pytest.fixture(scope="module")
def api(runtime: LocalRuntime) -> Api:
    return Api(runtime.url)


def _admin(runtime: LocalRuntime) -> str:
    _, key = runtime.keys.create(NewKey(unique("t"), "pro", admin=True))
    return key


def _found(api: Api, key: str, query: str = "review moved to room") -> list[str]:
    status, got = api("POST", "/v1/agents/a1/memories/search", {"query": query, "max_results": 50}, key=key)
    assert status == 200, got
    ids = [r["id"] for r in got["results"]]
    assert len(ids) == len(set(ids)), "a memory answered twice"
    return sorted(ids)


def test_one_tenant_switches_its_model_and_retention_while_another_goes_on(
    api: Api, runtime: LocalRuntime, capfd: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two tenants with the same memories
    a_admin, b_admin = _admin(runtime), _admin(runtime)
    for key in (a_admin, b_admin):
        api("POST", "/v1/agents/a1/memories", {"items": [{"content": n} for n in NOTES]}, key=key)
        settled_stats(api, key, "a1")
    a_before, b_before = _found(api, a_admin), _found(api, b_admin)
    assert len(a_before) == len(NOTES) == len(b_before)

    # WHEN tenant a chooses another embedding model, a shorter retention, and sets its key
    change = {
        "version": 0,
        "settings": {"embedding": NEW_MODEL, "retention_hours": {"working": 48}},
        "provider_key": KEY,
    }
    status, changed = api("PUT", "/v1/admin/settings", change, key=a_admin)

    # THEN the re-embedding has started, and searches still answer from the model in force
    assert status == 200, changed
    assert changed["embedding"]["target"]["dimension"] == 128
    assert changed["embedding"]["phase"] in ("re-embedding", "switching")
    assert _found(api, a_admin) == a_before
    # AND writes during the move and searches while it runs lose nothing
    api(
        "POST",
        "/v1/agents/a1/memories",
        {"items": [{"content": "Late note: the review moved to room 99."}]},
        key=a_admin,
    )
    settled_stats(api, a_admin, "a1")
    during = _found(api, a_admin)
    assert set(a_before) < set(during) and len(during) == len(NOTES) + 1

    # WHEN the runtime's job worker has switched a to the new model
    def switched() -> dict[str, Any] | None:
        _, view = api("GET", "/v1/admin/settings", key=a_admin)
        progress = view["embedding"]
        active = progress["active"] or {}
        return view if progress["phase"] == "steady" and active.get("dimension") == 128 else None

    view = wait_until(switched, timeout_s=30)

    # THEN a's searches answer from the new space, every memory still found, none twice
    assert view["embedding"]["remaining"] == 0 and view["embedding"]["switched_at"]
    assert _found(api, a_admin) == during
    time.sleep(2.5)  # the old space dropped a cache lifetime later: searches still whole
    assert _found(api, a_admin) == during
    # AND b's memories and searches never changed
    assert _found(api, b_admin) == b_before
    _, b_view = api("GET", "/v1/admin/settings", key=b_admin)
    assert b_view["embedding"]["active"] is None and b_view["provider_key"] is None

    # WHEN a asks for a model this runtime does not have
    bad = {"version": view["version"], "settings": {"embedding": {"provider": "bedrock", "model": "x"}}}
    status, body = api("PUT", "/v1/admin/settings", bad, key=a_admin)
    # THEN it is refused with the documented body
    assert status == 400
    assert_error(body)
    # AND no response or log line ever showed the key
    out, err = capfd.readouterr()
    assert KEY not in out + err and KEY not in str(changed) + str(view) + str(body)

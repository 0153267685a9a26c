"""Tenant settings over HTTP on the local runtime: one tenant changes its retention, ranking and
merging and sets a provider key while another tenant's writes and searches go on unchanged; no
response, error body or log line ever shows the key."""

from __future__ import annotations

from typing import Any

import pytest
from tests.e2e.conftest import Api, assert_error, settled_stats

KEY = "sk-proj-e2e-4c1d0a9b8e7f6a5bQRSZ"
NOTE = "The vendor contract renews on the first of March."


def _search(api: Api, key: str) -> list[dict[str, Any]]:
    status, found = api(
        "POST", "/v1/agents/a1/memories/search", {"query": "vendor contract renewal"}, key=key
    )
    assert status == 200, found
    return list(found["results"])


def test_one_tenant_changes_its_settings_and_another_goes_on_unchanged(
    api: Api, new_key: Any, capfd: pytest.CaptureFixture[str]
) -> None:
    # GIVEN two tenants, each with an admin key, each writing the same note twice
    a, _, a_admin = new_key(admin=True)
    b, _, b_admin = new_key(admin=True)
    for key in (a_admin, b_admin):
        api("POST", "/v1/agents/a1/memories", {"items": [{"content": NOTE}]}, key=key)
        settled_stats(api, key, "a1")
    before_b = _search(api, b_admin)

    # WHEN tenant a keeps working memory 24 hours, ranks without the word match, stops merging
    # and sets its provider key
    status, got = api("GET", "/v1/admin/settings", key=a_admin)
    assert status == 200 and got["version"] == 0 and got["provider_key"] is None
    change = {
        "version": 0,
        "settings": {
            "retention_hours": {"working": 24},
            "ranking": {"lexical_weight": 0.0},
            "merge_near_duplicates": False,
        },
        "provider_key": KEY,
    }
    status, changed = api("PUT", "/v1/admin/settings", change, key=a_admin)

    # THEN a reads its settings back, and of its key only the last four characters
    assert status == 200, changed
    assert changed["settings"]["retention_hours"] == {"working": 24}
    assert changed["provider_key"]["last4"] == "QRSZ" and changed["version"] == 1
    # AND a's second write of the same note stays a memory of its own; b's is merged as before
    for key in (a_admin, b_admin):
        api("POST", "/v1/agents/a1/memories", {"items": [{"content": NOTE}]}, key=key)
        settled_stats(api, key, "a1")
    a_found, b_found = _search(api, a_admin), _search(api, b_admin)
    assert len(a_found) == 2 and len(b_found) == 1
    # AND b's search answers exactly as before a changed anything
    assert [(r["id"], r["score"]) for r in b_found] == [(r["id"], r["score"]) for r in before_b]
    # AND b never sees a's settings
    status, b_view = api("GET", "/v1/admin/settings", key=b_admin)
    assert (status, b_view["version"], b_view["provider_key"]) == (200, 0, None)
    assert b_view["tenant_id"] == b and changed["tenant_id"] == a

    # WHEN a asks for longer than its plan, from a stale version, or without the admin scope
    too_long = {"version": 1, "settings": {"retention_hours": {"working": 100_000}}}
    stale = {**change, "version": 0}
    refusals = [
        api("PUT", "/v1/admin/settings", too_long, key=a_admin),
        api("PUT", "/v1/admin/settings", stale, key=a_admin),
        api("PUT", "/v1/admin/settings", {**change, "provider_key": KEY + " x"}, key=a_admin),
    ]
    _, _, reader = new_key(a)
    refusals.append(api("GET", "/v1/admin/settings", key=reader))
    # THEN each is refused with the documented error body, none showing the key
    assert [s for s, _ in refusals] == [400, 409, 400, 403]
    for _, body in refusals:
        assert_error(body)
    # AND no response and no log line of the whole exchange ever held the key
    captured = capfd.readouterr()
    assert KEY not in captured.out + captured.err
    for body in (got, changed, b_view, *(b for _, b in refusals)):
        assert KEY not in str(body)


def test_the_client_reads_and_changes_settings_and_sends_the_key_itself(runtime: Any, new_key: Any) -> None:
    # GIVEN a tenant's admin client
    from agent_memory.client import MemoryClient
    from agent_memory.client.api_errors import ConflictError
    from agent_memory.tenancy.rules.tenant_settings import TenantSettings

    _, _, admin = new_key(admin=True)
    client = MemoryClient(runtime.url, api_key=admin, timeout_s=30.0)
    # WHEN it turns merging off and sets a key
    current = client.settings()
    changed = client.update_settings(
        TenantSettings(merge_near_duplicates=False), current.version, provider_key=KEY
    )
    # THEN the key itself was sent (its last four characters come back, not a mask's)
    assert changed.version == 1 and changed.settings.merge_near_duplicates is False
    assert changed.provider_key is not None and changed.provider_key.last4 == "QRSZ"
    # AND a change from the old version is a conflict
    with pytest.raises(ConflictError):
        client.update_settings(TenantSettings(), current.version)
    client.close()


def test_the_settings_history_names_who_changed_what_and_never_the_key(api: Api, new_key: Any) -> None:
    # GIVEN a tenant's admin that changed the settings twice, setting then clearing a key
    _, key_id, admin = new_key(admin=True)
    first = {"version": 0, "settings": {"merge_near_duplicates": False}, "provider_key": KEY}
    assert api("PUT", "/v1/admin/settings", first, key=admin)[0] == 200
    second = {"version": 1, "settings": {"ttl_days": {"note": 3}}, "clear_provider_key": True}
    assert api("PUT", "/v1/admin/settings", second, key=admin)[0] == 200
    # WHEN it reads the history, one change a page
    status, newest = api("GET", "/v1/admin/settings/history?limit=1", key=admin)
    _, older = api("GET", f"/v1/admin/settings/history?limit=1&cursor={newest['next_cursor']}", key=admin)
    # THEN newest first, each with its key id, its fields before and after, the key only as set/cleared
    assert status == 200
    [latest], [earlier] = newest["items"], older["items"]
    assert (latest["action"], latest["actor"]) == ("settings_changed", key_id)
    assert latest["detail"]["provider_key"] == "cleared" and earlier["detail"]["provider_key"] == "set"
    assert latest["detail"]["changes"]["ttl_days"] == {"before": {}, "after": {"note": 3}}
    assert latest["detail"]["changes"]["merge_near_duplicates"] == {"before": False, "after": True}
    assert KEY not in str(newest) + str(older) and KEY[-4:] not in str(newest) + str(older)
    # AND another tenant's admin sees none of it
    _, _, other = new_key(admin=True)
    assert api("GET", "/v1/admin/settings/history", key=other)[1]["items"] == []

"""Topic dictionaries over HTTP on the local runtime: admin sets, readers read, tenants stay apart."""

from __future__ import annotations

from typing import Any

from tests.e2e.conftest import Api, assert_error, settled_stats

DICTIONARY = {"Launch Date": ["release date", "Go-Live"], "kickoff": ["project start"]}


def test_an_admin_sets_the_dictionary_writes_are_canonicalised_and_unknown_topics_proposed(
    api: Api, new_key: Any
) -> None:
    # GIVEN a tenant with an admin key and a plain key
    tenant, _, admin = new_key(admin=True)
    _, _, reader = new_key(tenant)

    # WHEN the admin sets its dictionary
    status, body = api("PUT", "/v1/admin/topics", {"terms": DICTIONARY}, key=admin)

    # THEN it is stored normalised, and any key of the tenant reads it
    assert status == 200, body
    expected = {"kickoff": ["project start"], "launch date": ["release date", "go-live"]}
    assert body["terms"] == expected and body["updated_at"]
    status, body = api("GET", "/v1/topics", key=reader)
    assert (status, body["terms"]) == (200, expected)

    # WHEN memories name a synonym and an unknown topic
    items = [
        {"content": "We go live on March 3.", "topic": "Go-Live"},
        {"content": "Two engineers to hire.", "topic": "Hiring Plan"},
        {"content": "Three more to hire.", "topic": "hiring   plan"},
    ]
    status, accepted = api("POST", "/v1/agents/a1/memories", {"items": items}, key=reader)
    assert status == 202, accepted
    settled_stats(api, reader, "a1")
    ids = [a["id"] for a in accepted["accepted"]]

    # THEN the memory shows the topic as sent, and search by another synonym finds it first
    status, memory = api("GET", f"/v1/agents/a1/memories/{ids[0]}", key=reader)
    assert (status, memory["topic"]) == (200, "Go-Live")
    status, found = api("POST", "/v1/agents/a1/memories/search", {"query": "release date?"}, key=reader)
    assert status == 200 and found["results"][0]["id"] == ids[0]

    # AND the unknown topic is proposed once, counted twice
    status, proposals = api("GET", "/v1/topics/proposals", key=reader)
    assert status == 200
    assert [(p["topic"], p["count"]) for p in proposals["items"]] == [("hiring plan", 2)]


def test_topics_are_per_tenant_and_replacing_needs_the_admin_scope(api: Api, new_key: Any) -> None:
    # GIVEN tenant A with a dictionary and a proposal, and tenant B
    tenant_a, _, admin_a = new_key(admin=True)
    _, _, key_a = new_key(tenant_a)
    _, _, key_b = new_key()
    _, _, admin_b = new_key(admin=True)
    assert api("PUT", "/v1/admin/topics", {"terms": {"heronfall": ["codename"]}}, key=admin_a)[0] == 200
    assert (
        api(
            "POST", "/v1/agents/a1/memories", {"items": [{"content": "x", "topic": "Vault 4417"}]}, key=key_a
        )[0]
        == 202
    )
    settled_stats(api, key_a, "a1")
    assert api("GET", "/v1/topics/proposals", key=key_a)[1]["items"][0]["topic"] == "vault 4417"

    # WHEN B reads topics and proposals, THEN it sees only its own (empty) ones
    for key in (key_b, admin_b):
        response = api.request("GET", "/v1/topics", key=key)
        assert response.status == 200 and response.json() == {"terms": {}, "updated_at": None}
        response = api.request("GET", "/v1/topics/proposals", key=key)
        assert response.status == 200 and response.json() == {"items": []}

    # WHEN a key without the admin scope tries to replace a dictionary, THEN 403 and nothing changes
    for key in (key_a, key_b):
        response = api.request("PUT", "/v1/admin/topics", {"terms": {}}, key=key)
        assert response.status == 403, response.data
        assert_error(response.json(), "forbidden")
    # AND B's admin replaces only B's
    assert api("PUT", "/v1/admin/topics", {"terms": {"other": []}}, key=admin_b)[0] == 200
    assert api("GET", "/v1/topics", key=key_a)[1]["terms"] == {"heronfall": ["codename"]}

    # AND an empty dictionary removes A's
    assert api("PUT", "/v1/admin/topics", {"terms": {}}, key=admin_a)[1] == {"terms": {}, "updated_at": None}
    assert api("GET", "/v1/topics", key=key_a)[1]["terms"] == {}


def test_an_ambiguous_dictionary_is_a_400_that_names_positions_not_terms(api: Api, new_key: Any) -> None:
    # GIVEN
    _, _, admin = new_key(admin=True)
    body = {"terms": {"budget": ["secret-spend"], "costs": ["secret-spend"]}}
    # WHEN
    response = api.request("PUT", "/v1/admin/topics", body, key=admin)
    # THEN
    assert response.status == 400
    assert_error(response.json(), "validation_error")
    assert "already a term of canonical term 1" in response.data.decode()
    assert "secret-spend" not in response.data.decode()
    response = api.request("GET", "/v1/topics/proposals?limit=0", key=admin)
    assert response.status == 400

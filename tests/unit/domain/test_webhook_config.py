"""A webhook's URL and secret rules, and the delivery back-off."""

from __future__ import annotations

import pytest

from agent_memory.feed.rules.webhook_config import backoff_s, check_secret, check_url, new_secret, where


@pytest.mark.parametrize(
    ("url", "stored"),
    [
        ("https://Hooks.Example.com/in?token=abc", "https://hooks.example.com/in?token=abc"),
        ("https://hooks.example.com", "https://hooks.example.com/"),
        ("https://93.184.215.14:8443/x", "https://93.184.215.14:8443/x"),
    ],
)
def test_an_https_url_to_a_public_host_is_kept_normalised(url: str, stored: str) -> None:
    # WHEN / THEN
    assert check_url(url, allow_loopback_http=False) == stored


@pytest.mark.parametrize(
    "url",
    [
        "http://hooks.example.com/in",  # plain http
        "http://127.0.0.1:9000/in",  # plain http to this machine, where it is not allowed
        "https://127.0.0.1/in",  # loopback
        "https://10.0.0.7/in",  # private
        "https://169.254.169.254/latest/meta-data",  # link-local (instance metadata)
        "https://[::1]/in",
        "https://localhost/in",
        "https://user:pass@hooks.example.com/in",  # credentials
        "https://hooks.example.com/in#frag",
        "ftp://hooks.example.com/in",
        "https:///in",
        "https://hooks.example.com/in\n",
        "https://hooks.example.com:99999/in",
        "https://hooks.example.com/" + "x" * 2100,
    ],
)
def test_a_url_that_is_not_https_to_a_public_host_is_refused(url: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError):
        check_url(url, allow_loopback_http=False)


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:9000/in", "http://localhost:9000/in", "http://[::1]:9000/"]
)
def test_plain_http_to_this_machine_is_allowed_only_where_the_deployment_says(url: str) -> None:
    # WHEN / THEN
    assert check_url(url, allow_loopback_http=True).startswith("http://")


def test_plain_http_to_another_host_is_refused_even_locally() -> None:
    # WHEN / THEN
    with pytest.raises(ValueError):
        check_url("http://192.168.1.5/in", allow_loopback_http=True)


def test_a_made_secret_is_long_random_and_valid_as_a_given_one() -> None:
    # WHEN
    a, b = new_secret(), new_secret()
    # THEN
    assert a != b and a.startswith("whsec_") and check_secret(a) == a


@pytest.mark.parametrize("secret", ["short", "x" * 257, "has space" + "x" * 30, "tab\t" + "x" * 30, "é" * 30])
def test_a_given_secret_must_be_long_printable_ascii_without_spaces(secret: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError) as raised:
        check_secret(secret)
    assert secret not in str(raised.value)


def test_the_back_off_doubles_and_stops_at_its_bound() -> None:
    # WHEN
    waits = [backoff_s(n, 2.0, 60.0) for n in range(1, 8)]
    # THEN
    assert waits == [2.0, 4.0, 8.0, 16.0, 32.0, 60.0, 60.0]
    assert backoff_s(10_000, 2.0, 60.0) == 60.0


def test_the_audit_trail_names_where_not_the_path_or_query() -> None:
    # WHEN / THEN
    assert where("https://hooks.example.com:8443/in/abc?token=s3cret") == "https://hooks.example.com:8443"

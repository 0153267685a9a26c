"""The outbound-address policy: host literals read as a socket reads them, every range that is not
a public address refused (IPv4 embedded in IPv6 included), names resolved through a stub resolver
and refused when any answer is private, plain http to loopback only, loopback only when allowed."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_memory.tenancy.rules.outbound import (
    OutboundGuard,
    OutboundPolicy,
    OutboundRefusedError,
    literal_address,
)

PUBLIC = "93.184.215.14"


def resolver(answers: dict[str, Sequence[str]]) -> OutboundGuard:
    """A guard whose DNS is ``answers`` (a name it does not hold does not resolve)."""

    def resolve(host: str, port: int) -> Sequence[str]:
        if host not in answers:
            raise OSError(f"no such name {host}")
        return answers[host]

    return OutboundGuard(OutboundPolicy(), resolve)


@pytest.mark.parametrize(
    ("host", "address"),
    [
        ("10.1", "10.0.0.1"),
        ("127.1", "127.0.0.1"),
        ("2130706433", "127.0.0.1"),
        ("0x7f000001", "127.0.0.1"),
        ("0xa9fea9fe", "169.254.169.254"),
        ("0177.0.0.1", "127.0.0.1"),
        ("0x7f.1", "127.0.0.1"),
        ("169.254.43518", "169.254.169.254"),
        ("10.0.0.1.", "10.0.0.1"),
        ("LOCALHOST.", "127.0.0.1"),
        ("api.localhost", "127.0.0.1"),
        ("[::1]", "::1"),
        ("fe80::1%eth0", "fe80::1"),
        ("::ffff:169.254.169.254", "::ffff:a9fe:a9fe"),
    ],
)
def test_a_host_literal_is_read_as_a_socket_reads_it(host: str, address: str) -> None:
    # WHEN / THEN
    assert literal_address(host) == ipaddress.ip_address(address)


@pytest.mark.parametrize(
    "host", ["example.com", "10.0.0.1.example.com", "08.1", "1.2.3.4.5", "0x1g", "256.1.1.1"]
)
def test_a_name_is_no_literal(host: str) -> None:
    # WHEN / THEN
    assert literal_address(host) is None


@given(st.integers(0, 2**32 - 1))
def test_every_form_of_an_ipv4_literal_reads_as_the_same_address(value: int) -> None:
    """Decimal, hex, dotted octal and the 2- and 3-part short forms of one address all read as it."""
    a, b, c, d = ipaddress.IPv4Address(value).packed
    forms = [
        str(value),
        hex(value),
        f"{a}.{b}.{c}.{d}",
        f"0{a:o}.0{b:o}.0{c:o}.0{d:o}",
        f"{a}.{(b << 16) | (c << 8) | d}",
        f"{a}.{b}.{(c << 8) | d}",
        f"{a}.{b}.{c}.{d}.",
    ]
    assert {literal_address(f) for f in forms} == {ipaddress.IPv4Address(value)}


@pytest.mark.parametrize(
    "address",
    [
        "10.0.0.1", "172.16.5.4", "192.168.1.1", "127.0.0.1", "169.254.169.254", "100.64.0.1",
        "0.0.0.0", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.2.1",
        "198.18.0.1", "::1", "::", "fe80::1", "fc00::1", "fd12:3456::1", "ff02::1",
        "::ffff:127.0.0.1", "::ffff:10.0.0.1", "2002:a9fe:a9fe::1", "2002:7f00:1::",
        "64:ff9b::a9fe:a9fe", "64:ff9b::7f00:1", "2001:db8::1",
    ],
)  # fmt: skip
def test_every_address_that_is_not_public_is_refused(address: str) -> None:
    # WHEN / THEN
    assert OutboundPolicy().refusal(ipaddress.ip_address(address)) is not None


@pytest.mark.parametrize(
    "address", [PUBLIC, "8.8.8.8", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808"]
)
def test_a_public_address_is_allowed(address: str) -> None:
    # WHEN / THEN
    assert OutboundPolicy().refusal(ipaddress.ip_address(address)) is None


def test_loopback_is_allowed_only_where_the_policy_allows_it_and_never_a_private_address() -> None:
    # GIVEN
    local = OutboundPolicy(allow_loopback=True)
    # WHEN / THEN
    assert local.refusal(ipaddress.ip_address("127.0.0.1")) is None
    assert local.refusal(ipaddress.ip_address("::1")) is None
    assert local.refusal(ipaddress.ip_address("10.0.0.1")) is not None
    assert OutboundPolicy().refusal(ipaddress.ip_address("127.0.0.1")) is not None


@pytest.mark.parametrize(
    ("url", "answers"),
    [
        ("https://hooks.example.com/in", ["10.0.0.7"]),
        ("https://hooks.example.com/in", [PUBLIC, "169.254.169.254"]),  # one private answer is enough
        ("https://hooks.example.com/in", ["::ffff:192.168.0.1"]),
        ("https://unknown.example.com/in", []),
        ("https://2130706433/in", []),
        ("https://0xa9fea9fe/latest", []),
        ("https://localhost./in", []),
        ("http://hooks.example.com/in", [PUBLIC]),  # plain http to a public host
        ("ftp://hooks.example.com/in", [PUBLIC]),
    ],
)
def test_a_url_whose_host_is_or_resolves_to_a_refused_address_is_refused(
    url: str, answers: list[str]
) -> None:
    # GIVEN
    guard = resolver({"hooks.example.com": answers} if answers else {})
    # WHEN / THEN
    with pytest.raises(OutboundRefusedError):
        guard.target(url)


def test_a_url_to_a_public_name_is_pinned_to_the_address_it_resolved_to() -> None:
    # GIVEN
    guard = resolver({"hooks.example.com": [PUBLIC, "2606:4700:4700::1111"]})
    # WHEN
    target = guard.target("https://Hooks.Example.com.:8443/in?x=1")
    # THEN
    assert (target.scheme, target.host, target.port) == ("https", "hooks.example.com", 8443)
    assert target.address == ipaddress.ip_address(PUBLIC)


def test_plain_http_goes_to_loopback_only_and_only_where_allowed() -> None:
    # GIVEN
    local = OutboundGuard(OutboundPolicy(allow_loopback=True), lambda host, port: ["127.0.0.1"])
    # WHEN
    target = local.target("http://localhost:11434/v1")
    # THEN
    assert target.address == ipaddress.ip_address("127.0.0.1")
    with pytest.raises(OutboundRefusedError):
        resolver({}).target("http://localhost:11434/v1")

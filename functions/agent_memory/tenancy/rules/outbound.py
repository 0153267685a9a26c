"""Where this service may send a request of its own: the one outbound-address policy.

Tenants name URLs this service then calls: a webhook receiver, an OpenAI-compatible model
endpoint (sent the tenant's provider key). Left unchecked, such a URL reaches what only this
service can reach: the instance metadata service (169.254.169.254), the Lambda runtime API on
127.0.0.1:9001, a database on a private address. So every call out goes through one policy:

1. **The host becomes an address as a socket would make it.** An address literal is read the
   way the C resolver reads it (`literal_address`): ``10.1``, ``127.1``, ``2130706433``,
   ``0x7f000001``, ``0177.0.0.1``, trailing dots, an IPv6 zone id; ``localhost`` and
   ``*.localhost`` are this machine. Any other name is resolved (`Resolver`, injected).
2. **Every address it resolves to is checked** (`OutboundPolicy.refusal`): private,
   loopback, link-local, unique-local, shared (CGNAT) and reserved ranges, multicast and the
   unspecified address are refused, and so are IPv6 addresses that embed an IPv4 one
   (IPv4-mapped ``::ffff:0:0/96``, 6to4 ``2002::/16``, NAT64 ``64:ff9b::/96``) of those. One
   refused address refuses the name: an attacker's DNS may answer a public and a private one.
3. **The connection is pinned** to the address checked (`OutboundGuard.target`): the caller
   connects to that IP and keeps the name for the ``Host`` header and TLS (SNI and the
   certificate), so a DNS answer that changes between the check and the connection (rebinding)
   cannot move it.

Loopback is allowed only where the operator says so (``AGENT_MEMORY_OUTBOUND_ALLOW_LOOPBACK``,
for receivers and model servers on the same machine as the local runtime), and plain ``http``
only to loopback. Pure: resolving is the injected `Resolver`'s (`adapters.dns_resolver`).
"""

from __future__ import annotations

import ipaddress
import urllib.parse
from collections.abc import Callable, Sequence
from dataclasses import dataclass

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
#: ``(host, port) -> the addresses it resolves to`` (as strings); raises OSError when it does not.
Resolver = Callable[[str, int], Sequence[str]]

_LOOPBACK_V4 = ipaddress.IPv4Address("127.0.0.1")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
#: Each part of a dotted IPv4 literal holds this many bits; the last part fills what is left.
_PART_BITS = {1: (32,), 2: (8, 24), 3: (8, 8, 16), 4: (8, 8, 8, 8)}


class OutboundRefusedError(ValueError):
    """A URL this service will not call; the message names the host, never a path or query."""


def _number(part: str) -> int | None:
    """One part of an IPv4 literal as `inet_aton` reads it: ``0x`` hex, ``0`` octal, decimal."""
    lower = part.lower()
    try:
        if lower.startswith("0x"):
            return int(lower[2:], 16) if lower[2:] else 0
        if len(lower) > 1 and lower.startswith("0"):
            return int(lower[1:], 8)
        return int(lower, 10) if lower.isdigit() else None
    except ValueError:
        return None


def _ipv4_literal(host: str) -> ipaddress.IPv4Address | None:
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(parts) or not all(p.isascii() and p.isalnum() for p in parts):
        return None
    value = 0
    for part, bits in zip(parts, _PART_BITS[len(parts)], strict=True):
        number = _number(part)
        if number is None or number >= 1 << bits:
            return None
        value = (value << bits) | number
    return ipaddress.IPv4Address(value)


def normalised_host(host: str) -> str:
    """A host as names compare: lower case, without brackets, trailing dots or an IPv6 zone id."""
    host = host.strip().lower().removeprefix("[").removesuffix("]")
    if ":" in host:
        return host.split("%", 1)[0]
    return host.rstrip(".")


def literal_address(host: str) -> IPAddress | None:
    """The address ``host`` stands for without asking DNS: an address literal in any form a
    socket accepts, or this machine for ``localhost``; None for a name to resolve."""
    host = normalised_host(host)
    if host == "localhost" or host.endswith(".localhost"):
        return _LOOPBACK_V4
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host)
        except ValueError:
            return None
    return _ipv4_literal(host)


def _embedded_ipv4(address: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64), if any."""
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address in _NAT64:
        return ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    return None


@dataclass(frozen=True, slots=True)
class OutboundPolicy:
    """Which addresses may be called: public ones, and loopback where ``allow_loopback``."""

    allow_loopback: bool = False

    def refusal(self, address: IPAddress) -> str | None:
        """Why ``address`` may not be called, or None when it may."""
        if isinstance(address, ipaddress.IPv6Address):
            embedded = _embedded_ipv4(address)
            if embedded is not None:
                return self.refusal(embedded)
        if address.is_loopback:
            return None if self.allow_loopback else "a loopback address"
        if address.is_unspecified or address.is_multicast or address.is_reserved:
            return "an unspecified, multicast or reserved address"
        if address.is_link_local:
            return "a link-local address"
        if not address.is_global or address.is_private:
            return "a private or shared address"
        return None

    def check(self, host: str, address: IPAddress) -> None:
        reason = self.refusal(address)
        if reason is not None:
            name = normalised_host(host)
            raise OutboundRefusedError(f"{name} is {reason}: only public hosts may be called")

    def check_literal(self, host: str) -> IPAddress | None:
        """The address of a literal ``host`` (refused when the policy refuses it); None for a name."""
        address = literal_address(host)
        if address is not None:
            self.check(host, address)
        return address


@dataclass(frozen=True, slots=True)
class Target:
    """Where one request goes: the URL's scheme, host (for ``Host`` and TLS) and port, and the
    address checked, which the connection must use."""

    scheme: str
    host: str
    port: int
    address: IPAddress


class OutboundGuard:
    """The policy applied to a URL: its host resolved (``resolver``), every address checked."""

    def __init__(self, policy: OutboundPolicy, resolver: Resolver) -> None:
        self.policy = policy
        self._resolver = resolver

    def address(self, host: str, port: int) -> IPAddress:
        """The checked address to connect to for ``host``; `OutboundRefusedError` when there is none."""
        literal = self.policy.check_literal(host)
        if literal is not None:
            return literal
        name = normalised_host(host)
        try:
            answers = [ipaddress.ip_address(a.split("%", 1)[0]) for a in self._resolver(name, port)]
        except (OSError, ValueError, UnicodeError):
            raise OutboundRefusedError(f"{name} does not resolve") from None
        if not answers:
            raise OutboundRefusedError(f"{name} does not resolve")
        for address in answers:
            self.policy.check(name, address)
        return answers[0]

    def target(self, url: str) -> Target:
        """Where a request to ``url`` may go: https to a public host, plain http to loopback only
        (where loopback is allowed); `OutboundRefusedError` otherwise."""
        parts = urllib.parse.urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname:
            raise OutboundRefusedError("only http(s) URLs with a host may be called")
        try:
            port = parts.port or (443 if scheme == "https" else 80)
        except ValueError:
            raise OutboundRefusedError("the URL has an invalid port") from None
        address = self.address(parts.hostname, port)
        if scheme == "http" and not address.is_loopback:
            raise OutboundRefusedError("plain http is allowed to this machine only")
        return Target(scheme, parts.hostname.rstrip("."), port, address)


__all__ = [
    "IPAddress",
    "OutboundGuard",
    "OutboundPolicy",
    "OutboundRefusedError",
    "Resolver",
    "Target",
    "literal_address",
    "normalised_host",
]

"""`agent-memory keys ...`: create, list, enroll and revoke API keys.

On the local auth.db, or on a deployed tenants table (``--table``, else
AGENT_MEMORY_TENANTS_TABLE); ``enroll`` puts tenants in their plan's API Gateway usage plan
(``--usage-plans``). A key is printed once, by ``create``, and never again. `local.cli` wires the
parser in; the development key ``serve`` prints stays there.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING, Any

from agent_memory.tenancy.rules.keys import NewKey

if TYPE_CHECKING:
    from agent_memory.ports import KeyStore


def _keys(args: argparse.Namespace) -> KeyStore:
    """The deployed tenants table (``--table``, else AGENT_MEMORY_TENANTS_TABLE), or the local auth.db."""
    from agent_memory import container
    from agent_memory.settings import get_settings

    return container.keys_in(getattr(args, "table", None) or get_settings().tenants_table)


def _keys_failed(exc: Exception) -> int:
    print(f"error: {exc}", file=sys.stderr)
    return 1


def cmd_keys_create(args: argparse.Namespace) -> int:
    from agent_memory.errors import AgentMemoryError
    from agent_memory.model.caller import DEFAULT_SCOPES

    try:
        key_id, key = _keys(args).create(
            NewKey(
                args.tenant,
                args.plan,
                admin=args.admin,
                agents=frozenset(args.agent or ()),
                scopes=frozenset(args.scope) if args.scope else DEFAULT_SCOPES,
            )
        )
        enrolled = _enroll(args, args.tenant, args.plan)
    except AgentMemoryError as exc:
        return _keys_failed(exc)
    print(json.dumps({"key_id": key_id, "tenant_id": args.tenant, "plan": args.plan, "api_key": key}))
    print("store the api_key now: it is not kept and cannot be shown again", file=sys.stderr)
    if enrolled:
        print(f"tenant {args.tenant} is in usage plan {enrolled}-{args.plan}", file=sys.stderr)
    return 0


def _usage_prefix(args: argparse.Namespace) -> str | None:
    from agent_memory.settings import get_settings

    return getattr(args, "usage_plans", None) or get_settings().usage_plans


def _enroll(args: argparse.Namespace, tenant: str, plan: str) -> str | None:
    """Put the tenant in its plan's API Gateway usage plan, when the stage has them."""
    prefix = _usage_prefix(args)
    if not prefix:
        return None
    from agent_memory import container

    container.usage_plans(prefix).enroll(tenant, plan)
    return prefix


def cmd_keys_enroll(args: argparse.Namespace) -> int:
    """Enroll every tenant of the table (or one) in its newest live key's plan's usage plan."""
    from agent_memory import container
    from agent_memory.errors import AgentMemoryError

    if not _usage_prefix(args):
        print("error: name the stage's usage plans: --usage-plans agent-memory-<stage>", file=sys.stderr)
        return 2
    try:
        store = _keys(args)
        plans = container.key_plans(store)
        tenants = sorted({k.tenant_id for k in store.list() if k.revoked_at is None})
        for tenant in [args.tenant] if args.tenant else tenants:
            plan = plans.plan_of(tenant)
            if plan is None:
                return _keys_failed(ValueError(f"tenant {tenant!r} has no live key"))
            _enroll(args, tenant, plan)
            print(json.dumps({"tenant_id": tenant, "plan": plan}))
    except AgentMemoryError as exc:
        return _keys_failed(exc)
    return 0


def cmd_keys_list(args: argparse.Namespace) -> int:
    from agent_memory.errors import AgentMemoryError

    try:
        infos = _keys(args).list()
    except AgentMemoryError as exc:
        return _keys_failed(exc)
    for info in infos:
        print(json.dumps({name: getattr(info, name) for name in info.__slots__}))
    return 0


def cmd_keys_revoke(args: argparse.Namespace) -> int:
    from agent_memory.errors import AgentMemoryError

    try:
        revoked = _keys(args).revoke(args.key_id)
    except AgentMemoryError as exc:
        return _keys_failed(exc)
    if not revoked:
        print(f"no active key {args.key_id}", file=sys.stderr)
        return 1
    print(f"revoked {args.key_id}")
    return 0


def add_keys_parser(sub: Any, common: argparse.ArgumentParser) -> None:
    keys = sub.add_parser("keys", help="manage API keys").add_subparsers(dest="keys_command", required=True)
    table = argparse.ArgumentParser(add_help=False)
    table.add_argument(
        "--table",
        help="the deployed DynamoDB tenants table (default: AGENT_MEMORY_TENANTS_TABLE, else local auth.db)",
    )
    table.add_argument(
        "--usage-plans",
        metavar="PREFIX",
        help="the stage's usage plans (stack output UsagePlans, e.g. agent-memory-dev; default "
        "AGENT_MEMORY_USAGE_PLANS): the tenant is enrolled in its plan's",
    )
    create = keys.add_parser("create", help="create a key and print it once", parents=[common, table])
    create.add_argument("--tenant", required=True)
    create.add_argument("--plan", required=True, choices=["free", "starter", "pro", "unlimited"])
    create.add_argument("--admin", action="store_true", help="allow /v1/admin/* routes")
    create.add_argument("--agent", action="append", help="restrict the key to this agent (repeatable)")
    create.add_argument(
        "--scope",
        action="append",
        choices=["read", "write", "forget", "knowledge"],
        help="grant only this scope (repeatable; default read, write and forget): --scope read for a "
        "console operator who only looks; --scope knowledge --scope read to publish shared documents",
    )
    create.set_defaults(func=cmd_keys_create)
    keys.add_parser(
        "list", help="list keys (never the keys themselves)", parents=[common, table]
    ).set_defaults(func=cmd_keys_list)
    enroll = keys.add_parser(
        "enroll", help="put tenants in their plan's API Gateway usage plan", parents=[common, table]
    )
    enroll.add_argument("--tenant", help="only this tenant (default: every tenant with a live key)")
    enroll.set_defaults(func=cmd_keys_enroll)
    revoke = keys.add_parser("revoke", help="revoke a key by its id", parents=[common, table])
    revoke.add_argument("key_id")
    revoke.set_defaults(func=cmd_keys_revoke)

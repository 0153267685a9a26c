"""How the serverless store serves the port: each `MemoryStore` method it does not write out
itself is made from the method's declaration, and runs by the effect the port marks it with
(`agent_memory.ports.effects`) on the copy of the tenant its arguments name.

The copies are left out here (test_s3_sqlite_store.py and the store contract run them on moto):
the store's read, write and count steps are replaced by ones that record what they were asked
and run the call on a recording local store."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import boto3
import pytest

from agent_memory.adapters.s3_sqlite_store import S3SqliteStore
from agent_memory.adapters.s3_tenant_files import S3TenantFiles
from agent_memory.ports import MemoryStore
from agent_memory.ports.effects import effect_of

PORT_METHODS = sorted(
    name
    for part in MemoryStore.__mro__
    for name, member in vars(part).items()
    if inspect.isfunction(member) and not name.startswith("_")
)


class _Local:
    """A tenant's local store that records each call it gets."""

    def __init__(self, calls: list[tuple[str, tuple[Any, ...]]]) -> None:
        self._calls = calls

    def __getattr__(self, name: str) -> Callable[..., None]:
        return lambda *args, **kwargs: self._calls.append((name, args))


@pytest.fixture
def steps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> tuple[S3SqliteStore, list[Any], list[Any]]:
    """The store, what its steps were asked (effect, tenant), and the calls the local store got."""
    asked: list[tuple[str, str]] = []
    calls: list[tuple[str, tuple[Any, ...]]] = []
    for effect in ("read", "write", "count"):

        def step(self: S3SqliteStore, tenant: str, op: Callable[[Any], Any], effect: str = effect) -> Any:
            asked.append((effect, tenant))
            return op(_Local(calls))

        monkeypatch.setattr(S3SqliteStore, f"_{effect}", step)
    files = S3TenantFiles("stores", client=boto3.client("s3", region_name="us-east-1"))
    return S3SqliteStore(files, tmp_path, 8, "m"), asked, calls


def _arguments(name: str, batch_tenants: tuple[str, ...]) -> list[Any]:
    """Arguments for the port's ``name``: tenant ``t1``, by id or on the query, document or record
    it takes first; a batch of items of ``batch_tenants``; a placeholder for anything else."""
    parameters = list(inspect.signature(getattr(MemoryStore, name)).parameters.values())[1:]
    if any(p.name == "tenant_id" for p in parameters):
        return ["t1" if p.name == "tenant_id" else object() for p in parameters]
    first, *rest = parameters
    if str(first.annotation).startswith("Sequence["):
        return [
            [SimpleNamespace(tenant_id=t, n=i) for i, t in enumerate(batch_tenants)],
            *[object() for _ in rest],
        ]
    return [SimpleNamespace(tenant_id="t1"), *[object() for _ in rest]]


def test_the_store_serves_every_method_of_the_port_and_nothing_else() -> None:
    # WHEN / THEN
    assert sorted(n for n in vars(S3SqliteStore) if not n.startswith("_") and n != "close") == PORT_METHODS


@pytest.mark.parametrize("name", [n for n in PORT_METHODS if n != "agents_with_records"])
def test_each_method_runs_by_its_mark_on_the_tenant_it_names(
    steps: tuple[S3SqliteStore, list[Any], list[Any]], name: str
) -> None:
    # GIVEN
    store, asked, calls = steps
    args = _arguments(name, ("t1", "t2", "t1"))
    effect = effect_of(getattr(MemoryStore, name))

    # WHEN
    getattr(store, name)(*args)

    # THEN a batch is one call per tenant, of that tenant's items in their order
    if isinstance(args[0], list):
        assert asked == [(effect, "t1"), (effect, "t2")]
        assert [[item.n for item in call[1][0]] for call in calls] == [[0, 2], [1]]
    # AND anything else is one call on the tenant it names, with the arguments as given
    else:
        assert asked == [(effect, "t1")]
        assert calls == [(name, tuple(args))]


def test_the_port_marks_the_methods_that_change_the_store_or_count() -> None:
    # WHEN
    effects = {name: effect_of(getattr(MemoryStore, name)) for name in PORT_METHODS}

    # THEN the three best-effort counts, and every method that changes what is stored
    assert sorted(n for n, e in effects.items() if e == "count") == [
        "record_access",
        "record_document_hits",
        "record_search",
    ]
    assert sorted(n for n, e in effects.items() if e == "write") == [
        "add_alias",
        "append_audit",
        "delete_document",
        "delete_older_than",
        "delete_records",
        "drop_space",
        "mark_stale",
        "purge",
        "put",
        "put_document",
        "put_if",
        "put_space_vectors",
        "set_experience",
        "set_validity",
        "soft_delete",
    ]


def test_a_count_keeps_the_ids_it_was_given_though_the_caller_changes_its_list(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # GIVEN a count step that keeps the call for later, as the store keeps counts for the next write
    kept: list[Callable[[Any], Any]] = []
    monkeypatch.setattr(S3SqliteStore, "_count", lambda self, tenant, op: kept.append(op))
    store = S3SqliteStore(
        S3TenantFiles("stores", client=boto3.client("s3", region_name="us-east-1")), tmp_path, 8, "m"
    )
    ids = ["mem_a", "mem_b"]

    # WHEN the caller reuses its list after the count
    store.record_access("t1", "a1", ids, "now")
    ids.append("mem_c")

    # THEN the count, run later, has the ids as they were
    calls: list[tuple[str, tuple[Any, ...]]] = []
    kept[0](_Local(calls))
    assert calls == [("record_access", ("t1", "a1", ["mem_a", "mem_b"], "now"))]

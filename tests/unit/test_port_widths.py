"""No service takes a port wider than it needs: every Protocol a service's constructor takes has at
most `MAX_METHODS` methods, inherited parts included.

The store is a record of one-method parts (`agent_memory.ports.record_store` and its neighbours),
and each use case takes a view that names the parts it calls (`agent_memory.ports.memory_store`);
this keeps a service from taking the whole store (42 methods) or a view of it grown wide again.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import typing
from collections.abc import Iterable, Iterator
from types import ModuleType
from typing import Protocol, get_type_hints

from tests.unit.test_layout import CAPABILITIES

from agent_memory.ports import Clock, MemoryStore, RecordStore, WritableMemory

#: The most methods a port taken by a service may have.
MAX_METHODS = 12


def methods(port: type) -> set[str]:
    """The public methods (and properties) of a Protocol, its Protocol bases' included."""
    names: set[str] = set()
    for base in port.__mro__:
        if base in (object, Protocol, typing.Generic) or not getattr(base, "_is_protocol", False):
            continue
        names |= {
            n
            for n, v in vars(base).items()
            if not n.startswith("_") and (callable(v) or isinstance(v, property))
        }
    return names


def ports_taken(modules: Iterable[ModuleType]) -> Iterator[tuple[str, str, type]]:
    """Each Protocol a class of ``modules`` takes in its constructor (also as ``X | None``): the
    class as ``module.Class``, the parameter, the Protocol. A hint that does not resolve raises,
    so no constructor escapes the count."""
    for module in modules:
        for cls in vars(module).values():
            if not inspect.isclass(cls) or cls.__module__ != module.__name__:
                continue
            for param, hint in get_type_hints(cls.__init__).items():
                for t in (hint, *typing.get_args(hint)):
                    if inspect.isclass(t) and getattr(t, "_is_protocol", False):
                        yield f"{module.__name__.rsplit('.', 1)[-1]}.{cls.__name__}", param, t


def too_wide(modules: Iterable[ModuleType]) -> list[str]:
    return sorted(
        f"{where}({param}: {port.__name__}) takes {n} methods"
        for where, param, port in ports_taken(modules)
        if (n := len(methods(port))) > MAX_METHODS
    )


#: Every use case: each capability's modules outside its ``rules/``, imported when the file is
#: collected (importing the observability module opens the tracer's socket, which the tests
#: themselves may not).
SERVICES = [
    importlib.import_module(f"agent_memory.{package}.{m.name}")
    for package in CAPABILITIES
    for m in pkgutil.iter_modules(importlib.import_module(f"agent_memory.{package}").__path__)
    if not m.ispkg
]


def test_no_service_takes_a_port_of_more_than_12_methods() -> None:
    # WHEN
    wide = too_wide(SERVICES)

    # THEN
    assert wide == []


def test_the_services_are_found_with_the_store_views_they_take() -> None:
    # WHEN
    taken = {(where, port.__name__) for where, _, port in ports_taken(SERVICES)}

    # THEN the scan reaches the constructors it guards (an empty scan would pass vacuously)
    assert len(taken) > 100
    assert ("writer.WriterService", "WritableMemory") in taken
    assert ("forget.ForgetService", "ForgettableMemory") in taken


def test_a_class_that_takes_the_whole_store_is_named() -> None:
    # GIVEN a module whose class takes the whole store, and another that takes a narrow port
    module = ModuleType("agent_memory.writing.wide")

    class Wide:
        def __init__(self, store: MemoryStore, clock: Clock | None = None) -> None: ...

    Wide.__module__ = module.__name__
    module.Wide = Wide  # type: ignore[attr-defined]

    # WHEN
    wide = too_wide([module])

    # THEN only the store is named, counted with every part it inherits
    assert wide == [f"wide.Wide(store: MemoryStore) takes {len(methods(MemoryStore))} methods"]
    assert len(methods(MemoryStore)) > 40


def test_the_parts_are_counted_through_inheritance() -> None:
    # WHEN / THEN the writer's view is its parts' methods, no more
    assert methods(WritableMemory) == {
        "add_alias",
        "audit_events",
        "conversation_tail",
        "get",
        "mark_stale",
        "nearest",
        "put_if",
        "search",
        "set_validity",
    }
    assert "put" in methods(RecordStore)

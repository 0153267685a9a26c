"""The layout rules of docs/architecture.md, checked on the source rather than trusted.

Each rule is one a reviewer found broken once: modules too long to read, file names that repeat
where the package does not say the rest, use cases that imported the HTTP contract or an SDK, pure
rules that reached for a port, protocols scattered away from the ports package.

The core is one package per capability: its use cases are its modules, its pure rules are in its
``rules/``; ``model/`` holds the types they all share.
"""

from __future__ import annotations

import ast
from collections import Counter
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "functions" / "agent_memory"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)

#: What the inner layers must never import: the contract, the outside, and what builds it.
SDKS = (
    "boto3",
    "botocore",
    "opensearchpy",
    "requests_aws4auth",
    "sentence_transformers",
    "onnxruntime",
    "lancedb",
    "pyarrow",
)
#: The capability packages of the core; with ``model`` they are the core.
CAPABILITIES = (
    "writing",
    "recall",
    "cascade",
    "supersession",
    "derived",
    "governance",
    "knowledge",
    "experience",
    "tenancy",
    "feed",
)
CORE = ("model", *CAPABILITIES)
#: Stands for every use-case module of every capability (``agent_memory.<capability>.<module>``
#: outside ``rules``).
USE_CASES = "a capability's use cases"
PURE = (
    "agent_memory.contract",
    "agent_memory.ports",
    USE_CASES,
    "agent_memory.adapters",
    "agent_memory.handlers",
    "agent_memory.container",
    *SDKS,
)
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "model": PURE,
    "rules": PURE,
    "use cases": (
        "agent_memory.contract",
        "agent_memory.adapters",
        "agent_memory.handlers",
        "agent_memory.container",
        *SDKS,
    ),
    "contract": (USE_CASES, "agent_memory.adapters", "agent_memory.handlers", *SDKS),
}
#: Packages that are the client library, with seams of their own (a transport, credentials).
CLIENT_SIDE = ("client", "tools")


def _top(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


def _layer(path: Path) -> str:
    """The top-level package, except in the core: ``model``, ``rules`` (a capability's ``rules/``)
    or ``use cases`` (a capability's other modules)."""
    top, parts = _top(path), path.relative_to(PACKAGE).parts
    if top in CAPABILITIES:
        return "rules" if len(parts) > 2 and parts[1] == "rules" else "use cases"
    return top


def _is_use_case(name: str) -> bool:
    parts = name.split(".")
    return len(parts) > 2 and parts[0] == "agent_memory" and parts[1] in CAPABILITIES and parts[2] != "rules"


def _breaks(name: str, bad: str) -> bool:
    return _is_use_case(name) if bad == USE_CASES else name == bad or name.startswith(bad + ".")


def _imports(path: Path) -> set[str]:
    """Modules a file imports at run time (imports under ``if TYPE_CHECKING:`` are left out)."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(node)
        for block in ast.walk(tree)
        if isinstance(block, ast.If) and "TYPE_CHECKING" in ast.unparse(block.test)
        for node in ast.walk(block)
    }
    names: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            names |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
            names |= {f"{node.module}.{a.name}" for a in node.names}
    return names


#: The most lines a module may have: one a reader holds in mind at once.
MAX_LINES = 600


def test_no_module_is_over_600_lines() -> None:
    # WHEN
    long = {
        str(p.relative_to(PACKAGE)): n for p in MODULES if (n := len(p.read_text().splitlines())) > MAX_LINES
    }

    # THEN
    assert long == {}


def test_module_file_names_repeat_only_where_the_package_says_the_rest() -> None:
    """Outside the core every name is unique; in the core a short name may repeat across
    capabilities (a ``folding.py`` in ``cascade/`` and in ``recall/rules/``, say), never within one."""
    # GIVEN
    modules = [p for p in MODULES if p.name != "__init__.py"]

    # WHEN
    outside = Counter(p.name for p in modules if _top(p) not in CORE)
    within = Counter((_top(p), p.name) for p in modules if _top(p) in CORE)

    # THEN
    assert [name for name, count in outside.items() if count > 1] == []
    assert [name for name, count in within.items() if count > 1] == []


def test_every_core_package_says_what_it_owns() -> None:
    # WHEN
    silent = [
        str(p.relative_to(PACKAGE))
        for p in MODULES
        if p.name == "__init__.py" and _top(p) in CORE and not ast.get_docstring(ast.parse(p.read_text()))
    ]

    # THEN
    assert silent == []


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_inner_layers_import_neither_the_contract_nor_the_outside(layer: str) -> None:
    # WHEN
    found = {
        f"{p.relative_to(PACKAGE)} imports {name}"
        for p in MODULES
        if _layer(p) == layer
        for name in _imports(p)
        if any(_breaks(name, bad) for bad in FORBIDDEN[layer])
    }

    # THEN
    assert sorted(found) == []


def test_only_adapters_import_an_sdk() -> None:
    # WHEN
    found = {
        f"{p.relative_to(PACKAGE)} imports {name}"
        for p in MODULES
        if _layer(p) not in ("adapters", *CLIENT_SIDE)
        for name in _imports(p)
        if name.split(".")[0] in SDKS
    }

    # THEN
    assert sorted(found) == []


def test_the_servers_protocols_are_in_ports() -> None:
    # WHEN
    found = {
        f"{p.relative_to(PACKAGE)}: {node.name}"
        for p in MODULES
        if _layer(p) not in ("ports", *CLIENT_SIDE)
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ClassDef) and any(ast.unparse(b).endswith("Protocol") for b in node.bases)
    }

    # THEN
    assert sorted(found) == []


def _class_names(stem: str) -> tuple[str, str]:
    """The names a use-case module's main class may have: its file name in CamelCase, with or
    without ``Service`` (``writer.py``: ``Writer`` or ``WriterService``)."""
    camel = "".join(word.capitalize() for word in stem.split("_"))
    return camel, camel + "Service"


def test_a_use_case_module_is_named_after_its_main_class() -> None:
    """A reader who knows the class finds the file, and the reverse. A use-case module with a
    public class has one named after the file; one of functions only (``cascade/folding.py``) has
    none to name. ``rules/`` and ``model/`` hold functions and the values they take, so no one
    class is theirs."""
    # GIVEN
    use_cases = [p for p in MODULES if p.name != "__init__.py" and _layer(p) == "use cases"]

    # WHEN
    unnamed = {}
    for path in use_cases:
        tree = ast.parse(path.read_text())
        public = [n.name for n in tree.body if isinstance(n, ast.ClassDef) and not n.name.startswith("_")]
        if public and not set(_class_names(path.stem)) & set(public):
            unnamed[str(path.relative_to(PACKAGE))] = public

    # THEN
    assert unnamed == {}


def test_the_local_runtime_builds_no_adapter_itself() -> None:
    """``local/`` takes every adapter from the container (`container.local_keys`, ``local_writes``,
    ...), so which adapter serves the local runtime is decided in one place; it may still name an
    adapter's type or constants, but never call one of its classes."""
    # GIVEN
    local = [p for p in MODULES if _top(p) == "local"]

    # WHEN
    built = set()
    for path in local:
        tree = ast.parse(path.read_text())
        classes = {
            alias.asname or alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("agent_memory.adapters")
            for alias in node.names
            if alias.name[:1].isupper() and not alias.name.isupper()
        }
        built |= {
            f"{path.relative_to(PACKAGE)}: {node.func.id}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in classes
        }

    # THEN
    assert sorted(built) == []


def test_the_wiring_modules_never_import_the_container_back() -> None:
    """The container imports the ``*_wiring`` modules; one importing it back (even for a type) is a
    cycle: it is handed the parts it needs instead."""
    # GIVEN
    wiring = [p for p in MODULES if p.parent == PACKAGE and p.stem.endswith("_wiring")]

    # WHEN
    back = sorted(
        str(p.relative_to(PACKAGE))
        for p in wiring
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.ImportFrom) and node.module == "agent_memory.container"
    )

    # THEN
    assert wiring and back == []

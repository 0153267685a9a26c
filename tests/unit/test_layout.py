"""The layout rules of docs/architecture.md, checked on the source rather than trusted.

Each rule is one a reviewer found broken once: modules too long to read, file names that repeat
across packages, use cases that imported the HTTP contract or an SDK, protocols scattered away
from the ports package.
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
FORBIDDEN: dict[str, tuple[str, ...]] = {
    "domain": (
        "agent_memory.contract",
        "agent_memory.ports",
        "agent_memory.services",
        "agent_memory.adapters",
        "agent_memory.handlers",
        "agent_memory.container",
        *SDKS,
    ),
    "services": (
        "agent_memory.contract",
        "agent_memory.adapters",
        "agent_memory.handlers",
        "agent_memory.container",
        *SDKS,
    ),
    "contract": ("agent_memory.services", "agent_memory.adapters", "agent_memory.handlers", *SDKS),
}
#: Packages that are the client library, with seams of their own (a transport, credentials).
CLIENT_SIDE = ("client", "tools")


def _layer(path: Path) -> str:
    return path.relative_to(PACKAGE).parts[0].removesuffix(".py")


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


def test_module_file_names_are_unique() -> None:
    # GIVEN
    names = Counter(p.name for p in MODULES if p.name != "__init__.py")

    # WHEN / THEN
    assert [name for name, count in names.items() if count > 1] == []


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_inner_layers_import_neither_the_contract_nor_the_outside(layer: str) -> None:
    # WHEN
    found = {
        f"{p.relative_to(PACKAGE)} imports {name}"
        for p in MODULES
        if _layer(p) == layer
        for name in _imports(p)
        if any(name == bad or name.startswith(bad + ".") for bad in FORBIDDEN[layer])
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

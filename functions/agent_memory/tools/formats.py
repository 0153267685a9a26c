"""Tool definitions in the shapes the LLM APIs take, from the argument models' JSON Schema.

Pydantic's schema is valid JSON Schema but not what every LLM API accepts: it puts enums behind
``$ref``/``$defs`` (several APIs reject references), spells optional fields as ``anyOf [X, null]``
and titles everything. `llm_schema` turns it into a self-contained, flat schema: references
inlined, an optional field is just not ``required``, string choices are one ``enum``, no titles.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

JsonObject = dict[str, Any]

_NULL = {"type": "null"}


def _resolve(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...] = ()) -> Any:
    """``node`` with every ``{"$ref": "#/$defs/X"}`` replaced by a copy of ``X`` (recursively)."""
    if isinstance(node, list):
        return [_resolve(v, defs, seen) for v in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        name = ref.removeprefix("#/$defs/")
        if name == ref or name not in defs:
            raise ValueError(f"cannot inline reference {ref!r}")
        if name in seen:
            raise ValueError(f"recursive model {name!r} cannot be inlined for an LLM tool")
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return {**_resolve(copy.deepcopy(defs[name]), defs, (*seen, name)), **_resolve(siblings, defs, seen)}
    return {k: _resolve(v, defs, seen) for k, v in node.items() if k != "$defs"}


def _string_choices(branch: Mapping[str, Any]) -> list[str] | None:
    if branch.get("type") != "string":
        return None
    if "const" in branch:
        return [branch["const"]]
    values = branch.get("enum")
    return list(values) if isinstance(values, list) else None


def _simplify(node: Any, in_properties: bool = False) -> Any:
    """Drop titles and nulls of optional fields; merge string ``const``/``enum`` alternatives."""
    if isinstance(node, list):
        return [_simplify(v) for v in node]
    if not isinstance(node, dict):
        return node
    if in_properties:  # keys are property names here, not keywords
        return {name: _simplify(schema) for name, schema in node.items()}
    out: JsonObject = {
        k: _simplify(v, in_properties=(k == "properties")) for k, v in node.items() if k != "title"
    }
    branches = out.get("anyOf")
    if isinstance(branches, list):
        kept = [b for b in branches if b != _NULL]
        if len(kept) < len(branches) and out.get("default", ...) is None:
            out.pop("default")  # "absent" already says null
        choices = [_string_choices(b) for b in kept]
        if kept and all(c is not None for c in choices):
            merged = [v for c in choices for v in c or ()]
            kept = [{"type": "string", "enum": list(dict.fromkeys(merged))}]
        if len(kept) == 1:
            out.pop("anyOf")
            out = {**kept[0], **out}  # the field's own keywords (description, default) win
        else:
            out["anyOf"] = kept
    return out


def llm_schema(model: type[BaseModel]) -> JsonObject:
    """The input schema of a tool: a JSON Schema object with no ``$ref`` and no ``$defs``."""
    raw = model.model_json_schema()
    schema = _simplify(_resolve(raw, raw.get("$defs", {})))
    schema.pop("description", None)  # the tool's description says it once
    schema.setdefault("properties", {})
    schema["type"] = "object"
    return schema


def tool_description(model: type[BaseModel]) -> str:
    return (model.__doc__ or model.__name__).strip()


def bedrock_tool(name: str, description: str, schema: JsonObject) -> JsonObject:
    """Amazon Bedrock Converse: an entry of ``toolConfig.tools``."""
    return {"toolSpec": {"name": name, "description": description, "inputSchema": {"json": schema}}}


def anthropic_tool(name: str, description: str, schema: JsonObject) -> JsonObject:
    """Anthropic Messages: an entry of ``tools``."""
    return {"name": name, "description": description, "input_schema": schema}


def openai_tool(name: str, description: str, schema: JsonObject) -> JsonObject:
    """OpenAI chat completions: an entry of ``tools``."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": schema}}

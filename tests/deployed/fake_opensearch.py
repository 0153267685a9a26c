"""An OpenSearch domain in memory, enough for the functions' paths to run end to end offline.

It keeps indices (their mappings as created), aliases and documents, and answers the requests
the adapter makes with the documented response shapes. Queries are not evaluated beyond their
``term``/``terms``/``range`` filters and the fields they require absent (tenant, agent, grain,
not forgotten, ...: every document that passes them is a hit, scored 1.0, in the order of the
body's ``sort`` on source fields). Scripts are not run, except those that change a record's
state (forget, stale mark, an experience's feedback, a supersession: `_record_script`), so a
path that forgets or counts sees its effect. What the deployed-configuration tests check is
that each function reaches the domain with the calls its role allows, not ranking (the contract
suite runs the store against a real cluster when ``OPENSEARCH_URL`` is set).
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import unquote


class FakeDomain:
    def __init__(self) -> None:
        self.indices: dict[str, dict[str, Any]] = {}  # name -> {"body": ..., "docs": {id: source}}
        self.aliases: dict[str, set[str]] = {}  # alias -> indices
        self.requests: list[tuple[str, str]] = []
        #: Each document's sequence number, moved by every write of it (optimistic concurrency).
        self.seq: dict[str, int] = {}

    # -- names ------------------------------------------------------------------------------------

    def _targets(self, expression: str) -> list[str]:
        names: list[str] = []
        for part in expression.split(","):
            if part in self.aliases:
                names += sorted(self.aliases[part])
            elif part in self.indices:
                names.append(part)
        return names

    def _docs(self, expression: str) -> dict[str, tuple[str, dict[str, Any]]]:
        return {
            doc_id: (index, source)
            for index in self._targets(expression)
            for doc_id, source in self.indices[index]["docs"].items()
        }

    def _write_index(self, expression: str) -> str:
        targets = self._targets(expression)
        assert targets, f"no index behind {expression!r}"
        return targets[0]

    # -- requests ---------------------------------------------------------------------------------

    def handle(self, method: str, url: str, params: dict[str, Any], body: bytes | None) -> tuple[int, Any]:
        path = unquote(url.split("?", maxsplit=1)[0])
        self.requests.append((method, path))
        text = body.decode("utf-8") if body else ""
        parts = [p for p in path.split("/") if p]
        if text.endswith("\n"):
            payload: Any = [json.loads(line) for line in text[:-1].split("\n")]
        else:
            payload = json.loads(text) if text else None

        if parts[:3] == ["_plugins", "_security", "api"]:
            return 200, {"status": "OK"}
        if parts and parts[0] == "_alias" and method in ("HEAD", "GET"):
            name = parts[1]
            if name not in self.aliases:
                return 404, {"error": "alias missing", "status": 404}
            return 200, {index: {"aliases": {name: {}}} for index in self.aliases[name]}
        if parts == ["_aliases"]:
            for action in payload["actions"]:
                ((kind, spec),) = action.items()
                if kind == "add":
                    self.aliases.setdefault(spec["alias"], set()).add(spec["index"])
                elif kind == "remove":
                    self.aliases.get(spec["alias"], set()).discard(spec["index"])
            return 200, {"acknowledged": True}
        if parts and parts[-1] in ("_bulk",):
            return 200, self._bulk(parts[0] if len(parts) > 1 else None, payload)
        if parts[-2:] == ["_search", "point_in_time"]:
            # a point in time names its index; searches in it read the live documents (no snapshot)
            if method == "DELETE":
                return 200, {"pits": [{"pit_id": p, "successful": True} for p in payload["pit_id"]]}
            return 200, {"pit_id": f"pit:{parts[0]}", "_shards": {"total": 1, "successful": 1, "failed": 0}}
        if parts and parts[-1] == "_msearch":
            pairs = zip(payload[::2], payload[1::2], strict=True)
            return 200, {"responses": [self._search(self._searched(h, b, parts), b) for h, b in pairs]}
        if len(parts) == 1 and method == "HEAD":
            return (200, {}) if self._targets(parts[0]) else (404, {})
        if len(parts) == 1 and method == "PUT":
            index = parts[0]
            self.indices[index] = {"body": payload or {}, "docs": {}}
            for alias in (payload or {}).get("aliases", {}):
                self.aliases.setdefault(alias, set()).add(index)
            return 200, {"acknowledged": True, "shards_acknowledged": True, "index": index}
        if len(parts) == 3 and parts[1] == "_alias" and method in ("PUT", "POST"):
            self.aliases.setdefault(parts[2], set()).add(parts[0])
            return 200, {"acknowledged": True}
        if len(parts) == 2 and parts[1] == "_mapping":
            targets = self._targets(parts[0])
            if not targets:
                return 404, {"error": {"type": "index_not_found_exception"}, "status": 404}
            return 200, {i: {"mappings": self.indices[i]["body"].get("mappings", {})} for i in targets}
        if len(parts) >= 2 and parts[1] == "_settings":
            return 200, {
                i: {"settings": {"index": {"creation_date": "1700000000000"}}}
                for i in self._targets(parts[0])
            }
        if len(parts) == 2 and parts[1] == "_count":
            return 200, {"count": len(self._hits(parts[0], (payload or {}).get("query", {})))}
        if len(parts) == 2 and parts[1] == "_search":
            return 200, self._search(parts[0], payload or {})
        if parts and parts[-1] == "_mget":
            default = parts[0] if len(parts) == 2 else None
            wanted = [(d.get("_index", default), d["_id"]) for d in payload.get("docs", [])] or [
                (default, i) for i in payload.get("ids", [])
            ]
            answers = []
            for index, doc_id in wanted:
                docs = self._docs(index)
                answers.append(
                    {
                        "_index": docs[doc_id][0],
                        "_id": doc_id,
                        "found": True,
                        "_source": docs[doc_id][1],
                        "_seq_no": self.seq.get(doc_id, 0),
                        "_primary_term": 1,
                    }
                    if doc_id in docs
                    else {"_index": index, "_id": doc_id, "found": False}
                )
            return 200, {"docs": answers}
        if len(parts) == 3 and parts[1] == "_update":
            docs = self._docs(parts[0])
            if parts[2] not in docs:
                return 404, {"error": {"type": "document_missing_exception"}, "status": 404}
            index, source = docs[parts[2]]
            self.seq[parts[2]] = self.seq.get(parts[2], 0) + 1
            source.update((payload or {}).get("doc", {}))
            script = (payload or {}).get("script")
            result = _record_script(source, script) if script is not None else "updated"
            return 200, {"_index": index, "_id": parts[2], "result": result}
        if len(parts) == 2 and parts[1] in ("_delete_by_query", "_update_by_query"):
            matched = [doc_id for doc_id, _ in self._hits(parts[0], (payload or {}).get("query", {}))]
            if parts[1] == "_delete_by_query":
                for doc_id in matched:
                    for index in self._targets(parts[0]):
                        self.indices[index]["docs"].pop(doc_id, None)
            key = "deleted" if parts[1] == "_delete_by_query" else "updated"
            return 200, {"total": len(matched), key: len(matched), "failures": [], "timed_out": False}
        raise AssertionError(f"the fake domain does not answer {method} {path}")

    @staticmethod
    def _searched(header: dict[str, Any], body: dict[str, Any], parts: list[str]) -> str:
        """The index a search of an ``_msearch`` reads: its point in time's, its header's, or the path's."""
        if "pit" in body:
            return str(body["pit"]["id"]).removeprefix("pit:")
        return str(header.get("index", parts[0]))

    def _bulk(self, default_index: str | None, lines: list[dict[str, Any]]) -> dict[str, Any]:
        items: list[dict[str, Any]] = []
        i = 0
        while i < len(lines):
            ((op, meta),) = lines[i].items()
            index = self._write_index(meta.get("_index", default_index))
            docs = self.indices[index]["docs"]
            if op == "delete":
                found = docs.pop(meta["_id"], None) is not None
                items.append({op: {"_index": index, "_id": meta["_id"], "status": 200 if found else 404}})
                i += 1
                continue
            source = lines[i + 1]
            if _conflicts(op, meta, docs, self.seq):
                error = {"type": "version_conflict_engine_exception", "reason": "version conflict"}
                items.append({op: {"_index": index, "_id": meta["_id"], "status": 409, "error": error}})
                i += 2
                continue
            self.seq[meta["_id"]] = self.seq.get(meta["_id"], 0) + 1
            if op in ("index", "create"):
                docs[meta["_id"]] = source
            elif op == "update":
                if meta["_id"] in docs and source.get("script") is not None:
                    result = _record_script(docs[meta["_id"]], source["script"])
                    items.append({op: {"_index": index, "_id": meta["_id"], "status": 200, "result": result}})
                    i += 2
                    continue
                if meta["_id"] in docs:
                    docs[meta["_id"]].update(source.get("doc", {}))
                elif source.get("upsert") is not None or source.get("doc_as_upsert"):
                    docs[meta["_id"]] = source.get("upsert") or source.get("doc", {})
            items.append({op: {"_index": index, "_id": meta["_id"], "status": 200, "result": "updated"}})
            i += 2
        return {
            "took": 1,
            "errors": any("error" in v for item in items for v in item.values()),
            "items": items,
        }

    def _hits(self, expression: str, query: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
        filters: list[tuple[str, set[Any]]] = []
        ranges: list[tuple[str, dict[str, Any]]] = []
        absent: list[str] = []
        _collect_terms(query, filters, ranges, absent)
        excluded = _excluded_terms(query)
        return [
            (doc_id, source)
            for doc_id, (_, source) in self._docs(expression).items()
            if all(_value_in(source.get(f), allowed) for f, allowed in filters)
            and all(_in_range(source.get(f), bounds) for f, bounds in ranges)
            and all(_field(source, f) is None for f in absent)
            and not any(_value_in(source.get(f), values) for f, values in excluded)
        ]

    def _search(self, expression: str, body: dict[str, Any]) -> dict[str, Any]:
        hits = _sorted(self._hits(expression, body.get("query", {})), body.get("sort", []))
        size = int(body.get("size", 10))
        return {
            "took": 1,
            "timed_out": False,
            "hits": {
                "total": {"value": len(hits), "relation": "eq"},
                "max_score": 1.0 if hits else None,
                "hits": [
                    {"_index": expression, "_id": doc_id, "_score": 1.0, "_source": source, "sort": [doc_id]}
                    for doc_id, source in hits[:size]
                ],
            },
            "aggregations": self._aggregated(expression, body.get("aggs", {}), [s for _, s in hits]),
        }

    def _aggregated(
        self, expression: str, aggs: dict[str, Any], sources: list[dict[str, Any]]
    ) -> dict[str, Any]:
        """`_aggregations`, and ``global`` (every document of the index, whatever the query) and
        ``filter`` (the documents a filter keeps) around the aggregations they hold."""
        out: dict[str, Any] = {}
        plain: dict[str, Any] = {}
        for name, spec in aggs.items():
            if "global" in spec or "filter" in spec:
                if "global" in spec:
                    inner = [source for _, source in self._hits(expression, {})]
                else:
                    kept = {id(source) for _, source in self._hits(expression, spec["filter"])}
                    inner = [source for source in sources if id(source) in kept]
                out[name] = {
                    "doc_count": len(inner),
                    **self._aggregated(expression, spec.get("aggs", {}), inner),
                }
            else:
                plain[name] = spec
        return {**out, **_aggregations(plain, sources)}


def _conflicts(op: str, meta: dict[str, Any], docs: dict[str, Any], seq: dict[str, int]) -> bool:
    """Whether a ``_bulk`` write is refused as OpenSearch refuses it (409): ``create`` of a
    document that exists, or a write naming an ``if_seq_no`` the document has moved past."""
    if op == "create":
        return meta["_id"] in docs
    if "if_seq_no" in meta:
        return meta["_id"] not in docs or seq.get(meta["_id"], 0) != meta["if_seq_no"]
    return False


def _sorted(hits: list[tuple[str, dict[str, Any]]], sort: Any) -> list[tuple[str, dict[str, Any]]]:
    """``hits`` in the order of the body's ``sort`` on source fields (missing values last);
    ``_score``, ``_doc`` and other meta fields keep the order they had."""
    for spec in reversed(sort if isinstance(sort, list) else [sort]):
        if isinstance(spec, str):
            field, order = spec, "asc"
        else:
            ((field, how),) = spec.items()
            order = how if isinstance(how, str) else how.get("order", "asc")
        if field.startswith("_"):
            continue
        present = [h for h in hits if h[1].get(field) is not None]
        present.sort(key=lambda h: h[1][field], reverse=order == "desc")
        hits = present + [h for h in hits if h[1].get(field) is None]
    return hits


def _record_script(source: dict[str, Any], script: dict[str, Any]) -> str:
    """What OpenSearch's run of a record script does to ``source`` (``updated`` or ``noop``): the
    forget, the stale mark, the feedback and the supersession scripts, as written in
    `opensearch_scripts`; any other script changes nothing here (counters) and answers
    ``updated``."""
    from agent_memory.adapters.opensearch.opensearch_scripts import (
        EXPERIENCE_SCRIPT,
        SOFT_DELETE_SCRIPT,
        STALE_SCRIPT,
        VALIDITY_SCRIPT,
    )
    from agent_memory.adapters.opensearch.opensearch_spaces import SET_SPACE_SCRIPT

    text, params = script.get("source"), script.get("params", {})
    if text == SET_SPACE_SCRIPT:  # a re-embedded vector, on a record still live and unchanged
        if (source.get("tenant_id"), source.get("updated_at")) != (params["tenant"], params["updated"]):
            return "noop"
        if source.get("deleted_at") is not None:
            return "noop"
        if not params["space"]:
            source["vector"] = params["v"]
        else:
            source.setdefault("spaces", {})[params["space"]] = params["v"]
        return "updated"
    if text not in (SOFT_DELETE_SCRIPT, STALE_SCRIPT, EXPERIENCE_SCRIPT, VALIDITY_SCRIPT):
        return "updated"
    if (source.get("tenant_id"), source.get("agent_id")) != (params["tenant_id"], params["agent_id"]):
        return "noop"
    at, deleted, expires = params["at"], source.get("deleted_at"), source.get("expires_at")
    if text == STALE_SCRIPT:
        if deleted is not None and deleted >= at:
            return "noop"
        source["deleted_at"] = at
        return "updated"
    if deleted is not None or (expires is not None and expires <= at):
        return "noop"
    if text == SOFT_DELETE_SCRIPT:
        source["deleted_at"] = source["updated_at"] = at
    elif text == VALIDITY_SCRIPT:
        for field in ("valid_from", "valid_to", "supersedes", "superseded_by"):
            source[field] = params[field]
        if source.get("updated_at") is None or source["updated_at"] < at:
            source["updated_at"] = at
    else:
        source["experience"] = params["experience"]
        if source.get("updated_at") is None or source["updated_at"] < at:
            source["updated_at"] = at
    return "updated"


def _field(source: dict[str, Any], path: str) -> Any:
    """A field of ``source`` by its dotted path (``spaces.<space>``), None when absent."""
    value: Any = source
    for part in path.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _value_in(value: Any, allowed: set[Any]) -> bool:
    values = value if isinstance(value, list) else [value]
    return any(v in allowed for v in values)


def _in_range(value: Any, bounds: dict[str, Any]) -> bool:
    checks = {
        "lt": lambda a, b: a < b,
        "lte": lambda a, b: a <= b,
        "gt": lambda a, b: a > b,
        "gte": lambda a, b: a >= b,
    }
    for op, bound in bounds.items():
        if op not in checks:
            continue
        if value is None or type(value) is not type(bound):
            return value is not None  # a bound of another form (a date math string) is not evaluated
        if not checks[op](value, bound):
            return False
    return True


def _aggregations(aggs: dict[str, Any], sources: list[dict[str, Any]]) -> dict[str, Any]:
    """``composite`` (terms sources, ``after``, ``size``), ``min`` and ``max``; others empty."""
    out: dict[str, Any] = {}
    for name, spec in aggs.items():
        if "composite" in spec:
            composite = spec["composite"]
            fields = [next(iter(s.values()))["terms"]["field"] for s in composite["sources"]]
            names = [next(iter(s)) for s in composite["sources"]]
            counts: dict[tuple[Any, ...], int] = {}
            for source in sources:
                key = tuple(source.get(f) for f in fields)
                counts[key] = counts.get(key, 0) + 1
            keys = sorted(counts)
            after = composite.get("after")
            if after:
                keys = [k for k in keys if k > tuple(after[n] for n in names)]
            page = keys[: composite.get("size", 10)]
            buckets = [{"key": dict(zip(names, k, strict=True)), "doc_count": counts[k]} for k in page]
            out[name] = {"buckets": buckets, **({"after_key": buckets[-1]["key"]} if buckets else {})}
        elif "min" in spec or "max" in spec:
            op = "min" if "min" in spec else "max"
            values = [s.get(spec[op]["field"]) for s in sources if s.get(spec[op]["field"]) is not None]
            out[name] = {"value": (min if op == "min" else max)(values) if values else None}
        elif "range" in spec:
            field = spec["range"]["field"]
            out[name] = {
                "buckets": [
                    {
                        **r,
                        "doc_count": sum(
                            1 for s in sources if s.get(field) is not None and r["from"] <= s[field] < r["to"]
                        ),
                    }
                    for r in spec["range"]["ranges"]
                ]
            }
        elif "top_hits" in spec:
            top = spec["top_hits"]
            ((field, how),) = top.get("sort", [{"_doc": {"order": "asc"}}])[0].items()
            ranked = sorted(
                (s for s in sources if s.get(field) is not None),
                key=lambda s: s[field],
                reverse=how.get("order") == "desc",
            )
            hits = [{"_source": s} for s in ranked[: top.get("size", 3)]]
            out[name] = {"hits": {"total": {"value": len(sources)}, "hits": hits}}
        elif "terms" in spec:
            field = spec["terms"]["field"]
            counted: dict[Any, int] = {}
            for source in sources:
                if source.get(field) is not None:
                    counted[source[field]] = counted.get(source[field], 0) + 1
            ordered = sorted(counted.items(), key=lambda kv: (-kv[1], kv[0]))[: spec["terms"].get("size", 10)]
            out[name] = {"buckets": [{"key": k, "doc_count": n} for k, n in ordered]}
        else:
            raise AssertionError(f"the fake domain does not aggregate {spec}")
    return out


def _excluded_terms(node: Any) -> list[tuple[str, set[Any]]]:
    """The ``term`` / ``terms`` conditions of a ``must_not`` that is not about absent fields (a
    put's removal of a document's passages but the ones just written: ``must_not`` ``terms id``)."""
    out: list[tuple[str, set[Any]]] = []
    if isinstance(node, list):
        for item in node:
            out += _excluded_terms(item)
    elif isinstance(node, dict):
        for key, value in node.items():
            clauses = value if isinstance(value, list) else [value]
            if key == "must_not" and not all(isinstance(c, dict) and set(c) == {"exists"} for c in clauses):
                terms: list[tuple[str, set[Any]]] = []
                _collect_terms(clauses, terms, [], [])
                out += terms
            elif key != "should":
                out += _excluded_terms(value)
    return out


def _collect_terms(
    node: Any,
    out: list[tuple[str, set[Any]]],
    ranges: list[tuple[str, dict[str, Any]]],
    absent: list[str],
) -> None:
    """The ``term`` / ``terms`` / ``range`` conditions that must hold, and the fields that must
    have no value (a ``must_not`` of ``exists`` only: not forgotten, no user); any other
    ``must_not``, and ``should``, skipped."""
    if isinstance(node, list):
        for item in node:
            _collect_terms(item, out, ranges, absent)
        return
    if not isinstance(node, dict):
        return
    for key, value in node.items():
        if key == "must_not":
            clauses = value if isinstance(value, list) else [value]
            if all(isinstance(c, dict) and set(c) == {"exists"} for c in clauses):
                absent.extend(c["exists"]["field"] for c in clauses)
            continue
        if key == "should":
            continue
        if key == "term" and isinstance(value, dict):
            ((field, spec),) = value.items()
            out.append((field, {spec["value"] if isinstance(spec, dict) else spec}))
        elif key == "terms" and isinstance(value, dict):
            for field, values in value.items():
                if isinstance(values, list):
                    out.append((field, set(values)))
        elif key == "range" and isinstance(value, dict):
            ranges.extend(value.items())
        else:
            _collect_terms(value, out, ranges, absent)

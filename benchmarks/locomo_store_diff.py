"""Where two stores' rankings part: the same LoCoMo questions asked of a SQLite store and an
OpenSearch alias that hold the same turns, their candidate lists compared.

    OPENSEARCH_URL=... python benchmarks/locomo_store_diff.py --sqlite-dir DIR --alias ALIAS
                                                              [--conversations 1]

``DIR`` is an ingest directory that ``locomo.py --store sqlite --data-dir D`` left (``D/default``),
``ALIAS`` the alias ``locomo.py --store opensearch`` made on the node (``_cat/aliases`` lists it).
Both runtimes are built in this process and every question goes through `SearchService` on each
(the service the HTTP API runs), with the store's own candidate lists recorded on the way: the
vector list (the 25 nearest) and the lexical list (the records found by their words) of each
store. Access counting is switched off, so asking changes neither store. Prints recall@10 of each
store, how much the lists overlap, and how many questions each store ranks better. It is how the
OpenSearch word search was found to score a record's texts apart (docs/decisions.md, "OpenSearch
scores a record's texts as one field, as FTS5 does").
"""

from __future__ import annotations

import argparse
import os
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import _corpus
from locomo import DEFAULT_DATA, TENANT, load_conversations, recall_at

NEAREST = 25


def _container(store: str, args: argparse.Namespace) -> Any:
    from agent_memory.container import Container
    from agent_memory.settings import Settings

    if store == "sqlite":
        return Container(Settings(data_dir=args.sqlite_dir, embedder="minilm", store="sqlite"))
    return Container(
        Settings(
            data_dir=args.sqlite_dir,
            embedder="minilm",
            store="opensearch",
            opensearch_endpoint=os.environ["OPENSEARCH_URL"],
            opensearch_index_alias=args.alias,
            opensearch_timeout_s=60,
        )
    )


def ask(store: str, args: argparse.Namespace) -> dict[tuple[str, int], dict[str, Any]]:
    """Every question through the service on ``store``: the ranked turns and the store's first
    candidate list (vector nearest, lexical hits)."""
    from agent_memory.model.queries import SearchQuery

    container = _container(store, args)
    memory = container.store
    calls: list[list[Any]] = []
    search = memory.search

    def recorded(query: Any) -> Any:
        found = search(query)
        calls.append(found)
        return found

    memory.search = recorded
    memory.record_access = lambda *_args, **_kwargs: None  # asking must not change the store
    out: dict[tuple[str, int], dict[str, Any]] = {}
    for conversation in load_conversations(args.data, args.conversations):
        for question in conversation.questions:
            calls.clear()
            query = SearchQuery(
                query=question.text, grain="working", max_results=25, as_of=conversation.as_of
            )
            found = container.search_service.search(TENANT, conversation.agent_id, query)
            first = calls[0]
            nearest = sorted((c for c in first if c.similarity is not None), key=lambda c: -c.similarity)
            out[(conversation.sample_id, question.index)] = {
                "evidence": question.evidence,
                "ranked": [_turn(f.record) for f in found if hasattr(f, "record")],
                "nearest": {_turn(c.record) for c in nearest[:NEAREST]},
                "lexical": {_turn(c.record) for c in first if c.lexical is not None},
            }
    return out


def _turn(record: Any) -> str:
    return record.source.message_id if record.source and record.source.message_id else record.id


def report(
    sqlite: dict[tuple[str, int], dict[str, Any]], other: dict[tuple[str, int], dict[str, Any]]
) -> str:
    keys = sorted(sqlite.keys() & other.keys())

    def recall(side: dict[tuple[str, int], dict[str, Any]], key: tuple[str, int]) -> float:
        return recall_at(side[key]["ranked"], side[key]["evidence"], 10)

    lexical = [
        len(sqlite[k]["lexical"] & other[k]["lexical"])
        / max(1, len(sqlite[k]["lexical"] | other[k]["lexical"]))
        for k in keys
    ]
    nearest = [len(sqlite[k]["nearest"] & other[k]["nearest"]) / NEAREST for k in keys]
    delta = [recall(other, k) - recall(sqlite, k) for k in keys]
    return "\n".join(
        [
            f"{len(keys)} questions",
            f"recall@10: sqlite {100 * statistics.mean(recall(sqlite, k) for k in keys):.1f}, "
            f"opensearch {100 * statistics.mean(recall(other, k) for k in keys):.1f}",
            f"lexical candidates in common (of both lists' union), mean: {statistics.mean(lexical):.3f}",
            f"the {NEAREST} nearest in common, mean: {statistics.mean(nearest):.3f}",
            f"questions opensearch ranks worse / better: {sum(d < 0 for d in delta)} / "
            f"{sum(d > 0 for d in delta)}",
        ]
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sqlite-dir", type=Path, required=True, help="an ingest directory of locomo.py")
    parser.add_argument("--alias", required=True, help="the OpenSearch alias of the same ingest")
    parser.add_argument("--conversations", type=int, default=1)
    args = parser.parse_args(argv)
    if not os.environ.get("OPENSEARCH_URL"):
        parser.error("OPENSEARCH_URL is not set")
    _corpus.configure_environment(args.sqlite_dir, "minilm")
    print(report(ask("sqlite", args), ask("opensearch", args)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

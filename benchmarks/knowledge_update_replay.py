"""The knowledge-update cases' write-time marks, replayed offline: seconds, not minutes.

    python benchmarks/knowledge_update_replay.py [--halves A,B,C,D,E,F,G,H,I] [--embedder minilm|hashing]
        [--judge minilm|none|PATH] [--set NAME=VALUE]

`benchmarks/knowledge_update.py` writes every case through the local HTTP API and reads the marks
back; choosing a rule of the write path by it costs minutes a run. This replays only the write
path's decision: each case's turns in the order the benchmark writes them, each one a working
memory of its own conversation, through the service the writer calls
(`supersession.marking.MarkingService`, with the statements' own vectors by the same model),
over a store in this process that answers a search with the agent's memories nearest by vector.
Every memory of a case is within the service's 20 candidates, so the decisions are the
benchmark's: on halves A-D it gave the benchmark's write-time figures exactly, before and after
the change it was made to choose (docs/decisions.md). Not replayed: the near-duplicate merge and
anything of search.

Printed per half: updates marked right (the old statement superseded by the new one, which
names it), must-not-supersede cases marked, and memories marked that are neither (a distractor
turn ended, or ending, something); with ``--cases`` each case that is marked or missed; with
``--cpu N`` the CPU time of the service's ``on_write`` a write, for each of N passes over the cases
(the first embeds the statements, the others find them kept: the write path's own cost); with
``--set OWN_STANDS_OUT=0.3`` (repeatable) one of the service's thresholds set for the replay.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

# The service's metrics need a namespace when its modules are first imported (as
# `_corpus.configure_environment` gives one); `main` turns them off.
os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentMemory")

from agent_memory.adapters.judges.minilm_update_judge import MiniLmUpdateJudge
from agent_memory.model.ids import content_hash
from agent_memory.model.records import MemoryRecord, RecordValidity
from agent_memory.ports import AuditEvent, Candidate, Embedder, StoreQuery, UpdateJudge
from agent_memory.supersession.marking import MarkingService
from agent_memory.writing.memo_embedder import MemoEmbedder
from knowledge_update import SESSION_HOUR, Case, load, sessions


class ReplayStore:
    """The part of a store supersession uses, in memory: a search answers with the agent's
    memories nearest the query's vector (all of them, up to the limit)."""

    def __init__(self) -> None:
        self.records: dict[str, MemoryRecord] = {}
        self._vectors: dict[str, np.ndarray] = {}

    def put(self, record: MemoryRecord, vector: np.ndarray) -> None:
        self.records[record.id] = record
        self._vectors[record.id] = vector

    def get(self, tenant_id: str, agent_id: str, record_id: str) -> MemoryRecord | None:
        record = self.records.get(record_id)
        return record if record is not None and record.agent_id == agent_id else None

    def set_validity(
        self, tenant_id: str, agent_id: str, record_id: str, validity: RecordValidity, event: AuditEvent
    ) -> bool:
        record = self.get(tenant_id, agent_id, record_id)
        if record is None:
            return False
        self.records[record_id] = record.model_copy(update=validity.as_fields())
        return True

    def search(self, query: StoreQuery) -> list[Candidate]:
        found = [
            Candidate(r, float(np.dot(np.asarray(query.vector), self._vectors[r.id])))
            for r in self.records.values()
            if r.agent_id == query.agent_id
        ]
        return sorted(found, key=lambda c: -(c.similarity or 0.0))[: query.limit]


@dataclass
class Replayed:
    case: str
    half: str
    category: str
    supersede: bool
    marked_right: bool
    old_marked: bool
    old_text: str
    new_text: str
    #: Other memories of the case marked superseded: (text, by).
    others: list[tuple[str, str | None]] = field(default_factory=list)


def replay(
    case: Case,
    pool: Sequence[str],
    embedder: Embedder,
    spent: list[float] | None = None,
    judge: UpdateJudge | None = None,
) -> Replayed:
    """Write one case's turns in order through the supersession service (with ``judge`` when
    given); its marks. ``spent`` gets the CPU seconds of each ``on_write``."""
    store = ReplayStore()
    service = MarkingService(store, embedder=embedder, judge=judge)  # type: ignore[arg-type]
    ids: dict[str, str] = {}
    n = 0
    for conversation, day, turns in sessions(case, pool):
        for minute, (tag, text) in enumerate(turns):
            n += 1
            at = datetime.fromisoformat(day).replace(hour=SESSION_HOUR, minute=minute, tzinfo=UTC)
            record = MemoryRecord(
                id=f"{case.id}-{n:02d}-{tag}",
                tenant_id="replay",
                agent_id=case.agent,
                content=text,
                content_hash=content_hash(text),
                created_at=at,
                updated_at=at,
                occurred_at=at,
                conversation_id=conversation,
                speaker=case.raw["speaker"],
                role="user",
                kind="conversation",
            )
            [vector] = embedder.embed([text])
            started = time.process_time()
            written = service.on_write(record, vector, "", at)
            if spent is not None:
                spent.append(time.process_time() - started)
            store.put(written, vector)
            if tag != "-":
                ids[tag] = record.id
    old, new = store.records[ids["old"]], store.records[ids["new"]]
    return Replayed(
        case=case.id,
        half=case.half,
        category=str(case.raw["category"]),
        supersede=case.supersede,
        marked_right=old.superseded_by == new.id and old.id in new.supersedes,
        old_marked=old.superseded_by is not None,
        old_text=old.content,
        new_text=new.content,
        others=[
            (r.content, r.superseded_by) for r in store.records.values() if r.superseded_by and r.id != old.id
        ],
    )


def score(rows: Sequence[Replayed]) -> dict[str, Any]:
    updates = [r for r in rows if r.supersede]
    keep = [r for r in rows if not r.supersede]
    right = sum(r.marked_right for r in updates)
    wrong = sum(r.old_marked for r in keep)
    return {
        "marked_right": f"{right}/{len(updates)} ({100.0 * right / max(len(updates), 1):.1f} %)",
        "wrongly_marked": f"{wrong}/{len(keep)} ({100.0 * wrong / max(len(keep), 1):.1f} %)",
        "other_marks": sum(len(r.others) for r in rows),
    }


def _embedder(name: str) -> Embedder:
    if name == "hashing":
        from agent_memory.adapters.embedders.hashing import HashingEmbedder

        return MemoEmbedder(HashingEmbedder(384))
    from agent_memory.adapters.embedders.minilm import MiniLmEmbedder

    return MemoEmbedder(MiniLmEmbedder())


def _judge(name: str) -> UpdateJudge | None:
    if name == "none":
        return None
    return MiniLmUpdateJudge() if name == "minilm" else MiniLmUpdateJudge(Path(name))


def _set_thresholds(settings: Sequence[str]) -> None:
    """Set the write path's thresholds for this replay (a screen of a threshold costs one replay,
    not an edit): only the numeric constants `supersession.marking` defines (``JUDGE_CANDIDATES=3``
    a whole number)."""
    from agent_memory.supersession import marking

    for setting in settings:
        name, _, value = setting.partition("=")
        kind = type(getattr(marking, name, None))
        if not name.isupper() or kind not in (float, int):
            raise SystemExit(f"--set {setting}: not a threshold of supersession.marking")
        setattr(marking, name, kind(value))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--halves", default="A,B,C,D,E,F,G,H,I")
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "hashing"])
    parser.add_argument("--cases", action="store_true", help="list each case marked wrongly or missed")
    parser.add_argument(
        "--judge",
        default="minilm",
        help="the update judge: minilm (shipped), none, or the model.int8.onnx of a training run",
    )
    parser.add_argument("--cpu", type=int, default=0, help="passes over the cases timing on_write's CPU")
    parser.add_argument(
        "--set",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="replay with one of supersession.marking's thresholds set (OWN_STANDS_OUT=0.3); repeatable",
    )
    args = parser.parse_args(argv)
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    _set_thresholds(args.set)
    cases, pool = load([h.strip() for h in args.halves.split(",") if h.strip()])
    embedder = _embedder(args.embedder)
    judge = _judge(args.judge)
    for n in range(args.cpu):
        spent: list[float] = []
        for c in cases:
            replay(c, pool, embedder, spent, judge)
        mean = 1e6 * sum(spent) / len(spent)
        print(f"pass {n + 1}: on_write {mean:.0f} us CPU a write over {len(spent)} writes")
    rows = [replay(c, pool, embedder, judge=judge) for c in cases]
    for half in sorted({r.half for r in rows}):
        print(f"half {half}:", json.dumps(score([r for r in rows if r.half == half])))
    if args.cases:
        for r in rows:
            if r.supersede != r.marked_right or r.others:
                what = "missed" if r.supersede else "wrongly marked"
                print(f"{r.case} {r.category} {what}: {r.old_text!r} -> {r.new_text!r} {r.others or ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

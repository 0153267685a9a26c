"""The vector index (`sqlite_ann`) against the exact search it stands in for.

The invariant: over any history of writes, rewrites, forgets and index builds, a search through
the index returns what the exact search returns over the same file (same ids, same order, same
cosines), with every filter applied; and once an index is built, its files hold exactly the
agent's live rows (what was forgotten is not on disk in them). The data is small and the sketch's
candidates are rescored exactly, so any difference is a bug in snapshots, deltas or filters.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.strategies import examples
from tests.unit.adapters.sqlite.test_sqlite_store import DIM, MODEL, NOW, record, unit

from agent_memory.adapters.sqlite import sqlite_ann
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.records import MemoryKind
from agent_memory.ports import AuditEvent, NearestQuery, StoredRecord, StoreQuery

AGENTS = [("t1", "a1"), ("t1", "a2"), ("t2", "a1")]
KINDS = [MemoryKind.FACT, MemoryKind.DECISION]
USERS = [None, "u1", "u2"]


def _stores(path: Path, exact_max: int) -> tuple[SqliteMemoryStore, SqliteMemoryStore]:
    exact = SqliteMemoryStore(path, DIM, MODEL)
    indexed = SqliteMemoryStore(path, DIM, MODEL, ann_min_vectors=10**9)  # builds only when asked
    assert indexed._ann is not None
    indexed._ann.exact_max = exact_max
    return exact, indexed


class IndexedEqualsExact(RuleBasedStateMachine):
    """Writes and forgets through one store; searches through both; builds now and then."""

    exact_max = 0  # every search through the sketch

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[tuple[str, str], set[str]] = {agent: set() for agent in AGENTS}
        self.forgotten: dict[tuple[str, str], set[str]] = {agent: set() for agent in AGENTS}
        self.serial = 0

    @initialize(tmp=st.just(None))
    def open(self, tmp: Any) -> None:
        import tempfile

        self.dir = Path(tempfile.mkdtemp(prefix="ann-"))
        self.exact, self.indexed = _stores(self.dir / "memory.db", self.exact_max)

    def teardown(self) -> None:
        if hasattr(self, "exact"):
            self.indexed.close()
            self.exact.close()

    @rule(
        agent=st.sampled_from(AGENTS),
        kind=st.sampled_from(KINDS),
        user=st.sampled_from(USERS),
        days=st.integers(0, 60),
    )
    def write(self, agent: tuple[str, str], kind: MemoryKind, user: str | None, days: int) -> None:
        self.serial += 1
        rec = record(
            f"memory {self.serial}",
            tenant_id=agent[0],
            agent_id=agent[1],
            kind=kind,
            user_id=user,
            occurred_at=NOW - timedelta(days=days, minutes=self.serial),
        )
        self.exact.put([StoredRecord(rec, unit(1000 + self.serial))])
        self.live[agent].add(rec.id)

    @rule(agent=st.sampled_from(AGENTS), pick=st.integers(0, 10**6))
    def rewrite(self, agent: tuple[str, str], pick: int) -> None:
        """The same record with a new vector (a merge rewrites a record in place)."""
        if not self.live[agent]:
            return
        rid = sorted(self.live[agent])[pick % len(self.live[agent])]
        current = self.exact.get(agent[0], agent[1], rid)
        assert current is not None
        self.serial += 1
        self.exact.put([StoredRecord(current, unit(5000 + self.serial))])

    @rule(agent=st.sampled_from(AGENTS), pick=st.integers(0, 10**6))
    def forget(self, agent: tuple[str, str], pick: int) -> None:
        if not self.live[agent]:
            return
        rid = sorted(self.live[agent])[pick % len(self.live[agent])]
        event = AuditEvent(
            tenant_id=agent[0],
            agent_id=agent[1],
            record_id=rid,
            action=AuditAction.FORGET,
            at=NOW,
            actor="test",
        )
        assert self.exact.soft_delete(agent[0], agent[1], rid, event)
        self.live[agent].discard(rid)
        self.forgotten[agent].add(rid)

    @rule(agent=st.sampled_from(AGENTS))
    def build(self, agent: tuple[str, str]) -> None:
        assert self.indexed.build_vector_index(*agent)
        snapshot = self.indexed._ann.snapshot(*agent)  # type: ignore[union-attr]
        assert snapshot is not None
        # the files hold the live rows, nothing forgotten
        with self.exact._db.transaction(write=False) as conn:
            live_rows = {
                int(seq)
                for (seq,) in conn.execute(
                    "SELECT seq FROM records WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL",
                    agent,
                )
            }
        assert set(snapshot.rowids.tolist()) == live_rows
        assert snapshot.sketch.shape == snapshot.matrix.shape == (len(live_rows), DIM)

    @rule(
        agent=st.sampled_from(AGENTS),
        seed=st.integers(0, 10**6),
        limit=st.integers(1, 12),
        kinds=st.sampled_from([(), (MemoryKind.DECISION,)]),
        user=st.sampled_from(USERS),
        window=st.sampled_from([None, 7, 30]),
    )
    def search(
        self,
        agent: tuple[str, str],
        seed: int,
        limit: int,
        kinds: tuple[MemoryKind, ...],
        user: str | None,
        window: int | None,
    ) -> None:
        query = StoreQuery(
            tenant_id=agent[0],
            agent_id=agent[1],
            now=NOW,
            vector=unit(seed),
            kinds=kinds,
            user_id=user,
            start=None if window is None else NOW - timedelta(days=window),
            limit=limit,
        )
        expected = [(c.record.id, c.similarity) for c in self.exact.search(query)]
        got = [(c.record.id, c.similarity) for c in self.indexed.search(query)]
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-6)
        assert not {i for i, _ in got} & self.forgotten[agent]

    @rule(agent=st.sampled_from(AGENTS), seed=st.integers(0, 10**6))
    def nearest(self, agent: tuple[str, str], seed: int) -> None:
        from agent_memory.model.grains import Grain

        query = NearestQuery(
            tenant_id=agent[0], agent_id=agent[1], now=NOW, vector=unit(seed), grain=Grain.WORKING
        )
        expected, got = self.exact.nearest(query), self.indexed.nearest(query)
        assert (expected is None) == (got is None)
        if expected is not None and got is not None:
            assert got[0].id == expected[0].id
            assert got[1] == pytest.approx(expected[1], abs=1e-6)

    @invariant()
    def no_foreign_rows(self) -> None:
        """An agent's snapshot never holds another agent's rows."""
        if not hasattr(self, "indexed"):
            return
        for agent in AGENTS:
            snapshot = self.indexed._ann.snapshot(*agent)  # type: ignore[union-attr]
            if snapshot is None:
                continue
            rowids = ",".join(map(str, snapshot.rowids.tolist())) or "NULL"
            with self.exact._db.transaction(write=False) as conn:
                owners = set(conn.execute(f"SELECT tenant_id, agent_id FROM records WHERE seq IN ({rowids})"))
            assert owners <= {agent}


class ExactFromSnapshotEqualsExact(IndexedEqualsExact):
    exact_max = 10**6  # every search scores its eligible rows from the mapped matrix


_settings = settings(
    max_examples=examples(20), stateful_step_count=30, deadline=None, suppress_health_check=list(HealthCheck)
)
TestIndexedEqualsExact = IndexedEqualsExact.TestCase
TestIndexedEqualsExact.settings = _settings
TestExactFromSnapshotEqualsExact = ExactFromSnapshotEqualsExact.TestCase
TestExactFromSnapshotEqualsExact.settings = _settings


def test_a_snapshot_of_another_store_is_not_used(tmp_path: Path) -> None:
    # GIVEN an indexed agent, and its index files copied under a new store
    exact, indexed = _stores(tmp_path / "one" / "memory.db", 0)
    for i in range(20):
        exact.put([StoredRecord(record(f"m{i}", occurred_at=NOW - timedelta(minutes=i)), unit(i))])
    assert indexed.build_vector_index("t1", "a1")
    other = SqliteMemoryStore(tmp_path / "two" / "memory.db", DIM, MODEL, ann_min_vectors=10**9)
    (tmp_path / "two" / "ann").mkdir()
    for f in (tmp_path / "one" / "ann").iterdir():
        (tmp_path / "two" / "ann" / f.name).write_bytes(f.read_bytes())

    # WHEN the new store looks for the agent's snapshot
    found = other._ann.snapshot("t1", "a1")  # type: ignore[union-attr]

    # THEN it refuses it (another store's rowids mean other records) and makes its own
    assert found is None
    other._ann._builder.submit(lambda: None).result()  # type: ignore[union-attr]
    meta = json.loads(next((tmp_path / "two" / "ann").glob("*.json")).read_text())
    assert meta["store_id"] == other._db.store_id != exact._db.store_id
    rebuilt = other._ann.snapshot("t1", "a1")  # type: ignore[union-attr]
    assert rebuilt is not None and len(rebuilt.rowids) == 0  # the new store holds nothing of it


def test_a_large_delta_asks_for_a_fold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN an indexed agent of 10 rows, then 10 more written
    monkeypatch.setattr(sqlite_ann, "DELTA_MIN_ROWS", 5)
    exact, indexed = _stores(tmp_path / "memory.db", 0)
    for i in range(10):
        exact.put([StoredRecord(record(f"m{i}", occurred_at=NOW - timedelta(minutes=i)), unit(i))])
    assert indexed.build_vector_index("t1", "a1")
    first = indexed._ann.snapshot("t1", "a1")  # type: ignore[union-attr]
    for i in range(10, 20):
        exact.put([StoredRecord(record(f"m{i}", occurred_at=NOW - timedelta(minutes=i)), unit(i))])

    # WHEN the agent is searched (the delta is now as big as the snapshot)
    hits = indexed.search(StoreQuery(tenant_id="t1", agent_id="a1", now=NOW, vector=unit(3), limit=20))
    indexed._ann._builder.submit(lambda: None).result()  # type: ignore[union-attr]  # the fold is done

    # THEN the answer holds all 20, and the fold made a snapshot of all 20 in the background
    assert len(hits) == 20
    second = indexed._ann.snapshot("t1", "a1")  # type: ignore[union-attr]
    assert first is not None and second is not None
    assert (len(first.rowids), len(second.rowids)) == (10, 20)


def test_the_index_and_the_local_embedding_model_share_a_process() -> None:
    # GIVEN a fresh interpreter that loads the index library first, as opening the store does
    pytest.importorskip("onnxruntime")
    script = (
        "import usearch.index\n"
        "from agent_memory.adapters.embedders.minilm import MiniLmEmbedder\n"
        "print(len(MiniLmEmbedder().embed(['a memory'])[0]))\n"
    )

    # WHEN it then embeds with the local model
    done = subprocess.run(
        [sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=120
    )

    # THEN it does not crash (usearch 2.20+ with numkong segfaults here)
    assert (done.returncode, done.stdout.strip()) == (0, "384"), done.stderr[-2000:]


def test_a_forget_folds_the_row_out_of_the_files_without_a_search(tmp_path: Path) -> None:
    # GIVEN an indexed agent of 12 rows
    store = SqliteMemoryStore(tmp_path / "memory.db", DIM, MODEL, ann_min_vectors=10**9)
    assert store._ann is not None
    records = [record(f"m{i}", occurred_at=NOW - timedelta(minutes=i)) for i in range(12)]
    store.put([StoredRecord(r, unit(i)) for i, r in enumerate(records)])
    assert store.build_vector_index("t1", "a1")
    with store._db.transaction(write=False) as conn:
        (seq,) = conn.execute("SELECT seq FROM records WHERE id = ?", (records[4].id,)).fetchone()
    assert seq in store._ann.snapshot("t1", "a1").rowids  # type: ignore[union-attr]

    # WHEN one is forgotten, and nothing searches
    event = AuditEvent(
        tenant_id="t1",
        agent_id="a1",
        record_id=records[4].id,
        action=AuditAction.FORGET,
        at=NOW,
        actor="test",
    )
    assert store.soft_delete("t1", "a1", records[4].id, event)
    store._ann._builder.submit(lambda: None).result()  # the fold it asked for is done

    # THEN no file of the agent's index holds it any more
    snapshot = store._ann.snapshot("t1", "a1")
    assert snapshot is not None and len(snapshot.rowids) == 11
    assert seq not in snapshot.rowids
    assert snapshot.sketch.shape == (11, DIM)
    assert len(list((tmp_path / "ann").glob("*.i8.npy"))) == 1  # the old sketch is gone
    store.close()


def test_the_sketch_keeps_the_scale_and_the_sign_of_every_row() -> None:
    # GIVEN rows whose largest absolute value is negative
    rows = np.array([[0.5, -1.0, 0.25], [0.0, 0.1, -0.2]], dtype=np.float32)

    # WHEN they are quantised
    sketch = sqlite_ann.quantised(rows)

    # THEN the peak maps to -127, the rest in proportion, and zeros stay zeros
    assert sketch.dtype == np.int8
    assert sketch.tolist() == [[64, -127, 32], [0, 13, -25]]


def test_a_large_agent_through_the_sketch_finds_what_the_exact_search_finds(tmp_path: Path) -> None:
    # GIVEN 3,000 memories of one agent with clustered vectors, indexed, every search on the sketch
    rng = np.random.default_rng(7)
    centres = rng.standard_normal((30, DIM))
    vectors = centres[rng.integers(0, 30, 3_000)] + 0.6 * rng.standard_normal((3_000, DIM))
    records = [record(f"m{i}", occurred_at=NOW - timedelta(minutes=i)) for i in range(3_000)]
    exact, indexed = _stores(tmp_path / "memory.db", exact_max=0)
    exact.put([StoredRecord(r, v.astype(np.float32)) for r, v in zip(records, vectors, strict=True)])
    assert indexed.build_vector_index("t1", "a1")

    # WHEN 20 questions near the clusters are asked of both
    questions = centres[:20] + 0.8 * rng.standard_normal((20, DIM))
    answers = [
        [
            (c.record.id, round(c.similarity or 0.0, 5))
            for c in store.search(
                StoreQuery(tenant_id="t1", agent_id="a1", now=NOW, vector=q.astype(np.float32), limit=10)
            )
        ]
        for q in questions
        for store in (exact, indexed)
    ]

    # THEN every answer through the sketch is the exact one
    assert answers[0::2] == answers[1::2]

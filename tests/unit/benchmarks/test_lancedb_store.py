"""The SQLite store with LanceDB's candidates (`benchmarks/lancedb_store.py`) against the SQLite store itself.

Both read one file. Over any history of writes (through either store: the LanceDB one must catch
up with writes it did not make), rewrites and forgets, a vector search returns the same ids in
the same order with the same cosines, with every filter applied (LanceDB's flat search is exact,
as numpy's is); a word search finds the same records when it may return all of them (the BM25
scores differ, the matches must not); and the tenant's table holds exactly the live rows of each
agent it has synced. Skipped without lancedb (the ``lancedb`` extra, not part of ``make test``).
"""

from __future__ import annotations

import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule
from tests.unit.adapters.sqlite.test_sqlite_store import DIM, MODEL, NOW, record, unit

from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.model.audit_actions import AuditAction
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind
from agent_memory.ports import AuditEvent, NearestQuery, StoredRecord, StoreQuery

pytest.importorskip("lancedb")

from benchmarks.lancedb_store import LanceDbMemoryStore

AGENTS = [("t1", "a1"), ("t1", "a2"), ("t2", "a1")]
KINDS = [MemoryKind.FACT, MemoryKind.DECISION]
USERS = [None, "u1", "u2"]
WORDS = ["harbour", "violin", "glacier", "lantern"]


def _forget(store: SqliteMemoryStore, agent: tuple[str, str], record_id: str) -> bool:
    event = AuditEvent(
        tenant_id=agent[0],
        agent_id=agent[1],
        record_id=record_id,
        action=AuditAction.FORGET,
        at=NOW,
        actor="t",
    )
    return store.soft_delete(agent[0], agent[1], record_id, event)


class LanceEqualsSqlite(RuleBasedStateMachine):
    """Writes and forgets through either store; searches through both."""

    pushdown_max = 4096

    def __init__(self) -> None:
        super().__init__()
        self.live: dict[tuple[str, str], set[str]] = {agent: set() for agent in AGENTS}
        self.forgotten: dict[tuple[str, str], set[str]] = {agent: set() for agent in AGENTS}
        self.serial = 0

    @initialize(tmp=st.just(None))
    def open(self, tmp: Any) -> None:
        path = Path(tempfile.mkdtemp(prefix="lance-")) / "memory.db"
        self.sqlite = SqliteMemoryStore(path, DIM, MODEL)
        self.lance = LanceDbMemoryStore(path, DIM, MODEL, optimize_every=4)
        self.lance.lance.pushdown_max = self.pushdown_max

    def teardown(self) -> None:
        if hasattr(self, "lance"):
            self.lance.close()
            self.sqlite.close()

    def _writer(self, through_lance: bool) -> SqliteMemoryStore:
        return self.lance if through_lance else self.sqlite

    @rule(
        agent=st.sampled_from(AGENTS),
        kind=st.sampled_from(KINDS),
        user=st.sampled_from(USERS),
        days=st.integers(0, 60),
        word=st.sampled_from(WORDS),
        through_lance=st.booleans(),
    )
    def write(
        self,
        agent: tuple[str, str],
        kind: MemoryKind,
        user: str | None,
        days: int,
        word: str,
        through_lance: bool,
    ) -> None:
        self.serial += 1
        rec = record(
            f"memory {self.serial} about the {word}",
            tenant_id=agent[0],
            agent_id=agent[1],
            kind=kind,
            user_id=user,
            occurred_at=NOW - timedelta(days=days, minutes=self.serial),
        )
        self._writer(through_lance).put([StoredRecord(rec, unit(1000 + self.serial))])
        self.live[agent].add(rec.id)

    @rule(agent=st.sampled_from(AGENTS), pick=st.integers(0, 10**6), through_lance=st.booleans())
    def rewrite(self, agent: tuple[str, str], pick: int, through_lance: bool) -> None:
        """The same record with a new vector (a merge rewrites a record in place)."""
        if not self.live[agent]:
            return
        rid = sorted(self.live[agent])[pick % len(self.live[agent])]
        current = self.sqlite.get(agent[0], agent[1], rid)
        assert current is not None
        self.serial += 1
        self._writer(through_lance).put([StoredRecord(current, unit(5000 + self.serial))])

    @rule(agent=st.sampled_from(AGENTS), pick=st.integers(0, 10**6), through_lance=st.booleans())
    def forget(self, agent: tuple[str, str], pick: int, through_lance: bool) -> None:
        if not self.live[agent]:
            return
        rid = sorted(self.live[agent])[pick % len(self.live[agent])]
        assert _forget(self._writer(through_lance), agent, rid)
        self.live[agent].discard(rid)
        self.forgotten[agent].add(rid)

    @rule(
        agent=st.sampled_from(AGENTS),
        seed=st.integers(0, 10**6),
        limit=st.integers(1, 12),
        kinds=st.sampled_from([(), (MemoryKind.DECISION,)]),
        user=st.sampled_from(USERS),
        window=st.sampled_from([None, 7, 30]),
    )
    def search_vectors(
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
        expected = [(c.record.id, c.similarity) for c in self.sqlite.search(query)]
        got = [(c.record.id, c.similarity) for c in self.lance.search(query)]
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert np.allclose([s for _, s in got], [s for _, s in expected], atol=1e-5)
        assert not {i for i, _ in got} & self.forgotten[agent]

    @rule(
        agent=st.sampled_from(AGENTS),
        word=st.sampled_from(WORDS),
        kinds=st.sampled_from([(), (MemoryKind.FACT,)]),
    )
    def search_words(self, agent: tuple[str, str], word: str, kinds: tuple[MemoryKind, ...]) -> None:
        query = StoreQuery(tenant_id=agent[0], agent_id=agent[1], now=NOW, text=word, kinds=kinds, limit=100)
        expected = {c.record.id for c in self.sqlite.search(query)}
        got = self.lance.search(query)
        assert {c.record.id for c in got} == expected
        assert all(c.lexical is not None and 0 < c.lexical <= 1 for c in got)

    @rule(agent=st.sampled_from(AGENTS), seed=st.integers(0, 10**6))
    def nearest(self, agent: tuple[str, str], seed: int) -> None:
        query = NearestQuery(
            tenant_id=agent[0], agent_id=agent[1], now=NOW, vector=unit(seed), grain=Grain.WORKING
        )
        expected, got = self.sqlite.nearest(query), self.lance.nearest(query)
        assert (expected is None) == (got is None)
        if expected is not None and got is not None:
            assert got[0].id == expected[0].id
            assert got[1] == pytest.approx(expected[1], abs=1e-5)

    @invariant()
    def tables_hold_the_live_rows_of_what_they_synced(self) -> None:
        if not hasattr(self, "lance"):
            return
        with self.sqlite._db.transaction(write=False) as conn:
            for tenant_id, agent_id in AGENTS:
                self.lance.lance.sync(conn, tenant_id, agent_id)
                table = self.lance.lance._table(tenant_id, create=False)
                held = (
                    set()
                    if table is None
                    else set(
                        table.search()
                        .where(f"tenant_id = '{tenant_id}' AND agent_id = '{agent_id}'")
                        .select(["seq"])
                        .limit(None)
                        .to_arrow()["seq"]
                        .to_pylist()
                    )
                )
                live = {
                    int(seq)
                    for (seq,) in conn.execute(
                        "SELECT seq FROM records WHERE tenant_id = ? AND agent_id = ? AND deleted_at IS NULL",
                        (tenant_id, agent_id),
                    )
                }
                assert held == live


class ProposedEqualsSqlite(LanceEqualsSqlite):
    pushdown_max = 0  # LanceDB proposes, SQL keeps: never a list of rowids in the filter


_settings = settings(
    max_examples=25, stateful_step_count=25, deadline=None, suppress_health_check=list(HealthCheck)
)
TestLanceEqualsSqlite = LanceEqualsSqlite.TestCase
TestLanceEqualsSqlite.settings = _settings
TestProposedEqualsSqlite = ProposedEqualsSqlite.TestCase
TestProposedEqualsSqlite.settings = _settings


def test_each_tenant_has_a_table_and_each_query_its_agent(tmp_path: Path) -> None:
    # GIVEN the same words and vector written for two agents of one tenant and one of another
    store = LanceDbMemoryStore(tmp_path / "memory.db", DIM, MODEL)
    owners = [("t1", "a1"), ("t1", "a2"), ("t2", "a1")]
    records = [record("the lantern by the harbour", tenant_id=t, agent_id=a) for t, a in owners]
    store.put([StoredRecord(r, unit(7)) for r in records])

    # WHEN each agent searches by vector and by word
    found = {
        owner: store.search(
            StoreQuery(tenant_id=owner[0], agent_id=owner[1], now=NOW, vector=unit(7), text="lantern")
        )
        for owner in owners
    }

    # THEN each finds its own record only, and the tenants' rows are in two tables
    for (tenant_id, agent_id), candidates in found.items():
        assert [(c.record.tenant_id, c.record.agent_id) for c in candidates] == [(tenant_id, agent_id)]
        assert candidates[0].lexical == 1.0
    assert store.lance._table("t1", create=False).count_rows() == 2
    assert store.lance._table("t2", create=False).count_rows() == 1
    store.close()


def test_a_forget_leaves_the_table_and_its_history_without_a_search(tmp_path: Path) -> None:
    # GIVEN an agent of 12 rows, in several versions of its table
    store = LanceDbMemoryStore(tmp_path / "memory.db", DIM, MODEL, optimize_every=100)
    records = [record(f"m{i} glacier", occurred_at=NOW - timedelta(minutes=i)) for i in range(12)]
    for i, r in enumerate(records):
        store.put([StoredRecord(r, unit(i))])
    table = store.lance._table("t1", create=False)
    assert table.count_rows() == 12 and len(table.list_versions()) > 1

    # WHEN one is forgotten, and nothing searches
    assert _forget(store, ("t1", "a1"), records[4].id)

    # THEN the table no longer holds it, and no version left to go back to does either
    versions = [v["version"] for v in table.list_versions()]
    held = []
    for version in versions:
        table.checkout(version)
        held.append(table.count_rows(f"content = '{records[4].content}'"))
    table.checkout_latest()
    assert table.count_rows() == 11
    assert held == [0] * len(versions)
    store.close()


def test_a_tenant_wide_purge_removes_the_rows_of_every_agent(tmp_path: Path) -> None:
    # GIVEN two agents' records, forgotten long ago
    store = LanceDbMemoryStore(tmp_path / "memory.db", DIM, MODEL)
    records = [record(f"m{i}", agent_id=f"a{i % 2}") for i in range(6)]
    store.put([StoredRecord(r, unit(i)) for i, r in enumerate(records)])
    for r in records[:4]:
        assert _forget(store, (r.tenant_id, r.agent_id), r.id)

    # WHEN retention purges what was forgotten
    purged = store.purge("t1", NOW + timedelta(days=60), NOW + timedelta(days=30))

    # THEN the table keeps the two live rows
    assert purged == 4
    assert store.lance._table("t1", create=False).count_rows() == 2
    store.close()


def test_a_row_appended_twice_is_found_once_and_kept_once_after_a_removal(tmp_path: Path) -> None:
    # GIVEN a row appended a second time (as two processes catching up with one write could)
    store = LanceDbMemoryStore(tmp_path / "memory.db", DIM, MODEL)
    records = [record(f"m{i} violin", occurred_at=NOW - timedelta(minutes=i)) for i in range(3)]
    store.put([StoredRecord(r, unit(i)) for i, r in enumerate(records)])
    table = store.lance._table("t1", create=False)
    table.add(table.search().where(f"content = '{records[0].content}'").limit(None).to_arrow())
    assert table.count_rows() == 4

    # WHEN the agent searches, then forgets another record
    found = store.search(StoreQuery(tenant_id="t1", agent_id="a1", now=NOW, vector=unit(0), text="violin"))
    assert _forget(store, ("t1", "a1"), records[2].id)

    # THEN the doubled record came back once, and the table holds each live row once
    assert [c.record.id for c in found].count(records[0].id) == 1
    assert sorted(table.to_arrow()["seq"].to_pylist()) == sorted(set(table.to_arrow()["seq"].to_pylist()))
    assert table.count_rows() == 2
    store.close()

"""Retrieval quality on LoCoMo, through the public HTTP API of the local runtime.

    python benchmarks/locomo.py [--data PATH] [--configs full,no-lexical,...] [--conversations N]
                                [--embedder minilm|minilm-memory|hashing] [--half A|B]
                                [--data-dir DIR] [--details PATH]

LoCoMo (Maharana et al., ACL 2024) is ten long conversations between two people, 5,882 turns in
272 dated sessions, with questions whose evidence is a list of turns (``dia_id`` like ``D3:12``).
The data set is CC BY-NC 4.0: it is read from ``--data`` (default
``/work/shared/data/locomo10.json``) and never copied into this repository; the results JSON holds
only aggregate figures.

What it does, and why that way:

1. **Ingest** every conversation the way an agent would remember it: one agent per conversation
   (``locomo-<sample_id>``), ``POST /v1/agents/{agent}/memories`` with one request per session
   (split at 100 items), each turn an item with its speaker, its real date as ``occurred_at`` (the
   session's start plus the turn's index in seconds, so turns keep their order), one
   ``conversation_id`` per session, and its ``dia_id`` in ``source.message_id`` so that results
   can be mapped back to turns. A turn that shared a photo carries the photo's caption
   (``[shared a photo: ...]``): the caption is all the text the data set has of the photo, and
   questions ask about what was in it.

   The items are ``kind: "conversation"`` (what they are) with no ``ttl_days``: a conversation's
   default lifetime (7 days, ``docs/retention.md``) runs from the time of the write, not from
   ``occurred_at``, so nothing expires during a run even though every turn happened in 2023. What
   *would* remove them is retention, which measures a working memory's age from ``occurred_at``:
   the runtime is started without its scheduler and the key is on the ``unlimited`` plan, so no
   cleanup can touch 2023 turns while the benchmark runs.

   Then it waits (bounded) until ``GET .../stats`` shows no pending write for every agent, lists
   every stored record and checks that every accepted turn is stored: as its own record, or merged
   into a near duplicate by dedup-on-write (the product's behaviour, kept on; such a turn's
   ``dia_id`` can no longer come back, and the merges are reported). A turn that is neither fails
   the run.
2. **Ask** every question of categories 1-4 (category 5 is adversarial and has no evidence) with
   ``POST .../memories/search``: the question as the query, ``grain: "working"``,
   ``max_results: 25``, and ``as_of`` one day after the conversation's last session, so the agent
   asks "today", just after the conversation, and recency means what it would mean then.
3. **Score**: recall@k = |evidence in the top k| / |evidence|, averaged over questions (the
   paper's measure); all-evidence@k = the share of questions with every evidence turn in the top
   k (what a multi-hop answer needs); both per category; and the search latency measured by the
   client around each HTTP call (one keep-alive ``http.client`` connection, as
   ``search_latency.py``), after one untimed search per agent.

Every ranking piece is measured on and off, one row per configuration (``--configs``):

- ``full``: the service's defaults (no ``ranking`` in the request);
- ``no-lexical``: ``ranking.lexical_weight = 0`` (vector similarity alone makes relevance);
- ``no-context``: its own ingest with ``AGENT_MEMORY_CONTEXT_TURNS=0`` (each turn embedded and
  indexed alone, without the turns before it);
- ``no-speaker``: its own ingest without the ``speaker`` field;
- ``no-time-hints``: ``ranking.time_hints = false`` (no lift for memories of a time the question
  names);
- ``no-recency``, ``no-importance``: ``ranking.recency_weight = 0``, ``ranking.importance_weight = 0``;
- ``no-recency-importance``: both;
- ``no-speaker-boost``: ``ranking.speaker_boost = 0`` (no lift for what the person the question
  names said);
- ``dense-only``: the vector similarity and nothing else: its own ingest without context and
  without speaker, and every ranking weight and hint off. It is the service's nearest counterpart
  of the first row of the comparison table (plain MiniLM cosine over turns), not the same thing:
  the service still embeds a turn with its label and day (``user on 08 May 2023: ...``).

**Held out.** Every figure is also reported for each half of the conversations (`HALVES`: the
odd and the even ones of the data set's order). A ranking decision is made on one half and
judged by its figure on the other, and the other way round; a gain that does not hold on the half
it was not chosen on is not taken. ``--half`` runs one half alone: the memory-tuned embedder
(``--embedder minilm-memory``) is trained on half A and judged on half B.

Configurations that share an ingest share one runtime and data directory (under ``--data-dir``, one
sub-directory per ingest); their searches are interleaved question by question, so that load from
elsewhere on the machine falls on every row alike. Figures are printed with the comparison table
and the goal check, and written to ``benchmarks/results/locomo[-...].json``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import hashlib
import http.client
import io
import json
import os
import re
import sys
import time
import urllib.parse
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import _corpus
from _opensearch import use_opensearch_store
from agent_memory.tenancy.rules.keys import NewKey

DEFAULT_DATA = Path("/work/shared/data/locomo10.json")
TENANT = "locomo"
#: The plan of the benchmark's key: retention keeps working memory for ever on it (see above).
PLAN = "unlimited"
KS = (5, 10, 25)
MAX_RESULTS = max(KS)
#: Joins the turns one result stands for (a profile credited with its sources).
TURNS_IN_ONE_PLACE = "|"
#: Items per write request (the API's limit).
MAX_ITEMS = 100
CATEGORIES: dict[int, str] = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
#: The two halves ranking decisions are made on: a piece is tuned on one half and its figure is
#: reported on the other (and swapped). Conversations alternate in the data set's order, so each
#: half holds five conversations of every length. Fixed here, never chosen after a run.
HALVES: dict[str, tuple[int, ...]] = {"A": (0, 2, 4, 6, 8), "B": (1, 3, 5, 7, 9)}
SESSION_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_EVIDENCE_ID = re.compile(r"^D(\d+):(\d+)$")
_EVIDENCE_SPLIT = re.compile(r"[;,\s]+")
_SESSION_KEY = re.compile(r"^session_(\d+)$")

#: Plain retrieval over LoCoMo turns (categories 1-4, 1,536 questions, the question as the query,
#: one turn per unit; percent). The first three rows were measured for this benchmark's issue with
#: all-MiniLM-L6-v2 outside the service; the last is the LoCoMo paper's Table 3.
BASELINES: tuple[tuple[str, dict[int, float]], ...] = (
    ("dense MiniLM cosine", {5: 35.3, 10: 44.4, 25: 57.7}),
    ("BM25", {5: 43.0, 10: 50.2, 25: 60.7}),
    ("reciprocal-rank fusion of both", {5: 44.7, 10: 52.7, 25: 63.4}),
    ("LoCoMo paper, DRAGON retriever (much larger model)", {5: 56.7, 10: 66.2, 25: 76.7}),
)
#: What the default configuration (`full`) must reach: the paper's retriever, and a search that
#: stays interactive through the local HTTP API.
GOALS: tuple[tuple[str, str, float], ...] = (
    ("recall@5", ">=", 56.7),
    ("recall@10", ">=", 66.2),
    ("search p95 ms", "<=", 50.0),
)


# --------------------------------------------------------------------------------------------
# Configurations
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Ingest:
    """One way of writing the conversations, in its own runtime and data directory.

    ``context_turns`` None leaves the service's default (``AGENT_MEMORY_CONTEXT_TURNS`` unset).
    """

    name: str
    context_turns: int | None
    speaker: bool
    #: Make every speaker's profile (`derived.person_profiles`) once the turns are stored.
    profiles: bool = False
    #: Summarize every session's day (the daily grain of the cascade) once the turns are stored.
    cascade: bool = False


@dataclass(frozen=True, slots=True)
class Config:
    """One row of the table: an ingest, and the ``ranking`` overrides its searches send."""

    name: str
    label: str
    ingest: str
    ranking: Mapping[str, Any] | None = None


INGESTS: dict[str, Ingest] = {
    i.name: i
    for i in (
        Ingest("default", None, speaker=True),
        Ingest("no-context", 0, speaker=True),
        Ingest("no-speaker", None, speaker=False),
        Ingest("bare", 0, speaker=False),
        Ingest("profiles", None, speaker=True, profiles=True),
        Ingest("cascade", None, speaker=True, cascade=True),
    )
}
_ALL_OFF = {
    "lexical_weight": 0.0,
    "recency_weight": 0.0,
    "importance_weight": 0.0,
    "time_hints": False,
    "speaker_boost": 0.0,
}
CONFIGS: dict[str, Config] = {
    c.name: c
    for c in (
        Config("full", "full (defaults)", "default"),
        Config("no-lexical", "no lexical", "default", {"lexical_weight": 0.0}),
        Config("no-context", "no context", "no-context"),
        Config("no-speaker", "no speaker", "no-speaker"),
        Config("no-time-hints", "no time hints", "default", {"time_hints": False}),
        Config("no-recency", "no recency", "default", {"recency_weight": 0.0}),
        Config("no-importance", "no importance", "default", {"importance_weight": 0.0}),
        Config(
            "no-recency-importance",
            "no recency/importance",
            "default",
            {"recency_weight": 0.0, "importance_weight": 0.0},
        ),
        Config("dense-only", "dense only", "bare", _ALL_OFF),
        Config("no-speaker-boost", "no speaker boost", "default", {"speaker_boost": 0.0}),
        # profiles searched with the turns: a profile takes a place and names no turn ...
        Config("profiles", "with profiles", "profiles"),
        # ... or it stands for its statements, in its place (what an agent reads in it)
        Config("profiles-sources", "with profiles, credited with their sources", "profiles"),
        # the days' summaries found by the question bring in their strongest turns, after the
        # plain ranking's first K places (K tuned on half A)
        *(
            Config(f"summary-children-{k}", f"daily summaries' children after {k}", "cascade")
            for k in (0, 3, 5, 7)
        ),
    )
}
#: The configurations a run makes by default (the rest are measured on request: `--configs`).
DEFAULT_CONFIGS = [name for name in CONFIGS if not name.startswith(("profiles", "summary-"))]
#: `summary-children`: the daily summaries asked for, the turns taken from each summary's day,
#: and how many of the plain ranking's first places are kept before them (tuned on half A).
CHILD_SUMMARIES = 3
CHILDREN_PER_SUMMARY = 2
DEFAULTS: dict[str, Any] = {
    "conversations": 0,
    "configs": "+".join(DEFAULT_CONFIGS),
    "embedder": "minilm",
    "store": "sqlite",
    "half": None,
    "data": DEFAULT_DATA.stem,
    "ranking": "",
    "judge": "minilm",
    "answer_judge": "none",
}


def parse_configs(text: str) -> list[Config]:
    """``"full,no-lexical"`` -> those configurations, in the order of `CONFIGS`, no repeats."""
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in CONFIGS]
    if unknown or not names:
        raise ValueError(f"unknown configuration(s) {unknown or text!r}; choose from {', '.join(CONFIGS)}")
    return [c for c in CONFIGS.values() if c.name in names]


def with_overrides(configs: Sequence[Config], overrides: Mapping[str, Any]) -> list[Config]:
    """Each configuration with ``overrides`` (``--ranking``) on top of its own ranking: a screen of
    one weight under every row."""
    if not overrides:
        return list(configs)
    return [dataclasses.replace(c, ranking={**(c.ranking or {}), **overrides}) for c in configs]


# --------------------------------------------------------------------------------------------
# The data set
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    speaker: str
    content: str
    occurred_at: datetime


@dataclass(frozen=True, slots=True)
class Session:
    number: int
    started: datetime
    turns: tuple[Turn, ...]


@dataclass(frozen=True, slots=True)
class Question:
    index: int  # its position in the conversation's ``qa`` list, to join with the data set
    text: str
    category: int
    evidence: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Conversation:
    sample_id: str
    agent_id: str
    sessions: tuple[Session, ...]
    questions: tuple[Question, ...]
    #: Evidence entries of its questions that are not a turn id at all (skipped).
    malformed_evidence: int = 0

    @property
    def turns(self) -> list[Turn]:
        return [t for s in self.sessions for t in s.turns]

    @property
    def as_of(self) -> datetime:
        """One day after the latest session began: "today", just after the conversation."""
        return max(s.started for s in self.sessions) + timedelta(days=1)


def parse_session_date(text: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` -> 2023-05-08 13:56 UTC (the data names no zone)."""
    normalised = " ".join(text.split())
    return datetime.strptime(normalised, SESSION_DATE_FORMAT).replace(tzinfo=UTC)


def turn_content(turn: Mapping[str, Any]) -> str:
    """What a turn says; a shared photo is described by its caption."""
    text = str(turn.get("text") or "").strip()
    caption = str(turn.get("blip_caption") or "").strip()
    if caption:
        photo = f"[shared a photo: {caption}]"
        text = f"{text} {photo}" if text else photo
    if not text:
        raise ValueError(f"turn {turn.get('dia_id')!r} says nothing")
    return text


def parse_evidence(raw: Iterable[str]) -> tuple[list[str], int]:
    """Turn ids from a question's evidence list, read leniently; and how many entries were skipped.

    A few entries hold several ids (``"D8:6; D9:17"``, ``"D9:1 D4:4 D4:6"``), some pad the turn
    number (``"D30:05"`` is ``D30:5``), and some are not ids at all (``"D"``, ``"D:11:26"``): split
    on ``;``, ``,`` and whitespace, normalise the numbers, skip what is not ``D<session>:<turn>``,
    and keep each id once, in order.
    """
    out: list[str] = []
    skipped = 0
    for entry in raw:
        for part in _EVIDENCE_SPLIT.split(str(entry)):
            if not part:
                continue
            match = _EVIDENCE_ID.match(part)
            if match is None:
                skipped += 1
                continue
            dia_id = f"D{int(match[1])}:{int(match[2])}"
            if dia_id not in out:
                out.append(dia_id)
    return out, skipped


def agent_id_for(sample_id: str) -> str:
    """``locomo-<sample_id>``, made to fit the API's id pattern."""
    agent = re.sub(r"[^A-Za-z0-9._-]", "-", f"locomo-{sample_id}")[:128]
    if not _ID_PATTERN.match(agent):
        raise ValueError(f"cannot make an agent id of sample {sample_id!r}")
    return agent


def parse_conversation(sample: Mapping[str, Any]) -> Conversation:
    """One sample of the data set: its sessions with turns (in order) and its questions 1-4.

    Sessions are the ``session_N`` keys that hold turns (one conversation has dates of sessions
    that have none). Questions of category 5 and questions left with no evidence id are dropped.
    """
    sample_id = str(sample["sample_id"])
    conversation = sample["conversation"]
    numbers = sorted(
        int(m[1]) for key in conversation if (m := _SESSION_KEY.match(key)) and conversation[key]
    )
    sessions = []
    for n in numbers:
        started = parse_session_date(conversation[f"session_{n}_date_time"])
        turns = tuple(
            Turn(
                dia_id=str(t["dia_id"]),
                speaker=str(t["speaker"]).strip(),
                content=turn_content(t),
                occurred_at=started + timedelta(seconds=i),
            )
            for i, t in enumerate(conversation[f"session_{n}"])
        )
        sessions.append(Session(number=n, started=started, turns=turns))
    questions = []
    malformed = 0
    for index, qa in enumerate(sample.get("qa", [])):
        category = int(qa.get("category", 0))
        if category not in CATEGORIES:
            continue
        evidence, skipped = parse_evidence(qa.get("evidence") or [])
        malformed += skipped
        if evidence:
            questions.append(Question(index, str(qa["question"]), category, tuple(evidence)))
    return Conversation(
        sample_id=sample_id,
        agent_id=agent_id_for(sample_id),
        sessions=tuple(sessions),
        questions=tuple(questions),
        malformed_evidence=malformed,
    )


def load_conversations(path: Path, limit: int = 0) -> list[Conversation]:
    """The data set's conversations (the first ``limit`` of them, if given)."""
    samples = json.loads(path.read_text(encoding="utf-8"))
    if limit:
        samples = samples[:limit]
    conversations = [parse_conversation(s) for s in samples]
    agents = [c.agent_id for c in conversations]
    if len(set(agents)) != len(agents):
        raise ValueError("two conversations map to the same agent id")
    return conversations


def _or_default(value: int | None) -> str:
    return "default" if value is None else str(value)


def _iso(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


def write_requests(
    conversation: Conversation, speaker: bool = True
) -> list[tuple[list[str], dict[str, Any]]]:
    """The write requests of one conversation: one per session (split at `MAX_ITEMS`), in order.

    Each comes with the ``dia_id`` of its items, to pair with the ids the API accepts.
    """
    requests = []
    for session in conversation.sessions:
        items = [
            {
                "content": t.content,
                "role": "user",
                **({"speaker": t.speaker} if speaker and t.speaker else {}),
                "occurred_at": _iso(t.occurred_at),
                "conversation_id": f"{conversation.sample_id}-s{session.number}",
                "kind": "conversation",
                "source": {"platform": "locomo", "message_id": t.dia_id},
            }
            for t in session.turns
        ]
        for start in range(0, len(items), MAX_ITEMS):
            chunk = items[start : start + MAX_ITEMS]
            requests.append(([i["source"]["message_id"] for i in chunk], {"items": chunk}))
    return requests


def search_body(question: Question, as_of: datetime, ranking: Mapping[str, Any] | None) -> dict[str, Any]:
    body: dict[str, Any] = {
        "query": question.text,
        "grain": "working",
        "max_results": MAX_RESULTS,
        "as_of": _iso(as_of),
    }
    if ranking:
        body["ranking"] = dict(ranking)
    return body


def result_turns(response: Mapping[str, Any], sources: Mapping[str, str] | None = None) -> list[str]:
    """The ``dia_id`` of each result, in rank order. A result without one (a profile) takes its
    place under its record id, naming no turn; with ``sources`` (record id -> dia_id) it names
    the turns it was made from, in that one place (joined by `TURNS_IN_ONE_PLACE`)."""
    out: list[str] = []
    for r in response.get("results", []):
        message_id = (r.get("source") or {}).get("message_id")
        if message_id:
            entry = message_id
        else:
            turns = [sources[i] for i in r.get("source_ids", []) if i in sources] if sources else []
            entry = TURNS_IN_ONE_PLACE.join(turns) if turns else f"record:{r['id']}"
        if entry not in out:
            out.append(entry)
    return out


def turns_in(retrieved: Sequence[str], k: int) -> set[str]:
    """The turns the first ``k`` places name."""
    return {t for entry in retrieved[:k] for t in entry.split(TURNS_IN_ONE_PLACE)}


# --------------------------------------------------------------------------------------------
# Scoring
# --------------------------------------------------------------------------------------------


def recall_at(retrieved: Sequence[str], evidence: Sequence[str], k: int) -> float:
    """The share of the evidence turns among the first ``k`` retrieved."""
    wanted = set(evidence)
    if not wanted:
        raise ValueError("a question without evidence cannot be scored")
    return len(wanted & turns_in(retrieved, k)) / len(wanted)


def all_found_at(retrieved: Sequence[str], evidence: Sequence[str], k: int) -> bool:
    """Whether every evidence turn is among the first ``k`` retrieved."""
    return set(evidence) <= turns_in(retrieved, k)


@dataclass(frozen=True, slots=True)
class Outcome:
    """One question asked under one configuration."""

    category: int
    evidence: tuple[str, ...]
    retrieved: tuple[str, ...]
    ms: float = 0.0


def _pct(values: Sequence[float]) -> float:
    return round(100.0 * sum(values) / len(values), 2)


def score(outcomes: Sequence[Outcome], ks: Sequence[int] = KS) -> dict[str, Any]:
    """recall@k and all-evidence@k in percent, overall and per category, over ``outcomes``."""
    if not outcomes:
        raise ValueError("no questions to score")

    def block(rows: Sequence[Outcome]) -> dict[str, Any]:
        return {
            "questions": len(rows),
            "recall": {str(k): _pct([recall_at(o.retrieved, o.evidence, k) for o in rows]) for k in ks},
            "all_evidence": {
                str(k): _pct([float(all_found_at(o.retrieved, o.evidence, k)) for o in rows]) for k in ks
            },
        }

    out = block(outcomes)
    out["by_category"] = {
        str(cat): block(rows)
        for cat in sorted(CATEGORIES)
        if (rows := [o for o in outcomes if o.category == cat])
    }
    return out


def halves(
    conversations: Sequence[Conversation], rows: Sequence[tuple[Conversation, Question, Outcome]]
) -> dict[str, Any]:
    """`score` of each half of `HALVES` (by the conversation's position in the data set)."""
    position = {c.sample_id: i for i, c in enumerate(conversations)}
    out = {}
    for name, members in HALVES.items():
        outcomes = [o for c, _, o in rows if position[c.sample_id] in members]
        if outcomes:
            out[name] = score(outcomes)
    return out


def goal_check(metrics: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each goal of `GOALS` against one configuration's figures."""
    values = {
        "recall@5": metrics["recall"]["5"],
        "recall@10": metrics["recall"]["10"],
        "search p95 ms": metrics["latency_ms"]["p95"],
    }
    checks = []
    for name, op, target in GOALS:
        value = values[name]
        passed = value >= target if op == ">=" else value <= target
        checks.append({"figure": name, "target": f"{op} {target:g}", "value": value, "pass": passed})
    return checks


# --------------------------------------------------------------------------------------------
# Talking to the runtime
# --------------------------------------------------------------------------------------------


class ApiClient:
    """JSON over one keep-alive ``http.client`` connection, with a bearer key.

    A dropped connection is reopened once and the request sent again: writes are safe to repeat
    (their ids come from their content) and searches change nothing that matters here.
    """

    def __init__(self, base_url: str, key: str) -> None:
        host, port = base_url.removeprefix("http://").rsplit(":", 1)
        self._host, self._port = host, int(port)
        self._conn = http.client.HTTPConnection(self._host, self._port, timeout=60)
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def request(self, method: str, path: str, body: Mapping[str, Any] | None = None) -> tuple[int, bytes]:
        data = None if body is None else json.dumps(body).encode()
        for attempt in (1, 2):
            try:
                self._conn.request(method, path, body=data, headers=self._headers)
                response = self._conn.getresponse()
                return response.status, response.read()
            except (http.client.RemoteDisconnected, ConnectionError):
                self._conn.close()
                self._conn = http.client.HTTPConnection(self._host, self._port, timeout=60)
                if attempt == 2:
                    raise
        raise AssertionError("unreachable")

    def json(self, method: str, path: str, body: Mapping[str, Any] | None = None, ok: int = 200) -> Any:
        status, data = self.request(method, path, body)
        if status != ok:
            raise RuntimeError(f"{method} {path} answered {status}: {data[:500].decode(errors='replace')}")
        return json.loads(data)

    def close(self) -> None:
        self._conn.close()


@dataclass
class IngestReport:
    turns: int = 0
    records: int = 0
    merged: list[str] = field(default_factory=list)  # dia_ids merged into a near duplicate
    post_ms: list[float] = field(default_factory=list)
    write_s: float = 0.0
    drain_s: float = 0.0
    #: record id -> dia_id of every accepted turn
    sources: dict[str, str] = field(default_factory=dict)


def ingest(
    client: ApiClient, conversations: Sequence[Conversation], speaker: bool
) -> dict[str, list[tuple[str, str]]]:
    """POST every session of every conversation; the accepted ``(dia_id, record id)`` per agent."""
    accepted: dict[str, list[tuple[str, str]]] = {}
    for conversation in conversations:
        path = f"/v1/agents/{conversation.agent_id}/memories"
        pairs = accepted.setdefault(conversation.agent_id, [])
        for dia_ids, body in write_requests(conversation, speaker):
            answer = client.json("POST", path, body, ok=202)
            ids = [a["id"] for a in answer["accepted"]]
            if len(ids) != len(dia_ids):
                raise RuntimeError(f"{path}: {len(dia_ids)} items sent, {len(ids)} accepted")
            pairs.extend(zip(dia_ids, ids, strict=True))
    return accepted


def wait_until_stored(client: ApiClient, agents: Sequence[str], timeout_s: float) -> float:
    """Poll every agent's stats until none has a pending write; the seconds it took."""
    started = time.perf_counter()
    while True:
        pending = sum(client.json("GET", f"/v1/agents/{a}/stats")["pending_writes"] for a in agents)
        waited = time.perf_counter() - started
        print(f"\r  {pending:,} writes pending ({waited:.0f} s)   ", end="", file=sys.stderr, flush=True)
        if pending == 0:
            print(file=sys.stderr)
            return waited
        if waited > timeout_s:
            print(file=sys.stderr)
            raise RuntimeError(f"{pending} writes still pending after {timeout_s:g} s")
        time.sleep(1.0)


def check_stored(client: ApiClient, agent: str, accepted: Sequence[tuple[str, str]]) -> tuple[int, list[str]]:
    """Every accepted turn of ``agent`` stored: (records stored, dia_ids merged into another).

    A turn whose id is not among the agent's records must resolve through the API (dedup-on-write
    keeps the older record and answers for the merged id); one that does not was lost.
    """
    stored: dict[str, str | None] = {}
    cursor: str | None = None
    while True:
        query = {"grain": "working", "limit": "100", **({"cursor": cursor} if cursor else {})}
        page = client.json("GET", f"/v1/agents/{agent}/memories?{urllib.parse.urlencode(query)}")
        for item in page["items"]:
            stored[item["id"]] = (item.get("source") or {}).get("message_id")
        cursor = page.get("next_cursor")
        if not cursor:
            break
    merged, lost = [], []
    for dia_id, record_id in accepted:
        if record_id in stored:
            continue
        status, _ = client.request("GET", f"/v1/agents/{agent}/memories/{record_id}")
        (merged if status == 200 else lost).append(dia_id)
    if lost:
        raise RuntimeError(f"{agent}: {len(lost)} accepted turns are not stored, e.g. {lost[:5]}")
    return len(stored), merged


class Runtime:
    """A `LocalRuntime` in this process on a fresh data directory, for one ingest.

    The environment is what `make dev` runs with (quietened, see `_corpus.configure_environment`),
    the embedder ``embedder``, write-time context ``context_turns`` (None: the default), and no
    scheduler: the cascade and retention have nothing to do with retrieval over turns.
    """

    def __init__(self, data_dir: Path, embedder: str, context_turns: int | None) -> None:
        _corpus.configure_environment(data_dir, embedder)
        if context_turns is None:
            os.environ.pop("AGENT_MEMORY_CONTEXT_TURNS", None)
        else:
            os.environ["AGENT_MEMORY_CONTEXT_TURNS"] = str(context_turns)
        os.environ["AGENT_MEMORY_SCHEDULER_ENABLED"] = "false"
        # The conversations are years old: a profile reads all of them, however long ago.
        os.environ["AGENT_MEMORY_PROFILE_WINDOW_DAYS"] = "3650"
        from agent_memory import container
        from agent_memory.local.server import LocalRuntime
        from agent_memory.settings import get_settings

        # Powertools warns when a request added no metric (not a problem here; they are disabled).
        warnings.filterwarnings("ignore", message="No application metrics to publish")
        container.reset()
        self.settings = get_settings()
        self.embedder_id: str = container.embedder().model_id
        if self.settings.store == "opensearch":  # an alias of its own for each ingest
            use_opensearch_store("locomo")
            self.settings = get_settings()
        _corpus.import_handlers()
        self._runtime = LocalRuntime(self.settings, host="127.0.0.1", port=0, scheduler=False)
        _, key = self._runtime.keys.create(NewKey(TENANT, PLAN))
        self._runtime.start()
        self.client = ApiClient(self._runtime.url, key)

    def close(self) -> None:
        from agent_memory import container

        self.client.close()
        self._runtime.stop()
        store = container.store()
        if hasattr(store, "close"):  # the SQLite stores; an OpenSearch alias is left to its node
            store.close()


def run_ingest(
    runtime: Runtime, conversations: Sequence[Conversation], speaker: bool, timeout_s: float
) -> IngestReport:
    report = IngestReport(turns=sum(len(c.turns) for c in conversations))
    started = time.perf_counter()
    accepted = ingest(runtime.client, conversations, speaker)
    report.sources = {rid: dia for pairs in accepted.values() for dia, rid in pairs}
    report.write_s = time.perf_counter() - started
    report.drain_s = wait_until_stored(runtime.client, [c.agent_id for c in conversations], timeout_s)
    for conversation in conversations:
        records, merged = check_stored(runtime.client, conversation.agent_id, accepted[conversation.agent_id])
        report.records += records
        report.merged.extend(f"{conversation.sample_id}:{d}" for d in merged)
    return report


def summarize_days(runtime: Runtime, conversations: Sequence[Conversation], timeout_s: float) -> int:
    """Every session's day summarized (the daily grain), through the runtime's job worker and
    writer; how many summary jobs were queued."""
    from agent_memory import container
    from agent_memory.model.grains import Grain

    days = sorted({s.started.date().isoformat() for c in conversations for s in c.sessions})
    queued = sum(container.dispatch_service().dispatch_period(Grain.DAILY, d, tenant_id=TENANT) for d in days)
    jobs = container.job_queue().queue  # type: ignore[attr-defined]
    started = time.perf_counter()
    while jobs.depth() > 0:
        if time.perf_counter() - started > timeout_s:
            raise RuntimeError(f"{jobs.depth()} summary jobs still queued after {timeout_s:g} s")
        time.sleep(0.5)
    wait_until_stored(runtime.client, [c.agent_id for c in conversations], timeout_s)
    return queued


def day_children(client: ApiClient, path: str, question: Question, as_of: datetime) -> list[str]:
    """The strongest turns (by the same ranking) of the days whose summaries the question finds
    best, best summary first."""
    daily = {"query": question.text, "grain": "daily", "max_results": CHILD_SUMMARIES, "as_of": _iso(as_of)}
    children: list[str] = []
    for summary in client.json("POST", path, daily)["results"]:
        start = datetime.fromisoformat(summary["time_key"]).replace(tzinfo=UTC)  # a day of UTC
        end = start + timedelta(days=1)
        window = {
            **search_body(question, as_of, None),
            "max_results": CHILDREN_PER_SUMMARY,
            "min_days_ago": max((as_of - end).total_seconds() / 86_400, 0.0),
            "max_days_ago": (as_of - start).total_seconds() / 86_400,
        }
        children += result_turns(client.json("POST", path, window))
    return list(dict.fromkeys(children))


def with_children(plain: Sequence[str], children: Sequence[str], keep_head: int) -> list[str]:
    """The plain ranking's first ``keep_head`` places, then ``children``, then the rest."""
    head = list(plain[:keep_head])
    merged = head + [c for c in children if c not in head]
    return merged + [t for t in plain if t not in merged]


def make_profiles(runtime: Runtime, conversations: Sequence[Conversation], timeout_s: float) -> int:
    """Every speaker's profile, made in this process and stored by the runtime's writer; how many."""
    from agent_memory.local import agent_jobs_command

    report = agent_jobs_command.run_profiles(TENANT, None, wait=False)
    wait_until_stored(runtime.client, [c.agent_id for c in conversations], timeout_s)
    return int(report["made"])


def ask(
    runtime: Runtime,
    conversations: Sequence[Conversation],
    configs: Sequence[Config],
    sources: Mapping[str, str] | None = None,
) -> dict[str, list[tuple[Conversation, Question, Outcome]]]:
    """Every question under every configuration, interleaved; one untimed search per agent first."""
    client = runtime.client
    out: dict[str, list[tuple[Conversation, Question, Outcome]]] = {c.name: [] for c in configs}
    total = sum(len(c.questions) for c in conversations)
    done = 0
    for conversation in conversations:
        path = f"/v1/agents/{conversation.agent_id}/memories/search"
        as_of = conversation.as_of
        if conversation.questions:  # reads the agent's vectors into the cache
            client.json("POST", path, search_body(conversation.questions[0], as_of, None))
        for question in conversation.questions:
            children: list[str] | None = None  # the summaries' children, asked once per question
            for config in configs:
                body = search_body(question, as_of, config.ranking)
                started = time.perf_counter()
                status, data = client.request("POST", path, body)
                ms = (time.perf_counter() - started) * 1000
                if status != 200:
                    raise RuntimeError(f"search ({config.name}) answered {status}: {data[:500]!r}")
                credit = sources if config.name == "profiles-sources" else None
                retrieved = tuple(result_turns(json.loads(data), credit))
                if config.name.startswith("summary-children-"):
                    if children is None:
                        children = day_children(client, path, question, as_of)
                    keep = int(config.name.rsplit("-", 1)[1])
                    retrieved = tuple(with_children(retrieved, children, keep))
                outcome = Outcome(question.category, question.evidence, retrieved, ms)
                out[config.name].append((conversation, question, outcome))
            done += 1
            if done % 25 == 0 or done == total:
                print(f"\r  {done:,}/{total:,} questions", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return out


# --------------------------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------------------------


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def data_summary(conversations: Sequence[Conversation]) -> dict[str, Any]:
    """What was read from the data set, and the evidence that can never be found."""
    turn_ids = {c.sample_id: {t.dia_id for t in c.turns} for c in conversations}
    unknown = sum(
        1 for c in conversations for q in c.questions for e in q.evidence if e not in turn_ids[c.sample_id]
    )
    return {
        "conversations": len(conversations),
        "sessions": sum(len(c.sessions) for c in conversations),
        "turns": sum(len(c.turns) for c in conversations),
        "questions": sum(len(c.questions) for c in conversations),
        "questions_by_category": {
            str(cat): sum(1 for c in conversations for q in c.questions if q.category == cat)
            for cat in sorted(CATEGORIES)
        },
        "evidence_ids": sum(len(q.evidence) for c in conversations for q in c.questions),
        "malformed_evidence_entries_skipped": sum(c.malformed_evidence for c in conversations),
        "evidence_ids_naming_no_turn": unknown,
    }


def run(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    load_at_start, run_started = _corpus.at_start(), time.perf_counter()
    everything = load_conversations(args.data, args.conversations)
    conversations = [c for i, c in enumerate(everything) if args.half is None or i in HALVES[args.half]]
    data = data_summary(conversations)
    print(
        f"LoCoMo: {data['conversations']} conversations, {data['turns']:,} turns, "
        f"{data['questions']:,} questions (categories 1-4)",
        file=sys.stderr,
    )
    evidence_turns = {f"{c.sample_id}:{e}" for c in conversations for q in c.questions for e in q.evidence}
    ingests: dict[str, Any] = {}
    configs: dict[str, Any] = {}
    embedder_id = None
    details = []
    for ingest_name in dict.fromkeys(c.ingest for c in args.configs):
        variant = INGESTS[ingest_name]
        wanted = [c for c in args.configs if c.ingest == ingest_name]
        print(
            f"ingest {ingest_name!r} (context turns: {_or_default(variant.context_turns)}, "
            f"speaker: {'yes' if variant.speaker else 'no'}) for {', '.join(c.name for c in wanted)}",
            file=sys.stderr,
        )
        stray = io.StringIO()
        runtime = Runtime(data_dir / ingest_name, args.embedder, variant.context_turns)
        embedder_id = runtime.embedder_id
        try:
            with contextlib.redirect_stdout(stray):  # see `_corpus.note_stray_output`
                stored = run_ingest(runtime, conversations, variant.speaker, args.ingest_timeout_s)
                print(
                    f"  stored {stored.records:,} records of {stored.turns:,} turns "
                    f"({len(stored.merged)} merged into a near duplicate); "
                    f"POSTs {stored.write_s:.1f} s, then {stored.drain_s:.0f} s until stored",
                    file=sys.stderr,
                )
                if variant.profiles:
                    made = make_profiles(runtime, conversations, args.ingest_timeout_s)
                    print(f"  made {made} profiles", file=sys.stderr)
                if variant.cascade:
                    jobs = summarize_days(runtime, conversations, args.ingest_timeout_s)
                    print(f"  summarized the sessions' days ({jobs} jobs)", file=sys.stderr)
                answers = ask(runtime, conversations, wanted, stored.sources)
        finally:
            runtime.close()
            _corpus.note_stray_output(stray.getvalue())
        ingests[ingest_name] = {
            # what the runtime ran with (the service's default unless the ingest sets it)
            "context_turns": runtime.settings.model_dump().get("context_turns", variant.context_turns),
            "speaker": variant.speaker,
            "turns": stored.turns,
            "records": stored.records,
            "merged_into_near_duplicate": len(stored.merged),
            "merged_evidence_turns": sum(1 for d in stored.merged if d in evidence_turns),
            "post_s": round(stored.write_s, 2),
            "until_stored_s": round(stored.drain_s, 1),
        }
        for config in wanted:
            rows = answers[config.name]
            metrics = score([o for _, _, o in rows])
            metrics["latency_ms"] = _corpus.summarize([o.ms for _, _, o in rows])
            metrics["halves"] = halves(everything, rows)
            configs[config.name] = {
                "label": config.label,
                "ingest": config.ingest,
                "ranking": dict(config.ranking) if config.ranking else None,
                **metrics,
            }
            details.extend(
                {
                    "config": config.name,
                    "sample_id": c.sample_id,
                    "qa_index": q.index,
                    "category": q.category,
                    "evidence": list(q.evidence),
                    "retrieved": list(o.retrieved),
                    "ms": round(o.ms, 2),
                }
                for c, q, o in rows
            )
    if args.details is not None:
        args.details.write_text("".join(json.dumps(d) + "\n" for d in details))

    complete = (
        args.conversations == 0 and args.embedder == "minilm" and args.half is None and not args.ranking
    )
    return {
        **_corpus.result_header("locomo", run_started, load_at_start),
        "params": {
            "data": args.data.name,
            "data_sha256": _sha256(args.data),
            "conversations": args.conversations or "all",
            "half": args.half or "both",
            "configs": [c.name for c in args.configs],
            "embedder": embedder_id,
            "max_results": MAX_RESULTS,
            "grain": "working",
            "as_of": "one day after the conversation's last session",
            "plan": PLAN,
        },
        "data": data,
        "ingests": ingests,
        "configs": configs,
        "baselines": [{"method": m, "recall": {str(k): v for k, v in r.items()}} for m, r in BASELINES],
        "goals": goal_check(configs["full"]) if "full" in configs and complete else None,
    }


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(head[i]), *(len(r[i]) for r in rows)) for i in range(len(head))]
    lines = [
        "  ".join(
            h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(head, widths, strict=True))
        )
    ]
    for row in rows:
        lines.append(
            "  ".join(
                c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    return "\n".join(lines)


def report(result: Mapping[str, Any]) -> str:
    p, d = result["params"], result["data"]
    lines = [
        f"LoCoMo retrieval through the local HTTP API: {d['conversations']} conversations, "
        f"{d['turns']:,} turns, {d['questions']:,} questions (categories 1-4), {p['embedder']}, "
        f"top {p['max_results']} of working memory",
        f"evidence: {d['evidence_ids']:,} turn ids ({d['malformed_evidence_entries_skipped']} malformed "
        f"entries skipped, {d['evidence_ids_naming_no_turn']} naming no turn)",
        "",
    ]
    for name, ing in result["ingests"].items():
        lines.append(
            f"ingest {name}: context turns {ing['context_turns']}, "
            f"speaker {'on' if ing['speaker'] else 'off'}: {ing['records']:,} records of {ing['turns']:,} "
            f"turns, {ing['merged_into_near_duplicate']} merged ({ing['merged_evidence_turns']} of them "
            f"evidence); stored {ing['until_stored_s']:g} s after the POSTs"
        )
    head = ["config", "r@5", "r@10", "r@25", "all@5", "all@10", "all@25"]
    head += [f"{CATEGORIES[c]}@10" for c in sorted(CATEGORIES)] + ["p50 ms", "p95 ms"]
    rows = []
    for name, m in result["configs"].items():
        cats = [
            f"{m['by_category'][str(c)]['recall']['10']:.1f}" if str(c) in m["by_category"] else "-"
            for c in sorted(CATEGORIES)
        ]
        rows.append(
            [
                name,
                *(f"{m['recall'][str(k)]:.1f}" for k in KS),
                *(f"{m['all_evidence'][str(k)]:.1f}" for k in KS),
                *cats,
                f"{m['latency_ms']['p50']:.1f}",
                f"{m['latency_ms']['p95']:.1f}",
            ]
        )
    lines += ["", "recall and all-evidence hit rate (percent of questions), search latency through HTTP", ""]
    lines.append(_table(head, rows))
    half_head = ["config", "half", "r@5", "r@10", "r@25", "all@10"]
    half_head += [f"{CATEGORIES[c]}@10" for c in sorted(CATEGORIES)]
    half_rows = []
    for name, m in result["configs"].items():
        for half, h in m.get("halves", {}).items():
            cats = [
                f"{h['by_category'][str(c)]['recall']['10']:.1f}" if str(c) in h["by_category"] else "-"
                for c in sorted(CATEGORIES)
            ]
            half_rows.append(
                [
                    name,
                    half,
                    *(f"{h['recall'][str(k)]:.1f}" for k in KS),
                    f"{h['all_evidence']['10']:.1f}",
                    *cats,
                ]
            )
    if half_rows:
        members = "; ".join(
            f"{h}: conversations {', '.join(str(i + 1) for i in m)}" for h, m in HALVES.items()
        )
        lines += ["", f"the same per half ({members}): tune on one, report the other", ""]
        lines.append(_table(half_head, half_rows))

    lines += ["", "for comparison: plain retrieval over turns (1,536 questions, percent)", ""]
    lines.append(
        _table(
            ["method over turns", "recall@5", "recall@10", "recall@25"],
            [[m, *(f"{r[k]:.1f}" for k in KS)] for m, r in BASELINES],
        )
    )
    lines.append("")
    if result["goals"] is None:
        lines.append("goal check: only for a complete run with MiniLM that includes 'full'")
    else:
        lines.append("goal check (full):")
        for g in result["goals"]:
            lines.append(
                f"  {g['figure']:<14} {g['value']:>6.1f}  (goal {g['target']})  "
                f"{'PASS' if g['pass'] else 'FAIL'}"
            )
    return "\n".join(lines)


@contextlib.contextmanager
def _opensearch_store(store: str) -> Iterator[None]:
    """With ``store == "opensearch"``, every runtime of the run keeps memory in OpenSearch, on the
    node ``OPENSEARCH_URL`` names (`make opensearch-up` starts one), each ingest in an alias of
    its own; everything else (keys, queue, pending marks) stays local."""
    if store != "opensearch":
        yield
        return
    url = os.environ.get("OPENSEARCH_URL")
    if not url:
        raise SystemExit("--store opensearch needs OPENSEARCH_URL (`make opensearch-up` prints it)")
    os.environ["AGENT_MEMORY_STORE"] = "opensearch"
    os.environ["AGENT_MEMORY_OPENSEARCH_ENDPOINT"] = url
    os.environ["AGENT_MEMORY_OPENSEARCH_TIMEOUT_S"] = "60"
    yield


@contextlib.contextmanager
def _serverless_store(store: str, data_dir: Path) -> Iterator[None]:
    """With ``store == "s3"``, every runtime of the run keeps memory in the serverless store: each
    tenant's file uploaded to and downloaded from an S3 bucket emulated in this process (moto), so
    the figures are those of the code that runs in AWS, minus S3's network time."""
    if store != "s3":
        yield
        return
    import boto3
    from moto import mock_aws

    for name, value in {
        "AWS_ACCESS_KEY_ID": "bench",
        "AWS_SECRET_ACCESS_KEY": "bench",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AGENT_MEMORY_STORE": "s3",
        "AGENT_MEMORY_STORE_BUCKET": "locomo-stores",
        "AGENT_MEMORY_STORE_CACHE_DIR": str(data_dir / "s3-copies"),
    }.items():
        os.environ[name] = value
    with mock_aws():
        boto3.client("s3", region_name="us-east-1").create_bucket(Bucket="locomo-stores")
        yield


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--data", type=Path, default=DEFAULT_DATA, help=f"locomo10.json (default {DEFAULT_DATA})"
    )
    parser.add_argument(
        "--configs",
        default=",".join(DEFAULT_CONFIGS),
        help=f"comma-separated, of: {', '.join(CONFIGS)} (default: all but the profile rows)",
    )
    parser.add_argument(
        "--conversations", type=int, default=0, help="only the first N conversations (quick runs)"
    )
    parser.add_argument(
        "--embedder", choices=("minilm", "minilm-memory", "hashing"), default=DEFAULTS["embedder"]
    )
    parser.add_argument("--half", choices=tuple(HALVES), help="only this half's conversations (HALVES)")
    parser.add_argument(
        "--store",
        choices=("sqlite", "s3", "opensearch"),
        default=DEFAULTS["store"],
        help="s3: the serverless store (each tenant's file in S3), on an in-process S3 (moto); "
        "opensearch: the OpenSearch store on OPENSEARCH_URL (`make opensearch-up`)",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        help="an empty or new directory, one sub-directory per ingest (default: temporary)",
    )
    parser.add_argument(
        "--ingest-timeout-s",
        type=float,
        default=1800.0,
        help="give up waiting for the writes after this long",
    )
    parser.add_argument(
        "--details",
        type=Path,
        help="write every question's retrieved turns as JSON lines here (ids only; outside the repository)",
    )
    _corpus.add_ranking_option(parser)
    _corpus.add_judge_option(parser)
    args = parser.parse_args(argv)
    try:
        args.configs = with_overrides(parse_configs(args.configs), _corpus.ranking_overrides(args))
    except ValueError as exc:
        parser.error(str(exc))
    if args.conversations < 0 or args.ingest_timeout_s <= 0:
        parser.error("--conversations >= 0 and --ingest-timeout-s > 0, please")
    if not args.data.is_file():
        parser.error(f"no data set at {args.data} (LoCoMo's locomo10.json; see --data)")

    _corpus.use_judge(args)
    with (
        _corpus.fresh_data_dir(parser, args.data_dir, "agent-memory-locomo-") as data_dir,
        _serverless_store(args.store, data_dir),
        _opensearch_store(args.store),
    ):
        result = run(args, data_dir)
    print(report(result))
    values = {
        "conversations": args.conversations,
        "configs": "+".join(c.name for c in args.configs),
        "embedder": args.embedder,
        "store": args.store,
        "half": args.half,
        "data": args.data.stem,
        "ranking": "+".join(args.ranking),
        "judge": args.judge,
        "answer_judge": args.answer_judge,
    }
    name = _corpus.result_name("locomo", values, DEFAULTS)
    print(f"\nwritten to {_corpus.write_result(name, result)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

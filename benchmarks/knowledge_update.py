"""Knowledge update on everyday conversation: does the current statement rank first, and are the
supersession marks right, on hand-written cases the ranking was never tuned on?

    python benchmarks/knowledge_update.py [--embedder minilm|minilm-memory|hashing] [--judge minilm|none]
        [--answer-judge minilm|none]
        [--halves A,B,C,D,E,F,G,H,I] [--limit N] [--ranking NAME=VALUE] [--name SUFFIX]
    python benchmarks/knowledge_update.py --halves N     # the held-out half, run once at the end

The cases (`benchmarks/data/knowledge_update/`, README there) are changes of a personal fact (653
in halves A-I: 577 in A-H, 76 in I; halves J to M, read since, and half N, held out, beside them) written
by hand in conversational wording, and the cases that must not supersede (restatements,
additions, another attribute on the same topic):
`cases.jsonl` holds halves A and B, `cases_c.jsonl` half C, written later and committed before any
rule was tuned again, `cases_d.jsonl` half D, written before the search-time ordering by meaning,
`cases_e.jsonl` half E, written after half D's held-out run, `cases_f.jsonl` half F, written after
half E was taken into tuning, `cases_g.jsonl` half G, written after half F's held-out run,
`cases_h.jsonl` half H, written after half G's held-out run and taken into tuning after its own,
`cases_i.jsonl` half I, written after half H's held-out run and taken into tuning after its own,
`cases_j.jsonl` half J, written after half I's held-out run by writers who read neither the
rules nor the earlier cases, `cases_k.jsonl` half K, written the same way after half J's
held-out runs, `cases_l.jsonl` half L, written the same way after half K was read case by case,
`cases_m.jsonl` half M, written the same way after half L's held-out runs, and `cases_n.jsonl`
half N, written the same way after half M's and held out since (``--halves`` picks which halves
run, A to I by default; only their files are read, so a tuning run never reads N).

Each case is one agent: its old session, three sessions of unrelated turns, its new session and
one more unrelated session are written through the local HTTP API (`POST .../memories`, each turn
with its speaker, its date and a conversation per session, as `benchmarks/locomo.py` writes
LoCoMo), then the question is searched ``as_of`` its date and each statement is read back
(`GET .../memories/{id}`) for its marks.

Printed per half (A to M: tuned on by now; N: held out, fixed before the tuning that followed it):

- ``first``: the share of questions whose expected statement ranks first (the new one for an
  update; either for a restatement or an addition, both hold; the one asked about for another
  attribute);
- ``recall@10``: the share of the case's statements (old and new) among the first 10 results;
- ``marked right``: updates whose old statement is marked superseded by the new one, with
  ``valid_to`` the new one's date;
- ``wrongly marked``: must-not-supersede cases whose old statement is marked superseded (a false
  mark hides a true fact: this is the precision that matters);
- the same two as the search's answer shows them (``marked right in the answer``, ``wrongly
  marked in the answer``): the old statement among the results with ``current: false``, by the
  write path's stored marks or by the search's own reading (a later statement it put first);
- search p50/p95 (ms, through HTTP).

Written to ``benchmarks/results/knowledge_update[-...].json`` with each case's outcome. The
write-time marks alone replay offline in seconds (`benchmarks/knowledge_update_replay.py`), which is
where a write-path rule is chosen before this runs.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import _corpus
from locomo import ApiClient, Runtime, wait_until_stored

DATA = Path(__file__).parent / "data" / "knowledge_update"
RESULTS = 10
#: The hour of the day each session starts (turns a minute apart) and each question is asked.
SESSION_HOUR = 10
QUESTION_HOUR = 18


@dataclass(frozen=True)
class Case:
    raw: Mapping[str, Any]

    @property
    def id(self) -> str:
        return str(self.raw["id"])

    @property
    def half(self) -> str:
        return str(self.raw["half"])

    @property
    def supersede(self) -> bool:
        return bool(self.raw["supersede"])

    @property
    def agent(self) -> str:
        return self.id


def file_halves(path: Path) -> set[str]:
    """The halves a cases file holds, by its name: ``cases.jsonl`` A and B, ``cases_<x>.jsonl``
    half X."""
    suffix = path.stem.removeprefix("cases").lstrip("_").upper()
    return {suffix} if suffix else {"A", "B"}


def load(halves: Iterable[str], limit: int = 0) -> tuple[list[Case], list[str]]:
    """The cases of ``halves`` (the first ``limit`` of each when set) and the distractor pool.
    Only the files of ``halves`` are read: a held-out half is not even parsed by a run that tunes
    on the others."""
    pool = [
        json.loads(line)["text"] for line in (DATA / "distractors.jsonl").read_text().splitlines() if line
    ]
    wanted = set(halves)
    cases = [
        Case(json.loads(line))
        for path in sorted(DATA.glob("cases*.jsonl"))
        if file_halves(path) & wanted
        for line in path.read_text().splitlines()
        if line
    ]
    out: list[Case] = []
    for half in sorted(wanted):
        mine = [c for c in cases if c.half == half]
        out.extend(mine[:limit] if limit else mine)
    return out, pool


def _at(day: str, hour: int, minute: int = 0) -> str:
    instant = datetime.fromisoformat(day).replace(hour=hour, minute=minute, tzinfo=UTC)
    return instant.isoformat().replace("+00:00", "Z")


def sessions(case: Case, pool: Sequence[str]) -> list[tuple[str, str, list[tuple[str, str]]]]:
    """Every session of a case in date order: (conversation id, date, [(tag, text)]); a tag names
    the fact turns (``old``, ``new``), the rest are ``-``."""
    raw = case.raw
    out: list[tuple[str, str, list[tuple[str, str]]]] = []
    for side in ("old", "new"):
        s = raw[side]
        turns = [(side if i == s["fact"] else "-", t) for i, t in enumerate(s["turns"])]
        out.append((f"{case.id}-{side}", s["date"], turns))
    for n, d in enumerate(raw["distractors"]):
        out.append((f"{case.id}-d{n}", d["date"], [("-", pool[i]) for i in d["pool"]]))
    return sorted(out, key=lambda x: x[1])


@dataclass
class Outcome:
    case: str
    half: str
    category: str
    supersede: bool
    expect: str
    first: str | None
    ranked: list[str]
    old_marked: bool
    marked_right: bool
    #: The old statement as the search's answer shows it: not current (stored or read at search).
    answer_marked: bool
    answer_marked_right: bool
    new_first_ok: bool
    ms: float
    old_text: str = ""
    new_text: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ranks_first(self) -> bool:
        if self.expect == "either":
            return self.first in ("old", "new")
        return self.first == self.expect

    @property
    def recall(self) -> float:
        top = set(self.ranked[:RESULTS])
        return sum(tag in top for tag in ("old", "new")) / 2


def write(client: ApiClient, cases: Sequence[Case], pool: Sequence[str]) -> dict[str, dict[str, str]]:
    """Write every case's sessions; per case, the record id of ``old`` and ``new``."""
    ids: dict[str, dict[str, str]] = {}
    for case in cases:
        path = f"/v1/agents/{case.agent}/memories"
        for conversation, day, turns in sessions(case, pool):
            items = [
                {
                    "content": text,
                    "role": "user",
                    "speaker": case.raw["speaker"],
                    "occurred_at": _at(day, SESSION_HOUR, i),
                    "conversation_id": conversation,
                    "kind": "conversation",
                    "source": {"platform": "knowledge-update", "message_id": f"{conversation}-{i}-{tag}"},
                }
                for i, (tag, text) in enumerate(turns)
            ]
            answer = client.json("POST", path, {"items": items}, ok=202)
            for (tag, _), accepted in zip(turns, answer["accepted"], strict=True):
                if tag != "-":
                    ids.setdefault(case.id, {})[tag] = accepted["id"]
    return ids


def wait_readable(client: ApiClient, ids: Mapping[str, Mapping[str, str]], timeout_s: float) -> None:
    """Until every case's statements read back (a stats count of pending writes can read 0 a moment
    before the queue's last messages are taken)."""
    started = time.perf_counter()
    for case, mine in ids.items():
        for record_id in mine.values():
            while client.request("GET", f"/v1/agents/{case}/memories/{record_id}")[0] != 200:
                if time.perf_counter() - started > timeout_s:
                    raise RuntimeError(f"{case}: {record_id} still not stored after {timeout_s:g} s")
                time.sleep(1.0)


def _tag(result: Mapping[str, Any], ids: Mapping[str, str]) -> str:
    by_id = {v: k for k, v in ids.items()}
    if result["id"] in by_id:
        return by_id[result["id"]]
    message = str((result.get("source") or {}).get("message_id") or "")
    return message.rsplit("-", 1)[-1] if message.endswith(("-old", "-new")) else "-"


def _head(result: Mapping[str, Any], tag: str) -> dict[str, Any]:
    """One result as the outcome keeps it, to see why a case ranked as it did."""
    return {
        "tag": tag,
        "score": result.get("score"),
        "similarity": result.get("similarity"),
        "recency": result.get("recency"),
        "current": result.get("current"),
        "superseded_by": result.get("superseded_by"),
        "occurred_at": result.get("occurred_at"),
        "content": result.get("content"),
    }


def ask(
    client: ApiClient,
    cases: Sequence[Case],
    ids: Mapping[str, Mapping[str, str]],
    ranking: Mapping[str, float] | None = None,
) -> list[Outcome]:
    """Each case's question searched as of its date (with the search's own ``ranking`` overrides,
    `RankingOverrides`, when given) and its two statements read back."""
    out: list[Outcome] = []
    for case in cases:
        raw, mine = case.raw, ids[case.id]
        question = raw["question"]
        body: dict[str, Any] = {
            "query": question["text"],
            "grain": "working",
            "max_results": RESULTS,
            "as_of": _at(question["date"], QUESTION_HOUR),
        }
        if ranking:
            body["ranking"] = dict(ranking)
        path = f"/v1/agents/{case.agent}/memories"
        started = time.perf_counter()
        found = client.json("POST", f"{path}/search", body)["results"]
        ms = (time.perf_counter() - started) * 1000
        ranked = [_tag(r, mine) for r in found]
        old = client.json("GET", f"{path}/{mine['old']}")
        new = client.json("GET", f"{path}/{mine['new']}")
        new_day = raw["new"]["date"]
        marked_right = _marks_right(old, new, new_day)
        answered = {r["id"]: r for r in found}
        old_answer = answered.get(mine["old"])
        new_answer = answered.get(mine["new"], new)
        out.append(
            Outcome(
                case=case.id,
                half=case.half,
                category=raw["category"],
                supersede=case.supersede,
                expect=raw["expect"],
                first=ranked[0] if ranked else None,
                ranked=ranked,
                old_marked=old.get("superseded_by") is not None or old.get("current") is False,
                marked_right=marked_right,
                answer_marked=old_answer is not None and old_answer.get("current") is False,
                answer_marked_right=old_answer is not None
                and old_answer.get("current") is False
                and _marks_right(old_answer, new_answer, new_day),
                new_first_ok=bool(new.get("current", True)),
                ms=ms,
                old_text=raw["old"]["turns"][raw["old"]["fact"]],
                new_text=raw["new"]["turns"][raw["new"]["fact"]],
                extra={"head": [_head(r, tag) for r, tag in zip(found[:RESULTS], ranked, strict=False)]},
            )
        )
    return out


def _marks_right(old: Mapping[str, Any], new: Mapping[str, Any], new_day: str) -> bool:
    """Whether ``old`` reads as superseded by ``new`` on ``new_day``, and ``new`` as superseding it."""
    return (
        old.get("superseded_by") == new["id"]
        and str(old.get("valid_to") or "").startswith(new_day)
        and old["id"] in (new.get("supersedes") or [])
    )


def _pct(part: int, whole: int) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def score(outcomes: Sequence[Outcome]) -> dict[str, Any]:
    updates = [o for o in outcomes if o.supersede]
    keep = [o for o in outcomes if not o.supersede]
    ms = [o.ms for o in outcomes]
    marks = [o for o in outcomes if o.old_marked]
    return {
        "cases": len(outcomes),
        "first": _pct(sum(o.ranks_first for o in outcomes), len(outcomes)),
        "first_updates": _pct(sum(o.ranks_first for o in updates), len(updates)),
        "first_keep": _pct(sum(o.ranks_first for o in keep), len(keep)),
        "recall_at_10": round(100.0 * sum(o.recall for o in outcomes) / max(len(outcomes), 1), 1),
        "marked_right": _pct(sum(o.marked_right for o in updates), len(updates)),
        "wrongly_marked": _pct(sum(o.old_marked for o in keep), len(keep)),
        "mark_precision": _pct(sum(o.supersede for o in marks), len(marks)),
        "answer_marked_right": _pct(sum(o.answer_marked_right for o in updates), len(updates)),
        "answer_wrongly_marked": _pct(sum(o.answer_marked for o in keep), len(keep)),
        "search_p50_ms": round(_corpus.percentile(ms, 50), 1) if ms else None,
        "search_p95_ms": round(_corpus.percentile(ms, 95), 1) if ms else None,
        "by_category": {
            cat: {
                "cases": len(rows),
                "first": _pct(sum(o.ranks_first for o in rows), len(rows)),
                "marked": _pct(sum(o.old_marked for o in rows), len(rows)),
            }
            for cat in sorted({o.category for o in outcomes})
            for rows in [[o for o in outcomes if o.category == cat]]
        },
    }


def report(by_half: Mapping[str, Mapping[str, Any]]) -> str:
    def cell(v: Any) -> str:
        return "-" if v is None else f"{v}"

    rows = [
        ("current statement ranks first (%)", "first"),
        ("  of updates", "first_updates"),
        ("  of must-not-supersede", "first_keep"),
        ("evidence recall@10 (%)", "recall_at_10"),
        ("updates marked right (%)", "marked_right"),
        ("must-not-supersede wrongly marked (%)", "wrongly_marked"),
        ("precision of the marks (%)", "mark_precision"),
        ("updates marked right in the answer (%)", "answer_marked_right"),
        ("must-not-supersede wrongly marked in the answer (%)", "answer_wrongly_marked"),
        ("search p50 (ms)", "search_p50_ms"),
        ("search p95 (ms)", "search_p95_ms"),
    ]
    halves = sorted(by_half)
    head = "| | " + " | ".join(f"half {h} ({by_half[h]['cases']})" for h in halves) + " |"
    lines = [head, "|---|" + "---:|" * len(halves)]
    for label, key in rows:
        lines.append(f"| {label} | " + " | ".join(cell(by_half[h][key]) for h in halves) + " |")
    lines.append("")
    for h in halves:
        cats = ", ".join(
            f"{c} {v['first']}% first / {v['marked']}% marked" for c, v in by_half[h]["by_category"].items()
        )
        lines.append(f"half {h}: {cats}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", default="minilm", choices=["minilm", "minilm-memory", "hashing"])
    parser.add_argument("--halves", default="A,B,C,D,E,F,G,H,I")
    _corpus.add_judge_option(parser)
    parser.add_argument("--limit", type=int, default=0, help="the first N cases of each half (0: all)")
    parser.add_argument("--data-dir", type=Path, default=None)
    parser.add_argument("--name", default="", help="a suffix for the results file")
    _corpus.add_ranking_option(parser)
    args = parser.parse_args(argv)
    ranking = _corpus.ranking_overrides(args)
    halves = [h.strip() for h in args.halves.split(",") if h.strip()]
    cases, pool = load(halves, args.limit)
    _corpus.use_judge(args)
    with tempfile.TemporaryDirectory(prefix="ku-") as tmp:
        runtime = Runtime(args.data_dir or Path(tmp), args.embedder, None)
        try:
            started = time.perf_counter()
            ids = write(runtime.client, cases, pool)
            wait_until_stored(runtime.client, [c.agent for c in cases], timeout_s=3600)
            wait_readable(runtime.client, ids, timeout_s=3600)
            wait_until_stored(runtime.client, [c.agent for c in cases], timeout_s=3600)
            ingest_s = time.perf_counter() - started
            outcomes = ask(runtime.client, cases, ids, ranking)
        finally:
            runtime.close()
    by_half = {h: score([o for o in outcomes if o.half == h]) for h in halves}
    print(
        f"knowledge update: {len(cases)} cases, embedder {runtime.embedder_id}, "
        f"update judge {args.judge}, answer judge {args.answer_judge}, ingest {ingest_s:.0f} s"
    )
    print(report(by_half))
    payload = {
        "embedder": runtime.embedder_id,
        "update_judge": args.judge,
        "answer_judge": args.answer_judge,
        "halves": by_half,
        "outcomes": [o.__dict__ for o in outcomes],
        "machine": _corpus.machine(),
    }
    suffix = f"-{args.name}" if args.name else ""
    path = _corpus.write_result(f"knowledge_update{suffix}", payload)
    print(f"written to {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

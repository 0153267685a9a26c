"""Learning curve: a simulated agent reviews the same document set ten times and learns from it.

Each run the agent first asks its memory for patterns (``patterns_first``), applies them and
reports whether each held (``confirmed``) or not (``refuted``); then it reviews the documents,
writing each issue it finds as a ``failure`` experience with its run id; then the pattern job
runs (the admin route, as the daily schedule would). The issues are fixed in advance:

* ``alt-text`` is found in every run, ``style-guide-link`` in every run but the fourth;
* ``date-format`` in runs 1-5 only (the team fixed it: from run 6 on the pattern is refuted);
* ``glossary`` appears from run 6 on (a pattern that has to emerge late);
* and every run finds one issue of its own that never comes back (noise).

With the defaults (a pattern needs 3 members from 2 runs) a pattern can appear after run 3 at
the earliest. Printed per run: the patterns known, and each pattern's confidence with the
confirmations and refutations it rests on. Everything goes through the HTTP API of a local
runtime started here (``--embedder hashing`` needs no model; the default is what ``make dev``
runs). `tests/e2e/test_learning_curve.py` runs the same simulation and asserts its shape.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _corpus

RUNS = 10
#: issue -> (how it is written, with {n} varying per run; the runs it is found in)
ISSUES: dict[str, tuple[str, frozenset[int]]] = {
    "alt-text": ("Images in chapter {n} of the handbook have no alt text", frozenset(range(1, 11))),
    "style-guide-link": (
        "The link to the style guide in section {n} of the handbook is broken",
        frozenset(range(1, 11)) - {4},
    ),
    "date-format": ("Table {n} of the handbook mixes ISO and US date formats", frozenset(range(1, 6))),
    "glossary": ("The handbook glossary has no entry for term {n} used in the text", frozenset(range(6, 11))),
}
NOISE = [
    "The cover page uses last year's logo",
    "Footnote numbering restarts in the appendix",
    "A paragraph about parking is duplicated",
    "The index omits the security chapter",
    "Two headings use different capitalisation",
    "A code sample has trailing whitespace",
    "The PDF export drops the colour of warnings",
    "An acronym is expanded twice",
    "The changelog is missing the March release",
    "A screenshot shows an old version of the tool",
]
QUERY = "what problems do reviews of the handbook keep finding?"


@dataclass
class PatternState:
    issue: str
    id: str
    confidence: float
    confirmations: int
    refutations: int
    members: int
    runs: int


@dataclass
class RunRecord:
    run: int
    patterns_known_before: int
    applied: dict[str, str] = field(default_factory=dict)  # issue -> confirmed | refuted
    patterns: list[PatternState] = field(default_factory=list)
    first_results: list[str] = field(default_factory=list)  # kinds of the top results, patterns first


class Http:
    """JSON over the local runtime's HTTP API with one key (admin scope: the pattern route)."""

    def __init__(self, base_url: str, key: str) -> None:
        self.base = base_url.rstrip("/")
        self.key = key

    def __call__(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.base + path, data=data, method=method)
        request.add_header("Authorization", f"Bearer {self.key}")
        request.add_header("Content-Type", "application/json")
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
        return json.loads(raw) if raw else None

    def settle(self, agent: str, timeout_s: float = 60.0) -> None:
        """Until no write, feedback or pattern job of the agent is pending."""
        deadline = time.monotonic() + timeout_s
        while self("GET", f"/v1/agents/{agent}/stats")["pending_writes"]:
            if time.monotonic() > deadline:
                raise TimeoutError("writes still pending")
            time.sleep(0.05)


def issue_of(content: str) -> str:
    """Which issue a pattern states (by the words its members share)."""
    for name, marker in (
        ("alt-text", "alt text"),
        ("style-guide-link", "style guide"),
        ("date-format", "date format"),
        ("glossary", "glossary"),
    ):
        if marker in content.lower():
            return name
    return "noise"


def patterns(http: Http, agent: str) -> list[PatternState]:
    found = http("POST", f"/v1/agents/{agent}/memories/search", {"kinds": ["pattern"], "max_results": 50})[
        "results"
    ]
    return sorted(
        (
            PatternState(
                issue=issue_of(r["content"]),
                id=r["id"],
                confidence=r["experience"]["confidence"],
                confirmations=r["experience"]["confirmations"],
                refutations=r["experience"]["refutations"],
                members=r["experience"]["members"],
                runs=r["experience"]["runs"],
            )
            for r in found
        ),
        key=lambda p: p.issue,
    )


def simulate(http: Http, agent: str, runs: int = RUNS, now: datetime | None = None) -> list[RunRecord]:
    """The ten runs (see the module doc); what was known and learned after each."""
    start = (now or datetime.now(UTC)) - timedelta(days=runs)
    curve: list[RunRecord] = []
    for run in range(1, runs + 1):
        known = patterns(http, agent)
        record = RunRecord(run=run, patterns_known_before=len(known))
        first = http(
            "POST",
            f"/v1/agents/{agent}/memories/search",
            {"query": QUERY, "patterns_first": True, "max_results": 5},
        )["results"]
        record.first_results = [r["kind"] for r in first]
        for pattern in known:  # apply what was learned, then say whether it held
            held = pattern.issue in ISSUES and run in ISSUES[pattern.issue][1]
            record.applied[pattern.issue] = "confirmed" if held else "refuted"
            for outcome in ("applied", record.applied[pattern.issue]):
                http(
                    "POST",
                    f"/v1/agents/{agent}/memories/{pattern.id}/feedback",
                    {"outcome": outcome, "note": f"run {run}"},
                )
        at = start + timedelta(days=run - 1, hours=9)
        items = [
            {
                "kind": "failure",
                "content": text.format(n=run + 2),
                "context": f"review {run} of the handbook",
                "outcome": "sent back to the author",
                "confidence": 0.7,
                "run_id": f"review-{run}",
                "occurred_at": (at + timedelta(minutes=i)).isoformat(),
            }
            for i, (text, present) in enumerate(ISSUES.values())
            if run in present
        ]
        items.append(
            {
                "kind": "failure",
                "content": NOISE[(run - 1) % len(NOISE)],
                "confidence": 0.7,
                "run_id": f"review-{run}",
                "occurred_at": (at + timedelta(minutes=30)).isoformat(),
            }
        )
        http("POST", f"/v1/agents/{agent}/memories", {"items": items})
        http.settle(agent)
        http("POST", "/v1/admin/patterns", {"agent_id": agent})
        http.settle(agent)
        record.patterns = patterns(http, agent)
        curve.append(record)
    return curve


def report(curve: Sequence[RunRecord]) -> str:
    names = list(ISSUES)
    head = f"{'run':>3}  {'known':>5}  " + "  ".join(f"{n:>22}" for n in names)
    lines = [head]
    for r in curve:
        by_issue = {p.issue: p for p in r.patterns}
        cells = []
        for n in names:
            p = by_issue.get(n)
            cells.append(
                f"{p.confidence:.2f} ({p.confirmations}+/{p.refutations}-, {p.members}m)" if p else "-"
            )
        lines.append(f"{r.run:>3}  {len(r.patterns):>5}  " + "  ".join(f"{c:>22}" for c in cells))
    last = curve[-1]
    lines.append(f"run {last.run}: the top results of a patterns-first search are {last.first_results}")
    return "\n".join(lines)


def as_json(curve: Sequence[RunRecord]) -> dict[str, Any]:
    return {
        "runs": [
            {
                "run": r.run,
                "patterns_known_before": r.patterns_known_before,
                "applied": r.applied,
                "first_results": r.first_results,
                "patterns": [p.__dict__ for p in r.patterns],
            }
            for r in curve
        ]
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default="minilm")
    parser.add_argument("--data-dir", type=Path, help="an empty or new directory (default: a temporary one)")
    args = parser.parse_args(argv)
    with _corpus.fresh_data_dir(parser, args.data_dir) as data_dir:
        _corpus.configure_environment(data_dir, args.embedder)
        from agent_memory.local.server import LocalRuntime
        from agent_memory.settings import get_settings
        from agent_memory.tenancy.rules.keys import NewKey

        _corpus.import_handlers()
        runtime = LocalRuntime(get_settings(), host="127.0.0.1", port=0)
        _, key = runtime.keys.create(NewKey("learning", "pro", admin=True))
        runtime.start()
        try:
            curve = simulate(Http(runtime.url, key), "reviewer")
        finally:
            runtime.stop()
    print(report(curve))
    name = _corpus.result_name("learning_curve", {"embedder": args.embedder}, {"embedder": "minilm"})
    print(f"\nwritten to {_corpus.write_result(name, as_json(curve))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

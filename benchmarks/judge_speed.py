"""How long the shipped judges take a pair, on the CPU, as the service runs them (one pair a run).

    python benchmarks/judge_speed.py [--pairs 200] [--threads 1]

The update judge reads an older and a newer statement (`adapters.judges.minilm_update_judge`,
asked by the writer); the answer judge reads a question with both (`minilm_answer_judge`, asked by
a search about the present, up to `recall.rules.current_first.ANSWER_PAIRS` pairs). The pairs are the
old and new fact turns of the knowledge-update cases of halves A-K, with each case's question:
real statement lengths, not a fixed sentence. Each judge reads every pair once untimed (the load
and the first runs), then once timed; p50, p95 and mean milliseconds a pair are printed and
written to ``benchmarks/results/judge_speed[-...].json``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import _corpus
from agent_memory.adapters.judges.minilm_answer_judge import MiniLmAnswerJudge
from agent_memory.adapters.judges.minilm_update_judge import MiniLmUpdateJudge
from knowledge_update import load

DEFAULTS: dict[str, Any] = {"pairs": 200, "threads": 1}


def _timed(read: Callable[[int], object], n: int) -> list[float]:
    for i in range(n):
        read(i)
    out = []
    for i in range(n):
        started = time.perf_counter()
        read(i)
        out.append((time.perf_counter() - started) * 1000)
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=DEFAULTS["pairs"])
    parser.add_argument("--threads", type=int, default=DEFAULTS["threads"])
    args = parser.parse_args(argv)
    load_at_start, started = _corpus.at_start(), time.perf_counter()
    cases, _ = load("ABCDEFGHIJK")
    rows = [
        (
            c.raw["question"]["text"],
            c.raw["old"]["turns"][c.raw["old"]["fact"]],
            c.raw["new"]["turns"][c.raw["new"]["fact"]],
        )
        for c in cases
    ][: args.pairs]
    update, answer = MiniLmUpdateJudge(threads=args.threads), MiniLmAnswerJudge(threads=args.threads)
    timings = {
        "update": _timed(lambda i: update.replaces([rows[i][1:]]), len(rows)),
        "answer": _timed(lambda i: answer.answers(rows[i][0], [rows[i][1:]]), len(rows)),
    }
    figures = {
        name: {
            "p50_ms": round(statistics.median(ms), 2),
            "p95_ms": round(_corpus.percentile(ms, 95), 2),
            "mean_ms": round(statistics.fmean(ms), 2),
        }
        for name, ms in timings.items()
    }
    for name, f in figures.items():
        ms = f"{f['p50_ms']:.1f} ms p50, {f['p95_ms']:.1f} ms p95, {f['mean_ms']:.1f} ms mean"
        print(f"{name} judge: {ms} a pair")
    result = {
        **_corpus.result_header("judge_speed", started, load_at_start),
        "params": {"pairs": len(rows), "threads": args.threads},
        "judges": figures,
    }
    name = _corpus.result_name("judge_speed", {"pairs": args.pairs, "threads": args.threads}, DEFAULTS)
    print(f"written to {_corpus.write_result(name, result)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

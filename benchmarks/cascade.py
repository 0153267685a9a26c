"""The grain cascade over a year: wall time on the local adapters, and what Bedrock would cost.

    python benchmarks/cascade.py [--days 365] [--per-day 50] [--embedder hashing|minilm]

One agent, ``--days`` days of ``--per-day`` memories a day from January 1st of the year before
`_corpus.ANCHOR` (the synthetic corpus of `_corpus`, spread evenly over each day), loaded straight
into the SQLite store.
Then the whole cascade runs the way the schedules and workers run it, grain by grain: every
period of the year is dispatched (`DispatchService`), each job summarized (`SummarizeService`,
the deterministic local summarizer) and its summary written through the write queue and the
writer (which embeds it). Timed: each grain, the whole cascade, and a re-run of the whole cascade
(which must change nothing and call no summarizer).

**What Bedrock would cost.** The run counts the summarizer calls a Bedrock deployment of the same
year would make: the local summarizer is wrapped so that it takes the Bedrock adapter's input
budget (the cascade folds anything larger in chunks exactly as it would for Bedrock), and each
call's exact Converse prompt is rendered (`BedrockSummarizer.request`) and measured.

* input tokens = characters of the system prompt + user message / 4
* output tokens = characters of the answer / 4, with the local summary's length standing in for
  the model's answer (bounded per grain like the prompt asks); and, as an upper bound, every call
  spending its whole ``maxTokens``
* 4 characters a token is the usual rule for English prose with the Claude and Titan tokenizers
  (names and numbers run a little denser).
* plus the Titan embedding of every summary written (one call each; tokens by the same rule).

Results go to ``benchmarks/results/cascade[-...].json``.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

import _corpus
from agent_memory.ports import ListQuery

TENANT = "bench"
AGENT = "bench-cascade"
CHARS_PER_TOKEN = 4
DEFAULTS: dict[str, Any] = {"days": 365, "per_day": 50, "embedder": "hashing", "seed": _corpus.DEFAULT_SEED}


def year_of_memories(days: int, per_day: int, seed: int) -> list[_corpus.Memory]:
    """``days`` x ``per_day`` distinct memories, ``per_day`` on each day before the anchor.

    The corpus generator draws instants at random; here each day gets exactly ``per_day``,
    spread over its waking hours, so every daily period has the same load. The year is a whole
    calendar year in the past, so every period of it has closed.
    """
    memories = _corpus.generate_memories(days * per_day, seed=seed)
    first_day = _corpus.ANCHOR.replace(year=_corpus.ANCHOR.year - 1, month=1, day=1)
    out = []
    for i, memory in enumerate(memories):
        day, slot = divmod(i, per_day)
        at = first_day + timedelta(days=day, hours=7, seconds=slot * (14 * 3600 // per_day))
        out.append(dataclasses.replace(memory, occurred_at=at))
    return out


class BedrockMeter:
    """The local summarizer, sized and metered as the Bedrock adapter.

    It keeps the local summarizer's answers (the cascade needs real text to fold further up) but
    takes Bedrock's input budget, so the cascade chunks exactly as it would for Bedrock, and for
    each call it renders the Converse request Bedrock would get and counts its characters.
    """

    def __init__(self, local: Any, bedrock: Any) -> None:
        self._local, self._bedrock = local, bedrock
        self.model_id, self.prompt_version = local.model_id, local.prompt_version
        self.max_input_chars = bedrock.max_input_chars
        self.max_output_chars = local.max_output_chars
        self.calls: Counter[str] = Counter()
        self.prompt_chars: Counter[str] = Counter()
        self.answer_chars: Counter[str] = Counter()

    def summarize(self, request: Any) -> Any:
        params = self._bedrock.request(request)
        prompt = params["system"][0]["text"] + params["messages"][0]["content"][0]["text"]
        result = self._local.summarize(request)
        self.calls[request.grain.value] += 1
        self.prompt_chars[request.grain.value] += len(prompt)
        self.answer_chars[request.grain.value] += len(result.text)
        return result


def tokens(chars: int) -> int:
    return math.ceil(chars / CHARS_PER_TOKEN)


def run_jobs(jobs_queue: Any, writes: Any, summarize: Any, writer: Any) -> Counter[str]:
    """Work the job queue and the write queue until both are empty (writes first)."""
    from agent_memory.model.jobs import SummarizeJob
    from agent_memory.observability import metrics

    outcomes: Counter[str] = Counter()
    while True:
        batch = writes.receive(10)
        if batch:
            prepared = writer.prepare([m.body for m in batch])
            for p in prepared:
                writer.apply(p.command, p.vector)
            writes.ack(m.receipt_handle for m in batch)
            metrics.clear_metrics()
            continue
        jobs = jobs_queue.receive(10)
        if not jobs:
            return outcomes
        for message in jobs:
            outcomes[summarize.run(SummarizeJob.model_validate_json(message.body)).outcome.value] += 1
        jobs_queue.ack(m.receipt_handle for m in jobs)
        metrics.clear_metrics()


def cascade(services: dict[str, Any], first: Any, last: Any) -> dict[str, Any]:
    """Dispatch and run every grain over ``[first, last]``; seconds and outcomes per grain."""
    from agent_memory.model.grains import SUMMARY_GRAINS
    from agent_memory.model.jobs import SummarizeRequest

    per_grain: dict[str, Any] = {}
    started = time.perf_counter()
    for grain in SUMMARY_GRAINS:
        t0 = time.perf_counter()
        request = SummarizeRequest.model_validate(
            {"grain": grain.value, "from": first.isoformat(), "to": last.isoformat()}
        )
        response = services["dispatch"].dispatch(request)
        outcomes = run_jobs(services["jobs"], services["writes"], services["summarize"], services["writer"])
        per_grain[grain.value] = {
            "seconds": round(time.perf_counter() - t0, 3),
            "periods": len(response.periods),
            "jobs": response.jobs_queued,
            "outcomes": dict(outcomes),
        }
        print(f"  {grain.value:9} {per_grain[grain.value]}", file=sys.stderr)
    return {"seconds": round(time.perf_counter() - started, 3), "grains": per_grain}


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--days", type=int, default=DEFAULTS["days"])
    parser.add_argument("--per-day", type=int, default=DEFAULTS["per_day"])
    parser.add_argument("--embedder", choices=["hashing", "minilm"], default=DEFAULTS["embedder"])
    parser.add_argument("--seed", type=int, default=DEFAULTS["seed"])
    args = parser.parse_args(argv)
    load_at_start = _corpus.at_start()

    data_dir = Path(tempfile.mkdtemp(prefix="agent-memory-cascade-"))
    _corpus.configure_environment(data_dir, args.embedder)
    try:
        result = measure(args, data_dir)
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)
    result["machine"] = _corpus.machine(load_at_start)
    result["code"] = _corpus.code_version()
    name = _corpus.result_name("cascade", {**vars(args)}, DEFAULTS)
    print(f"wrote {_corpus.write_result(name, result)}", file=sys.stderr)


def measure(args: argparse.Namespace, data_dir: Path) -> dict[str, Any]:
    from agent_memory.adapters.clock import SystemClock
    from agent_memory.adapters.embedders import build_embedder
    from agent_memory.adapters.local_jobs import LocalJobQueue
    from agent_memory.adapters.local_pending import LocalPendingWrites
    from agent_memory.adapters.local_queue import LocalFifoQueue
    from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
    from agent_memory.adapters.summarizers import BedrockSummarizer, LocalExtractiveSummarizer
    from agent_memory.adapters.summarizers.converse import DEFAULT_MAX_TOKENS
    from agent_memory.cascade.dispatch import DispatchService
    from agent_memory.cascade.summarize import SummarizeService
    from agent_memory.settings import get_settings
    from agent_memory.writing.writer import WriterService

    settings = get_settings()
    embedder = build_embedder(settings)
    store = SqliteMemoryStore(
        data_dir / "memory.db", dimension=embedder.dimension, model_id=embedder.model_id
    )
    memories = year_of_memories(args.days, args.per_day, args.seed)
    print(f"loading {len(memories):,} memories ({args.embedder})", file=sys.stderr)
    load = _corpus.load_memories(store, embedder, memories, TENANT, AGENT)

    clock = SystemClock()  # every period of the year has closed: the corpus ends at the anchor
    writes = LocalFifoQueue(data_dir / "queue.db")
    jobs = LocalFifoQueue(data_dir / "jobs.db")
    pending = LocalPendingWrites(data_dir / "queue.db")
    meter = BedrockMeter(LocalExtractiveSummarizer(embedder), BedrockSummarizer(client=object()))
    services = {
        "dispatch": DispatchService(store, LocalJobQueue(jobs), clock),
        "summarize": SummarizeService(store, meter, writes, LocalJobQueue(jobs), clock),  # type: ignore[arg-type]
        "writer": WriterService(store, embedder, pending, writes, clock),
        "jobs": jobs,
        "writes": writes,
    }
    first, last = memories[0].occurred_at.date(), memories[-1].occurred_at.date()
    print("running the cascade", file=sys.stderr)
    made = cascade(services, first, last)
    calls = dict(meter.calls)
    print("running it again (nothing may change)", file=sys.stderr)
    rerun = cascade(services, first, last)
    assert sum(meter.calls.values()) == sum(calls.values()), "a re-run called the summarizer"
    stats = store.stats(TENANT, AGENT, clock.now()).records
    summary_chars = sum(
        len(r.content)
        for grain in ("daily", "weekly", "monthly", "quarterly", "yearly")
        for r in _all(store, grain, clock)
    )

    prompt_tokens = {g: tokens(c) for g, c in meter.prompt_chars.items()}
    answer_tokens = {g: tokens(c) for g, c in meter.answer_chars.items()}
    summaries = sum(v for k, v in stats.items() if k != "working")
    return {
        "parameters": {
            **vars(args),
            "memories": len(memories),
            "first_day": str(first),
            "last_day": str(last),
        },
        "embedder": embedder.model_id,
        "summarizer": meter.model_id,
        "load": load,
        "cascade": made,
        "rerun": rerun,
        "records": stats,
        "bedrock_estimate": {
            "rule": f"tokens = characters / {CHARS_PER_TOKEN}; prompt = the exact Converse system prompt + "
            "user message; answer = the local summary's length (upper bound: maxTokens per call)",
            "summary_model_calls": calls,
            "summary_model_calls_total": sum(calls.values()),
            "input_tokens": prompt_tokens,
            "input_tokens_total": sum(prompt_tokens.values()),
            "output_tokens": answer_tokens,
            "output_tokens_total": sum(answer_tokens.values()),
            "output_tokens_upper_bound": sum(calls.values()) * DEFAULT_MAX_TOKENS,
            "max_input_chars_per_call": meter.max_input_chars,
            "embedding_calls": summaries,
            "embedding_input_tokens": tokens(summary_chars),
            "rerun_model_calls": 0,
        },
    }


def _all(store: Any, grain: str, clock: Any) -> list[Any]:
    from agent_memory.model.grains import Grain

    out, cursor = [], None
    while True:
        page = store.list(ListQuery(TENANT, AGENT, clock.now(), grain=Grain(grain), limit=100, cursor=cursor))
        out += page.records
        cursor = page.next_cursor
        if cursor is None:
            return out


if __name__ == "__main__":
    main()

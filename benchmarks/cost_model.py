"""The monthly cost of the two production stores for a stated workload, and where they cross.

    python benchmarks/cost_model.py [--agents-max 2000]

Two deployments of the same stack, differing only in the store (docs/infrastructure.md, "Cost
model"): **OpenSearch** (the default: a managed domain of 2 t3.medium.search nodes, billed by the hour
whether used or not) and **serverless** (``-c store=serverless``: each agent's memory a SQLite
file in an S3 bucket, read and written by the functions; billed per request and per GB stored,
nothing while idle). Everything else (API Gateway, Lambda, the queues, DynamoDB, Bedrock, the
alarms) is the same in both and priced the same.

Prices are list prices in us-east-1, written once in `PRICES` with the date they were read; the
workloads are in `WORKLOADS`. The model is arithmetic, not a measurement: each line says what it
assumes, and the figures it prints are only as good as those assumptions (the per-operation
Lambda times come from the project's own measurements, README "Performance").

It prints each workload's monthly cost on both stores, line by line, and the number of agents (of
the small workload's shape: 100 writes and 100 searches a day each) at which OpenSearch becomes
the cheaper one. The serverless store also has a ceiling that is not a price: each write batch
rewrites its agent's file, so an agent that writes more than `SERVERLESS_MAX_WRITES_PER_S`
belongs on OpenSearch whatever the cost; the script says when a workload passes it.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass
from typing import Any

#: List prices, us-east-1, on-demand, as recorded on this date (the figures docs/infrastructure.md
#: used, and the OpenSearch prod nodes' rates); not fetched live: check the AWS pricing pages
#: before relying on a figure, and change it here, where every line reads it.
PRICES_DATE = "2026-11-25"
PRICES: dict[str, float] = {
    "opensearch_t3_medium_hour": 0.073,  # per instance-hour
    "opensearch_r7g_large_hour": 0.167,
    "opensearch_m7g_large_hour": 0.136,
    "opensearch_gp3_gb_month": 0.122,
    "s3_standard_gb_month": 0.023,
    "s3_put_per_1000": 0.005,  # PUT, COPY, POST, LIST
    "s3_get_per_1000": 0.0004,  # GET, HEAD
    "apigw_rest_per_million": 3.50,
    "lambda_gb_second_arm": 0.0000133334,
    "lambda_per_million": 0.20,
    "sqs_fifo_per_million": 0.50,
    "sqs_standard_per_million": 0.40,
    "dynamodb_wru_per_million": 0.625,
    "dynamodb_rru_per_million": 0.125,
    "titan_v2_per_million_tokens": 0.02,
    "cloudwatch_alarm": 0.10,
    "cloudwatch_dashboard": 3.00,
    "cloudwatch_custom_metric": 0.30,
}
HOURS_PER_MONTH = 730
DAYS_PER_MONTH = 30

#: The stack's fixed observability, the same on both stores (docs/infrastructure.md).
ALARMS, DASHBOARDS, CUSTOM_METRICS = 25, 1, 9
#: The two SQS event sources' long polls when idle: ~1.3 M requests a month.
IDLE_POLLS_PER_MONTH = 1_300_000
#: The OpenSearch domain: instances and their storage (the dev sizing of cdk.json).
OPENSEARCH_INSTANCES, OPENSEARCH_GB_EACH = 2, 20
#: Above this many operations a second the model moves OpenSearch to the prod sizing (3
#: r7g.large data nodes, 3 m7g.large masters, `cdk/agent_memory_stack/config.py`): an assumption,
#: not a measured capacity of the burstable nodes.
DEV_DOMAIN_MAX_OPS_PER_S = 20.0

#: Bytes one memory takes in an agent's file: its 1,024-dimension Titan vector (4 KiB), its row
#: and its share of the text index (~1.5 KiB measured on the local store).
BYTES_PER_MEMORY = 4096 + 1536
#: Memories an agent keeps for each memory written a day: working memory for 10 days (the pro
#: plan) and its summaries (small next to it).
KEPT_DAYS = 12
#: Lambda's throughput to and from S3 in the same region, MB/s (a conservative figure), and the
#: memory of the functions that move a file (MB).
S3_MB_PER_S = 80.0
FILE_FUNCTION_MB = 1024
#: Messages the writer handles per batch of one agent (FIFO groups deliver in batches of up to 10;
#: at 100 writes a day they rarely queue up, so about one write per batch).
WRITES_PER_BATCH_SMALL = 1.0
#: Above this many writes a second to one agent, rewriting its file per batch stops keeping up.
SERVERLESS_MAX_WRITES_PER_S = 2.0

#: Per operation, shared by both stores (docs/infrastructure.md's table): $ per write, per search.
WRITE_COMMON = 0.013 / 1000
SEARCH_COMMON = 0.0075 / 1000


@dataclass(frozen=True)
class Workload:
    name: str
    agents: int
    writes_per_agent_day: int
    searches_per_agent_day: int


WORKLOADS = [
    Workload("idle", 0, 0, 0),
    Workload("1 agent, 100 writes and 100 searches a day", 1, 100, 100),
    Workload("1,000 agents, 10,000 writes and 10,000 searches a day each", 1000, 10_000, 10_000),
]


def fixed_common() -> dict[str, float]:
    p = PRICES
    return {
        "CloudWatch alarms": ALARMS * p["cloudwatch_alarm"],
        "CloudWatch dashboard": DASHBOARDS * p["cloudwatch_dashboard"],
        "custom metrics": CUSTOM_METRICS * p["cloudwatch_custom_metric"],
        "SQS polling while idle": IDLE_POLLS_PER_MONTH * p["sqs_fifo_per_million"] / 1e6,
    }


def file_mb(w: Workload) -> float:
    """One agent's file: what it keeps of its writes (`KEPT_DAYS` days of them)."""
    return w.writes_per_agent_day * KEPT_DAYS * BYTES_PER_MEMORY / 1e6


def opensearch(w: Workload) -> dict[str, float]:
    p = PRICES
    writes, searches = _monthly(w)
    stored_gb = w.agents * file_mb(w) / 1000
    disk = max(OPENSEARCH_INSTANCES * OPENSEARCH_GB_EACH, 2 * stored_gb * 1.5)  # a replica, 50 % headroom
    per_s = (writes + searches) / (DAYS_PER_MONTH * 86_400)
    instances = (
        OPENSEARCH_INSTANCES * p["opensearch_t3_medium_hour"]
        if per_s <= DEV_DOMAIN_MAX_OPS_PER_S
        else 3 * p["opensearch_r7g_large_hour"] + 3 * p["opensearch_m7g_large_hour"]
    )
    return {
        **fixed_common(),
        "OpenSearch instances": instances * HOURS_PER_MONTH,
        "OpenSearch storage": disk * p["opensearch_gp3_gb_month"],
        "writes (API, Lambda, queues, DynamoDB, Titan)": writes * WRITE_COMMON,
        "searches (API, Lambda, Titan)": searches * SEARCH_COMMON,
    }


def serverless(w: Workload) -> dict[str, float]:
    p = PRICES
    writes, searches = _monthly(w)
    mb = file_mb(w)
    transfer_s = mb / S3_MB_PER_S
    gb_s = FILE_FUNCTION_MB / 1024 * transfer_s
    batches = writes / WRITES_PER_BATCH_SMALL
    # A write batch: HEAD, GET when another function changed the file since (assume every time),
    # then the conditional PUT of the whole file; a search: HEAD, and a GET when a write came in
    # since the search before (at most once per write).
    stale_reads = min(searches, writes)
    return {
        **fixed_common(),
        "S3 storage": w.agents * mb / 1000 * p["s3_standard_gb_month"],
        "S3 PUTs (one per write batch)": batches * p["s3_put_per_1000"] / 1000,
        "S3 GETs and HEADs": (2 * batches + searches + stale_reads) * p["s3_get_per_1000"] / 1000,
        "Lambda time moving files": (2 * batches + stale_reads) * gb_s * p["lambda_gb_second_arm"],
        "writes (API, Lambda, queues, DynamoDB, Titan)": writes * WRITE_COMMON,
        "searches (API, Lambda, Titan)": searches * SEARCH_COMMON,
    }


def _monthly(w: Workload) -> tuple[float, float]:
    return (
        w.agents * w.writes_per_agent_day * DAYS_PER_MONTH,
        w.agents * w.searches_per_agent_day * DAYS_PER_MONTH,
    )


def serverless_fits(w: Workload) -> bool:
    return w.writes_per_agent_day / 86_400 <= SERVERLESS_MAX_WRITES_PER_S


def crossover(agents_max: int) -> int | None:
    """The fewest agents of the small workload's shape at which OpenSearch is the cheaper store."""
    for agents in range(1, agents_max + 1):
        w = Workload("", agents, 100, 100)
        if sum(opensearch(w).values()) <= sum(serverless(w).values()):
            return agents
    return None


def report(agents_max: int) -> dict[str, Any]:
    rows = []
    for w in WORKLOADS:
        os_lines, sl_lines = opensearch(w), serverless(w)
        rows.append(
            {
                "workload": w.name,
                "opensearch": round(sum(os_lines.values()), 2),
                "serverless": round(sum(sl_lines.values()), 2),
                "serverless_fits": serverless_fits(w),
                "agent_file_mb": round(file_mb(w), 2),
                "lines": {"opensearch": _rounded(os_lines), "serverless": _rounded(sl_lines)},
            }
        )
    return {
        "prices_date": PRICES_DATE,
        "prices": PRICES,
        "workloads": rows,
        "crossover_agents": crossover(agents_max),
    }


def _rounded(lines: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 4) for k, v in lines.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--agents-max", type=int, default=5000)
    parser.add_argument("--json", action="store_true", help="print the whole report as JSON")
    args = parser.parse_args()
    result = report(args.agents_max)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(f"Monthly cost, us-east-1 list prices of {PRICES_DATE}\n")
    for row in result["workloads"]:
        fits = "" if row["serverless_fits"] else "  (serverless: past one agent's write ceiling)"
        totals = f"OpenSearch ${row['opensearch']:>10,.2f}   serverless ${row['serverless']:>10,.2f}"
        print(f"{row['workload']}\n  {totals}{fits}")
        for store in ("opensearch", "serverless"):
            for line, value in row["lines"][store].items():
                print(f"    {store:<10} {line:<48} ${value:>10,.2f}")
    n = result["crossover_agents"]
    where = f"from {n:,} agents" if n else f"not below {args.agents_max:,} agents"
    print(f"\nOpenSearch is the cheaper store (agents of 100 writes and 100 searches a day): {where}")


if __name__ == "__main__":
    main()

"""The monthly cost of the production stores for a stated workload, and where they cross.

    python benchmarks/cost_model.py [--agents-max 2000]

Two deployments of the same stack, differing only in the store (docs/infrastructure.md, "Cost
model"): **OpenSearch** (the default: a managed domain of 2 t3.medium.search nodes, billed by the hour
whether used or not) and **serverless** (``-c store=serverless``: each agent's memory a SQLite
file in an S3 bucket, read and written by the functions; billed per request and per GB stored,
nothing while idle). Everything else (API Gateway, Lambda, the queues, DynamoDB, Bedrock, the
alarms) is the same in both and priced the same.

Beside them, the two stores considered and rejected for the serverless deployment (docs/decisions.md,
"The serverless store"), priced the same way: **S3 Vectors** (each agent's vectors in a vector
index, billed per GB stored, per GB put and per query; it has no lexical search, so the records,
the audit trail and the words stay in the tenant's SQLite file in S3, without the vectors) and
**LanceDB on S3** (each agent's memories a Lance table holding vectors, rows and a full-text index,
billed as S3 requests and storage, run from a Lambda container image kept in ECR).

Prices are list prices in us-east-1, written once in `PRICES` with the date they were read; the
workloads are in `WORKLOADS`. The model is arithmetic, not a measurement: each line says what it
assumes, and the figures it prints are only as good as those assumptions (the per-operation
Lambda times come from the project's own measurements, README "Performance").

It prints each workload's monthly cost on every store, line by line, and the number of agents (of
the small workload's shape: 100 writes and 100 searches a day each) at which OpenSearch becomes
the cheaper one. The serverless store also has a ceiling that is not a price: each write batch
rewrites its agent's file, so an agent that writes more than `SERVERLESS_MAX_WRITES_PER_S`
belongs on OpenSearch whatever the cost; the script says when a workload passes it. What a store
cannot do whatever it costs (`CANNOT`: no lexical search in S3 Vectors, a container image for
LanceDB) is printed beside the figures.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
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
    # Amazon S3 Vectors (aws.amazon.com/s3/pricing, "Vectors"): logical bytes, as AWS's pricing
    # examples count them (KB, GB, TB of 1,024).
    "s3_vectors_gb_month": 0.06,  # storage: vector data, key and metadata, per GB-month
    "s3_vectors_put_per_gb": 0.20,  # PutVectors: per logical GB uploaded (see S3V_MIN_PUT_BYTES)
    "s3_vectors_query_per_million": 2.50,  # QueryVectors API calls
    # Query data processed, per TB: (vector data + key + filterable metadata) x the vectors in the
    # index queried, tiered by the index's size: its first 100,000 vectors, up to 10 million, and
    # beyond (the last tier is the June 2026 cut as secondary sources give it; no index here nears it).
    "s3_vectors_tb_first_100k": 0.004,
    "s3_vectors_tb_to_10m": 0.002,
    "s3_vectors_tb_over_10m": 0.0004,
    "ecr_gb_month": 0.10,  # ECR private repository storage, per GB-month (LanceDB's container image)
}
HOURS_PER_MONTH = 730
DAYS_PER_MONTH = 30

#: The stack's fixed observability (docs/infrastructure.md): the alarms of the synthesized
#: template (the serverless stacks have no domain to watch), one dashboard, the custom metrics.
ALARMS, SERVERLESS_ALARMS, DASHBOARDS, CUSTOM_METRICS = 35, 25, 1, 9
#: The three SQS event sources' long polls when idle (the write queue, the job queue, the
#: webhook deliveries): ~0.65 M requests a month each.
IDLE_POLLS_PER_MONTH = 1_950_000
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

#: Per operation, shared by every store (docs/infrastructure.md's table): $ per write, per search.
WRITE_COMMON = 0.013 / 1000
SEARCH_COMMON = 0.0075 / 1000

KIB, GIB, TIB = 1024, 1024**3, 1024**4

# S3 Vectors: one vector index per agent (the tier of query data processed is the index's size, and
# an agent's searches read only its own vectors); the tenant's SQLite file keeps everything else.
#: The tenant's file without the vectors: rows, audit trail, knowledge, the FTS5 index of the words.
S3V_FILE_BYTES_PER_MEMORY = BYTES_PER_MEMORY - 4096
#: One vector as S3 Vectors bills it: 1,024 float32 (4 KiB), its key (a 36-character id) and the
#: filterable metadata the searches filter on (kind, time span, tags, user, confidence: ~200 bytes
#: assumed, under the 2 KB limit); no non-filterable metadata (the record is in the file).
S3V_VECTOR_BYTES = 4096 + 36 + 200
#: Each PutVectors is billed as at least 128 KB. An assumption: secondary sources state it, AWS's
#: page as read here did not show it. The writer puts one agent's batch, about one vector, per call.
S3V_MIN_PUT_BYTES = 128 * KIB
#: Tier bounds (vectors in the index) of query data processed, with their price.
S3V_TIERS = (
    (100_000, "s3_vectors_tb_first_100k"),
    (10_000_000, "s3_vectors_tb_to_10m"),
    (float("inf"), "s3_vectors_tb_over_10m"),
)
#: QueryVectors returns at most this many vectors (S3 User Guide, "Limitations and restrictions";
#: a June 2026 raise to 10,000 is reported, not confirmed here). A search asks each signal for
#: `SEARCH_CANDIDATES_PER_RESULT` candidates per result (functions/agent_memory/recall/search.py).
#: Its other limits bind nothing here: 2 billion vectors per index, 2 KB of filterable metadata
#: (40 KB in all, 50 keys) per vector, 1,000 PutVectors a second per index.
S3V_MAX_TOP_K = 100
SEARCH_CANDIDATES_PER_RESULT = 4
#: Lambda time spent waiting for S3 Vectors, at the file functions' memory: a QueryVectors (AWS:
#: "as low as 100 ms" warm) and a PutVectors (50 ms, assumed), neither overlapped with the file.
S3V_QUERY_S, S3V_PUT_S = 0.1, 0.05

# LanceDB on S3: each agent's memories a Lance table (vectors, rows and full-text indexes), the
# tenant's audit trail a second table. S3 requests as measured on an emulated S3 (moto_server's
# request log; benchmarks/locomo_lancedb.py --s3-endpoint, results/locomo_lancedb-*-s3.json):
# the memories table of one LoCoMo conversation, 419 one-row writes and 151 searches, through
# benchmarks/lancedb_store.py (every read asks for the latest version, as functions that
# share a table must).
#: Tables a write appends to: the agent's memories and the tenant's audit trail.
LANCE_TABLES_PER_WRITE = 2
#: An append of one row, per table (measured): LISTs of _versions/ (the latest version, before and
#: at the commit), the data fragment, the transaction and the manifest; nothing read.
LANCE_WRITE_PUTS, LANCE_WRITE_LISTS, LANCE_WRITE_GETS = 3, 5, 0
#: Every this many writes an optimize compacts the small fragments and adds the new rows to the
#: indexes. Measured for the memories table (four text indexes, ~400 rows): the LoCoMo writes'
#: requests beyond their appends, 10 writes' worth; it reads most of the table, so it grows with
#: it. The audit table's optimize (no index) is left out: a lower bound.
LANCE_OPTIMIZE_EVERY = 10
LANCE_OPTIMIZE_PUTS = 51
LANCE_OPTIMIZE_LISTS = 63
LANCE_OPTIMIZE_GETS = 396
#: A search (measured): a vector query and a full-text query, each listing _versions/ for the
#: latest version, and the GETs of fragments and index parts not cached in the process (a warm
#: function; a cold one reads more).
LANCE_QUERY_LISTS = 10
LANCE_QUERY_GETS = 15
#: Sequential S3 round trips a function waits through, ~30 ms each: a search 5 (version, manifest,
#: indexes, partitions and postings, rows), a write 4 (version, manifest, fragment and transaction
#: in parallel, manifest), an optimize 6. The search's own computing is left out.
S3_ROUND_TRIP_S = 0.03
LANCE_QUERY_ROUNDS, LANCE_WRITE_ROUNDS, LANCE_OPTIMIZE_ROUNDS = 5, 4, 6
#: The container image: lancedb and pyarrow (323 MB unzipped for arm64, 259 MB with pyarrow cut
#: to what lancedb loads) and the project's layer on the Python base image, ~1.2 GB (ECR bills the
#: compressed layers, so an upper bound); one image kept.
LANCE_IMAGE_GB = 1.2


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


def fixed_common(alarms: int = SERVERLESS_ALARMS) -> dict[str, float]:
    p = PRICES
    return {
        "CloudWatch alarms": alarms * p["cloudwatch_alarm"],
        "CloudWatch dashboard": DASHBOARDS * p["cloudwatch_dashboard"],
        "custom metrics": CUSTOM_METRICS * p["cloudwatch_custom_metric"],
        "SQS polling while idle": IDLE_POLLS_PER_MONTH * p["sqs_fifo_per_million"] / 1e6,
    }


def memories_kept(w: Workload) -> int:
    """The memories one agent keeps: `KEPT_DAYS` days of its writes."""
    return w.writes_per_agent_day * KEPT_DAYS


def file_mb(w: Workload, bytes_per_memory: int = BYTES_PER_MEMORY) -> float:
    """One agent's file: what it keeps of its writes (`KEPT_DAYS` days of them)."""
    return memories_kept(w) * bytes_per_memory / 1e6


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
        **fixed_common(ALARMS),
        "OpenSearch instances": instances * HOURS_PER_MONTH,
        "OpenSearch storage": disk * p["opensearch_gp3_gb_month"],
        "writes (API, Lambda, queues, DynamoDB, Titan)": writes * WRITE_COMMON,
        "searches (API, Lambda, Titan)": searches * SEARCH_COMMON,
    }


def serverless(w: Workload) -> dict[str, float]:
    writes, searches = _monthly(w)
    return {
        **fixed_common(),
        **_tenant_file(w, BYTES_PER_MEMORY),
        "writes (API, Lambda, queues, DynamoDB, Titan)": writes * WRITE_COMMON,
        "searches (API, Lambda, Titan)": searches * SEARCH_COMMON,
    }


def _tenant_file(w: Workload, bytes_per_memory: int) -> dict[str, float]:
    """The tenant's SQLite file in S3: stored, read and rewritten per write batch."""
    p = PRICES
    writes, searches = _monthly(w)
    mb = file_mb(w, bytes_per_memory)
    transfer_s = mb / S3_MB_PER_S
    gb_s = FILE_FUNCTION_MB / 1024 * transfer_s
    batches = writes / WRITES_PER_BATCH_SMALL
    # A write batch: HEAD, GET when another function changed the file since (assume every time),
    # then the conditional PUT of the whole file; a search: HEAD, and a GET when a write came in
    # since the search before (at most once per write).
    stale_reads = min(searches, writes)
    return {
        "S3 storage": w.agents * mb / 1000 * p["s3_standard_gb_month"],
        "S3 PUTs (one per write batch)": batches * p["s3_put_per_1000"] / 1000,
        "S3 GETs and HEADs": (2 * batches + searches + stale_reads) * p["s3_get_per_1000"] / 1000,
        "Lambda time moving files": (2 * batches + stale_reads) * gb_s * p["lambda_gb_second_arm"],
    }


def s3_vectors_query_dollars(vectors_in_index: float, bytes_per_vector: float) -> float:
    """One QueryVectors call on an index of ``vectors_in_index``: the call, and the data processed
    (every vector of the index, at ``bytes_per_vector`` of vector data, key and filterable
    metadata), each tier of the index's size at its price."""
    p = PRICES
    dollars, below = p["s3_vectors_query_per_million"] / 1e6, 0.0
    for bound, price in S3V_TIERS:
        in_tier = max(0.0, min(vectors_in_index, bound) - below)
        dollars += in_tier * bytes_per_vector / TIB * p[price]
        below = bound
    return dollars


def s3_vectors(w: Workload) -> dict[str, float]:
    """Vectors in S3 Vectors (an index per agent); rows, audit trail and words (FTS5) in the
    tenant's SQLite file in S3, as the serverless store keeps them, without the vectors."""
    p = PRICES
    writes, searches = _monthly(w)
    batches = writes / WRITES_PER_BATCH_SMALL
    put_bytes = max(S3V_MIN_PUT_BYTES, WRITES_PER_BATCH_SMALL * S3V_VECTOR_BYTES)
    waited_s = searches * S3V_QUERY_S + batches * S3V_PUT_S
    return {
        **fixed_common(),
        **_tenant_file(w, S3V_FILE_BYTES_PER_MEMORY),
        "S3 Vectors storage": w.agents * memories_kept(w) * S3V_VECTOR_BYTES / GIB * p["s3_vectors_gb_month"],
        "S3 Vectors PUTs (128 KB billed at least)": batches * put_bytes / GIB * p["s3_vectors_put_per_gb"],
        "S3 Vectors queries and data processed": searches
        * s3_vectors_query_dollars(memories_kept(w), S3V_VECTOR_BYTES),
        "Lambda time waiting for S3 Vectors": waited_s * FILE_FUNCTION_MB / 1024 * p["lambda_gb_second_arm"],
        "writes (API, Lambda, queues, DynamoDB, Titan)": writes * WRITE_COMMON,
        "searches (API, Lambda, Titan)": searches * SEARCH_COMMON,
    }


def lancedb(w: Workload) -> dict[str, float]:
    """Each agent's memories a Lance table in S3 (vectors, rows, full-text index), the audit trail
    another; the functions a container image in ECR."""
    p = PRICES
    writes, searches = _monthly(w)
    optimizes = writes / LANCE_OPTIMIZE_EVERY
    per_write = writes * LANCE_TABLES_PER_WRITE
    puts_and_lists = (
        per_write * (LANCE_WRITE_PUTS + LANCE_WRITE_LISTS)
        + optimizes * (LANCE_OPTIMIZE_PUTS + LANCE_OPTIMIZE_LISTS)
        + searches * LANCE_QUERY_LISTS
    )
    gets = per_write * LANCE_WRITE_GETS + optimizes * LANCE_OPTIMIZE_GETS + searches * LANCE_QUERY_GETS
    rounds = writes * LANCE_WRITE_ROUNDS + optimizes * LANCE_OPTIMIZE_ROUNDS + searches * LANCE_QUERY_ROUNDS
    waited_s = rounds * S3_ROUND_TRIP_S
    return {
        **fixed_common(),
        "ECR storage (the container image)": LANCE_IMAGE_GB * p["ecr_gb_month"],
        # A memory takes in Lance what it takes in the SQLite file (vector, row, its share of the
        # text index); old versions are removed at each optimize.
        "S3 storage": w.agents * file_mb(w) / 1000 * p["s3_standard_gb_month"],
        "S3 PUTs and LISTs (fragments, manifests)": puts_and_lists * p["s3_put_per_1000"] / 1000,
        "S3 GETs (manifests, indexes, rows)": gets * p["s3_get_per_1000"] / 1000,
        "Lambda time waiting for S3": waited_s * FILE_FUNCTION_MB / 1024 * p["lambda_gb_second_arm"],
        "writes (API, Lambda, queues, DynamoDB, Titan)": writes * WRITE_COMMON,
        "searches (API, Lambda, Titan)": searches * SEARCH_COMMON,
    }


#: Every store the model prices, by the key the report uses, with the name it prints.
STORES: dict[str, tuple[str, Callable[[Workload], dict[str, float]]]] = {
    "opensearch": ("OpenSearch", opensearch),
    "serverless": ("serverless", serverless),
    "s3vectors": ("S3 Vectors", s3_vectors),
    "lancedb": ("LanceDB", lancedb),
}

#: What a store cannot do whatever the workload or the price (docs/decisions.md, "The serverless
#: store"): said beside its figures.
CANNOT: dict[str, tuple[str, ...]] = {
    "opensearch": (),
    "serverless": (),
    "s3vectors": (
        "no lexical search: alone it ranks by vectors only (LoCoMo r@10 32.6 against 75.8 hybrid); "
        "the words, rows and audit trail are priced here in the tenant's SQLite file",
        f"QueryVectors returns at most {S3V_MAX_TOP_K} vectors: a search for more than "
        f"{S3V_MAX_TOP_K // SEARCH_CANDIDATES_PER_RESULT} results gets fewer vector candidates than it asks",
    ),
    "lancedb": (
        "lancedb and pyarrow are 323 MB unzipped for arm64 (259 MB with pyarrow cut to what "
        "lancedb loads), the layer 76 MB more: over Lambda's 250 MB, a container image (ECR priced)",
        "LoCoMo r@10 73.0 against 75.8 for the SQLite store's words (LanceDB's BM25 in their place)",
    ),
}


def _monthly(w: Workload) -> tuple[float, float]:
    return (
        w.agents * w.writes_per_agent_day * DAYS_PER_MONTH,
        w.agents * w.searches_per_agent_day * DAYS_PER_MONTH,
    )


def serverless_fits(w: Workload) -> bool:
    return w.writes_per_agent_day / 86_400 <= SERVERLESS_MAX_WRITES_PER_S


def cannot(store: str, w: Workload) -> list[str]:
    """What ``store`` cannot do for ``w``: `CANNOT`, and the file's write ceiling for the two
    stores that rewrite the tenant's file per write batch."""
    said = list(CANNOT[store])
    if store in ("serverless", "s3vectors") and not serverless_fits(w):
        said.append("past one agent's write ceiling (each write batch rewrites the tenant's file)")
    return said


def crossover(agents_max: int, store: Callable[[Workload], dict[str, float]] = serverless) -> int | None:
    """The fewest agents of the small workload's shape at which OpenSearch is cheaper than
    ``store`` (the serverless store unless said)."""
    for agents in range(1, agents_max + 1):
        w = Workload("", agents, 100, 100)
        if sum(opensearch(w).values()) <= sum(store(w).values()):
            return agents
    return None


def report(agents_max: int) -> dict[str, Any]:
    rows = []
    for w in WORKLOADS:
        lines = {key: price(w) for key, (_, price) in STORES.items()}
        rows.append(
            {
                "workload": w.name,
                **{key: round(sum(store.values()), 2) for key, store in lines.items()},
                "serverless_fits": serverless_fits(w),
                "agent_file_mb": round(file_mb(w), 2),
                "lines": {key: _rounded(store) for key, store in lines.items()},
                "cannot": {key: cannot(key, w) for key in STORES},
            }
        )
    return {
        "prices_date": PRICES_DATE,
        "prices": PRICES,
        "workloads": rows,
        "crossover_agents": crossover(agents_max),
        "crossover_agents_by_store": {
            key: crossover(agents_max, price) for key, (_, price) in STORES.items() if key != "opensearch"
        },
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
        others = f"S3 Vectors ${row['s3vectors']:>10,.2f}   LanceDB    ${row['lancedb']:>10,.2f}"
        also = "" if row["serverless_fits"] else "  (S3 Vectors: its file past the same ceiling)"
        print(f"{row['workload']}\n  {totals}{fits}\n  {others}{also}")
        for store in STORES:
            for line, value in row["lines"][store].items():
                print(f"    {store:<10} {line:<48} ${value:>10,.2f}")
    n = result["crossover_agents"]
    where = f"from {n:,} agents" if n else f"not below {args.agents_max:,} agents"
    print(f"\nOpenSearch is the cheaper store (agents of 100 writes and 100 searches a day): {where}")
    by_store = result["crossover_agents_by_store"]
    than = "; ".join(
        f"than {STORES[key][0]} {f'from {m:,} agents' if m else f'not below {args.agents_max:,} agents'}"
        for key, m in by_store.items()
        if key != "serverless"
    )
    print(f"  and cheaper {than}")
    print("\nWhat a store cannot do, whatever it costs:")
    for key, said in CANNOT.items():
        for line in said:
            print(f"  {STORES[key][0]}: {line}")


if __name__ == "__main__":
    main()

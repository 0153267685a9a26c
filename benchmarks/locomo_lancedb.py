"""LoCoMo retrieval through the SQLite store and through the same store with LanceDB's candidates.

    python benchmarks/locomo_lancedb.py [--configs full] [--conversations N] [--embedder minilm|hashing]
                                        [--stores sqlite,lancedb] [--s3-endpoint URL --s3-log PATH]

The serverless store's decision (docs/decisions.md) weighs LanceDB, vectors and a native
full-text index in tables on S3, on hybrid recall. This runs `locomo.py`'s evaluation (the same
ingest through the local HTTP API, the same questions, scoring and report) once per store, one
after the other in one process, so both rows are taken under the same conditions:

- ``sqlite``: the embedded default store, as ``locomo.py`` runs it;
- ``lancedb``: `lancedb_store.LanceDbMemoryStore` (beside this script), the same file and ranking
  with the vector and BM25 candidates of every search from LanceDB (one table per tenant).

Needs lancedb (``pip install -e '.[lancedb]'``). With ``--s3-endpoint`` the Lance tables live in a
bucket of an S3 endpoint (a ``moto_server`` started beforehand, e.g. ``moto_server -p 5555
2> moto.log``), and with ``--s3-log`` (that server's request log) the S3 requests of the ingest
and of the searches are counted, per LanceDB write and per search, for the cost model. Figures go
to ``benchmarks/results/locomo_lancedb[-...].json``.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import re
import sys
import time
from collections.abc import Iterator, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any
from unittest import mock

import _corpus
import locomo

STORES = ("sqlite", "lancedb")
BUCKET = "locomo-lance"
DEFAULTS: dict[str, Any] = {
    "conversations": 0,
    "configs": "full",
    "embedder": "minilm",
    "stores": "sqlite+lancedb",
}
_REQUEST = re.compile(r'"(?:\x1b\[[0-9;]*m)?(GET|PUT|POST|DELETE|HEAD) (\S+)')


class S3Requests:
    """The S3 requests a moto server logged, by kind (LIST told apart from GET), between marks
    this process writes into the same log (a HEAD of a key that does not exist)."""

    def __init__(self, endpoint: str, log: Path | None) -> None:
        import boto3

        self.endpoint, self.log = endpoint, log
        self._client = boto3.client(
            "s3",
            endpoint_url=endpoint,
            region_name="us-east-1",
            aws_access_key_id="bench",
            aws_secret_access_key="bench",
        )
        with contextlib.suppress(self._client.exceptions.BucketAlreadyOwnedByYou):
            self._client.create_bucket(Bucket=BUCKET)

    def storage_options(self) -> dict[str, str]:
        return {
            "aws_endpoint": self.endpoint,
            "aws_access_key_id": "bench",
            "aws_secret_access_key": "bench",
            "aws_region": "us-east-1",
            "allow_http": "true",
        }

    def mark(self, name: str) -> None:
        with contextlib.suppress(self._client.exceptions.ClientError):
            self._client.head_object(Bucket=BUCKET, Key=f"_marks/{name}")

    def between(self, start: str, end: str) -> dict[str, int]:
        """Requests by kind logged after the mark ``start`` and before ``end``; {} without a log."""
        if self.log is None:
            return {}
        counts: collections.Counter[str] = collections.Counter()
        inside = False
        for line in self.log.read_text(errors="replace").splitlines():
            match = _REQUEST.search(line)
            if match is None:
                continue
            method, path = match.groups()
            if "/_marks/" in path:
                inside = path.endswith(f"/_marks/{start}") or (inside and not path.endswith(f"/_marks/{end}"))
                continue
            if inside:
                listing = method == "GET" and ("list-type=" in path or "prefix=" in path)
                counts["LIST" if listing else method] += 1
        return dict(counts)


class LanceCalls:
    """How many merges and optimizes the LanceDB side made (writes), counted by wrapping it."""

    def __init__(self) -> None:
        from lancedb_store import LanceCandidates

        self.counts: collections.Counter[str] = collections.Counter()
        cls = LanceCandidates
        for name, label in (("_upsert", "append or merge"), ("_delete", "delete")):
            original = getattr(cls, name)

            def counted(self_: Any, table: Any, *rest: Any, _o: Any = original, _l: str = label) -> Any:
                rows = rest[-1]
                if (rows.num_rows if hasattr(rows, "num_rows") else len(rows)) > 0:
                    self.counts[_l] += 1
                return _o(self_, table, *rest)

            setattr(cls, name, counted)


@contextlib.contextmanager
def lancedb_store(s3: S3Requests | None, data_dir: Path) -> Iterator[None]:
    """Every runtime built inside keeps memory in `LanceDbMemoryStore`: the container's store
    property replaced for the duration (the benchmark's runtimes are in this process)."""
    from agent_memory import container
    from lancedb_store import LanceDbMemoryStore

    def build(self: Any) -> Any:
        settings, emb = self.settings, self.embedder
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        uri = None if s3 is None else f"s3://{BUCKET}/{settings.data_dir.name}-{int(time.time())}"
        return LanceDbMemoryStore(
            settings.sqlite_path,
            emb.dimension,
            emb.model_id,
            ann_min_vectors=settings.ann_min_vectors,
            lance_uri=uri,
            storage_options=None if s3 is None else s3.storage_options(),
        )

    replacement = cached_property(build)
    replacement.__set_name__(container.Container, "store")
    with mock.patch.object(container.Container, "store", replacement):  # it restores the inherited one
        yield


def run_store(store: str, args: argparse.Namespace, data_dir: Path, s3: S3Requests | None) -> dict[str, Any]:
    if store == "sqlite":
        return locomo.run(args, data_dir)
    calls = LanceCalls()
    asked = locomo.ask

    phases: dict[str, dict[str, int]] = {}

    def marked_ask(*a: Any, **k: Any) -> Any:
        if s3 is not None:
            s3.mark("ingest-end")
            s3.mark("ask-start")
        phases["ingest"] = dict(calls.counts)
        try:
            return asked(*a, **k)
        finally:
            if s3 is not None:
                s3.mark("ask-end")
            phases["searches"] = dict(calls.counts - collections.Counter(phases["ingest"]))

    locomo.ask = marked_ask
    try:
        with lancedb_store(s3, data_dir):
            if s3 is not None:
                s3.mark("ingest-start")
            result = locomo.run(args, data_dir)
    finally:
        locomo.ask = asked
    result["lancedb_writes"] = phases
    if s3 is not None:
        questions = result["data"]["questions"]
        ingest = s3.between("ingest-start", "ingest-end")
        searches = s3.between("ask-start", "ask-end")
        writes = sum(phases["ingest"].values())
        result["s3_requests"] = {
            "endpoint": "moto_server",
            "ingest": ingest,
            "searches": searches,
            "per_write": {k: round(v / max(writes, 1), 2) for k, v in ingest.items()},
            # one untimed search per agent comes first (`locomo.ask`)
            "per_search": {
                k: round(v / (questions + result["data"]["conversations"]), 2) for k, v in searches.items()
            },
        }
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    parser.add_argument("--configs", default=DEFAULTS["configs"], help="as locomo.py's (default: full)")
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations")
    parser.add_argument("--embedder", choices=("minilm", "hashing"), default=DEFAULTS["embedder"])
    parser.add_argument(
        "--stores", default="sqlite,lancedb", help=f"comma-separated, of: {', '.join(STORES)}"
    )
    parser.add_argument(
        "--s3-endpoint", help="keep the Lance tables in a bucket of this S3 endpoint (moto_server)"
    )
    parser.add_argument("--s3-log", type=Path, help="that server's request log: count the requests")
    parser.add_argument("--data-dir", type=Path, help="an empty or new directory (default: temporary)")
    parser.add_argument("--ingest-timeout-s", type=float, default=3600.0)
    parser.add_argument("--details", type=Path, help="every question's retrieved turns, as locomo.py's")
    args = parser.parse_args(argv)
    try:
        args.configs = locomo.parse_configs(args.configs)
    except ValueError as exc:
        parser.error(str(exc))
    stores = [s for s in STORES if s in args.stores.split(",")]
    if not stores or len(stores) != len(set(args.stores.split(","))):
        parser.error(f"--stores: comma-separated, of {', '.join(STORES)}")
    if not args.data.is_file():
        parser.error(f"no data set at {args.data} (LoCoMo's locomo10.json; see --data)")
    s3 = None if args.s3_endpoint is None else S3Requests(args.s3_endpoint, args.s3_log)
    details = args.details

    results: dict[str, Any] = {}
    with _corpus.fresh_data_dir(parser, args.data_dir, "agent-memory-locomo-lancedb-") as data_dir:
        for store in stores:
            print(f"== {store}", file=sys.stderr)
            args.details = None if details is None else details.with_suffix(f".{store}.jsonl")
            results[store] = run_store(store, args, data_dir / store, s3)
    for store, result in results.items():
        print(f"\n== {store}\n{locomo.report(result)}")
        for key in ("lancedb_writes", "s3_requests"):
            if key in result:
                print(f"{key}: {result[key]}")
    values = {
        "conversations": args.conversations,
        "configs": "+".join(c.name for c in args.configs),
        "embedder": args.embedder,
        "stores": "+".join(stores),
    }
    name = _corpus.result_name("locomo_lancedb", values, DEFAULTS)
    if s3 is not None:
        name += "-s3"
    print(f"\nwritten to {_corpus.write_result(name, {'stores': results})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

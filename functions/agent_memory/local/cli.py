"""`agent-memory`: run the service locally, manage keys, invoke handlers, operate the queue.

agent-memory serve [--host 127.0.0.1] [--port 8000] [--data-dir .agent-memory]
agent-memory keys create --tenant T --plan P [--admin] [--agent A ...] [--scope S ...] [--table NAME]
agent-memory keys list | keys revoke KEY_ID   (--table NAME: the deployed tenants table)
agent-memory keys enroll [--tenant T] --usage-plans PREFIX   (per-tenant API Gateway limits)
agent-memory invoke api|writer|authorizer|bootstrap|webhook-delivery|... events/<file>.json
agent-memory dlq list | dlq redrive [ID ...]   (AGENT_MEMORY_QUEUE=sqs: the deployed FIFO DLQ)
agent-memory summarize --grain daily (--period 2026-11-21 | --from 2026-01-01 --to 2026-03-31) [--no-wait]
agent-memory retention run   (what the daily 05:15 schedule runs; prints the report)
agent-memory patterns run [--agent A] [--tenant T] [--no-wait]   (what the daily 05:45 schedule runs)
agent-memory profiles run [--agent A] [--tenant T] [--no-wait]   (what the daily 05:55 schedule runs)
agent-memory mcp [--url URL] [--api-key KEY] [--agent-id A] [--user-id U]   (MCP server, stdio)
agent-memory knowledge import DIR [--tag T ...] [--version V] [--wait] [--url URL] [--api-key KEY]
agent-memory knowledge list | knowledge delete DOC_ID   [--url URL] [--api-key KEY]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from agent_memory.local.export_command import add_export_parser
from agent_memory.local.import_command import add_import_parser
from agent_memory.local.keys_command import add_keys_parser
from agent_memory.tenancy.rules.keys import NewKey

DEFAULT_DATA_DIR = ".agent-memory"
#: Commands that only talk to a server's API: they load none of the local runtime.
API_CLIENT_COMMANDS = ("mcp", "knowledge", "export", "import")
DEV_TENANT = "dev"
DEV_PLAN = "pro"


def _local_defaults(data_dir: str | None) -> None:
    """Settings for running on this machine, unless the environment already says otherwise."""
    if data_dir:
        os.environ["AGENT_MEMORY_DATA_DIR"] = data_dir
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "agent-memory")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentMemory")
    os.environ.setdefault("POWERTOOLS_TRACE_DISABLED", "true")  # no X-Ray daemon here
    os.environ.setdefault("POWERTOOLS_METRICS_DISABLED", "true")  # EMF lines would flood stdout
    os.environ.setdefault("POWERTOOLS_LOG_LEVEL", "WARNING")
    from agent_memory import container

    container.reset()  # settings are read again with the values above


def _settings():
    from agent_memory.settings import get_settings

    return get_settings()


def _share_cpus(settings: Any, processes: int) -> Any:
    """The settings with the local model's threads split among ``processes`` API processes
    (unless set), in the environment the worker processes read them from."""
    name = settings.variable("embedder_threads")
    if processes <= 1 or settings.embedder_threads or os.environ.get(name):
        return settings
    os.environ[name] = str(max(1, (os.cpu_count() or 1) // processes))
    from agent_memory import container

    container.reset()
    return _settings()


def cmd_serve(args: argparse.Namespace) -> int:
    from agent_memory.local.api_workers import process_count
    from agent_memory.local.server import LocalRuntime

    settings = _settings()
    key = os.environ.get("AGENT_MEMORY_DEV_KEY") or _stored_dev_key(settings.data_dir)
    if not _acceptable_dev_key(key):
        print(
            f"error: AGENT_MEMORY_DEV_KEY must be at least {MIN_DEV_KEY_CHARS} printable ASCII characters "
            "without spaces (it is an admin key); leave it unset to have one generated",
            file=sys.stderr,
        )
        return 2
    workers = settings.api_workers if args.workers is None else args.workers
    if workers < 0:
        print("error: --workers must be 0 (one per CPU) or more", file=sys.stderr)
        return 2
    settings = _share_cpus(settings, process_count(workers))
    runtime = LocalRuntime(
        settings,
        host=args.host,
        port=args.port,
        scheduler=False if args.no_scheduler else None,
        processes=workers,
    )
    _register_dev_key(runtime.keys, key, settings.data_dir)
    print(
        f"agent-memory serving on {runtime.url}  (data: {settings.data_dir}, embedder: {settings.embedder}, "
        f"processes: {runtime.processes})"
    )
    print(f"development key (tenant {DEV_TENANT!r}, plan {DEV_PLAN!r}, admin): {key}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        runtime.serve_forever()
    return 0


def _acceptable_dev_key(key: str) -> bool:
    return len(key) >= MIN_DEV_KEY_CHARS and key.isascii() and key.isprintable() and " " not in key


#: An admin key chosen by the user must be as hard to guess as a generated one is.
MIN_DEV_KEY_CHARS = 32


def _register_dev_key(keys: Any, key: str, data_dir: Path) -> None:
    """Register the development key, and revoke the one registered before it when it changed:
    a dev key chosen once (``AGENT_MEMORY_DEV_KEY``) must not stay a valid admin key after the
    variable is changed or removed. The current dev key's id is kept in ``dev-key-id``."""
    from agent_memory.private_files import private_dir, private_file

    caller = keys.lookup(key)
    key_id = (
        caller.key_id
        if caller is not None
        else keys.create(NewKey(DEV_TENANT, DEV_PLAN, admin=True, key=key))[0]
    )
    marker = private_dir(data_dir) / "dev-key-id"
    previous = marker.read_text().strip() if marker.exists() else None
    if previous and previous != key_id:
        keys.revoke(previous)
    marker.write_text(key_id + "\n")
    private_file(marker)


def _stored_dev_key(data_dir: Path) -> str:
    """Generated once and kept (mode 0600) so every `make dev` prints the same key."""
    from agent_memory.private_files import private_dir, private_file
    from agent_memory.tenancy.rules.keys import new_api_key

    path = private_dir(data_dir) / "dev-key"
    if path.exists():
        private_file(path)
        return path.read_text().strip()
    key = new_api_key()
    path.write_text(key + "\n")
    private_file(path)
    return key


def _slots(obj: Any) -> dict[str, Any]:
    return {name: getattr(obj, name) for name in obj.__slots__}


def cmd_summarize(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from agent_memory.local import summarize_command as summarize
    from agent_memory.model.jobs import SummarizeRequest

    fields = {"grain": args.grain, "period": args.period, "from": args.from_, "to": args.to}
    try:
        request = SummarizeRequest.model_validate({k: v for k, v in fields.items() if v is not None})
    except ValidationError as exc:
        print("; ".join(e["msg"] for e in exc.errors()), file=sys.stderr)
        return 2
    print(json.dumps(summarize.run(request, wait=not args.no_wait)))
    return 0


def cmd_retention_run(args: argparse.Namespace) -> int:
    from agent_memory import container

    print(json.dumps(container.retention_service().run().as_dict()))
    return 0


def cmd_agent_jobs_run(args: argparse.Namespace) -> int:
    """Run a per-agent job (patterns or profiles) now, here (see `local.agent_jobs_command`);
    prints the summed report."""
    from agent_memory.local import agent_jobs_command

    run = agent_jobs_command.run if args.job == "patterns" else agent_jobs_command.run_profiles
    result = run(args.tenant, args.agent, wait=not args.no_wait)
    print(json.dumps(result))
    if args.agent is not None and result["agents"] == 0:
        window = f"the {args.job.removesuffix('s')} window"
        print(f"error: no agent {args.agent!r} has memory in {window}", file=sys.stderr)
        return 1
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """The memory tools over MCP (stdio); stdout is the protocol, so errors go to stderr."""
    try:
        from agent_memory.local import mcp_server
    except ImportError as exc:
        print(f"error: {exc}; install the MCP SDK: pip install 'agent-memory[mcp]'", file=sys.stderr)
        return 2
    try:
        config = mcp_server.McpConfig.resolve(
            args.url, args.api_key, args.agent_id, args.user_id, args.timeout
        )
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return mcp_server.run(config)


def cmd_knowledge_import(args: argparse.Namespace) -> int:
    """Put every document under a folder through the API (see `local.knowledge_command`)."""
    from agent_memory.local import knowledge_command as knowledge

    return knowledge.run_import(
        args, Path(args.directory), args.tag or (), args.version, args.wait_timeout if args.wait else None
    )


def cmd_knowledge_list(args: argparse.Namespace) -> int:
    from agent_memory.local import knowledge_command as knowledge

    return knowledge.run_call(args, knowledge.list_documents)


def cmd_knowledge_delete(args: argparse.Namespace) -> int:
    from agent_memory.local import knowledge_command as knowledge

    return knowledge.run_call(args, lambda client: knowledge.delete_document(client, args.doc_id))


HANDLERS: dict[str, str] = {
    "api": "agent_memory.handlers.api",
    "writer": "agent_memory.handlers.writer",
    "authorizer": "agent_memory.handlers.authorizer",
    "bootstrap": "agent_memory.handlers.bootstrap",
    "summarize-dispatch": "agent_memory.handlers.summarize_dispatch",
    "summarize-worker": "agent_memory.handlers.summarize_worker",
    "webhook-delivery": "agent_memory.handlers.webhook_delivery",
}


def cmd_invoke(args: argparse.Namespace) -> int:
    import importlib

    from agent_memory.local.lambda_context import LocalContext

    if args.function not in HANDLERS:
        print(f"unknown function {args.function!r}; one of {', '.join(HANDLERS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(HANDLERS[args.function])
    event = json.loads(Path(args.event).read_text())
    result = module.handler(event, LocalContext(function_name=args.function))
    print(json.dumps(result, indent=2, default=str))
    return 0


def _dead_letters():
    """The local queue's dead letters, or the SQS FIFO dead-letter queue with AGENT_MEMORY_QUEUE=sqs
    (and the WRITE_QUEUE_URL and DEAD_LETTER_QUEUE_URL the stack outputs)."""
    from agent_memory import container

    return container.dead_letters()


def cmd_dlq_list(args: argparse.Namespace) -> int:
    for letter in _dead_letters().dead_letters():
        print(json.dumps(_slots(letter), default=str))
    return 0


def cmd_dlq_redrive(args: argparse.Namespace) -> int:
    moved = _dead_letters().redrive(args.ids or None)
    print(f"redrove {moved} message(s)")
    return 0


def _opensearch(args: argparse.Namespace) -> None:
    """Point this process's container at the OpenSearch store (and ``--endpoint``, if given)."""
    if args.endpoint:
        os.environ["AGENT_MEMORY_OPENSEARCH_ENDPOINT"] = args.endpoint
    os.environ["AGENT_MEMORY_STORE"] = "opensearch"
    from agent_memory import container

    container.reset()


def cmd_index_bootstrap(args: argparse.Namespace) -> int:
    """Create the versioned indexes (records, events, knowledge) and their aliases (idempotent); the
    stack runs this on deploy. New indexes are made on lucene, the one engine offered (an index an
    earlier version made on faiss is kept, and moves to lucene at its next schema upgrade). Prints
    every field of the result, the knowledge index's included."""
    from agent_memory import container

    _opensearch(args)
    print(json.dumps(_slots(container.index_bootstrap()), default=str))
    return 0


def cmd_index_status(args: argparse.Namespace) -> int:
    from agent_memory import container

    _opensearch(args)
    print(json.dumps(container.index_status(), indent=2, default=str))
    return 0


def _add_mcp_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mcp = sub.add_parser("mcp", help="serve the memory tools to desktop agents over MCP (stdio)")
    mcp.add_argument("--url", help="the API endpoint (default: AGENT_MEMORY_URL, else http://127.0.0.1:8000)")
    mcp.add_argument("--api-key", help="the API key (default: AGENT_MEMORY_API_KEY)")
    mcp.add_argument("--agent-id", help="whose memory (default: AGENT_MEMORY_AGENT_ID, else 'default')")
    mcp.add_argument("--user-id", help="scope writes and searches to this end user (AGENT_MEMORY_USER_ID)")
    mcp.add_argument("--timeout", type=float, default=None, help="seconds per HTTP attempt (default 10)")
    mcp.set_defaults(func=cmd_mcp)


def _add_knowledge_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    remote = argparse.ArgumentParser(add_help=False)
    remote.add_argument(
        "--url", help="the API endpoint (default: AGENT_MEMORY_URL, else http://127.0.0.1:8000)"
    )
    remote.add_argument("--api-key", help="the API key (default: AGENT_MEMORY_API_KEY)")
    remote.add_argument("--timeout", type=float, default=None, help="seconds per HTTP attempt (default 10)")
    knowledge = sub.add_parser(
        "knowledge", help="the tenant's shared knowledge: publish, list and delete documents"
    ).add_subparsers(dest="knowledge_command", required=True)
    put = knowledge.add_parser(
        "import",
        help="put every *.md, *.markdown (markdown) and *.txt (text) file under DIR, recursively",
        parents=[remote],
    )
    put.add_argument("directory", metavar="DIR")
    put.add_argument("--tag", action="append", help="tag every document (repeatable)")
    put.add_argument(
        "--version",
        help="the version of every document (default: a hash of each one's content, so an unchanged "
        "file is 'unchanged' when imported again)",
    )
    put.add_argument("--wait", action="store_true", help="poll until every accepted document is stored")
    put.add_argument(
        "--wait-timeout", type=float, default=60.0, help="seconds --wait waits at most (default 60)"
    )
    put.set_defaults(func=cmd_knowledge_import)
    knowledge.add_parser(
        "list", help="list the documents (one JSON line each, without their text)", parents=[remote]
    ).set_defaults(func=cmd_knowledge_list)
    delete = knowledge.add_parser(
        "delete", help="delete a document and every passage of it", parents=[remote]
    )
    delete.add_argument("doc_id", metavar="DOC_ID")
    delete.set_defaults(func=cmd_knowledge_delete)


def build_parser() -> argparse.ArgumentParser:
    # --data-dir is accepted before or after the subcommand; SUPPRESS keeps a later parser's
    # default from overwriting a value given earlier.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--data-dir", default=argparse.SUPPRESS, help=f"local data directory (default {DEFAULT_DATA_DIR})"
    )
    parser = argparse.ArgumentParser(
        prog="agent-memory", description="Long-term memory for AI agents.", parents=[common]
    )
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser(
        "serve", help="serve the HTTP API locally on the embedded default", parents=[common]
    )
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--no-scheduler", action="store_true", help="do not run the cascade on its schedules")
    serve.add_argument(
        "--workers",
        type=int,
        default=None,
        help="processes serving the API (default AGENT_MEMORY_API_WORKERS, else one per CPU on Linux)",
    )
    serve.set_defaults(func=cmd_serve)

    summarize = sub.add_parser(
        "summarize", help="summarize a period or a range of days now (history imports)", parents=[common]
    )
    summarize.add_argument(
        "--grain", required=True, choices=["daily", "weekly", "monthly", "quarterly", "yearly"]
    )
    summarize.add_argument("--period", help="one time key of the grain, e.g. 2026-11-21 or 2026-W47")
    summarize.add_argument("--from", dest="from_", metavar="DATE", help="first day of a range, YYYY-MM-DD")
    summarize.add_argument("--to", metavar="DATE", help="last day of a range (inclusive), YYYY-MM-DD")
    summarize.add_argument(
        "--no-wait", action="store_true", help="only queue the jobs (a running server works them)"
    )
    summarize.set_defaults(func=cmd_summarize)

    retention = sub.add_parser("retention", help="forget on purpose, per plan").add_subparsers(
        dest="retention_command", required=True
    )
    retention.add_parser(
        "run", help="run retention now for every tenant, as the daily schedule does", parents=[common]
    ).set_defaults(func=cmd_retention_run)

    for job, about, does in (
        ("patterns", "recognise patterns in agents' experiences", "recognise patterns"),
        ("profiles", "keep what is known about each person", "make profiles"),
    ):
        jobs = sub.add_parser(job, help=about).add_subparsers(dest=f"{job}_command", required=True)
        run = jobs.add_parser(
            "run", help=f"{does} now, as the daily schedule does; print the report", parents=[common]
        )
        run.add_argument("--agent", help="only this agent (default: every agent with recent memory)")
        run.add_argument("--tenant", help="only this tenant's agents (default: every tenant)")
        run.add_argument(
            "--no-wait", action="store_true", help=f"only queue the {job}' writes (a server stores them)"
        )
        run.set_defaults(func=cmd_agent_jobs_run, job=job)

    _add_mcp_parser(sub)
    _add_knowledge_parser(sub)
    add_export_parser(sub)
    add_import_parser(sub)

    add_keys_parser(sub, common)

    invoke = sub.add_parser(
        "invoke", help="run one handler on a sample event, like a local Lambda invoke", parents=[common]
    )
    invoke.add_argument("function", help=" | ".join(HANDLERS))
    invoke.add_argument("event", help="path to an event JSON file (see events/)")
    invoke.set_defaults(func=cmd_invoke)

    dlq = sub.add_parser("dlq", help="inspect and redrive dead-lettered writes").add_subparsers(
        dest="dlq_command", required=True
    )
    dlq.add_parser("list", help="show dead letters with their reasons", parents=[common]).set_defaults(
        func=cmd_dlq_list
    )
    redrive = dlq.add_parser("redrive", help="move dead letters back to their groups", parents=[common])
    redrive.add_argument("ids", nargs="*")
    redrive.set_defaults(func=cmd_dlq_redrive)

    index = sub.add_parser("index", help="OpenSearch index: bootstrap or status").add_subparsers(
        dest="index_command", required=True
    )
    for name, func, text in (
        ("bootstrap", cmd_index_bootstrap, "create the records, events and knowledge indexes (idempotent)"),
        ("status", cmd_index_status, "show the index behind the alias, its size and _meta"),
    ):
        command = index.add_parser(name, help=text, parents=[common])
        command.add_argument(
            "--endpoint", help="https://domain-endpoint or http://localhost:9200 (default: settings)"
        )
        command.set_defaults(func=func)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command not in API_CLIENT_COMMANDS:
        _local_defaults(getattr(args, "data_dir", None))
    func: Callable[[argparse.Namespace], int] = args.func
    return func(args)


if __name__ == "__main__":
    sys.exit(main())

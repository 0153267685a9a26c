"""`agent-memory import`: load a history (JSON Lines of items or turns, LoCoMo-style conversation
files, a mem0 export) through the HTTP API of a running server (the local runtime or a stack),
with a progress bar on stderr, resumable after an interruption (``--state``, by default the source
path plus ``.import-state.json``) without writing anything twice.

    agent-memory import history.jsonl --agent-id support-bot
    [##########----------]  50.0%  5,000/10,000 items
    [####################] 100.0%  10,000/10,000 items
    {"read": 10000, "written": 9987, "merged": 13, "skipped": 0, "refused": 0, ...}

``--dry-run`` reads and validates every item and sends nothing. The last line (stdout) is the
summary as JSON, for scripts; exit 1 when any item was refused, 2 when the import could not run.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agent_memory.local.api_connection import add_connection_arguments, api_key, api_url
from agent_memory.local.progress_bar import ProgressBar

STATE_SUFFIX = ".import-state.json"


def add_import_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    command = sub.add_parser(
        "import", help="load a history (JSON Lines, LoCoMo, mem0 export) through the API, resumably"
    )
    command.add_argument("source", type=Path, help="the file to import")
    command.add_argument(
        "--format",
        choices=["auto", "jsonl", "locomo", "mem0"],
        default="auto",
        help="the source's format (default: told from the file)",
    )
    command.add_argument(
        "--agent-id", help="the agent for items that name none (replaces LoCoMo's and mem0's agents)"
    )
    command.add_argument("--state", type=Path, help=f"the resume file (default: SOURCE{STATE_SUFFIX})")
    command.add_argument("--batch-size", type=int, default=100, help="items a request (1..100)")
    command.add_argument("--dry-run", action="store_true", help="read and validate; send nothing")
    command.add_argument(
        "--wait", action="store_true", help="at the end, wait until every written item is stored"
    )
    add_connection_arguments(command, "an API key")
    command.set_defaults(func=cmd_import)


def cmd_import(args: argparse.Namespace, **overrides: Any) -> int:
    """Read, validate and write the source (the module docstring); the exit code."""
    from agent_memory.client import ApiError, MemoryClient, TransportError  # not for every command
    from agent_memory.client.importing import (
        Importer,
        read_source,
        source_fingerprint,
    )

    key = api_key(args)
    if not key and not args.dry_run:
        print("error: no API key: pass --api-key or set AGENT_MEMORY_API_KEY", file=sys.stderr)
        return 2
    url = api_url(args)
    state = args.state or args.source.with_name(args.source.name + STATE_SUFFIX)
    progress = ProgressBar(None if args.quiet else sys.stderr)
    try:
        items = read_source(args.source, None if args.format == "auto" else args.format, args.agent_id)
        with MemoryClient(url, key or "dry-run", timeout_s=args.timeout or 30.0, **overrides) as client:
            importer = Importer(
                client,
                batch_size=args.batch_size,
                state_path=state,
                on_progress=lambda done, total: progress.count(done, total, "items"),
            )
            summary = importer.run(items, source=source_fingerprint(args.source), dry_run=args.dry_run)
            progress.end()
            if args.wait and not args.dry_run:
                for agent in sorted({i.agent_id for i in items if i.agent_id}):
                    client.wait_until_stored(agent, timeout_s=max(60.0, len(items) / 10))
    except (OSError, ValueError, TimeoutError) as exc:  # the source, or a refused setting
        return progress.fail(exc)
    except (ApiError, TransportError) as exc:
        return progress.fail(f"{exc} (run the same command again to resume from {state})")
    print(json.dumps(summary.as_dict()))
    return 1 if summary.refused else 0

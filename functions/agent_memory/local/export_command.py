"""`agent-memory export`: export one end user's memory (``--user-id``) or one agent's
(``--agent-id``) through the HTTP API of a running server (the local runtime or a stack), follow
its progress with a bar on stderr, and stream the JSON Lines file to ``--output`` (``-``: stdout).

    agent-memory export --user-id u-7 -o u-7.jsonl
    [##########----------]  52%  52,113/100,000 memories
    [####################] 100%  100,000/100,000 memories
    downloading ... 48.2 MB
    {"export_id": "exp_...", "memories": 100000, "summaries": 41, ..., "output": "u-7.jsonl"}

The last line (stdout, or stderr when the file goes to stdout) is JSON, for scripts. Exit 1 when
the export failed, 2 when the request was refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import ExitStack
from pathlib import Path
from typing import Any, BinaryIO

from agent_memory.local.api_connection import add_connection_arguments, api_key, api_url
from agent_memory.local.progress_bar import ProgressBar


def add_export_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = sub.add_parser(
        "export", help="export an end user's or an agent's memory as JSON Lines, through the API"
    )
    subject = export.add_mutually_exclusive_group(required=True)
    subject.add_argument("--user-id", help="the end user whose memory to export (every agent of the tenant)")
    subject.add_argument("--agent-id", help="the agent whose memory to export")
    export.add_argument("--since", help="only what speaks about this instant or later (ISO 8601)")
    export.add_argument("--until", help="only what speaks about this instant or earlier (ISO 8601)")
    export.add_argument("-o", "--output", required=True, help="the file to write ('-': standard output)")
    add_connection_arguments(export, "an admin API key")
    export.set_defaults(func=cmd_export)


def cmd_export(args: argparse.Namespace, **overrides: Any) -> int:
    """Start the export, follow it, stream its file (the module docstring); the exit code."""
    from agent_memory.client import ApiError, MemoryClient, TransportError  # not for every command

    key = api_key(args)
    if not key:
        print("error: no API key: pass --api-key or set AGENT_MEMORY_API_KEY (an admin key)", file=sys.stderr)
        return 2
    url = api_url(args)
    progress = ProgressBar(None if args.quiet else sys.stderr)
    try:
        with MemoryClient(url, key, timeout_s=args.timeout or 30.0, **overrides) as client:
            started = client.start_export(
                user_id=args.user_id, agent_id=args.agent_id, since=args.since, until=args.until
            )
            done = client.wait_for_export(started.id, on_progress=progress.export)
            if done.status != "done":
                return progress.fail(f"export {done.id} failed: {done.error}", 1)
            with ExitStack() as files:
                out: BinaryIO = (
                    sys.stdout.buffer
                    if args.output == "-"
                    else files.enter_context(Path(args.output).open("wb"))
                )
                size = client.download_export(done.id, out, on_bytes=progress.download)
            progress.end()
    except (ValueError, ApiError, TransportError) as exc:  # ValueError: refused before it was sent
        return progress.fail(exc)
    summary = {
        "export_id": done.id,
        **done.progress.model_dump(exclude={"percent", "bytes", "estimated_total"}),
        "bytes": size,
        "output": args.output,
    }
    print(json.dumps(summary), file=sys.stderr if args.output == "-" else sys.stdout)
    return 0

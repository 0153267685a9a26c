"""How the CLI's API-client commands (export, import) are told where the API is and which key to
use: the same flags and environment variables for each, read in one place."""

from __future__ import annotations

import argparse
import os

#: Where the commands find the API when neither --url nor AGENT_MEMORY_URL says (as `mcp` does).
DEFAULT_API_URL = "http://127.0.0.1:8000"


def add_connection_arguments(parser: argparse.ArgumentParser, key_help: str) -> None:
    """``--url``, ``--api-key`` (described by ``key_help``), ``--timeout`` and ``--quiet``."""
    parser.add_argument("--url", help=f"the API endpoint (default: AGENT_MEMORY_URL, else {DEFAULT_API_URL})")
    parser.add_argument("--api-key", help=f"{key_help} (default: AGENT_MEMORY_API_KEY)")
    parser.add_argument("--timeout", type=float, default=None, help="seconds per HTTP attempt (default 30)")
    parser.add_argument("--quiet", action="store_true", help="no progress on stderr")


def api_url(args: argparse.Namespace) -> str:
    return str(args.url or os.environ.get("AGENT_MEMORY_URL") or DEFAULT_API_URL)


def api_key(args: argparse.Namespace) -> str | None:
    return args.api_key or os.environ.get("AGENT_MEMORY_API_KEY") or None

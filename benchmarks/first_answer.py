"""Fresh clone to first answer: how long a new developer waits between ``git clone`` and the first
search that finds what they wrote, and what ``make dev`` installed to get there.

The checkout's committed ``HEAD`` (or ``--rev``) is cloned into a temporary folder, ``make dev``
is started there on a free port, and the clock runs until:

- ``installed_s``: ``make dev`` finished installing (its stamp file in ``.venv`` appeared);
- ``serving_s``: ``GET /health`` answered;
- ``first_answer_s``: a ``POST /v1/agents/{agent}/memories`` was accepted and a search found the
  memory (the README's "Try it" requests, with the dev key ``make dev`` wrote).

It reports the size of the clone's ``.venv`` and how many distributions it holds. Without
``--cold`` pip uses this machine's cache (so a second run measures a primed cache); with it
``PIP_NO_CACHE_DIR=1`` is set, so every wheel is downloaded, as on a fresh machine or CI runner.

    python benchmarks/first_answer.py [--cold] [--rev REV] [--name NAME]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
AGENT = "first-answer"
FACT = "Alice moved the launch to March 3."
#: Longest wait for the whole run (a cold install on a slow link takes minutes).
DEADLINE_S = 1800.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _call(url: str, body: dict[str, Any] | None = None, key: str | None = None) -> Any:
    request = urllib.request.Request(
        url,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Content-Type": "application/json", **({"Authorization": f"Bearer {key}"} if key else {})},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"null")


def _until(what: str, check: Any, started: float, make: subprocess.Popen[bytes]) -> float:
    """Poll ``check()`` until it is true; the seconds since ``started`` at that moment."""
    while True:
        if make.poll() is not None:
            raise RuntimeError(f"make dev exited ({make.returncode}) before {what}")
        if time.perf_counter() - started > DEADLINE_S:
            raise TimeoutError(what)
        try:
            if check():
                return time.perf_counter() - started
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.1)


def _size(folder: Path) -> int:
    return sum(p.lstat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def run(rev: str | None, cold: bool, port: int) -> dict[str, Any]:
    """One fresh clone, one ``make dev``, the first answer; its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "fc"
        subprocess.run(["git", "clone", "--quiet", str(ROOT), str(clone)], check=True)
        if rev:
            subprocess.run(["git", "-C", str(clone), "checkout", "--quiet", rev], check=True)
        commit = subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=False,
        ).stdout.strip()
        env = {**os.environ, **({"PIP_NO_CACHE_DIR": "1"} if cold else {})}
        env.pop("VIRTUAL_ENV", None)
        base = f"http://127.0.0.1:{port}"
        log = (Path(tmp) / "make-dev.log").open("wb")
        started = time.perf_counter()
        make = subprocess.Popen(
            ["make", "dev", f"PORT={port}"],
            cwd=clone,
            env=env,
            stdout=log,
            stderr=log,
            start_new_session=True,
        )
        try:
            venv = clone / ".venv"
            installed_s = _until("the install", lambda: any(venv.glob(".installed*")), started, make)
            serving_s = _until("serving", lambda: _call(f"{base}/health") is not None, started, make)
            key = (clone / ".agent-memory" / "dev-key").read_text().strip()
            memories = f"{base}/v1/agents/{AGENT}/memories"
            _call(memories, {"items": [{"content": FACT, "role": "user"}]}, key)

            def found() -> bool:
                hits = _call(f"{memories}/search", {"query": "when is the launch?"}, key)["results"]
                return any(FACT in hit["text"] for hit in hits)

            first_answer_s = _until("the first answer", found, started, make)
        except Exception:
            log.flush()
            sys.stderr.write((Path(tmp) / "make-dev.log").read_text(errors="replace")[-4000:])
            raise
        finally:
            os.killpg(make.pid, signal.SIGTERM)
            make.wait(timeout=60)
            log.close()
        listed = subprocess.run(
            [str(venv / "bin" / "python"), "-m", "pip", "list", "--format", "json"],
            capture_output=True,
            text=True,
            check=True,
        )
        return {
            "commit": commit,
            "pip_cache": not cold,
            "installed_s": round(installed_s, 1),
            "serving_s": round(serving_s, 1),
            "first_answer_s": round(first_answer_s, 1),
            "venv_mb": round(_size(venv) / 1e6, 1),
            "packages": len(json.loads(listed.stdout)),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rev", help="the commit to clone (default: the checkout's HEAD)")
    parser.add_argument("--cold", action="store_true", help="install without pip's cache")
    parser.add_argument("--port", type=int, default=0, help="default: a free port")
    parser.add_argument("--name", help="results/<name>.json (default first_answer[-cold])")
    args = parser.parse_args(argv)
    row = run(args.rev, args.cold, args.port or _free_port())
    print(" ".join(f"{k}={v}" for k, v in row.items()))
    RESULTS.mkdir(exist_ok=True)
    name = args.name or ("first_answer-cold" if args.cold else "first_answer")
    report = {"python": sys.version.split()[0], "machine": platform.machine(), "cpus": os.cpu_count(), **row}
    (RESULTS / f"{name}.json").write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

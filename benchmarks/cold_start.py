"""Cold-start import time of each function's handler, with and without compiled bytecode.

Lambda's code directory is read-only: a package shipped without ``.pyc`` files is compiled from
source at every cold start and the result thrown away. This measures what that costs: each
handler module is imported in a fresh interpreter (as a cold start does), ``--runs`` times, with
``PYTHONPYCACHEPREFIX`` pointing at

- an empty, read-only directory (no bytecode, none can be written: the asset before), and
- a directory filled by ``compileall`` beforehand (the asset after: bytecode shipped);

the interpreter then ignores the ``__pycache__`` folders beside the sources, so the figures do
not depend on what this machine compiled before. Prints the median seconds per handler.

    python benchmarks/cold_start.py [--runs 7]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HANDLERS = (
    "agent_memory.handlers.api",
    "agent_memory.handlers.authorizer",
    "agent_memory.handlers.writer",
    "agent_memory.handlers.summarize_worker",
)
PROBE = (
    "import time,importlib,sys;t=time.perf_counter();"
    "importlib.import_module(sys.argv[1]);print(time.perf_counter()-t)"
)


def _env(prefix: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENT_MEMORY_", "PYTHONPYCACHE"))}
    env.update(
        PYTHONPYCACHEPREFIX=str(prefix),
        PYTHONPATH=str(ROOT / "functions"),
        POWERTOOLS_TRACE_DISABLED="false",  # import the X-Ray SDK as the deployed functions do
        AWS_REGION="us-east-1",
    )
    return env


def _import_seconds(module: str, prefix: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        done = subprocess.run(
            [sys.executable, "-c", PROBE, module],
            env=_env(prefix),
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return statistics.median(times)


def _compile(prefix: Path) -> None:
    """Bytecode for the package and every installed dependency, into ``prefix``."""
    dirs = [
        ROOT / "functions",
        Path(sysconfig.get_paths()["purelib"]),
        Path(sysconfig.get_paths()["platlib"]),
    ]
    for folder in dict.fromkeys(dirs):
        subprocess.run(
            [
                sys.executable,
                "-m",
                "compileall",
                "-q",
                "-j0",
                "--invalidation-mode",
                "unchecked-hash",
                str(folder),
            ],
            env=_env(prefix),
            check=False,
            capture_output=True,
        )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        empty, compiled = Path(tmp) / "none", Path(tmp) / "compiled"
        empty.mkdir()
        empty.chmod(0o555)
        _compile(compiled)
        result = {
            module.rsplit(".", 1)[1]: {
                "without_bytecode_s": round(_import_seconds(module, empty, args.runs), 3),
                "with_bytecode_s": round(_import_seconds(module, compiled, args.runs), 3),
            }
            for module in HANDLERS
        }
        empty.chmod(0o755)
    print(json.dumps({"python": sys.version.split()[0], "runs": args.runs, "import": result}, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

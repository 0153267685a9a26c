"""What an agent developer installs for the client: time, size and import time, per install target.

This checkout is built into a wheel once (as an index would serve it; from a copy, so that the
build leaves nothing in the checkout); then for each target (``agent-memory`` is the wheel with
its base dependencies, ``agent-memory[server]`` with the server's, and so on) a fresh virtual
environment is made, the target installed into it with pip, and measured:

- ``install_s``: the wall-clock seconds of that ``pip install``, with this machine's pip cache
  (downloads mostly cached: pip's index queries dominate) or, with ``--cold``, without any cache
  (every wheel downloaded, as on a fresh machine or a CI runner);
- ``size_mb``: what the install added to the environment (site-packages and scripts), in MB;
- ``packages``: the distributions it added;
- ``import_cpu_s``: the median CPU seconds a fresh interpreter spends importing
  ``agent_memory.client`` and ``agent_memory.tools`` (CPU rather than wall time, so that other
  work on a shared machine does not count), or the error if it cannot import them.

    python benchmarks/client_footprint.py [--cold] [--targets agent-memory 'agent-memory[server]'] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
PROBE = (
    "import time;t=time.process_time();"
    "import agent_memory.client, agent_memory.tools;print(time.process_time()-t)"
)


def _size(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file() and not p.is_symlink())


def _packages(python: Path) -> set[str]:
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format", "json", "--disable-pip-version-check"],
        capture_output=True,
        text=True,
        check=True,
    )
    return {p["name"].lower() for p in json.loads(listed.stdout)}


def _import_seconds(python: Path, runs: int) -> float | str:
    first = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, check=False)
    if first.returncode != 0:
        return first.stderr.strip().splitlines()[-1]
    times = []
    for _ in range(runs):
        done = subprocess.run([str(python), "-c", PROBE], capture_output=True, text=True, check=True)
        times.append(float(done.stdout.strip().splitlines()[-1]))
    return round(statistics.median(times), 3)


def build_wheel(folder: Path) -> Path:
    """This checkout as a wheel, in ``folder``: built from a copy of what the wheel is made of,
    so that the build leaves nothing in the checkout."""
    source = folder / "source"
    shutil.copytree(
        ROOT / "functions", source / "functions", ignore=shutil.ignore_patterns("__pycache__", "*.egg-info")
    )
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(folder), str(source)],
        check=True,
    )
    return next(folder.glob("agent_memory-*.whl"))


def measure(target: str, wheel: Path, runs: int, cold: bool = False) -> dict[str, object]:
    """One fresh environment, one install of ``target``, its figures."""
    with tempfile.TemporaryDirectory() as tmp:
        env = Path(tmp) / "venv"
        subprocess.run([sys.executable, "-m", "venv", str(env)], check=True)
        python = env / "bin" / "python"
        before_size, before_packages = _size(env), _packages(python)
        spec = str(wheel) + target.removeprefix("agent-memory")
        start = time.perf_counter()
        subprocess.run(
            [
                *(str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"),
                *(["--no-cache-dir"] if cold else []),
                spec,
            ],
            check=True,
        )
        install_s = time.perf_counter() - start
        added = sorted(_packages(python) - before_packages)
        return {
            "target": target,
            "install_s": round(install_s, 1),
            "size_mb": round((_size(env) - before_size) / 1e6, 1),
            "packages": len(added),
            "added": added,
            "import_cpu_s": _import_seconds(python, runs),
        }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--targets", nargs="+", default=["agent-memory", "agent-memory[server]"])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="install without pip's cache")
    parser.add_argument("--name", help="results/<name>.json (default client_footprint[-cold])")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        wheel = build_wheel(Path(tmp))
        rows = [measure(target, wheel, args.runs, args.cold) for target in args.targets]
    print(f"{'target':<22} {'install s':>9} {'size MB':>8} {'packages':>8} {'import CPU s':>12}")
    for row in rows:
        print(
            f"{row['target']:<22} {row['install_s']:>9} {row['size_mb']:>8} {row['packages']:>8} "
            f"{row['import_cpu_s']!s:>12}"
        )
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    RESULTS.mkdir(exist_ok=True)
    name = args.name or ("client_footprint-cold" if args.cold else "client_footprint")
    (RESULTS / f"{name}.json").write_text(
        json.dumps(
            {
                "python": sys.version.split()[0],
                "machine": platform.machine(),
                "commit": commit.stdout.strip(),
                "pip_cache": not args.cold,
                "rows": rows,
            },
            indent=2,
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

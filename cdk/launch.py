#!/usr/bin/env python3
"""What cdk.json's ``app`` runs: the CDK app in the project's virtual environment.

``npx aws-cdk synth`` (or ``deploy``) from ``cdk/`` works on a fresh clone: when the
environment is missing this sets it up first with ``make install`` (the one place that knows
how), then runs ``app.py`` with its interpreter. Standard library only: it runs before any
dependency is installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / ("Scripts/python.exe" if os.name == "nt" else "bin/python")


def main() -> int:
    if not (ROOT / ".venv" / ".installed").exists():
        print("agent-memory: setting up .venv (make install) before the CDK app runs", file=sys.stderr)
        done = subprocess.run(["make", "-s", "-C", str(ROOT), "install"], stdout=sys.stderr, check=False)
        if done.returncode != 0:
            return done.returncode
    app = Path(__file__).resolve().parent / "app.py"
    os.execv(str(VENV_PYTHON), [str(VENV_PYTHON), str(app), *sys.argv[1:]])
    return 0  # pragma: no cover - execv does not return


if __name__ == "__main__":
    raise SystemExit(main())

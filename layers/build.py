"""The dependency layer: locked from pyproject.toml, installed by pip for Lambda's platform.

No Docker: pip downloads wheels built for Lambda (CPython 3.12 on arm64, glibc >= 2.17 or 2.28;
the python3.12 runtime runs Amazon Linux 2023, glibc 2.34) into a folder, whatever machine runs
it. Two commands, both used by the Makefile and the CDK app:

- ``python layers/build.py lock`` resolves the runtime dependencies of pyproject.toml for that
  platform and writes ``layers/requirements.txt``: every package pinned with its wheel's sha256.
  Run it after changing ``[project.dependencies]`` or the ``server`` extra; a test fails while
  the lock disagrees.
- ``python layers/build.py install --target DIR`` installs exactly the lock into ``DIR`` (the CDK
  asset's ``python/`` folder), ``--no-deps --require-hashes``: nothing unlocked gets in.
- ``python layers/build.py test-venv --target DIR`` makes the virtual environment `make test` runs
  the deployed-configuration tests in as Lambda would run the code (`test_venv`).

Left out of the layer, on purpose (`EXCLUDED`): boto3, botocore and s3transfer come with the Lambda
runtime; opensearch-py 3.x declares opensearch-protobufs (with grpcio and protobuf, ~20 MB) for
a gRPC transport it never imports.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = ROOT / "pyproject.toml"
LOCK = Path(__file__).resolve().parent / "requirements.txt"

PYTHON_VERSION = "3.12"
#: Wheels Lambda's arm64 Python 3.12 runtime can load. manylinux2014 (glibc 2.17) is the classic
#: tag; manylinux_2_28 is needed because current numpy ships arm64 wheels only with that tag.
PLATFORMS = ("manylinux2014_aarch64", "manylinux_2_28_aarch64")
EXCLUDED = frozenset({"boto3", "botocore", "s3transfer", "opensearch-protobufs", "grpcio", "protobuf"})
#: Removed after install, never read at run time: type stubs, numpy's test suite and C headers
#: (and any bytecode pip made; `compile_bytecode` then compiles for the runtime's version).
PRUNED = ("**/__pycache__", "**/*.pyi", "numpy/**/tests", "numpy/_core/include")


def normalize(name: str) -> str:
    """PEP 503 name: ``Typing_Extensions`` -> ``typing-extensions``."""
    return "-".join(name.replace("_", "-").replace(".", "-").lower().split("-"))


def runtime_requirements(pyproject: Path = PYPROJECT) -> list[str]:
    """``[project.dependencies]`` and the ``server`` extra (what the functions import), without
    what the runtime provides."""
    project = tomllib.loads(pyproject.read_text())["project"]
    deps: list[str] = project["dependencies"] + project.get("optional-dependencies", {}).get("server", [])
    return [d for d in deps if normalize(_name(d)) not in EXCLUDED]


def _name(requirement: str) -> str:
    for stop in "[<>=!~; ":
        requirement = requirement.split(stop, 1)[0]
    return requirement


def platform_args() -> list[str]:
    args = ["--only-binary=:all:", "--implementation", "cp", "--python-version", PYTHON_VERSION]
    for platform in PLATFORMS:
        args += ["--platform", platform]
    return args


def install_command(target: Path, lock: Path = LOCK) -> list[str]:
    """The pip command that installs the lock into ``target`` for Lambda."""
    return [
        sys.executable, "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
        "--no-deps", "--require-hashes", "--no-compile", *platform_args(),
        "--target", str(target), "-r", str(lock),
    ]  # fmt: skip


def _run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command[:4])} ... failed ({done.returncode}):\n{done.stderr[-4000:]}")


def lock(pyproject: Path = PYPROJECT, out: Path = LOCK) -> str:
    """Resolve the runtime dependencies for Lambda and write the pinned, hashed lock."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        _run(
            [sys.executable, "-m", "pip", "install", "--quiet", "--dry-run", "--ignore-installed",
             "--report", str(report), *platform_args(), "--target", str(Path(tmp) / "t"),
             *runtime_requirements(pyproject)]
        )  # fmt: skip
        resolved = json.loads(report.read_text())["install"]
    lines = [
        "# The Lambda dependency layer, locked by `python layers/build.py lock` (make layer-lock)",
        "# from pyproject.toml [project.dependencies] and the server extra, "
        f"CPython {PYTHON_VERSION}, {', '.join(PLATFORMS)}.",
        f"# Left out: {', '.join(sorted(EXCLUDED))} (see layers/build.py).",
    ]
    for item in sorted(resolved, key=lambda i: normalize(i["metadata"]["name"])):
        name = normalize(item["metadata"]["name"])
        if name in EXCLUDED:
            continue
        sha = item["download_info"]["archive_info"]["hashes"]["sha256"]
        lines.append(f"{name}=={item['metadata']['version']} --hash=sha256:{sha}")
    text = "\n".join(lines) + "\n"
    out.write_text(text)
    return text


def prune(target: Path) -> None:
    for pattern in PRUNED:
        for path in sorted(target.glob(pattern), reverse=True):
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            elif path.exists():
                path.unlink()


def _candidates() -> list[str]:
    version = PYTHON_VERSION
    found = [
        os.environ.get("AGENT_MEMORY_BUILD_PYTHON") or "",
        sys.executable,
        shutil.which(f"python{version}") or "",
    ]
    found += sorted(str(p) for p in Path.home().glob(f".pyenv/versions/{version}.*/bin/python{version}"))
    return [c for c in dict.fromkeys(found) if c]


def build_python() -> str | None:
    """An interpreter of the runtime's version to compile bytecode with, or None.

    Bytecode is specific to a Python minor version, so only Python ``PYTHON_VERSION`` can make
    what the runtime loads: ``AGENT_MEMORY_BUILD_PYTHON`` if set, this interpreter, a
    ``python3.12`` on the PATH or one pyenv installed; the first that runs and is that version.
    """
    for candidate in _candidates():
        done = subprocess.run(
            [candidate, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode == 0 and done.stdout.strip() == PYTHON_VERSION:
            return candidate
    return None


def compile_bytecode(target: Path, python: str | None = None) -> bool:
    """Compile every module under ``target`` into ``__pycache__``, as the runtime reads it.

    Lambda's code directory is read-only: without shipped bytecode every cold start compiles
    every imported module from source and throws the result away (benchmarks/cold_start.py:
    about 0.5 s of a 1.1 s API handler import). ``unchecked-hash`` pycs are never checked
    against their source's mtime, which zip files do not keep exactly. Returns False, and
    leaves ``target`` as it was, when no interpreter of the runtime's version is available.
    """
    python = python or build_python()
    if python is None:
        print(
            f"warning: no Python {PYTHON_VERSION} to compile bytecode with (set AGENT_MEMORY_BUILD_PYTHON): "
            "shipping sources only, cold starts will compile them",
            file=sys.stderr,
        )
        return False
    _run([python, "-m", "compileall", "-q", "-j0", "--invalidation-mode", "unchecked-hash", str(target)])
    return True


def install(target: Path, lock_file: Path = LOCK) -> int:
    """Install the lock into ``target`` with bytecode; returns the installed size in bytes."""
    target.mkdir(parents=True, exist_ok=True)
    _run(install_command(target, lock_file))
    prune(target)
    compile_bytecode(target)
    return sum(p.stat().st_size for p in target.rglob("*") if p.is_file())


#: What the deployed-configuration tests need on top of the layer and the function code, and no
#: more: pytest runs them and moto answers SQS and DynamoDB in process (S3 and the rest of moto's
#: services come with it). Both pull in their own dependencies (boto3 and botocore, which the
#: Lambda runtime provides as well). Installed at the development environment's versions.
TEST_HARNESS = ("pytest", "moto[dynamodb,sqs]")


def locked(lock_file: Path = LOCK) -> dict[str, str]:
    """The lock's packages and their versions."""
    pins = {}
    for line in lock_file.read_text().splitlines():
        if line and not line.startswith("#"):
            name, _, version = line.split(" ", 1)[0].partition("==")
            pins[normalize(name)] = version
    return pins


def test_venv(target: Path, lock_file: Path = LOCK) -> bool:
    """A Python ``PYTHON_VERSION`` virtual environment in ``target`` holding the lock's packages at
    their locked versions, the test harness (`TEST_HARNESS`) and nothing else; the function code
    is not installed (the tests put ``functions/`` on the path, as Lambda puts the code asset).

    The lock's hashes are those of Lambda's arm64 wheels, so the same versions are installed for
    this machine, and with the lock as constraints the harness cannot move one of them. Returns
    False, and makes nothing, when no Python ``PYTHON_VERSION`` is found: a failure under CI
    (``CI=true``), where the tests would otherwise be skipped unseen, a warning elsewhere.
    """
    python = build_python()
    if python is None:
        message = (
            f"no Python {PYTHON_VERSION} for the deployed tests on Lambda's runtime "
            "(install it, or name it in AGENT_MEMORY_BUILD_PYTHON)"
        )
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            raise RuntimeError(message)
        print(f"warning: {message}: skipped", file=sys.stderr)
        return False
    from importlib.metadata import version

    shutil.rmtree(target, ignore_errors=True)
    _run([python, "-m", "venv", str(target)])
    pip = venv_installer(target / "bin" / "python")
    pins = [f"{name}=={v}" for name, v in locked(lock_file).items()]
    with tempfile.TemporaryDirectory() as tmp:
        constraints = Path(tmp) / "constraints.txt"
        constraints.write_text("\n".join(pins) + "\n")
        _run([*pip, "--no-deps", *pins])
        harness = [f"{spec}=={version(_name(spec))}" for spec in TEST_HARNESS]
        _run([*pip, "-c", str(constraints), *harness])
    return True


def venv_installer(python: Path) -> list[str]:
    """The install command for the virtual environment of ``python``: uv's pip where the
    development environment has uv (`make install` puts it there; it installs the deployed
    tests' environment in seconds where pip takes minutes), pip otherwise. Both take the same
    arguments used here (pins, ``--no-deps``, ``-c constraints``)."""
    uv = Path(sys.executable).parent / "uv"
    if uv.is_file() and os.access(uv, os.X_OK):
        return [str(uv), "pip", "install", "--quiet", "--python", str(python)]
    return [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("lock", help="resolve pyproject's runtime dependencies into layers/requirements.txt")
    inst = sub.add_parser("install", help="install the lock into a folder (the layer's python/)")
    inst.add_argument("--target", type=Path, required=True)
    comp = sub.add_parser("compile", help="compile a folder's modules for the runtime's Python")
    comp.add_argument("--target", type=Path, required=True)
    venv = sub.add_parser("test-venv", help="a Python 3.12 venv of the lock and the deployed tests' harness")
    venv.add_argument("--target", type=Path, required=True)
    args = parser.parse_args(argv)
    if args.command == "test-venv":
        try:
            made = test_venv(args.target)
        except RuntimeError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if made:
            (args.target / ".installed").touch()
            print(f"made {args.target}: Python {PYTHON_VERSION}, the lock and {', '.join(TEST_HARNESS)}")
        return 0
    if args.command == "compile":
        done = compile_bytecode(args.target)
        print(f"bytecode for Python {PYTHON_VERSION}: {'compiled' if done else 'skipped'}")
        return 0
    if args.command == "lock":
        lock()
        print(f"wrote {LOCK.relative_to(ROOT)}")
    else:
        size = install(args.target)
        print(f"installed the layer into {args.target}: {size / 1_000_000:.1f} MB unzipped")
    return 0


if __name__ == "__main__":
    sys.exit(main())

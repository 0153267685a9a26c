"""The dependency layer's lock agrees with pyproject.toml and installs only for Lambda's platform."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]


def _build_module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("layer_build", ROOT / "layers" / "build.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("layer_build", module)
    spec.loader.exec_module(module)
    return module


build = _build_module()


def _lock() -> dict[str, tuple[str, str]]:
    """name -> (version, hash) from layers/requirements.txt."""
    pins = {}
    for line in (ROOT / "layers" / "requirements.txt").read_text().splitlines():
        if not line or line.startswith("#"):
            continue
        pin, _, hash_part = line.partition(" --hash=")
        name, _, version = pin.partition("==")
        pins[name] = (version, hash_part)
    return pins


def test_every_runtime_dependency_is_locked_at_a_version_pyproject_allows() -> None:
    # GIVEN pyproject's runtime dependencies and the committed lock
    dependencies = build.runtime_requirements()
    pins = _lock()
    # WHEN / THEN each one the layer carries is pinned, inside its specifier (else: make layer-lock)
    for dependency in dependencies:
        requirement = Requirement(dependency)
        name = build.normalize(requirement.name)
        if name in build.EXCLUDED:
            continue
        assert name in pins, f"{name} is not in layers/requirements.txt: run make layer-lock"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), (name, pins[name][0])


def test_the_lock_pins_exact_versions_with_hashes_and_leaves_out_what_the_runtime_has() -> None:
    # GIVEN
    pins = _lock()
    # WHEN / THEN
    assert pins
    for name, (version, hash_part) in pins.items():
        assert version and hash_part.startswith("sha256:") and len(hash_part) == len("sha256:") + 64, name
    assert not set(pins) & build.EXCLUDED
    assert {"boto3", "botocore"} <= build.EXCLUDED


def test_install_is_exactly_the_lock_for_arm64_cpython_312() -> None:
    # WHEN
    command = build.install_command(Path("/tmp/out/python"))
    # THEN
    assert command[:4] == [sys.executable, "-m", "pip", "install"]
    for flag in ("--no-deps", "--require-hashes", "--no-compile", "--only-binary=:all:"):
        assert flag in command
    assert command[command.index("--python-version") + 1] == "3.12"
    assert command[command.index("--implementation") + 1] == "cp"
    platforms = [command[i + 1] for i, arg in enumerate(command) if arg == "--platform"]
    assert platforms == ["manylinux2014_aarch64", "manylinux_2_28_aarch64"]
    assert command[command.index("--target") + 1] == "/tmp/out/python"
    assert command[-2:] == ["-r", str(build.LOCK)]


def test_the_deployed_tests_environment_is_installed_by_uv_beside_the_interpreter_or_else_pip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a development environment without uv
    python = tmp_path / "bin" / "python"
    python.parent.mkdir()
    python.touch()
    target = Path("/tmp/venv/bin/python")
    monkeypatch.setattr(sys, "executable", str(python))
    # THEN pip of the target environment installs
    assert build.venv_installer(target)[:4] == [str(target), "-m", "pip", "install"]
    # WHEN `make install` has put uv beside the interpreter
    uv = python.parent / "uv"
    uv.touch(mode=0o755)
    # THEN uv installs into the target environment
    command = build.venv_installer(target)
    assert command[:3] == [str(uv), "pip", "install"]
    assert command[command.index("--python") + 1] == str(target)


def test_layer_and_functions_agree_on_the_python_version() -> None:
    # GIVEN
    if importlib.util.find_spec("aws_cdk") is None:
        pytest.skip("aws-cdk-lib not installed")
    from agent_memory_stack.function_factory import RUNTIME

    # WHEN / THEN
    assert RUNTIME.name == f"python{build.PYTHON_VERSION}"


def test_runtime_requirements_drop_boto3(tmp_path: Path) -> None:
    # GIVEN
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[project]\ndependencies = ["boto3>=1.34", "pydantic>=2.7,<3", "numpy>=1.26"]\n')
    # WHEN / THEN
    assert build.runtime_requirements(pyproject) == ["pydantic>=2.7,<3", "numpy>=1.26"]


def test_runtime_requirements_take_the_server_extra_too(tmp_path: Path) -> None:
    # GIVEN the client's dependencies and the server's as an extra
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text(
        '[project]\ndependencies = ["pydantic>=2.7,<3"]\n'
        '[project.optional-dependencies]\nserver = ["boto3>=1.34", "numpy>=1.26"]\ndev = ["pytest>=8"]\n'
    )
    # WHEN / THEN the layer carries both, and no other extra
    assert build.runtime_requirements(pyproject) == ["pydantic>=2.7,<3", "numpy>=1.26"]


def test_prune_removes_bytecode_stubs_and_numpy_tests_only(tmp_path: Path) -> None:
    # GIVEN
    for path in (
        "pkg/__pycache__/m.cpython-311.pyc",
        "pkg/m.py",
        "pkg/m.pyi",
        "numpy/_core/tests/test_x.py",
        "numpy/_core/include/numpy/x.h",
        "numpy/_core/multiarray.py",
        "other/tests/keep.py",
    ):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("x")
    build.prune(tmp_path)
    # WHEN
    left = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    # THEN
    assert left == {"pkg/m.py", "numpy/_core/multiarray.py", "other/tests/keep.py"}

"""The synthesized templates the deployed tests run, kept as files for a run without the CDK.

The deployed-configuration tests run twice in `make test`: in the development environment, and
on Lambda's Python (3.12) with the layer's locked packages and the function code only
(``layers/build.py test-venv``). That second environment has no aws-cdk-lib, so the development
environment synthesizes the templates (the first run saves them on the way) and the second reads
them from the folder named by ``AGENT_MEMORY_DEPLOYED_TEMPLATES``. Each file carries a
fingerprint of the sources it was made from, and a stale one is refused rather than tested.

``python -m tests.deployed.templates [FOLDER]`` writes the ones missing or stale.
"""

from __future__ import annotations

import functools
import hashlib
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
#: Where the first run saves them and the second reads them.
FOLDER = ROOT / ".build" / "deployed-templates"
ENV = "AGENT_MEMORY_DEPLOYED_TEMPLATES"
#: Each variant the deployed tests deploy: its context on top of cdk.json.
VARIANTS: dict[str, dict[str, Any]] = {"default": {}, "files": {"store": "serverless"}}
#: A template: the raw template, and each function's logical id by the factory's name.
Template = tuple[dict[str, Any], dict[str, str]]


@functools.cache
def fingerprint() -> str:
    """A hash of everything a template is made from: the CDK app, the functions, the lock.

    Taken once per process: what a run tests is the sources as they were when it started (the
    Makefile makes the templates just before), whatever is edited while it runs."""
    digest = hashlib.sha256()
    sources = [*sorted((ROOT / "cdk").rglob("*.py")), ROOT / "cdk" / "cdk.json"]
    sources += [*sorted((ROOT / "functions").rglob("*.py")), ROOT / "layers" / "requirements.txt"]
    for path in sources:
        if "cdk.out" not in path.parts:
            digest.update(str(path.relative_to(ROOT)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def synthesize(variant: str, tmp: Path) -> Template:
    """``variant`` synthesized as the infra tests synthesize it (needs the ``cdk`` extra)."""
    from tests.infra.conftest import _synth
    from tests.infra.support import committed_context

    synth = _synth(tmp, {**committed_context(), **VARIANTS[variant]})
    functions = {name: synth.logical_id(fn) for name, fn in synth.stack.factory.functions.items()}
    return synth.raw, functions


def save(folder: Path, variant: str, template: Template) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    raw, functions = template
    body = {"fingerprint": fingerprint(), "template": raw, "functions": functions}
    (folder / f"{variant}.json").write_text(json.dumps(body))


def load(folder: Path, variant: str) -> Template:
    """The saved ``variant``, or an error saying how to make it when it is missing or stale."""
    path = folder / f"{variant}.json"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no saved template (python -m tests.deployed.templates {folder})")
    body = json.loads(path.read_text())
    if body["fingerprint"] != fingerprint():
        raise RuntimeError(
            f"{path} was made from other sources (python -m tests.deployed.templates {folder})"
        )
    return body["template"], body["functions"]


def main(argv: list[str]) -> int:
    folder = Path(argv[0]) if argv else FOLDER
    for variant in VARIANTS:
        try:
            load(folder, variant)
        except (FileNotFoundError, RuntimeError):
            with tempfile.TemporaryDirectory() as tmp:
                save(folder, variant, synthesize(variant, Path(tmp)))
            print(f"synthesized {folder / variant}.json")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Every figure docs/infrastructure.md gives about the stack, counted again on what it describes:
the synthesized templates (resources, alarms, functions, the OpenSearch clients' timeouts), the
code asset's sources, the test files. A figure that drifts fails here, with the value it should say.

Each figure is found by its sentence: a sentence reworded so that its pattern no longer matches
fails too, so a figure cannot leave this check by being rephrased."""

from __future__ import annotations

import ast
import fnmatch
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from tests.infra.support import CDK_MISSING, ROOT, SKIP_REASON, Synth

pytestmark = pytest.mark.skipif(CDK_MISSING, reason=SKIP_REASON)

DOC = ROOT / "docs" / "infrastructure.md"
NUMBERS = {"eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12}


def _text() -> str:
    """The page with its line breaks and runs of spaces made single spaces."""
    return re.sub(r"\s+", " ", DOC.read_text())


def _alarms(template: Synth) -> int:
    return len(template.of_type("AWS::CloudWatch::Alarm"))


def _test_functions(folder: str) -> int:
    """Test functions in a test folder (a parametrised one counts once)."""
    return sum(
        1
        for path in (ROOT / "tests" / folder).glob("test_*.py")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.FunctionDef) and node.name.startswith("test_")
    )


def _code_asset_mb() -> float:
    """The function code asset's sources: `functions/` as `CompiledCodeBundling` copies it."""
    from agent_memory_stack.function_factory import NOT_IN_LAMBDA, SOURCES_IGNORED

    package = ROOT / "functions" / "agent_memory"
    total = 0
    for path in package.rglob("*"):
        parts = path.relative_to(package).parts
        ignored = any(fnmatch.fnmatch(part, pattern) for part in parts for pattern in SOURCES_IGNORED)
        if path.is_file() and not ignored and parts[0] not in NOT_IN_LAMBDA:
            total += path.stat().st_size
    return round(total / 1_000_000, 1)


#: pattern (its numbers are the figures) -> what each figure must be, from the default, the
#: alternative and the serverless store's templates.
FIGURES: dict[str, Callable[[Synth, Synth], tuple[float, ...]]] = {
    r"The template has \*\*(\d+) resources\*\* \(\*\*(\d+)\*\* with `-c store=serverless`": lambda d, f: (
        len(d.resources),
        len(f.resources),
    ),
    r"\*\*(\d+) alarms\*\* \(\*\*(\d+)\*\* on the serverless store\)": lambda d, f: (_alarms(d), _alarms(f)),
    r"(\d+) standard alarms at \$0\.10 \((\d+) on the serverless store": lambda d, f: (
        _alarms(d),
        _alarms(f),
    ),
    r"and \*\*(\d+) functions\*\*": lambda d, f: (len(d.stack.factory.functions),),
    r"the function code asset holds \*\*([\d.]+) MB\*\* of sources": lambda d, f: (_code_asset_mb(),),
    r"ignored\)\. \*\*(\d+) test functions\*\*": lambda d, f: (_test_functions("infra"),),
    r"\(API ([\d.]+) s, search ([\d.]+) s, writer ([\d.]+) s\)": lambda d, f: tuple(
        float(d.function(n)["Environment"]["Variables"]["AGENT_MEMORY_OPENSEARCH_TIMEOUT_S"])
        for n in ("Api", "Search", "Writer")
    ),
    r"function\)\. \*\*(\d+) test functions\*\*": lambda d, f: (_test_functions("deployed"),),
}


def test_every_figure_about_the_stack_is_what_it_counts(synth: Synth, files: Synth) -> None:
    # GIVEN
    text = _text()
    wrong = {}
    for pattern, count in FIGURES.items():
        # WHEN
        found = re.findall(pattern, text)
        # THEN each sentence is there once, with the figures counted now
        assert len(found) == 1, f"{pattern!r} matches {len(found)} times in {DOC.name}"
        said = tuple(float(x) for x in (found[0] if isinstance(found[0], tuple) else (found[0],)))
        if said != tuple(float(x) for x in count(synth, files)):
            wrong[pattern] = (said, count(synth, files))
    assert wrong == {}


def test_the_number_of_functions_in_words_is_the_factorys(synth: Synth) -> None:
    # WHEN
    (word,) = re.findall(r"builds all (\w+):", _text())
    # THEN
    assert NUMBERS[word] == len(synth.stack.factory.functions)


def test_a_doc_of_this_folder_names_only_files_that_exist() -> None:
    # WHEN / THEN every test file the page names is there
    named = set(re.findall(r"`(tests/[\w/]+\.py)`", _text()))
    assert named and [n for n in sorted(named) if not Path(ROOT / n).exists()] == []

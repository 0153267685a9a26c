"""The suite's own convention (tests/README.md): a test of more than three statements says where
its action is with a ``# WHEN`` comment (``# GIVEN`` / ``# WHEN`` / ``# THEN``, or ``# WHEN /
THEN`` where the action and the check are one expression), unless it is a Hypothesis property
test whose docstring states its invariant. Checked on every ``tests/**/test_*.py``."""

from __future__ import annotations

import ast
import io
import re
import textwrap
import tokenize
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
#: A test with more statements than this must mark its action.
MAX_UNMARKED_STATEMENTS = 3
_WHEN = re.compile(r"\bWHEN\b")


def _comments(source: str) -> dict[int, str]:
    """Line number -> the comment on that line."""
    tokens = tokenize.generate_tokens(io.StringIO(source).readline)
    return {t.start[0]: t.string for t in tokens if t.type == tokenize.COMMENT}


def _is_given(decorator: ast.expr) -> bool:
    """``@given(...)`` or ``@hypothesis.given(...)``."""
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Name) and target.id == "given") or (
        isinstance(target, ast.Attribute) and target.attr == "given"
    )


def unmarked_tests(source: str) -> list[str]:
    """The test functions of ``source`` that break the convention, by name."""
    comments = _comments(source)
    unmarked = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) or not node.name.startswith("test_"):
            continue
        docstring = ast.get_docstring(node)
        body = node.body[1:] if docstring is not None else node.body
        if len(body) <= MAX_UNMARKED_STATEMENTS:
            continue
        if docstring and any(_is_given(d) for d in node.decorator_list):
            continue
        lines = range(node.lineno, (node.end_lineno or node.lineno) + 1)
        if not any(_WHEN.search(comments[n]) for n in lines if n in comments):
            unmarked.append(node.name)
    return unmarked


TEST_FILES = sorted(TESTS.rglob("test_*.py"))


def test_the_suite_has_test_files_to_check() -> None:
    # WHEN / THEN the glob finds the suite (an empty list would make the check below vacuous)
    assert Path(__file__) in TEST_FILES
    assert len(TEST_FILES) > 100


@pytest.mark.parametrize("path", TEST_FILES, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_test_of_more_than_three_statements_marks_its_action(path: Path) -> None:
    # WHEN the file's tests are read
    unmarked = unmarked_tests(path.read_text())

    # THEN each one that does more than three things says where its action is
    assert not unmarked, (
        f"tests/{path.relative_to(TESTS)}: {', '.join(unmarked)}: more than "
        f"{MAX_UNMARKED_STATEMENTS} statements and no `# WHEN` comment (see tests/README.md)"
    )


def test_the_check_names_a_long_test_without_a_when_and_accepts_the_convention() -> None:
    # GIVEN tests of four statements: unmarked, marked, marked as one expression, a property with
    # its invariant in its docstring, a property without one, and a helper that is not a test
    source = textwrap.dedent(
        '''
        def test_unmarked():
            a = 1
            b = 2
            c = a + b
            assert c == 3

        def test_marked():
            # GIVEN
            a = 1
            b = 2
            # WHEN
            c = a + b
            # THEN
            assert c == 3

        def test_one_expression():
            a = 1
            b = 2
            c = 3
            # WHEN / THEN
            assert a + b == c

        @given(st.integers())
        def test_documented_property(n):
            """Doubling is adding a number to itself."""
            a = n
            b = n
            c = a + b
            assert c == 2 * n

        @hypothesis.given(st.integers())
        def test_undocumented_property(n):
            a = n
            b = n
            c = a + b
            assert c == 2 * n

        def helper():
            a = 1
            b = 2
            c = a + b
            return c
        '''
    )

    # WHEN / THEN exactly the unmarked test and the undocumented property are named
    assert unmarked_tests(source) == ["test_unmarked", "test_undocumented_property"]


def test_a_short_test_needs_no_marker() -> None:
    # GIVEN a test of three statements, a docstring aside
    source = 'def test_short():\n    """Three steps."""\n    a = 1\n    b = a\n    assert b == 1\n'

    # WHEN / THEN it passes unmarked
    assert unmarked_tests(source) == []

"""`make smoke` against the local runtime: the same HTTP contract a deployment answers, so the
smoke test a user runs against their own stack is exercised on every `make test`."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_memory.client import MemoryClient
from agent_memory.local import smoke
from agent_memory.local.server import LocalRuntime

STEPS = ["write", "stored", "search", "forget", "summary", "export", "clean up"]


class FailingProbe:
    """AWS's side of a deployment where everything the HTTP API cannot see is wrong."""

    def model_access(self) -> str | None:
        return "the summary model refused this account (AccessDeniedException: ...): enable it"

    def dead_letters(self) -> str | None:
        return "dead-letter queues hold messages: SummarizeDeadLetters (3)"

    def alarms_firing(self) -> str | None:
        return "alarms in ALARM: agent-memory-dev-Api5xx"


def test_the_smoke_test_passes_against_the_local_runtime_and_leaves_nothing(
    runtime: LocalRuntime, new_key: Callable[..., tuple[str, str, str]]
) -> None:
    # GIVEN an admin key of the running service
    _, _, key = new_key(admin=True)
    with MemoryClient(runtime.url, key) as client:
        # WHEN the smoke test runs
        check = smoke.Smoke(client, wait_s=30, poll_s=0.1)
        report = check.run()
        # THEN every step passed, in order
        assert [c.name for c in report.checks] == STEPS, report.lines()
        assert report.ok, report.lines()
        # AND none of its memories is left
        assert list(client.iter_memories(check.agent)) == []


def test_a_refused_key_fails_the_first_step_with_what_to_do(runtime: LocalRuntime) -> None:
    # GIVEN a key the service does not know
    with MemoryClient(runtime.url, "am_not-a-key") as client:
        # WHEN
        report = smoke.Smoke(client, wait_s=5, poll_s=0.1).run()
    # THEN
    (failed,) = report.checks
    assert (failed.name, failed.ok) == ("write", False)
    assert "the API key was refused" in failed.detail
    assert not report.ok


def test_aws_problems_are_reported_each_with_its_own_message(
    runtime: LocalRuntime, new_key: Callable[..., tuple[str, str, str]]
) -> None:
    # GIVEN a deployment whose model access, dead-letter queues and alarms are all wrong
    _, _, key = new_key(admin=True)
    with MemoryClient(runtime.url, key) as client:
        # WHEN
        report = smoke.Smoke(client, FailingProbe(), wait_s=30, poll_s=0.1).run()  # type: ignore[arg-type]
    # THEN the HTTP steps pass and each AWS check fails with its reason
    failed = {c.name: c.detail for c in report.checks if not c.ok}
    assert set(failed) == {"model access", "dead-letter queues", "alarms"}
    assert "enable it" in failed["model access"]
    assert "SummarizeDeadLetters (3)" in failed["dead-letter queues"]
    assert "Api5xx" in failed["alarms"]
    assert not report.ok


def test_the_command_prints_each_check_and_exits_0_when_all_pass(
    runtime: LocalRuntime, new_key: Callable[..., tuple[str, str, str]], capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    _, _, key = new_key(admin=True)
    # WHEN
    status = smoke.main(["--url", runtime.url, "--key", key, "--wait", "30"])
    # THEN
    printed = capsys.readouterr().out.splitlines()
    assert status == 0, printed
    assert [line.split(":")[0] for line in printed[1:-1]] == [f"ok   {s}" for s in STEPS]
    assert printed[-1] == "passed"

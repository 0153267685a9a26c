"""The cascade's handlers through the real wiring: the scheduler's dispatch, the SQS worker, the
admin route, the CLI and the local runtime, on the sample events in `events/`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.integration.conftest import call_api, drain_queues
from tests.payloads import EVENTS, load_event

from agent_memory import container
from agent_memory.handlers import summarize_dispatch, summarize_worker, writer
from agent_memory.local import cli
from agent_memory.local.lambda_context import LocalContext
from agent_memory.local.server import LocalRuntime
from agent_memory.model.grains import Grain
from agent_memory.model.ids import summary_id
from agent_memory.settings import get_settings

TENANT, AGENT = "acme", "support-bot"


def _remember() -> None:
    assert call_api(load_event("api_write.json"))[0] == 202  # Alice, 2026-11-20T14:03Z
    drain_queues()


def _summary(grain: Grain, key: str) -> Any:
    return container.store().get(TENANT, AGENT, summary_id(TENANT, AGENT, grain.value, key))


def test_the_scheduled_dispatch_queues_the_closed_day_and_the_worker_makes_it(local_env: Path) -> None:
    _remember()

    # WHEN the daily schedule fires at 00:15 on the 21st
    result = summarize_dispatch.handler(load_event("scheduler_summarize_daily.json"), LocalContext())

    # THEN the 20th is queued for the one agent with activity, and the workers make it
    assert result == {"grain": "daily", "periods": ["2026-11-20"], "jobs_queued": 1}
    drain_queues()
    daily = _summary(Grain.DAILY, "2026-11-20")
    assert daily is not None and daily.content == "[2026-11-20] Alice moved the launch to March 3."
    assert daily.metadata["summarizer_model_id"].startswith("local-extractive-v1/hashing")


def test_the_worker_reports_only_the_job_that_failed(local_env: Path) -> None:
    # GIVEN
    _remember()

    # WHEN
    response = summarize_worker.handler(load_event("sqs_summarize_jobs.json"), LocalContext())

    # THEN
    # the third job is not a job: it alone comes back (and the queue's redrive policy parks it)
    assert response == {"batchItemFailures": [{"itemIdentifier": "c0ffee00-1234-4abc-8def-0123456789ab"}]}
    writes = container.write_queue().receive(10)  # type: ignore[attr-defined]
    # the daily, then the weekly's copy of the daily it healed (the first write was not stored
    # yet) and the weekly itself, each on the group of its grain
    assert [m.group_id for m in writes] == [
        "acme:support-bot:daily",
        "acme:support-bot:daily",
        "acme:support-bot:weekly",
    ]
    container.write_queue().nack([m.receipt_handle for m in writes])  # type: ignore[attr-defined]
    drain_queues()
    assert _summary(Grain.WEEKLY, "2026-W47") is not None


def test_summary_writes_are_stored_by_the_writer_like_any_write(local_env: Path) -> None:
    # GIVEN
    _remember()
    summarize_worker.handler(load_event("sqs_summarize_jobs.json"), LocalContext())
    from agent_memory.adapters.local_queue import to_sqs_event

    batch = container.write_queue().receive(10)  # type: ignore[attr-defined]
    # WHEN / THEN
    assert writer.handler(to_sqs_event(batch), LocalContext()) == {"batchItemFailures": []}
    stats = container.store().stats(TENANT, AGENT, container.clock().now()).records
    assert stats == {"working": 1, "daily": 1, "weekly": 1}


def test_the_admin_route_queues_a_period_and_answers_202(local_env: Path) -> None:
    # GIVEN
    _remember()

    # WHEN
    status, body = call_api(load_event("api_admin_summarize.json"))

    # THEN
    assert (status, body) == (202, {"grain": "daily", "periods": ["2026-11-20"], "jobs_queued": 1})
    drain_queues()
    assert _summary(Grain.DAILY, "2026-11-20") is not None


def test_the_admin_route_takes_a_range(local_env: Path) -> None:
    # GIVEN
    _remember()
    event = load_event(
        "api_admin_summarize.json",
        body=json.dumps({"grain": "weekly", "from": "2026-11-01", "to": "2026-11-30"}),
    )

    # WHEN
    status, body = call_api(event)

    # THEN
    assert status == 202
    assert body["periods"] == ["2026-W44", "2026-W45", "2026-W46", "2026-W47", "2026-W48", "2026-W49"]
    assert body["jobs_queued"] == 1


@pytest.mark.parametrize(
    ("body", "status", "code"),
    [
        ({"grain": "daily", "period": "2026-W47"}, 400, "validation_error"),
        ({"grain": "hourly"}, 400, "validation_error"),
        ({"grain": "daily", "from": "2020-01-01", "to": "2026-01-01"}, 400, "validation_error"),
    ],
)
def test_the_admin_route_refuses_invalid_requests(
    local_env: Path, body: dict[str, Any], status: int, code: str
) -> None:
    # WHEN
    got, answer = call_api(load_event("api_admin_summarize.json", body=json.dumps(body)))
    # THEN
    assert (got, answer["error"]["code"]) == (status, code)


def test_the_admin_route_needs_the_admin_scope(local_env: Path) -> None:
    # GIVEN
    event = load_event("api_admin_summarize.json")
    event["requestContext"]["authorizer"]["scopes"] = "read write forget"
    # WHEN / THEN
    assert call_api(event)[0] == 403


def test_the_cli_summarizes_a_range_and_waits_for_it(
    local_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    _remember()

    # WHEN
    code = cli.main(
        [
            "summarize",
            "--grain",
            "monthly",
            "--from",
            "2026-11-01",
            "--to",
            "2026-11-30",
            "--data-dir",
            str(local_env),
        ]
    )

    # THEN
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out == {
        "grain": "monthly",
        "periods": ["2026-11"],
        "jobs_queued": 1,
        "failed_jobs": 0,
        "pending": 0,
    }
    # the month healed its week and its day on the way
    for grain, key in ((Grain.DAILY, "2026-11-20"), (Grain.WEEKLY, "2026-W47"), (Grain.MONTHLY, "2026-11")):
        assert _summary(grain, key) is not None


def test_the_cli_refuses_a_period_and_a_range_together(
    local_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    argv = [
        "summarize",
        "--grain",
        "daily",
        "--period",
        "2026-11-20",
        "--from",
        "2026-11-01",
        "--to",
        "2026-11-02",
    ]
    # WHEN / THEN
    assert cli.main(argv) == 2
    assert "not both" in capsys.readouterr().err


def test_invoke_runs_the_dispatcher_on_a_sample_event(
    local_env: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # GIVEN
    _remember()
    # WHEN / THEN
    assert cli.main(["invoke", "summarize-dispatch", str(EVENTS / "scheduler_summarize_daily.json")]) == 0
    assert json.loads(capsys.readouterr().out)["jobs_queued"] == 1


def test_the_local_runtime_runs_the_job_worker_and_a_scheduler_that_can_be_turned_off(
    local_env: Path,
) -> None:
    settings = get_settings()
    with_scheduler = LocalRuntime(settings, port=0)
    without = LocalRuntime(settings, port=0, scheduler=False)
    try:
        assert with_scheduler.scheduler is not None and without.scheduler is None
        _remember()
        summarize_dispatch.handler(load_event("scheduler_summarize_daily.json"), LocalContext())
        # WHEN the runtime runs, its workers make the summary without help
        with_scheduler.start()
        import time

        deadline = time.monotonic() + 10
        state = local_env / "scheduler.json"  # the first start records the present, in its own thread
        made = lambda: _summary(Grain.DAILY, "2026-11-20") is not None  # noqa: E731
        while not (made() and state.exists()) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert _summary(Grain.DAILY, "2026-11-20") is not None
        assert state.exists()
    finally:
        with_scheduler.stop()
        without.httpd.server_close()


def test_a_refused_provider_key_fails_the_job_and_tells_the_tenants_admin(
    local_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tenant whose own summary model's provider refuses its key
    from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

    from agent_memory.errors import ProviderKeyRejectedError

    class Refused:
        def run(self, job: Any) -> Any:
            raise ProviderKeyRejectedError("the provider at llm.example.com refused the tenant's key (401)")

    monkeypatch.setattr(container, "summarize_service", Refused)
    # WHEN the worker gets its jobs
    with pytest.raises(BatchProcessingError) as failed:
        summarize_worker.handler(load_event("sqs_summarize_jobs.json"), LocalContext())
    # THEN every job fails (the batch comes back: retried, then dead-lettered) ...
    assert "All records failed" in str(failed.value)
    # ... and the tenant's settings history says why, job by job, without any key
    from agent_memory.ports import AuditQuery
    from agent_memory.tenancy.settings import SETTINGS_RECORD, TENANT_AUDIT_AGENT

    events = container.store().audit_events(AuditQuery("acme", TENANT_AUDIT_AGENT, SETTINGS_RECORD)).events
    assert {e.action for e in events} == {"provider_key_rejected"}
    assert "summarize:support-bot:daily:2026-11-20" in {e.detail["job"] for e in events}

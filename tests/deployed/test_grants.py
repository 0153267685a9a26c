"""Each function's grants are what its code path needs: no call it makes is refused (the path
tests), and no grant goes unused by the paths run here; a grant or a setting removed from the
template by hand makes a path fail."""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable
from typing import Any

import pytest
from tests.deployed import test_deployed_paths as paths
from tests.deployed import test_export_paths as export_paths
from tests.deployed.harness import Call, Deployment, unset_deployment_settings, unused_grants

EXPORT = export_paths.test_an_export_is_started_by_the_api_written_by_the_worker_and_fetched_by_a_signed_url
FAILED_RUN = paths.test_a_scheduled_run_that_fails_in_the_function_lands_in_the_failed_runs_queue
WEBHOOKS = paths.test_changes_reach_the_tenants_webhook_through_the_bus_the_queue_and_the_delivery_function
#: Every path test, each run on a fresh deployment of the same template (`run_path`).
PATHS: list[Callable[..., None]] = [
    paths.test_a_write_goes_through_the_fifo_queue_and_the_writer_and_is_found_by_the_search_function,
    paths.test_the_schedule_dispatches_jobs_the_worker_summarizes_and_the_summary_is_written,
    paths.test_a_week_whose_days_were_never_summarized_is_healed_by_the_worker,
    paths.test_the_retention_function_runs_on_its_schedule_input,
    paths.test_the_admin_routes_run_in_the_api_function,
    paths.test_every_route_of_the_api_function_runs_in_its_configuration,
    paths.test_the_authorizer_reads_the_key_from_the_tenants_table,
    lambda d: paths.test_a_poison_write_goes_to_the_dead_letter_queue_through_the_writers_grants(
        d, "{not json"
    ),
    *(
        lambda d, f=function: (
            paths.test_a_scheduled_run_that_fails_in_the_function_lands_in_the_failed_runs_queue(d, f)
        )
        for function in ("SummarizeDispatch", "Retention")
    ),
    paths.test_tenant_settings_are_changed_by_the_api_and_read_by_the_writer_and_the_search,
    paths.test_the_profile_schedule_makes_a_persons_profile_and_a_forget_reaches_it,
    paths.test_feedback_on_an_experience_is_queued_by_the_api_and_counted_by_the_writer,
    paths.test_the_pattern_schedule_dispatches_a_job_the_worker_recognises_a_pattern_and_the_writer_stores_it,
    paths.test_the_admin_patterns_route_queues_jobs_the_worker_runs,
    paths.test_a_change_of_embedding_model_is_started_by_the_api_and_filled_by_the_worker,
    paths.test_redaction_on_write_calls_comprehend_from_the_api_function_and_stores_no_original,
    EXPORT,
    WEBHOOKS,
    paths.test_a_forget_before_a_summarys_put_leaves_no_summary_with_its_words,
]
#: Paths appended after the first eight, by name (so appending more moves none of them).
FEEDBACK = paths.test_feedback_on_an_experience_is_queued_by_the_api_and_counted_by_the_writer
PATTERN_SCHEDULE = (
    paths.test_the_pattern_schedule_dispatches_a_job_the_worker_recognises_a_pattern_and_the_writer_stores_it
)
PATTERN_ADMIN = paths.test_the_admin_patterns_route_queues_jobs_the_worker_runs
REEMBED = paths.test_a_change_of_embedding_model_is_started_by_the_api_and_filled_by_the_worker
REDACTION = paths.test_redaction_on_write_calls_comprehend_from_the_api_function_and_stores_no_original

#: Grants a path here cannot reach, (function, action, resource suffix), each with why it stays.
UNREACHED = {
    (
        "IndexBootstrap",
        "es:ESHttpPost",
        "/*",
    ): "the schema upgrade (reindex into the new index, swap the alias)",
    ("SummarizeWorker", "secretsmanager:GetSecretValue", "/*"): "a tenant's own OpenAI-compatible "
    "summary model is called with its key: the harness has no network to reach one",
    ("Search", "secretsmanager:GetSecretValue", "/*"): "a query embedded by a tenant's own "
    "OpenAI-compatible model, with its key: the harness has no network to reach one",
    ("Writer", "secretsmanager:GetSecretValue", "/*"): "a memory embedded by a tenant's own "
    "OpenAI-compatible model, with its key: the harness has no network to reach one",
    ("SummarizeWorker", "s3:AbortMultipartUpload", "exports/*"): "an export whose runs failed three "
    "times is given up and its upload aborted: no path here makes a run fail",
    ("SummarizeWorker", "events:PutEvents", "-changes"): "a supersession link the summary model's review "
    "undoes or adds (supersession/review.py): the harness's Bedrock fake judges no pair",
    ("Api", "dynamodb:DeleteItem", "IdempotencyTable"): "a request with an Idempotency-Key that failed "
    "releases its key (Powertools deletes the in-progress record)",
    ("Api", "dynamodb:GetItem", "IdempotencyTable"): "Powertools reads the stored answer when a conditional "
    "put returns no old item (the replay path before ReturnValuesOnConditionCheckFailure)",
}


def _reached(name: str, grant: str) -> bool:
    action, resource = grant.split(" on ")
    return not any(
        (name, action) == (f, a) and resource.split(":")[-1].rstrip("0123456789ABCDEF").endswith(suffix)
        for f, a, suffix in UNREACHED
    )


def run_path(path: Callable[..., None], deployment: Deployment, monkeypatch: pytest.MonkeyPatch) -> None:
    """``path`` on ``deployment``, with ``monkeypatch`` when the path arranges the process as well
    (the webhook path's name resolver)."""
    path(deployment, *([monkeypatch] if "monkeypatch" in inspect.signature(path).parameters else []))


def test_every_grant_is_used_by_a_path(
    deploy: Callable[..., Deployment], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN
    calls: list[Call] = []
    deployment = None
    # WHEN
    for path in PATHS:
        deployment = deploy()
        run_path(path, deployment, monkeypatch)
        calls += deployment.calls
    # THEN
    assert deployment is not None
    unused = {
        name: [g for g in grants if _reached(name, g)]
        for name, grants in unused_grants(deployment.functions, calls).items()
    }
    left = {name: grants for name, grants in unused.items() if grants}
    assert not left, "\n".join(f"{n}: {g}" for n, gs in left.items() for g in gs)


# --- the same paths on a template edited by hand: each edit must make a path fail ----------------


def _function_props(raw: dict[str, Any], deployment_ids: dict[str, str], name: str) -> dict[str, Any]:
    return raw["Resources"][deployment_ids[name]]["Properties"]  # type: ignore[no-any-return]


def without_grant(name: str, action: str) -> Callable[[dict[str, Any], dict[str, str]], None]:
    """Drop ``action`` from every statement of ``name``'s role (a statement left empty goes)."""

    def edit(raw: dict[str, Any], ids: dict[str, str]) -> None:
        role = _function_props(raw, ids, name)["Role"]["Fn::GetAtt"][0]
        for resource in raw["Resources"].values():
            if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role} in resource["Properties"]["Roles"]:
                document = resource["Properties"]["PolicyDocument"]
                for statement in document["Statement"]:
                    actions = (
                        statement["Action"]
                        if isinstance(statement["Action"], list)
                        else [statement["Action"]]
                    )
                    statement["Action"] = [a for a in actions if a != action]
                document["Statement"] = [s for s in document["Statement"] if s["Action"]]

    return edit


def without_model(name: str, model_id: str) -> Callable[[dict[str, Any], dict[str, str]], None]:
    """Drop ``model_id``'s ARNs from ``name``'s ``bedrock:InvokeModel`` grants (its other models
    stay; a statement left without resources goes)."""

    def edit(raw: dict[str, Any], ids: dict[str, str]) -> None:
        role = _function_props(raw, ids, name)["Role"]["Fn::GetAtt"][0]
        for resource in raw["Resources"].values():
            if resource["Type"] == "AWS::IAM::Policy" and {"Ref": role} in resource["Properties"]["Roles"]:
                document = resource["Properties"]["PolicyDocument"]
                for statement in document["Statement"]:
                    if "bedrock:InvokeModel" not in json.dumps(statement["Action"]):
                        continue
                    arns = (
                        statement["Resource"]
                        if isinstance(statement["Resource"], list)
                        else [statement["Resource"]]
                    )
                    statement["Resource"] = [r for r in arns if model_id not in json.dumps(r)]
                document["Statement"] = [s for s in document["Statement"] if s["Resource"]]

    return edit


def without_setting(name: str, variable: str) -> Callable[[dict[str, Any], dict[str, str]], None]:
    def edit(raw: dict[str, Any], ids: dict[str, str]) -> None:
        del _function_props(raw, ids, name)["Environment"]["Variables"][variable]

    return edit


EDITS = {
    "worker without dynamodb:PutItem (the re-embedding state)": (
        without_grant("SummarizeWorker", "dynamodb:PutItem"),
        REEMBED,
    ),
    "api without comprehend:DetectPiiEntities": (
        without_grant("Api", "comprehend:DetectPiiEntities"),
        REDACTION,
    ),
    "api without the export bucket": (without_setting("Api", "AGENT_MEMORY_EXPORT_BUCKET"), EXPORT),
    "worker without the export bucket's s3:PutObject": (
        without_grant("SummarizeWorker", "s3:PutObject"),
        EXPORT,
    ),
    "api without the export bucket's s3:ListBucket": (without_grant("Api", "s3:ListBucket"), EXPORT),
    "writer without events:PutEvents": (without_grant("Writer", "events:PutEvents"), WEBHOOKS),
    "api without events:PutEvents": (without_grant("Api", "events:PutEvents"), WEBHOOKS),
    "api without the webhooks table": (without_setting("Api", "AGENT_MEMORY_WEBHOOKS_TABLE"), WEBHOOKS),
    "delivery function without the webhooks table's GetItem": (
        without_grant("WebhookDelivery", "dynamodb:GetItem"),
        WEBHOOKS,
    ),
    "delivery function without sqs:ChangeMessageVisibility": (
        without_grant("WebhookDelivery", "sqs:ChangeMessageVisibility"),
        WEBHOOKS,
    ),
    "api without the comprehend setting": (without_setting("Api", "AGENT_MEMORY_PII_COMPREHEND"), REDACTION),
    "writer without bedrock:InvokeModel": (without_grant("Writer", "bedrock:InvokeModel"), PATHS[0]),
    "writer without es:ESHttpPost": (without_grant("Writer", "es:ESHttpPost"), PATHS[0]),
    "search without bedrock:InvokeModel": (without_grant("Search", "bedrock:InvokeModel"), PATHS[0]),
    "api without sqs:SendMessage": (without_grant("Api", "sqs:SendMessage"), PATHS[0]),
    "writer without its event source's sqs:DeleteMessage": (
        without_grant("Writer", "sqs:DeleteMessage"),
        PATHS[0],
    ),
    "worker without bedrock:InvokeModel": (without_grant("SummarizeWorker", "bedrock:InvokeModel"), PATHS[1]),
    "dispatcher without its job queue": (
        without_setting("SummarizeDispatch", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL"),
        PATHS[1],
    ),
    "retention without the tenants table": (
        without_setting("Retention", "AGENT_MEMORY_TENANTS_TABLE"),
        PATHS[3],
    ),
    "retention without dynamodb:Scan": (without_grant("Retention", "dynamodb:Scan"), PATHS[3]),
    "retention without its job queue": (
        without_setting("Retention", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL"),
        PATHS[3],
    ),
    "api without the retention function": (
        without_setting("Api", "AGENT_MEMORY_RETENTION_FUNCTION"),
        PATHS[4],
    ),
    "api without lambda:InvokeFunction": (without_grant("Api", "lambda:InvokeFunction"), PATHS[4]),
    "api without the idempotency table": (without_setting("Api", "AGENT_MEMORY_IDEMPOTENCY_TABLE"), PATHS[5]),
    "authorizer without dynamodb:GetItem": (without_grant("Authorizer", "dynamodb:GetItem"), PATHS[6]),
    "writer without its dead-letter queue": (without_grant("Writer", "sqs:SendMessage"), PATHS[7]),
    "writer without its job queue": (
        without_setting("Writer", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL"),
        paths.test_a_forget_before_a_summarys_put_leaves_no_summary_with_its_words,
    ),
    "api without the pending table's BatchWriteItem": (
        without_grant("Api", "dynamodb:BatchWriteItem"),
        FEEDBACK,
    ),
    "dispatcher without the pending table's BatchWriteItem": (
        without_grant("SummarizeDispatch", "dynamodb:BatchWriteItem"),
        PATTERN_SCHEDULE,
    ),
    "dispatcher without the pending table's BatchGetItem": (
        without_grant("SummarizeDispatch", "dynamodb:BatchGetItem"),
        PATTERN_SCHEDULE,
    ),
    "dispatcher without the pending table": (
        without_setting("SummarizeDispatch", "AGENT_MEMORY_PENDING"),
        PATTERN_SCHEDULE,
    ),
    "worker without the pending table's BatchGetItem": (
        without_grant("SummarizeWorker", "dynamodb:BatchGetItem"),
        PATTERN_SCHEDULE,
    ),
    "worker without the pending table's BatchWriteItem": (
        without_grant("SummarizeWorker", "dynamodb:BatchWriteItem"),
        PATTERN_ADMIN,
    ),
    "worker without the pending table": (
        without_setting("SummarizeWorker", "AGENT_MEMORY_PENDING"),
        PATTERN_ADMIN,
    ),
    "worker without the embedding model": (
        without_model("SummarizeWorker", "amazon.titan-embed-text-v2:0"),
        PATTERN_SCHEDULE,
    ),
}


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_a_grant_or_setting_removed_from_the_template_fails_a_path(
    deploy: Callable[..., Deployment],
    template: tuple[dict[str, Any], dict[str, str]],
    edit: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN
    change, path = EDITS[edit]
    deployment = deploy(lambda raw: change(raw, template[1]))
    # WHEN
    with pytest.raises(Exception) as failed:  # whatever the path trips over first
        run_path(path, deployment, monkeypatch)
    # THEN it tripped over the change, not over how the path was called
    assert not isinstance(failed.value, TypeError), failed.value


def test_every_deployment_setting_a_function_reads_is_in_its_environment(
    deploy: Callable[..., Deployment], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A setting read but not set runs on a default nobody chose for that function."""
    # GIVEN
    missing: dict[str, set[str]] = {}
    # WHEN
    for path in PATHS:
        deployment = deploy()
        run_path(path, deployment, monkeypatch)
        for name, fields in unset_deployment_settings(deployment).items():
            missing.setdefault(name, set()).update(fields)
    # THEN
    assert not missing, missing


SETTING_EDITS = {
    "dispatcher without its timezone": (
        without_setting("SummarizeDispatch", "AGENT_MEMORY_TIMEZONE"),
        PATHS[1],
    ),
    "writer without its timezone": (without_setting("Writer", "AGENT_MEMORY_TIMEZONE"), PATHS[0]),
    "search without the index alias": (
        without_setting("Search", "AGENT_MEMORY_OPENSEARCH_INDEX_ALIAS"),
        PATHS[0],
    ),
    "retention without the plans": (without_setting("Retention", "AGENT_MEMORY_PLANS"), PATHS[3]),
    "authorizer without the usage plans": (
        without_setting("Authorizer", "AGENT_MEMORY_USAGE_PLANS"),
        PATHS[6],
    ),
}


@pytest.mark.parametrize("edit", sorted(SETTING_EDITS))
def test_a_setting_removed_whose_default_would_still_run_is_found(
    deploy: Callable[..., Deployment],
    template: tuple[dict[str, Any], dict[str, str]],
    edit: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Removing a setting whose default happens to work (UTC, the default alias, no plans) breaks
    no path here, but leaves the function on a default nobody chose for it: that is refused too."""
    # GIVEN
    change, path = SETTING_EDITS[edit]
    deployment = deploy(lambda raw: change(raw, template[1]))
    # WHEN
    try:
        run_path(path, deployment, monkeypatch)
    except Exception:
        return
    # THEN
    assert unset_deployment_settings(deployment), edit

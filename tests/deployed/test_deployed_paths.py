"""Every function of the synthesized stack, run in its deployed configuration on its paths.

Each test deploys the template into moto and the fakes (`conftest.deploy`), then drives the
paths as AWS would: API Gateway events to the API and search functions, the FIFO queue's
batches to the writer, Scheduler's input to the dispatcher and retention, the job queue's
batches to the summarize worker, a CloudFormation event to the index bootstrap, and a token to
the authorizer. A call a function's role does not allow fails as it would in AWS, and so does a
setting missing from its environment (the code would fall back to a local file).
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import boto3
import pytest
from tests.deployed.conftest import events_dir
from tests.deployed.harness import ACCOUNT, REGION, Deployment

from agent_memory.tenancy.rules.keys import NewKey

TENANT = "acme"
AGENT = "support-bot"


RUNBOOK = "# Runbook\n\n## Failover\nPromote the replica in the standby region.\n"


def load(name: str) -> dict[str, Any]:
    return json.loads((events_dir() / name).read_text())  # type: ignore[no-any-return]


def api_event(
    method: str, path: str, body: Any = None, scopes: str = "read write forget", **query: str
) -> dict[str, Any]:
    event = load("api_write.json")
    event["httpMethod"] = method
    event["path"] = path
    event["body"] = None if body is None else json.dumps(body)
    event["headers"] = {"content-type": "application/json"}
    event["multiValueHeaders"] = {"content-type": ["application/json"]}
    event["queryStringParameters"] = query or None
    event["multiValueQueryStringParameters"] = {k: [v] for k, v in query.items()} or None
    event["requestContext"]["authorizer"]["scopes"] = scopes
    event["requestContext"]["authorizer"]["tenant_id"] = TENANT
    event["requestContext"]["requestId"] = str(uuid.uuid4())
    return event


def queue_env(deployment: Deployment, function: str, variable: str) -> str:
    return deployment.functions[function].environment[variable]


def drain(deployment: Deployment, queue_url: str, function: str) -> list[dict[str, Any]]:
    """Feed the queue's messages to ``function`` as the event source mapping does; its answers."""
    sqs = boto3.client("sqs", region_name=REGION)
    deployment.poll(function, queue_url)
    answers = []
    while True:
        got = sqs.receive_message(
            QueueUrl=queue_url, MaxNumberOfMessages=10, AttributeNames=["All"], WaitTimeSeconds=0
        ).get("Messages", [])
        if not got:
            return answers
        name = queue_url.rsplit("/", 1)[1]
        records = [
            {
                "messageId": m["MessageId"],
                "receiptHandle": m["ReceiptHandle"],
                "body": m["Body"],
                "attributes": m.get("Attributes", {}),
                "messageAttributes": {},
                "md5OfBody": m["MD5OfBody"],
                "eventSource": "aws:sqs",
                "eventSourceARN": f"arn:aws:sqs:{REGION}:{ACCOUNT}:{name}",
                "awsRegion": REGION,
            }
            for m in got
        ]
        answer = deployment.run(function, {"Records": records})
        answers.append(answer)
        failed = {f["itemIdentifier"] for f in (answer or {}).get("batchItemFailures", [])}
        done = [m for m in got if m["MessageId"] not in failed]
        if done:  # the event source mapping deletes what the function did not report failed
            sqs.delete_message_batch(
                QueueUrl=queue_url,
                Entries=[{"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(done)],
            )
        if failed:
            raise AssertionError(f"{function} failed {len(failed)} of {len(got)} messages: {answer}")


def bootstrap(deployment: Deployment) -> None:
    if "IndexBootstrap" not in deployment.functions:
        return  # the serverless store: a tenant's file is made by its first write
    answer = deployment.run("IndexBootstrap", load("cfn_bootstrap_create.json"))
    assert answer["PhysicalResourceId"], answer


def write(deployment: Deployment, *contents: str, at: datetime | None = None) -> list[str]:
    items = [{"content": c, **({"occurred_at": at.isoformat()} if at else {})} for c in contents]
    response = deployment.run("Api", api_event("POST", f"/v1/agents/{AGENT}/memories", {"items": items}))
    assert response["statusCode"] == 202, response
    return [a["id"] for a in json.loads(response["body"])["accepted"]]


def test_a_write_goes_through_the_fifo_queue_and_the_writer_and_is_found_by_the_search_function(
    deployment: Deployment,
) -> None:
    # GIVEN
    bootstrap(deployment)
    [record_id] = write(deployment, "The launch moved to March 3 after the security review.")
    drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")

    # WHEN
    response = deployment.run(
        "Search",
        api_event("POST", f"/v1/agents/{AGENT}/memories/search", {"query": "when is the launch?"}),
    )
    # THEN
    assert response["statusCode"] == 200, response
    assert [r["id"] for r in json.loads(response["body"])["results"]] == [record_id]
    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories/{record_id}"))
    assert response["statusCode"] == 200, response
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_schedule_dispatches_jobs_the_worker_summarizes_and_the_summary_is_written(
    deployment: Deployment,
) -> None:
    # GIVEN
    bootstrap(deployment)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(hour=10, minute=0, second=0, microsecond=0)
    write(deployment, "Rui approved the Lisbon office budget.", at=yesterday)
    drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")

    # WHEN
    answer = deployment.run("SummarizeDispatch", {"grain": "daily"})
    # THEN
    assert answer["jobs_queued"] == 1, answer
    drain(
        deployment,
        queue_env(deployment, "SummarizeWorker", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL"),
        "SummarizeWorker",
    )
    drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")

    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories", grain="daily"))
    assert response["statusCode"] == 200, response
    (summary,) = json.loads(response["body"])["items"]
    assert "Lisbon office budget" in summary["content"]
    assert [op for op, _ in deployment.bedrock.requests].count("Converse") == 1
    assert not [c for c in deployment.calls if not c.allowed]


def test_a_forget_before_a_summarys_put_leaves_no_summary_with_its_words(deployment: Deployment) -> None:
    # GIVEN a day's summary made by the worker and queued as a write, holding a memory
    bootstrap(deployment)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(hour=10, minute=0, second=0, microsecond=0)
    [forgotten] = write(deployment, "Rui approved the Lisbon office budget.", at=yesterday)
    write(deployment, "Ana booked the Porto venue for the offsite.", at=yesterday + timedelta(hours=1))
    writes = queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL")
    jobs = queue_env(deployment, "SummarizeWorker", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL")
    drain(deployment, writes, "Writer")
    assert deployment.run("SummarizeDispatch", {"grain": "daily"})["jobs_queued"] == 1
    drain(deployment, jobs, "SummarizeWorker")

    # WHEN the memory is forgotten before the writer stores that summary
    deleted = deployment.run("Api", api_event("DELETE", f"/v1/agents/{AGENT}/memories/{forgotten}"))
    assert deleted["statusCode"] == 200, deleted
    drain(deployment, writes, "Writer")

    # THEN the writer hides the summary and queues its re-make on the summarize queue (its own
    # grant), and the re-made summary holds what is left of the day, without the forgotten words
    assert remake_queued(deployment, jobs)
    drain(deployment, jobs, "SummarizeWorker")
    drain(deployment, writes, "Writer")
    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories", grain="daily"))
    assert response["statusCode"] == 200, response
    summaries = json.loads(response["body"])["items"]
    assert summaries, "the day keeps a summary of its live memory"
    assert all("Lisbon" not in s["content"] for s in summaries), summaries
    assert not [c for c in deployment.calls if not c.allowed]


def remake_queued(deployment: Deployment, jobs_url: str) -> bool:
    """Whether the writer sent a message to the summarize queue, allowed by its role."""
    queue = jobs_url.rsplit("/", 1)[1]
    return any(
        c.function == "Writer" and c.action == "sqs:SendMessage" and c.resource.endswith(queue) and c.allowed
        for c in deployment.calls
    )


def test_the_retention_function_runs_on_its_schedule_input(deployment: Deployment) -> None:
    # GIVEN
    bootstrap(deployment)
    from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore

    # WHEN
    DynamoDbKeyStore(deployment.functions["Authorizer"].environment["AGENT_MEMORY_TENANTS_TABLE"]).create(
        NewKey(TENANT, "free")
    )
    old = datetime.now(UTC) - timedelta(days=45)
    write(deployment, "Signed the supplier contract with Nordwind Logistics.", at=old)
    drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")

    # THEN
    report = deployment.run("Retention", {})
    assert report["summaries_queued"] >= 1, report
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_admin_routes_run_in_the_api_function(deployment: Deployment) -> None:
    # GIVEN
    bootstrap(deployment)
    admin = "admin read write forget"
    # WHEN
    response = deployment.run(
        "Api", api_event("POST", "/v1/admin/summarize", {"grain": "daily"}, scopes=admin)
    )
    # THEN
    assert response["statusCode"] == 202, response
    response = deployment.run("Api", api_event("POST", "/v1/admin/retention", {}, scopes=admin))
    assert response["statusCode"] == 202, response
    assert json.loads(response["body"]) == {"status": "started", "report": None}
    # Lambda runs the queued invoke in the retention function
    ((name, event),) = deployment.invoked
    assert name == deployment.names[deployment.functions["Retention"].logical_id]
    # for the caller's tenant only: an admin key never starts work on another tenant's memory
    assert event == {"reason": "admin", "tenants": [TENANT]}
    assert deployment.run("Retention", event)["tenants"] == 1
    response = deployment.run(
        "Api", api_event("PUT", "/v1/admin/topics", {"terms": {"launch": ["go-live"]}}, scopes=admin)
    )
    assert response["statusCode"] == 200, response
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_authorizer_reads_the_key_from_the_tenants_table(deployment: Deployment) -> None:
    # GIVEN a key bound to one agent, which an admin let read another agent's memory
    from agent_memory.adapters.dynamodb_keys import DynamoDbKeyStore

    table = deployment.functions["Authorizer"].environment["AGENT_MEMORY_TENANTS_TABLE"]
    keys = DynamoDbKeyStore(table)
    _, key = keys.create(NewKey(TENANT, "pro", agents=frozenset({"supervisor"})))
    keys.grant_read(TENANT, "supervisor", AGENT)
    event = load("authorizer_token.json")
    event["authorizationToken"] = f"Bearer {key}"
    # WHEN
    policy = deployment.run("Authorizer", event)
    # THEN
    assert policy["policyDocument"]["Statement"][0]["Effect"] == "Allow", policy
    assert policy["context"]["tenant_id"] == TENANT
    assert (policy["context"]["agents"], policy["context"]["reads"]) == ("supervisor", AGENT)
    # the tenant's usage-plan key: API Gateway throttles and meters this tenant by its plan
    from agent_memory.tenancy.rules.usage import usage_key

    prefix = deployment.functions["Authorizer"].environment["AGENT_MEMORY_USAGE_PLANS"]
    assert policy["usageIdentifierKey"] == usage_key(prefix, TENANT)
    assert not [c for c in deployment.calls if not c.allowed]


@pytest.mark.parametrize("poison", ["{not json"])
def test_a_poison_write_goes_to_the_dead_letter_queue_through_the_writers_grants(
    deployment: Deployment, poison: str
) -> None:
    # GIVEN
    bootstrap(deployment)
    sqs = boto3.client("sqs", region_name=REGION)
    url = queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL")
    sqs.send_message(
        QueueUrl=url, MessageBody=poison, MessageGroupId="acme:bot:working", MessageDeduplicationId="p1"
    )
    drain(deployment, url, "Writer")
    dlq = queue_env(deployment, "Writer", "AGENT_MEMORY_DEAD_LETTER_QUEUE_URL")
    # WHEN / THEN
    assert sqs.receive_message(QueueUrl=dlq).get("Messages"), "the poison message is not in the DLQ"
    assert not [c for c in deployment.calls if not c.allowed]


def work(deployment: Deployment, rounds: int = 5) -> None:
    """Run the job queue and the write queue until both are empty (a job may wait for a write)."""
    jobs = queue_env(deployment, "SummarizeWorker", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL")
    writes = queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL")
    for _ in range(rounds):
        if not drain(deployment, jobs, "SummarizeWorker") + drain(deployment, writes, "Writer"):
            return


def test_a_week_whose_days_were_never_summarized_is_healed_by_the_worker(deployment: Deployment) -> None:
    # GIVEN a memory of last week, stored, whose day was never summarized
    bootstrap(deployment)
    last_week = (datetime.now(UTC) - timedelta(days=8)).replace(hour=10, minute=0, second=0, microsecond=0)
    write(deployment, "Mia booked the movers for the Lisbon office.", at=last_week)
    work(deployment)

    # WHEN the weekly schedule fires: Monday 01:15, its scheduled time in the input
    monday = (datetime.now(UTC) - timedelta(days=datetime.now(UTC).weekday())).replace(
        hour=1, minute=15, second=0, microsecond=0
    )
    answer = deployment.run("SummarizeDispatch", {"grain": "weekly", "scheduled_time": monday.isoformat()})
    assert answer["jobs_queued"] == 1, answer
    work(deployment)

    # THEN the worker healed the week: its summary holds the memory
    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories", grain="weekly"))
    (weekly,) = json.loads(response["body"])["items"]
    assert "movers" in weekly["content"]

    # AND a late note into that day re-makes the day, which queues the week's refresh
    write(deployment, "Late note: the movers come at 8.", at=last_week + timedelta(hours=2))
    work(deployment)
    deployment.run("SummarizeDispatch", {"grain": "daily", "period": last_week.date().isoformat()})
    work(deployment)
    refreshes = [
        c for c in deployment.calls if c.function == "SummarizeWorker" and c.action == "sqs:SendMessage"
    ]
    assert any(c.resource.endswith(":" + jobs_queue_name(deployment)) for c in refreshes), refreshes
    assert not [c for c in deployment.calls if not c.allowed]


def jobs_queue_name(deployment: Deployment) -> str:
    return queue_env(deployment, "SummarizeWorker", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL").rsplit("/", 1)[1]


def test_every_route_of_the_api_function_runs_in_its_configuration(deployment: Deployment) -> None:
    # GIVEN
    bootstrap(deployment)
    yesterday = (datetime.now(UTC) - timedelta(days=1)).replace(hour=9, minute=0, second=0, microsecond=0)
    event = api_event(
        "POST",
        f"/v1/agents/{AGENT}/memories",
        {
            "items": [
                {
                    "content": "Ines prefers the window seat.",
                    "occurred_at": yesterday.isoformat(),
                    "user_id": "u1",
                }
            ]
        },
    )
    event["headers"]["idempotency-key"] = "key-1"
    event["multiValueHeaders"]["idempotency-key"] = ["key-1"]
    # WHEN
    response = deployment.run("Api", event)
    # THEN
    assert response["statusCode"] == 202, response
    replayed = deployment.run("Api", event)  # a client's retry: the first answer, from the table
    assert replayed["body"] == response["body"], replayed
    [record_id] = [a["id"] for a in json.loads(response["body"])["accepted"]]
    work(deployment)
    deployment.run("SummarizeDispatch", {"grain": "daily"})
    work(deployment)

    admin = "admin read write forget"
    base = f"/v1/agents/{AGENT}"
    day = yesterday.date().isoformat()
    for method, path, body, query, status in [
        ("GET", f"{base}/memories", None, {}, 200),
        ("GET", f"{base}/stats", None, {}, 200),
        ("GET", f"{base}/audit", None, {}, 200),
        ("GET", f"{base}/timeline", None, {}, 200),
        ("GET", f"{base}/periods/daily/{day}", None, {}, 200),
        ("GET", f"{base}/stats/searches", None, {}, 200),
        ("GET", "/v1/agents", None, {}, 200),
        ("GET", "/v1/topics", None, {}, 200),
        ("GET", "/v1/topics/proposals", None, {}, 200),
        ("GET", "/v1/openapi.json", None, {}, 200),
        ("DELETE", f"{base}/memories/{record_id}", None, {}, 200),
        ("DELETE", f"{base}/memories", None, {"user_id": "u2"}, 200),
        ("POST", "/v1/admin/summarize", {"grain": "daily", "period": day}, {}, 202),
        ("PUT", "/v1/admin/topics", {"terms": {"launch date": ["go-live"]}}, {}, 200),
        (
            "POST",
            f"{base}/memories",
            {"items": [{"content": "Booked the venue.", "topic": "offsite"}]},
            {},
            202,
        ),
        ("PUT", "/v1/admin/topics", {"terms": {}}, {}, 200),
        ("PUT", f"/v1/admin/agents/{AGENT}/readers/supervisor", None, {}, 200),
        ("GET", f"/v1/admin/agents/{AGENT}/readers", None, {}, 200),
        ("DELETE", f"/v1/admin/agents/{AGENT}/readers/supervisor", None, {}, 200),
        (
            "PUT",
            "/v1/knowledge/documents/runbook",
            {"version": "v1", "title": "Runbook", "text": RUNBOOK},
            {},
            202,
        ),
        ("GET", "/v1/knowledge/documents", None, {}, 200),
    ]:
        response = deployment.run("Api", api_event(method, path, body, scopes=admin, **query))
        assert response["statusCode"] == status, (method, path, response)
    work(deployment)  # the writer stores the document's passages
    # the search function finds them; on OpenSearch, with a put of the document under way (its
    # marker, the put's first write), it reads them in one snapshot that it closes (its one DELETE)
    domain = deployment.opensearch  # type: ignore[attr-defined]
    on_opensearch = "agent-memory-knowledge" in domain.aliases
    if on_opensearch:
        (knowledge,) = domain.aliases["agent-memory-knowledge"]
        marker = {"kind": "put", "tenant_id": TENANT, "doc_id": "runbook", "version": "v2"}
        domain.indices[knowledge]["docs"][f"{TENANT}:put:runbook"] = marker
    search = {"query": "how do we fail over?", "sources": ["shared"]}
    response = deployment.run("Search", api_event("POST", f"/v1/agents/{AGENT}/memories/search", search))
    assert response["statusCode"] == 200, response
    assert [r["source_tag"] for r in json.loads(response["body"])["results"]] == ["shared"], response
    assert (("DELETE", "/_search/point_in_time") in domain.requests) is on_opensearch
    for method, path in [
        ("GET", "/v1/knowledge/documents/runbook"),
        ("GET", "/v1/knowledge/documents/runbook/passages"),
        ("DELETE", "/v1/knowledge/documents/runbook"),
    ]:
        response = deployment.run("Api", api_event(method, path, None, scopes=admin))
        assert response["statusCode"] == 200, (method, path, response)
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_longest_tenant_and_agent_ids_write_through_the_fifo_queue(deployment: Deployment) -> None:
    # GIVEN
    bootstrap(deployment)
    tenant, agent = "t" * 128, "a" * 128
    event = api_event("POST", f"/v1/agents/{agent}/memories", {"items": [{"content": "A long-named agent."}]})
    event["requestContext"]["authorizer"]["tenant_id"] = tenant
    # WHEN
    response = deployment.run("Api", event)
    # THEN
    assert response["statusCode"] == 202, response
    answers = drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")
    assert answers == [{"batchItemFailures": []}]


def test_a_document_with_the_longest_ids_is_queued_and_stored(deployment: Deployment) -> None:
    # GIVEN a tenant and a document id of 128 characters each (their group id was about 200)
    bootstrap(deployment)
    doc_id = "d" * 128
    body = {"version": "v1", "title": "Runbook", "text": RUNBOOK}
    event = api_event("PUT", f"/v1/knowledge/documents/{doc_id}", body, scopes="admin read write forget")
    event["requestContext"]["authorizer"]["tenant_id"] = "t" * 128
    # WHEN
    response = deployment.run("Api", event)
    # THEN SQS takes the message (it refuses a group id over 128) and the writer stores it
    assert response["statusCode"] == 202, response
    answers = drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")
    assert answers == [{"batchItemFailures": []}]


@pytest.mark.parametrize("function", ["SummarizeDispatch", "Retention"])
def test_a_scheduled_run_that_fails_in_the_function_lands_in_the_failed_runs_queue(
    deployment: Deployment, function: str
) -> None:
    # GIVEN
    # no index: the run fails inside the function (Scheduler's own retries only cover delivery)
    event = {"grain": "daily"} if function == "SummarizeDispatch" else {}
    # WHEN / THEN
    assert deployment.run_async(function, event) is None
    destination = deployment.on_failure(function)
    assert destination is not None
    url = f"https://sqs.{REGION}.amazonaws.com/{ACCOUNT}/{destination.rsplit(':', 1)[1]}"
    (message,) = boto3.client("sqs", region_name=REGION).receive_message(QueueUrl=url)["Messages"]
    assert json.loads(message["Body"])["requestPayload"] == event


# --- experiences: feedback counted by the writer, patterns recognised by the worker -------------

#: An experience three runs of the agent record: the same finding, from two runs.
FINDING = "Retrying the export with a smaller page size fixed the timeout."


def write_experiences(deployment: Deployment, *run_ids: str) -> list[str]:
    """One success experience per run id, an hour apart, each with the same finding; stored by
    the writer."""
    now = datetime.now(UTC).replace(microsecond=0)
    items = [
        {
            "content": FINDING,
            "kind": "success",
            "context": "The nightly export timed out.",
            "outcome": "The export finished in 40 s.",
            "run_id": run_id,
            "occurred_at": (now - timedelta(hours=len(run_ids) - i)).isoformat(),
        }
        for i, run_id in enumerate(run_ids)
    ]
    response = deployment.run("Api", api_event("POST", f"/v1/agents/{AGENT}/memories", {"items": items}))
    assert response["statusCode"] == 202, response
    ids = [a["id"] for a in json.loads(response["body"])["accepted"]]
    assert len(set(ids)) == len(run_ids), ids
    drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")
    return ids


def memories_of_kind(deployment: Deployment, kind: str) -> list[dict[str, Any]]:
    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories", grain="working"))
    assert response["statusCode"] == 200, response
    return [m for m in json.loads(response["body"])["items"] if m["kind"] == kind]


def pending_marks(deployment: Deployment) -> int:
    """The agent's pending marks (read by the test, not by a function)."""
    from agent_memory.adapters.dynamodb_pending import DynamoDbPendingWrites

    table = deployment.functions["Writer"].environment["AGENT_MEMORY_PENDING_TABLE"]
    return DynamoDbPendingWrites(table).count(TENANT, AGENT)


def audit_actions(deployment: Deployment, record_id: str) -> list[dict[str, Any]]:
    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/audit", record_id=record_id))
    assert response["statusCode"] == 200, response
    return json.loads(response["body"])["items"]  # type: ignore[no-any-return]


def test_feedback_on_an_experience_is_queued_by_the_api_and_counted_by_the_writer(
    deployment: Deployment,
) -> None:
    # GIVEN a stored experience
    bootstrap(deployment)
    [record_id] = write_experiences(deployment, "run-1")

    # WHEN the agent reports that it held
    response = deployment.run(
        "Api",
        api_event(
            "POST",
            f"/v1/agents/{AGENT}/memories/{record_id}/feedback",
            {"outcome": "confirmed", "note": "worked again tonight"},
        ),
    )
    # THEN the API queued it, and the writer counts it on the write queue
    assert response["statusCode"] == 202, response
    assert json.loads(response["body"])["status"] == "queued"
    assert pending_marks(deployment) == 1
    drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")
    assert pending_marks(deployment) == 0
    (counted,) = [e for e in audit_actions(deployment, record_id) if e["action"] == "feedback"]
    assert counted["detail"]["outcome"] == "confirmed"
    assert counted["detail"]["confirmations"] == 1
    assert counted["detail"]["confidence"] > counted["detail"]["confidence_before"]
    # AND the record's experience now holds the confirmation (a scripted update of the record)
    response = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories/{record_id}"))
    assert response["statusCode"] == 200, response
    experience = json.loads(response["body"])["experience"]
    assert (experience["confirmations"], experience["confidence"]) == (1, counted["detail"]["confidence"])
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_pattern_schedule_dispatches_a_job_the_worker_recognises_a_pattern_and_the_writer_stores_it(
    deployment: Deployment,
) -> None:
    # GIVEN three experiences with the same finding, from two runs
    bootstrap(deployment)
    members = write_experiences(deployment, "run-1", "run-1", "run-2")
    from agent_memory.schedules import SCHEDULES

    (schedule,) = [s for s in SCHEDULES if s.event == {"job": "patterns"}]
    assert schedule.function == "summarize_dispatch"

    # WHEN the pattern schedule fires: the dispatcher queues a job per agent, each marked pending
    answer = deployment.run("SummarizeDispatch", schedule.local_event(datetime.now(UTC)))
    # THEN
    assert answer == {"job": "patterns", "jobs_queued": 1}, answer
    assert pending_marks(deployment) == 1
    work(deployment)  # the worker recognises the pattern and queues it; the writer stores it
    (pattern,) = memories_of_kind(deployment, "pattern")
    assert pattern["experience"]["members"] == 3, pattern
    assert pattern["experience"]["runs"] == 2, pattern
    assert pattern["content"].startswith("Summary:")  # stated by the summary model
    assert pending_marks(deployment) == 0  # the job's mark, and the pattern's, are done
    # the worker embedded the experiences itself, with the embedding model
    model = deployment.functions["SummarizeWorker"].environment["AGENT_MEMORY_BEDROCK_EMBEDDING_MODEL_ID"]
    assert any(
        c.function == "SummarizeWorker" and c.action == "bedrock:InvokeModel" and c.resource.endswith(model)
        for c in deployment.calls
    )

    # AND a member forgotten: the forget hides the pattern and queues its job, which drops it
    response = deployment.run("Api", api_event("DELETE", f"/v1/agents/{AGENT}/memories/{members[0]}"))
    assert response["statusCode"] == 200, response
    assert json.loads(response["body"])["stale_summaries"] == [pattern["id"]]
    work(deployment)
    assert memories_of_kind(deployment, "pattern") == []
    assert "pattern_dropped" in [e["action"] for e in audit_actions(deployment, pattern["id"])]
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_profile_schedule_makes_a_persons_profile_and_a_forget_reaches_it(deployment: Deployment) -> None:
    # GIVEN three things Caroline said about herself, stored
    bootstrap(deployment)
    now = datetime.now(UTC).replace(microsecond=0)
    said = (
        "I moved here from Sweden four years ago with my mom.",
        "I love painting sunsets, it calms me down.",
        "My kids are seven and ten and they both play soccer.",
    )
    items = [
        {"content": c, "speaker": "Caroline", "occurred_at": (now - timedelta(days=3 - i)).isoformat()}
        for i, c in enumerate(said)
    ]
    response = deployment.run("Api", api_event("POST", f"/v1/agents/{AGENT}/memories", {"items": items}))
    assert response["statusCode"] == 202, response
    ids = [a["id"] for a in json.loads(response["body"])["accepted"]]
    work(deployment)
    from agent_memory.schedules import SCHEDULES

    (schedule,) = [s for s in SCHEDULES if s.event == {"job": "profiles"}]

    # WHEN the profile schedule fires and the worker and the writer run
    answer = deployment.run("SummarizeDispatch", schedule.local_event(datetime.now(UTC)))
    assert answer == {"job": "profiles", "jobs_queued": 1}, answer
    work(deployment)

    # THEN her profile is stored, stated by the summary model, with her statements as its sources
    (profile,) = memories_of_kind(deployment, "profile")
    assert profile["source_ids"] == ids, profile
    assert profile["content"].startswith("What is known about Caroline:"), profile
    assert profile["metadata"]["subject"] == {"speaker": "Caroline"}
    assert pending_marks(deployment) == 0

    # AND a forgotten statement hides the profile and queues its job, which drops it (two left)
    response = deployment.run("Api", api_event("DELETE", f"/v1/agents/{AGENT}/memories/{ids[0]}"))
    assert response["statusCode"] == 200, response
    assert json.loads(response["body"])["stale_summaries"] == [profile["id"]]
    work(deployment)
    assert memories_of_kind(deployment, "profile") == []
    assert "profile_dropped" in [e["action"] for e in audit_actions(deployment, profile["id"])]
    assert not [c for c in deployment.calls if not c.allowed]


PROVIDER_KEY = "sk-test-0123456789abcdefWXYZ"


def test_tenant_settings_are_changed_by_the_api_and_read_by_the_writer_and_the_search(
    deployment: Deployment,
) -> None:
    # GIVEN a tenant that never set anything
    bootstrap(deployment)
    admin = "admin read write forget"
    got = deployment.run("Api", api_event("GET", "/v1/admin/settings", scopes=admin))
    assert got["statusCode"] == 200, got
    assert json.loads(got["body"])["version"] == 0

    # WHEN its admin turns merging off, sets ranking and a provider key
    change = {
        "version": 0,
        "settings": {"merge_near_duplicates": False, "ranking": {"lexical_weight": 0.0}},
        "provider_key": PROVIDER_KEY,
    }
    put = deployment.run("Api", api_event("PUT", "/v1/admin/settings", change, scopes=admin))

    # THEN the key is stored as a secret and shown by its last four characters only
    assert put["statusCode"] == 200, put
    assert PROVIDER_KEY not in put["body"]
    answer = json.loads(put["body"])
    assert answer["version"] == 1 and answer["provider_key"]["last4"] == "WXYZ"
    again = deployment.run("Api", api_event("GET", "/v1/admin/settings", scopes=admin))
    assert json.loads(again["body"])["provider_key"]["last4"] == "WXYZ" and PROVIDER_KEY not in again["body"]
    # AND the writer reads the settings: the same words twice stay two memories
    first = write(deployment, "Mia booked the movers for the Lisbon office.")
    second = write(deployment, "Mia booked the movers for the Lisbon office.")
    work(deployment)
    for rid in (*first, *second):
        got = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories/{rid}"))
        assert json.loads(got["body"])["id"] == rid
    # AND the search function reads them too (its ranking)
    found = deployment.run(
        "Search", api_event("POST", f"/v1/agents/{AGENT}/memories/search", {"query": "movers Lisbon"})
    )
    assert found["statusCode"] == 200, found
    assert len(json.loads(found["body"])["results"]) == 2
    # AND a change from a stale version is refused; a new key replaces the old; clearing removes it
    stale = deployment.run("Api", api_event("PUT", "/v1/admin/settings", change, scopes=admin))
    assert stale["statusCode"] == 409, stale
    rotate = {"version": 1, "settings": change["settings"], "provider_key": "sk-rotated-0000QRST"}
    rotated = deployment.run("Api", api_event("PUT", "/v1/admin/settings", rotate, scopes=admin))
    assert json.loads(rotated["body"])["provider_key"]["last4"] == "QRST", rotated
    clear = {"version": 2, "settings": {}, "clear_provider_key": True}
    cleared = deployment.run("Api", api_event("PUT", "/v1/admin/settings", clear, scopes=admin))
    assert cleared["statusCode"] == 200, cleared
    assert json.loads(cleared["body"])["provider_key"] is None
    # AND the history names each change, the key only as set or cleared
    history = deployment.run("Api", api_event("GET", "/v1/admin/settings/history", scopes=admin))
    assert history["statusCode"] == 200, history
    changes = [e["detail"].get("provider_key") for e in json.loads(history["body"])["items"]]
    assert changes == ["cleared", "set", "set"] and PROVIDER_KEY not in history["body"]
    assert not [c for c in deployment.calls if not c.allowed]


def test_a_change_of_embedding_model_is_started_by_the_api_and_filled_by_the_worker(
    deployment: Deployment,
) -> None:
    # GIVEN two stored memories of the tenant
    bootstrap(deployment)
    write(deployment, "Mia booked the movers for the Lisbon office.", "The lease starts in May.")
    work(deployment)
    model = deployment.functions["Search"].environment["AGENT_MEMORY_BEDROCK_EMBEDDING_MODEL_ID"]
    admin = "admin read write forget"

    # WHEN its admin chooses the deployment's Titan model at 256 dimensions, and the jobs run
    change = {
        "version": 0,
        "settings": {"embedding": {"provider": "bedrock", "model": model, "dimension": 256}},
    }
    put = deployment.run("Api", api_event("PUT", "/v1/admin/settings", change, scopes=admin))
    assert put["statusCode"] == 200, put
    work(deployment)

    # THEN the worker embedded both memories into the new space and recorded it in the settings
    # table; the switch waits a cache lifetime, so searches still read the model in force
    view = json.loads(deployment.run("Api", api_event("GET", "/v1/admin/settings", scopes=admin))["body"])
    progress = view["embedding"]
    assert (progress["phase"], progress["embedded"], progress["remaining"]) == ("switching", 2, 0), progress
    assert progress["active"] is None and progress["target"]["dimension"] == 256
    assert any(c.function == "SummarizeWorker" and c.action == "dynamodb:PutItem" for c in deployment.calls)
    found = deployment.run(
        "Search", api_event("POST", f"/v1/agents/{AGENT}/memories/search", {"query": "movers Lisbon"})
    )
    assert found["statusCode"] == 200 and json.loads(found["body"])["results"], found
    assert not [c for c in deployment.calls if not c.allowed]


def test_the_admin_patterns_route_queues_jobs_the_worker_runs(deployment: Deployment) -> None:
    # GIVEN three experiences with the same finding, from two runs
    bootstrap(deployment)
    write_experiences(deployment, "run-1", "run-2", "run-2")
    admin = "admin read write forget"

    # WHEN an admin asks for the tenant's agents, then for one agent
    every = deployment.run("Api", api_event("POST", "/v1/admin/patterns", {}, scopes=admin))
    one = deployment.run("Api", api_event("POST", "/v1/admin/patterns", {"agent_id": AGENT}, scopes=admin))

    # THEN each queued one job, marked pending until the worker has run it
    assert every["statusCode"] == 202, every
    assert json.loads(every["body"])["queued"] == 1
    assert one["statusCode"] == 202, one
    assert json.loads(one["body"])["queued"] == 1
    assert pending_marks(deployment) == 2
    work(deployment)
    # the same experiences make the same pattern: one, however many jobs ran
    (pattern,) = memories_of_kind(deployment, "pattern")
    assert pattern["experience"]["members"] == 3, pattern
    assert pending_marks(deployment) == 0
    assert not [c for c in deployment.calls if not c.allowed]


def test_redaction_on_write_calls_comprehend_from_the_api_function_and_stores_no_original(
    deployment: Deployment,
) -> None:
    # GIVEN a tenant whose admin turned redaction on write on, with Comprehend's findings added
    bootstrap(deployment)
    admin = "admin read write forget"
    change = {"version": 0, "settings": {"redaction": {"enabled": True, "engine": "comprehend"}}}
    put = deployment.run("Api", api_event("PUT", "/v1/admin/settings", change, scopes=admin))
    assert put["statusCode"] == 200, put

    # WHEN a memory with an e-mail address, a phone number and a card number is written and stored
    [record_id] = write(deployment, "Mia: mia.lopez@example.com, +49 30 1234 5678, card 4111 1111 1111 1111.")
    work(deployment)

    # THEN the API function asked Comprehend, and the stored memory holds placeholders only
    assert any(c.function == "Api" and c.action == "comprehend:DetectPiiEntities" for c in deployment.calls)
    got = deployment.run("Api", api_event("GET", f"/v1/agents/{AGENT}/memories/{record_id}"))
    content = json.loads(got["body"])["content"]
    assert "[EMAIL]" in content and "[PHONE]" in content and "[CARD]" in content, content
    assert "mia.lopez" not in content and "5678" not in content and "4111" not in content
    assert not [c for c in deployment.calls if not c.allowed]


def test_changes_reach_the_tenants_webhook_through_the_bus_the_queue_and_the_delivery_function(
    deployment: Deployment, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a tenant's webhook, set by its admin through the API function (its name resolved by a
    # stub: no DNS query leaves the machine)
    from agent_memory.adapters import outbound_http
    from agent_memory.adapters.http_webhooks import GuardedWebhookSender
    from agent_memory.feed.rules.events import SIGNATURE_HEADER, verify_signature

    monkeypatch.setattr(outbound_http, "system_resolver", lambda host, port: ["93.184.215.14"])

    bootstrap(deployment)
    admin = "admin read write forget"
    put = deployment.run(
        "Api", api_event("PUT", "/v1/admin/webhooks", {"url": "https://hooks.example.com/in"}, scopes=admin)
    )
    assert put["statusCode"] == 200, put
    secret = json.loads(put["body"])["secret"]
    posts: list[tuple[str, bytes, dict[str, str]]] = []
    answers: list[int | Exception] = [TimeoutError("the endpoint hangs")]

    def post(self: Any, url: str, body: bytes, headers: dict[str, str], timeout_s: float) -> int:
        posts.append((url, body, dict(headers)))
        answer = answers.pop(0) if answers else 204
        if isinstance(answer, Exception):
            raise answer
        return answer

    original = GuardedWebhookSender.post
    GuardedWebhookSender.post = post  # type: ignore[method-assign]  # no network here: the endpoint
    try:
        # WHEN a memory is written (the writer puts its event on the bus) and forgotten (the API does)
        [record_id] = write(deployment, "Tenant secret: the vault code is 4417.")
        drain(deployment, queue_env(deployment, "Writer", "AGENT_MEMORY_WRITE_QUEUE_URL"), "Writer")
        forgot = deployment.run("Api", api_event("DELETE", f"/v1/agents/{AGENT}/memories/{record_id}"))
        assert forgot["statusCode"] == 200, forgot
        # AND the delivery queue is drained, the first delivery failing (put off, then retried)
        deliveries = queue_env(deployment, "WebhookDelivery", "AGENT_MEMORY_WEBHOOK_QUEUE_URL")
        sqs = boto3.client("sqs", region_name=REGION)
        deployment.poll("WebhookDelivery", deliveries)
        for _ in range(4):
            got = sqs.receive_message(
                QueueUrl=deliveries, MaxNumberOfMessages=10, AttributeNames=["All"]
            ).get("Messages", [])
            if not got:
                break
            records = [
                {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                 "attributes": m.get("Attributes", {})}
                for m in got
            ]  # fmt: skip
            answer = deployment.run("WebhookDelivery", {"Records": records})
            failed = {f["itemIdentifier"] for f in answer["batchItemFailures"]}
            done = [m for m in got if m["MessageId"] not in failed]
            for m in done:
                sqs.delete_message(QueueUrl=deliveries, ReceiptHandle=m["ReceiptHandle"])
            for m in got:  # SQS hands a put-off message back once its delay is over: now, here
                if m["MessageId"] in failed:
                    sqs.change_message_visibility(
                        QueueUrl=deliveries, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0
                    )
    finally:
        GuardedWebhookSender.post = original  # type: ignore[method-assign]
    # THEN the endpoint got both changes, signed with the tenant's secret, ids only (its default)
    delivered = {json.loads(body)["id"]: json.loads(body) for _, body, _ in posts}
    assert sorted(e["type"] for e in delivered.values()) == ["memory.created", "memory.forgotten"]
    for url, body, headers in posts:
        assert url == "https://hooks.example.com/in"
        verify_signature(secret, body, headers[SIGNATURE_HEADER])
        assert b"4417" not in body
    assert len(posts) == 3  # one delivery failed and came again
    assert any(
        c.function == "WebhookDelivery" and c.action == "sqs:ChangeMessageVisibility"
        for c in deployment.calls
    )
    # AND the admin reads and removes the webhook
    got_hook = deployment.run("Api", api_event("GET", "/v1/admin/webhooks", scopes=admin))
    assert json.loads(got_hook["body"])["secret"] is None and secret not in got_hook["body"]
    removed = deployment.run("Api", api_event("DELETE", "/v1/admin/webhooks", scopes=admin))
    assert removed["statusCode"] == 200, removed
    assert not [c for c in deployment.calls if not c.allowed]

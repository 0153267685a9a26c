"""An export in the deployed configuration: the API function starts it (its state in the export
bucket) and shows it, the summarize worker writes its file as a multipart upload, and the file is
fetched through the pre-signed URL the API function signs; every call within the functions'
roles."""

from __future__ import annotations

import json
from urllib.parse import urlsplit

import boto3
from tests.deployed.harness import REGION, Deployment
from tests.deployed.test_deployed_paths import AGENT, TENANT, api_event, bootstrap, queue_env, work

ADMIN = "admin read write forget"


def _run_api(deployment: Deployment, method: str, path: str, body: object = None) -> dict[str, object]:
    response = deployment.run("Api", api_event(method, path, body, scopes=ADMIN))
    assert isinstance(response, dict)
    return response


def test_an_export_is_started_by_the_api_written_by_the_worker_and_fetched_by_a_signed_url(
    deployment: Deployment,
) -> None:
    # GIVEN memories of two end users, stored
    bootstrap(deployment)
    items = [
        {"content": "Ines moved to Porto in March.", "user_id": "u1"},
        {"content": "Rui keeps the spare key under the plant.", "user_id": "u2"},
    ]
    written = _run_api(deployment, "POST", f"/v1/agents/{AGENT}/memories", {"items": items})
    assert written["statusCode"] == 202, written
    work(deployment)

    # WHEN an admin exports u1 and the worker runs the job
    started = _run_api(deployment, "POST", "/v1/admin/exports", {"user_id": "u1"})
    assert started["statusCode"] == 202, started
    export_id = json.loads(str(started["body"]))["id"]
    work(deployment)

    # THEN the export is done, listed, and its file is behind a pre-signed URL holding u1's memory only
    shown = _run_api(deployment, "GET", f"/v1/admin/exports/{export_id}")
    assert shown["statusCode"] == 200, shown
    body = json.loads(str(shown["body"]))
    assert body["status"] == "done" and body["progress"]["memories"] == 1, body
    url = urlsplit(body["download_url"])
    assert url.scheme == "https" and "X-Amz-Signature=" in url.query
    listed = _run_api(deployment, "GET", "/v1/admin/exports")
    assert [i["id"] for i in json.loads(str(listed["body"]))["items"]] == [export_id]
    redirect = _run_api(deployment, "GET", f"/v1/admin/exports/{export_id}/download")
    assert redirect["statusCode"] == 303
    headers = {**redirect.get("headers", {}), **redirect.get("multiValueHeaders", {})}  # type: ignore[dict-item]
    assert "X-Amz-Signature=" in str(headers["Location"])
    bucket = deployment.functions["Api"].environment["AGENT_MEMORY_EXPORT_BUCKET"]
    key = f"exports/{TENANT}/{export_id}.jsonl"
    lines = [
        json.loads(x)
        for x in boto3.client("s3", region_name=REGION)
        .get_object(Bucket=bucket, Key=key)["Body"]
        .read()
        .splitlines()
    ]
    assert [line["memory"]["content"] for line in lines if line["type"] == "memory"] == [items[0]["content"]]
    assert "Rui" not in json.dumps(lines)
    # AND a job for an export the bucket's lifecycle deleted is nothing to do (a 404, not a 403)
    jobs = queue_env(deployment, "SummarizeWorker", "AGENT_MEMORY_SUMMARIZE_QUEUE_URL")
    gone = {"job": "export", "tenant_id": TENANT, "export_id": "exp_" + "a" * 26}
    boto3.client("sqs", region_name=REGION).send_message(QueueUrl=jobs, MessageBody=json.dumps(gone))
    work(deployment)
    assert not [c for c in deployment.calls if not c.allowed]

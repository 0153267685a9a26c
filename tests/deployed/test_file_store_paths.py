"""The serverless store's stack (``-c store=serverless``) run in its synthesized configuration:
the same paths as the OpenSearch stack's, each function with its environment and its role only,
the tenants' files in moto's S3 (every HEAD, GET, PUT and listing checked against IAM)."""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest
from tests.deployed import test_deployed_paths as paths
from tests.deployed.harness import Deployment
from tests.deployed.test_grants import PATHS, run_path, unused_grants

#: The named paths (the two parametrised ones test the schedules' failure handling, not the store).
FILE_PATHS = [path for path in PATHS if getattr(path, "__name__", "") != "<lambda>"]
#: S3 grants no path reaches, and why they are there.
UNREACHED = {
    ("Search", "s3:PutObject"): "a search's access counts are stored on their own once 30 s old, at the "
    "instance's next search (best effort): the paths never search twice half a minute apart",
    ("SummarizeWorker", "s3:AbortMultipartUpload"): "an export whose runs failed three times is given "
    "up and its upload aborted: no path here makes a run fail",
    ("SummarizeWorker", "s3:ListBucket"): "a job for a tenant whose file is gone is told so (404) only "
    "if the role may list the bucket; the paths run jobs for tenants that have files",
}


@pytest.mark.parametrize("path", FILE_PATHS, ids=lambda p: p.__name__.removeprefix("test_")[:60])
def test_each_path_runs_on_the_serverless_store(
    deploy_files: Callable[..., Deployment], path: Callable[..., None], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN the serverless stack, deployed
    deployment = deploy_files()
    # WHEN / THEN the path holds as on OpenSearch, every call allowed by the function's role
    run_path(path, deployment, monkeypatch)
    assert not [c for c in deployment.calls if not c.allowed]


def test_every_s3_grant_is_used_and_the_tenants_file_is_in_the_bucket(
    deploy_files: Callable[..., Deployment], monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN
    calls = []
    deployment = None
    # WHEN a tenant with no memory yet searches (its file does not exist), and the paths run
    deployment = deploy_files()
    first = deployment.run(
        "Search", paths.api_event("POST", f"/v1/agents/{paths.AGENT}/memories/search", {"query": "anything"})
    )
    assert first["statusCode"] == 200 and json.loads(first["body"])["results"] == [], first
    calls += deployment.calls
    for path in FILE_PATHS:
        deployment = deploy_files()
        run_path(path, deployment, monkeypatch)
        calls += deployment.calls
    # THEN each memory function's S3 grants were used, and none was refused
    assert deployment is not None
    unused = {
        name: [g for g in grants if g.startswith("s3:") and (name, g.split(" on ")[0]) not in UNREACHED]
        for name, grants in unused_grants(deployment.functions, calls).items()
    }
    assert not {name: g for name, g in unused.items() if g}
    assert not [c for c in calls if not c.allowed]
    assert {c.action for c in calls if c.action.startswith("s3:")} == {
        "s3:GetObject",
        "s3:PutObject",
        "s3:ListBucket",
    }
    assert paths.TENANT

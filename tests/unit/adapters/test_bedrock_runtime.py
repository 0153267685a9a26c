"""The shared ``bedrock-runtime`` client: the injected one as is, else one client built on first
use (once, even under concurrent first use) with the caller's region, timeouts and retries.
Building a botocore client makes no network call, so these run anywhere."""

from __future__ import annotations

import threading

import boto3

from agent_memory.adapters.bedrock_runtime import BedrockRuntime


def test_an_injected_client_is_used_as_is() -> None:
    # GIVEN a client of the caller's own (a test's stubbed client)
    client = boto3.client("bedrock-runtime", region_name="us-west-2")
    # WHEN the runtime is asked for its client
    runtime = BedrockRuntime(client, None, read_timeout=30, max_attempts=3)
    # THEN it is that client
    assert runtime.client is client


def test_the_default_client_carries_the_region_timeouts_and_retries() -> None:
    # GIVEN no injected client
    runtime = BedrockRuntime(None, "eu-west-1", read_timeout=120, max_attempts=4, max_pool_connections=16)
    # WHEN it is first used
    client = runtime.client
    # THEN it is a bedrock-runtime client built with what the adapter asked for
    assert client.meta.service_model.service_name == "bedrock-runtime"
    assert client.meta.region_name == "eu-west-1"
    assert client.meta.config.read_timeout == 120
    assert client.meta.config.connect_timeout == 5
    assert client.meta.config.max_pool_connections == 16
    # botocore's ``max_attempts`` counts retries: the first call plus four
    assert client.meta.config.retries == {"mode": "adaptive", "total_max_attempts": 5}


def test_concurrent_first_use_builds_one_client() -> None:
    # GIVEN a runtime whose client is not built yet, and eight threads that need it at once
    runtime = BedrockRuntime(None, "us-east-1", read_timeout=30, max_attempts=3)
    seen: list[object] = []
    start = threading.Barrier(8)

    def use() -> None:
        start.wait()
        seen.append(runtime.client)

    threads = [threading.Thread(target=use) for _ in range(8)]
    # WHEN they all ask for it
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # THEN every thread got the same client
    assert len(seen) == 8 and len({id(client) for client in seen}) == 1

"""The `Idempotency` port on both persistence layers: SQLite (local) and DynamoDB (moto).

One contract, run against each: the first call runs and its answer is kept; the same key and
fingerprint replay it without running; another fingerprint is a 409; a call still running makes
the next one a 409 until its in-progress budget is spent; a failed call keeps nothing; an expired
record is forgotten. The DynamoDB table has the stack's shape (`cdk/.../idempotency.py`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import boto3
import pytest
from moto import mock_aws

from agent_memory.adapters.dynamodb_idempotency import dynamodb_layer
from agent_memory.adapters.powertools_idempotency import PowertoolsIdempotency, SqliteIdempotencyLayer
from agent_memory.errors import DependencyError, IdempotencyInProgressError, IdempotencyKeyReusedError

TABLE = "idempotency"

MakeIdempotency = Callable[..., PowertoolsIdempotency]


@pytest.fixture(params=["sqlite", "dynamodb"])
def make(
    request: pytest.FixtureRequest, tmp_path: Path
) -> Iterator[tuple[MakeIdempotency, Callable[[], None]]]:
    """A factory of `PowertoolsIdempotency` on one layer, and a way to expire every stored record."""
    if request.param == "sqlite":
        layers: list[SqliteIdempotencyLayer] = []

        def build(**kwargs: Any) -> PowertoolsIdempotency:
            layer = SqliteIdempotencyLayer(tmp_path / "idempotency.db")
            layers.append(layer)
            return PowertoolsIdempotency(layer, **kwargs)

        def expire() -> None:
            import sqlite3

            with sqlite3.connect(tmp_path / "idempotency.db") as conn:
                conn.execute("UPDATE idempotency SET expiration = 1")

        yield build, expire
        for layer in layers:
            layer.close()
        return
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(
            TableName=TABLE,
            KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
            AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
            BillingMode="PAY_PER_REQUEST",
        )

        def build_ddb(**kwargs: Any) -> PowertoolsIdempotency:
            return PowertoolsIdempotency(dynamodb_layer(TABLE, client), **kwargs)

        def expire_ddb() -> None:
            for item in client.scan(TableName=TABLE)["Items"]:
                client.update_item(
                    TableName=TABLE,
                    Key={"id": item["id"]},
                    UpdateExpression="SET expiration = :past",
                    ExpressionAttributeValues={":past": {"N": "1"}},
                )

        yield build_ddb, expire_ddb


class Counter:
    """A computation that counts its runs and answers which run it was."""

    def __init__(self) -> None:
        self.runs = 0

    def __call__(self) -> dict[str, Any]:
        self.runs += 1
        return {"run": self.runs, "ids": [f"mem_{self.runs}"]}


def test_first_call_runs_and_a_retry_replays_its_answer(make: Any) -> None:
    # GIVEN
    build, _ = make
    idem, compute = build(), Counter()

    # WHEN
    first = idem.run("acme\nk-1", "fp-a", compute)
    again = idem.run("acme\nk-1", "fp-a", compute)

    # THEN
    assert (first.result, first.replayed) == ({"run": 1, "ids": ["mem_1"]}, False)
    assert (again.result, again.replayed) == ({"run": 1, "ids": ["mem_1"]}, True)
    assert compute.runs == 1


def test_another_process_sees_the_same_record(make: Any) -> None:
    # GIVEN two instances on the same store (two Lambda containers, or the server and a CLI)
    build, _ = make
    compute = Counter()
    build().run("acme\nk-1", "fp-a", compute)

    # WHEN / THEN the second replays the first's answer
    outcome = build().run("acme\nk-1", "fp-a", compute)
    assert outcome.replayed and outcome.result["run"] == 1 and compute.runs == 1


def test_same_key_with_another_request_is_refused_and_the_first_answer_kept(make: Any) -> None:
    # GIVEN
    build, _ = make
    idem, compute = build(), Counter()
    idem.run("acme\nk-1", "fp-a", compute)

    # WHEN / THEN
    with pytest.raises(IdempotencyKeyReusedError) as refused:
        idem.run("acme\nk-1", "fp-b", compute)

    assert refused.value.status == 409
    assert compute.runs == 1
    assert idem.run("acme\nk-1", "fp-a", compute).result["run"] == 1


def test_keys_are_independent(make: Any) -> None:
    # GIVEN
    build, _ = make
    idem, compute = build(), Counter()
    a = idem.run("acme\nk-1", "fp", compute)
    # WHEN
    b = idem.run("globex\nk-1", "fp", compute)
    # THEN
    assert (a.result["run"], b.result["run"], b.replayed) == (1, 2, False)


def test_a_failed_call_keeps_nothing_so_a_retry_runs(make: Any) -> None:
    # GIVEN
    build, _ = make
    idem = build()

    def failing() -> dict[str, Any]:
        raise DependencyError("queue down")

    # WHEN / THEN
    with pytest.raises(DependencyError, match="queue down"):
        idem.run("acme\nk-1", "fp-a", failing)

    # a retry, even with another body, runs: nothing was promised
    outcome = idem.run("acme\nk-1", "fp-b", Counter())
    assert (outcome.result["run"], outcome.replayed) == (1, False)


def test_a_call_in_progress_refuses_the_retry_until_it_finishes(make: Any) -> None:
    # GIVEN a first call that is still running
    build, _ = make
    idem = build()
    started, release = threading.Event(), threading.Event()
    answers: list[Any] = []

    def slow() -> dict[str, Any]:
        started.set()
        assert release.wait(5)
        return {"run": "slow"}

    first = threading.Thread(target=lambda: answers.append(idem.run("acme\nk-1", "fp-a", slow)))
    first.start()
    assert started.wait(5)

    # WHEN a retry with the same key arrives meanwhile, THEN it is a 409 that says so
    try:
        with pytest.raises(IdempotencyInProgressError) as busy:
            idem.run("acme\nk-1", "fp-a", Counter())
        assert busy.value.status == 409
    finally:
        release.set()
        first.join(5)

    # AND once the first is done, the retry gets its answer
    assert answers[0].result == {"run": "slow"}
    assert idem.run("acme\nk-1", "fp-a", Counter()).result == {"run": "slow"}


def test_a_request_that_died_holds_its_key_only_for_the_in_progress_budget(make: Any) -> None:
    # GIVEN a first call whose process died after marking the key in progress
    build, _ = make
    # (a budget of 1 s: a shorter one can run out before the retry below is even sent on a busy
    # machine, and the retry then runs instead of being refused)
    idem = build(in_progress_s=1.0)
    layer = idem._persistence
    layer.configure(idem._config, key_prefix="agent-memory.write")
    layer.save_inprogress({"key": "acme\nk-1", "fingerprint": "fp-a"}, remaining_time_in_millis=1000)
    with pytest.raises(IdempotencyInProgressError):
        idem.run("acme\nk-1", "fp-a", Counter())

    # WHEN its budget is spent, THEN a retry runs
    time.sleep(1.2)
    outcome = idem.run("acme\nk-1", "fp-a", Counter())
    assert (outcome.result["run"], outcome.replayed) == (1, False)


def test_an_expired_record_is_forgotten(make: Any) -> None:
    # GIVEN
    build, expire = make
    idem, compute = build(), Counter()
    idem.run("acme\nk-1", "fp-a", compute)

    # WHEN
    expire()

    # THEN
    outcome = idem.run("acme\nk-1", "fp-b", compute)
    assert (outcome.result["run"], outcome.replayed) == (2, False)


def test_the_client_key_is_never_stored_as_sent(make: Any, tmp_path: Path) -> None:
    # GIVEN
    build, _ = make
    idem = build()
    idem.run("acme\nsecret-key-123", "fp", Counter())
    layer = idem._persistence
    # WHEN
    if isinstance(layer, SqliteIdempotencyLayer):
        dump = b"".join(f.read_bytes() for f in tmp_path.glob("idempotency.db*"))  # WAL included
    else:
        dump = repr(layer.client.scan(TableName=TABLE)["Items"]).encode()
    # THEN
    assert b"secret-key-123" not in dump and b"acme" not in dump

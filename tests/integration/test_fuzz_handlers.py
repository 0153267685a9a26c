"""Hostile input through the handlers, where a parser's failure would become a 500 or a stuck batch.

- The writer handler on SQS records whose bodies are arbitrary, truncated or hostile JSON: every
  record is stored or dead-lettered with a reason a person can read (printable, bounded), and no
  exception escapes the batch (a poison message never fails, and so never blocks, its group).
- Time keys on the routes that take them (`GET .../periods/{grain}/{time_key}` and
  `POST /v1/admin/summarize`): a malformed key is a 400 that says what is wrong, never a 500.
"""

from __future__ import annotations

import json
import uuid
from datetime import date
from typing import Any

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from tests.integration.conftest import call_api
from tests.payloads import load_event
from tests.strategies import encodes_as_utf8, hostile, key_like, valid_keys
from tests.unit.services.test_fuzz_writer import VALID_BODY, VALID_RECORD, bodies

from agent_memory import container
from agent_memory.handlers import writer
from agent_memory.local.lambda_context import LocalContext
from agent_memory.model.commands import WriteCommand
from agent_memory.model.grains import Grain, time_key_for
from agent_memory.observability import discard_unpublished_metrics

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
#: What a dead letter's reason may be at most (the SQS adapter keeps 1,000 characters).
MAX_REASON = 1_000


def _extra_key(key: str) -> str:
    """A valid command whose record carries one unknown field named ``key`` (echoed by the parser)."""
    return json.dumps({"v": 1, "op": "remember", "record": {**VALID_RECORD, key: 1}})


#: Bodies as a queue can carry them: any text but lone surrogates (SQS refuses those at send,
#: SQLite cannot hold them), with hostile JSON escapes and keys inside.
hostile_bodies = st.one_of(
    bodies.filter(encodes_as_utf8),
    hostile(surrogates=False, max_pieces=6).map(_extra_key),
    st.sampled_from(["\x00evil\x1b[31m\u202e", "k" * 5_000, "\ufffe\u2028"]).map(_extra_key),
    st.just(""),
)


def _record(body: str, group: str) -> dict[str, Any]:
    return {
        "messageId": str(uuid.uuid4()),
        "receiptHandle": uuid.uuid4().hex,
        "body": body,
        "attributes": {
            "ApproximateReceiveCount": "1",
            "SentTimestamp": "1795701600000",
            "SequenceNumber": "1",
            "MessageGroupId": group,
            "MessageDeduplicationId": uuid.uuid4().hex,
            "SenderId": "test",
            "ApproximateFirstReceiveTimestamp": "1795701600000",
        },
        "messageAttributes": {},
        "md5OfBody": "0" * 32,
        "eventSource": "aws:sqs",
        "eventSourceARN": "arn:aws:sqs:us-east-1:123456789012:writes.fifo",
        "awsRegion": "us-east-1",
    }


def _parses(body: str) -> bool:
    try:
        WriteCommand.model_validate_json(body)
    except ValidationError:
        return False
    return True


def _printable(text: str) -> bool:
    return all(c.isprintable() for c in text)


@FUZZ
@given(
    batch=st.lists(
        st.tuples(hostile_bodies, st.sampled_from(["acme:a:working", "acme:b:working"])),
        min_size=1,
        max_size=6,
    )
)
@example(batch=[(_extra_key("k" * 5_000), "acme:a:working"), (VALID_BODY, "acme:a:working")])
@example(batch=[(_extra_key("\x00evil\x1b[31m"), "acme:a:working")])
def test_any_sqs_batch_is_stored_or_dead_lettered_with_a_readable_reason(
    local_env: object, batch: list[tuple[str, str]]
) -> None:
    # GIVEN an SQS batch of arbitrary bodies in two groups
    letters = container.dead_letters()
    before = len(letters.dead_letters())
    event = {"Records": [_record(body, group) for body, group in batch]}

    # WHEN the writer handles it (as the local worker does: metrics kept back are dropped after)
    response = writer.handler(event, LocalContext())
    discard_unpublished_metrics()

    # THEN no record fails (poison is handled by dead-lettering it), and each poison body is a
    # dead letter whose reason says what is wrong in a line a person can read
    assert response == {"batchItemFailures": []}
    new = letters.dead_letters()[before:]
    poison = [body for body, _ in batch if not _parses(body)]
    assert [letter.body for letter in new] == poison
    for letter in new:
        assert letter.reason.startswith("invalid write command")
        assert len(letter.reason) <= MAX_REASON and _printable(letter.reason), ascii(letter.reason[:200])
    if any(body == VALID_BODY for body, _ in batch):
        assert container.store().get("acme", "support-bot", VALID_RECORD["id"]) is not None


# --- time keys on the routes --------------------------------------------------------------------------


def _period_event(grain: str, key: str) -> dict[str, Any]:
    path = f"/v1/agents/support-bot/periods/{grain}/{key}"
    event = load_event("api_stats.json", path=path)
    event["pathParameters"] = {"proxy": path.lstrip("/")}
    return event


url_safe_keys = st.one_of(
    key_like.filter(lambda k: "/" not in k and "\x00" not in k),
    valid_keys,
    st.text(alphabet="0123456789-WQwq+:. ", max_size=16),
)


@FUZZ
@given(grain=st.sampled_from([g.value for g in Grain]), key=url_safe_keys)
@example(grain="weekly", key="2026-W53")  # 2026 has 52 ISO weeks... or 53: either way no 500
@example(grain="daily", key="2026-02-30")
@example(grain="monthly", key="9999-12")
@example(grain="working", key="2026-11-20")
def test_a_period_route_answers_a_malformed_time_key_with_a_400_never_a_500(
    local_env: object, grain: str, key: str
) -> None:
    status, body = call_api(_period_event(grain, key))
    # WHEN / THEN a key the grain's grammar accepts opens its (empty) period; anything else is a 400
    # (or a 404 when the path does not even route) with the documented error body
    assert status in {200, 400, 404}, (status, body)
    if status == 200:
        assert body["grain"] == grain and body["time_key"] == key
    else:
        assert set(body) == {"error"} and body["error"]["message"]


def test_a_period_route_names_what_is_wrong_with_the_key(local_env: object) -> None:
    # WHEN
    status, body = call_api(_period_event("daily", "2026-02-30"))
    # THEN
    assert status == 400
    assert "2026-02-30" in json.dumps(body) and "daily" in json.dumps(body)
    assert call_api(_period_event("daily", time_key_for(Grain.DAILY, date(2026, 2, 28))))[0] == 200


@FUZZ
@given(
    grain=st.one_of(st.sampled_from([g.value for g in Grain]), hostile(max_pieces=2)),
    period=st.one_of(key_like, valid_keys, hostile(max_pieces=3)),
)
def test_admin_summarize_with_any_period_is_accepted_or_a_400(
    local_env: object, grain: str, period: str
) -> None:
    # GIVEN
    body = json.dumps({"grain": grain, "period": period})
    event = load_event("api_admin_summarize.json", body=body)
    # WHEN
    status, answer = call_api(event)
    # THEN
    assert status in {202, 400}, (status, answer)

"""Idempotent writes: ``POST .../memories`` with an ``Idempotency-Key`` header.

Without a key a write is already safe to retry when it names ``occurred_at`` (its ids come from
its content, and the queue drops the resend). A key makes *any* retry safe, including one that
lets ``occurred_at`` default to now: the first answer is kept (24 hours by default) and every
retry with the same key and the same request gets exactly that answer, the same ids, and queues
nothing. The same key with a different request is a 409, never a silent replay of another answer.

A key names one request of one tenant: it is scoped by the tenant (two tenants can never see each
other's answers), and the agent is part of the request's fingerprint, so a key reused for
another agent is a different request (409), not a replay of the first agent's ids.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from agent_memory.contract.v1 import WriteRequest, WriteResponse
from agent_memory.domain.caller import Caller
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import Idempotency
from agent_memory.services.write import WriteService


@dataclass(frozen=True, slots=True)
class Accepted:
    response: WriteResponse
    #: True when this answer is the first request's, replayed for a retry with the same key.
    replayed: bool = False


def fingerprint(agent_id: str, request: WriteRequest) -> str:
    """What the request asked, as a hash: the agent and the validated body (not its whitespace)."""
    canonical = json.dumps(
        {"agent_id": agent_id, "request": request.model_dump(mode="json")},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()


class IdempotentWriteService:
    def __init__(self, write: WriteService, idempotency: Idempotency) -> None:
        self._write = write
        self._idempotency = idempotency

    def accept(
        self, caller: Caller, agent_id: str, request: WriteRequest, idempotency_key: str | None = None
    ) -> Accepted:
        if idempotency_key is None:
            return Accepted(self._write.accept(caller, agent_id, request))
        outcome = self._idempotency.run(
            f"{caller.tenant_id}\n{idempotency_key}",
            fingerprint(agent_id, request),
            lambda: self._write.accept(caller, agent_id, request).model_dump(mode="json"),
        )
        if outcome.replayed:
            metrics.add_metric(name="WritesReplayedByKey", unit=MetricUnit.Count, value=1)
            logger.info("idempotent write replayed", extra={"agent_id": agent_id})
        return Accepted(WriteResponse.model_validate(outcome.result), replayed=outcome.replayed)

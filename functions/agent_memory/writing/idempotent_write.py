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

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_memory.model.caller import Caller
from agent_memory.model.queries import NewMemory
from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports import Idempotency
from agent_memory.writing.write import WriteService


@dataclass(frozen=True, slots=True)
class Accepted:
    #: The record ids of the write, in the order of its items.
    ids: list[str]
    #: True when this answer is the first request's, replayed for a retry with the same key.
    replayed: bool = False


def _kept(ids: Sequence[str]) -> dict[str, Any]:
    """The first answer as the idempotency table keeps it: the v1 response body, so answers kept
    before and after a deployment read back the same way."""
    return {"accepted": [{"id": i, "status": "queued"} for i in ids]}


class IdempotentWriteService:
    def __init__(self, write: WriteService, idempotency: Idempotency) -> None:
        self._write = write
        self._idempotency = idempotency

    def accept(
        self,
        caller: Caller,
        agent_id: str,
        items: Sequence[NewMemory],
        idempotency_key: str | None = None,
        fingerprint: str = "",
    ) -> Accepted:
        """``fingerprint`` says what the request asked (the contract's `WriteRequest.fingerprint`):
        the same key replays only for the same fingerprint, and is a 409 for another."""
        if idempotency_key is None:
            return Accepted(self._write.accept(caller, agent_id, items))
        if not fingerprint:
            raise ValueError("a write with an idempotency key needs the request's fingerprint")
        outcome = self._idempotency.run(
            f"{caller.tenant_id}\n{idempotency_key}",
            fingerprint,
            lambda: _kept(self._write.accept(caller, agent_id, items)),
        )
        if outcome.replayed:
            metrics.add_metric(name="WritesReplayedByKey", unit=MetricUnit.Count, value=1)
            logger.info("idempotent write replayed", extra={"agent_id": agent_id})
        return Accepted([a["id"] for a in outcome.result["accepted"]], replayed=outcome.replayed)

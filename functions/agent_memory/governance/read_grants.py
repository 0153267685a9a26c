"""Read access to another agent's memory: off by default, granted by an admin, in the audit trail.

A key bound to agents touches only them. Sometimes one agent should read another's memory (a
supervisor agent reading its workers', a hand-over): an admin grants agent R read access to agent
O, and every key bound to R may then search, read and list O's memory (never write or forget it).
The grant is kept with the keys (`ports.KeyStore`), so the authorizer names the granted agents
in the caller's ``reads`` with the key itself; a grant or a revocation reaches the API when the
authorizer's caches expire (docs/api.md). Each change is recorded in O's audit trail: who let
whom read O's memory, and when.
"""

from __future__ import annotations

from agent_memory.errors import ValidationFailedError
from agent_memory.model.caller import Caller
from agent_memory.observability import logger
from agent_memory.ports import AuditAction, AuditAppend, AuditEvent, Clock, KeyStore


class ReadGrantsService:
    def __init__(self, keys: KeyStore, audit: AuditAppend, clock: Clock) -> None:
        self._keys = keys
        self._audit = audit
        self._clock = clock

    def grant(self, caller: Caller, owner: str, reader: str) -> bool:
        """Let ``reader`` read ``owner``'s memory; False when it already could."""
        if reader == owner:
            raise ValidationFailedError(
                "an agent always reads its own memory",
                [{"field": "reader_id", "message": "same as agent_id"}],
            )
        changed = self._keys.grant_read(caller.tenant_id, reader, owner)
        if changed:
            self._record(caller, owner, reader, AuditAction.READ_GRANTED)
        return changed

    def revoke(self, caller: Caller, owner: str, reader: str) -> bool:
        """Take it back; False when there was no such grant."""
        changed = self._keys.revoke_read(caller.tenant_id, reader, owner)
        if changed:
            self._record(caller, owner, reader, AuditAction.READ_REVOKED)
        return changed

    def readers(self, tenant_id: str, owner: str) -> list[str]:
        return self._keys.readers_of(tenant_id, owner)

    def _record(self, caller: Caller, owner: str, reader: str, action: str) -> None:
        self._audit.append_audit(
            [
                AuditEvent(
                    tenant_id=caller.tenant_id,
                    agent_id=owner,
                    record_id=f"reader:{reader}",
                    action=action,
                    actor=caller.key_id,
                    at=self._clock.now(),
                    detail={"reader": reader},
                )
            ]
        )
        logger.info("read grant changed", extra={"agent_id": owner, "reader": reader, "action": action})

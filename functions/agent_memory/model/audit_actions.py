"""What the audit trail records: its lines (`AuditEvent`) and their actions, by name (`ports.AuditLog`
stores them; the change feed tells of some, `feed.rules.events.updated`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime


class AuditAction:
    """The actions the audit trail records."""

    FORGET = "forget"  # a record forgotten by id
    ERASE = "erase"  # a record forgotten because its end user was erased
    STALE = "stale"  # a summary made from a forgotten record, hidden until re-made
    REMADE = "remade"  # a stale summary made again without what was forgotten
    EMPTIED = "emptied"  # a stale summary with nothing left to fold, deleted
    MERGED = "merged"  # a write merged into this near-identical record (detail: the absorbed id)
    RETENTION = "retention"  # removed by a retention rule (detail: which rule)
    SUPERSEDED = "superseded"  # a newer memory replaced this one's value (detail: by, attribute)
    SUPERSESSION_UNDONE = "supersession_undone"  # ... found not to (detail: by, who undid it)
    RESTORED = "restored"  # an earlier version brought back by an admin (detail: version, what)
    FEEDBACK = "feedback"  # an experience's confidence moved (detail: outcome, note, before, after)
    PATTERN_MADE = "pattern_made"  # a pattern recognised or refreshed (detail: members, runs)
    PATTERN_DROPPED = "pattern_dropped"  # a pattern whose members no longer make one, deleted
    PROFILE_MADE = "profile_made"  # a person's profile made or re-made (detail: statements)
    PROFILE_DROPPED = "profile_dropped"  # a profile with too few statements left, deleted
    SETTINGS_CHANGED = "settings_changed"  # tenant settings (detail: fields before/after; key)
    KEY_REJECTED = "provider_key_rejected"  # the tenant's provider refused its key (detail: job)
    READ_GRANTED = "read_granted"  # another agent may read this agent's memory (detail: reader)
    READ_REVOKED = "read_revoked"  # ... no longer (detail: reader)
    WEBHOOK_SET = "webhook_set"  # the tenant's webhook set or replaced (detail: where, types, content)
    WEBHOOK_DELETED = "webhook_deleted"  # ... removed


@dataclass(frozen=True, slots=True)
class AuditEvent:
    """One line of an agent's audit trail: who did what to which record, when.

    ``action`` is one of `AuditAction`; ``detail`` holds what the action needs to be understood
    later (the summaries a forget made stale, the records a re-made summary dropped), as JSON.
    """

    tenant_id: str
    agent_id: str
    record_id: str
    action: str
    actor: str
    at: datetime
    detail: dict[str, object] = field(default_factory=dict)

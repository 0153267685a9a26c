"""Redaction on write: a tenant's texts with personal data replaced before a write is accepted.

Why at accept time, in the API: what is queued is already redacted, so the original reaches no
queue message, pending mark, idempotency fingerprint, embedding, summary, record, export or log
line. The decision is per tenant (`TenantSettings.redaction`, off by default) and read through
the settings as stored at that moment (`SettingsCache.current`, not a process's cached copy), so
every API process honours a change from the moment its PUT answers; a tenant whose settings
cannot be read gets an error, never an unredacted write. Only counts by kind are logged and
measured, never a value.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_memory.observability import MetricUnit, logger, metrics
from agent_memory.ports.pii import PiiDetector
from agent_memory.tenancy.rules.tenant_settings import RedactionEngine
from agent_memory.tenancy.settings import SettingsCache
from agent_memory.writing.rules.redaction import redact

#: Replaces the personal data in one text.
TextRedactor = Callable[[str], str]


class PiiRedaction:
    """Gives each tenant's text redactor, or None when the tenant keeps texts as written.

    ``detector`` is the managed engine (Comprehend) for tenants that chose it; None in
    deployments without it, where such a choice is refused when the settings are saved."""

    def __init__(self, settings: SettingsCache | None, detector: PiiDetector | None = None) -> None:
        self._settings = settings
        self._detector = detector

    def for_tenant(self, tenant_id: str) -> TextRedactor | None:
        if self._settings is None:
            return None
        chosen = self._settings.current(tenant_id).redaction  # never a copy older than the last PUT
        if not chosen.enabled:
            return None
        managed = chosen.engine is RedactionEngine.COMPREHEND and self._detector is not None
        detect = self._detector.detect if managed and self._detector is not None else None

        def redactor(text: str) -> str:
            done = redact(text, detect)
            if done.total:
                counts = {kind.value: n for kind, n in done.counts.items()}
                metrics.add_metric(name="PiiRedacted", unit=MetricUnit.Count, value=done.total)
                logger.info("personal data redacted", extra={"redacted": counts})
            return done.text

        return redactor

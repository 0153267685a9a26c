"""`AdminCalls`: the client's calls that need the admin scope.

Summaries and retention on demand, pattern runs, the tenant's settings, exports of an end user
and the change feed's webhook. `MemoryClient` inherits these; they are apart because they are
the operator's capability, not an agent's.
"""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, BinaryIO
from urllib.parse import quote, urlsplit

from agent_memory.client.api_errors import UnexpectedResponseError, error_from_response
from agent_memory.client.connection import Connection
from agent_memory.contract.v1 import RetentionRunResponse, SummarizeRequest, SummarizeResponse
from agent_memory.contract.v1_experience import PatternRunRequest, PatternRunResponse
from agent_memory.contract.v1_exports import ExportOut, ExportRequest, ExportsResponse
from agent_memory.contract.v1_settings import SettingsResponse
from agent_memory.contract.v1_webhooks import WebhookDeleted, WebhookResponse, WebhookUpdate
from agent_memory.tenancy.rules.tenant_settings import TenantSettings


class AdminCalls(Connection):
    """One method per admin route (``/v1/admin/...``)."""

    def summarize(self, request: SummarizeRequest | None = None, /, **fields: Any) -> SummarizeResponse:
        """Run (or re-run) summaries: ``summarize(grain="daily", period="2026-11-21")`` or a
        ``from``/``to`` range (``from_=`` here)."""
        if request is None:
            request = SummarizeRequest.model_validate(fields)
        elif fields:
            raise TypeError("give a SummarizeRequest or fields, not both")
        return self._send("POST", "/v1/admin/summarize", SummarizeResponse, request)

    def run_retention(self) -> RetentionRunResponse:
        """Run retention now for every tenant (what the daily schedule runs): deployed, started in
        the retention function (``status: started``); on the embedded runtime, run with its report."""
        return self._send("POST", "/v1/admin/retention", RetentionRunResponse)

    def run_patterns(self, agent_id: str | None = None) -> PatternRunResponse:
        """Recognise patterns now (what the daily schedule runs): for one agent, or every agent of
        the key's tenant with recent memory; 202 with how many agents were ``queued`` (the patterns
        are written within seconds, ``wait_until_stored`` waits for them)."""
        request = PatternRunRequest(agent_id=agent_id)
        return self._send("POST", "/v1/admin/patterns", PatternRunResponse, request)

    def settings(self) -> SettingsResponse:
        """The key's tenant's settings (admin scope), their version, and of its provider key only
        the last four characters."""
        return self._send("GET", "/v1/admin/settings", SettingsResponse)

    def update_settings(
        self,
        settings: TenantSettings,
        version: int,
        provider_key: str | None = None,
        clear_provider_key: bool = False,
    ) -> SettingsResponse:
        """Replace the tenant's settings, naming the ``version`` read (a `ConflictError` when
        another change came first); set or clear its provider key."""
        body: dict[str, Any] = {
            "version": version,
            "settings": settings.model_dump(mode="json"),
            "clear_provider_key": clear_provider_key,
        }
        if provider_key is not None:
            body["provider_key"] = provider_key  # sent as is: a SecretStr would dump as stars
        raw = self._send_raw("PUT", "/v1/admin/settings", body=json.dumps(body).encode())
        return SettingsResponse.model_validate_json(raw.body)

    # --- exports (admin scope) -----------------------------------------------------------------

    def start_export(
        self,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        since: datetime | str | None = None,
        until: datetime | str | None = None,
    ) -> ExportOut:
        """Start exporting one end user's memory (every agent of the tenant) or one agent's
        (exactly one of the two), optionally only what speaks about ``since``..``until``."""
        fields = {"user_id": user_id, "agent_id": agent_id, "since": since, "until": until}
        request = ExportRequest.model_validate({k: v for k, v in fields.items() if v is not None})
        return self._send("POST", "/v1/admin/exports", ExportOut, request)

    def export_status(self, export_id: str) -> ExportOut:
        """An export's progress and, when done, its ``download_url``."""
        return self._send("GET", "/v1/admin/exports/" + quote(export_id, safe=""), ExportOut)

    def list_exports(self, limit: int = 20) -> ExportsResponse:
        return self._send("GET", "/v1/admin/exports", ExportsResponse, query={"limit": limit})

    def wait_for_export(
        self,
        export_id: str,
        timeout_s: float = 3600.0,
        interval_s: float = 0.5,
        on_progress: Callable[[ExportOut], None] | None = None,
    ) -> ExportOut:
        """Poll the export until it is done or failed (``on_progress`` sees every answer); raises
        `TimeoutError` at the deadline."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.export_status(export_id)
            if on_progress is not None:
                on_progress(status)
            if status.status in ("done", "failed"):
                return status
            if time.monotonic() >= deadline:
                raise TimeoutError(f"export {export_id} is still {status.status} after {timeout_s} s")
            self._sleep(interval_s)

    def download_export(
        self, export_id: str, out: BinaryIO, on_bytes: Callable[[int, int | None], None] | None = None
    ) -> int:
        """Stream a done export's file into ``out`` a megabyte at a time (memory stays bounded
        whatever its size): from its pre-signed URL (without the key), or from this API's download
        route (with it). ``on_bytes(done, total)`` follows it; returns the bytes written."""
        status = self.export_status(export_id)
        if status.download_url is None:
            raise UnexpectedResponseError(f"export {export_id} is {status.status}: nothing to download", 409)
        signed = urlsplit(status.download_url).scheme in ("http", "https")
        url = status.download_url if signed else self.base_url + status.download_url
        headers = {"Accept": "application/x-ndjson", "User-Agent": self._user_agent}
        if not signed:  # a pre-signed URL carries its own signature: a key sent with it is refused
            headers.update(self._auth.headers("GET", url, headers, None))
        parts = urlsplit(url)
        https = parts.scheme == "https"
        connection = (http.client.HTTPSConnection if https else http.client.HTTPConnection)(
            parts.netloc, timeout=self._timeout_s
        )
        try:
            target = parts.path + (f"?{parts.query}" if parts.query else "")
            connection.request("GET", target, headers=headers)
            response = connection.getresponse()
            if response.status >= 400:
                lowered = {k.lower(): v for k, v in response.getheaders()}
                raise error_from_response(response.status, lowered, response.read(), None)
            total = int(response.headers["Content-Length"]) if response.headers["Content-Length"] else None
            done = 0
            while chunk := response.read(1 << 20):
                out.write(chunk)
                done += len(chunk)
                if on_bytes is not None:
                    on_bytes(done, total)
            return done
        finally:
            connection.close()

    # --- the change feed's webhook (admin scope) ---------------------------------------------

    def webhook(self) -> WebhookResponse:
        """The tenant's webhook (`NotFoundError` when none is set); of its secret, the last four
        characters."""
        return self._send("GET", "/v1/admin/webhooks", WebhookResponse)

    def set_webhook(
        self,
        url: str,
        *,
        event_types: Sequence[str] | None = None,
        include_content: bool = False,
        secret: str | None = None,
        new_secret: bool = False,
    ) -> WebhookResponse:
        """Set or replace the tenant's webhook. The answer's ``secret`` is the signing secret
        when this call made it (a first webhook, or ``new_secret``): keep it, it is not shown
        again. Check deliveries with `agent_memory.feed.rules.events.verify_signature`."""
        fields = {"url": url, "event_types": event_types, "include_content": include_content}
        body = WebhookUpdate.model_validate(fields).model_dump(mode="json", exclude_none=True)
        body |= {"new_secret": new_secret} | ({"secret": secret} if secret is not None else {})
        raw = self._send_raw("PUT", "/v1/admin/webhooks", body=json.dumps(body).encode())
        return WebhookResponse.model_validate_json(raw.body)

    def delete_webhook(self) -> WebhookDeleted:
        """Remove the tenant's webhook: no event is delivered from now on."""
        return self._send("DELETE", "/v1/admin/webhooks", WebhookDeleted)

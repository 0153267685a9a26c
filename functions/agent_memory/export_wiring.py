"""The composition of exports (`governance.export`): which archive keeps the files, and the
format they are written in. Apart from `container` so the composition root stays short; the
container builds the service once per process through `export_service`, handing it the parts it
already has (this module never imports the container back).
"""

from __future__ import annotations

from agent_memory.contract.v1_exports import JsonLinesExport
from agent_memory.governance.export import ExportService
from agent_memory.ports.clocks import Clock
from agent_memory.ports.export_store import ExportArchive
from agent_memory.ports.memory_store import MemoryStore
from agent_memory.ports.queues import JobQueue
from agent_memory.settings import Settings


def export_archive(settings: Settings) -> ExportArchive:
    """The export bucket when one is named (deployed), else ``<data_dir>/exports``."""
    if settings.export_bucket:
        from agent_memory.adapters.s3_exports import S3ExportArchive

        return S3ExportArchive(settings.export_bucket, settings.export_prefix, region=settings.aws_region)
    from agent_memory.adapters.local_exports import LocalExportArchive

    return LocalExportArchive(settings.data_dir / "exports", expiry_days=settings.export_expiry_days)


def export_service(settings: Settings, store: MemoryStore, jobs: JobQueue, clock: Clock) -> ExportService:
    return ExportService(
        store,
        export_archive(settings),
        JsonLinesExport(),
        jobs,
        clock,
        url_ttl_s=settings.export_url_ttl_s,
    )

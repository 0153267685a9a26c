"""The composition of exports (`governance.export`): which archive keeps the files, and the
format they are written in. Apart from `container` so the composition root stays short; the
container builds the service once per process through `export_service`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.contract.v1_exports import JsonLinesExport
from agent_memory.governance.export import ExportService
from agent_memory.ports.export_store import ExportArchive
from agent_memory.settings import Settings

if TYPE_CHECKING:
    from agent_memory.container import Container


def export_archive(settings: Settings) -> ExportArchive:
    """The export bucket when one is named (deployed), else ``<data_dir>/exports``."""
    if settings.export_bucket:
        from agent_memory.adapters.s3_exports import S3ExportArchive

        return S3ExportArchive(settings.export_bucket, settings.export_prefix, region=settings.aws_region)
    from agent_memory.adapters.local_exports import LocalExportArchive

    return LocalExportArchive(settings.data_dir / "exports", expiry_days=settings.export_expiry_days)


def export_service(root: Container) -> ExportService:
    return ExportService(
        root.store,
        export_archive(root.settings),
        JsonLinesExport(),
        root.job_queue,
        root.clock,
        url_ttl_s=root.settings.export_url_ttl_s,
    )

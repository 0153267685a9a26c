"""`ExportArchive` on the local disk: ``<data_dir>/exports/<tenant>/<id>.json`` (the job's state)
and ``<id>.jsonl`` (the file), the owner's alone, as everything in the data directory.

The file is written as ``<id>.jsonl.part`` and renamed when whole, so a download never reads half
an export; a checkpoint is the part's length once flushed to disk, and a resumed writer cuts the
part back to it before it appends. A state is replaced under an exclusive lock on the export
(``flock``) and only if it is still the one read (its tag is a hash of the bytes read), so two
runs of one export, in two processes, cannot both store theirs. Exports older than
``expiry_days`` are deleted when the tenant's exports are listed or a new one is made, as the
deployed bucket's lifecycle rule deletes them.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, BinaryIO

from agent_memory.errors import ConflictError
from agent_memory.governance.rules.export_jobs import EXPORT_ID_PATTERN, ExportState
from agent_memory.ports.export_store import ExportLocation
from agent_memory.private_files import PRIVATE_FILE, private_dir

#: Bytes written through before they are handed to the operating system.
BUFFER_BYTES = 1 << 20


class LocalExportArchive:
    """Export states and files under ``root`` (see the module docstring)."""

    def __init__(self, root: Path, expiry_days: int = 7) -> None:
        self.root = Path(root)
        self._expiry = timedelta(days=expiry_days)

    def _dir(self, tenant_id: str) -> Path:
        return private_dir(self.root / tenant_id)

    def _state_path(self, tenant_id: str, export_id: str) -> Path:
        _check_id(export_id)
        return self._dir(tenant_id) / f"{export_id}.json"

    def file_path(self, tenant_id: str, export_id: str) -> Path:
        _check_id(export_id)
        return self.root / tenant_id / f"{export_id}.jsonl"

    def create(self, state: ExportState) -> None:
        self._expire(state.tenant_id)
        path = self._state_path(state.tenant_id, state.id)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE)
        except FileExistsError:
            raise ConflictError("an export with this id exists") from None
        with os.fdopen(fd, "wb") as out:
            out.write(state.model_dump_json().encode("utf-8"))

    def read(self, tenant_id: str, export_id: str) -> tuple[ExportState, str] | None:
        if not re.fullmatch(EXPORT_ID_PATTERN, export_id):
            return None
        path = self.root / tenant_id / f"{export_id}.json"
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        state = ExportState.model_validate_json(raw)
        if state.tenant_id != tenant_id or state.id != export_id:
            return None
        return state, _tag(raw)

    def replace(self, state: ExportState, tag: str) -> str:
        path = self._state_path(state.tenant_id, state.id)
        raw = state.model_dump_json().encode("utf-8")
        with _locked(path.with_suffix(".lock")):
            try:
                current = path.read_bytes()
            except FileNotFoundError:
                raise ConflictError("the export is gone") from None
            if _tag(current) != tag:
                raise ConflictError("the export changed since it was read")
            partial = path.with_suffix(".json.tmp")
            fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
            with os.fdopen(fd, "wb") as out:
                out.write(raw)
            partial.replace(path)
        return _tag(raw)

    def recent(self, tenant_id: str, limit: int) -> list[ExportState]:
        self._expire(tenant_id)
        folder = self.root / tenant_id
        states = []
        for path in folder.glob("exp_*.json") if folder.is_dir() else ():
            found = self.read(tenant_id, path.stem)
            if found is not None:
                states.append(found[0])
        states.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return states[:limit]

    def writer(self, tenant_id: str, export_id: str, resume: dict[str, Any] | None) -> LocalExportWriter:
        final = self._dir(tenant_id) / f"{_check_id(export_id)}.jsonl"
        offset = int((resume or {}).get("offset", 0))
        return LocalExportWriter(final, offset if resume is not None else None)

    def location(self, tenant_id: str, export_id: str, ttl_s: int) -> ExportLocation | None:
        path = self.file_path(tenant_id, export_id)
        return ExportLocation(path=str(path)) if path.is_file() else None

    def _expire(self, tenant_id: str) -> None:
        """Delete the tenant's exports made more than ``expiry_days`` ago (their files too)."""
        folder = self.root / tenant_id
        if not folder.is_dir():
            return
        cutoff = (datetime.now(UTC) - self._expiry).timestamp()
        for path in folder.glob("exp_*.json"):
            try:
                if path.stat().st_mtime >= cutoff:
                    continue
            except FileNotFoundError:
                continue
            for suffix in (".jsonl", ".jsonl.part", ".lock", ".json"):
                path.with_suffix(suffix).unlink(missing_ok=True)


class LocalExportWriter:
    """One export file being written (`agent_memory.ports.export_store.ExportWriter`)."""

    def __init__(self, final: Path, offset: int | None) -> None:
        self._final = final
        self._part = final.with_suffix(".jsonl.part")
        if offset is None:
            fd = os.open(self._part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
        else:
            fd = os.open(self._part, os.O_WRONLY | os.O_CREAT, PRIVATE_FILE)
            os.ftruncate(fd, offset)  # what was written after the checkpoint is written again
            os.lseek(fd, offset, os.SEEK_SET)
        self._out: BinaryIO = os.fdopen(fd, "wb", buffering=BUFFER_BYTES)

    def write(self, data: bytes) -> None:
        self._out.write(data)

    def checkpoint(self) -> dict[str, Any] | None:
        self._out.flush()
        os.fsync(self._out.fileno())
        return {"offset": self._out.tell()}

    def finish(self) -> int:
        self._out.flush()
        os.fsync(self._out.fileno())
        size = self._out.tell()
        self._out.close()
        self._part.replace(self._final)
        return size

    def abort(self) -> None:
        if not self._out.closed:
            self._out.close()
        self._part.unlink(missing_ok=True)


def _check_id(export_id: str) -> str:
    """``export_id`` if it is one (the routes validate ids: anything else never names a path)."""
    if not re.fullmatch(EXPORT_ID_PATTERN, export_id):
        raise ValueError("not an export id")
    return export_id


def _tag(raw: bytes) -> str:
    return hashlib.sha256(raw).hexdigest()[:32]


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    fd = os.open(path, os.O_RDWR | os.O_CREAT, PRIVATE_FILE)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)

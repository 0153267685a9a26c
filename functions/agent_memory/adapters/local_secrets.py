"""Tenants' provider keys for the embedded runtime: one file per tenant that only its owner can read.

This is the local runtime's equivalent of Secrets Manager. There is no KMS on a laptop, so the key
is protected the way ``~/.ssh`` keys are: a ``0600`` file in a ``0700`` directory, encrypted at rest
only as far as the disk itself is. A file that group or others can read is refused rather than used
(as ssh refuses such a key): a key that may already have leaked must be set again, not trusted.

- The file is named by a digest of the tenant id, never the id itself, so no id (``../x``, ``a/b``,
  or two ids that differ only by case on a case-insensitive disk) can reach another file.
- It is written atomically (a ``0600`` temp file in the same directory, fsynced, then renamed over
  the old one), so a crash leaves the old key or the new one, never half of either, and the key is
  never in a file with looser permissions, even for a moment.
- Nothing here logs, and no error names a value: errors name the file's path only.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from agent_memory.adapters.secret_record import SecretRecordReads, decode_secret, encode_secret
from agent_memory.errors import ConfigurationError
from agent_memory.model.ids import digest
from agent_memory.tenancy.rules.tenant_settings import SecretInfo

_DIR_MODE = 0o700
_FILE_MODE = 0o600
#: Permission bits that let anyone but the owner in.
_NOT_OWNER = stat.S_IRWXG | stat.S_IRWXO


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LocalFileSecretStore(SecretRecordReads):
    """`SecretStore` on a directory of ``0600`` files, one per tenant (see the module docstring)."""

    def __init__(self, directory: Path, clock: Callable[[], datetime] | None = None) -> None:
        self.directory = Path(directory)
        self._clock = clock or _utc_now
        _private_directory(self.directory)

    def put_secret(self, tenant_id: str, value: str) -> SecretInfo:
        """Set or replace the tenant's key in one atomic rename."""
        info, record = encode_secret(value, self._clock())
        _write_atomically(self._path(tenant_id), record.encode("utf-8"))
        return info

    def delete_secret(self, tenant_id: str) -> bool:
        try:
            self._path(tenant_id).unlink()
        except FileNotFoundError:
            return False
        _fsync_directory(self.directory)
        return True

    def _path(self, tenant_id: str) -> Path:
        """The tenant's file: a digest of its id, so the id cannot choose where it is."""
        return self.directory / f"{digest(tenant_id)}.json"

    def _read(self, tenant_id: str) -> tuple[str, SecretInfo] | None:
        path = self._path(tenant_id)
        raw = _read_private_file(path)
        return None if raw is None else decode_secret(raw, f"the provider key file {path}")


def _private_directory(directory: Path) -> None:
    """Create ``directory`` as ``0700``, or take group and other access away from an existing one."""
    directory.mkdir(mode=_DIR_MODE, parents=True, exist_ok=True)
    if directory.stat().st_mode & _NOT_OWNER:
        directory.chmod(_DIR_MODE)


def _read_private_file(path: Path) -> bytes | None:
    """The file's bytes, or None when absent; `ConfigurationError` when anyone but its owner may
    read it. Permissions are checked on the opened descriptor, so a swap between check and read
    cannot slip a looser file in, and a symlink is not followed."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except FileNotFoundError:
        return None
    except OSError:
        raise ConfigurationError(f"cannot open the provider key file {path}") from None
    with os.fdopen(fd, "rb") as file:
        mode = os.fstat(file.fileno()).st_mode
        if not stat.S_ISREG(mode) or mode & _NOT_OWNER:
            raise ConfigurationError(
                f"refusing the provider key file {path}: it must be a regular file only its owner can "
                "read (chmod 600), and a key others could read should be replaced"
            )
        return file.read()


def _write_atomically(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a ``0600`` temp file in the same directory, fsynced, then
    renamed over it; the temp file is removed if anything fails before the rename."""
    temp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    fd = os.open(temp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | getattr(os, "O_NOFOLLOW", 0), _FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as file:
            os.fchmod(file.fileno(), _FILE_MODE)  # whatever the umask took away from the owner
            file.write(data)
            file.flush()
            os.fsync(file.fileno())
        temp.replace(path)  # os.replace: atomic on POSIX and Windows
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def _fsync_directory(directory: Path) -> None:
    """Make a rename or an unlink in ``directory`` durable (a no-op where directories cannot be
    opened, e.g. Windows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)

"""The serverless `MemoryStore`: each tenant's memory one SQLite file in S3, nothing billed idle.

Why this shape (docs/decisions.md, "The serverless store"): the embedded store already is the
whole contract (records, hybrid retrieval, audit, knowledge, retention, embedding spaces) in one
file, tested on every change; what a small team lacks in AWS is somewhere to keep that file
that costs nothing while nobody writes. S3 is that place, and its conditional writes make it safe
for several functions to share a file:

* **Reads** bring the local copy (in the function's ``/tmp``) up to date when the tenant's file
  moved (one HEAD, and a GET only then), and run on the local `SqliteMemoryStore`.
* **Writes** run on a fresh copy, close it (so the database is one self-contained file), and
  upload it with ``If-Match`` on the ETag it was read at. If another function stored the file
  in between, the upload fails, the new file is read and the write is done again on it: a write
  is never lost and never applied on top of a stale copy. FIFO groups (``tenant:agent:grain``)
  keep writers of one slice in order; writers of different slices of one tenant meet only here.
* **Counts** (access counts, searches, document hits) are best effort, as on every store: they
  are applied to the local copy at once, kept, and stored with the tenant's next write, or on
  their own once `ACTIVITY_S` old.

Which of the three a method is, the port says (`agent_memory.ports.effects`): each method of the
port is made from its declaration by that mark (`_serve`); only the directory's read across
tenants is written out here.

It suits what it is for: small tenants (a few writes a second at most: every write batch
uploads the tenant's file; benchmarks/cost_model.py). Large tenants belong on OpenSearch.
"""

from __future__ import annotations

import base64
import functools
import inspect
import json
import random
import threading
import time
import uuid
from collections import OrderedDict, abc, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, get_origin, get_type_hints

from agent_memory.adapters.s3_tenant_files import FileChangedError, S3TenantFiles
from agent_memory.adapters.sqlite.sqlite_store import SqliteMemoryStore
from agent_memory.errors import DependencyError, ValidationFailedError
from agent_memory.ports import AgentPage, AgentRef, MemoryStore, PeriodScan, StoredRecord
from agent_memory.ports.effects import effect_of

T = TypeVar("T")
#: Counts older than this are stored on their own, without waiting for a write.
ACTIVITY_S = 30.0
#: Tenants' copies kept open in one process (least recently used dropped first).
MAX_COPIES = 16
#: Attempts of a write whose upload keeps finding the file changed.
MAX_TRIES = 8
_Op = Callable[[SqliteMemoryStore], Any]


@dataclass
class _Slot:
    """One tenant's local copy: the file, the store open on it, and what it is a copy of."""

    path: Path
    lock: threading.RLock = field(default_factory=threading.RLock)
    store: SqliteMemoryStore | None = None
    etag: str | None = None
    #: The local copy is not the file ``etag`` names (a write was done on it and not stored).
    stale: bool = True
    checked_at: float = float("-inf")
    pending: list[_Op] = field(default_factory=list)
    pending_since: float | None = None


class S3SqliteStore:
    """`agent_memory.ports.MemoryStore` over the tenants' files (see the module docstring).

    ``fresh_s``: how long a read trusts its local copy without asking S3 (0: every read asks;
    a search then sees every write stored before it began). ``max_copies``: how many tenants'
    copies one process keeps in its ``/tmp`` (the least recently used is dropped).
    """

    def __init__(
        self,
        files: S3TenantFiles,
        cache_dir: Path,
        dimension: int,
        model_id: str,
        *,
        fresh_s: float = 0.0,
        activity_s: float = ACTIVITY_S,
        max_copies: int = MAX_COPIES,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.files = files
        self.dimension = dimension
        self.model_id = model_id
        self._dir = Path(cache_dir)
        self._dir.mkdir(parents=True, exist_ok=True)
        self._fresh_s = fresh_s
        self._activity_s = activity_s
        self._clock = clock
        self._slots: OrderedDict[str, _Slot] = OrderedDict()
        self._slots_lock = threading.Lock()
        self._max_copies = max_copies

    # -- the copy and the file ------------------------------------------------------------------

    def _slot(self, tenant_id: str) -> _Slot:
        with self._slots_lock:
            slot = self._slots.get(tenant_id)
            if slot is None:
                slot = self._slots[tenant_id] = _Slot(self._copy_path(tenant_id))
            self._slots.move_to_end(tenant_id)
            evicted: list[_Slot] = []
            while len(self._slots) > self._max_copies:
                oldest = next(iter(self._slots))
                if self._slots[oldest].pending:
                    break  # its counts wait for its next write; keep it a little longer
                evicted.append(self._slots.pop(oldest))
        for old in evicted:
            self._evict(old)
        return slot

    def _evict(self, slot: _Slot) -> None:
        """Close a copy no longer kept and free its disk: a function serving many tenants (the
        dispatcher, retention) must not fill its ``/tmp`` with every tenant's file."""
        with slot.lock:
            self._close(slot)
            for suffix in ("", "-wal", "-shm"):
                Path(f"{slot.path}{suffix}").unlink(missing_ok=True)

    def _copy_path(self, tenant_id: str) -> Path:
        """A new name for each copy: SQLite removes a database's ``-wal`` file *by name* when its
        last connection closes, so a copy must never take the name of one another store in this
        process may still have open (a closed function's, in the local runtime and the tests)."""
        return self._dir / f"{tenant_id}.{uuid.uuid4().hex[:12]}.db"

    def _open(self, slot: _Slot) -> SqliteMemoryStore:
        if slot.store is None:
            slot.store = SqliteMemoryStore(slot.path, self.dimension, self.model_id)
        return slot.store

    def _close(self, slot: _Slot) -> None:
        if slot.store is not None:
            slot.store.close()
            slot.store = None

    def _sync(self, tenant_id: str, slot: _Slot, *, ask: bool) -> SqliteMemoryStore:
        """The local store, brought to the tenant's stored file when it moved (or when the copy
        holds a write that was not stored), with the counts still pending applied again."""
        if not ask and not slot.stale and self._clock() - slot.checked_at < self._fresh_s:
            return self._open(slot)
        etag = self.files.etag(tenant_id)
        slot.checked_at = self._clock()
        if not slot.stale and etag == slot.etag:
            return self._open(slot)
        self._close(slot)
        for suffix in ("", "-wal", "-shm"):
            Path(f"{slot.path}{suffix}").unlink(missing_ok=True)
        slot.path = self._copy_path(tenant_id)
        slot.etag = None if etag is None else self.files.download(tenant_id, slot.path)
        slot.stale = False
        store = self._open(slot)
        for op in slot.pending:
            op(store)
        return store

    def _read(self, tenant_id: str, op: Callable[[SqliteMemoryStore], T]) -> T:
        slot = self._slot(tenant_id)
        with slot.lock:
            return op(self._sync(tenant_id, slot, ask=False))

    def _write(self, tenant_id: str, op: Callable[[SqliteMemoryStore], T]) -> T:
        """``op`` on the tenant's latest file, stored back only if nobody stored it meanwhile;
        otherwise read again and done again (module docstring)."""
        slot = self._slot(tenant_id)
        with slot.lock:
            for attempt in range(MAX_TRIES):
                store = self._sync(tenant_id, slot, ask=True)
                result = op(store)
                slot.stale = True  # until stored: the copy is no longer the file it was read from
                self._close(slot)  # one self-contained file, the counts written into it
                try:
                    slot.etag = self.files.upload(tenant_id, slot.path, slot.etag)
                except FileChangedError:
                    time.sleep(random.uniform(0, 0.05 * 2**attempt))
                    continue
                slot.stale = False
                slot.checked_at = self._clock()
                slot.pending.clear()
                slot.pending_since = None
                return result
        raise DependencyError(f"the tenant's store kept changing under a write ({MAX_TRIES} tries)")

    def _count(self, tenant_id: str, op: _Op) -> None:
        """A best-effort count: applied to the local copy now, stored with the next write. It asks
        S3 nothing when there is a copy (the read it counts just brought it up to date, and a
        copy that moved on since gets the count again from ``pending``)."""
        slot = self._slot(tenant_id)
        with slot.lock:
            local = slot.store if slot.store is not None and not slot.stale else None
            op(local if local is not None else self._sync(tenant_id, slot, ask=False))
            slot.pending.append(op)
            now = self._clock()
            slot.pending_since = slot.pending_since if slot.pending_since is not None else now
            if now - slot.pending_since < self._activity_s:
                return
        try:
            self._write(tenant_id, lambda store: None)
        except Exception:  # best effort by contract: kept for the next write
            slot.pending_since = self._clock()

    def close(self) -> None:
        """Store the counts still pending (best effort) and close every local copy."""
        for tenant_id, slot in list(self._slots.items()):
            if slot.pending:
                try:
                    self._write(tenant_id, lambda store: None)
                except Exception:
                    continue
            with slot.lock:
                self._close(slot)

    # -- the agent directory: the one read across tenants ----------------------------------------

    def agents_with_records(self, scan: PeriodScan) -> AgentPage:
        """One tenant's agents from its file; across tenants, tenant by tenant in key order (the
        cursor names the tenant and the cursor within it)."""
        if scan.tenant_id is not None:
            tenant = scan.tenant_id
            return self._read(tenant, lambda s: s.agents_with_records(scan))
        start_tenant, inner = _decode_scan_cursor(scan.cursor)
        agents: list[AgentRef] = []
        for tenant in sorted(self.files.tenants()):  # key order is not id order ('-' < '.')
            if start_tenant is not None and tenant < start_tenant:
                continue
            cursor = inner if tenant == start_tenant else None
            while len(agents) < scan.page_size:
                part = PeriodScan(
                    scan.grain, scan.start, scan.end, cursor, scan.page_size - len(agents), tenant_id=tenant
                )
                page = self._read(tenant, lambda s, p=part: s.agents_with_records(p))  # type: ignore[misc]
                agents.extend(page.agents)
                cursor = page.next_cursor
                if cursor is None:
                    break
            if len(agents) >= scan.page_size:
                return AgentPage(agents, _encode_scan_cursor(tenant, cursor) if cursor else _after(tenant))
        return AgentPage(agents, None)

    if TYPE_CHECKING:
        # The port's other methods are made from their declarations (`_serve`, below the class).
        def __getattr__(self, name: str) -> Any: ...


def _by_tenant(items: Iterable[T], tenant_of: Callable[[T], str]) -> dict[str, list[T]]:
    groups: dict[str, list[T]] = defaultdict(list)
    for item in items:
        groups[tenant_of(item)].append(item)
    return groups


def _encode_scan_cursor(tenant: str, inner: str | None) -> str:
    raw = json.dumps({"t": tenant, "c": inner}, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _after(tenant: str) -> str:
    """A cursor that starts after ``tenant`` (its page ended exactly at its last agent)."""
    return _encode_scan_cursor(tenant + "\x00", None)


def _decode_scan_cursor(cursor: str | None) -> tuple[str | None, str | None]:
    if not cursor:
        return None, None
    try:
        raw = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
        tenant, inner = raw["t"], raw["c"]
        if not isinstance(tenant, str) or not (inner is None or isinstance(inner, str)):
            raise TypeError
    except (ValueError, KeyError, TypeError):
        raise ValidationFailedError("invalid cursor") from None
    return tenant, inner


def _serve(name: str, declared: Callable[..., Any]) -> Callable[..., Any]:
    """The port's method ``declared`` as the S3 store runs it, by its effect (`ports.effects`): a
    read on the tenant's local copy, a write on its latest file and stored back, a count kept
    for the next write.

    The tenant is the ``tenant_id`` argument, or the one the first argument names (a query, a
    document, a record); a batch (a sequence first, as `put` and `append_audit` take) is written
    tenant by tenant. Lists are copied before the store sees them: a write may be done again on a
    newer file, and a count again on a newer copy, after the caller has moved on.
    """
    step = f"_{effect_of(declared)}"  # _read, _write or _count
    signature = inspect.signature(declared)
    first = list(signature.parameters)[1]
    by_id = "tenant_id" in signature.parameters
    batch = not by_id and get_origin(get_type_hints(declared)[first]) is abc.Sequence

    def served(self: S3SqliteStore, *args: Any, **kwargs: Any) -> Any:
        call = signature.bind(self, *args, **kwargs)
        call.apply_defaults()
        for key, value in call.arguments.items():
            if isinstance(value, list | Iterator):
                call.arguments[key] = list(value)
        if not batch:
            tenant = call.arguments["tenant_id"] if by_id else _tenant_of(call.arguments[first])
            return getattr(self, step)(tenant, _call(name, call))
        for tenant, group in _by_tenant(call.arguments[first], _tenant_of).items():
            call.arguments[first] = group
            getattr(self, step)(tenant, _call(name, call))
        return None

    return functools.update_wrapper(served, declared)


def _call(name: str, call: inspect.BoundArguments) -> _Op:
    """The local store's ``name`` with the arguments ``call`` holds now."""
    args, kwargs = call.args[1:], call.kwargs  # without the S3 store itself
    return lambda store: getattr(store, name)(*args, **kwargs)


def _tenant_of(value: Any) -> str:
    """The tenant a query, a document, an event or a stored record (its record) names."""
    owner = value.record if isinstance(value, StoredRecord) else value
    return str(owner.tenant_id)


def _serve_the_port(store: type, port: type) -> None:
    """Give ``store`` each method of ``port`` (and of the parts it is made of) it does not define."""
    for part in reversed(port.__mro__):
        for name, declared in vars(part).items():
            if inspect.isfunction(declared) and not name.startswith("_") and name not in vars(store):
                setattr(store, name, _serve(name, declared))


_serve_the_port(S3SqliteStore, MemoryStore)

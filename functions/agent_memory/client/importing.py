"""Bring history in: conversations and memories from a file, written through the HTTP API.

    from agent_memory.client import MemoryClient
    from agent_memory.client.importing import Importer, read_source

    with MemoryClient(url, api_key) as memory:
        summary = Importer(memory, state_path=Path("history.import-state.json")).run(
            read_source(Path("history.jsonl"), "jsonl", agent_id="support-bot")
        )
        print(summary.as_dict())

Three sources are read (`FORMATS`):

- ``jsonl``: one write item a line (the fields of ``POST .../memories``), with an optional
  ``agent_id``; a line with a ``role`` and no ``kind`` is a conversation turn.
- ``locomo``: LoCoMo-style conversation files: a list of samples, each with its sessions of turns
  and each session's date; one agent per sample (``locomo-<sample_id>``), one conversation id per
  session, each turn dated by its session (plus its index in seconds, so turns keep their order).
- ``mem0``: a mem0 export (``{"results": [...]}``, a list, or JSON Lines): each memory with its
  user, agent, metadata, categories (as tags) and creation time.

Why an importer and not a loop of writes: a history is loaded once, is large, and is interrupted.
Each batch is sent with an ``Idempotency-Key`` derived from the source (its hash and the batch's
position), and every item is dated by the source (or, when the source gives no time, by when the
import first started, kept in the state file), so a batch re-sent after a crash is the same
request and the service answers it again instead of writing it twice. The state file records how
many items are done; a resumed run skips them. Items are validated before they are sent, so one
bad line is refused with its reason and the rest of its batch is written.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from agent_memory.client.api_errors import BadRequestError, ConflictError
from agent_memory.client.client import MemoryClient
from agent_memory.contract.v1 import WriteItem
from agent_memory.model.ids import digest
from agent_memory.model.limits import MAX_ITEMS_PER_REQUEST

Format = Literal["jsonl", "locomo", "mem0"]
FORMATS: tuple[Format, ...] = ("jsonl", "locomo", "mem0")

#: How a LoCoMo session names its start: ``"1:56 pm on 8 May, 2023"`` (no zone: read as UTC).
LOCOMO_DATE_FORMAT = "%I:%M %p on %d %B, %Y"
_LOCOMO_SESSION = re.compile(r"^session_(\d+)$")
_AGENT_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")
#: Seconds to wait before asking again while the service still runs the first copy of a batch.
IN_PROGRESS_WAIT_S = 0.5
IN_PROGRESS_TRIES = 20


class ImportSourceError(ValueError):
    """The source cannot be read as the format it was given as (the whole import is refused)."""


@dataclass(frozen=True, slots=True)
class SourceItem:
    """One memory read from a source: the agent it belongs to, its write item (the API's body
    fields), and where it was in the source (to name it when it is refused)."""

    agent_id: str
    item: Mapping[str, Any]
    ref: str


@dataclass(frozen=True, slots=True)
class Refusal:
    ref: str
    reason: str


@dataclass(slots=True)
class ImportSummary:
    """What an import did. ``written``: items the service accepted; ``merged``: accepted items
    whose id repeats one accepted earlier in the same run (the same memory said twice, stored
    once); ``skipped``: items a resumed run found already done; ``refused``: items not written,
    each with its reason."""

    read: int = 0
    written: int = 0
    merged: int = 0
    skipped: int = 0
    batches: int = 0
    refused: list[Refusal] = field(default_factory=list)
    dry_run: bool = False

    def as_dict(self, max_reasons: int = 20) -> dict[str, Any]:
        return {
            "read": self.read,
            "written": self.written,
            "merged": self.merged,
            "skipped": self.skipped,
            "refused": len(self.refused),
            "batches": self.batches,
            "dry_run": self.dry_run,
            "refusals": [{"ref": r.ref, "reason": r.reason} for r in self.refused[:max_reasons]],
        }


# --- reading sources ------------------------------------------------------------------------


def detect_format(path: Path) -> Format:
    """The format a file is in, from its first non-blank character and keys."""
    if path.suffix == ".jsonl":
        return "jsonl"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return "jsonl"
    if isinstance(data, dict) and ("results" in data or "memories" in data):
        return "mem0"
    if isinstance(data, list) and data and isinstance(data[0], dict):
        if "conversation" in data[0]:
            return "locomo"
        if "memory" in data[0]:
            return "mem0"
    raise ImportSourceError(f"{path}: not a format this importer reads ({', '.join(FORMATS)})")


def read_source(path: Path, fmt: Format | None = None, agent_id: str | None = None) -> list[SourceItem]:
    """Every memory of ``path`` in source order. ``agent_id`` is the agent for items that name
    none (and, for LoCoMo and mem0, replaces the one the source names)."""
    chosen = fmt or detect_format(path)
    readers: dict[Format, Callable[[Path, str | None], Iterator[SourceItem]]] = {
        "jsonl": _read_jsonl,
        "locomo": _read_locomo,
        "mem0": _read_mem0,
    }
    if chosen not in readers:
        raise ImportSourceError(f"unknown format {chosen!r}: one of {', '.join(FORMATS)}")
    return list(readers[chosen](path, agent_id))


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            if line.strip():
                try:
                    yield number, json.loads(line)
                except json.JSONDecodeError as exc:
                    yield number, exc


def _read_jsonl(path: Path, agent_id: str | None) -> Iterator[SourceItem]:
    for number, row in _json_lines(path):
        ref = f"line {number}"
        if not isinstance(row, dict):
            reason = f"not JSON: {row}" if isinstance(row, Exception) else "not a JSON object"
            yield SourceItem("", {"__invalid__": reason}, ref)
            continue
        item = dict(row)
        agent = item.pop("agent_id", None) or agent_id
        if item.get("role") is not None and item.get("kind") is None:
            item["kind"] = "conversation"
        yield SourceItem(str(agent or ""), item, ref)


def safe_agent_id(name: str) -> str:
    """``name`` made to fit the API's agent id pattern (letters, digits, ``._-``, 128 at most)."""
    return _AGENT_UNSAFE.sub("-", name)[:128]


def _read_locomo(path: Path, agent_id: str | None) -> Iterator[SourceItem]:
    try:
        samples = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ImportSourceError(f"{path}: not JSON: {exc}") from exc
    if not isinstance(samples, list):
        raise ImportSourceError(f"{path}: a LoCoMo file is a list of samples")
    for sample in samples:
        sample_id = str(sample.get("sample_id", ""))
        conversation = sample.get("conversation") or {}
        agent = agent_id or safe_agent_id(f"locomo-{sample_id}")
        numbers = sorted(
            int(m[1]) for key in conversation if (m := _LOCOMO_SESSION.match(key)) and conversation[key]
        )
        for n in numbers:
            when = " ".join(str(conversation.get(f"session_{n}_date_time", "")).split())
            try:
                started = datetime.strptime(when, LOCOMO_DATE_FORMAT).replace(tzinfo=UTC)
            except ValueError as exc:
                raise ImportSourceError(f"{path}: sample {sample_id} session {n}: date {when!r}") from exc
            for i, turn in enumerate(conversation[f"session_{n}"]):
                text = str(turn.get("text") or "").strip()
                caption = str(turn.get("blip_caption") or "").strip()
                if caption:  # a shared photo is described by its caption
                    text = f"{text} [shared a photo: {caption}]".strip()
                dia_id = str(turn.get("dia_id", f"D{n}:{i + 1}"))
                item: dict[str, Any] = {
                    "content": text,
                    "role": "user",
                    "kind": "conversation",
                    "occurred_at": _iso(started + timedelta(seconds=i)),
                    "conversation_id": safe_agent_id(f"{sample_id}-s{n}"),
                    "source": {"platform": "locomo", "message_id": dia_id},
                }
                speaker = str(turn.get("speaker") or "").strip()
                if speaker:
                    item["speaker"] = speaker
                yield SourceItem(agent, item, f"{sample_id} {dia_id}")


def _mem0_rows(path: Path) -> Iterator[tuple[str, Any]]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        yield from ((f"line {n}", row) for n, row in _json_lines(path))
        return
    if isinstance(data, dict):
        data = data.get("results", data.get("memories"))
    if not isinstance(data, list):
        raise ImportSourceError(f"{path}: a mem0 export is a list of memories or {{'results': [...]}}")
    yield from ((f"memory {n}", row) for n, row in enumerate(data, start=1))


def _read_mem0(path: Path, agent_id: str | None) -> Iterator[SourceItem]:
    for position, row in _mem0_rows(path):
        if not isinstance(row, dict):
            yield SourceItem("", {"__invalid__": "not a JSON object"}, position)
            continue
        mem0_id = row.get("id")
        ref = f"mem0 {mem0_id}" if mem0_id else position
        metadata = dict(row.get("metadata") or {})
        if mem0_id:
            metadata.setdefault("mem0_id", str(mem0_id))
        item: dict[str, Any] = {"content": row.get("memory") or row.get("text") or row.get("content") or ""}
        created = row.get("created_at") or row.get("updated_at")
        if created:
            item["occurred_at"] = _iso(_parse_instant(str(created)))
        if row.get("user_id"):
            item["user_id"] = str(row["user_id"])
        if metadata:
            item["metadata"] = metadata
        categories = row.get("categories") or []
        if categories:
            item["tags"] = [str(c) for c in categories]
        if mem0_id:
            item["source"] = {"platform": "mem0", "message_id": str(mem0_id)[:256]}
        agent = agent_id or safe_agent_id(str(row.get("agent_id") or row.get("run_id") or ""))
        yield SourceItem(agent, item, ref)


def _parse_instant(text: str) -> datetime:
    """An ISO 8601 instant; one without a zone (mem0 writes some so) is read as UTC."""
    parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _iso(instant: datetime) -> str:
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


def source_fingerprint(path: Path) -> str:
    """The source file's SHA-256: a resumed import must read the same bytes."""
    h = hashlib.sha256()
    with path.open("rb") as data:
        for chunk in iter(lambda: data.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- writing ---------------------------------------------------------------------------------


@dataclass(slots=True)
class _State:
    """What survives an interruption: which source, when it started, how far it got, and the
    counts so far (the state file, rewritten atomically after each batch)."""

    source: str
    started_at: str
    batch_size: int
    done: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    refused: list[dict[str, str]] = field(default_factory=list)

    @classmethod
    def load(cls, path: Path | None, source: str, batch_size: int, now: datetime) -> _State:
        if path is not None and path.exists():
            data = json.loads(path.read_text(encoding="utf-8"))
            if data.get("source") != source:
                raise ImportSourceError(
                    f"{path} records an import of another source; remove it to start over"
                )
            return cls(**data)
        return cls(source=source, started_at=_iso(now), batch_size=batch_size)

    def save(self, path: Path | None) -> None:
        if path is None:
            return
        scratch = path.with_name(path.name + ".tmp")
        scratch.write_text(
            json.dumps(
                {
                    "source": self.source,
                    "started_at": self.started_at,
                    "batch_size": self.batch_size,
                    "done": self.done,
                    "counts": self.counts,
                    "refused": self.refused,
                }
            ),
            encoding="utf-8",
        )
        scratch.replace(path)


Progress = Callable[[int, int], None]


class Importer:
    """Writes a source's items in batches of one agent each, resumably (the module docstring)."""

    def __init__(
        self,
        client: MemoryClient,
        *,
        batch_size: int = MAX_ITEMS_PER_REQUEST,
        state_path: Path | None = None,
        on_progress: Progress | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        if not 1 <= batch_size <= MAX_ITEMS_PER_REQUEST:
            raise ValueError(f"batch_size must be 1..{MAX_ITEMS_PER_REQUEST}")
        self._client = client
        self._batch_size = batch_size
        self._state_path = state_path
        self._on_progress = on_progress or (lambda done, total: None)
        self._clock = clock
        self._sleep = sleep

    def run(self, items: Sequence[SourceItem], *, source: str, dry_run: bool = False) -> ImportSummary:
        """Import ``items`` (read from the source whose fingerprint is ``source``)."""
        state = _State.load(None if dry_run else self._state_path, source, self._batch_size, self._clock())
        summary = ImportSummary(
            read=len(items),
            written=state.counts.get("written", 0),
            merged=state.counts.get("merged", 0),
            batches=state.counts.get("batches", 0),
            refused=[Refusal(**r) for r in state.refused],
            skipped=state.done,
            dry_run=dry_run,
        )
        default_time = state.started_at
        if not dry_run:  # before the first request: a resumed run must date undated items alike
            state.save(self._state_path)
        seen: set[str] = set()
        done = state.done
        self._on_progress(done, len(items))
        for start, batch in _batches(items, state.batch_size, skip=done):
            valid: list[tuple[SourceItem, WriteItem]] = []
            for entry in batch:
                checked = _validated(entry, default_time)
                if isinstance(checked, Refusal):
                    summary.refused.append(checked)
                else:
                    valid.append((entry, checked))
            if valid and not dry_run:
                self._send(valid, key=digest(source, str(start), length=32), summary=summary, seen=seen)
            done = start + len(batch)
            if not dry_run:
                state.done = done
                state.counts = {
                    "written": summary.written,
                    "merged": summary.merged,
                    "batches": summary.batches,
                }
                state.refused = [{"ref": r.ref, "reason": r.reason} for r in summary.refused]
                state.save(self._state_path)
            self._on_progress(done, len(items))
        return summary

    def _send(
        self, valid: list[tuple[SourceItem, WriteItem]], *, key: str, summary: ImportSummary, seen: set[str]
    ) -> None:
        agent = valid[0][0].agent_id
        try:
            accepted = self._write(agent, [item for _, item in valid], key)
        except BadRequestError as exc:
            if len(valid) == 1:
                summary.refused.append(Refusal(valid[0][0].ref, exc.message))
                return
            # One item the service refused sinks its request: send them one by one to name it.
            for i, one in enumerate(valid):
                self._send([one], key=digest(key, str(i), length=32), summary=summary, seen=seen)
            return
        summary.batches += 1
        for memory_id in accepted:
            if memory_id in seen:
                summary.merged += 1
            else:
                seen.add(memory_id)
                summary.written += 1

    def _write(self, agent: str, items: list[WriteItem], key: str) -> list[str]:
        for _ in range(IN_PROGRESS_TRIES):
            try:
                response = self._client.write(agent, items, idempotency_key=f"import-{key}")
                return [a.id for a in response.accepted]
            except ConflictError as exc:
                if exc.code != "idempotency_in_progress":
                    raise
                self._sleep(IN_PROGRESS_WAIT_S)
        waited = IN_PROGRESS_TRIES * IN_PROGRESS_WAIT_S
        raise TimeoutError(f"the service kept running batch {key} for {waited} s")


def _batches(items: Sequence[SourceItem], size: int, skip: int) -> Iterable[tuple[int, list[SourceItem]]]:
    """Consecutive runs of one agent's items, ``size`` at most, those starting at ``skip`` or
    later; the boundaries depend only on the source and ``size``, so a resumed run cuts the same
    batches and ``skip`` (a count of finished batches' items) is always one of them."""
    start = 0
    while start < len(items):
        end = start + 1
        while end < len(items) and end - start < size and items[end].agent_id == items[start].agent_id:
            end += 1
        if start >= skip:
            yield start, list(items[start:end])
        start = end


def _validated(entry: SourceItem, default_time: str) -> WriteItem | Refusal:
    if "__invalid__" in entry.item:
        return Refusal(entry.ref, str(entry.item["__invalid__"]))
    if not entry.agent_id:
        return Refusal(entry.ref, "no agent: the source names none and no agent id was given")
    body = dict(entry.item)
    body.setdefault("occurred_at", default_time)
    try:
        return WriteItem.model_validate(body)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ())) or "item"
        return Refusal(entry.ref, f"{where}: {first.get('msg', 'invalid')}")

"""`agent-memory knowledge`: publish a folder of documents to the tenant's shared knowledge, list
them, delete one, through the HTTP API of a running server (the local runtime or a stack).

``knowledge import DIR`` puts every ``*.md`` and ``*.markdown`` (markdown) and ``*.txt`` (text)
file under ``DIR``, recursively, hidden files and folders left out:

* the document id is the file's path, slugified: ``runbooks/failover.md`` is ``runbooks.failover``;
* the title is the first level-1 heading of a markdown file, else the file's name;
* the version is a hash of what is put (text, title, format, path, tags) unless ``--version``
  names one, so importing an unchanged folder again puts nothing new (each file ``unchanged``)
  and a changed file is a new version, never a 409;
* ``source_uri`` is the file's path under ``DIR``, so a citation can name the file.

One progress line a file (``[3/12] runbooks.failover: accepted (14 passages)``), a summary, and
the failures on stderr; exit 1 when any file failed. ``--wait`` polls until every accepted
document is stored (searchable).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import sys
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Any

from pydantic import TypeAdapter, ValidationError

from agent_memory.client import (
    ApiError,
    AuthenticationError,
    ConflictError,
    MemoryClient,
    PermissionDeniedError,
    TransportError,
)
from agent_memory.contract.v1_knowledge import DocumentPutResponse
from agent_memory.knowledge.rules.passages import MAX_HEADING_CHARS, DocumentFormat, DocumentVersion
from agent_memory.local.api_connection import DEFAULT_API_URL

#: File suffixes imported as documents, and the format each is put with.
FORMATS: dict[str, DocumentFormat] = {".md": "markdown", ".markdown": "markdown", ".txt": "text"}
MAX_DOC_ID_CHARS = 128
#: A level-1 ATX heading, spelt as the passage splitter reads headings (`knowledge.rules.passages`).
_H1 = re.compile(r"^#[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^(```|~~~)")
_NOT_IN_ID = re.compile(r"[^A-Za-z0-9._-]+")
#: Errors after which every other file would fail the same way: the import stops at the first.
_FATAL = (AuthenticationError, PermissionDeniedError, TransportError)


def knowledge_client(args: argparse.Namespace, **overrides: Any) -> MemoryClient:
    """The client for ``--url`` and ``--api-key`` (else ``AGENT_MEMORY_URL`` and
    ``AGENT_MEMORY_API_KEY``, the names `agent-memory mcp` reads): documents are put and deleted
    through the API, never in a data directory, so one command publishes to the local runtime
    and to a deployed stack alike. ``overrides`` reach `MemoryClient` (a test's transport)."""
    key = args.api_key or os.environ.get("AGENT_MEMORY_API_KEY")
    if not key:
        raise ValueError(
            "no API key: pass --api-key or set AGENT_MEMORY_API_KEY (putting and deleting documents "
            "needs a key with the knowledge or admin scope)"
        )
    url = args.url or os.environ.get("AGENT_MEMORY_URL") or DEFAULT_API_URL
    return MemoryClient(url, key, timeout_s=args.timeout or 10.0, **overrides)


# --- naming the files --------------------------------------------------------------------------------


def document_id(relative: PurePosixPath) -> str:
    """A document id from a file's path under the imported folder, the same on every import:
    ``runbooks/failover.md`` is ``runbooks.failover``. Folders become dots, what the id pattern
    does not allow becomes ``-`` (accents dropped first: ``café`` is ``cafe``), and a path longer
    than an id keeps its start and ends in a hash of the whole, so two long paths stay apart."""
    raw = ".".join(relative.with_suffix("").parts)
    ascii_only = unicodedata.normalize("NFKD", raw).encode("ascii", "ignore").decode()
    slug = _NOT_IN_ID.sub("-", ascii_only)
    slug = re.sub(r"-*\.-*", ".", slug)  # "a b/c" is "a-b.c", not "a-b-.c"
    slug = re.sub(r"([._-])[._-]+", r"\1", slug).strip("._-")
    digest = hashlib.sha256(str(relative).encode()).hexdigest()[:10]
    if not slug:
        return f"doc-{digest}"
    if len(slug) > MAX_DOC_ID_CHARS:
        slug = f"{slug[: MAX_DOC_ID_CHARS - len(digest) - 1].rstrip('._-')}-{digest}"
    return slug


def document_title(text: str, fmt: DocumentFormat, fallback: str) -> str:
    """The first level-1 heading of a markdown document (outside fenced code), spaced and cut as
    the passage splitter keeps headings, so a top heading that repeats the title is not cited
    twice (``ADR-12 > ADR-12 > Consequences``); else ``fallback``, the file's name."""
    if fmt == "markdown":
        fenced = False
        for line in text.splitlines():
            if _FENCE.match(line):
                fenced = not fenced
            elif not fenced and (m := _H1.match(line)):
                return " ".join(m.group(1).split())[:MAX_HEADING_CHARS]
    return fallback


def content_version(*parts: str) -> str:
    """A version named by what is put: an unchanged file is the same version with the same
    content (``unchanged``), and any change (text, title, tags) is a new version rather than a
    409 for one version with two contents."""
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:12]


@dataclass(frozen=True, slots=True)
class SourceFile:
    """One file to import: where it is, the id it takes, and its text or why there is none."""

    relative: PurePosixPath
    doc_id: str
    format: DocumentFormat
    text: str | None
    problem: str | None = None


def _files(root: Path) -> list[Path]:
    """The importable files under ``root``, in the order of their paths (so the progress lines
    of two imports line up); hidden files and folders (``.git``) are left out, and links to
    folders are not followed (no loops, nothing from outside)."""
    found = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        found += [
            Path(folder) / n for n in files if not n.startswith(".") and Path(n).suffix.lower() in FORMATS
        ]
    return sorted(found, key=lambda path: path.relative_to(root).as_posix())


def read_sources(root: Path) -> list[SourceFile]:
    """Every importable file, read as UTF-8. Two files that would take one id are both refused:
    which one is meant cannot be guessed, and one would silently replace the other."""
    sources = []
    for path in _files(root):
        relative = PurePosixPath(path.relative_to(root).as_posix())
        fmt = FORMATS[path.suffix.lower()]
        try:
            sources.append(SourceFile(relative, document_id(relative), fmt, path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError) as exc:
            problem = f"cannot be read as UTF-8 text ({exc})"
            sources.append(SourceFile(relative, document_id(relative), fmt, None, problem))
    paths: dict[str, list[str]] = {}
    for source in sources:
        paths.setdefault(source.doc_id, []).append(str(source.relative))

    def refused(source: SourceFile) -> SourceFile:
        others = ", ".join(p for p in paths[source.doc_id] if p != str(source.relative))
        return replace(source, text=None, problem=f"takes the id of {others} too")

    return [s if len(paths[s.doc_id]) == 1 else refused(s) for s in sources]


# --- import -------------------------------------------------------------------------------------------


def _failure(exc: ApiError | ValidationError) -> str:
    """Why one file failed, in a line: the contract's complaint, or the service's."""
    if isinstance(exc, ValidationError):
        return "; ".join(f"{'.'.join(map(str, e['loc'])) or 'document'}: {e['msg']}" for e in exc.errors())
    if isinstance(exc, ConflictError):
        return f"{exc.message} (409: give the new text a new --version, or leave --version out)"
    return f"{exc.status} {exc.code}: {exc.message}"


@dataclass
class ImportRun:
    """One import: the files, what the service said of each, and the progress lines."""

    client: MemoryClient
    sources: list[SourceFile]
    tags: list[str]
    version: str | None
    counts: dict[str, int] = field(default_factory=lambda: {"accepted": 0, "unchanged": 0, "skipped": 0})
    failed: list[tuple[SourceFile, str]] = field(default_factory=list)
    #: doc_id -> the version accepted for it (what --wait waits for).
    accepted: dict[str, str] = field(default_factory=dict)

    def put(self, source: SourceFile, text: str) -> DocumentPutResponse:
        title = document_title(text, source.format, source.relative.stem)
        uri = str(source.relative)
        version = self.version or content_version(text, title, source.format, uri, *self.tags)
        return self.client.put_document(
            source.doc_id, version=version, title=title, text=text, format=source.format, source_uri=uri,
            tags=self.tags,
        )  # fmt: skip

    def run(self) -> int:
        """Put each file in order, a line each; stop at the first error every file would meet."""
        width = len(str(len(self.sources)))
        for n, source in enumerate(self.sources, 1):
            line = f"[{n:>{width}}/{len(self.sources)}] {source.doc_id}"
            if source.text is None:
                self.failed.append((source, source.problem or "unreadable"))
                print(f"{line}: failed: {source.problem}", flush=True)
            elif not source.text.strip():
                self.counts["skipped"] += 1
                print(f"{line}: skipped (no text)", flush=True)
            else:
                try:
                    put = self.put(source, source.text)
                except _FATAL as exc:
                    print(f"{line}: failed", flush=True)
                    reason = exc.message if isinstance(exc, ApiError) else str(exc)
                    print(f"error: {reason}; {len(self.sources) - n} file(s) not tried", file=sys.stderr)
                    return 1
                except (ApiError, ValidationError) as exc:
                    self.failed.append((source, _failure(exc)))
                    print(f"{line}: failed: {self.failed[-1][1]}", flush=True)
                    continue
                self.counts[put.status] += 1
                if put.status == "accepted":
                    self.accepted[source.doc_id] = put.version
                print(
                    f"{line}: {put.status} ({put.passages} passage{'' if put.passages == 1 else 's'})",
                    flush=True,
                )
        return 0

    def summary(self) -> None:
        counts = self.counts
        line = f"{len(self.sources)} file(s): {counts['accepted']} accepted, {counts['unchanged']} unchanged"
        line += f", {counts['skipped']} skipped" if counts["skipped"] else ""
        print(f"{line}, {len(self.failed)} failed")
        for source, problem in self.failed:
            print(f"failed: {source.relative} ({source.doc_id}): {problem}", file=sys.stderr)

    def wait(self, timeout_s: float) -> int:
        """Poll until every accepted document's stored version is the one put."""
        if not self.accepted:
            return 0
        try:
            self.client.wait_until_documents_stored(self.accepted, timeout_s=timeout_s)
        except (TimeoutError, ApiError, TransportError) as exc:
            print(f"error: waiting for the accepted documents: {exc}", file=sys.stderr)
            return 1
        print(f"stored: {len(self.accepted)} document(s) searchable")
        return 0


def run_import(
    args: argparse.Namespace, root: Path, tags: Iterable[str], version: str | None, wait_s: float | None
) -> int:
    """``knowledge import``: 2 for a wrong invocation (no folder, no key, a bad --version), 1 when
    any file failed (or waiting for them did), else 0."""
    if not root.is_dir():
        print(f"error: {root} is not a directory", file=sys.stderr)
        return 2
    if version is not None:
        try:
            TypeAdapter(DocumentVersion).validate_python(version)
        except ValidationError:
            print(
                f"error: --version {version!r} is not a version (letters, digits, . _ : + -)", file=sys.stderr
            )
            return 2
    try:
        client = knowledge_client(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    sources = read_sources(root)
    if not sources:
        print(f"error: no {', '.join('*' + s for s in FORMATS)} file under {root}", file=sys.stderr)
        return 1
    run = ImportRun(client, sources, list(dict.fromkeys(tags)), version)
    with client:
        if run.run():
            return 1
        run.summary()
        waited = run.wait(wait_s) if wait_s is not None else 0
    return 1 if run.failed or waited else 0


# --- list and delete ----------------------------------------------------------------------------------


def run_call(args: argparse.Namespace, call: Callable[[MemoryClient], int]) -> int:
    """One call against the API; no key is 2, a refusal or no answer a line on stderr and 1."""
    try:
        client = knowledge_client(args)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    with client:
        try:
            return call(client)
        except ApiError as exc:
            print(f"error: {exc.status} {exc.code}: {exc.message}", file=sys.stderr)
        except TransportError as exc:
            print(f"error: {exc}", file=sys.stderr)
    return 1


def list_documents(client: MemoryClient) -> int:
    """One JSON line a document, without its text (as `keys list` prints keys), then a count."""
    total = pending = 0
    for page in client.document_pages(limit=100):
        pending = page.pending
        for document in page.documents:
            total += 1
            print(document.model_dump_json(exclude={"text"}))
    print(f"{total} document(s); {pending} put(s) still queued", file=sys.stderr)
    return 0


def delete_document(client: MemoryClient, doc_id: str) -> int:
    deleted = client.delete_document(doc_id)
    if deleted.passages_removed:
        print(f"deleted {deleted.doc_id}: {deleted.passages_removed} passage(s) gone from search")
    else:
        print(f"deleted {deleted.doc_id}: nothing was stored (a put of it still queued is dropped)")
    return 0

"""`KnowledgeCalls`: the client's calls on the tenant's shared knowledge (its documents).

Put once, found by every agent of the tenant: `MemoryClient` inherits these, so
``memory.put_document(...)`` is the same call as ever; they are apart because they are a
capability of their own (the knowledge routes), with their own paths and waits.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from datetime import date

from agent_memory.client.api_errors import NotFoundError
from agent_memory.client.connection import Connection
from agent_memory.contract.v1_knowledge import (
    DocumentBody,
    DocumentDeleteResponse,
    DocumentOut,
    DocumentPutResponse,
    DocumentsResponse,
    PassagesResponse,
)
from agent_memory.knowledge.rules.passages import DocumentFormat


class KnowledgeCalls(Connection):
    """One method per knowledge route (``/v1/knowledge/documents``)."""

    def put_document(
        self,
        doc_id: str,
        *,
        version: str,
        title: str,
        text: str,
        format: DocumentFormat = "markdown",
        source_uri: str | None = None,
        tags: Iterable[str] = (),
        valid_from: date | str | None = None,
        valid_until: date | str | None = None,
    ) -> DocumentPutResponse:
        """Publish one version of a document to the tenant's shared knowledge (``knowledge`` or
        ``admin`` scope). ``status`` is ``accepted`` when queued (searchable within seconds) and
        ``unchanged`` when this version with this content is stored already, so re-publishing a
        whole folder costs nothing for what did not change. The same version with other content
        is a `ConflictError` (409): a version names one text, so give the new text a new version."""
        body = DocumentBody.model_validate(
            {
                "version": version,
                "title": title,
                "text": text,
                "format": format,
                "source_uri": source_uri,
                "tags": list(tags),
                "valid_from": valid_from,
                "valid_until": valid_until,
            }
        )
        return self._send("PUT", self._document_path(doc_id), DocumentPutResponse, body)

    def list_documents(self, cursor: str | None = None, limit: int = 50) -> DocumentsResponse:
        """One page of the tenant's documents by id (without their text), and how many puts are
        still queued (``pending``); follow ``next_cursor`` for the next page."""
        query = {"cursor": cursor, "limit": limit}
        return self._send("GET", "/v1/knowledge/documents", DocumentsResponse, query=query)

    def document_pages(self, *, limit: int = 50) -> Iterator[DocumentsResponse]:
        """Every page of documents, lazily."""
        return self._follow(lambda cursor: self.list_documents(cursor, limit))

    def iter_documents(self, *, page_size: int = 50) -> Iterator[DocumentOut]:
        for page in self.document_pages(limit=page_size):
            yield from page.documents

    def get_document(self, doc_id: str) -> DocumentOut:
        """One document, its whole text included; a `NotFoundError` until its first put is stored."""
        return self._send("GET", self._document_path(doc_id), DocumentOut)

    def document_passages(self, doc_id: str) -> PassagesResponse:
        """The passages search finds the document by, in document order, with their heading
        paths and their offsets in its text."""
        return self._send("GET", self._document_path(doc_id, "passages"), PassagesResponse)

    def delete_document(self, doc_id: str) -> DocumentDeleteResponse:
        """Delete the document and every passage of it, at once (``knowledge`` or ``admin``
        scope); ``passages_removed`` is 0 when nothing was stored."""
        return self._send("DELETE", self._document_path(doc_id), DocumentDeleteResponse)

    def wait_until_documents_stored(
        self, versions: Mapping[str, str], timeout_s: float = 30.0, interval_s: float = 0.2
    ) -> dict[str, DocumentOut]:
        """Poll each document (``{doc_id: version}``) until its stored version is the one given
        (puts are asynchronous), and return them. Raises `TimeoutError` at the deadline, naming
        the documents still waiting."""
        deadline = time.monotonic() + timeout_s
        stored: dict[str, DocumentOut] = {}
        while True:
            for doc_id, version in versions.items():
                if doc_id in stored:
                    continue
                try:
                    document = self.get_document(doc_id)
                except NotFoundError:  # its first version is still queued
                    continue
                if document.version == version:
                    stored[doc_id] = document
            waiting = [d for d in versions if d not in stored]
            if not waiting:
                return stored
            if time.monotonic() >= deadline:
                raise TimeoutError(
                    f"{len(waiting)} document(s) not stored after {timeout_s} s: {', '.join(waiting)}"
                )
            self._sleep(interval_s)

"""Routes of the tenant's shared knowledge: put, list, read and delete documents.

Reading needs the ``read`` scope, and any key of the tenant may read, one bound to a single agent
too (knowledge is the tenant's, not an agent's). Putting and deleting need the ``knowledge`` (or
``admin``) scope: agents read shared knowledge, they never write it.
"""

from __future__ import annotations

from typing import Annotated

from aws_lambda_powertools.event_handler import Response
from aws_lambda_powertools.event_handler.api_gateway import Router
from aws_lambda_powertools.event_handler.openapi.params import Path

from agent_memory import container
from agent_memory.contract.v1 import ErrorResponse
from agent_memory.contract.v1_knowledge import (
    DocumentBody,
    DocumentDeleteResponse,
    DocumentOut,
    DocumentPutResponse,
    DocumentsResponse,
    PassageOut,
    PassagesResponse,
)
from agent_memory.handlers.route_support import CursorQuery, LimitQuery, caller_of, json_response
from agent_memory.knowledge.rules.passages import DocumentId, PutStatus

router = Router()

DocumentPath = Annotated[DocumentId, Path(description="The document's id, chosen by whoever publishes it.")]


@router.put(
    "/v1/knowledge/documents/<doc_id>",
    status_code=202,
    responses={
        200: {
            "description": "This version, with this content, is stored already: nothing was queued.",
            "content": {"application/json": {"model": DocumentPutResponse}},
        },
        202: {
            "description": "Queued: split, embedded and stored by the writer within seconds.",
            "content": {"application/json": {"model": DocumentPutResponse}},
        },
        409: {
            "description": "This version is stored with other content (a version names one text).",
            "content": {"application/json": {"model": ErrorResponse}},
        },
    },
)
def put_document(doc_id: DocumentPath, body: DocumentBody) -> Response[DocumentPutResponse]:
    """Put one version of a document: 202 when queued (searchable within seconds), 200 when this
    version with this content is stored already, 409 when this version is stored with other
    content. A new version replaces every passage of the old one."""
    caller = caller_of(router)
    redact = container.api_services().redaction.for_tenant(caller.tenant_id)
    outcome = container.api_services().knowledge.put(caller, doc_id, body.to_new(redact))
    status = 200 if outcome.status is PutStatus.UNCHANGED else 202
    return json_response(status, DocumentPutResponse.of(outcome))


@router.get("/v1/knowledge/documents")
def list_documents(cursor: CursorQuery = None, limit: LimitQuery = 50) -> Response[DocumentsResponse]:
    """The tenant's documents by id (without their text), and how many are still queued."""
    caller = caller_of(router)
    knowledge = container.api_services().knowledge
    page = knowledge.list(caller.tenant_id, cursor, limit)
    return json_response(200, DocumentsResponse.of(page, knowledge.pending(caller.tenant_id)))


@router.get("/v1/knowledge/documents/<doc_id>")
def get_document(doc_id: DocumentPath) -> Response[DocumentOut]:
    caller = caller_of(router)
    document = container.api_services().knowledge.get(caller.tenant_id, doc_id)
    return json_response(200, DocumentOut.of(document, whole=True))


@router.get("/v1/knowledge/documents/<doc_id>/passages")
def document_passages(doc_id: DocumentPath) -> Response[PassagesResponse]:
    """The passages search finds the document by, in document order, with their headings and offsets."""
    caller = caller_of(router)
    knowledge = container.api_services().knowledge
    document = knowledge.get(caller.tenant_id, doc_id)
    passages = knowledge.passages(caller.tenant_id, doc_id)
    return json_response(
        200,
        PassagesResponse(
            doc_id=doc_id, version=document.version, passages=[PassageOut.of(p) for p in passages]
        ),
    )


@router.delete("/v1/knowledge/documents/<doc_id>")
def delete_document(doc_id: DocumentPath) -> Response[DocumentDeleteResponse]:
    """Delete the document and every passage of it, at once; a put of it still queued is dropped."""
    caller = caller_of(router)
    removed = container.api_services().knowledge.delete(caller, doc_id)
    return json_response(200, DocumentDeleteResponse(doc_id=doc_id, passages_removed=removed))

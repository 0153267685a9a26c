"""Bedrock Rerank through botocore's Stubber: the request it sends, the scores it reads back,
and failures that become a DependencyError (which search survives)."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber

from agent_memory.adapters.bedrock_rerank import MAX_DOCUMENT_CHARS, BedrockReranker
from agent_memory.errors import DependencyError

ARN = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"


@pytest.fixture
def stubbed() -> Iterator[tuple[BedrockReranker, Stubber]]:
    client = boto3.client("bedrock-agent-runtime", region_name="us-west-2")
    with Stubber(client) as stubber:
        yield BedrockReranker(ARN, client=client), stubber
        stubber.assert_no_pending_responses()


def _request(query: str, docs: list[str]) -> dict[str, object]:
    return {
        "queries": [{"type": "TEXT", "textQuery": {"text": query}}],
        "sources": [
            {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": d}}}
            for d in docs
        ],
        "rerankingConfiguration": {
            "type": "BEDROCK_RERANKING_MODEL",
            "bedrockRerankingConfiguration": {
                "numberOfResults": len(docs),
                "modelConfiguration": {"modelArn": ARN},
            },
        },
    }


def test_scores_come_back_in_the_documents_order(stubbed: tuple[BedrockReranker, Stubber]) -> None:
    reranker, stubber = stubbed
    docs = ["[2026-11-20] the launch moved to March 3", "[2026-11-21] lunch was good"]
    # GIVEN Bedrock answers best first, as it does
    stubber.add_response(
        "rerank",
        {"results": [{"index": 0, "relevanceScore": 0.91}, {"index": 1, "relevanceScore": 0.02}]},
        _request("when is the launch?", docs),
    )

    # WHEN / THEN the scores come back in the documents' order, from the configured model
    assert reranker.rerank("when is the launch?", docs) == [0.91, 0.02]
    assert reranker.model_id == "amazon.rerank-v1:0"


def test_long_documents_are_cut_and_unscored_ones_get_zero(stubbed: tuple[BedrockReranker, Stubber]) -> None:
    # GIVEN
    reranker, stubber = stubbed
    docs = ["x" * (MAX_DOCUMENT_CHARS + 50), "short"]
    stubber.add_response(
        "rerank",
        {"results": [{"index": 1, "relevanceScore": 0.5}]},
        _request("q", ["x" * MAX_DOCUMENT_CHARS, "short"]),
    )

    # WHEN / THEN
    assert reranker.rerank("q", docs) == [0.0, 0.5]


def test_no_documents_no_call(stubbed: tuple[BedrockReranker, Stubber]) -> None:
    # GIVEN
    reranker, _ = stubbed
    # WHEN / THEN
    assert reranker.rerank("q", []) == []


@pytest.mark.parametrize("code", ["ThrottlingException", "AccessDeniedException", "ValidationException"])
def test_a_failed_call_is_a_dependency_error(stubbed: tuple[BedrockReranker, Stubber], code: str) -> None:
    # GIVEN
    reranker, stubber = stubbed
    stubber.add_client_error("rerank", service_error_code=code, http_status_code=400)

    # WHEN / THEN
    with pytest.raises(DependencyError, match="Bedrock Rerank failed"):
        reranker.rerank("q", ["doc"])

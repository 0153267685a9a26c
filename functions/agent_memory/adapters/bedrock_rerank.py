"""Amazon Bedrock Rerank (``bedrock-agent-runtime`` ``Rerank``): the optional reranker in AWS.

A reranking model (Amazon Rerank 1.0, Cohere Rerank 3.5) reads the query and each candidate
together, which a bi-encoder embedding cannot; it costs one call per search, so it is off unless
``AGENT_MEMORY_RERANKER=bedrock``. The call takes at most `MAX_DOCUMENTS` texts; candidates beyond
those keep no rerank score (the search service leaves them below the reranked ones). Throttling
and transient errors are retried by botocore; what still fails is a `DependencyError`, which the
search service turns into "no rerank" rather than a failed search.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError

from agent_memory.adapters.aws_clients import request_path_client
from agent_memory.errors import DependencyError

DEFAULT_MODEL_ARN = "arn:aws:bedrock:us-west-2::foundation-model/amazon.rerank-v1:0"
#: Bedrock Rerank takes up to 1,000 sources a call; a search never needs that many.
MAX_DOCUMENTS = 100
#: Characters of one candidate sent (the models read a few hundred tokens of each).
MAX_DOCUMENT_CHARS = 4_000


class BedrockReranker:
    def __init__(
        self, model_arn: str = DEFAULT_MODEL_ARN, client: Any = None, region: str | None = None
    ) -> None:
        self._model_arn = model_arn
        self._client = request_path_client("bedrock-agent-runtime", region, client)

    @property
    def model_id(self) -> str:
        return self._model_arn.rsplit("/", 1)[-1]

    def rerank(self, query: str, documents: Sequence[str]) -> list[float]:
        if not documents:
            return []
        batch = [d[:MAX_DOCUMENT_CHARS] for d in documents[:MAX_DOCUMENTS]]
        try:
            response = self._client.rerank(
                queries=[{"type": "TEXT", "textQuery": {"text": query}}],
                sources=[
                    {"type": "INLINE", "inlineDocumentSource": {"type": "TEXT", "textDocument": {"text": d}}}
                    for d in batch
                ],
                rerankingConfiguration={
                    "type": "BEDROCK_RERANKING_MODEL",
                    "bedrockRerankingConfiguration": {
                        "numberOfResults": len(batch),
                        "modelConfiguration": {"modelArn": self._model_arn},
                    },
                },
            )
        except (ClientError, BotoCoreError) as exc:
            raise DependencyError(f"Bedrock Rerank failed: {exc}") from exc
        scores = [0.0] * len(documents)
        for result in response.get("results", []):
            index = int(result["index"])
            if 0 <= index < len(batch):
                scores[index] = min(max(float(result["relevanceScore"]), 0.0), 1.0)
        return scores

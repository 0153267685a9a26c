"""Summarizers: implementations of the `Summarizer` port, and the factory that picks one.

``local`` is the deterministic extractive summarizer of the embedded default (it needs the
embedder); ``bedrock`` is a model on Amazon Bedrock through the Converse API. Neither builds a
client or loads a model before its first call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.adapters.summarizers.converse import BedrockSummarizer
from agent_memory.adapters.summarizers.local import LocalExtractiveSummarizer
from agent_memory.errors import ConfigurationError

if TYPE_CHECKING:
    from agent_memory.ports import Embedder, Summarizer
    from agent_memory.settings import Settings

__all__ = ["BedrockSummarizer", "LocalExtractiveSummarizer", "build_summarizer"]


def build_summarizer(settings: Settings, embedder: Embedder) -> Summarizer:
    if settings.summarizer == "local":
        return LocalExtractiveSummarizer(embedder)
    if settings.summarizer == "bedrock":
        return BedrockSummarizer(model_id=settings.bedrock_summary_model_id, region=settings.aws_region)
    raise ConfigurationError(f"unknown summarizer {settings.summarizer!r}")

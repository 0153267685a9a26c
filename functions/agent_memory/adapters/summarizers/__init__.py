"""Summarizers: implementations of the `Summarizer` port, and the factory that picks one.

``local`` is the deterministic extractive summarizer of the embedded default (it needs the
embedder); ``bedrock`` is a model on Amazon Bedrock through the Converse API. Neither builds a
client or loads a model before its first call. `build_tenant_summarizer` makes the one a tenant
chose (`TenantSettings.summary`), an OpenAI-compatible endpoint with the tenant's own key too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_memory.adapters.openai_http import OpenAICompatibleClient
from agent_memory.adapters.summarizers.converse import BedrockSummarizer
from agent_memory.adapters.summarizers.local import LocalExtractiveSummarizer
from agent_memory.adapters.summarizers.openai_compatible_summarizer import OpenAICompatibleSummarizer
from agent_memory.errors import ConfigurationError
from agent_memory.tenancy.rules.tenant_settings import ModelChoice, ModelProvider

if TYPE_CHECKING:
    from agent_memory.ports import Embedder, Summarizer
    from agent_memory.settings import Settings

__all__ = ["BedrockSummarizer", "LocalExtractiveSummarizer", "build_summarizer", "build_tenant_summarizer"]
#: A summary over HTTP can take a while: as long as Bedrock's summarizer allows.
SUMMARY_TIMEOUT_S = 120.0
#: The id of the bundled summarizer a tenant may choose (``provider: local``).
LOCAL_SUMMARIZER = "extractive"


def build_summarizer(settings: Settings, embedder: Embedder) -> Summarizer:
    if settings.summarizer == "local":
        return LocalExtractiveSummarizer(embedder)
    if settings.summarizer == "bedrock":
        return BedrockSummarizer(model_id=settings.bedrock_summary_model_id, region=settings.aws_region)
    raise ConfigurationError(f"unknown summarizer {settings.summarizer!r}")


def build_tenant_summarizer(
    choice: ModelChoice, key: str | None, settings: Settings, embedder: Embedder
) -> Summarizer:
    """The summarizer of a tenant's choice (checked when it was set: `enabled_summary_models`)."""
    if choice.provider is ModelProvider.LOCAL:
        return LocalExtractiveSummarizer(embedder)
    if choice.provider is ModelProvider.BEDROCK:
        return BedrockSummarizer(model_id=choice.model, region=settings.aws_region)
    assert choice.endpoint is not None  # the model checks it
    client = OpenAICompatibleClient(choice.endpoint, key, timeout_s=SUMMARY_TIMEOUT_S)
    return OpenAICompatibleSummarizer(client, choice.model)


def enabled_summary_models(settings: Settings) -> dict[ModelProvider, frozenset[str] | None]:
    """What a tenant may choose as its summary model here, per provider (None: any model).

    Bedrock: the deployment's own summary model only, which its functions may invoke (IAM names
    each model); none where the deployment summarizes locally. Local: the bundled extractive one.
    An OpenAI-compatible endpoint: any model it serves, with the tenant's key."""
    bedrock = (
        frozenset({settings.bedrock_summary_model_id}) if settings.summarizer == "bedrock" else frozenset()
    )
    return {
        ModelProvider.BEDROCK: bedrock,
        ModelProvider.LOCAL: frozenset({LOCAL_SUMMARIZER}),
        ModelProvider.OPENAI: None,
    }

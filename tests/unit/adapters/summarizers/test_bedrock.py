"""The Bedrock summarizer against botocore's Stubber: the Converse request it sends, throttling
with backoff, service and configuration errors, and malformed answers."""

from __future__ import annotations

import random
from typing import Any

import pytest
from botocore.stub import Stubber

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.summarizers import BedrockSummarizer, build_summarizer
from agent_memory.adapters.summarizers.local import LocalExtractiveSummarizer
from agent_memory.adapters.summarizers.prompts import PROMPT_VERSION, TEMPLATES, system_prompt, user_prompt
from agent_memory.errors import ConfigurationError, DependencyError
from agent_memory.model.grains import SUMMARY_GRAINS, Grain
from agent_memory.ports import Summarizer, SummaryInput, SummaryRequest
from agent_memory.settings import Settings

MODEL = "anthropic.claude-3-haiku-20240307-v1:0"
CHILDREN = [
    SummaryInput("2026-11-20", "Alice moved the launch to March 3."),
    SummaryInput("2026-11-20", "Bob will tell the Globex team."),
]


class Sleeps(list[float]):
    def __call__(self, seconds: float) -> None:
        self.append(seconds)


def summarizer(bedrock: Any, sleeps: Sleeps | None = None, **kwargs: Any) -> BedrockSummarizer:
    return BedrockSummarizer(
        MODEL,
        client=bedrock,
        sleep=sleeps if sleeps is not None else Sleeps(),
        rng=random.Random(7),
        **kwargs,
    )


def answer(
    text: str | None = "[2026-11-20] Alice moved the launch to March 3.", **extra: Any
) -> dict[str, Any]:
    content = [] if text is None else [{"text": text}]
    return {
        "output": {"message": {"role": "assistant", "content": content}},
        "stopReason": "end_turn",
        "usage": {"inputTokens": 412, "outputTokens": 37, "totalTokens": 449},
        "metrics": {"latencyMs": 900},
        **extra,
    }


def test_one_converse_call_at_temperature_zero_with_a_bounded_answer(
    bedrock: Any, bedrock_stub: Stubber
) -> None:
    # GIVEN Bedrock answers with a dated line
    expected = {
        "modelId": MODEL,
        "system": [{"text": system_prompt(Grain.DAILY)}],
        "messages": [
            {"role": "user", "content": [{"text": user_prompt(Grain.DAILY, "2026-11-20", CHILDREN)}]}
        ],
        "inferenceConfig": {"temperature": 0.0, "maxTokens": 512},
    }
    bedrock_stub.add_response("converse", answer(), expected)

    # WHEN a day is summarized
    out = summarizer(bedrock, max_tokens=512).summarize(SummaryRequest(Grain.DAILY, "2026-11-20", CHILDREN))

    # THEN the text, the model, the prompt version and the model's token counts come back
    assert out.text == "[2026-11-20] Alice moved the launch to March 3."
    assert (out.model_id, out.prompt_version) == (MODEL, PROMPT_VERSION)
    assert (out.input_tokens, out.output_tokens) == (412, 37)


def test_the_prompt_says_the_grain_and_carries_the_dated_children() -> None:
    # GIVEN
    system = system_prompt(Grain.WEEKLY)
    # WHEN
    user = user_prompt(
        Grain.WEEKLY, "2026-W47", [SummaryInput("2026-11-16", "[2026-11-16] a\n[2026-11-16] b")]
    )
    # THEN
    assert TEMPLATES[Grain.WEEKLY].task in system
    assert "narrative" in system and "[2026-11-20]" in system  # the line format is shown
    assert user.startswith("Period: weekly 2026-W47")
    assert "2026-11-16:\n[2026-11-16] a\n[2026-11-16] b" in user
    part = user_prompt(Grain.DAILY, "2026-11-20", CHILDREN, part=(2, 3))
    assert "part 2 of 3" in part


def test_every_grain_has_its_own_task() -> None:
    # GIVEN
    tasks = {TEMPLATES[g].task for g in SUMMARY_GRAINS}
    # WHEN / THEN
    assert len(tasks) == len(SUMMARY_GRAINS)
    assert "people involved and their roles" in TEMPLATES[Grain.DAILY].task
    assert "themes and its milestones" in TEMPLATES[Grain.QUARTERLY].task
    assert "achievements and the patterns" in TEMPLATES[Grain.YEARLY].task


def test_throttling_is_retried_with_growing_jittered_backoff(bedrock: Any, bedrock_stub: Stubber) -> None:
    # GIVEN two throttles, then an answer
    for _ in range(2):
        bedrock_stub.add_client_error(
            "converse", service_error_code="ThrottlingException", http_status_code=429
        )
    bedrock_stub.add_response("converse", answer())
    sleeps = Sleeps()

    # WHEN
    out = summarizer(bedrock, sleeps, backoff_s=2.0).summarize(
        SummaryRequest(Grain.DAILY, "2026-11-20", CHILDREN)
    )

    # THEN it slept twice, within 2 s then within 4 s (full jitter), and got the answer
    assert out.text.startswith("[2026-11-20]")
    assert len(sleeps) == 2
    assert 0 <= sleeps[0] <= 2.0 and 0 <= sleeps[1] <= 4.0


def test_throttling_that_does_not_end_is_a_dependency_error(bedrock: Any, bedrock_stub: Stubber) -> None:
    # GIVEN
    for _ in range(3):
        bedrock_stub.add_client_error(
            "converse", service_error_code="ThrottlingException", http_status_code=429
        )
    sleeps = Sleeps()

    # WHEN / THEN
    with pytest.raises(DependencyError, match="kept throttling"):
        summarizer(bedrock, sleeps, throttle_retries=2).summarize(
            SummaryRequest(Grain.DAILY, "2026-11-20", CHILDREN)
        )

    assert len(sleeps) == 2  # no sleep after the last attempt


@pytest.mark.parametrize(
    ("code", "status", "error", "match"),
    [
        # the service failing: the caller's queue retries, not this call
        *[
            (code, 503, DependencyError, code)
            for code in ("ServiceUnavailableException", "ModelTimeoutException", "InternalServerException")
        ],
        # the model misconfigured: an error that names the setting to fix
        *[
            (code, 400, ConfigurationError, "AGENT_MEMORY_BEDROCK_SUMMARY_MODEL_ID")
            for code in ("AccessDeniedException", "ResourceNotFoundException", "ValidationException")
        ],
    ],
)
def test_a_failing_service_or_a_misconfigured_model_is_reported_without_local_retries(
    bedrock: Any, bedrock_stub: Stubber, code: str, status: int, error: type[Exception], match: str
) -> None:
    # GIVEN Bedrock answers with the error
    bedrock_stub.add_client_error("converse", service_error_code=code, http_status_code=status)
    sleeps = Sleeps()

    # WHEN / THEN summarizing raises the matching error at once
    with pytest.raises(error, match=match):
        summarizer(bedrock, sleeps).summarize(SummaryRequest(Grain.DAILY, "2026-11-20", CHILDREN))
    assert sleeps == []


@pytest.mark.parametrize(
    ("response", "message"),
    [
        (answer(text=None), "no text in output.message.content"),
        (answer(text="   "), "no text in output.message.content"),
        (answer(stopReason="content_filtered"), "content_filtered"),
        (answer(stopReason="guardrail_intervened"), "guardrail_intervened"),
    ],
)
def test_a_malformed_or_refused_answer_is_a_clear_dependency_error(
    bedrock: Any, bedrock_stub: Stubber, response: dict[str, Any], message: str
) -> None:
    # GIVEN
    bedrock_stub.add_response("converse", response)

    # WHEN / THEN
    with pytest.raises(DependencyError, match=message):
        summarizer(bedrock).summarize(SummaryRequest(Grain.DAILY, "2026-11-20", CHILDREN))


class RawClient:
    """Answers whatever it is given, unvalidated: shapes the Stubber (rightly) refuses to send."""

    def __init__(self, response: dict[str, Any]) -> None:
        self.response = response

    def converse(self, **params: Any) -> dict[str, Any]:
        return self.response


@pytest.mark.parametrize("response", [{}, {"output": {}}, {"output": {"message": {"content": "text"}}}])
def test_an_answer_without_a_content_list_is_a_clear_dependency_error(response: dict[str, Any]) -> None:
    # WHEN / THEN
    with pytest.raises(DependencyError, match=r"malformed Converse response: no output\.message\.content"):
        summarizer(RawClient(response)).summarize(SummaryRequest(Grain.DAILY, "d", CHILDREN))


def test_an_answer_cut_at_max_tokens_is_kept(bedrock: Any, bedrock_stub: Stubber) -> None:
    # GIVEN
    bedrock_stub.add_response("converse", answer("[2026-11-20] Alice moved", stopReason="max_tokens"))
    # WHEN / THEN
    assert (
        summarizer(bedrock).summarize(SummaryRequest(Grain.DAILY, "d", CHILDREN)).text
        == "[2026-11-20] Alice moved"
    )


def test_text_blocks_are_joined_and_other_blocks_ignored(bedrock: Any, bedrock_stub: Stubber) -> None:
    # GIVEN
    response = answer()
    response["output"]["message"]["content"] = [
        {"text": "[d] one"},
        {"reasoningContent": {"reasoningText": {"text": "let me think"}}},
        {"text": "[d] two"},
    ]
    bedrock_stub.add_response("converse", response)
    # WHEN / THEN
    assert (
        summarizer(bedrock).summarize(SummaryRequest(Grain.DAILY, "d", CHILDREN)).text == "[d] one\n[d] two"
    )


def test_a_budget_that_cannot_hold_two_answers_is_refused() -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="two full answers"):
        BedrockSummarizer(MODEL, client=object(), max_tokens=1_000, max_input_chars=5_000)


def test_the_factory_picks_the_summarizer_the_settings_name() -> None:
    # GIVEN
    embedder = HashingEmbedder(64)
    local = build_summarizer(Settings(summarizer="local"), embedder)
    # WHEN
    bedrock = build_summarizer(Settings(summarizer="bedrock", bedrock_summary_model_id="m-1"), embedder)
    # THEN
    assert isinstance(local, LocalExtractiveSummarizer)
    assert isinstance(bedrock, BedrockSummarizer) and bedrock.model_id == "m-1"
    assert isinstance(bedrock, Summarizer)

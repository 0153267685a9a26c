"""The OpenAI-compatible summarizer against a recording transport: the /chat/completions request
(the shared prompts at temperature 0), the text and token counts it reads, and the answers it
refuses."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from tests.unit.adapters.recording_transport import (
    ENDPOINT,
    HOST,
    KEY,
    RecordingTransport,
    Sleeps,
    client,
    ok,
    status,
)

from agent_memory.adapters.summarizers.converse import CHARS_PER_TOKEN_BOUND
from agent_memory.adapters.summarizers.openai_compatible_summarizer import OpenAICompatibleSummarizer
from agent_memory.adapters.summarizers.prompts import PROMPT_VERSION, system_prompt, user_prompt
from agent_memory.errors import ConfigurationError, DependencyError, ProviderKeyRejectedError
from agent_memory.model.grains import Grain
from agent_memory.ports import Summarizer, SummaryInput, SummaryRequest

MODEL = "llama3.1:8b"
CHILDREN = [
    SummaryInput("2026-11-20", "Alice moved the launch to March 3."),
    SummaryInput("2026-11-20", "Bob will tell the Globex team."),
]
DAY = SummaryRequest(Grain.DAILY, "2026-11-20", CHILDREN)


def completion(
    content: Any = "  [2026-11-20] Alice moved the launch to March 3.\n", **extra: Any
) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
        ],
        "usage": {"prompt_tokens": 412, "completion_tokens": 37, "total_tokens": 449},
        **extra,
    }


def summarizer(transport: RecordingTransport, **kwargs: Any) -> OpenAICompatibleSummarizer:
    return OpenAICompatibleSummarizer(client(transport), MODEL, **kwargs)


def test_one_chat_completion_at_temperature_zero_with_the_shared_prompts() -> None:
    # GIVEN
    transport = RecordingTransport(ok(completion()))
    under_test = summarizer(transport, max_tokens=512)

    # WHEN
    out = under_test.summarize(DAY)

    # THEN the text (stripped), the model, the prompt version and the model's token counts
    assert isinstance(under_test, Summarizer)
    assert out.text == "[2026-11-20] Alice moved the launch to March 3."
    assert (out.model_id, out.prompt_version) == (f"openai:{HOST}/{MODEL}", PROMPT_VERSION)
    assert (out.input_tokens, out.output_tokens) == (412, 37)
    [request] = transport.requests
    assert (request.method, request.url) == ("POST", f"{ENDPOINT}/chat/completions")
    assert request.headers == {"Content-Type": "application/json", "Authorization": f"Bearer {KEY}"}
    assert transport.bodies() == [
        {
            "model": MODEL,
            "messages": [
                {"role": "system", "content": system_prompt(Grain.DAILY)},
                {"role": "user", "content": user_prompt(Grain.DAILY, "2026-11-20", CHILDREN)},
            ],
            "temperature": 0,
            "max_tokens": 512,
        }
    ]


def test_a_profile_request_carries_its_subject_and_a_part_its_place() -> None:
    # GIVEN
    transport = RecordingTransport(ok(completion()))
    profile = SummaryRequest(Grain.DAILY, "", CHILDREN, part=(2, 3), purpose="profile", subject="Alice")

    # WHEN
    summarizer(transport).summarize(profile)

    # THEN
    [system, user] = transport.bodies()[0]["messages"]
    assert system["content"] == system_prompt(Grain.DAILY, "profile")
    assert user["content"] == user_prompt(Grain.DAILY, "", CHILDREN, (2, 3), "Alice")
    assert user["content"].startswith("Person: Alice")


def test_the_bounds_are_those_of_the_summarizer_port() -> None:
    # WHEN
    under_test = summarizer(RecordingTransport(), max_tokens=1000, max_input_chars=50_000)

    # THEN
    assert under_test.prompt_version == PROMPT_VERSION
    assert under_test.max_input_chars == 50_000
    assert under_test.max_output_chars == 1000 * CHARS_PER_TOKEN_BOUND


def test_missing_usage_counts_as_zero_tokens() -> None:
    # GIVEN a server that reports no usage
    transport = RecordingTransport(ok(completion(usage=None)))

    # WHEN
    out = summarizer(transport).summarize(DAY)

    # THEN
    assert (out.input_tokens, out.output_tokens) == (0, 0)


def test_content_parts_are_joined() -> None:
    # GIVEN
    parts = [{"type": "text", "text": "[2026-11-20] One."}, {"type": "text", "text": "[2026-11-20] Two."}]
    transport = RecordingTransport(ok(completion(parts)))

    # WHEN
    out = summarizer(transport).summarize(DAY)

    # THEN
    assert out.text == "[2026-11-20] One.\n[2026-11-20] Two."


@pytest.mark.parametrize(
    "answer",
    [
        {"object": "chat.completion"},
        {"choices": []},
        {"choices": ["text"]},
        {"choices": [{"message": None}]},
        completion(None),
        completion("   "),
        {"choices": [{"message": {"content": "[x] cut"}, "finish_reason": "content_filter"}]},
    ],
    ids=["no-choices", "empty-choices", "choice-not-object", "no-message", "null", "blank", "filtered"],
)
def test_a_malformed_or_empty_answer_is_a_dependency_error(answer: dict[str, Any]) -> None:
    # GIVEN
    transport = RecordingTransport(ok(answer))

    # WHEN / THEN
    with pytest.raises(DependencyError, match=MODEL):
        summarizer(transport).summarize(DAY)


def test_an_answer_cut_at_max_tokens_is_kept_and_logged(caplog: pytest.LogCaptureFixture) -> None:
    # GIVEN
    answer = completion()
    answer["choices"][0]["finish_reason"] = "length"
    transport = RecordingTransport(ok(answer))

    # WHEN
    with caplog.at_level(logging.WARNING):
        out = summarizer(transport).summarize(DAY)

    # THEN
    assert out.text.startswith("[2026-11-20]")
    assert "max_tokens" in caplog.text


@pytest.mark.parametrize("code", [401, 403])
def test_a_refused_key_is_provider_key_rejected_without_retry(
    code: int, caplog: pytest.LogCaptureFixture
) -> None:
    # GIVEN
    transport = RecordingTransport(status(code, f"bad key {KEY}"))

    # WHEN
    with caplog.at_level(logging.DEBUG), pytest.raises(ProviderKeyRejectedError) as caught:
        summarizer(transport).summarize(DAY)

    # THEN
    assert len(transport.requests) == 1
    assert KEY not in str(caught.value) and KEY not in repr(caught.value) and KEY not in caplog.text


def test_a_busy_server_is_retried_then_a_dependency_error() -> None:
    # GIVEN
    transport = RecordingTransport(status(429), status(503), status(500))
    sleeps = Sleeps()
    under_test = OpenAICompatibleSummarizer(client(transport, sleeps), MODEL)

    # WHEN
    with pytest.raises(DependencyError):
        under_test.summarize(DAY)

    # THEN
    assert len(transport.requests) == 3
    assert sleeps == [1.0, 2.0]


def test_an_unknown_model_is_a_configuration_error() -> None:
    # GIVEN
    transport = RecordingTransport(status(404))

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=MODEL):
        summarizer(transport).summarize(DAY)


@pytest.mark.parametrize(
    "kwargs", [{"max_tokens": 0}, {"max_tokens": 1024, "max_input_chars": 1000}], ids=["tokens", "chars"]
)
def test_bounds_that_cannot_work_are_refused(kwargs: dict[str, int]) -> None:
    # WHEN / THEN
    with pytest.raises(ConfigurationError):
        summarizer(RecordingTransport(), **kwargs)

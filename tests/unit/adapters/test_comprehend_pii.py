"""Comprehend's DetectPiiEntities through botocore's Stubber: the request, the spans it maps (and
those it leaves to the local engine), long texts read in windows, and failures."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import pytest
from botocore.stub import Stubber

from agent_memory.adapters.comprehend_pii import OVERLAP_CHARS, WINDOW_CHARS, ComprehendPiiDetector
from agent_memory.errors import DependencyError
from agent_memory.writing.rules.redaction import PiiKind, Span, redact


@pytest.fixture
def stubbed() -> Iterator[tuple[ComprehendPiiDetector, Stubber]]:
    client = boto3.client("comprehend", region_name="us-east-1")
    with Stubber(client) as stubber:
        yield ComprehendPiiDetector(client=client), stubber
        stubber.assert_no_pending_responses()


def _entity(kind: str, start: int, end: int, score: float = 0.99) -> dict[str, object]:
    return {"Type": kind, "BeginOffset": start, "EndOffset": end, "Score": score}


def test_entities_with_a_placeholder_kind_become_spans(
    stubbed: tuple[ComprehendPiiDetector, Stubber],
) -> None:
    # GIVEN Comprehend finding a name, a password and an unsure phone number in a sentence
    detector, stubber = stubbed
    text = "Mia's password is kestrel and maybe call 12 34."
    entities = [_entity("NAME", 0, 3), _entity("PASSWORD", 18, 25), _entity("PHONE", 41, 46, score=0.2)]
    stubber.add_response("detect_pii_entities", {"Entities": entities}, {"Text": text, "LanguageCode": "en"})
    # WHEN
    spans = detector.detect(text)
    # THEN the password is a secret; the name (no placeholder) and the unsure number are left out
    assert spans == [Span(PiiKind.SECRET, 18, 25)]
    assert redact(text, lambda _: spans).text == "Mia's password is [SECRET] and maybe call 12 34."


def test_a_long_text_is_read_in_overlapping_windows_and_offsets_are_the_texts(
    stubbed: tuple[ComprehendPiiDetector, Stubber],
) -> None:
    # GIVEN a text longer than one call takes, with an e-mail address in its second window
    detector, stubber = stubbed
    text = "a" * WINDOW_CHARS + " write to x@example.com"
    second = WINDOW_CHARS - OVERLAP_CHARS
    stubber.add_response(
        "detect_pii_entities", {"Entities": []}, {"Text": text[:WINDOW_CHARS], "LanguageCode": "en"}
    )
    stubber.add_response(
        "detect_pii_entities",
        {"Entities": [_entity("EMAIL", OVERLAP_CHARS + 10, OVERLAP_CHARS + 23)]},
        {"Text": text[second:], "LanguageCode": "en"},
    )
    # WHEN
    (span,) = detector.detect(text)
    # THEN the span is placed in the whole text
    assert text[span.start : span.end] == "x@example.com" and span.kind is PiiKind.EMAIL


def test_a_failing_call_is_a_dependency_error(stubbed: tuple[ComprehendPiiDetector, Stubber]) -> None:
    # GIVEN Comprehend refusing the call
    detector, stubber = stubbed
    stubber.add_client_error("detect_pii_entities", "InternalServerException", http_status_code=500)
    # WHEN / THEN the write is refused rather than stored unredacted
    with pytest.raises(DependencyError):
        detector.detect("call me at +49 30 1234567")

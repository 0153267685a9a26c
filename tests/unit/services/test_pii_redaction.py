"""Redaction on write as a tenant setting: off by default, on for the tenant that chose it only,
the managed engine's findings added to the local one's, a choice the deployment cannot serve
refused, and a write request's every free text redacted (its fingerprint and ids with it)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest
from tests.fakes import FixedClock
from tests.unit.services.test_tenant_configuration import Lab

from agent_memory.contract.v1 import WriteRequest
from agent_memory.errors import ValidationFailedError
from agent_memory.governance.rules.plans import load_plans
from agent_memory.tenancy.rules.tenant_settings import RedactionEngine, RedactionSettings, TenantSettings
from agent_memory.tenancy.settings import SettingsService
from agent_memory.writing.pii_redaction import PiiRedaction
from agent_memory.writing.rules.redaction import PiiKind, Span, redact

ON = TenantSettings(redaction=RedactionSettings(enabled=True))
MANAGED = TenantSettings(redaction=RedactionSettings(enabled=True, engine=RedactionEngine.COMPREHEND))


class Detector:
    """A managed engine that finds the word ``kestrel`` (a password no pattern knows)."""

    def __init__(self) -> None:
        self.calls: list[str] = []

    def detect(self, text: str) -> Sequence[Span]:
        self.calls.append(text)
        at = text.find("kestrel")
        return [Span(PiiKind.SECRET, at, at + 7)] if at >= 0 else []


@pytest.fixture
def lab(tmp_path: Path, clock: FixedClock) -> Lab:
    return Lab(tmp_path, clock)


def test_off_by_default_and_on_for_the_tenant_that_chose_it_only(lab: Lab) -> None:
    # GIVEN one tenant with redaction on, one without settings
    lab.service.update(lab.admin("acme"), ON, expected_version=0)
    redaction = PiiRedaction(lab.cache)
    # WHEN
    acme, other = redaction.for_tenant("acme"), redaction.for_tenant("globex")
    # THEN
    assert other is None
    assert acme is not None and acme("mail me: a.b@example.com") == "mail me: [EMAIL]"


def test_the_managed_engine_adds_what_the_local_one_cannot_find(lab: Lab) -> None:
    # GIVEN a tenant that chose Comprehend, in a deployment that has it
    detector = Detector()
    lab.service = SettingsService(
        lab.cache,
        lab.secrets,
        lab.world.store,
        lab.world.clock,
        load_plans(None),
        10_000,
        comprehend_available=True,
    )
    lab.service.update(lab.admin("acme"), MANAGED, expected_version=0)
    redact = PiiRedaction(lab.cache, detector).for_tenant("acme")
    # WHEN
    assert redact is not None
    text = redact("the vault word is kestrel, the desk is +49 30 1234567")
    # THEN both engines' findings are gone, the managed one asked once
    assert text == "the vault word is [SECRET], the desk is [PHONE]"
    assert len(detector.calls) == 1


def test_a_deployment_without_comprehend_refuses_the_choice(lab: Lab) -> None:
    # WHEN / THEN
    with pytest.raises(ValidationFailedError, match="comprehend is not enabled"):
        lab.service.update(lab.admin("acme"), MANAGED, expected_version=0)


def test_a_redacted_request_changes_every_free_text_and_its_fingerprint() -> None:
    # GIVEN a request with personal data in contents, an experience's fields and metadata
    request = WriteRequest.model_validate(
        {
            "items": [
                {"content": "Call +49 30 1234567", "metadata": {"to": ["x@example.com", 3]}},
                {
                    "content": "ok",
                    "kind": "success",
                    "context": "card 4111 1111 1111 1111",
                    "outcome": "10.0.0.1",
                },
            ]
        }
    )
    other = WriteRequest.model_validate(
        {
            "items": [
                {"content": "Call +49 40 7654321", "metadata": {"to": ["y@example.com", 3]}},
                {
                    "content": "ok",
                    "kind": "success",
                    "context": "card 5500 0000 0000 0004",
                    "outcome": "10.9.9.9",
                },
            ]
        }
    )
    # WHEN
    done = request.redacted(_local)
    # THEN
    first, second = done.to_new_memories()
    assert first.content == "Call [PHONE]" and first.metadata == {"to": ["[EMAIL]", 3]}
    assert second.experience is not None
    assert (second.experience.context, second.experience.outcome) == ("card [CARD]", "[IP]")
    # and two requests that differ only in what was redacted are one request
    assert done.fingerprint("bot") == other.redacted(_local).fingerprint("bot")
    assert request.fingerprint("bot") != other.fingerprint("bot")


def _local(text: str) -> str:
    return redact(text).text

"""FIFO message group ids: within SQS's 128 characters and alphabet for any valid tenant, agent and
document id and every command type, one stable group per slice (or document), and unchanged for
the ids that always fitted."""

from __future__ import annotations

import re
from datetime import UTC, datetime

from hypothesis import given
from hypothesis import strategies as st
from tests.payloads import memory_record

from agent_memory.experience.rules.confidence import FeedbackOutcome
from agent_memory.knowledge.rules.passages import KnowledgeDocument
from agent_memory.model.commands import (
    MAX_GROUP_ID,
    AnyCommand,
    DocumentCommand,
    FeedbackCommand,
    WriteCommand,
    group_id,
    knowledge_group_id,
)
from agent_memory.model.grains import Grain

#: The id rule of the contract: ^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$
IDS = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
GRAINS = st.sampled_from([g.value for g in Grain])
#: What SQS accepts in a MessageGroupId: alphanumerics and punctuation.
SQS_GROUP = re.compile(r"\A[A-Za-z0-9!\"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~]{1,128}\Z")


@given(IDS, IDS, GRAINS)
def test_every_group_id_is_one_sqs_accepts(tenant: str, agent: str, grain: str) -> None:
    # WHEN / THEN
    assert SQS_GROUP.match(group_id(tenant, agent, grain))


@given(IDS, IDS, GRAINS, IDS, IDS, GRAINS)
def test_two_slices_never_share_a_group_and_one_slice_keeps_its_own(
    t1: str, a1: str, g1: str, t2: str, a2: str, g2: str
) -> None:
    # WHEN / THEN
    assert group_id(t1, a1, g1) == group_id(t1, a1, g1)
    if (t1, a1, g1) != (t2, a2, g2):
        assert group_id(t1, a1, g1) != group_id(t2, a2, g2)


def test_ids_that_fit_keep_their_readable_group() -> None:
    # WHEN / THEN
    assert group_id("acme", "support-bot", "working") == "acme:support-bot:working"
    long = group_id("t" * 128, "a" * 128, "working")
    assert len(long) <= MAX_GROUP_ID and long.startswith("t" * 40 + ":" + "a" * 40 + ":working:")


#: What a document id may be (`knowledge.rules.passages.DocumentId`), longest first in Hypothesis's search.
DOC_IDS = st.from_regex(r"\A[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
LONGEST = st.integers(min_value=1, max_value=128).map(lambda n: "x" * n)


def _commands(tenant: str, agent: str, doc_id: str) -> list[AnyCommand]:
    """One command of each type the write queue carries, for these ids."""
    at = datetime(2026, 3, 1, tzinfo=UTC)
    record = memory_record("mem_" + "a" * 26, "note", tenant=tenant, agent=agent)
    document = KnowledgeDocument(
        tenant_id=tenant,
        doc_id=doc_id,
        version="v1",
        title="t",
        text="x",
        content_hash="h",
        created_at=at,
        updated_at=at,
    )
    return [
        WriteCommand(record=record),
        WriteCommand(op="upsert", record=record.model_copy(update={"grain": Grain.QUARTERLY})),
        DocumentCommand(document=document, accepted_at=at),
        FeedbackCommand(
            feedback_id="fb_" + "0" * 61,
            tenant_id=tenant,
            agent_id=agent,
            record_id=record.id,
            outcome=FeedbackOutcome.CONFIRMED,
            actor="k",
            accepted_at=at,
        ),
    ]


@given(IDS | LONGEST, IDS | LONGEST, DOC_IDS | LONGEST)
def test_every_command_types_group_is_one_sqs_accepts(tenant: str, agent: str, doc_id: str) -> None:
    """Whatever ids the API accepts (128 characters each at most), every command's FIFO group is
    one SQS accepts: at most 128 characters of its alphabet."""
    for command in _commands(tenant, agent, doc_id):
        assert SQS_GROUP.match(command.group_id), (type(command).__name__, command.group_id)


@given(IDS, DOC_IDS, DOC_IDS)
def test_two_documents_of_a_tenant_never_share_a_group(tenant: str, d1: str, d2: str) -> None:
    """Each document keeps its own group (its versions stay in order), even when the ids are long
    enough to be hashed; one document always maps to the same group."""
    assert knowledge_group_id(tenant, d1) == knowledge_group_id(tenant, d1)
    if d1 != d2:
        assert knowledge_group_id(tenant, d1) != knowledge_group_id(tenant, d2)


def test_a_document_id_of_128_characters_gets_a_group_sqs_accepts() -> None:
    # WHEN a tenant of 128 characters puts a document of 128
    group = knowledge_group_id("t" * 128, "d" * 128)

    # THEN its group fits and keeps a readable start
    assert len(group) <= MAX_GROUP_ID
    assert group.startswith("t" * 40 + ":#knowledge:" + "d" * 24 + ":")

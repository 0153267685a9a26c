"""FIFO message group ids: within SQS's 128 characters and alphabet for any valid tenant and agent
id, one stable group per slice, and unchanged for the ids that always fitted."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from agent_memory.domain.commands import MAX_GROUP_ID, group_id
from agent_memory.domain.grains import Grain

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

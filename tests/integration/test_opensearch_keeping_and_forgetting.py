"""The keeping-and-forgetting state machine (tests/unit/services/test_keeping_and_forgetting_stateful.py)
on the real OpenSearch node: every write, search, forget and erasure the model allows, checked
against what the OpenSearch store answers. Here and not among the unit tests, which may not open
a socket (the root conftest), not even to loopback."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from tests.unit.services.test_keeping_and_forgetting_stateful import KeepingAndForgetting, OpenSearchWorld


@pytest.fixture(autouse=True, scope="module")
def _indexes_deleted_at_the_end() -> Iterator[None]:
    yield
    for indexes in OpenSearchWorld._shared.values():
        indexes.delete()
    OpenSearchWorld._shared.clear()


class KeepingAndForgettingOnOpenSearch(KeepingAndForgetting):
    STORE = "opensearch"


KeepingAndForgettingOnOpenSearch.TestCase.settings = settings(
    max_examples=3,
    stateful_step_count=20,
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
test_keeping_and_forgetting_on_opensearch = pytest.mark.opensearch(KeepingAndForgettingOnOpenSearch.TestCase)

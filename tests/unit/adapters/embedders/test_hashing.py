"""The hashing embedder: the contract of the `Embedder` port, and similarities that tests rely on."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.ports import Embedder

# Twelve-word sentences, each with one word changed the way a re-sent or corrected memory is.
NEAR_DUPLICATES = [
    (
        "The quarterly planning meeting with the design team moved to Thursday afternoon",
        "The quarterly planning meeting with the design team moved to Friday afternoon",
    ),
    (
        "Alice asked Bob to send the signed contract to legal department tomorrow",
        "Alice asked Carol to send the signed contract to legal department tomorrow",
    ),
    (
        "Our deployment pipeline failed twice because the staging database ran out yesterday",
        "Our deployment pipeline failed twice because the production database ran out yesterday",
    ),
    (
        "Remember the customer prefers email updates instead of phone calls every week",
        "Remember the customer prefers email updates instead of phone calls every month",
    ),
    (
        "The new pricing page increased trial signups by twelve percent last month",
        "The new pricing page increased trial signups by fifteen percent last month",
    ),
    (
        "We decided to postpone the marketing campaign until the launch in March",
        "We decided to postpone the marketing campaign until the launch in April",
    ),
]

UNRELATED = [
    (
        "The quarterly planning meeting with the design team moved to Thursday afternoon",
        "He fixed the memory leak in the image resizing service before release",
    ),
    (
        "Alice asked Bob to send the signed contract to legal department tomorrow",
        "Maria said her daughter starts kindergarten next autumn in a nearby town",
    ),
    (
        "Please book a table for four at the Italian place near work",
        "The insurance claim for the broken laptop screen was finally approved today",
    ),
    ("Quarterly revenue grew 8% thanks to renewals", "The cat sits on the mat"),
]


def cosine(embedder: HashingEmbedder, a: str, b: str) -> float:
    va, vb = embedder.embed([a, b])
    return float(va @ vb)


@pytest.mark.parametrize(("original", "changed"), NEAR_DUPLICATES)
def test_one_changed_word_in_twelve_stays_above_the_dedup_threshold(original: str, changed: str) -> None:
    # GIVEN a 12-word sentence and the same sentence with one word changed
    assert len(original.split()) == len(changed.split()) == 12
    assert sum(a != b for a, b in zip(original.split(), changed.split(), strict=True)) == 1
    # WHEN both are embedded at the default dimension
    similarity = cosine(HashingEmbedder(384), original, changed)
    # THEN they are near-duplicates for dedup-on-write (default threshold 0.92)
    assert similarity > 0.92


@pytest.mark.parametrize(("a", "b"), UNRELATED)
def test_unrelated_sentences_are_far_apart(a: str, b: str) -> None:
    # WHEN / THEN
    assert cosine(HashingEmbedder(384), a, b) < 0.5


def test_an_inflected_word_counts_as_closer_than_a_different_word() -> None:
    # GIVEN the same sentence with "launch" inflected, and with it replaced by an unrelated word
    embedder = HashingEmbedder()
    base = "Alice is planning the product launch for March"
    # WHEN / THEN character 3-grams make the inflected form the nearer one
    assert cosine(embedder, base, "Alice is planning the product launches for March") > cosine(
        embedder, base, "Alice is planning the product review for March"
    )


def test_rows_are_unit_float32_of_the_configured_dimension() -> None:
    # WHEN
    vectors = HashingEmbedder(dimension=64).embed(["hello world", "", "!!!", "x" * 10_000])
    # THEN
    assert vectors.shape == (4, 64)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-6)


def test_empty_input_gives_an_empty_matrix_of_the_right_width() -> None:
    # WHEN
    vectors = HashingEmbedder(dimension=96).embed([])
    # THEN
    assert vectors.shape == (0, 96)
    assert vectors.dtype == np.float32


def test_a_text_embeds_the_same_alone_as_in_a_batch() -> None:
    # GIVEN
    embedder = HashingEmbedder()
    texts = ["first memory", "second memory about something else", "first memory"]
    # WHEN
    batch = embedder.embed(texts)
    # THEN
    np.testing.assert_array_equal(batch[0], batch[2])
    for row, text in zip(batch, texts, strict=True):
        np.testing.assert_array_equal(row, embedder.embed([text])[0])


def test_texts_without_words_get_stable_distinct_non_zero_vectors() -> None:
    # GIVEN texts with no word characters at all, and blank ones
    embedder = HashingEmbedder()
    bang, question, blank, spaces = embedder.embed(["!!!", "???", "", "   \n"])
    # WHEN / THEN each is a unit vector, punctuation is told apart by its characters, blanks agree
    assert np.linalg.norm(bang) == pytest.approx(1.0)
    assert not np.allclose(bang, question)
    np.testing.assert_array_equal(blank, spaces)
    np.testing.assert_array_equal(bang, embedder.embed(["!!!"])[0])


def test_vectors_do_not_depend_on_the_python_hash_seed() -> None:
    # GIVEN two fresh interpreters with different string-hash salts
    code = (
        "from agent_memory.adapters.embedders.hashing import HashingEmbedder;"
        "print(HashingEmbedder().embed(['Alice moved the launch to March 3.']).tobytes().hex())"
    )
    outputs = {
        subprocess.run(
            [sys.executable, "-c", code],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        for seed in ("1", "2")
    }
    # WHEN / THEN both, and this process, produce the very same bytes
    here = HashingEmbedder().embed(["Alice moved the launch to March 3."]).tobytes().hex()
    assert outputs == {here}


PINNED_16 = np.array(
    [
        0.44721359,
        0.54380161,
        -0.07225331,
        -0.02303208,
        -0.08604576,
        0.08029219,
        -0.23859127,
        -0.26048070,
        -0.00562903,
        0.00000000,
        0.15238602,
        -0.42893529,
        -0.23859127,
        0.17698374,
        -0.15829907,
        -0.19838290,
    ],
    dtype=np.float32,
)


def test_vectors_are_pinned_to_the_model_version() -> None:
    """Stored vectors are compared with new ones: a change of features must bump VERSION."""
    # WHEN
    vector = HashingEmbedder(dimension=16).embed(["Alice moved the launch to March 3."])[0]
    # THEN
    np.testing.assert_allclose(vector, PINNED_16, atol=1e-6)


def test_model_id_names_the_version_and_dimension() -> None:
    # WHEN / THEN
    assert HashingEmbedder().model_id == "hashing-v1-384"
    assert HashingEmbedder(dimension=128).model_id == "hashing-v1-128"
    assert HashingEmbedder(dimension=128).dimension == 128


@pytest.mark.parametrize("dimension", [0, 7, -384, 38.4, True])
def test_unusable_dimensions_are_refused(dimension: object) -> None:
    # WHEN / THEN
    with pytest.raises(ValueError, match="dimension"):
        HashingEmbedder(dimension=dimension)  # type: ignore[arg-type]


def test_it_implements_the_embedder_port() -> None:
    # WHEN / THEN
    assert isinstance(HashingEmbedder(), Embedder)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_any_text_becomes_a_finite_unit_vector(text: str) -> None:
    # WHEN
    (vector,) = HashingEmbedder(dimension=32).embed([text])
    # THEN
    assert np.all(np.isfinite(vector))
    assert np.linalg.norm(vector) == pytest.approx(1.0, rel=1e-5)

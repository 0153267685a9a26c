"""The local extractive summarizer: what it always keeps, what it drops, and its bounds."""

from __future__ import annotations

import pytest

from agent_memory.adapters.embedders.hashing import HashingEmbedder
from agent_memory.adapters.summarizers.local import (
    BUDGETS,
    Budget,
    LocalExtractiveSummarizer,
    lowercase_words,
    names_people,
    richness,
    split_sentences,
)
from agent_memory.model.grains import Grain
from agent_memory.ports import Summarizer, SummaryInput, SummaryRequest

FILLER = [
    "the team talked about lunch options again",
    "someone asked whether the coffee machine was fixed",
    "it rained all afternoon and the office was quiet",
    "we spent the morning reviewing open pull requests",
    "there was a long discussion about tabs and spaces",
    "the standup ran a little over time today",
]


def summarizer(**budgets: Budget) -> LocalExtractiveSummarizer:
    return LocalExtractiveSummarizer(HashingEmbedder(256), budgets={**BUDGETS, **budgets})  # type: ignore[dict-item]


def day(*texts: str, label: str = "2026-11-20") -> list[SummaryInput]:
    return [SummaryInput(label=label, text=t) for t in texts]


def lines(text: str) -> list[str]:
    return text.splitlines()


def test_it_implements_the_summarizer_port_and_names_its_embedder() -> None:
    # GIVEN
    s = summarizer()
    # WHEN / THEN
    assert isinstance(s, Summarizer)
    assert s.model_id == "local-extractive-v1/hashing-v1-256"
    assert s.max_output_chars * 2 <= s.max_input_chars


def test_sentences_naming_people_amounts_or_dates_are_kept_before_central_filler() -> None:
    # GIVEN a day of chatter with three salient sentences, and room for four lines
    s = summarizer(daily=Budget(lines=4, chars=2_000))
    children = day(
        *FILLER, "Priya signed the Globex renewal.", "The invoice came to $4,200.", "Ship it on March 3."
    )

    # WHEN it is summarized
    out = lines(s.summarize(SummaryRequest(Grain.DAILY, "2026-11-20", children)).text)

    # THEN the three salient sentences are there, and one line of filler fills the budget
    assert "[2026-11-20] Priya signed the Globex renewal." in out
    assert "[2026-11-20] The invoice came to $4,200." in out
    assert "[2026-11-20] Ship it on March 3." in out
    assert len(out) == 4


def test_among_plain_sentences_the_most_central_are_kept() -> None:
    # GIVEN five sentences about the release and one off-topic, room for three
    s = summarizer(daily=Budget(lines=3, chars=2_000))
    on_topic = [
        "the release build failed on the release branch",
        "the release branch needs a fix before the release build",
        "we will retry the release build after the fix",
        "the release notes wait for the release build",
        "the fix for the release build is under review",
    ]
    out = s.summarize(
        SummaryRequest(Grain.DAILY, "d", day(*on_topic, "my cat knocked a plant off the windowsill"))
    ).text

    # WHEN / THEN the odd one out is the one left out
    assert "windowsill" not in out
    assert len(lines(out)) == 3


def test_the_output_is_bounded_even_when_every_sentence_is_salient() -> None:
    # GIVEN
    s = summarizer(daily=Budget(lines=5, chars=300))
    children = day(*(f"Alice paid ${i * 100} to Bob on March {i}." for i in range(1, 40)))

    # WHEN
    text = s.summarize(SummaryRequest(Grain.DAILY, "2026-11-20", children)).text

    # THEN
    assert len(lines(text)) <= 5
    assert len(text) <= 300
    # the richer sentences win: each kept one names people, an amount and a date
    assert all(richness(line.split("] ", 1)[1]) == 3 for line in lines(text))


def test_every_line_keeps_the_date_it_is_about_and_the_output_is_chronological() -> None:
    # GIVEN a week: a daily summary's dated lines, and one line without a date of its own
    children = [
        SummaryInput(
            "2026-11-17", "[2026-11-17] Alice moved the launch to March 3.\n[2026-11-17] Bob agreed."
        ),
        SummaryInput("2026-11-16", "Carmen joined the platform team."),
        SummaryInput("2026-11-19", "[2026-11-19] Dmitri paid $900 for the offsite."),
    ]

    # WHEN
    out = lines(summarizer().summarize(SummaryRequest(Grain.WEEKLY, "2026-W47", children)).text)

    # THEN the labels come from the lines where they have one, else from the child; order is kept
    assert out == [
        "[2026-11-17] Alice moved the launch to March 3.",
        "[2026-11-17] Bob agreed.",
        "[2026-11-16] Carmen joined the platform team.",
        "[2026-11-19] Dmitri paid $900 for the offsite.",
    ]


def test_a_near_repeat_is_kept_once() -> None:
    # GIVEN
    s = summarizer()
    out = s.summarize(
        SummaryRequest(
            Grain.DAILY, "d", day("Alice moved the launch to March 3.", "Alice moved the launch to March 3!")
        )
    )
    # WHEN / THEN
    assert len(lines(out.text)) == 1


def test_the_same_children_always_give_the_same_summary() -> None:
    # GIVEN
    children = day(*FILLER, "Priya signed the Globex renewal for $240,000 on 2026-02-12.")
    first = summarizer().summarize(SummaryRequest(Grain.DAILY, "d", children))
    # WHEN
    again = LocalExtractiveSummarizer(HashingEmbedder(256)).summarize(
        SummaryRequest(Grain.DAILY, "d", children)
    )
    # THEN
    assert first == again


def test_long_sentences_are_cut_so_one_cannot_eat_the_budget() -> None:
    # WHEN
    text = (
        summarizer()
        .summarize(SummaryRequest(Grain.DAILY, "d", day("Alice wrote " + "very " * 200 + "long notes.")))
        .text
    )
    # THEN
    assert len(text) < 400 and text.endswith("…")


def test_no_children_make_no_text() -> None:
    # WHEN / THEN
    assert summarizer().summarize(SummaryRequest(Grain.DAILY, "d", [])).text == ""


@pytest.mark.parametrize(
    ("sentence", "people"),
    [
        ("Alice moved the launch.", True),
        ("We met Bob at noon.", True),
        ("The weather was nice.", False),
        ("On Monday we shipped.", False),  # a weekday is a date, not a person
        ("Thanks for the help.", False),
    ],
)
def test_names_are_capitalised_words_that_are_not_dates_or_openers(sentence: str, people: bool) -> None:
    # WHEN / THEN
    assert names_people(sentence) is people


def test_an_ordinary_word_opening_a_sentence_is_not_a_name() -> None:
    # GIVEN
    common = lowercase_words(["the costs rose again"])
    # WHEN / THEN
    assert not names_people("Costs rose 12% in March.", common)
    assert richness("Costs rose 12% in March.", common) == 2  # an amount and a date


def test_sentences_are_split_at_stops_but_not_after_titles_or_initials() -> None:
    # WHEN / THEN
    assert split_sentences("Mr. Smith met Dr. J. Jones. They agreed on $2.4M! Done? Yes.") == [
        "Mr. Smith met Dr. J. Jones.",
        "They agreed on $2.4M!",
        "Done?",
        "Yes.",
    ]

"""The deterministic local summarizer of the embedded default: extractive, no language model.

It keeps sentences instead of writing new ones, so a summary never says anything its children
did not, and the same children always give the same summary (re-runs are no-ops). How it chooses:

1. Every child is cut into sentences; each sentence keeps a date label: the ``[2026-11-20]``
   its line already starts with (a summary's line), else the child's label (a working memory's
   local day). Lines come out as ``[label] sentence``, so the date survives every fold.
2. Sentences that name people (capitalised names), amounts (digits, currency signs) or dates
   (month and weekday names, numeric dates) are *salient* and always come before the others.
   Among them, the more of the three kinds a sentence has, the earlier; then the more
   *central* it is: the cosine of its embedding (the `Embedder` port) to the mean of all the
   period's sentences, i.e. how typical it is of what the period was about.
3. Sentences are taken in that order while the grain's budget (lines and characters) lasts,
   skipping one that is a near repeat (cosine > `REPEAT_COSINE`) of a sentence already taken.
   The output is bounded even when the salient sentences alone exceed the budget: then the
   richest and most central of them are kept.
4. The kept sentences are written in their original (chronological) order.

Its "model id" names the embedder too, since centrality depends on it: summaries made with
another embedder are made again on the next run rather than counted as unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from agent_memory.model.grains import Grain
from agent_memory.ports import Embedder, SummaryInput, SummaryRequest, SummaryText

#: Bump when the selection rules or the budgets change (recorded on every summary).
VERSION = 1
#: A sentence this close to one already kept is a repeat and is left out.
REPEAT_COSINE = 0.97
#: Longer sentences are cut (with an ellipsis), so one sentence cannot eat a grain's budget.
MAX_SENTENCE_CHARS = 320


@dataclass(frozen=True, slots=True)
class Budget:
    lines: int
    chars: int


#: What each grain keeps at most. Coarser grains keep more lines, each from a longer period.
BUDGETS: Mapping[Grain, Budget] = {
    Grain.DAILY: Budget(lines=12, chars=1_800),
    Grain.WEEKLY: Budget(lines=16, chars=2_400),
    Grain.MONTHLY: Budget(lines=20, chars=3_000),
    Grain.QUARTERLY: Budget(lines=28, chars=4_000),
    Grain.YEARLY: Budget(lines=36, chars=5_000),
}
#: What a profile keeps at most: its statements were chosen already (`derived.rules.profiles`).
PROFILE_BUDGET = Budget(lines=30, chars=5_000)

_LABEL = re.compile(r"^\s*\[([^\]\n]{1,40})\]\s*")
#: A sentence ends at . ! or ? followed by space and a capital, digit, quote or bracket; not
#: after a one- or two-letter abbreviation like "Mr." or "St." or an initial.
_SENTENCE_END = re.compile(r"(?<=[.!?])(?<!\b[A-Z][a-z][.])(?<!\b[A-Z][.])\s+(?=[\"'(\[A-Z0-9])")
_LOWER_WORD = re.compile(r"\b[a-z\u00df-\u00ff]+\b")
_CAPITALISED = re.compile(r"\b[A-Z][a-z\u00c0-\u024f]+(?:['\u2019][a-z]+)?\b")
_DIGIT_OR_CURRENCY = re.compile(r"[0-9$€£¥₹]")
_MONTHS = (
    "January February March April May June July August September October November December "
    "Jan Feb Mar Apr Jun Jul Aug Sep Sept Oct Nov Dec"
)
_WEEKDAYS = "Monday Tuesday Wednesday Thursday Friday Saturday Sunday Mon Tue Tues Wed Thu Thur Fri Sat Sun"
_DATE = re.compile(
    r"\b(?:" + "|".join(_MONTHS.split() + _WEEKDAYS.split()) + r")\b"
    r"|\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{1,2}(?:st|nd|rd|th)\b"
)
_DATE_WORDS = frozenset(w.lower() for w in (_MONTHS + " " + _WEEKDAYS).split())
#: Capitalised words that start sentences without naming anyone.
_NOT_NAMES = frozenset(
    """
    a about after again all also an and another any are as at back be because been before being
    both but by can could did do does done during each either else even every few final first
    for from get go going good great had has have he hello her here hey hi his how i if in into
    is it its just last let lets like maybe me more most much my new next no not notes now of ok
    okay on once one only or other our out over please quick she should since so some still such
    than thanks thank that the their them then there these they this those though to today
    todo tomorrow too two under until up update us very was we well were what when where which
    while who why will with would yes yesterday yet you your decision idea risk reminder
    incident follow remind prepare send book open schedule draft load happy can't don't we're
    i'm it's that's there's let's
    """.split()  # noqa: SIM905 - a word list reads better as words
)


@dataclass(frozen=True, slots=True)
class _Sentence:
    position: int
    label: str
    text: str


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s.strip()]


def sentences_of(children: Sequence[SummaryInput]) -> list[_Sentence]:
    """Every sentence of every child, in order, with the date label it is about."""
    out: list[_Sentence] = []
    for child in children:
        for line in child.text.splitlines():
            label, body = child.label, line
            match = _LABEL.match(line)
            if match:
                label, body = match.group(1), line[match.end() :]
            for sentence in split_sentences(body):
                text = sentence
                if len(text) > MAX_SENTENCE_CHARS:
                    text = text[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
                out.append(_Sentence(len(out), label, text))
    return out


def names_people(sentence: str, common: frozenset[str] = frozenset()) -> bool:
    """Whether the sentence has a capitalised name: a capitalised word that is no month or weekday
    and no common opener, and, when it opens the sentence, not a word ``common`` (the period's
    words seen in lower case) knows as an ordinary word ("Costs rose" names nobody)."""
    for match in _CAPITALISED.finditer(sentence):
        word = match.group(0).lower()
        if word in _NOT_NAMES or word in _DATE_WORDS:
            continue
        if match.start() == len(sentence) - len(sentence.lstrip("\"'([")) and word in common:
            continue
        return True
    return False


def has_amount(sentence: str) -> bool:
    return _DIGIT_OR_CURRENCY.search(sentence) is not None


def has_date(sentence: str) -> bool:
    return _DATE.search(sentence) is not None


def richness(sentence: str, common: frozenset[str] = frozenset()) -> int:
    """How many of the three kinds of salient detail (people, amounts, dates) a sentence has."""
    return int(names_people(sentence, common)) + int(has_amount(sentence)) + int(has_date(sentence))


def lowercase_words(sentences: Sequence[str]) -> frozenset[str]:
    """The words that occur in lower case somewhere in ``sentences``: ordinary words."""
    return frozenset(w for s in sentences for w in _LOWER_WORD.findall(s))


def profile_lines(children: Sequence[SummaryInput], budget: Budget = PROFILE_BUDGET) -> str:
    """A profile without a model: each statement on one line under its date, in the order given,
    cut like a sentence, while the budget lasts."""
    lines: list[str] = []
    used = 0
    for child in children:
        text = " ".join(child.text.split())
        if len(text) > MAX_SENTENCE_CHARS:
            text = text[: MAX_SENTENCE_CHARS - 1].rstrip() + "…"
        line = f"[{child.label}] {text}"
        if not text or len(lines) == budget.lines or used + len(line) + 1 > budget.chars:
            continue
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


class LocalExtractiveSummarizer:
    """Implements the `Summarizer` port by keeping sentences (see the module docstring).

    ``max_input_chars`` is large: the algorithm is linear in its input, and folding in chunks
    would only lose centrality across chunks. It stays bounded so the embedding batch does.
    """

    def __init__(
        self,
        embedder: Embedder,
        budgets: Mapping[Grain, Budget] = BUDGETS,
        max_input_chars: int = 1_000_000,
    ) -> None:
        self._embedder = embedder
        self._budgets = dict(budgets)
        self._max_input_chars = max_input_chars

    @property
    def model_id(self) -> str:
        return f"local-extractive-v{VERSION}/{self._embedder.model_id}"

    @property
    def prompt_version(self) -> str:
        return f"extractive-budgets-v{VERSION}"

    @property
    def max_input_chars(self) -> int:
        return self._max_input_chars

    @property
    def max_output_chars(self) -> int:
        # each kept line is the sentence plus its "[label] " and a newline, within the budget
        return max(b.chars for b in self._budgets.values())

    def summarize(self, request: SummaryRequest) -> SummaryText:
        if request.purpose == "supersession":  # no model to judge: every write-time decision stands
            return SummaryText(text="", model_id=self.model_id, prompt_version=self.prompt_version)
        if request.purpose == "pattern":  # no model to generalise: the most typical member says it
            first = request.children[0].text.strip() if request.children else ""
            return SummaryText(text=first, model_id=self.model_id, prompt_version=self.prompt_version)
        if request.purpose == "profile":  # no model to restate them: the statements, one a line
            return SummaryText(
                text=profile_lines(request.children),
                model_id=self.model_id,
                prompt_version=self.prompt_version,
            )
        budget = self._budgets[Grain(request.grain)]
        sentences = sentences_of(request.children)
        kept = self._select(sentences, budget)
        text = "\n".join(f"[{s.label}] {s.text}" for s in sorted(kept, key=lambda s: s.position))
        return SummaryText(text=text, model_id=self.model_id, prompt_version=self.prompt_version)

    def _select(self, sentences: list[_Sentence], budget: Budget) -> list[_Sentence]:
        if not sentences:
            return []
        vectors = np.asarray(self._embedder.embed([s.text for s in sentences]), dtype=np.float32)
        centroid = vectors.mean(axis=0)
        norm = float(np.linalg.norm(centroid))
        centrality = vectors @ (centroid / norm) if norm > 0 else np.zeros(len(sentences), np.float32)
        common = lowercase_words([s.text for s in sentences])
        rich = [richness(s.text, common) for s in sentences]
        order = sorted(
            range(len(sentences)),
            key=lambda i: (rich[i] == 0, -rich[i], -round(float(centrality[i]), 6), i),
        )
        kept: list[int] = []
        used = 0
        for i in order:
            if len(kept) == budget.lines:
                break
            cost = len(sentences[i].text) + len(sentences[i].label) + 4  # "[label] " and "\n"
            if used + cost > budget.chars:
                continue  # a shorter sentence further down may still fit
            if kept and float(np.max(vectors[kept] @ vectors[i])) > REPEAT_COSINE:
                continue
            kept.append(i)
            used += cost
        return [sentences[i] for i in kept]

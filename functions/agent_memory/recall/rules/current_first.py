"""For a question about the present, the statement that holds now first: the two search-time steps
`recall.rules.ranking.rank` ends with, a section each. *Newer first* moves a later statement of
the first result's holder before it by their own words and shapes; *Answered first* asks the
optional answer judge about the head's pairs of statements with the question. Pure (no I/O): the
model calls come in as functions, and only the head is ever reordered.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from agent_memory.derived.rules.kinds import is_derived
from agent_memory.model.grains import Grain
from agent_memory.model.queries import Found, Hit
from agent_memory.model.records import MemoryRecord
from agent_memory.supersession.rules.pairs import linked
from agent_memory.supersession.rules.shape import Shape, replaces, same_attribute, shape

if TYPE_CHECKING:  # the answer judge, as the ranking's model calls back it
    Answer = Callable[[str, list[tuple[Hit, Hit]]], Sequence[float] | None]


# --- Newer first ---------------------------------------------------------------------------------
# At search time, the newer of two statements about one thing first, when the question asks about
# the present and the write path did not link them.
#
# Write-time supersession (`supersession.rules.claims`) marks a pair only when it is sure: a false mark
# hides a true fact. What it leaves unmarked is mostly a change said far from the old wording ("I'm
# on the night shift at the warehouse" → "Being on days again is amazing") or said beside another
# statement as near. A question about the present ("Which shift am I on?") then meets the old
# statement first: its words match the question, the new one's do not.
#
# A ranking can look again with what a write cannot see, the question and the statements it found
# together: when the first result is a statement and, among the first `HEAD` results, a **later**
# statement of the **same holder** (end user, speaker, role) from another conversation
#
# * is **nearest** to it by the statements' own words (their own vectors' cosine, at least `NEAR`),
# * **stands out** by `STANDS_OUT` from every other statement there, of which there is one at least
#   (beside none, any later note is "nearest": "The office coffee machine is broken again" to
#   "Alice moved the product launch to March 3" when it is the only one), and
# * is about the same attribute as far as the shapes tell (`supersession.rules.shape.same_attribute`:
#   no other holder, no other subject), not saying it adds ("also"), nor a wish or a story of the past,
#
# the later one comes first and the first one right after it, both kept. When it also reads as one
# value replacing another (`supersession.rules.shape.replaces`: a new value or a word of change, no
# restatement) the answer marks the older one as a write would (`marked`: ``current`` false,
# ``valid_to`` when the later one was said, ``superseded_by`` the later one): a reader that skips
# what no longer holds skips it here too. When it does not (the shape test was written for some
# wordings, and an update that names the old value or person again, says a number in words or
# implies the change fails it), it comes first only when it is about what is asked as well (the
# question's cosine with its own vector at least `ASKED`: a turn near the first result but about
# something else stays), and nothing is
# marked: the order is then a guess by meaning and recency, and a mark would hide a fact that may
# still hold (an addition said without "also").
# Only within the head, so a ranking's first `HEAD` results stay the same set (recall at `HEAD` or
# more cannot move), and only for a question about the present (`asks_about_now`): one that names a
# time, or asks in the past tense ("where did I live?"), wants what held then. Nothing is stored:
# the marks are this answer's reading, and the write path's stay the record of what replaced what.
#
# `NEAR` and `STANDS_OUT` chosen on half A of benchmarks/data/knowledge_update, `ASKED` on halves A-D,
# the wish, past and one-other rules on A-G, H held out (docs/decisions.md).

#: How many of the first results are looked at (and the only ones that may move).
HEAD = 5
#: The least cosine of two statements' own vectors for them to be about one thing.
NEAR = 0.25
#: How far the later statement must stand above every other statement of the head.
STANDS_OUT = 0.1
#: The least cosine of the question and a later statement's own vector for it to come first when
#: its shape does not read as a replacement (it names the old value again, says a number in
#: words, implies the change): it must be about what is asked, not only near the first result.
ASKED = 0.15

#: Words that put a question in the past ("where did I live?", "what was my role before?").
_PAST = re.compile(
    r"\b(?:did|didn't|was|wasn't|were|weren't|had|used to|ago|previously|formerly|originally|"
    r"before|back then|at (?:the|that) time)\b",
    re.IGNORECASE,
)


def asks_about_now(query: str | None, names_a_time: bool) -> bool:
    """Whether ``query`` asks what holds now: a question that names no time (``names_a_time``:
    the search found a time hint in it) and is not in the past tense."""
    return bool(query) and not names_a_time and _PAST.search(query or "") is None


def holder(record: MemoryRecord) -> tuple[str | None, str, str]:
    """Whose first-person statements a memory makes: its end user, speaker and role (an
    assistant's "I" is not the user's)."""
    role = record.role if record.role in ("assistant", "system", "tool") else "user"
    return record.user_id, (record.speaker or "").casefold(), role


def _statement(found: Found) -> Hit | None:
    """``found`` when it is a live statement a later one may replace: a current working memory,
    not derived, that states something (not a question or a request)."""
    if not isinstance(found, Hit) or not found.current:
        return None
    record = found.record
    if record.grain is not Grain.WORKING or is_derived(record):
        return None
    return found


def compared(ranked: Sequence[Found]) -> list[Hit]:
    """The statements of the head a search must embed to apply `newer_first`: the first result
    and the other statements of its holder there, or none when no later one could be about the
    same attribute (so most searches embed nothing)."""
    head = ranked[:HEAD]
    first = _statement(head[0]) if head else None
    if first is None:
        return []
    mine = shape(first.record.content)
    if not mine.statement:
        return []
    others = [h for f in head[1:] if (h := _statement(f)) and holder(h.record) == holder(first.record)]
    shapes = {h.id: shape(h.record.content) for h in others}
    others = [h for h in others if shapes[h.id].statement]
    if not any(_may_follow(h, shapes[h.id], first, mine) for h in others):
        return []
    return [first, *others]


def _may_follow(later: Hit, theirs: Shape, first: Hit, mine: Shape) -> bool:
    """Everything but meaning: later, from another conversation, about the same attribute of the
    same holder as far as the shapes tell (`same_attribute`), not saying that it adds, nor a
    wish or a story of the past ("Might switch to EE", "Used to drive a Sierra")."""
    if not _said_after(later, first):
        return False
    return same_attribute(theirs, mine) and not (theirs.adds or theirs.wish or theirs.past)


def _said_after(later: Hit, earlier: Hit) -> bool:
    """Whether ``later`` was said after ``earlier``, in another conversation (turns of one
    exchange are alike by their shared context, and say one thing, not a change of it)."""
    a, b = later.record, earlier.record
    apart = a.conversation_id is None or a.conversation_id != b.conversation_id
    return a.occurred_at > b.occurred_at and apart


def _put_first(ranked: list[Found], later: Hit, older: Hit, mark: bool) -> list[Found]:
    """``ranked`` with ``later`` first, with the first place's score (so scores still read best
    first), and ``older`` right after it, both marked as this answer reads them (`marked`) when
    ``mark``; the rest of the head in its order, and nothing below it moved."""
    head = ranked[:HEAD]
    lifted: Hit = replace(later, score=max(later.score, head[0].score))
    ended: Hit = older
    if mark:
        lifted, ended = marked(lifted, older)
    return [lifted, ended, *(f for f in head if f.id not in (later.id, older.id)), *ranked[HEAD:]]


def newer_first(
    ranked: list[Found],
    statements: Sequence[Hit],
    cosine: Callable[[Hit, Hit], float],
    asked: Callable[[Hit], float] | None = None,
) -> list[Found]:
    """``ranked`` with the later statement about its first result's attribute moved before it,
    the older one marked as ended only when the later one reads as a replacement (`replaces`;
    the section's comment above says when each moves). ``statements``: what `compared` named
    for ``ranked``; ``cosine``: of two of them, by their own vectors; ``asked``: the question's
    cosine with one of them (None: only a later statement shaped as a replacement moves)."""
    if not statements:
        return ranked
    first, *others = statements
    mine = shape(first.record.content)
    near = sorted(((cosine(first, h), h) for h in others), key=lambda x: -x[0])
    best, later = near[0]
    runner_up = near[1][0] if len(near) > 1 else 0.0
    if best < NEAR or best - runner_up < STANDS_OUT or len(near) < 2:
        # Beside no other statement of the holder, any later note is "nearest".
        return ranked
    theirs = shape(later.record.content)
    if not _may_follow(later, theirs, first, mine):
        return ranked
    mark = replaces(theirs, mine, 1.0, 0.0)
    if not mark and (asked is None or asked(later) < ASKED):  # a guess by meaning needs the question's word
        return ranked
    return _put_first(ranked, later, first, mark)


# --- Answered first ------------------------------------------------------------------------------
# With an answer judge (`ports.AnswerJudge`: a small cross-encoder trained to read a question and
# two statements of one person together, `adapters.judges`), the question about the present is
# asked again of what *Newer first* left. The rules read two statements' own words and shapes;
# the judge reads them with the question, which says what both were found for ("Which camera do I
# use?": "I shoot with a Canon 700D" → "Sold the Canon on eBay and got a used Sony a6400").
#
# The pairs read are the head's statements two by two, the older said before the newer by the same
# holder in another conversation (`_may_answer`), in the head's order (the best-ranked older
# statement first), at most `ANSWER_PAIRS`. When the judge finds the newer statement of a pair the
# answer now (at least `ANSWERED`; of several, the surest), it comes first with the first place's
# score and the older one right after it (when it is first already, both stay where they are).
# The older one is marked in the answer as a write would mark it (`marked`) only when the two also
# read as one value replacing another by their shapes (`supersession.rules.shape.replaces`, as
# *Newer first* marks): the judge orders, and a mark, which hides a fact from a reader that skips
# what no longer holds, needs both. Only within the head, so its set is kept (recall at `HEAD` or
# more cannot move); one model run a pair, and none where the head holds no two statements of one
# holder.
#
# `ANSWERED` and `ANSWER_PAIRS` chosen on half K of benchmarks/data/knowledge_update (the judge
# trained on A-J), L, M and N held out (docs/decisions.md).

#: The judge's probability from which the newer statement of a pair comes first.
ANSWERED = 0.8
#: The most pairs one search reads.
ANSWER_PAIRS = 4


def answered_first(ranked: list[Found], question: str, answers: Answer) -> list[Found]:
    """``ranked`` with the newer statement of the head's pair the judge (``answers``) finds most
    surely the answer now first, at least `ANSWERED`, and the older one right after it; unchanged
    when no pair reaches it or the judge failed (the section's comment above)."""
    head = ranked[:HEAD]
    statements = [h for f in head if (h := _statement(f)) is not None and shape(h.record.content).statement]
    pairs = [(older, newer) for older in statements for newer in statements if _may_answer(newer, older)]
    pairs = pairs[:ANSWER_PAIRS]
    probabilities = answers(question, pairs) if pairs else None
    if probabilities is None:
        return ranked
    best, (older, newer) = max(zip(probabilities, pairs, strict=True), key=lambda x: x[0])
    if best < ANSWERED:
        return ranked
    mark = replaces(shape(newer.record.content), shape(older.record.content), 1.0, 0.0)
    if newer.id != head[0].id:
        return _put_first(ranked, newer, older, mark)
    # First already: both marked where they are, nothing moves.
    read = dict(zip((newer.id, older.id), marked(newer, older), strict=True)) if mark else {}
    return [read.get(f.id, f) for f in ranked]


def _may_answer(newer: Hit, older: Hit) -> bool:
    """Whether ``newer`` may replace ``older`` as far as who said them and when tells: the same
    holder, said later, in another conversation."""
    return holder(newer.record) == holder(older.record) and _said_after(newer, older)


def marked(later: Hit, older: Hit) -> tuple[Hit, Hit]:
    """Both hits as this search reads them once ``later`` replaces ``older``: the older one no
    longer current, its ``valid_to`` when the later one was said and its ``superseded_by`` the
    later one, the later one ``supersedes`` it (`supersession.rules.pairs.linked`, the fields a
    write would store). Copies only: nothing is stored, so reading either memory back shows
    what the write path marked. An older memory a stored link already ends (after the search's
    ``as_of``) keeps that link and stays as the search scored it."""
    fields = linked(older.record, later.record)
    if fields is None:
        return later, older
    older_fields, later_fields = fields
    return (
        replace(later, record=later.record.model_copy(update=later_fields.as_fields())),
        replace(older, record=older.record.model_copy(update=older_fields.as_fields()), current=False),
    )

"""The summary prompts: one template per grain, versioned as data.

A summary records the ``PROMPT_VERSION`` it was made with (and the cascade compares it on every
re-run): change any text below and bump the version, and every period re-run afterwards is made
again with the new prompt instead of being skipped as unchanged.

Every grain asks for the same output shape, dated lines (``[2026-11-20] ...``), because the next
grain up reads those lines as its input: the date of an event survives every fold, and the
deterministic local summarizer, which keeps sentences rather than rewriting them, produces the
same shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from agent_memory.model.grains import Grain
from agent_memory.ports import SummaryInput, SummaryRequest
from agent_memory.supersession.rules.pairs import PAIRS

PROMPT_VERSION = "cascade-2026-11.1"


@dataclass(frozen=True, slots=True)
class PromptTemplate:
    grain: Grain
    #: What this grain's summary is for, read by the model as its task.
    task: str
    #: The most lines the answer may have.
    max_lines: int


SYSTEM = """You keep the long-term memory of an AI agent. You receive the records of one period \
and write the summary the agent will read later instead of those records.

Rules:
- Write plain text, one statement per line, each line starting with the date it is about in \
square brackets, e.g. "[2026-11-20] Alice moved the launch to March 3." Take the dates from the \
records; a statement about several days starts with the first of them. Never invent a date.
- Keep every person's name, role, amount, number and date exactly as the records give them.
- Say only what the records say. No preamble, no headings, no bullet characters, no commentary.
- {task}
- At most {max_lines} lines, most important first within each date; leave out small talk."""

TEMPLATES: dict[Grain, PromptTemplate] = {
    t.grain: t
    for t in (
        PromptTemplate(
            Grain.DAILY,
            "This is one day. Keep its important events, the people involved and their roles, "
            "and the facts and decisions worth remembering.",
            15,
        ),
        PromptTemplate(
            Grain.WEEKLY,
            "This is one week of daily summaries. Tell the week's narrative: what happened, in "
            "order, who drove it, and how things developed over the days.",
            20,
        ),
        PromptTemplate(
            Grain.MONTHLY,
            "This is one month of weekly summaries. Give an overview of the month's events and "
            "of the patterns that recur across its weeks.",
            25,
        ),
        PromptTemplate(
            Grain.QUARTERLY,
            "This is one quarter of monthly summaries. Name its themes and its milestones, "
            "with the dates they were reached.",
            30,
        ),
        PromptTemplate(
            Grain.YEARLY,
            "This is one year of quarterly summaries. Record the year's achievements and the "
            "patterns that ran through it, with the dates of the milestones.",
            40,
        ),
    )
}

PART = (
    "These records are part {index} of {count} of the period; summarize this part only, "
    "in the same form (another pass will merge the parts)."
)


PATTERN_SYSTEM = """You keep the long-term memory of an AI agent that runs the same kind of task \
again and again. You receive experiences from several runs that say the same thing, the most \
typical first, each with its run or date.

Write the pattern they share as one or two plain sentences the agent can act on next time: what \
keeps happening, in which situation, and what to do about it. Keep names, numbers and file or \
system names exactly as the experiences give them. Say only what the experiences support. No \
preamble, no bullet characters."""


PROFILE_SYSTEM = """You keep the long-term memory of an AI agent. You receive what one person \
said about themselves over time, oldest first, each with its date.

Write what is known about this person: who they are, what they do, what they like and dislike, \
the people and things in their life, and what they plan. One fact per line, each starting with \
the date it was said in square brackets; a later statement that changes an earlier one wins, and \
the line says when it changed. Keep names, numbers and places exactly as given. Say only what the \
statements support. No preamble, no bullet characters."""


SUPERSESSION_SYSTEM = """You keep the long-term memory of an AI agent. You receive numbered pairs of \
memories of the same person, each an OLDER and a NEWER one with their dates.

For each pair, decide whether the NEWER memory replaces what the OLDER one says: the same thing \
about the same person (where they live or work, a preference, a plan's date or place, a \
relation) now has another value, so the OLDER one no longer holds. Answer "no" when both can be \
true at once: different things, different people, the same value in other words, or an event \
that does not change the fact (a trip is not a move).

Answer with one line per pair and nothing else: the pair's number, a colon, and yes or no, \
e.g. "1: yes"."""


def system_prompt(grain: Grain, purpose: str = "period") -> str:
    if purpose == "supersession":
        return SUPERSESSION_SYSTEM
    if purpose == "pattern":
        return PATTERN_SYSTEM
    if purpose == "profile":
        return PROFILE_SYSTEM
    template = TEMPLATES[grain]
    return SYSTEM.format(task=template.task, max_lines=template.max_lines)


def user_prompt(
    grain: Grain,
    period: str,
    children: Sequence[SummaryInput],
    part: tuple[int, int] | None = None,
    subject: str | None = None,
) -> str:
    """The period (or the person), then each child under its label (a one-line child on its
    label's line)."""
    head = (
        f"Person: {subject}" if subject else f"Period: {grain.value} {period}" if period else "Experiences:"
    )
    if period == PAIRS:
        head = "Pairs:"
    if part is not None:
        head += "\n" + PART.format(index=part[0], count=part[1])
    blocks = []
    for child in children:
        text = child.text.strip()
        blocks.append(f"[{child.label}] {text}" if "\n" not in text else f"{child.label}:\n{text}")
    return head + "\n\nRecords:\n" + "\n".join(blocks)


def prompts_for(summary: SummaryRequest) -> tuple[str, str]:
    """The system and the user prompt of one summarizer call, whichever model API carries them."""
    grain = Grain(summary.grain)
    user = user_prompt(grain, summary.period, summary.children, summary.part, summary.subject)
    return system_prompt(grain, summary.purpose), user

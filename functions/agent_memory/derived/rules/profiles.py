"""What is known about a person: choosing the statements a profile memory is made of.

Pure (no I/O): `derived.person_profiles` reads an agent's recent memories, asks this module whose
profiles there are and which statements each is made of, has the summarizer state them, and
writes the result.

* **A subject** is a person memory speaks for: a named speaker, or an end user who wrote
  without a speaker name (role ``user``). Subjects are per end user: a profile never mixes two
  end users' memories (the same speaker name under two end users is two profiles), so erasing
  an end user reaches every profile that holds their words.
* **A statement** is a memory the subject said about themselves: a fact, preference, decision
  or event in their name, or a conversation turn in the first person that is not only a
  question. Statements are ranked by how much they disclose (`disclosure`: identity,
  preference and relation words, names, numbers) and at most ``max_statements`` are kept, at
  most ``per_day`` from one day so a profile covers a life and not one busy afternoon.
* **A profile** needs ``min_statements`` statements; its sources are exactly the statements kept,
  so a forget of one of them reaches it (`governance.forget` marks it stale and queues its re-make).

Profiles are made from live memories only: what retention deleted or a user forgot is not in
the next profile. The same memories give the same statements, ids and text, so a re-run writes
nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from agent_memory.model.ids import digest
from agent_memory.model.jobs import AgentJobBase, AgentJobReport
from agent_memory.model.records import MemoryKind, MemoryRecord

#: Metadata key that marks a profile the service made (a client may write profiles too: those
#: are the client's and never re-made or dropped).
PROFILED_BY = "profiled_by"
PROFILER = "profile-job/v1"
#: Metadata key of the subject a profile describes (``{"speaker": ...}`` or ``{"user_id": ...}``).
SUBJECT = "subject"

#: The kinds a statement may be: what a person says, not what the service derived from it.
STATEMENT_KINDS: tuple[MemoryKind, ...] = (
    MemoryKind.CONVERSATION,
    MemoryKind.FACT,
    MemoryKind.PREFERENCE,
    MemoryKind.DECISION,
    MemoryKind.EVENT,
    MemoryKind.NOTE,
)
#: Kinds that state something about their speaker by what they are, first person or not.
_STATING_KINDS = frozenset({MemoryKind.FACT, MemoryKind.PREFERENCE, MemoryKind.DECISION, MemoryKind.EVENT})

#: Typographic apostrophes are read as plain ones before matching (`_plain`).
_FIRST_PERSON = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|My|me|mine|myself)\b")
_CURLY = str.maketrans({"\u2018": "'", "\u2019": "'"})
#: Words that say who someone is, what they like or whom they are close to.
_DISCLOSING = frozenset(
    """
    am was born grew live lived living moved work works worked working job career study studied
    studying school college university degree love loved loves like liked enjoy enjoyed prefer
    favorite favourite hate hated dislike want wanted wish hope plan planning dream goal passion
    hobby hobbies started joined adopted bought married single divorced pregnant raised
    mom mother dad father parents sister brother sibling siblings son daughter kids children
    child wife husband partner boyfriend girlfriend friend friends family grandma grandpa dog cat
    pet pets identity believe faith religion volunteer volunteering team member since years old
    """.split()  # noqa: SIM905 - a word list reads better as words
)
_WORD = re.compile(r"[A-Za-z']+")
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-z]{2,}")
_NUMBER = re.compile(r"\d")


@dataclass(frozen=True, slots=True)
class ProfileRules:
    """When and from what a profile is made (the settings ``profile_*``)."""

    #: Fewer statements than this make no profile (and drop one that exists).
    min_statements: int = 3
    #: The most statements one profile is made of (its sources).
    max_statements: int = 30
    #: The most statements taken from one local day.
    per_day: int = 3
    #: How far back the job reads, in days, and how many memories it reads at most (the newest).
    window_days: int = 365
    max_records: int = 5_000


@dataclass(frozen=True, slots=True)
class Subject:
    """Whose profile: an end user (``None``: memory without one) and the speaker's name, or
    ``None`` for the end user speaking under no name."""

    user_id: str | None
    speaker: str | None

    @property
    def key(self) -> str:
        return f"speaker:{self.speaker.casefold()}" if self.speaker else "user"

    @property
    def name(self) -> str:
        """How the profile names its subject."""
        return self.speaker or f"the user {self.user_id}"

    def metadata(self) -> dict[str, str]:
        if self.speaker:
            return {"speaker": self.speaker}
        return {"user_id": self.user_id or ""}


def subject_of(record: MemoryRecord) -> Subject | None:
    """The person ``record`` speaks for, or None (the agent's own words, a tool's output)."""
    if record.speaker:
        return Subject(record.user_id, " ".join(record.speaker.split()))
    if record.role == "user" and record.user_id:
        return Subject(record.user_id, None)
    return None


def disclosure(text: str) -> int:
    """How much ``text`` says about its speaker: first-person words, then words of identity,
    preference and relation, names and numbers (0: it says nothing about them)."""
    text = text.translate(_CURLY)
    first_person = len(_FIRST_PERSON.findall(text))
    words = [w.casefold().strip("'") for w in _WORD.findall(text)]
    disclosing = sum(1 for w in words if w in _DISCLOSING)
    names = len(_NAME.findall(text))
    numbers = 1 if _NUMBER.search(text) else 0
    return min(first_person, 3) * 2 + min(disclosing, 6) * 3 + min(names, 3) + numbers


def is_statement(record: MemoryRecord) -> bool:
    """Whether ``record`` says something about its speaker: a stating kind, or a first-person
    turn that is more than a question."""
    if record.kind not in STATEMENT_KINDS or record.deleted_at is not None:
        return False
    text = record.content.strip().translate(_CURLY)
    if not text:
        return False
    if record.kind in _STATING_KINDS:
        return True
    if not _FIRST_PERSON.search(text):
        return False
    return not text.endswith("?") or any(p.strip() and not p.strip().endswith("?") for p in _clauses(text))


def _clauses(text: str) -> list[str]:
    return re.split(r"(?<=[.!?])\s+", text)


def statements(
    records: Iterable[MemoryRecord], day_of: dict[str, str], rules: ProfileRules
) -> list[MemoryRecord]:
    """The statements a profile is made of, oldest first: the most disclosing (stating kinds
    first, then newer first), at most ``per_day`` per local day (``day_of`` maps ids to days)."""
    ranked = sorted(
        (r for r in records if is_statement(r)),
        key=lambda r: (
            r.kind not in _STATING_KINDS,
            -disclosure(r.content),
            -r.occurred_at.timestamp(),
            r.id,
        ),
    )
    kept: list[MemoryRecord] = []
    per_day: dict[str, int] = {}
    for r in ranked:
        if len(kept) == rules.max_statements:
            break
        day = day_of.get(r.id, "")
        if per_day.get(day, 0) >= rules.per_day:
            continue
        per_day[day] = per_day.get(day, 0) + 1
        kept.append(r)
    return sorted(kept, key=lambda r: (r.occurred_at, r.id))


def by_subject(records: Iterable[MemoryRecord]) -> dict[Subject, list[MemoryRecord]]:
    """``records`` grouped by the person each speaks for (those of no one left out). Speaker
    names are matched without regard to case or spacing; the first spelling names the group."""
    groups: dict[tuple[str | None, str], tuple[Subject, list[MemoryRecord]]] = {}
    for r in records:
        subject = subject_of(r)
        if subject is None:
            continue
        slot = groups.setdefault((subject.user_id, subject.key), (subject, []))
        slot[1].append(r)
    return dict(groups.values())


def profile_id(tenant_id: str, agent_id: str, subject: Subject) -> str:
    """A profile's id: one per subject of an agent, stable across re-makes."""
    return "prf_" + digest(tenant_id, agent_id, "profile", subject.user_id or "", subject.key)


def is_made_profile(record: MemoryRecord) -> bool:
    """A profile the service made (and so re-makes and drops), not one a client wrote."""
    return record.kind is MemoryKind.PROFILE and record.metadata.get(PROFILED_BY) == PROFILER


def heading(subject: Subject) -> str:
    """The profile's first line: it names the person, so a search for them finds it."""
    return f"What is known about {subject.name}:"


class ProfileJob(AgentJobBase):
    """Make one agent's profiles (the daily schedule, or a forget that hid profiles: ``stale``
    names them, so the run re-makes them under their ids)."""

    job: Literal["profiles"] = "profiles"


@dataclass
class ProfileReport(AgentJobReport):
    """What a run of profile making did (summed over agents)."""

    records: int = 0
    subjects: int = 0
    profiles: list[str] = field(default_factory=list)


def sources_equal(profile: MemoryRecord, chosen: Sequence[MemoryRecord]) -> bool:
    return profile.source_ids == [r.id for r in chosen]

"""What an agent's memory of one person says held when: each attribute's values as a timeline.

`supersession.rules.claims` decides how two memories relate; this module orders all of them. The
memories that state an attribute of a holder (where the user lives, their employer, when the
offsite is), sorted by when they happened (``occurred_at``, not when they were written: a late
write of an older fact takes its place in the past, it does not supersede the present), form the
attribute's *timeline*. Each memory holds from its ``occurred_at`` until the next memory of the
timeline that states another value (`Validity`); a restatement of the same value continues it.
So:

* the **current** value of an attribute is the last one's, and there is only one;
* the value **as of** a time is the one of the last memory that happened at or before it;
* a supersession the daily summary's model **undoes** (it found the two memories were not about
  the same thing after all) takes that memory out of the attribute's timeline, and the timeline is
  exactly what it was without it.

Pure (no I/O): the write path, search (`as_of`) and the cascade's check will read it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime

from agent_memory.supersession.rules.claims import Claim, claims


@dataclass(frozen=True, slots=True)
class Statement:
    """A memory as the timeline reads it."""

    id: str
    text: str
    occurred_at: datetime
    holder: str


@dataclass(frozen=True, slots=True)
class Validity:
    """When a memory's value of an attribute held: from ``valid_from`` until ``valid_to`` (None:
    still), and the memories it superseded and was superseded by (None: none)."""

    attribute: str
    value: str
    valid_from: datetime
    valid_to: datetime | None = None
    supersedes: str | None = None
    superseded_by: str | None = None


@dataclass(frozen=True)
class Timelines:
    """Every attribute's timeline: the memories in order, each with its validity."""

    by_attribute: Mapping[tuple[str, str], list[tuple[str, Validity]]] = field(default_factory=dict)

    def current(self, holder: str, attribute: str) -> str | None:
        """The id of the memory whose value holds now (None: nothing states it)."""
        line = self.by_attribute.get((holder, attribute))
        return line[-1][0] if line else None

    def as_of(self, holder: str, attribute: str, at: datetime) -> str | None:
        """The id of the memory whose value held at ``at`` (None: nothing stated it yet)."""
        held = [sid for sid, v in self.by_attribute.get((holder, attribute), []) if v.valid_from <= at]
        return held[-1] if held else None

    def validity(self, statement_id: str) -> list[Validity]:
        """What the memory states, each attribute with its validity."""
        return [v for line in self.by_attribute.values() for sid, v in line if sid == statement_id]


def timelines(statements: Iterable[Statement], undone: frozenset[tuple[str, str]] = frozenset()) -> Timelines:
    """The timelines of ``statements``; ``undone`` holds (memory id, attribute) pairs the cascade
    ruled out: that memory does not count in that attribute's timeline."""
    ordered = sorted(statements, key=lambda s: (s.occurred_at, s.id))
    stated: dict[tuple[str, str], list[tuple[Statement, Claim]]] = {}
    values_seen: dict[tuple[str, str], str] = {}  # (holder, value) -> attribute, for "switched from"
    for statement in ordered:
        placed: set[str] = set()  # one value per attribute per memory: its first ("Lisbon", not "Alfama")
        for claim in claims(statement.text, statement.holder):
            attribute = claim.attribute
            if claim.old is not None:  # "switched from A to B": A's attribute, if anything stated A
                attribute = values_seen.get((statement.holder, claim.old), "")
                if not attribute:
                    continue
            if (statement.id, attribute) in undone or attribute in placed:
                continue
            placed.add(attribute)
            values_seen[(statement.holder, claim.value)] = attribute
            stated.setdefault((statement.holder, attribute), []).append((statement, claim))
    out: dict[tuple[str, str], list[tuple[str, Validity]]] = {}
    for key, line in stated.items():
        # runs of one value: a restatement continues the value its run began with
        runs: list[list[tuple[Statement, Claim]]] = []
        for statement, claim in line:
            if runs and runs[-1][0][1].value == claim.value:
                runs[-1].append((statement, claim))
            else:
                runs.append([(statement, claim)])
        validities: list[tuple[str, Validity]] = []
        for i, run in enumerate(runs):
            after = runs[i + 1][0][0] if i + 1 < len(runs) else None
            before = runs[i - 1][0][0] if i > 0 else None
            for n, (statement, claim) in enumerate(run):
                validities.append(
                    (
                        statement.id,
                        Validity(
                            attribute=key[1],
                            value=claim.value,
                            valid_from=statement.occurred_at,
                            valid_to=after.occurred_at if after else None,
                            # the run's first replaced the value before; a restatement replaced nothing
                            supersedes=before.id if before and n == 0 else None,
                            superseded_by=after.id if after else None,
                        ),
                    )
                )
        out[key] = validities
    return Timelines(out)

"""Memories the service derives from other memories and keeps current by a job: recognised
patterns (`domain.patterns`) and profiles (`domain.profiles`).

Both live while what they were made from makes them, so neither the daily summary folds them (it
folds their sources already; folded too, a re-made or dropped one would live on in its day's
summary, and a forgotten source with it) nor does a plan's retention remove them (their job
drops them when their sources no longer make them).
"""

from __future__ import annotations

from agent_memory.domain.patterns import is_recognised_pattern
from agent_memory.domain.profiles import is_made_profile
from agent_memory.domain.records import MemoryRecord


def is_derived(record: MemoryRecord) -> bool:
    """A pattern the service recognised or a profile it made (not one a client wrote)."""
    return is_recognised_pattern(record) or is_made_profile(record)

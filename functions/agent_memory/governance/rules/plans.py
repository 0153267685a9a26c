"""Plans: how long each grain of memory is kept, and the default lifetimes of items by kind.

A tenant's plan is a name (``free``, ``starter``, ``pro``, ``unlimited``) stored with its keys in
the tenants table the authorizer reads; the retention run looks it up each time it runs, so an
upgrade takes effect at the next cleanup. Retention is per grain, coarser grains kept longer:
memory fades from detail to summary, never from everything to nothing at once.

The defaults below can be overridden whole or in part with ``AGENT_MEMORY_PLANS``, a JSON object
``{"plan": {"grain": hours-or-null}}`` (null: never forgotten), merged over the defaults.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from datetime import timedelta
from typing import Final

from agent_memory.errors import ConfigurationError
from agent_memory.model.grains import Grain
from agent_memory.model.records import MemoryKind

DAY: Final = 24
WEEK: Final = 7 * DAY
MONTH: Final = 30 * DAY  # a retention month: 30 days (cutoffs need not follow the calendar)
QUARTER: Final = 91 * DAY
YEAR: Final = 365 * DAY

#: Plan -> grain -> hours kept (None: kept for ever).
Retention = dict[Grain, int | None]


def _kept(*, working_hours: int, days: int, weeks: int, months: int, quarters: int, years: int) -> Retention:
    """A plan's retention, each summary grain counted in its own period (30 days of dailies, 6
    weeks of weeklies...) as a plan is priced and documented, and stored as hours."""
    return {
        Grain.WORKING: working_hours,
        Grain.DAILY: days * DAY,
        Grain.WEEKLY: weeks * WEEK,
        Grain.MONTHLY: months * MONTH,
        Grain.QUARTERLY: quarters * QUARTER,
        Grain.YEARLY: years * YEAR,
    }


DEFAULT_PLANS: Final[dict[str, Retention]] = {
    "free": _kept(working_hours=48, days=30, weeks=6, months=6, quarters=4, years=2),
    "starter": _kept(working_hours=120, days=60, weeks=12, months=12, quarters=8, years=4),
    "pro": _kept(working_hours=240, days=120, weeks=24, months=24, quarters=16, years=8),
    "unlimited": dict.fromkeys(Grain),
}
#: The plan of a tenant whose plan is unknown or unnamed: the most forgetful one is the safe
#: default for cost, and the tenant table always names a plan for a paying tenant.
DEFAULT_PLAN: Final = "free"

#: Default lifetime of a working memory by kind, in days, when the write names no ``ttl_days``
#: (None: no expiry; a "remember this" is a fact or preference and lives until retention).
DEFAULT_TTL_DAYS: Final[dict[MemoryKind, int | None]] = {
    MemoryKind.CONVERSATION: 7,
    MemoryKind.TASK: 30,
    MemoryKind.DECISION: 90,
    MemoryKind.ERROR: 14,
    # Experiences are what an agent learns from: kept until retention, like facts.
}

#: Importance decays by this factor per week without a retrieval; below `DECAY_FLOOR` a
#: working memory is eligible for cleanup.
DECAY_PER_WEEK: Final = 0.95
DECAY_FLOOR: Final = 0.1


def load_plans(raw: str | None) -> dict[str, Retention]:
    """The defaults with ``raw`` (JSON, see the module doc) merged over them."""
    plans = {name: dict(grains) for name, grains in DEFAULT_PLANS.items()}
    if not raw:
        return plans
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ConfigurationError(f"AGENT_MEMORY_PLANS is not JSON: {exc}") from exc
    if not isinstance(data, Mapping):
        raise ConfigurationError("AGENT_MEMORY_PLANS must be an object of plans")
    for name, grains in data.items():
        if not isinstance(grains, Mapping):
            raise ConfigurationError(f"plan {name!r} must be an object of grains")
        plan = plans.setdefault(str(name), dict(DEFAULT_PLANS[DEFAULT_PLAN]))
        for grain, hours in grains.items():
            try:
                key = Grain(grain)
            except ValueError as exc:
                raise ConfigurationError(f"plan {name!r}: unknown grain {grain!r}") from exc
            if hours is not None and (not isinstance(hours, int) or isinstance(hours, bool) or hours < 1):
                raise ConfigurationError(f"plan {name!r}, {grain}: hours must be a positive integer or null")
            plan[key] = hours
    return plans


def hours_of(plans: Mapping[str, Retention], plan: str | None) -> Retention:
    """Hours each grain is kept on ``plan`` (an unknown plan is the default plan)."""
    return dict(plans.get(plan or DEFAULT_PLAN, plans[DEFAULT_PLAN]))


def retention_of(plans: Mapping[str, Retention], plan: str | None, grain: Grain) -> timedelta | None:
    """How long ``grain`` is kept on ``plan`` (an unknown plan is the default plan)."""
    hours = plans.get(plan or DEFAULT_PLAN, plans[DEFAULT_PLAN])[Grain(grain)]
    return None if hours is None else timedelta(hours=hours)


def default_ttl_days(kind: MemoryKind) -> int | None:
    return DEFAULT_TTL_DAYS.get(MemoryKind(kind))


def decayed_importance(importance: float, weeks_unretrieved: float) -> float:
    """``importance * 0.95**weeks``: what a never-retrieved memory is still worth."""
    return importance * DECAY_PER_WEEK ** max(weeks_unretrieved, 0.0)

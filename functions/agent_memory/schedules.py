"""When the service's background jobs run: one list for AWS and for the local runtime.

The CDK stack makes one EventBridge Scheduler schedule per entry (its expression, evaluated in
the configured timezone, invoking the named handler with `Schedule.aws_input`); the local
runtime's in-process scheduler (`agent_memory.local.scheduler`) fires the same handlers at the
same times. Adding a job is adding one line here.

Expressions are EventBridge Scheduler cron expressions, ``cron(minutes hours day-of-month month
day-of-week year)``, in ``settings.timezone``. The cascade's runs are staggered an hour apart,
finest grain first, so each run normally finds its children already made (and heals them when
not).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

#: The event field that carries the instant a schedule fired.
SCHEDULED_TIME_FIELD = "scheduled_time"
#: EventBridge Scheduler replaces this placeholder in a target's input with the scheduled time.
AWS_SCHEDULED_TIME = "<aws.scheduler.scheduled-time>"


@dataclass(frozen=True)
class Schedule:
    """``function`` is a module of `agent_memory.handlers`; ``event`` its input. With
    ``scheduled_time``, the event also carries the instant the schedule fired."""

    name: str
    expression: str
    function: str
    event: dict[str, Any] = field(default_factory=dict)
    scheduled_time: bool = False

    def aws_input(self) -> dict[str, Any]:
        """The schedule target's input in AWS."""
        if not self.scheduled_time:
            return dict(self.event)
        return {**self.event, SCHEDULED_TIME_FIELD: AWS_SCHEDULED_TIME}

    def local_event(self, fired_at: datetime) -> dict[str, Any]:
        """The event the local scheduler passes for a firing at ``fired_at``."""
        if not self.scheduled_time:
            return dict(self.event)
        return {**self.event, SCHEDULED_TIME_FIELD: fired_at.isoformat()}


SCHEDULES: tuple[Schedule, ...] = (
    Schedule("summarize-daily", "cron(15 0 * * ? *)", "summarize_dispatch", {"grain": "daily"}, True),
    Schedule("summarize-weekly", "cron(15 1 ? * MON *)", "summarize_dispatch", {"grain": "weekly"}, True),
    Schedule("summarize-monthly", "cron(15 2 1 * ? *)", "summarize_dispatch", {"grain": "monthly"}, True),
    Schedule(
        "summarize-quarterly", "cron(15 3 1 1,4,7,10 ? *)", "summarize_dispatch", {"grain": "quarterly"}, True
    ),
    Schedule("summarize-yearly", "cron(15 4 1 1 ? *)", "summarize_dispatch", {"grain": "yearly"}, True),
    Schedule("retention", "cron(15 5 * * ? *)", "retention"),
    # Pattern recognition over each agent's recent experiences (`derived.pattern_recognition`), daily.
    Schedule("patterns", "cron(45 5 * * ? *)", "summarize_dispatch", {"job": "patterns"}, True),
    # What is known about each person an agent's memory speaks for (`derived.person_profiles`), daily.
    Schedule("profiles", "cron(55 5 * * ? *)", "summarize_dispatch", {"job": "profiles"}, True),
)

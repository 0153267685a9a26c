"""The local runtime's in-process scheduler: EventBridge Scheduler's part on one machine.

It fires the handlers of `agent_memory.schedules.SCHEDULES` (the same list the CDK stack turns
into EventBridge schedules) at the same cron times, in ``settings.timezone``:

=====================  ===========================  =============================================
schedule               expression                   fires
=====================  ===========================  =============================================
summarize-daily        ``cron(15 0 * * ? *)``       every day at 00:15
summarize-weekly       ``cron(15 1 ? * MON *)``     Mondays at 01:15
summarize-monthly      ``cron(15 2 1 * ? *)``       the 1st of every month at 02:15
summarize-quarterly    ``cron(15 3 1 1,4,7,10 ? *)``  Jan, Apr, Jul and Oct 1st at 03:15
summarize-yearly       ``cron(15 4 1 1 ? *)``       Jan 1st at 04:15
=====================  ===========================  =============================================

A laptop is not a data centre: it sleeps and is switched off at 00:15. So the scheduler keeps the
last firing of each schedule in ``scheduler.json`` in the data directory and, when it starts or
wakes, fires every occurrence it missed since then (at most `MAX_CATCH_UP` per schedule; the
finest grain's schedule first, each schedule's occurrences oldest first, each with its own
scheduled time, so each takes the period it was due for). The very first
start records the present and fires nothing: history is summarized on request
(``agent-memory summarize``), not by surprise. A firing whose handler fails is retried at the next
wake-up (within `MAX_SLEEP_S`), not recorded as done.

Turn it off with ``AGENT_MEMORY_SCHEDULER_ENABLED=false`` or ``agent-memory serve --no-scheduler``.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path

from agent_memory.local.background import BackgroundLoop
from agent_memory.local.cron import CronExpression
from agent_memory.local.lambda_context import LocalContext
from agent_memory.observability import discard_unpublished_metrics, logger
from agent_memory.ports import Clock
from agent_memory.private_files import private_dir, private_file
from agent_memory.schedules import SCHEDULES, Schedule

#: Missed occurrences fired per schedule after a long sleep (a year of days).
MAX_CATCH_UP = 366
#: The longest the scheduler sleeps between looks at the clock (so a suspended laptop that
#: wakes up catches up within a minute).
MAX_SLEEP_S = 60.0

Invoke = Callable[[Schedule, datetime], None]


def invoke_handler(schedule: Schedule, fired_at: datetime) -> None:
    """Run the schedule's handler in this process, as its Lambda would run in AWS."""
    module = importlib.import_module(f"agent_memory.handlers.{schedule.function}")
    try:
        module.handler(schedule.local_event(fired_at), LocalContext(function_name=schedule.name))
    finally:
        discard_unpublished_metrics()


class LocalScheduler(BackgroundLoop):
    def __init__(
        self,
        schedules: Sequence[Schedule] = SCHEDULES,
        timezone: str = "UTC",
        state_path: Path | None = None,
        *,
        clock: Clock,
        invoke: Invoke = invoke_handler,
        max_catch_up: int = MAX_CATCH_UP,
    ) -> None:
        super().__init__("scheduler", failure="scheduler iteration failed", backoff_s=MAX_SLEEP_S)
        self._entries = [(s, CronExpression.parse(s.expression)) for s in schedules]
        self._tz = timezone
        self._state_path = state_path
        self._clock = clock
        self._invoke = invoke
        self._max_catch_up = max_catch_up
        self._last: dict[str, datetime] = self._load()

    # -- what is due ------------------------------------------------------------------------------

    def due(self, since: datetime, until: datetime) -> list[tuple[datetime, Schedule]]:
        """Every firing in ``(since, until]``, in time order (at most `max_catch_up` each)."""
        firings: list[tuple[datetime, int, Schedule]] = []
        for order, (schedule, cron) in enumerate(self._entries):
            firings += [(t, order, schedule) for t in self._firings(cron, since, until)]
        firings.sort(key=lambda f: (f[0], f[1]))
        return [(t, schedule) for t, _, schedule in firings]

    def _firings(self, cron: CronExpression, since: datetime, until: datetime) -> list[datetime]:
        out: list[datetime] = []
        t = cron.next_after(since, self._tz)
        while t <= until:
            out.append(t)
            t = cron.next_after(t, self._tz)
        return out[-self._max_catch_up :]

    def next_firing(self) -> datetime:
        now = self._clock.now()
        return min(cron.next_after(now, self._tz) for _, cron in self._entries)

    # -- firing -----------------------------------------------------------------------------------

    def run_pending(self) -> int:
        """Fire everything due since each schedule last fired; how many firings succeeded."""
        now = self._clock.now()
        fired = 0
        firsts = {s.name: now for s, _ in self._entries if s.name not in self._last}
        if firsts:  # first start: the present is where the schedules begin
            self._last.update(firsts)
            self._save()
        for schedule, cron in self._entries:
            last = self._last[schedule.name]
            for at in self._firings(cron, last, now):
                try:
                    self._invoke(schedule, at)
                except Exception:  # retried at the next wake-up; the other schedules go on
                    logger.exception(
                        "scheduled run failed", extra={"schedule": schedule.name, "at": at.isoformat()}
                    )
                    break
                fired += 1
                self._last[schedule.name] = at
                self._save()
        return fired

    def _step(self) -> float:
        """Fire what is due, then sleep until the next firing (at most `MAX_SLEEP_S`, so a
        laptop that wakes from a suspend catches up soon)."""
        self.run_pending()
        wait = (self.next_firing() - self._clock.now()).total_seconds()
        return min(max(wait, 0.5), MAX_SLEEP_S)

    # -- state ------------------------------------------------------------------------------------

    def _load(self) -> dict[str, datetime]:
        if self._state_path is None or not self._state_path.exists():
            return {}
        try:
            raw = json.loads(self._state_path.read_text())
            return {str(k): datetime.fromisoformat(v) for k, v in raw.items() if isinstance(v, str)}
        except (OSError, ValueError) as exc:
            logger.warning("scheduler state unreadable; starting afresh", extra={"error": str(exc)})
            return {}

    def _save(self) -> None:
        if self._state_path is None:
            return
        private_dir(self._state_path.parent)
        tmp = self._state_path.with_suffix(".tmp")
        tmp.write_text(json.dumps({k: v.isoformat() for k, v in self._last.items()}, indent=1))
        private_file(tmp)
        tmp.replace(self._state_path)

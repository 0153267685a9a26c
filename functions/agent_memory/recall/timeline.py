"""What an agent remembers over time: one lane per grain, and one period opened up.

The operator's question is "what does it actually remember?". The timeline answers it at a
glance (how many working memories each local day holds, which summaries exist and how much each
folded); a period answers it in detail (the summary, the children it folds now, and the ids it
was made from that are gone since, so a recalled fact can be traced to what it came from).

Days are local days in the cascade's timezone, the same boundaries the summarizer uses, so a
day's count in the working lane is exactly what that day's summary folds.
"""

from __future__ import annotations

from datetime import date, timedelta

from agent_memory.cascade.rules.periods import (
    CHILD_GRAIN,
    covered_span,
    local_date,
    local_midnight,
    parent_key,
    require_summary_grain,
)
from agent_memory.errors import InvalidTimeKeyError, ValidationFailedError
from agent_memory.model.grains import SUMMARY_GRAINS, Grain, parse_time_key, time_key_for
from agent_memory.model.ids import summary_id
from agent_memory.model.operator_views import Lane, ParentPeriod, PeriodCount, PeriodView, Timeline
from agent_memory.model.records import MemoryRecord
from agent_memory.model.types import FIRST_DAY, LAST_DAY, shifted_day
from agent_memory.ports import Clock, TimelineStore

#: The longest timeline one request may ask for (a year and a leap day, with room to spare).
MAX_TIMELINE_DAYS = 400
#: The timeline when no range is given: the last four weeks, today included.
DEFAULT_TIMELINE_DAYS = 28
#: Children returned with a period (``children_total`` has the full count).
MAX_PERIOD_CHILDREN = 500


def _invalid(field: str, message: str) -> ValidationFailedError:
    return ValidationFailedError(message, [{"loc": ["query", field], "msg": message, "type": "value_error"}])


def _folded(summary: MemoryRecord) -> int:
    """How many children a summary folded: its own count (``source_ids`` keeps at most 1,000)."""
    count = summary.metadata.get("children_count")
    return count if isinstance(count, int) and not isinstance(count, bool) else len(summary.source_ids)


class TimelineService:
    def __init__(self, store: TimelineStore, clock: Clock, timezone: str) -> None:
        self._store = store
        self._clock = clock
        self._tz = timezone

    def timeline(
        self, tenant_id: str, agent_id: str, since: date | None = None, until: date | None = None
    ) -> Timeline:
        """Counts per local day of working memory, and every live summary whose span overlaps
        ``[since, until]``, per grain."""
        now = self._clock.now()
        for name, day in (("since", since), ("until", until)):
            if day is not None and not FIRST_DAY <= day <= LAST_DAY:
                raise _invalid(name, f"{name} must be between {FIRST_DAY} and {LAST_DAY}")
        until = until or local_date(now, self._tz)
        since = since or shifted_day(until, -(DEFAULT_TIMELINE_DAYS - 1))
        if since > until:
            raise _invalid("since", "since must not be after until")
        days = (until - since).days + 1
        if days > MAX_TIMELINE_DAYS:
            raise _invalid("since", f"a timeline spans at most {MAX_TIMELINE_DAYS} days, not {days}")

        edges = [local_midnight(since + timedelta(days=i), self._tz) for i in range(days + 1)]
        counts = self._store.histogram(tenant_id, agent_id, Grain.WORKING, edges, now)
        working = [
            PeriodCount(
                time_key=time_key_for(Grain.DAILY, since + timedelta(days=i)),
                start=edges[i],
                end=edges[i + 1],
                records=count,
                summary_id=None,
            )
            for i, count in enumerate(counts)
            if count
        ]
        lanes = [Lane(grain=Grain.WORKING, periods=working)]
        for grain in SUMMARY_GRAINS:
            summaries = self._store.records_in_span(tenant_id, agent_id, grain, edges[0], edges[-1], now)
            lanes.append(
                Lane(
                    grain=grain,
                    periods=[
                        PeriodCount(
                            time_key=s.time_key or "",
                            start=s.period_start or s.occurred_at,
                            end=s.period_end or s.occurred_at,
                            records=_folded(s),
                            summary_id=s.id,
                        )
                        for s in summaries
                        if s.time_key
                    ],
                )
            )
        return Timeline(timezone=self._tz, since=since, until=until, lanes=lanes)

    def period(self, tenant_id: str, agent_id: str, grain: Grain, time_key: str) -> PeriodView:
        """One summary period: the summary (when made and live), the live children in its span,
        and the ids it was made from that no longer are."""
        try:
            grain = require_summary_grain(grain)
            time_key = parse_time_key(grain, time_key)
        except InvalidTimeKeyError as exc:
            raise _invalid("time_key", exc.message) from exc
        now = self._clock.now()
        start, end = covered_span(grain, time_key, self._tz)
        record = self._store.get(tenant_id, agent_id, summary_id(tenant_id, agent_id, grain.value, time_key))
        summary = record if record is not None and record.is_live(now) else None
        child_grain = CHILD_GRAIN[grain]
        children = self._store.records_in_span(tenant_id, agent_id, child_grain, start, end, now)
        live_ids = {c.id for c in children}
        missing = [i for i in summary.source_ids if i not in live_ids] if summary is not None else []
        parent = None
        if grain is not Grain.YEARLY:
            parent = ParentPeriod(grain=_parent_grain(grain), time_key=parent_key(grain, time_key))
        return PeriodView(
            grain=grain,
            time_key=time_key,
            start=start,
            end=end,
            summary=summary,
            child_grain=child_grain,
            children=children[:MAX_PERIOD_CHILDREN],
            children_total=len(children),
            missing_sources=missing,
            parent=parent,
        )


def _parent_grain(grain: Grain) -> Grain:
    return SUMMARY_GRAINS[SUMMARY_GRAINS.index(grain) + 1]

"""`make smoke`: check a running deployment end to end through its HTTP API, then clean up.

It writes three memories for a fresh agent and end user, waits until they are stored, searches
for one, forgets another (and checks it is gone), asks for the day's summary and waits for it,
exports the agent's memory and reads the export back, and finally erases what it wrote (the end
user's memories, summaries included). Each step prints what it checked; a failed step prints
why, in words an operator can act on, and the run exits 1.

Against AWS (``--stack``: the URL from the stack's outputs), and only there, it also asks AWS
(`adapters.deployment_probe`) what the HTTP API cannot tell: whether this account may call the
summary model (the Bedrock model access step in README's "Deploy"), whether a dead-letter queue
holds messages, and whether an alarm of the stack is in ALARM. The same script runs against the
local runtime in the test suite (the HTTP contract is the same), so it cannot fall behind the API.

    python -m agent_memory.local.smoke --stack agent-memory-dev      # AGENT_MEMORY_API_KEY set
    python -m agent_memory.local.smoke --url http://127.0.0.1:8000 --key am_...
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from agent_memory.client import MemoryClient
from agent_memory.client.api_errors import AgentMemoryClientError, ApiError, NotFoundError

if TYPE_CHECKING:
    from agent_memory.adapters.deployment_probe import DeploymentProbe

#: What the memories say: one word in each that nothing else in any agent's memory says.
FACTS = (
    "Smoke check {run}: the release train {word} leaves on Thursday.",
    "Smoke check {run}: the staging database {word} was resized to 64 GB.",
    "Smoke check {run}: the on-call rota {word} changes every Monday.",
)


#: How long ago the memories happened (a finished day is summarized, an unfinished one is not).
DAYS_AGO = 2


class SmokeCheckError(Exception):
    """A step found the deployment not doing what it should; the message says what to look at."""


@dataclass
class Check:
    name: str
    ok: bool
    detail: str


@dataclass
class Report:
    """What the run checked, in order; ``ok`` when every check passed."""

    checks: list[Check] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return bool(self.checks) and all(c.ok for c in self.checks)

    def lines(self) -> list[str]:
        return [f"{'ok  ' if c.ok else 'FAIL'} {c.name}: {c.detail}" for c in self.checks]


@dataclass
class Smoke:
    """One run against ``client`` (a key with the admin scope); ``probe`` is AWS's side, if any."""

    client: MemoryClient
    probe: DeploymentProbe | None = None
    #: How long to wait for a write, a summary or an export: seconds, as a deployment needs.
    wait_s: float = 120.0
    poll_s: float = 1.0
    sleep: Callable[[float], None] = time.sleep
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    report: Report = field(default_factory=Report)

    @property
    def agent(self) -> str:
        return f"smoke-{self.run_id}"

    @property
    def user(self) -> str:
        return f"smoke-user-{self.run_id}"

    def run(self) -> Report:
        """Every step; the HTTP steps stop at the first failure, the clean-up always runs."""
        written: list[str] = []
        try:
            written = self._write()
            self._search(written)
            self._forget(written)
            self._summarize()
            self._export(written)
        except SmokeCheckError:
            pass  # already in the report
        finally:
            self._clean_up(bool(written))
        if self.probe is not None:
            self._aws()
        return self.report

    # --- the steps -------------------------------------------------------------------------------

    @contextmanager
    def _step(self, name: str) -> Iterator[list[str]]:
        """Record the step: ``detail[0]`` once it passed, or why it failed."""
        detail = [""]
        try:
            yield detail
        except SmokeCheckError as exc:
            self.report.checks.append(Check(name, False, str(exc)))
            raise
        except ApiError as exc:
            self.report.checks.append(Check(name, False, _explain(exc)))
            raise SmokeCheckError(str(exc)) from exc
        except (AgentMemoryClientError, TimeoutError) as exc:
            self.report.checks.append(Check(name, False, f"{type(exc).__name__}: {exc}"))
            raise SmokeCheckError(str(exc)) from exc
        self.report.checks.append(Check(name, True, detail[0]))

    def _word(self, i: int) -> str:
        return f"zq{self.run_id}{i}"

    def _write(self) -> list[str]:
        with self._step("write") as detail:
            # two days ago: a day that has ended in every timezone, so its summary can be made
            when = (datetime.now(UTC) - timedelta(days=DAYS_AGO)).isoformat()
            items = [
                {
                    "content": fact.format(run=self.run_id, word=self._word(i)),
                    "user_id": self.user,
                    "occurred_at": when,
                }
                for i, fact in enumerate(FACTS)
            ]
            ids = [a.id for a in self.client.write(self.agent, items).accepted]
            if len(ids) != len(FACTS):
                raise SmokeCheckError(f"{len(FACTS)} memories sent, {len(ids)} accepted")
            detail[0] = f"{len(ids)} memories accepted (agent {self.agent})"
        with self._step("stored") as detail:
            started = time.monotonic()
            self.client.wait_until_stored(self.agent, timeout_s=self.wait_s, interval_s=self.poll_s)
            detail[0] = f"stored within {time.monotonic() - started:.1f} s"
        return ids

    def _search(self, ids: Sequence[str]) -> None:
        with self._step("search") as detail:
            hits = self._hits(self._word(0))
            if ids[0] not in hits:
                raise SmokeCheckError(f"searching for the first memory's words found {hits or 'nothing'}")
            detail[0] = f"the first memory is hit {hits.index(ids[0]) + 1} of {len(hits)}"

    def _forget(self, ids: Sequence[str]) -> None:
        with self._step("forget") as detail:
            self.client.forget(self.agent, ids[1])
            try:
                self.client.get(self.agent, ids[1])
            except NotFoundError:
                pass
            else:
                raise SmokeCheckError(f"memory {ids[1]} is still there after it was forgotten")
            if ids[1] in self._hits(self._word(1)):
                raise SmokeCheckError(f"a search still finds memory {ids[1]} after it was forgotten")
            detail[0] = "the forgotten memory is gone from get and search"

    def _summarize(self) -> None:
        with self._step("summary") as detail:
            day = datetime.now(UTC).date() - timedelta(days=DAYS_AGO)
            # the day before to the day after: the memories' day is one of them in any timezone
            queued = self.client.summarize(
                grain="daily", from_=day - timedelta(days=1), to=day + timedelta(days=1)
            )
            deadline = time.monotonic() + self.wait_s
            while not (summaries := self.client.list_page(self.agent, grain="daily").items):
                if time.monotonic() >= deadline:
                    raise SmokeCheckError(
                        f"no daily summary {self.wait_s:.0f} s after {queued.jobs_queued} job(s) were "
                        "queued: the summary model failed or is not reachable (see the model access, "
                        "dead-letter and alarm checks below, and the SummarizeWorker's logs)"
                    )
                self.sleep(self.poll_s)
            detail[0] = f"{len(summaries)} daily summary made ({queued.jobs_queued} job(s) queued)"

    def _export(self, ids: Sequence[str]) -> None:
        with self._step("export") as detail:
            started = self.client.start_export(agent_id=self.agent)
            done = self.client.wait_for_export(started.id, timeout_s=self.wait_s, interval_s=self.poll_s)
            if done.status != "done":
                raise SmokeCheckError(f"export {done.id} {done.status}: {done.error}")
            out = io.BytesIO()
            self.client.download_export(done.id, out)
            lines = [json.loads(line) for line in out.getvalue().splitlines() if line.strip()]
            exported = json.dumps(lines)
            missing = [i for i in (ids[0], ids[2]) if i not in exported]
            if missing:
                raise SmokeCheckError(f"the export of {len(lines)} lines lacks memories {missing}")
            if ids[1] in exported:
                raise SmokeCheckError(f"the export holds memory {ids[1]}, forgotten before it was made")
            detail[0] = f"{len(lines)} lines, the kept memories in it and the forgotten one not"

    def _clean_up(self, wrote: bool) -> None:
        if not wrote:
            return
        try:
            with self._step("clean up") as detail:
                erased = self.client.erase_user(self.agent, self.user)
                left = [m.id for m in self.client.iter_memories(self.agent)]
                if left:
                    raise SmokeCheckError(f"memories left after the erasure: {left}")
                detail[0] = f"the run's memories erased ({erased.model_dump(exclude_none=True)})"
        except SmokeCheckError:
            pass

    def _hits(self, query: str) -> list[str]:
        return [r.id for r in self.client.search(self.agent, query).results]

    def _aws(self) -> None:
        assert self.probe is not None
        for name, problem, fine in (
            ("model access", self.probe.model_access(), "the summary model answers this account"),
            ("dead-letter queues", self.probe.dead_letters(), "every dead-letter queue is empty"),
            ("alarms", self.probe.alarms_firing(), "no alarm of the stack is in ALARM"),
        ):
            self.report.checks.append(Check(name, problem is None, problem or fine))


def _explain(error: ApiError) -> str:
    """An API error as what to do about it."""
    if error.status == 401:
        return f"{error}: the API key was refused (create one with `agent-memory keys create --admin`)"
    if error.status == 403:
        return f"{error}: the key lacks a scope the smoke test needs (it needs an admin key)"
    if error.status >= 500:
        return f"{error}: the service failed; its function's logs have the request id"
    return str(error)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--stack", default=os.environ.get("AGENT_MEMORY_STACK"), help="the stack's name")
    parser.add_argument("--url", default=os.environ.get("AGENT_MEMORY_URL"), help="the API's base URL")
    parser.add_argument("--key", default=os.environ.get("AGENT_MEMORY_API_KEY"), help="an admin API key")
    parser.add_argument(
        "--wait", type=float, default=180.0, help="seconds to wait for each asynchronous step"
    )
    args = parser.parse_args(argv)
    if not args.key or not (args.stack or args.url):
        parser.error("give --stack (or --url) and --key (or AGENT_MEMORY_STACK/URL and AGENT_MEMORY_API_KEY)")
    probe = None
    url = args.url
    if args.stack:
        from agent_memory import container

        probe = container.deployment_probe(args.stack)
        url = url or probe.api_url()
    print(f"smoke test of {url}")
    with MemoryClient(url, args.key) as client:
        report = Smoke(client, probe, wait_s=args.wait).run()
    print("\n".join(report.lines()))
    print("passed" if report.ok else "FAILED")
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main())

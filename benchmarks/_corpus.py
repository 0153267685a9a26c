"""Shared helpers of the benchmarks: a synthetic agent memory, percentiles, and the run's record.

Why synthetic and templated: a benchmark must give the same input on every machine and every run,
without downloading a data set. A seeded `random.Random` fills templates of what an assistant agent
remembers (decisions, facts, tasks, preferences, events, incidents, notes, small talk) with people,
projects, clients, places, dates and amounts. The sentences vary in length, wording and subject
the way real memories do, so the embedder, FTS5 and the vector search see realistic work; they are
not meant to be read as a retrieval-quality benchmark.

The helpers that set up the environment and write ``results/<name>.json`` live here too, so the
scripts report the same machine description and the same statistics.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import http.client
import importlib.util
import itertools
import json
import math
import os
import platform
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from importlib import metadata
from pathlib import Path
from typing import Any

#: Memories happen in the year before this instant; searches with a window measure from it. Fixed,
#: so that every run stores the same records (and in the past, so no memory is from the future).
ANCHOR = datetime(2026, 11, 1, tzinfo=UTC)
SPAN_DAYS = 365
DEFAULT_SEED = 20261101
RESULTS_DIR = Path(__file__).resolve().parent / "results"

# fmt: off
PEOPLE = (
    "Alice", "Bob", "Carmen", "Dmitri", "Elena", "Farid", "Grace", "Hiro", "Ines", "Jonas", "Kavya",
    "Liam", "Mei", "Nadia", "Omar", "Priya", "Quentin", "Rosa", "Sven", "Tomás", "Uma", "Viktor",
    "Wen", "Ximena", "Yusuf", "Zoe", "Aisha", "Bruno", "Chloé", "Diego", "Emeka", "Freya", "Gustavo",
    "Hana", "Ivan", "Julia", "Kenji", "Lena", "Mateo", "Nora",
)
PROJECTS = (
    "project Atlas", "project Borealis", "project Cobalt", "project Driftwood", "project Ember",
    "project Falcon", "project Granite", "project Harbor", "project Juniper", "project Kestrel",
    "project Lumen", "project Meridian", "project Nimbus", "project Orchid", "project Redwood",
    "the checkout redesign", "the billing migration", "the mobile app v3", "the data warehouse move",
    "the onboarding revamp", "the search relaunch", "the SOC 2 audit", "the partner portal",
    "the pricing page", "the support chatbot", "the Android rewrite", "the EU data residency work",
)
CLIENTS = (
    "Acme Corp", "Globex", "Initech", "Umbrella Health", "Stark Logistics", "Wayne Foods", "Hooli",
    "Vandelay Imports", "Soylent Labs", "Tyrell Robotics", "Cyberdyne Systems", "Wonka Retail",
    "Oscorp Energy", "Aperture Science", "Massive Dynamic", "Northwind Traders", "Contoso Bank",
    "Fabrikam", "Pied Piper", "Gringotts Finance",
)
CITIES = (
    "Lisbon", "Berlin", "Nairobi", "Toronto", "Singapore", "São Paulo", "Oslo", "Austin", "Seoul",
    "Melbourne", "Dublin", "Warsaw", "Mexico City", "Cape Town", "Osaka", "Madrid", "Chicago",
    "Tallinn", "Bangalore", "Zurich",
)
SYSTEMS = (
    "Postgres", "Kafka", "Kubernetes", "Redis", "Terraform", "Snowflake", "the CI pipeline",
    "the staging cluster", "the Stripe webhooks", "the auth service", "the mobile SDK",
    "Elasticsearch", "the nightly ETL", "the billing cron job", "the CDN", "the GraphQL gateway",
)
TEAMS = (
    "design", "platform", "growth", "finance", "legal", "support", "data", "security", "marketing",
    "sales",
)
FOODS = ("ramen", "tacos", "sourdough", "espresso", "dim sum", "pho", "falafel", "paella", "sushi", "curry")
HOBBIES = (
    "bouldering", "marathon training", "sailing", "chess", "gardening", "pottery", "birdwatching",
    "salsa dancing", "woodworking", "photography",
)
CHANNELS = ("email", "Slack", "a short call", "a written summary", "the weekly doc", "text messages")
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)
# fmt: on

#: (kind, share of the corpus, importance, templates). Each template names its topic slot first.
_KINDS: tuple[tuple[str, float, float, tuple[str, ...]], ...] = (
    (
        "decision",
        0.12,
        0.8,
        (
            "project|We decided to move the {project} launch to {date}.",
            "project|{person} and {person2} agreed to freeze scope on {project} until {date}.",
            "client|Final call: {client} gets a {pct}% discount if they sign before {date}.",
            "system|The team chose {system} for {project} after comparing three options.",
            "project|{person} signed off on a budget of {amount} for {project}.",
            "team|The {team} team will own {project} from {date} on.",
            "project|We dropped the offline mode from {project}; it would cost {weeks} more weeks.",
            "client|Decision: renew the {client} contract at {amount} a year, no price increase.",
            "team|From now on {team} reviews every change to {system} before it ships.",
            "project|Go/no-go for {project} is {weekday} at {hour}; {person} makes the call.",
        ),
    ),
    (
        "fact",
        0.15,
        0.6,
        (
            "client|{client} has {count} seats on the enterprise plan.",
            "person|{person} is based in {city} and works on the {team} team.",
            "system|{system} runs {count} nodes in production.",
            "project|{project} has a total budget of {amount}.",
            "client|The main contact at {client} is {person}; their renewal is on {date}.",
            "person|{person} reports to {person2} since the reorg in {month}.",
            "project|{project} ships with version {version} of {system}.",
            "client|{client} pays invoices net {terms} and their PO number is PO-{ticket}.",
            "person|{person}'s phone number ends in {digits}, and they prefer calls after {hour}.",
            "team|The {team} team has {small} open roles and a hiring budget of {amount}.",
        ),
    ),
    (
        "task",
        0.12,
        0.6,
        (
            "project|TODO: {person} to send the {project} status report by {date}.",
            "client|Follow up with {client} about the overdue invoice of {amount}.",
            "system|{person} needs to rotate the credentials for {system} before {date}.",
            "project|Book a retro for {project} with {person} and {person2} next {weekday}.",
            "client|Prepare the quarterly business review deck for {client} by {date}.",
            "team|Remind the {team} team to submit expenses before the {month} close.",
            "system|Open ticket OPS-{ticket}: upgrade {system} to {version}.",
            "person|Schedule the onboarding session for {person}, who starts on {date}.",
            "project|Draft the {project} launch email and share it with {person} for review.",
            "client|Send {client} the updated security questionnaire; {person} owns it.",
        ),
    ),
    (
        "preference",
        0.08,
        0.6,
        (
            "person|{person} prefers updates by {channel}, not meetings.",
            "person|{person} likes {food} and is vegetarian.",
            "person|{person} does not take calls before {hour} because of school runs.",
            "client|{client} wants all reports as PDF with the numbers in {currency_name}.",
            "person|{person} asked to be called by their first name and to skip the small talk.",
            "team|The {team} team prefers async reviews in the weekly doc over live demos.",
            "person|{person} wants the dashboard in dark mode and the week to start on {weekday}.",
            "client|{client} only accepts production changes in their maintenance window on {weekday}s.",
        ),
    ),
    (
        "event",
        0.10,
        0.5,
        (
            "person|{person} flies to {city} on {date} for the {client} workshop.",
            "team|The {team} offsite is in {city} from {date}, about {count} people.",
            "client|Quarterly review with {client} held today; {person} presented the roadmap.",
            "project|{project} went live for {pct}% of users on {date}.",
            "person|{person} is on parental leave from {date} for {weeks} weeks.",
            "person|{person} joined as a senior engineer on the {team} team.",
            "client|{client} visited our {city} office and met {person} and {person2}.",
            "project|The {project} demo day is on {date} at {hour}.",
        ),
    ),
    (
        "error",
        0.06,
        0.7,
        (
            "system|Incident: {system} was down for {minutes} minutes after a bad deploy.",
            "system|{system} ran out of disk on {date}; {person} cleaned up old snapshots.",
            "project|The {project} release broke sign-in for {count} users; rolled back by {person}.",
            "system|Error rate on {system} spiked to {pct}% after the {version} upgrade.",
            "client|{client}'s webhooks failed for {hours} hours because their certificate expired.",
            "system|Memory leak in {system} traced to the connection pool; fix in ticket OPS-{ticket}.",
        ),
    ),
    (
        "note",
        0.12,
        0.4,
        (
            "project|Notes from the {project} sync: {person} is blocked on {system}.",
            "client|{client} mentioned they are evaluating a competitor before {month}.",
            "person|{person} said {project} is behind by about {weeks} weeks.",
            "system|Load test: {system} handled {count} requests per second at p99 {minutes} ms.",
            "team|The {team} team's velocity was {small} points lower this sprint.",
            "project|Idea from {person}: reuse the {system} integration for {project}.",
            "client|{client} spent {amount} with us last quarter, up {pct}% on the year.",
            "person|{person} thinks the {team} team needs another designer.",
            "project|Risk on {project}: the vendor contract ends on {date}.",
        ),
    ),
    (
        "conversation",
        0.25,
        0.3,
        (
            "person|{person} just got back from {city} and loved the {food} there.",
            "person|How was your weekend? {person} went {hobby} and is sore today.",
            "person|{person} is training for a half marathon in {city} on {date}.",
            "person|Happy birthday to {person}! Cake in the kitchen at {hour}.",
            "person|{person} recommended a {food} place near the {city} office.",
            "person|It's raining again; {person} is working from home on {weekday}.",
            "person|{person} asked whether anyone wants to join {hobby} on {weekday}.",
            "project|Quick question from {person}: is {project} still on track for {month}?",
            "client|Can you remind me what {client} asked for in the last call?",
            "person|{person} adopted a puppy and named it {pet}.",
            "person|Thanks {person}, that summary was exactly what I needed.",
            "project|Let me check with {person} and get back to you about {project}.",
            "team|The {team} team is ordering {food} for lunch; {person} is collecting orders.",
            "person|{person} will be offline until {weekday}, back in {city} after that.",
        ),
    ),
)

# fmt: off
_QUERIES = (
    "what did we decide about {project}?", "how much is the {client} contract worth?",
    "when is {person} flying to {city}?", "who is working on {project}?",
    "what went wrong with {system}?", "what food does {person} like?",
    "what is the deadline for {project}?", "did {client} agree to the renewal price?",
    "what does {person} do for fun?", "any recent incidents with {system}?",
    "what budget does the {team} team have?", "which tasks are open for {person}?",
    "how does {person} want to receive updates?", "what happened in the last {client} review?",
    "what is the status of {project}?", "when is the {team} offsite?", "where is {person} based?",
    "what discount did we offer {client}?", "what did {person} say about {project}?",
    "why is {project} delayed?", "who is the contact person at {client}?",
    "how many nodes does {system} have?", "who is into {hobby}?",
    "what did {client} complain about?", "who approved the {project} budget?",
)
_PETS = ("Biscuit", "Mango", "Pixel", "Olive", "Waffles", "Pepper", "Luna", "Noodle")
_CURRENCIES = (("$", "US dollars"), ("€", "euros"), ("£", "pounds"))
# fmt: on


@dataclass(frozen=True, slots=True)
class Memory:
    """One synthetic memory, shaped like a `WriteItem` of the HTTP contract."""

    content: str
    kind: str
    topic: str
    tags: tuple[str, ...]
    importance: float
    occurred_at: datetime
    role: str | None
    #: Who said it (a conversation turn); None in the generated corpus, see `with_speakers`.
    speaker: str | None = None

    def write_item(self, *, with_time: bool = True) -> dict[str, Any]:
        """The JSON item of ``POST /v1/agents/{agent}/memories``."""
        item: dict[str, Any] = {
            "content": self.content,
            "kind": self.kind,
            "topic": self.topic,
            "tags": list(self.tags),
            "importance": self.importance,
        }
        if self.role:
            item["role"] = self.role
        if self.speaker:
            item["speaker"] = self.speaker
        if with_time:
            item["occurred_at"] = self.occurred_at.isoformat().replace("+00:00", "Z")
        return item


#: Who says the conversation turns of a corpus `with_speakers` gives speakers to, in turn.
SPEAKERS = ("Alice", "Bob", "Chen", "Dana")


def with_speakers(memories: Sequence[Memory], speakers: Sequence[str] = SPEAKERS) -> list[Memory]:
    """``memories`` with each conversation turn said by one of ``speakers`` in turn: a corpus in
    which a query can name the person who said something (the search then asks its store twice)."""
    turns = itertools.count()
    return [
        dataclasses.replace(m, speaker=speakers[next(turns) % len(speakers)])
        if m.kind == "conversation"
        else m
        for m in memories
    ]


def _slug(text: str) -> str:
    words = "".join(c if c.isalnum() else " " for c in text.lower()).split()
    return "-".join(w for w in words if w not in {"the", "project"}) or "misc"


def _date(rng: random.Random, around: datetime) -> str:
    day = around + timedelta(days=rng.randint(-20, 60))
    style = rng.random()
    if style < 0.5:
        return f"{MONTHS[day.month - 1]} {day.day}"
    if style < 0.8:
        return day.date().isoformat()
    return f"{WEEKDAYS[day.weekday() % 5]} the {day.day}{_ordinal(day.day)}"


def _ordinal(n: int) -> str:
    return "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")


def _amount(rng: random.Random, symbol: str) -> str:
    value = rng.choice((rng.randint(5, 99) * 100, rng.randint(10, 950) * 1000, rng.randint(1, 40) * 50_000))
    if value >= 1_000_000:
        return f"{symbol}{value / 1_000_000:.1f}M"
    if value >= 10_000 and rng.random() < 0.5:
        return f"{symbol}{value // 1000}k"
    return f"{symbol}{value:,}"


def _fields(rng: random.Random, occurred: datetime) -> dict[str, str]:
    person, person2 = rng.sample(PEOPLE, 2)
    symbol, currency_name = rng.choice(_CURRENCIES)
    return {
        "person": person,
        "person2": person2,
        "project": rng.choice(PROJECTS),
        "client": rng.choice(CLIENTS),
        "city": rng.choice(CITIES),
        "system": rng.choice(SYSTEMS),
        "team": rng.choice(TEAMS),
        "food": rng.choice(FOODS),
        "hobby": rng.choice(HOBBIES),
        "channel": rng.choice(CHANNELS),
        "weekday": rng.choice(WEEKDAYS),
        "month": rng.choice(MONTHS),
        "pet": rng.choice(_PETS),
        "date": _date(rng, occurred),
        "amount": _amount(rng, symbol),
        "currency_name": currency_name,
        "pct": str(rng.choice((5, 10, 12, 15, 20, 25, 30, 40, 50, 75))),
        "count": f"{rng.choice((12, 40, 85, 120, 250, 600, 1200, 4800, 15000)):,}",
        "small": str(rng.randint(2, 9)),
        "weeks": str(rng.randint(2, 12)),
        "minutes": str(rng.randint(3, 180)),
        "hours": str(rng.randint(2, 30)),
        "hour": f"{rng.randint(8, 17)}:{rng.choice(('00', '15', '30', '45'))}",
        "version": f"{rng.randint(1, 16)}.{rng.randint(0, 12)}",
        "ticket": str(rng.randint(1000, 9999)),
        "digits": f"{rng.randint(0, 9999):04d}",
        "terms": str(rng.choice((15, 30, 45, 60))),
    }


def generate_memories(n: int, seed: int = DEFAULT_SEED, anchor: datetime = ANCHOR) -> list[Memory]:
    """``n`` distinct memories of one agent, the same for the same ``seed``, oldest first.

    Each happens at a random instant of the `SPAN_DAYS` days before ``anchor``.
    """
    rng = random.Random(seed)
    kinds = [k for k, *_ in _KINDS]
    weights = [w for _, w, *_ in _KINDS]
    by_kind = {k: (importance, templates) for k, _, importance, templates in _KINDS}
    seen: set[str] = set()
    out: list[Memory] = []
    attempts = 0
    while len(out) < n:
        attempts += 1
        if attempts > 50 * n + 1000:
            raise RuntimeError(f"the templates cannot make {n} distinct memories")
        kind = rng.choices(kinds, weights)[0]
        importance, templates = by_kind[kind]
        topic_slot, template = rng.choice(templates).split("|", 1)
        occurred = anchor - timedelta(seconds=rng.randint(60, SPAN_DAYS * 86_400))
        fields = _fields(rng, occurred)
        content = template.format(**fields)
        if content in seen:
            continue
        seen.add(content)
        topic = fields[topic_slot] if topic_slot != "team" else f"{fields['team']} team"
        topic = topic.removeprefix("the ").removeprefix("project ")
        out.append(
            Memory(
                content=content,
                kind=kind,
                topic=topic,
                tags=(kind, _slug(topic)),
                importance=round(min(1.0, max(0.0, importance + rng.uniform(-0.1, 0.1))), 2),
                occurred_at=occurred,
                role=rng.choice(("user", "assistant")) if kind == "conversation" else None,
            )
        )
    out.sort(key=lambda m: m.occurred_at)
    return out


def generate_queries(n: int, seed: int = DEFAULT_SEED + 1) -> list[str]:
    """``n`` questions about the corpus's people, projects, clients and systems.

    Questions, not stored sentences: a search has to find memories by meaning and shared words.
    Repeats are allowed (a real agent asks the same thing again).
    """
    rng = random.Random(seed)
    return [rng.choice(_QUERIES).format(**_fields(rng, ANCHOR)) for _ in range(n)]


# --------------------------------------------------------------------------------------------
# Statistics
# --------------------------------------------------------------------------------------------


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0-100), interpolated between the closest ranks.

    The same definition as numpy's default (``linear``), so figures can be checked with it.
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= p <= 100:
        raise ValueError(f"p must be in [0, 100], not {p}")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def summarize(values: Sequence[float], digits: int = 2) -> dict[str, float]:
    """n, mean, p50, p95, p99 and max of ``values``, rounded for reading."""
    return {
        "n": len(values),
        "mean": round(sum(values) / len(values), digits),
        "p50": round(percentile(values, 50), digits),
        "p95": round(percentile(values, 95), digits),
        "p99": round(percentile(values, 99), digits),
        "max": round(max(values), digits),
    }


def table(rows: Sequence[tuple[str, dict[str, float]]], unit: str = "ms") -> str:
    """A fixed-width table of `summarize` results, one row per label."""
    width = max(len(label) for label, _ in rows)
    head = f"{'':{width}}  {'p50':>8} {'p95':>8} {'p99':>8} {'max':>8} {'mean':>8}   ({unit})"
    lines = [head]
    for label, s in rows:
        cells = " ".join(f"{s[k]:8.2f}" for k in ("p50", "p95", "p99", "max", "mean"))
        lines.append(f"{label:{width}}  {cells}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# The run: environment, machine, results
# --------------------------------------------------------------------------------------------


def configure_environment(data_dir: Path, embedder: str) -> None:
    """What `make dev` runs with, quietened, pointed at ``data_dir``. Call before importing the app.

    Powertools reads its variables when its objects are built (at import of the app's
    observability module), so the order matters.
    """
    os.environ["AGENT_MEMORY_DATA_DIR"] = str(data_dir)
    os.environ["AGENT_MEMORY_EMBEDDER"] = embedder
    os.environ["POWERTOOLS_METRICS_DISABLED"] = "true"
    os.environ["POWERTOOLS_TRACE_DISABLED"] = "true"
    os.environ["POWERTOOLS_LOG_LEVEL"] = "WARNING"
    os.environ.setdefault("POWERTOOLS_SERVICE_NAME", "agent-memory")
    os.environ.setdefault("POWERTOOLS_METRICS_NAMESPACE", "AgentMemory")


def import_handlers() -> None:
    """Import both handler modules before `LocalRuntime.start`.

    The runtime imports them lazily: the API handler on the first request (an HTTP thread), the
    writer on the worker's first poll (its own thread). When the two imports run at the same time,
    Powertools' modules can be seen half-initialised, and the first request fails with an
    ImportError (seen on this machine). Importing them first, in one thread, avoids the race.
    """
    import agent_memory.handlers.api
    import agent_memory.handlers.writer  # noqa: F401


def note_stray_output(text: str) -> None:
    """Say what the runtime printed to stdout while it served (it should print nothing).

    Powertools 3.x prints a CloudWatch EMF line whenever a metric reaches 100 values, even with
    ``POWERTOOLS_METRICS_DISABLED=true`` (its flush skips printing, but also clearing, when
    disabled), so a long-running local server prints one every 50 searches. The lines are kept
    out of the table and counted here.
    """
    lines = [line for line in text.splitlines() if line.strip()]
    if lines:
        emf = sum('"_aws"' in line for line in lines)
        print(
            f"note: the runtime printed {len(lines)} line(s) to stdout while serving ({emf} CloudWatch EMF)",
            file=sys.stderr,
        )


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _memory_gib() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def _version(package: str) -> str | None:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return None


def load_average() -> list[float] | None:
    """The 1/5/15-minute load: other work on the machine skews the figures."""
    return [round(x, 2) for x in os.getloadavg()] if hasattr(os, "getloadavg") else None


def machine(load_at_start: list[float] | None = None) -> dict[str, Any]:
    """What the figures were measured on (they mean little without it)."""
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": _memory_gib(),
        "os": platform.platform(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "numpy": _version("numpy"),
        "onnxruntime": _version("onnxruntime"),
        "tokenizers": _version("tokenizers"),
        "load_average_at_start": load_at_start,
        "load_average_at_end": load_average(),
    }


@functools.cache
def code_version() -> dict[str, Any]:
    """The commit the figures were measured at, and whether the working tree differed from it.

    Read once, when the benchmark starts (`at_start`), and kept: a run of an hour measures the
    code it loaded, not a commit made while it ran. The checkout is the one the service's package
    is imported from (another worktree's, with ``PYTHONPATH``, for a before-and-after run)."""
    spec = importlib.util.find_spec("agent_memory")
    origin = spec.origin if spec is not None else None
    root = Path(origin).resolve().parents[2] if origin else Path(__file__).resolve().parent.parent

    def git(*args: str) -> str | None:
        try:
            done = subprocess.run(
                ["git", *args], cwd=root, capture_output=True, text=True, timeout=10, check=True
            )
        except (OSError, subprocess.SubprocessError):
            return None
        return done.stdout.strip()

    commit = git("rev-parse", "HEAD")
    status = git("status", "--porcelain", "--", "functions")
    return {"commit": commit, "uncommitted_changes_in_functions": None if status is None else bool(status)}


def at_start() -> list[float] | None:
    """What a run notes as it starts: the load average (returned, for `machine`) and the code it
    loaded (`code_version`, kept for the result it writes at the end)."""
    code_version()
    return load_average()


def result_header(benchmark: str, started: float, load_at_start: list[float] | None) -> dict[str, Any]:
    """The fields every result opens with: which benchmark, when, how long (from ``started``, a
    `time.perf_counter` reading), on what machine and at what commit."""
    return {
        "benchmark": benchmark,
        "run_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "wall_s": round(time.perf_counter() - started, 1),
        "machine": machine(load_at_start),
        "code": code_version(),
    }


def add_judge_option(parser: argparse.ArgumentParser) -> None:
    """``--judge minilm|none``: the writer's update judge; ``--answer-judge minilm|none``: the
    search's answer judge (`use_judge` sets both for the app)."""
    parser.add_argument(
        "--judge", default="minilm", choices=["minilm", "none"], help="the writer's update judge"
    )
    parser.add_argument(
        "--answer-judge", default="none", choices=["minilm", "none"], help="the search's answer judge"
    )


def use_judge(args: argparse.Namespace) -> None:
    """Run the app with ``--judge`` and ``--answer-judge`` (its settings read the variables when
    it starts)."""
    os.environ["AGENT_MEMORY_UPDATE_JUDGE"] = args.judge
    os.environ["AGENT_MEMORY_ANSWER_JUDGE"] = args.answer_judge


def add_ranking_option(parser: argparse.ArgumentParser) -> None:
    """``--ranking NAME=VALUE`` (repeatable): a ranking override every search of the run sends, so
    a screen of a weight is a command (read back by `ranking_overrides`)."""
    parser.add_argument(
        "--ranking",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a ranking override every search sends (lexical_weight=0.3); repeatable",
    )


def ranking_overrides(args: argparse.Namespace) -> dict[str, float]:
    """The ``--ranking`` overrides as a search body's ``ranking`` (numbers only)."""
    return {name: float(value) for name, _, value in (r.partition("=") for r in args.ranking)}


def result_name(base: str, values: dict[str, Any], defaults: dict[str, Any]) -> str:
    """``base`` for a run with the default parameters, else ``base`` plus the ones that differ.

    So `make bench` always refreshes the same files, and an experiment never overwrites them.
    """
    changed = [f"{k}{values[k]}" for k in defaults if values[k] != defaults[k]]
    return "-".join([base, *changed])


def write_result(name: str, payload: dict[str, Any]) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    path = RESULTS_DIR / f"{name}.json"
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n")
    return path


# --------------------------------------------------------------------------------------------
# Loading a store directly
# --------------------------------------------------------------------------------------------

LOAD_BATCH = 256


def records_of(memories: Sequence[Memory], tenant_id: str, agent_id: str, created: datetime) -> list[Any]:
    """The records the write path would make of these memories (same ids, hashes and topics)."""
    from agent_memory.model.ids import content_hash, memory_id
    from agent_memory.model.records import MemoryKind, MemoryRecord, normalise_topic

    return [
        MemoryRecord(
            id=memory_id(tenant_id, agent_id, "", "", m.role or "", m.occurred_at.isoformat(), m.content),
            tenant_id=tenant_id,
            agent_id=agent_id,
            kind=MemoryKind(m.kind),
            role=m.role,  # type: ignore[arg-type]
            speaker=m.speaker,
            content=m.content,
            topic=normalise_topic(m.topic),
            topic_raw=m.topic,
            importance=m.importance,
            tags=list(m.tags),
            content_hash=content_hash(m.content),
            created_at=created,
            updated_at=created,
            occurred_at=m.occurred_at,
        )
        for m in memories
    ]


def load_memories(
    store: Any, embedder: Any, memories: Sequence[Memory], tenant_id: str, agent_id: str
) -> dict[str, float]:
    """Embed (as the writer would: `tenancy.models.record_vectors`, each memory's words
    and its setting, each distinct text once) and `put` ``memories`` in batches.

    The fastest honest way to fill a store: no HTTP, no queue, no dedup-on-write lookups, one
    transaction per batch. Returns the seconds spent loading the model, embedding and storing.
    """
    from agent_memory.ports import StoredRecord
    from agent_memory.tenancy.models import record_vectors

    started = time.perf_counter()
    embedder.embed(["load the model"])
    model_s = time.perf_counter() - started
    embed_s = put_s = 0.0
    now = datetime.now(UTC)
    for start in range(0, len(memories), LOAD_BATCH):
        records = records_of(memories[start : start + LOAD_BATCH], tenant_id, agent_id, now)
        t0 = time.perf_counter()
        vectors = record_vectors(embedder, records)
        t1 = time.perf_counter()
        store.put([StoredRecord(r, v) for r, v in zip(records, vectors, strict=True)])
        embed_s += t1 - t0
        put_s += time.perf_counter() - t1
        done = min(start + LOAD_BATCH, len(memories))
        print(f"\r  loaded {done:,}/{len(memories):,}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    return {
        "model_load_s": round(model_s, 3),
        "embed_s": round(embed_s, 3),
        "put_s": round(put_s, 3),
        "total_s": round(time.perf_counter() - started, 3),
        "memories_per_s": round(len(memories) / (embed_s + put_s), 1) if memories else 0.0,
    }


#: A chosen write is no nearer than this to a stored memory or another write (the writer merges
#: above 0.92, and a merged write keeps the older id, which a write -> searchable poll never sees).
MAX_WRITE_COSINE = 0.85


def distinct_writes(
    candidates: Sequence[Memory], embedder: Any, store: Any, tenant_id: str, agent_id: str, n: int
) -> list[Memory]:
    """``n`` of ``candidates``, in order, none within `MAX_WRITE_COSINE` of another or of the
    agent's stored memories (by the vectors the writer makes, `load_memories`); embedded 64 at a
    time, so only as many as needed cost an embedding."""
    from agent_memory.model.grains import Grain
    from agent_memory.ports import NearestQuery
    from agent_memory.tenancy.models import record_vectors

    now = datetime.now(UTC)
    chosen: list[tuple[Memory, Any]] = []
    for start in range(0, len(candidates), 64):
        chunk = candidates[start : start + 64]
        vectors = record_vectors(embedder, records_of(chunk, tenant_id, agent_id, now))
        for memory, vector in zip(chunk, vectors, strict=True):
            if any(float(v @ vector) > MAX_WRITE_COSINE for _, v in chosen):
                continue
            near = store.nearest(NearestQuery(tenant_id, agent_id, Grain.WORKING, vector, now))
            if near is not None and near[1] > MAX_WRITE_COSINE:
                continue
            chosen.append((memory, vector))
            if len(chosen) == n:
                return [m for m, _ in chosen]
    raise RuntimeError(f"only {len(chosen)} of {len(candidates)} candidates are distinct enough; ask fewer")


def write_then_find(
    client: Any, agent_id: str, memory: Memory, poll_s: float, timeout_s: float
) -> dict[str, Any]:
    """POST one memory, then search for its text every ``poll_s`` until the id the POST returned
    comes back (or ``timeout_s`` passes): the memory's id, the POST's ms, write -> searchable ms
    (None: not found), and each poll's round trip in ms."""
    write_path = f"/v1/agents/{agent_id}/memories"
    started = time.perf_counter()
    status, data = client.post(write_path, {"items": [memory.write_item(with_time=False)]})
    posted = time.perf_counter()
    if status != 202:
        raise RuntimeError(f"write answered {status}: {data[:300]!r}")
    record_id = json.loads(data)["accepted"][0]["id"]
    polls: list[float] = []
    while time.perf_counter() - started < timeout_s:
        t0 = time.perf_counter()
        status, data = client.post(f"{write_path}/search", {"query": memory.content, "max_results": 10})
        t1 = time.perf_counter()
        polls.append((t1 - t0) * 1000)
        if status != 200:
            raise RuntimeError(f"search answered {status}: {data[:300]!r}")
        if any(r["id"] == record_id for r in json.loads(data)["results"]):
            return {
                "id": record_id,
                "post_ms": (posted - started) * 1000,
                "searchable_ms": (t1 - started) * 1000,
                "polls": polls,
            }
        time.sleep(poll_s)
    return {"id": record_id, "post_ms": (posted - started) * 1000, "searchable_ms": None, "polls": polls}


# --------------------------------------------------------------------------------------------
# HTTP clients of the local API
# --------------------------------------------------------------------------------------------


class NewConnectionClient:
    """``urllib.request``: a new TCP connection for every request, as most scripts call an API."""

    name = "new connection"

    def __init__(self, base_url: str, key: str) -> None:
        self._base = base_url
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        request = urllib.request.Request(
            self._base + path, data=json.dumps(body).encode(), headers=self._headers, method="POST"
        )
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, response.read()
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read()

    def close(self) -> None:
        return None


class KeepAliveClient:
    """``http.client`` (what ``urllib`` is built on) over one persistent connection."""

    name = "keep-alive"

    def __init__(self, base_url: str, key: str) -> None:
        host, port = base_url.removeprefix("http://").rsplit(":", 1)
        self._conn = http.client.HTTPConnection(host, int(port), timeout=30)
        self._headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, bytes]:
        self._conn.request("POST", path, body=json.dumps(body).encode(), headers=self._headers)
        response = self._conn.getresponse()
        return response.status, response.read()

    def close(self) -> None:
        self._conn.close()


def timed_http_search(client: Any, agent: str, body: dict[str, Any]) -> tuple[float, int]:
    """One ``POST .../memories/search``, from sending the request to reading the whole answer:
    ms and hits (any status but 200 is an error)."""
    started = time.perf_counter()
    status, data = client.post(f"/v1/agents/{agent}/memories/search", body)
    elapsed_ms = (time.perf_counter() - started) * 1000
    if status != 200:
        raise RuntimeError(f"search answered {status}: {data[:300]!r}")
    return elapsed_ms, len(json.loads(data)["results"])


@contextlib.contextmanager
def fresh_data_dir(
    parser: argparse.ArgumentParser, given: Path | None, prefix: str = "agent-memory-bench-"
) -> Iterator[Path]:
    """``--data-dir`` if given (it must be empty: a benchmark needs fresh stores), else a temporary
    directory removed afterwards."""
    if given is not None:
        if given.exists() and any(given.iterdir()):
            parser.error(f"--data-dir {given} is not empty: the benchmark needs a fresh store")
        yield given
        return
    data_dir = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield data_dir
    finally:
        shutil.rmtree(data_dir, ignore_errors=True)

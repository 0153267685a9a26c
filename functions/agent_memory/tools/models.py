"""The tools' argument models: projections of the contract's request models.

Each argument takes its type and its constraints from the field of the API model it feeds
(`SearchRequest`, `WriteItem`, ...), and only adds the description an LLM reads. So the limits
live in one place: a limit changed in `domain.api` changes the tool schemas with it, and no
schema is written by hand. The tool name is the model's title.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from agent_memory.contract.v1 import ContextRequest, SearchRequest, WriteItem
from agent_memory.contract.v1_experience import FeedbackRequest
from agent_memory.experience.rules.confidence import DEFAULT_CONFIDENCE
from agent_memory.model.records import EXPERIENCE_KINDS, MemoryKind
from agent_memory.model.types import MemoryId

#: Unknown arguments are refused, so a misspelt one is an error the LLM sees and can fix.
_ARGS = ConfigDict(extra="forbid")

#: `WriteItem.kind` narrowed to the kinds of an experience (`records.EXPERIENCE_KINDS`), in the
#: contract's order: `record_outcome` writes experiences only.
EXPERIENCE_KIND: Any = Literal[tuple(k.value for k in MemoryKind if k in EXPERIENCE_KINDS)]


def field_of(
    model: type[BaseModel], name: str, description: str, *, required: bool = False, **changes: Any
) -> tuple[Any, FieldInfo]:
    """``(annotation, FieldInfo)`` of ``model.name`` with its constraints, a new description and
    any ``changes`` (a different default), for `pydantic.create_model`. ``required`` drops the
    default: a tool may need what the request can do without (a search of shared knowledge
    needs its query)."""
    source = model.model_fields[name]
    info = FieldInfo.merge_field_infos(source, description=description, **changes)
    if required:
        info.default = PydanticUndefined
        info.default_factory = None
    return source.annotation, info


def tool_args(name: str, doc: str, **fields: Any) -> type[BaseModel]:
    """The argument model of the tool ``name``: its ``doc`` is what the LLM reads of the tool, and
    an unknown argument is refused (`_ARGS`)."""
    return create_model(name, __config__=_ARGS, __doc__=doc, **fields)


SearchMemoryArgs = tool_args(
    "search_memory",
    "Search long-term memory by meaning, at one grain (or all), within a window of days ago.",
    query=field_of(
        SearchRequest,
        "query",
        "What to look for, in natural language. Leave out to get the newest memories in the window.",
    ),
    grain=field_of(
        SearchRequest,
        "grain",
        "Which memory to search: 'working' (raw recent memories), a summary grain ('daily', 'weekly', "
        "'monthly', 'quarterly', 'yearly'), or 'all' to blend every grain.",
    ),
    min_days_ago=field_of(
        SearchRequest, "min_days_ago", "Only memories at least this many days old (0 = up to now)."
    ),
    max_days_ago=field_of(
        SearchRequest, "max_days_ago", "Only memories at most this many days old (leave out: no limit)."
    ),
    max_results=field_of(SearchRequest, "max_results", "How many memories to return at most."),
    as_of=field_of(
        SearchRequest,
        "as_of",
        "Answer as of this time (ISO 8601, e.g. '2026-04-15T00:00:00Z'): what was believed then, the "
        "days counted back from it. Leave out for now. A memory a newer one replaced says so.",
    ),
    sources=field_of(
        SearchRequest,
        "sources",
        "Where to search: ['private'] is this agent's own memory (leave out: only that), ['shared'] "
        "the organisation's shared knowledge (published documents; found only with a query), "
        "['private', 'shared'] both in one ranking. The grain and the days narrow memories only.",
    ),
    kinds=field_of(
        SearchRequest,
        "kinds",
        "Only memories of these kinds (leave out: any), e.g. ['success', 'failure', 'insight', "
        "'pattern'] for what was learned from outcomes.",
    ),
    min_confidence=field_of(
        SearchRequest,
        "min_confidence",
        "Only experiences at least this sure, from 0 to 1 (memories without a confidence are left out).",
    ),
    patterns_first=field_of(
        SearchRequest,
        "patterns_first",
        "Put well-confirmed patterns (lessons seen across several runs) before every other result.",
    ),
)


def _query_required(args: Any) -> Any:
    """Shared knowledge is found by meaning only: a search without a query would find nothing,
    so it is refused as a wrong argument the model can fix rather than answered with nothing."""
    if args.query is None or not args.query.strip():
        raise ValueError("query must say what to look for: shared knowledge is found by meaning")
    return args


#: Typed loosely: pydantic wraps a validator in a descriptor that `create_model`'s hint does not name.
_KNOWLEDGE_VALIDATORS: dict[str, Any] = {"query_required": model_validator(mode="after")(_query_required)}

SearchKnowledgeArgs = tool_args(
    "search_knowledge",
    (
        "Search the organisation's shared knowledge (the specs, decision records, runbooks and policies "
        "it published) by meaning. Each result is a passage of a document with its citation (title > "
        "section, version): cite it when you rely on it, e.g. 'per ADR-12, Consequences'. Use "
        "search_memory for what this agent itself was told."
    ),
    __validators__=_KNOWLEDGE_VALIDATORS,
    query=field_of(SearchRequest, "query", "What to look for, in natural language.", required=True),
    max_results=field_of(SearchRequest, "max_results", "How many passages to return at most."),
    tags=field_of(
        SearchRequest, "tags", "Only documents that carry every one of these tags (leave out: any)."
    ),
)

RecallContextArgs = tool_args(
    "recall_context",
    (
        "Recall what long-term memory holds about a subject as one block of dated lines (memories and "
        "summaries of every grain, oldest first), packed to a token budget, after the passages of the "
        "organisation's shared knowledge that bear on it (tagged 'shared', with their citation). Use it "
        "to load background before answering; use search_memory to narrow by time or to get ids."
    ),
    query=field_of(ContextRequest, "query", "The subject or question to recall context for."),
    token_budget=field_of(
        ContextRequest,
        "token_budget",
        "At most this many tokens of context; the least relevant memories are left out first.",
    ),
)

RememberArgs = tool_args(
    "remember",
    "Store something worth remembering in long-term memory (a fact, decision, preference...).",
    content=field_of(WriteItem, "content", "The memory itself, as a self-contained sentence or two."),
    topic=field_of(WriteItem, "topic", "A short topic label, e.g. 'launch date'."),
    importance=field_of(
        WriteItem, "importance", "How much this matters, from 0 (trivia) to 1 (critical); default 0.5."
    ),
    ttl_days=field_of(
        WriteItem, "ttl_days", "Forget it after this many days (leave out: the plan's default)."
    ),
)


RecordOutcomeArgs = tool_args(
    "record_outcome",
    (
        "Record what you learned from doing something: a success, a failure, an insight, or a pattern "
        "you saw across runs, with the situation, the result and how sure you are. Searches can then "
        "ask for such experiences (kinds, min_confidence, patterns_first); when you rely on one again, "
        "report with give_feedback whether it held."
    ),
    kind=(
        EXPERIENCE_KIND,
        Field(
            description="success: what worked; failure: what did not; insight: something learned; "
            "pattern: a regularity seen across several runs."
        ),
    ),
    content=field_of(
        WriteItem,
        "content",
        "What you learned, as a self-contained sentence or two, e.g. 'Uploading in batches of 100 "
        "avoids the gateway timeout.'",
    ),
    context=field_of(WriteItem, "context", "The situation: what you were doing, and with what."),
    outcome=field_of(WriteItem, "outcome", "What resulted, e.g. 'all 4,000 rows uploaded in 40 s'."),
    confidence=field_of(
        WriteItem,
        "confidence",
        f"How sure you are that it holds beyond this once, from 0 to 1 (leave out: {DEFAULT_CONFIDENCE}).",
    ),
    run_id=field_of(
        WriteItem,
        "run_id",
        "The task or run it came from, so that a lesson repeated across runs is recognised as a pattern.",
    ),
)

GiveFeedbackArgs = tool_args(
    "give_feedback",
    (
        "Report what happened when you used an experience (a success, failure, insight or pattern from "
        "search results, by its id): it held, it did not, or you applied it without knowing yet. Its "
        "confidence rises or falls with the evidence."
    ),
    memory_id=(
        MemoryId,
        Field(description="The experience's id, as shown in search results ('mem_...' or 'pat_...')."),
    ),
    outcome=field_of(
        FeedbackRequest,
        "outcome",
        "confirmed: it held; refuted: it did not; applied: you acted on it but cannot tell yet "
        "(its confidence stays as it is).",
    ),
    note=field_of(FeedbackRequest, "note", "Why, in a sentence (kept in the audit trail)."),
)


ForgetArgs = tool_args(
    "forget",
    "Forget one memory for good, by the id shown in search results (e.g. after a correction).",
    id=(MemoryId, Field(description="The memory's id, as shown in search results ('mem_...' or 'sum_...').")),
)

"""Question -> evidence-turn pairs for fine-tuning the memory embedder, with hard negatives.

    python training/build_pairs.py [--sources owned] [--locomo PATH] [--out DIR]

A pair is a question and one turn that answers it, written *exactly as the store embeds a turn*
(`writing.rules.contextual`): its self text (``Caroline on 08 May 2023: ...``) and its context (the two
turns before it in its session, speaker-labelled, then its own). The store's vector of a turn is the
normalised sum of those two embeddings, so a pair carries both, and so does each hard negative.

Hard negatives come from the same conversation: the turns ranked highest for the question that
are not evidence and are not the evidence's direct neighbours in its session (in LoCoMo a neighbour
often holds half the answer and would teach the model to push apart what belongs together).
``--negatives-by dense`` ranks by the stock model's cosine with the stored vector alone, as a dense
search would; ``service`` by the relevance the service's search gives a hit (`recall.rules.ranking`
``relevance``: the cosine blended with a BM25 word match by the lexical weight), so the negatives
are the turns the search the model serves actually confuses, not those its word match already
pushes down.

Sources, and why they are kept apart:

* ``training/data/conversations-train*.json`` (``OWNED_CONVERSATIONS``): conversations and
  questions written for this project (Apache-2.0, in the repository); their pairs are written to
  ``training/data/pairs-owned.jsonl``.
* LoCoMo's tuning half A (`benchmarks/locomo.py` ``HALVES["A"]``) from ``--locomo``: CC BY-NC 4.0,
  never copied into the repository, so its pairs go to ``--out`` (``.build/training`` by default)
  at each run. Half B is never read here: it is what the tuned model is judged on.
* ``training/data/conversations-heldout.json`` is never read here either.

``--sources owned`` skips LoCoMo altogether: a model trained on those pairs alone holds no CC BY-NC
data, so its weights may ship with the project (``train_embedder.py --sources owned``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import re
import sys
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmark scripts import their helpers top-level

import locomo  # noqa: E402
from agent_memory.adapters.embedders.minilm import MiniLmEmbedder  # noqa: E402
from agent_memory.adapters.sqlite.sqlite_filters import query_terms  # noqa: E402
from agent_memory.model.records import MemoryRecord  # noqa: E402
from agent_memory.ports import Embedder  # noqa: E402
from agent_memory.recall.rules.fusion import scaled_to_best  # noqa: E402
from agent_memory.recall.rules.ranking import RankingWeights, relevance  # noqa: E402
from agent_memory.tenancy.models import record_vectors  # noqa: E402
from agent_memory.writing.rules.contextual import context_text, self_text  # noqa: E402

DATA = Path(__file__).resolve().parent / "data"
#: Every file of conversations written for training (a test checks no such file is left out).
OWNED_CONVERSATIONS = (
    DATA / "conversations-train.json",
    DATA / "conversations-train-2.json",
    DATA / "conversations-train-3.json",
    DATA / "conversations-train-4.json",
    DATA / "conversations-train-5.json",
    DATA / "conversations-train-6.json",
    DATA / "conversations-train-7.json",
    DATA / "conversations-train-8.json",
    DATA / "conversations-train-9.json",
)
#: The files the committed pairs (and a default run) are made of: the four the chosen settings were
#: tuned with. Files 5-9, written later in LoCoMo's shape, lowered LoCoMo half A's dense recall@10
#: however they were mixed in (docs/decisions.md, "More of the project's own data: it did not
#: help"), so a run reads them only when asked (``--files all``, or by name).
DEFAULT_FILES = tuple(p.name for p in OWNED_CONVERSATIONS[:4])
HELDOUT_CONVERSATIONS = DATA / "conversations-heldout.json"
OWNED_PAIRS = DATA / "pairs-owned.jsonl"
DEFAULT_OUT = ROOT / ".build" / "training"
LOCOMO_A_PAIRS = "pairs-locomo-a.jsonl"  # under --out, never in the repository
#: What each source's pairs are licensed under: the weights of a run carry its data's terms.
LICENCES = {"owned": "Apache-2.0", "locomo-A": "CC BY-NC 4.0"}
#: The data a run may train on (``--sources``): the project's own only, whose weights may ship, or
#: with LoCoMo half A too, whose weights stay local.
SOURCES = {"owned": ("owned",), "owned+locomo-A": ("owned", "locomo-A")}
DEFAULT_SOURCES = "owned+locomo-A"
#: Turns before a turn in its context: the service's default (`Settings.context_turns`).
CONTEXT_TURNS = 2
#: Hard negatives kept per pair (the trainer uses the first; the rest are there to vary it).
NEGATIVES = 3
#: How hard negatives are ranked (``--negatives-by``; module docstring).
NEGATIVES_BY = ("dense", "service")
#: BM25's usual constants (FTS5's and OpenSearch's defaults).
BM25_K1, BM25_B = 1.2, 0.75
_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class IndexedTurn:
    """A turn as the store indexes it: what is embedded for it, and where it sits."""

    dia_id: str
    session: int
    position: int
    record: MemoryRecord  # with its context, as the writer stores it

    @property
    def text(self) -> str:
        return self_text(self.record)

    @property
    def context(self) -> str | None:
        return self.record.context


def indexed_turns(conversation: locomo.Conversation) -> list[IndexedTurn]:
    """Every turn of ``conversation`` with its self text and context, as the writer makes them."""
    out = []
    for session in conversation.sessions:
        records: list[MemoryRecord] = []
        for position, turn in enumerate(session.turns):
            record = MemoryRecord(
                id=f"{conversation.sample_id}-{turn.dia_id}",
                tenant_id="training",
                agent_id=conversation.agent_id,
                speaker=turn.speaker,
                conversation_id=f"{conversation.sample_id}-s{session.number}",
                content=turn.content,
                content_hash=turn.dia_id,
                created_at=turn.occurred_at,
                updated_at=turn.occurred_at,
                occurred_at=turn.occurred_at,
            )
            context = context_text(record, records[-CONTEXT_TURNS:])
            records.append(record)
            stored = record.model_copy(update={"context": context})
            out.append(IndexedTurn(turn.dia_id, session.number, position, stored))
    return out


def stored_vectors(embedder: Embedder, turns: Sequence[IndexedTurn]) -> np.ndarray:
    """The vectors the store would hold for ``turns``, made the way the writer makes them."""
    return np.stack(record_vectors(embedder, [t.record for t in turns])).astype(np.float32)


def _neighbours(turns: Sequence[IndexedTurn], evidence: set[str]) -> set[str]:
    """The evidence turns and the turns right before and after each, in the same session."""
    at = {(t.session, t.position): t.dia_id for t in turns}
    out = set(evidence)
    for t in turns:
        if t.dia_id in evidence:
            for step in (-1, 1):
                if (near := at.get((t.session, t.position + step))) is not None:
                    out.add(near)
    return out


class WordIndex:
    """BM25 over one conversation's turns, counted once: each turn's words (its content and
    context, all of them, as FTS5 indexes a record) and how many turns hold each word."""

    def __init__(self, texts: Sequence[str]) -> None:
        self._counts = [Counter(w.lower() for w in _WORD.findall(text)) for text in texts]
        self._lengths = [sum(c.values()) for c in self._counts]
        self._average = (sum(self._lengths) / len(texts) if texts else 0.0) or 1.0
        self._holding = Counter(w for c in self._counts for w in c)

    def scores(self, question: str) -> list[float]:
        """Each turn's BM25 score for the words the service searches ``question`` by
        (`query_terms`: distinct, lower-cased, function words left out)."""
        n = len(self._counts)
        weights = {
            w: math.log(1.0 + (n - self._holding[w] + 0.5) / (self._holding[w] + 0.5))
            for w in query_terms(question)
            if w in self._holding
        }
        out = []
        for counts, length in zip(self._counts, self._lengths, strict=True):
            norm = BM25_K1 * (1 - BM25_B + BM25_B * length / self._average)
            out.append(
                sum(idf * counts[w] * (BM25_K1 + 1) / (counts[w] + norm) for w, idf in weights.items())
            )
        return out


def service_relevance(question: str, cosines: np.ndarray, words: WordIndex) -> np.ndarray:
    """What the service's search makes of each turn before its boosts: the cosine and the BM25
    match scaled to the best, blended by the default lexical weight (`ranking.relevance`)."""
    lexical = scaled_to_best(dict(enumerate(words.scores(question))))
    weight = RankingWeights().lexical_weight
    return np.asarray(
        [relevance(float(c), lexical.get(i, 0.0), weight) for i, c in enumerate(cosines)], dtype=np.float32
    )


def pairs_of(
    conversation: locomo.Conversation, embedder: Embedder, source: str, negatives_by: str = "dense"
) -> Iterator[dict[str, Any]]:
    """One row per (question, evidence turn) of ``conversation``, with its hard negatives."""
    turns = indexed_turns(conversation)
    by_id = {t.dia_id: t for t in turns}
    vectors = stored_vectors(embedder, turns)
    words = (
        WordIndex([f"{t.record.content} {t.context or ''}" for t in turns])
        if negatives_by == "service"
        else None
    )
    questions = [q for q in conversation.questions if any(e in by_id for e in q.evidence)]
    if not questions:
        return
    queries = np.asarray(embedder.embed([q.text for q in questions]), dtype=np.float32)
    for question, query in zip(questions, queries, strict=True):
        evidence = [e for e in question.evidence if e in by_id]
        excluded = _neighbours(turns, set(evidence))
        cosines = vectors @ query
        ranks = cosines if words is None else service_relevance(question.text, cosines, words)
        ranked = np.argsort(-ranks, kind="stable")
        negatives = [turns[i] for i in ranked if turns[i].dia_id not in excluded][:NEGATIVES]
        for dia_id in evidence:
            positive = by_id[dia_id]
            yield {
                "source": source,
                "conversation": conversation.sample_id,
                "question": question.text,
                "category": locomo.CATEGORIES[question.category],
                "evidence": dia_id,
                "positive": positive.text,
                "positive_context": positive.context,
                "negatives": [n.text for n in negatives],
                "negatives_context": [n.context for n in negatives],
            }


def build(
    conversations: Iterable[locomo.Conversation], embedder: Embedder, source: str, negatives_by: str = "dense"
) -> list[dict[str, Any]]:
    return [row for c in conversations for row in pairs_of(c, embedder, source, negatives_by)]


def owned_conversations(names: Sequence[str] = ()) -> list[locomo.Conversation]:
    """Every conversation written for training, from all its files (or the files ``names``
    names), in order; their ids must be unique across files, as an agent id is made of one."""
    if unknown := set(names) - {p.name for p in OWNED_CONVERSATIONS}:
        raise ValueError(f"no training file {sorted(unknown)}")
    paths = [p for p in OWNED_CONVERSATIONS if not names or p.name in names]
    conversations = [c for path in paths for c in locomo.load_conversations(path)]
    ids = [c.sample_id for c in conversations]
    if len(set(ids)) != len(ids):
        raise ValueError("two training conversations share a sample_id")
    return conversations


def describe(conversations: Sequence[locomo.Conversation]) -> str:
    """A file's counts as training sees them (the data table of training/README.md is made of
    these lines): conversations, sessions, turns, questions by category, evidence turns."""
    categories = [locomo.CATEGORIES[q.category] for c in conversations for q in c.questions]
    by_category = ", ".join(
        f"{categories.count(locomo.CATEGORIES[k])} {locomo.CATEGORIES[k]}" for k in (4, 1, 2, 3)
    )
    return (
        f"{len(conversations)} conversations, {sum(len(c.sessions) for c in conversations)} sessions, "
        f"{sum(len(c.turns) for c in conversations)} turns, {len(categories)} questions ({by_category}), "
        f"{sum(len(q.evidence) for c in conversations for q in c.questions)} evidence turns"
    )


def locomo_half(path: Path, half: str) -> list[locomo.Conversation]:
    """The conversations of one LoCoMo half (`benchmarks/locomo.py` ``HALVES``), in order."""
    everything = locomo.load_conversations(path)
    return [everything[i] for i in locomo.HALVES[half]]


def write_jsonl(path: Path, rows: Sequence[dict[str, Any]]) -> str:
    """Write ``rows`` one JSON object a line; return the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    path.write_text(text, encoding="utf-8")
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_DATA, help="LoCoMo's locomo10.json")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="where LoCoMo's pairs go")
    parser.add_argument(
        "--sources",
        choices=sorted(SOURCES),
        default=DEFAULT_SOURCES,
        help="owned: the project's own conversations only (LoCoMo is not read)",
    )
    parser.add_argument(
        "--negatives-by",
        choices=NEGATIVES_BY,
        default="dense",
        help="rank hard negatives by the stock model's cosine, or by the service's relevance",
    )
    parser.add_argument(
        "--owned-out", type=Path, default=OWNED_PAIRS, help=f"where the owned pairs go ({OWNED_PAIRS.name})"
    )
    parser.add_argument(
        "--files",
        nargs="+",
        default=DEFAULT_FILES,
        metavar="NAME",
        help="which owned files (default: DEFAULT_FILES, the first four; 'all' for every one)",
    )
    args = parser.parse_args(argv)
    try:
        conversations = owned_conversations(() if args.files == ["all"] else args.files)
    except ValueError as exc:
        parser.error(str(exc))
    for path in OWNED_CONVERSATIONS:
        print(f"{path.name}: {describe(locomo.load_conversations(path))}")
    embedder = MiniLmEmbedder()
    owned = build(conversations, embedder, "owned", args.negatives_by)
    print(f"{len(owned)} owned pairs -> {args.owned_out} ({write_jsonl(args.owned_out, owned)[:12]})")
    if "locomo-A" not in SOURCES[args.sources]:
        print("--sources owned: LoCoMo not read", file=sys.stderr)
    elif args.locomo.is_file():
        half_a = build(locomo_half(args.locomo, "A"), embedder, "locomo-A", args.negatives_by)
        target = args.out / LOCOMO_A_PAIRS
        print(f"{len(half_a)} LoCoMo half A pairs -> {target} ({write_jsonl(target, half_a)[:12]})")
    else:
        print(f"no LoCoMo at {args.locomo}: owned pairs only", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

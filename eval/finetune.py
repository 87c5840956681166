"""Fine-tune a sentence-transformers embedder on the user's labeled pairs.

``holdout`` pairs are kept aside first (:func:`~semcache.eval.splits.grouped_split`: no text
of a held-out pair is trained on). The output directory appears whole or not at all and holds
the model, the held-out pairs (:data:`~semcache.embedders.finetuned.HELD_OUT`) and a manifest
whose weights digest names the embedder. Training is CoSENT (every positive pair's cosine
above every negative's, which one threshold needs) in a plain loop, since
``SentenceTransformerTrainer`` needs packages the ``local`` extra does not install.
"""

from __future__ import annotations

import json
import math
import os
import shutil
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from semcache.embedders.base import Embedder
from semcache.embedders.finetuned import HELD_OUT, read_manifest, write_manifest
from semcache.embedders.sentence_transformer import SentenceTransformerEmbedder
from semcache.errors import ConfigError

from .data import PairSet
from .metrics import best_f1, pr_curve
from .similarity import pair_similarities
from .splits import grouped_split

StepCallback = Callable[[int, int, float], None]
"""Called after each training step with (steps done, steps in all, the step's loss)."""


@dataclass(frozen=True)
class TrainOptions:
    """How the model is trained: passes over the training pairs, pairs per step, the
    AdamW learning rate (linear warm-up over the first tenth of steps, then linear decay)
    and the seed of the pair order, the dropout and the split."""

    epochs: int = 2
    batch_size: int = 16
    learning_rate: float = 2e-5
    seed: int = 0


@dataclass(frozen=True)
class Figures:
    """Cosine similarity as a hit score on the held-out pairs: ROC AUC (None with one label
    only) and the best F1 over thresholds with its threshold (None without a positive)."""

    auc: float | None
    best_f1: float | None
    best_f1_threshold: float | None


@dataclass(frozen=True)
class Result:
    """What :func:`finetune` wrote and measured."""

    out: Path
    name: str
    train_pairs: int
    held_out_pairs: int
    before: Figures
    after: Figures


def figures(similarity: np.ndarray, labels: np.ndarray) -> Figures:
    """:class:`Figures` of one embedder's cosine similarities on labeled pairs."""
    auc = None
    if len(np.unique(labels)) == 2:
        from sklearn.metrics import roc_auc_score

        auc = float(roc_auc_score(labels, similarity))
    point = best_f1(pr_curve(similarity, labels))
    if point is None:
        return Figures(auc, None, None)
    return Figures(auc, point.f1, point.threshold)


def split_for_training(pairs: PairSet, holdout: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Indices ``(train, held_out)``; raises :class:`ConfigError` when either is empty."""
    train, held_out = grouped_split(pairs.text_a, pairs.text_b, holdout, seed)
    if not len(held_out) or not len(train):
        raise ConfigError(
            f"--holdout {holdout:g} of {len(pairs)} pairs leaves {len(train)} to train on "
            f"and {len(held_out)} held out (pairs that share a text stay on one side); "
            "give more pairs or another --holdout"
        )
    return train, held_out


def train(
    model: Any, pairs: PairSet, options: TrainOptions, on_step: StepCallback | None = None
) -> None:
    """Train ``model`` (a ``SentenceTransformer``) in place on ``pairs`` with CoSENT."""
    import torch
    from sentence_transformers.sentence_transformer.losses import CoSENTLoss
    from sentence_transformers.util import batch_to_device

    torch.manual_seed(options.seed)
    order = np.random.default_rng(options.seed)
    loss = CoSENTLoss(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=options.learning_rate)
    total = math.ceil(len(pairs) / options.batch_size) * options.epochs
    warmup = math.ceil(total / 10)

    def rate(step: int) -> float:  # linear warm-up to the full rate, then linear decay to 0
        if step < warmup:
            return step / warmup
        return max(0.0, (total - step) / max(1, total - warmup))

    schedule = torch.optim.lr_scheduler.LambdaLR(optimizer, rate)
    model.train()
    done = 0
    for _ in range(options.epochs):
        rows = order.permutation(len(pairs))
        for start in range(0, len(rows), options.batch_size):
            batch = rows[start : start + options.batch_size]
            features = [
                batch_to_device(model.preprocess([column[i] for i in batch]), model.device)
                for column in (pairs.text_a, pairs.text_b)
            ]
            labels = torch.tensor(pairs.labels[batch], dtype=torch.float32, device=model.device)
            value = loss(features, labels)
            value.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad()
            done += 1
            if on_step is not None:
                on_step(done, total, value.item())
    model.eval()


def check_out(out: Path) -> None:
    """``out`` must be a new (or empty) directory: a fine-tune never overwrites another."""
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ConfigError(f"--out {out} already exists and is not an empty directory")


def _write_held_out(directory: Path, pairs: PairSet, ids: np.ndarray) -> None:
    with (directory / HELD_OUT).open("w", encoding="utf-8") as handle:
        for i, pair_id in enumerate(ids):
            row = {
                "text_a": pairs.text_a[i],
                "text_b": pairs.text_b[i],
                "label": int(pairs.labels[i]),
                "pair": int(pair_id),
            }
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")


def _root_base(base: SentenceTransformerEmbedder, source: str) -> str:
    """The first model of a chain of fine-tunes (what the fine-tune reads like)."""
    path = Path(source).expanduser()
    manifest = read_manifest(path.resolve()) if path.is_dir() else None
    return str(manifest["root_base"]) if manifest is not None else base.name


def finetune(
    pairs: PairSet,
    pair_ids: np.ndarray,
    base: SentenceTransformerEmbedder,
    base_source: str,
    out: Path,
    *,
    holdout: float,
    options: TrainOptions,
    load: Callable[[str], Embedder],
    on_step: StepCallback | None = None,
    record: dict[str, Any] | None = None,
) -> Result:
    """Split ``pairs``, score the held-out part with ``base``, train ``base``'s model on the
    rest, save it to ``out`` and score the held-out part with the saved model, loaded by
    ``load`` (the same loader ``--embedder DIR`` uses). ``pair_ids`` are the pairs' ids in
    the user's file, written beside the held-out pairs; ``record`` joins the manifest."""
    check_out(out)
    train_rows, held_rows = split_for_training(pairs, holdout, options.seed)
    held_out = pairs.take(held_rows)
    before = figures(pair_similarities(held_out, base), held_out.labels)
    model = base.model
    train(model, pairs.take(train_rows), options, on_step)
    building = out.parent / f".{out.name}.partial-{os.getpid()}"
    shutil.rmtree(building, ignore_errors=True)
    try:
        model.save(str(building), create_model_card=False)
        _write_held_out(building, held_out, pair_ids[held_rows])
        after = figures(pair_similarities(held_out, load(str(building))), held_out.labels)
        write_manifest(
            building,
            {
                **(record or {}),
                "base": base.name,
                "root_base": _root_base(base, base_source),
                "holdout": holdout,
                **asdict(options),
                "trained_pairs": [int(i) for i in pair_ids[train_rows]],
                "held_out_pairs": [int(i) for i in pair_ids[held_rows]],
                "held_out_file": HELD_OUT,
                "before": asdict(before),
                "after": asdict(after),
            },
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        os.replace(building, out)
    finally:
        shutil.rmtree(building, ignore_errors=True)
    name = load(str(out)).name
    return Result(out, name, len(train_rows), len(held_rows), before, after)

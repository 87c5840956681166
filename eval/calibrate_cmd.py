"""``semcache calibrate``'s run: every scorer at every δ on one half, the chosen one saved.

Embeds the pairs with each ``--embedder``, splits them into a calibration half (fitting and
testing parts) and a held-out half, builds the candidate scorers (cosine, guard, learned,
learned+guard, ``--plugin``: :mod:`semcache.eval.plugin_scores`), certifies each at each δ
(:mod:`semcache.eval.frontier`), reports the frontier, and with ``--save`` writes the
configuration picked for ``--target`` on the fitting part alone.
"""

from __future__ import annotations

import argparse
import math
import os
import textwrap
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from rich.console import Console

from semcache.errors import ConfigError
from semcache.guard import HitVerifier
from semcache.scoring.band import ScoreBand, saturation_cosine
from semcache.scoring.features import FeatureExtractor, bounds, feature_names
from semcache.scoring.plugins import PluginSpec, SavedPlugin, build_plugin
from semcache.scoring.saved import SavedScorer, save_plugin

from . import console as show
from . import persist, resolve
from .data import Columns, PairSet, join, load_pairs
from .frontier import (
    DELTAS,
    Certified,
    LearnedParts,
    Parts,
    ScoredParts,
    frontier,
    guarded,
    learned_parts,
    scored_parts,
    split_parts,
)
from .frontier_view import choice_line, frontier_json, print_frontier
from .parts import GUARD_SUFFIX, vetoed
from .plugin_scores import PluginRun, in_band, plugin_band, plugin_parts
from .scorer_fit import ModelKind, average_precision
from .similarity import pair_similarities
from .sweep import NO_VERIFIER

LEARNED = "learned"
LEARNED_GUARD = LEARNED + GUARD_SUFFIX
#: ``build_candidates`` kind: the learned scorer without the guard's veto (with ``learned``).
UNGUARDED_LEARNED = "learned-unguarded"
PLUGIN = "plugin"


#: Fewest pairs of each label the fitting, testing and held-out parts can be cut from.
MIN_PER_LABEL = 10


def _enough_pairs(labels: np.ndarray, args: argparse.Namespace, err: Console) -> None:
    """Say, before any embedding, how many pairs the file needs: the test rejects only with
    ``hits_needed`` hits (all correct) in the testing part, which gets about
    ``(1 - holdout) x (1 - fit_fraction)`` of the pairs that should hit. Too few to certify at
    ``--target``: a note (the frontier still reports the looser δs); too few of a label to
    split at all: one error line saying how many pairs it needs (exit 2)."""
    from .calibrate import hits_needed

    need = hits_needed(args.target, args.confidence)
    share = (1.0 - (args.holdout or 0.0)) * (1.0 - args.fit_fraction)
    positives = int(labels.sum())
    wanted = math.ceil(need / share)
    message = (
        f"{len(labels)} labeled pairs ({positives} that should hit) are too few: certifying "
        f"false-hit rate <= {args.target:g} at {args.confidence:.0%} confidence needs at "
        f"least {need} hits, all correct, in the testing part, so at least {wanted} pairs "
        "labeled 1 (more when some are wrong; docs/calibration.md)"
    )
    if min(positives, len(labels) - positives) < MIN_PER_LABEL:
        raise ConfigError(
            f"{message}, and at least {MIN_PER_LABEL} labeled 0 to split the pairs at all"
        )
    if positives < wanted:
        err.print(f"note: {message}", highlight=False)


def run_calibrate(args: argparse.Namespace, columns: Columns, out: Console, err: Console) -> int:
    embedder_names = list(dict.fromkeys(args.embedder))
    if args.namespace is not None and (
        len(embedder_names) > 1 or args.scorer in (LEARNED, PLUGIN) or args.plugin is not None
    ):
        raise ConfigError(
            "--namespace saves a threshold for one namespace, but a cache has one embedder and "
            "one scorer for all namespaces: give a single --embedder with --namespace (a "
            "learned or plug-in scorer is never per namespace)"
        )
    if args.plugin is None and (args.scorer == PLUGIN or args.plugin_band is not None):
        raise ConfigError(
            f"{'--scorer plugin' if args.scorer == PLUGIN else '--plugin-band'} needs --plugin "
            "cross-encoder:NAME_OR_PATH or llm-judge:MODEL"
        )
    if args.plugin is not None and args.scorer not in ("auto", PLUGIN):
        raise ConfigError(f"--plugin is never considered with --scorer {args.scorer}")
    plugin_args = None if args.plugin is None else _plugin_args(args)  # checked before any work
    pairs = load_pairs(args.data, columns=columns, limit=args.limit, seed=args.seed)
    if args.add_collisions:
        pairs = with_collision_negatives(pairs, embedder_names, err)
    labels = pairs.labels.astype(np.int64)
    _enough_pairs(labels, args, err)
    verifier = resolve.resolve_verifier(args.verifier)
    sims: dict[str, np.ndarray] = {}
    for name in embedder_names:
        embedder = resolve.resolve_embedder(
            name, args.batch_size, args.runtime, threads=args.threads, precision=args.precision
        )
        with show.embedding_progress(err, f"{pairs.name} · {name}") as progress:
            sims[name] = pair_similarities(pairs, embedder, progress=progress).astype(np.float64)
    parts = split_parts(labels, args.seed, args.fit_fraction, args.holdout or 0.0)
    use_learned = args.scorer in ("auto", LEARNED) and args.namespace is None
    # With the cache's guard on, 'auto' keeps it: only a scorer asked for by name may drop it.
    guard_on = verifier.name != NO_VERIFIER
    kinds = {
        "cosine": args.scorer == "cosine" or (args.scorer == "auto" and not guard_on),
        "guard": args.scorer in ("auto", "guard"),
        LEARNED: use_learned,
        UNGUARDED_LEARNED: args.scorer == LEARNED or not guard_on,
    }
    candidates, learned = build_candidates(
        pairs, sims, parts, verifier, kinds, model=args.model, seed=args.seed
    )
    plugin = None
    if plugin_args is not None:
        plugin = _run_plugin(plugin_args, pairs, sims, parts, err)
        candidates.append(plugin.scored)
    if not candidates:
        raise ConfigError(f"--scorer {args.scorer} with --verifier {args.verifier}: no scorer")
    deltas = tuple(sorted({*DELTAS, args.target}))
    alpha = 1.0 - args.confidence
    result = frontier(candidates, labels, parts, deltas=deltas, alpha=alpha)
    chosen = result.chosen_result(args.target)
    if args.json:
        document = frontier_json(result, pairs.name, list(sims)) | {"target": args.target}
    else:
        print_frontier(result, pairs.name, list(sims), out)
        if plugin is not None:
            out.print(plugin.cost_line(len(labels)), highlight=False)
        out.print(textwrap.fill(choice_line(chosen), 80), highlight=False)
    saved = None
    if chosen.threshold is not None and args.save is not None:
        if plugin is not None and chosen.scorer == plugin.spec.name:
            saved = _save_plugin(args, chosen, plugin, err if args.json else out)
        else:
            saved = _save(args, chosen, learned, sims, err if args.json else out)
    if args.json:
        document["saved"] = saved
        print(_dumps(document), file=out.file)
    return 0 if chosen.threshold is not None else 1


def _dumps(document: dict[str, object]) -> str:
    import json

    return json.dumps(document, indent=1, allow_nan=False)


@dataclass(frozen=True)
class _PluginArgs:
    spec: PluginSpec
    api_key: str | None  # read from spec.api_key_env; None: LiteLLM's own variables
    band: ScoreBand | None  # --plugin-band; None: fixed on the fitting part


def _plugin_args(args: argparse.Namespace) -> _PluginArgs:
    spec = PluginSpec.parse(
        args.plugin,
        api_base=args.judge_api_base,
        api_key_env=args.judge_api_key_env,
        timeout_s=args.judge_timeout,
    )
    api_key = None
    if spec.api_key_env is not None:
        api_key = os.environ.get(spec.api_key_env)
        if api_key is None:
            raise ConfigError(f"--judge-api-key-env {spec.api_key_env}: that variable is not set")
    band = None if args.plugin_band is None else ScoreBand(*args.plugin_band)
    return _PluginArgs(spec, api_key, band)


def with_collision_negatives(pairs: PairSet, embedders: list[str], err: Console) -> PairSet:
    """``pairs`` followed by the collision corpus's label-0 pairs whose two texts every embedder
    reads: the cache never compares a text its embedder cannot read by meaning (it is
    exact-only or routed to a fallback embedder), so such pairs would only count false hits
    that can never be served."""
    from semcache.embedders.registry import readability_for

    readers = [readability_for(name) for name in embedders]
    collisions = load_pairs("collisions")
    keep = [
        i
        for i, (a, b) in enumerate(zip(collisions.text_a, collisions.text_b, strict=True))
        if collisions.labels[i] == 0 and all(r.reads(a) and r.reads(b) for r in readers)
    ]
    err.print(
        f"added {len(keep)} collision negatives to the {len(pairs)} pairs of {pairs.name} "
        f"({int((collisions.labels == 0).sum()) - len(keep)} left out: a text the embedder "
        "cannot read)",
        highlight=False,
    )
    return join(pairs, collisions.take(keep))


def primary_embedder(sims: dict[str, np.ndarray], labels: np.ndarray, parts: Parts) -> str:
    """The embedder whose cosine ranks the fitting pairs best: the cache's search embedder."""
    fit_labels = labels[parts.fit]
    return max(sims, key=lambda e: average_precision(sims[e][parts.fit], fit_labels))


def _run_plugin(
    plugin: _PluginArgs,
    pairs: PairSet,
    sims: dict[str, np.ndarray],
    parts: Parts,
    err: Console,
) -> PluginRun:
    """Build the plug-in and ask it about the pairs inside its band (fixed on the fitting
    part, or ``--plugin-band``)."""
    labels = pairs.labels.astype(np.int64)
    primary = primary_embedder(sims, labels, parts)
    cosines = sims[primary]
    band = plugin.band
    if band is None:
        band = plugin_band(cosines[parts.fit], labels[parts.fit])
    spec = plugin.spec
    scorer = build_plugin(spec, api_key=plugin.api_key)
    err.print(
        f"asking {spec.name} about {len(in_band(cosines, band))} pairs whose {primary} "
        f"cosine is in [{band.lo:.4g}, {band.hi:.4g})",
        highlight=False,
    )
    return plugin_parts(scorer, spec, pairs, cosines, primary, parts, band)


def build_candidates(
    pairs: PairSet,
    sims: dict[str, np.ndarray],
    parts: Parts,
    verifier: HitVerifier,
    kinds: dict[str, bool],
    *,
    model: ModelKind | Literal["auto"] = "auto",
    seed: int = 0,
) -> tuple[list[ScoredParts], LearnedParts | None]:
    """The scorers ``kinds`` asks for (keys ``cosine``, ``guard``, ``learned``, and
    ``learned-unguarded``, default on, for the learned scorer without the veto), scored on
    the three parts; guard scorers only with a verifier."""
    labels = pairs.labels.astype(np.int64)
    candidates: list[ScoredParts] = []
    learned: LearnedParts | None = None
    if kinds.get("cosine"):
        candidates += [scored_parts(f"cosine:{e}", s, parts) for e, s in sims.items()]
    verdicts = None
    if verifier.name != NO_VERIFIER and (kinds.get("guard") or kinds.get(LEARNED)):
        verdicts = np.array(
            [verifier.verify(a, b) for a, b in zip(pairs.text_a, pairs.text_b, strict=True)]
        )
    if verdicts is not None and kinds.get("guard"):
        candidates += [
            scored_parts(f"guard:{e}", guarded(s, verdicts), parts) for e, s in sims.items()
        ]
    if kinds.get(LEARNED):
        rest = FeatureExtractor().rows(pairs.text_a, pairs.text_b, np.zeros((len(pairs), 0)))
        rows = np.column_stack([*sims.values(), rest])
        primary = primary_embedder(sims, labels, parts)
        learned = learned_parts(
            LEARNED,
            rows,
            labels,
            parts,
            list(sims),
            primary,
            kind=model,
            seed=seed,
        )
        if kinds.get(UNGUARDED_LEARNED, True) or verdicts is None:
            candidates.append(learned.scored)
        if verdicts is not None:
            candidates.append(vetoed(learned.scored, verdicts, parts, verifier.name))
    return candidates, learned


def _calibration(args: argparse.Namespace, chosen: Certified) -> dict[str, object]:
    return {
        "delta": chosen.delta,
        "confidence": args.confidence,
        "seed": args.seed,
        "data": Path(str(args.data)).name,
        "collisions": args.add_collisions,
        "testing_hits": chosen.walk.hits,
        "testing_false_hits": chosen.walk.false_hits,
        "p_value": chosen.walk.p_value,
        "alpha": chosen.alpha,
        "fit_fraction": args.fit_fraction,
        "holdout": args.holdout,
    }


def _save_plugin(
    args: argparse.Namespace, chosen: Certified, plugin: PluginRun, out: Console
) -> str:
    saved = SavedPlugin(
        plugin=plugin.spec,
        primary=plugin.primary,
        threshold=float(chosen.threshold),  # type: ignore[arg-type]
        band=plugin.band,
        calibration=_calibration(args, chosen) | plugin.calibration(),
    )
    file = args.scorer_file or Path(args.save).with_name("semcache-scorer.json")
    save_plugin(saved, file)
    persist.save_scorer(args.save, Path(file).resolve())
    persist.save_embedder(args.save, plugin.primary)
    out.print(f"saved plug-in scorer {file} and its settings to {args.save}", highlight=False)
    return str(args.save)


def _save(
    args: argparse.Namespace,
    chosen: Certified,
    learned: LearnedParts | None,
    sims: dict[str, np.ndarray],
    out: Console,
) -> str:
    """Write the chosen configuration into the ``--save`` file; return that file's path."""
    kind, _, embedder = chosen.scorer.partition(":")
    threshold = float(chosen.threshold)  # type: ignore[arg-type]
    if kind in (LEARNED, LEARNED_GUARD) and learned is not None:
        names = feature_names(learned.embedders)
        low, high = bounds(names)
        primary = list(learned.embedders).index(learned.primary)
        hi = saturation_cosine(learned.fitted.model, primary, threshold, low, high)
        saved = SavedScorer(
            model=learned.fitted.model,
            embedders=learned.embedders,
            primary=learned.primary,
            threshold=threshold,
            band=ScoreBand(learned.band_lo, hi),
            calibration=_calibration(args, chosen)
            | {"cv_average_precision": learned.fitted.cv_average_precision},
            # by its resolved name ("auto" would follow a later default, not this run's)
            veto=resolve.resolve_verifier(args.verifier).name if kind == LEARNED_GUARD else None,
        )
        file = args.scorer_file or Path(args.save).with_name("semcache-scorer.json")
        saved.save(file)
        persist.save_scorer(args.save, Path(file).resolve())
        persist.save_embedder(args.save, learned.primary)
        out.print(f"saved scorer {file} and its settings to {args.save}", highlight=False)
        if kind == LEARNED:
            _say_guard_off(args, chosen.scorer, out)
        return str(args.save)
    persist.save_threshold(args.save, threshold, args.namespace)
    if args.namespace is None:
        persist.save_embedder(args.save, embedder)
        persist.save_verifier(args.save, "details" if kind == "guard" else "none")
        persist.save_scorer(args.save, None)
    out.print(f"saved to {args.save}", highlight=False)
    if kind != "guard" and args.namespace is None:
        _say_guard_off(args, chosen.scorer, out)
    return str(args.save)


def _say_guard_off(args: argparse.Namespace, scorer: str, out: Console) -> None:
    """Name the switch when the saved configuration runs without the answer guard the run
    was given: without it, pairs that differ in a number or a negation are served."""
    if resolve.resolve_verifier(args.verifier).name == NO_VERIFIER:
        return
    out.print(
        f"note: the answer guard is now OFF ({persist.env_name('semantic', 'verifier')}=none "
        f"in {args.save}): {scorer} was calibrated without it, so questions that differ only "
        "in a number, date, negation or opposite word are served; '--scorer guard' certifies "
        "a rule that keeps the guard on",
        highlight=False,
    )

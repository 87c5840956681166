"""Safe and useful: what each hit scorer can *guarantee* on the dev sets, and what holds.

For each pair set under ``--dev`` (read by path, never copied; at most 6,000 pairs each, a
seeded sample) this runs exactly what ``semcache calibrate`` runs (:mod:`semcache.eval.frontier`):
seeded halves (calibration / untouched held-out), the calibration half cut into a fitting
third and a testing two thirds, and for δ in 1, 2, 5, 10, 20%:

- ``cosine`` — the cosine of one embedder (the family's best one for that δ is chosen on
  the fitting part among minilm, use-multilingual, e5-small-4bit);
- ``guard`` — the cosine with answer-guard vetoes, chosen the same way;
- ``lr`` / ``gbm`` — a learned scorer (logistic regression / gradient-boosted trees) over all
  three embedders' cosines, lexical features and the guard's per-rule mismatches;
- ``lr-1`` — logistic regression with only the primary embedder's cosine (no extra model
  call at lookup time);
- ``chosen`` — the configuration the fitting part picks among all of the above, the one
  ``calibrate`` would save;
- ``ceiling`` — the best held-out recall any threshold of any scorer reaches at held-out
  false-hit rate <= δ, chosen in hindsight on the held-out answers (a ceiling, not a result);
- ``oracle`` — the best *testing-part* recall of any scorer at a threshold whose exact
  binomial test on the testing part rejects "rate > δ" at 95%, the threshold chosen in
  hindsight on the testing labels: the most any valid procedure that tests on this testing
  part could certify (no fixed sequence does better than starting exactly there). ``0%``
  means no threshold of any scorer can be certified with this many testing pairs — the
  limit is the sample and the labels, not the order of the sequence.

A cell is the held-out recall at the threshold certified at 95% (fixed-sequence LTT) with
the held-out false-hit rate; ``—`` means nothing was certified, ``!`` that the held-out
false-hit rate came out above δ. Cosines are cached under ``--cache`` (see
``_scorer_cache.py``), so reruns skip the models.

Usage: ``HF_HUB_OFFLINE=1 python benchmarks/bench_scorer.py [--dev ../shared/data/dev]
[--json out.json] [--timing]``
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from _scorer_cache import DEFAULT_CACHE, EMBEDDERS, cosines, load_set

from semcache.eval.frontier import (
    DELTAS,
    Frontier,
    ScoredParts,
    choose,
    frontier,
    guarded,
    hindsight,
    learned_parts,
    scored_parts,
    split_parts,
)
from semcache.eval.scorer_fit import average_precision
from semcache.scoring.features import FeatureExtractor

ALPHA = 0.05


def oracle(scores: np.ndarray, labels: np.ndarray, delta: float) -> float:
    """Best recall among thresholds whose exact binomial p-value on these pairs is <= α,
    chosen in hindsight (see the module docstring)."""
    from scipy.stats import binom

    from semcache.eval.ltt import counts_at

    scores = np.asarray(scores, np.float64)
    grid = np.unique(scores[np.isfinite(scores)])[::-1]
    hits, wrong = counts_at(scores, labels, grid)
    ok = binom.cdf(wrong, hits, delta) <= ALPHA
    positives = max(int((labels == 1).sum()), 1)
    return float(((hits - wrong)[ok]).max(initial=0) / positives)


_DEFAULT_EMBEDDERS = EMBEDDERS


def features(pairs, sims: dict[str, np.ndarray], cache: Path) -> np.ndarray:
    """Feature rows (cosines of ``sims`` in order, lexical, guard), cached without text."""
    file = cache / f"{pairs.name}.{len(pairs)}.features.v1.npy"
    if file.exists():
        rest = np.load(file)
    else:
        rows = FeatureExtractor().rows(pairs.text_a, pairs.text_b, np.zeros((len(pairs), 0)))
        np.save(file, rows)
        rest = rows
    return np.column_stack([*sims.values(), rest])


def run_set(path: Path, cache: Path, seed: int) -> dict:
    pairs = load_set(path, seed=seed)
    labels = pairs.labels.astype(np.int64)
    sims = {e: cosines(pairs, e, cache, seed).astype(np.float64) for e in EMBEDDERS}
    rows = features(pairs, sims, cache)
    guard_ok = rows[:, -6:].sum(axis=1) == 0
    parts = split_parts(labels, seed)
    fit_labels = labels[parts.fit]
    primary = max(EMBEDDERS, key=lambda e: average_precision(sims[e][parts.fit], fit_labels))
    families: dict[str, list[ScoredParts]] = {
        "cosine": [scored_parts(f"cosine:{e}", sims[e], parts) for e in EMBEDDERS],
        "guard": [scored_parts(f"guard:{e}", guarded(sims[e], guard_ok), parts) for e in EMBEDDERS],
    }
    timings = {}
    width = len(EMBEDDERS)
    for name, kind, cols in (
        ("lr", "logistic", None),
        ("gbm", "boosted-trees", None),
        ("lr-1", "logistic", [EMBEDDERS.index(primary)]),
    ):
        if cols is None:
            x, embs = rows, EMBEDDERS
        else:
            x = np.column_stack([rows[:, cols], rows[:, width:]])
            embs = (primary,)
        started = time.perf_counter()
        learned = learned_parts(name, x, labels, parts, embs, primary, kind=kind, seed=seed)
        timings[name] = time.perf_counter() - started
        families[name] = [learned.scored]
    everything = [s for group in families.values() for s in group]
    result = frontier(
        everything, labels, parts, deltas=DELTAS, alpha=ALPHA, total_pairs=len(labels)
    )
    out = {
        "set": pairs.name,
        "pairs": len(pairs),
        "primary": primary,
        "fit_seconds": timings,
        "rows": {},
        "chosen": {},
        "ceiling": {},
        "oracle": {},
        "needed": {},
    }
    held, tested = labels[parts.held_out], labels[parts.test]
    for delta in DELTAS:
        plans = {name: row.plan for (name, d), row in result.rows.items() if d == delta}
        for family, members in families.items():
            pick = (
                choose(members, labels, parts, delta, ALPHA, plans)
                if len(members) > 1
                else members[0].name
            )
            out["rows"][f"{family}|{delta}"] = _cell(result, pick, delta)
        out["chosen"][str(delta)] = _cell(result, result.chosen[delta], delta)
        best = max((hindsight(s.held_out, held, delta) for s in everything), key=lambda o: o.recall)
        out["ceiling"][str(delta)] = {
            "recall": best.recall,
            "hits": best.hits,
            "false": best.false_hits,
        }
        out["oracle"][str(delta)] = max(oracle(s.test, tested, delta) for s in everything)
        need = result.needed.get((result.chosen[delta], delta))
        if need is not None:
            out["needed"][str(delta)] = {"pairs": need.pairs, "floor_rate": need.floor_rate}
    return out


def _cell(result: Frontier, name: str, delta: float) -> dict:
    row = result.rows[(name, delta)]
    cell = {"scorer": name, "threshold": row.threshold}
    if row.held_out is not None and row.testing is not None:
        cell |= {
            "recall": row.held_out.recall,
            "fhr": row.held_out.false_hit_rate,
            "hits": row.held_out.hits,
            "false": row.held_out.false_hits,
            "holds": row.holds,
            "test_recall": row.testing.recall,
            "test_hits": row.testing.hits,
        }
    return cell


def _fmt(cell: dict) -> str:
    if cell.get("threshold") is None:
        return "—"
    mark = "" if cell["holds"] else "!"
    return f"{cell['recall']:.0%} ({cell['fhr']:.1%}){mark}"


def _held_p(cell: dict, delta: float) -> float:
    """P(at least this many held-out false hits | true rate exactly δ): how surprising a
    held-out rate above δ is for a threshold whose real rate is at most δ."""
    from scipy.stats import binom

    return float(binom.sf(cell["false"] - 1, cell["hits"], delta))


def print_tables(results: list[dict]) -> None:
    print(
        f"embedders: {', '.join(EMBEDDERS)}; 95% confidence; seed 0; cell = held-out "
        "recall (held-out false-hit rate), ! = above δ\n"
    )
    families = ("cosine", "guard", "lr", "gbm", "lr-1")
    header = "| set | scorer | " + " | ".join(f"δ={d:.0%}" for d in DELTAS) + " |"
    print(header)
    print("|" + "---|" * (len(DELTAS) + 2))
    for r in results:
        for family in families:
            cells = [_fmt(r["rows"][f"{family}|{d}"]) for d in DELTAS]
            print(f"| {r['set']} | {family} | " + " | ".join(cells) + " |")
        cells = [f"{_fmt(r['chosen'][str(d)])} {r['chosen'][str(d)]['scorer']}" for d in DELTAS]
        print(f"| {r['set']} | **chosen** | " + " | ".join(cells) + " |")
        cells = [f"{r['ceiling'][str(d)]['recall']:.0%}" for d in DELTAS]
        print(f"| {r['set']} | ceiling (hindsight) | " + " | ".join(cells) + " |")
        cells = [f"{r['oracle'][str(d)]:.0%}" for d in DELTAS]
        print(f"| {r['set']} | oracle (testing part) | " + " | ".join(cells) + " |")
    print()
    print(
        "| set | δ | chosen | threshold | testing hits (false) | held-out hits (false) "
        "| held-out recall | p(held-out | rate δ) |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        for d in DELTAS:
            c = r["chosen"][str(d)]
            if c["threshold"] is None:
                need = r["needed"].get(str(d), {})
                print(
                    f"| {r['set']} | {d:.0%} | {c['scorer']} | none | | | | "
                    f"needs ~{need.get('pairs')} pairs |"
                )
                continue
            print(
                f"| {r['set']} | {d:.0%} | {c['scorer']} | {c['threshold']:.4f} | "
                f"{c['test_hits']} | {c['hits']} ({c['false']}) | {c['recall']:.1%} | "
                f"{_held_p(c, d):.2f} |"
            )
    print()
    print("| δ | chosen config certified | holds on held-out | oracle-certifiable sets |")
    print("|---|---|---|---|")
    for d in DELTAS:
        cells = [r["chosen"][str(d)] for r in results]
        certified = sum(c["threshold"] is not None for c in cells)
        holds = sum(bool(c.get("holds")) for c in cells)
        feasible = sum(r["oracle"][str(d)] > 0 for r in results)
        print(
            f"| {d:.0%} | {certified} of {len(results)} | {holds} of {certified} "
            f"| {feasible} of {len(results)} |"
        )
    print()
    print("| set | pairs | fit s (lr / gbm / lr-1) |")
    print("|---|---|---|")
    for r in results:
        t = r["fit_seconds"]
        print(f"| {r['set']} | {r['pairs']} | {t['lr']:.1f} / {t['gbm']:.1f} / {t['lr-1']:.1f} |")


def time_scoring(path: Path, cache: Path, seed: int, embedders: tuple[str, ...]) -> dict:
    """Per-candidate cost of a learned scorer: features + model (the primary cosine comes
    free from the search), and each extra embedder's ``embed([query, candidate])``."""
    from semcache.eval.resolve import resolve_embedder
    from semcache.eval.scorer_fit import fit_boosted, fit_logistic
    from semcache.scoring import LearnedScorer, SavedScorer, ScoreBand

    pairs = load_set(path, seed=seed)
    labels = pairs.labels.astype(np.int64)
    sims = {e: cosines(pairs, e, cache, seed).astype(np.float64) for e in embedders}
    rows = features(pairs, sims, cache)
    out: dict[str, float] = {}
    sample = range(0, len(pairs), max(1, len(pairs) // 500))
    for kind, fit in (("logistic", fit_logistic), ("boosted-trees", fit_boosted)):
        x = np.column_stack([rows[:, :1], rows[:, len(embedders) :]])
        model = fit(x, labels)
        saved = SavedScorer(model, (embedders[0],), embedders[0], 0.5, ScoreBand(-1.0, 2.0))
        scorer = LearnedScorer(saved)
        started = time.perf_counter()
        for i in sample:
            scorer.score(pairs.text_a[i], pairs.text_b[i], float(sims[embedders[0]][i]))
        out[f"{kind} (cold texts), ms"] = (time.perf_counter() - started) / len(sample) * 1e3
        started = time.perf_counter()
        for i in sample:
            scorer.score(pairs.text_a[i], pairs.text_b[i], float(sims[embedders[0]][i]))
        out[f"{kind} (texts seen), ms"] = (time.perf_counter() - started) / len(sample) * 1e3
    for name in embedders:
        model = resolve_embedder(name, 64)
        model.embed(["warm up", "the model"])
        started = time.perf_counter()
        for i in list(sample)[:100]:
            model.embed([pairs.text_a[i], pairs.text_b[i]])
        out[f"embed pair with {name}, ms"] = (time.perf_counter() - started) / 100 * 1e3
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dev", type=Path, default=Path("../shared/data/dev"))
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--only", nargs="*", help="set name substrings")
    parser.add_argument("--embedders", nargs="+", default=list(_DEFAULT_EMBEDDERS))
    parser.add_argument("--timing", type=Path, help="a set to time scoring on, then exit")
    args = parser.parse_args()
    global EMBEDDERS
    EMBEDDERS = tuple(args.embedders)
    if args.timing is not None:
        for key, value in time_scoring(args.timing, args.cache, args.seed, EMBEDDERS).items():
            print(f"{key}: {value:.3f}")
        return
    results = []
    for path in sorted(args.dev.glob("*.jsonl")):
        if args.only and not any(s in path.stem for s in args.only):
            continue
        started = time.perf_counter()
        results.append(run_set(path, args.cache, args.seed))
        print(f"{path.stem}: {time.perf_counter() - started:.1f} s", file=sys.stderr)
    print_tables(results)
    if args.json is not None:
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()

"""The cache runs exactly what ``semcache calibrate --save`` wrote (issue 14).

A tiny synthetic labeled set (no third-party text): pairs that differ only in a number are
labeled different, and their cosine (drawn from 0.90..1.00 for every pair) cannot tell. The
learned scorer calibrated on it must then, inside ``SemanticCache``, refuse a candidate the
cosine rule would serve and serve one the cosine rule would refuse.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import ConfigError, SemcacheError
from semcache.eval import cli, resolve
from semcache.guard import get_verifier
from semcache.pipeline.semantic_tier import SemanticTier
from semcache.scoring import LearnedScorer, Outcome, SavedScorer, ScoreBand, ScoredDecision
from semcache.stats import Tier
from semcache.testing import FakeUpstream, InMemoryStore, hash_embedding

MODEL = "gpt-4o-mini"
EMBEDDER = "numbers"  # the name calibrate saves; the cache embeds with the same placement

# Stored questions and new questions at chosen cosines (orthogonal pairs of axes, so no
# other stored entry is ever nearer).
STORED_A, NEW_A = "topic alpha needs 5 steps", "topic alpha takes 6 steps"  # cosine 0.99
STORED_B, NEW_B = "topic beta needs 7 steps", "topic beta takes 7 steps"  # cosine 0.93


def _axis(i: int, dim: int = 8) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def _at(cosine: float, i: int, j: int) -> np.ndarray:
    return (cosine * _axis(i) + np.sqrt(1.0 - cosine * cosine) * _axis(j)).astype(np.float32)


class PlacedEmbedder:
    """Chosen vectors for chosen texts, a hashed bag of words for any other; ``fail`` breaks it."""

    def __init__(self, vectors: dict[str, np.ndarray], dim: int, name: str = EMBEDDER) -> None:
        self.vectors, self.dim, self.name = vectors, dim, name
        self.fail = False
        self.texts = 0

    def embed(self, texts):
        self.texts += len(texts)
        if self.fail:
            raise RuntimeError("embedder down")
        return np.stack([self.vectors.get(t, hash_embedding(t, self.dim)) for t in texts]).astype(
            np.float32
        )


def cache_embedder() -> PlacedEmbedder:
    return PlacedEmbedder(
        {STORED_A: _axis(0), NEW_A: _at(0.99, 0, 1), STORED_B: _axis(2), NEW_B: _at(0.93, 2, 3)},
        dim=8,
    )


def _labeled_pairs(tmp: Path) -> tuple[Path, PlacedEmbedder]:
    import json

    rng = np.random.default_rng(0)
    vectors: dict[str, np.ndarray] = {}
    lines = []
    for i in range(1500):
        x = int(rng.integers(2, 99))
        same = i % 2 == 0
        a, b = f"topic {i} needs {x} steps", f"topic {i} takes {x if same else x + 1} steps"
        cosine = float(rng.uniform(0.9, 1.0))
        vectors[a] = np.array([1.0, 0.0], dtype=np.float32)
        vectors[b] = np.array([cosine, np.sqrt(1 - cosine * cosine)], dtype=np.float32)
        lines.append(json.dumps({"text_a": a, "text_b": b, "label": int(same)}))
    data = tmp / "numbers.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data, PlacedEmbedder(vectors, dim=2)


@pytest.fixture(scope="module")
def calibrated(tmp_path_factory) -> Iterator[Path]:
    """``semcache calibrate --scorer learned --save .env`` on the synthetic pairs: the .env."""
    tmp = tmp_path_factory.mktemp("calibrated")
    data, embedder = _labeled_pairs(tmp)
    env = tmp / ".env"
    with pytest.MonkeyPatch.context() as mp:
        for key in ("SCORER", "EMBEDDER", "THRESHOLD", "VERIFIER", "NAMESPACE_THRESHOLDS"):
            mp.delenv(f"SEMCACHE_SEMANTIC__{key}", raising=False)
        mp.setattr(resolve, "resolve_embedder", lambda name, batch, runtime="auto", **_: embedder)
        argv = [
            "--data",
            str(data),
            "--target",
            "0.02",
            "--embedder",
            EMBEDDER,
            "--scorer",
            "learned",
            "--model",
            "logistic",
            "--holdout",
            "0.5",
            "--save",
            str(env),
        ]
        assert cli.calibrate_main(argv) == 0
    yield env


def _settings(env: Path, **semantic) -> CacheSettings:
    base = CacheSettings(_env_file=env).semantic.model_dump()
    return CacheSettings(semantic={**base, **semantic}, store={"backend": "none"})


def _cache(settings: CacheSettings, embedder: PlacedEmbedder | None = None) -> SemanticCache:
    return SemanticCache(
        settings,
        embedder=embedder or cache_embedder(),
        store=InMemoryStore(),
        upstream=FakeUpstream(),
    )


def _seed(cache: SemanticCache) -> None:
    cache.store(STORED_A, "answer A", model=MODEL)
    cache.store(STORED_B, "answer B", model=MODEL)
    cache.flush()


def test_the_cache_runs_exactly_the_saved_scorer(calibrated: Path):
    settings = CacheSettings(_env_file=calibrated)
    assert settings.semantic.embedder == EMBEDDER and settings.semantic.scorer is not None
    saved = SavedScorer.load(settings.semantic.scorer)
    assert saved.primary == EMBEDDER and saved.band.lo <= 0.93
    with _cache(_settings(calibrated)) as cache:
        _seed(cache)
        # cosine 0.99, but another number: the scorer refuses it
        assert cache.check(NEW_A, model=MODEL) is None
        # cosine 0.93, the same number: the scorer serves it, with its score
        hit = cache.check(NEW_B, model=MODEL)
        assert hit is not None and hit.text == "answer B" and hit.info.tier is Tier.SEMANTIC
        expected = LearnedScorer(saved).score(NEW_B, STORED_B, hit.info.similarity)
        assert hit.info.score == pytest.approx(expected, abs=1e-12)
        assert hit.info.score >= saved.threshold
        stats = cache.stats()
        assert stats.counts["scorer_scored"] == 2 and stats.counts["scorer_rejections"] == 1
        assert stats.verifier_rejections == 0 and not stats.errors


def test_cosine_alone_decides_the_other_way(calibrated: Path):
    """The control: without the scorer, a threshold serving the 0.99 pair and refusing the
    0.93 one (the saved cosine rule for this embedder had no learned scorer to veto it)."""
    plain = _settings(calibrated, scorer=None, threshold=0.95, verifier="none")
    with _cache(plain) as cache:
        _seed(cache)
        served = cache.check(NEW_A, model=MODEL)
        assert served is not None and served.text == "answer A" and served.info.score is None
        assert cache.check(NEW_B, model=MODEL) is None
        assert "scorer_scored" not in cache.stats().counts


def test_namespace_thresholds_never_bypass_the_scorer(calibrated: Path):
    """An override is an extra cosine floor: a loose one cannot serve what the scorer
    refuses, a strict one removes hits the scorer would serve."""
    overrides = {"loose": 0.5, "strict": 0.999}
    with _cache(_settings(calibrated, namespace_thresholds=overrides)) as cache:
        for namespace in ("loose", "strict"):
            control = {"namespace": namespace}
            cache.store(STORED_A, "answer A", model=MODEL, cache=control)
            cache.store(STORED_B, "answer B", model=MODEL, cache=control)
        cache.flush()
        loose, strict = {"namespace": "loose"}, {"namespace": "strict"}
        assert cache.check(NEW_A, model=MODEL, cache=loose) is None
        assert cache.check(NEW_B, model=MODEL, cache=loose) is not None
        assert cache.check(NEW_B, model=MODEL, cache=strict) is None


@pytest.mark.parametrize(
    "problem", ["missing", "not-json", "other-format", "other-embedder", "no-question"]
)
def test_a_bad_scorer_fails_construction_naming_the_setting(
    calibrated: Path, tmp_path: Path, problem: str
):
    good = CacheSettings(_env_file=calibrated).semantic.scorer
    bad = tmp_path / "scorer.json"
    semantic: dict[str, object] = {"scorer": str(bad)}
    if problem == "missing":
        pass
    elif problem == "not-json":
        bad.write_text("{not json", encoding="utf-8")
    elif problem == "other-format":
        bad.write_text('{"format": "something-else"}', encoding="utf-8")
    elif problem == "other-embedder":
        semantic = {"scorer": good, "embedder": "minilm"}
    else:
        semantic = {"scorer": good, "store_question": False}
    with pytest.raises(ConfigError, match=r"semantic\.scorer"):
        SemanticCache(
            _settings(calibrated, **semantic),
            embedder=cache_embedder() if problem != "other-embedder" else None,
            store=InMemoryStore(),
            upstream=FakeUpstream(),
        )


# -- the tier and the stage, with a plug-in scorer -------------------------------------------


class RecordingScorer:
    """A ``HitScorer`` that returns a fixed score, records the thread, or raises."""

    name = "recording"

    def __init__(self, value: float = 0.9) -> None:
        self.value = value
        self.threads: list[int] = []
        self.fail = False

    def score(self, query: str, candidate: str, similarity: float) -> float:
        self.threads.append(threading.get_ident())
        if self.fail:
            raise SemcacheError("scorer down")
        return self.value


def _tier(scorer: RecordingScorer, band: ScoreBand) -> SemanticTier:
    decision = ScoredDecision(scorer, 0.5, band)
    return SemanticTier(
        embedder=cache_embedder,
        store=InMemoryStore,
        verifier=_NeverCalled(),
        threshold=0.999,
        scorer=lambda: decision,
    )


class _NeverCalled:
    name = "never"

    def verify(self, query: str, candidate: str) -> bool:
        raise AssertionError("the verifier must not run when a scorer decides")


def test_judge_follows_the_band_and_scores_off_the_event_loop():
    scorer = RecordingScorer(0.9)
    tier = _tier(scorer, ScoreBand(0.8, 0.98))
    # before set-up, a tier with a scorer serves nothing (never the cosine rule)
    assert not tier.judge("q", "c", 0.9, "default").hit

    async def run() -> tuple[list, int]:
        await tier.setup()
        loop_thread = threading.get_ident()
        verdicts = [
            await tier.ajudge("q", "c", similarity, "default") for similarity in (0.5, 0.9, 0.99)
        ]
        verdicts.append(await tier.ajudge("q", None, 0.9, "default"))
        await tier.close()
        return verdicts, loop_thread

    verdicts, loop_thread = asyncio.run(run())
    assert [(v.hit, v.outcome, v.score) for v in verdicts] == [
        (False, Outcome.BELOW_BAND, None),
        (True, Outcome.SCORED_HIT, 0.9),
        (True, Outcome.ABOVE_BAND, None),
        (False, Outcome.NO_QUESTION, None),
    ]
    assert len(scorer.threads) == 1 and scorer.threads[0] != loop_thread
    scorer.value = 0.2
    assert tier.judge("q", "c", 0.9, "default") == tier.judge("q", "c", 0.9, "default")
    assert not tier.judge("q", "c", 0.9, "default").hit


def test_a_failing_scorer_is_a_counted_miss_and_the_answer_is_still_stored():
    from semcache.compose import assemble
    from semcache.direct import call_kwargs

    scorer = RecordingScorer(0.9)
    scorer.fail = True
    embedder = cache_embedder()
    upstream = FakeUpstream()
    assembly = assemble(
        CacheSettings(semantic={"verifier": "none"}, store={"backend": "none"}),
        embedder=embedder,
        store=InMemoryStore(),
        upstream=upstream,
        scorer=ScoredDecision(scorer, 0.5, ScoreBand(0.8, 2.0)),
    )

    async def ask(prompt: str) -> Tier:
        request = assembly.prepare(call_kwargs(prompt, None, MODEL, None, None, {}))
        found = await assembly.path.run(request)
        await assembly.writer.flush()
        return found.tier

    async def run() -> list[Tier]:
        tiers = [await ask(STORED_B), await ask(NEW_B), await ask(NEW_B)]
        await assembly.backend.close()
        return tiers

    assert asyncio.run(run()) == [Tier.MISS, Tier.MISS, Tier.EXACT]
    assert assembly.stats.snapshot().errors == {"semantic_judge": 1}
    assert len(scorer.threads) == 1 and upstream.call_count == 2
    # the failed judgement still handed the question's vector on: 2 texts embedded in all
    assert embedder.texts == 2


def test_under_dismisses_only_what_judge_calls_a_plain_miss():
    """``SemanticTier.under`` lets the in-flight merge skip a judgement: it must never be
    true where ``judge`` would serve, score or veto (a dropped band or floor check fails)."""
    grid = [round(x, 3) for x in np.linspace(0.5, 1.0, 51)]
    scored = _tier(RecordingScorer(0.9), ScoreBand(0.8, 0.98))
    plain = SemanticTier(
        embedder=cache_embedder,
        store=InMemoryStore,
        verifier=get_verifier("details"),
        threshold=0.9,
        namespace_thresholds={"strict": 0.95},
    )
    assert scored.under(0.99, "default")  # before set-up a scorer's tier serves nothing

    async def run() -> None:
        await scored.setup()
        scored.namespace_thresholds["strict"] = 0.9
        try:
            for tier in (scored, plain):
                for namespace in ("default", "strict"):
                    for similarity in grid:
                        verdict = tier.judge("q 1", "q 2", similarity, namespace)
                        plain_miss = not verdict.hit and not verdict.rejected
                        expected = plain_miss and verdict.score is None
                        assert tier.under(similarity, namespace) == expected, (
                            tier,
                            namespace,
                            similarity,
                            verdict,
                        )
        finally:
            await scored.close()

    asyncio.run(run())

"""Plug-in scorers end to end, offline: ``semcache calibrate --plugin`` → scorer file → cache.

The labeled set is synthetic (no third-party text): "topic N needs X steps" against "topic N
takes Y steps", labeled 1 when X == Y. Its cosines are placed so that the cosine cannot tell
inside a middle range: pairs at >= 0.95 all have the same number, pairs in [0.85, 0.95) are
half and half, pairs below 0.85 never match. The judge is the loopback fake upstream told
to answer "yes" exactly when the two numbers agree, so inside the band it is right where
the cosine is blind; the cross-encoder is a tiny random BERT built and saved locally.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import ConfigError
from semcache.eval import cli, resolve
from semcache.scoring.cross_encoder import CrossEncoderScorer
from semcache.scoring.plugins import PluginSpec, SavedPlugin, build_plugin
from semcache.scoring.saved import SavedScorer, load_scorer_file, plugin_from_json
from semcache.testing import FakeOpenAIServer, FakeUpstream, InMemoryStore, hash_embedding

EMBEDDER = "placed"
MODEL = "gpt-4o-mini"
JUDGE = "openai/gpt-4o-mini"  # priced in LiteLLM's bundled map
KEY_ENV = "JUDGE_TEST_API_KEY"
KEY = "test-key-7f3a"


def _axis(i: int, dim: int) -> np.ndarray:
    v = np.zeros(dim, dtype=np.float32)
    v[i] = 1.0
    return v


def _at(cosine: float, i: int, j: int, dim: int) -> np.ndarray:
    return (cosine * _axis(i, dim) + np.sqrt(1.0 - cosine * cosine) * _axis(j, dim)).astype(
        np.float32
    )


class PlacedEmbedder:
    """Chosen vectors for chosen texts, a hashed bag of words for any other."""

    def __init__(self, vectors: dict[str, np.ndarray], dim: int) -> None:
        self.vectors, self.dim, self.name = vectors, dim, EMBEDDER

    def embed(self, texts):
        return np.stack([self.vectors.get(t, hash_embedding(t, self.dim)) for t in texts]).astype(
            np.float32
        )


def _pairs(tmp: Path, n: int = 600) -> tuple[Path, PlacedEmbedder]:
    rng = np.random.default_rng(3)
    vectors: dict[str, np.ndarray] = {}
    lines = []
    for i in range(n):
        x = int(rng.integers(2, 99))
        region = i % 20
        if region < 7:  # 35%: near duplicates, always the same number
            cosine, same = rng.uniform(0.95, 1.0), True
        elif region < 15:  # 40%: the cosine cannot tell
            cosine, same = rng.uniform(0.85, 0.95), region % 2 == 0
        else:  # 25%: other questions
            cosine, same = rng.uniform(0.5, 0.85), False
        a, b = f"topic {i} needs {x} steps", f"topic {i} takes {x if same else x + 1} steps"
        vectors[a] = _axis(0, 2)
        vectors[b] = _at(float(cosine), 0, 1, 2)
        lines.append(json.dumps({"text_a": a, "text_b": b, "label": int(same)}))
    data = tmp / "placed.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return data, PlacedEmbedder(vectors, dim=2)


def same_number(body: dict) -> str:
    """The fake judge: 'yes' when the two questions end in the same number of steps."""
    text = body["messages"][-1]["content"]
    a = text.split("Question A: ")[1].split("\n")[0]
    b = text.split("Question B: ")[1].split("\n")[0]
    return "Yes." if re.findall(r"\d+", a)[-1] == re.findall(r"\d+", b)[-1] else "no"


def _calibrate(data: Path, embedder: PlacedEmbedder, *argv: str) -> int:
    with pytest.MonkeyPatch.context() as mp:
        for key in ("SCORER", "EMBEDDER", "THRESHOLD", "VERIFIER", "NAMESPACE_THRESHOLDS"):
            mp.delenv(f"SEMCACHE_SEMANTIC__{key}", raising=False)
        mp.setattr(resolve, "resolve_embedder", lambda name, batch, runtime="auto", **_: embedder)
        return cli.calibrate_main(
            ["--data", str(data), "--embedder", EMBEDDER, "--verifier", "none", *argv]
        )


@pytest.fixture(scope="module")
def judge_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(responder=same_number) as server:
        yield server


@pytest.fixture(scope="module")
def judged(tmp_path_factory, judge_server: FakeOpenAIServer) -> Iterator[tuple[Path, int, str]]:
    """``calibrate --scorer plugin --plugin llm-judge:...`` → (.env, judge calls, report)."""
    tmp = tmp_path_factory.mktemp("judged")
    data, embedder = _pairs(tmp)
    env = tmp / ".env"
    judge_server.reset()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, KEY)
        import io
        from contextlib import redirect_stdout

        out = io.StringIO()
        with redirect_stdout(out):
            code = _calibrate(
                data,
                embedder,
                "--target",
                "0.05",
                "--scorer",
                "plugin",
                "--plugin",
                f"llm-judge:{JUDGE}",
                "--judge-api-base",
                judge_server.api_base,
                "--judge-api-key-env",
                KEY_ENV,
                "--judge-timeout",
                "7.5",
                "--holdout",
                "0.5",
                "--save",
                str(env),
            )
    assert code == 0, out.getvalue()
    yield env, judge_server.chat_calls, out.getvalue()


@pytest.fixture(scope="module")
def cosine_threshold(tmp_path_factory) -> float:
    """What calibrate certifies for the cosine alone on the same pairs (the control; at 5%
    nothing qualifies for the cosine on these pairs, so even at a looser 10%)."""
    tmp = tmp_path_factory.mktemp("cosine")
    data, embedder = _pairs(tmp)
    env = tmp / ".env"
    assert (
        _calibrate(data, embedder, "--target", "0.10", "--scorer", "cosine", "--save", str(env))
        == 0
    )
    return CacheSettings(_env_file=env).semantic.threshold


# Cache-side questions at chosen cosines, each pair on its own axes (nothing else is nearer).
STORED = {
    "in_band_same": ("topic alpha needs 5 steps", "topic alpha takes 5 steps", 0.90),
    "in_band_other": ("topic beta needs 7 steps", "topic beta takes 8 steps", 0.96),
    "above_band": ("topic gamma needs 3 steps", "topic gamma takes 4 steps", 0.995),
    "below_band": ("topic delta needs 9 steps", "topic delta takes 9 steps", 0.70),
}


def cache_embedder() -> PlacedEmbedder:
    vectors = {}
    for k, (stored, new, cosine) in enumerate(STORED.values()):
        vectors[stored] = _axis(2 * k, 8)
        vectors[new] = _at(cosine, 2 * k, 2 * k + 1, 8)
    return PlacedEmbedder(vectors, dim=8)


def _settings(env: Path, **semantic: object) -> CacheSettings:
    base = CacheSettings(_env_file=env).semantic.model_dump()
    return CacheSettings(semantic={**base, **semantic}, store={"backend": "none"})


def _cache(settings: CacheSettings) -> SemanticCache:
    return SemanticCache(
        settings, embedder=cache_embedder(), store=InMemoryStore(), upstream=FakeUpstream()
    )


def _seed(cache: SemanticCache) -> None:
    for stored, _, _ in STORED.values():
        cache.store(stored, f"answer to {stored}", model=MODEL)
    cache.flush()


def _check(cache: SemanticCache, case: str) -> bool:
    return cache.check(STORED[case][1], model=MODEL) is not None


# -- the file calibrate wrote --------------------------------------------------------------------


def test_the_judge_file_names_the_plugin_and_never_the_key(judged, judge_server):
    env, calls, report = judged
    settings = CacheSettings(_env_file=env)
    assert settings.semantic.embedder == EMBEDDER
    text = Path(settings.semantic.scorer).read_text(encoding="utf-8")
    assert KEY not in text and KEY not in env.read_text(encoding="utf-8")
    data = json.loads(text)
    assert (data["version"], data["kind"]) == (2, "llm-judge")
    assert data["plugin"] == {
        "kind": "llm-judge",
        "model": JUDGE,
        "api_base": judge_server.api_base,
        "api_key_env": KEY_ENV,
        "timeout_s": 7.5,
    }
    saved = load_scorer_file(settings.semantic.scorer)
    assert isinstance(saved, SavedPlugin) and saved.primary == EMBEDDER
    # the band comes from the fitting part: the blind middle is inside, the clean top is not
    assert saved.band.lo < 0.86 and 0.95 < saved.band.hi < 1.0
    assert 0.0 < saved.threshold <= 1.0  # a hit on "yes" (1.0) only, never on "no" (0.0)
    # every judge call calibration made is counted in the file and in the report
    assert calls > 100 and saved.calibration["plugin_calls"] == calls
    assert saved.calibration["judge_usd"] > 0 and saved.calibration["judge_unpriced_calls"] == 0
    assert saved.calibration["judge_prompt_tokens"] > calls
    assert f"{calls} judge calls" in report and "$" in report
    assert saved.calibration["delta"] == 0.05 and saved.calibration["testing_false_hits"] == 0
    # the key went to the fake upstream from the variable the file names
    assert judge_server.headers[-1]["authorization"] == f"Bearer {KEY}"


def test_the_cache_asks_the_judge_only_inside_the_band(judged, judge_server, cosine_threshold):
    env, _, _ = judged
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, KEY)
        cache = _cache(_settings(env))
    with cache:
        _seed(cache)
        judge_server.reset()
        # inside the band, below the cosine threshold, same number: the judge serves it
        assert _check(cache, "in_band_same") and STORED["in_band_same"][2] < cosine_threshold
        # inside the band, above the cosine threshold, another number: the judge refuses it
        assert not _check(cache, "in_band_other")
        assert STORED["in_band_other"][2] >= cosine_threshold
        assert judge_server.chat_calls == 2
        assert judge_server.headers[-1]["authorization"] == f"Bearer {KEY}"
        # above the band: a hit with no judge call; below it: a miss with none
        assert _check(cache, "above_band") and not _check(cache, "below_band")
        assert judge_server.chat_calls == 2
        stats = cache.stats()
        assert stats.counts["scorer_scored"] == 2 and stats.counts["scorer_rejections"] == 1
        assert stats.counts["scorer_judge_calls"] == 2
        assert stats.counts["scorer_judge_tokens"] > 2
        assert "scorer_judge_unpriced_calls" not in stats.counts
        assert stats.spent_usd["scorer_judge"] > 0 and not stats.errors


def test_cosine_alone_decides_the_other_way(judged, cosine_threshold):
    """The control: the threshold calibrate certified for the cosine on the same pairs."""
    env, _, _ = judged
    with _cache(_settings(env, scorer=None, threshold=cosine_threshold, verifier="none")) as c:
        _seed(c)
        assert not _check(c, "in_band_same") and _check(c, "in_band_other")


def test_a_failing_judge_is_a_counted_miss(judged, judge_server):
    env, _, _ = judged
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, KEY)
        cache = _cache(_settings(env))
    with cache:
        _seed(cache)
        judge_server.reset()
        judge_server.fail_next.append(400)
        assert not _check(cache, "in_band_same")
        assert judge_server.chat_calls == 1
        stats = cache.stats()
        assert stats.errors == {"semantic_judge": 1} and "scorer_judge_calls" not in stats.counts
        assert _check(cache, "in_band_same")  # the judge answers again: served


def test_an_unpriced_judge_is_counted_apart(judged, judge_server, tmp_path):
    env, _, _ = judged
    saved = load_scorer_file(CacheSettings(_env_file=env).semantic.scorer)
    assert isinstance(saved, SavedPlugin)
    from dataclasses import replace

    from semcache.scoring.saved import save_plugin

    unpriced = replace(saved, plugin=replace(saved.plugin, model="openai/my-local-judge"))
    file = tmp_path / "scorer.json"
    save_plugin(unpriced, file)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, KEY)
        cache = _cache(_settings(env, scorer=str(file)))
    with cache:
        _seed(cache)
        assert _check(cache, "in_band_same")
        stats = cache.stats()
        assert stats.counts["scorer_judge_calls"] == 1
        assert stats.counts["scorer_judge_unpriced_calls"] == 1
        assert "scorer_judge" not in stats.spent_usd


@pytest.mark.parametrize("problem", ["no-key", "other-embedder", "no-question", "bad-plugin"])
def test_a_bad_plugin_file_fails_construction_naming_the_setting(judged, tmp_path, problem):
    env, _, _ = judged
    good = CacheSettings(_env_file=env).semantic.scorer
    semantic: dict[str, object] = {}
    if problem == "other-embedder":
        semantic = {"embedder": "minilm"}
    elif problem == "no-question":
        semantic = {"store_question": False}
    elif problem == "bad-plugin":
        data = json.loads(Path(good).read_text(encoding="utf-8"))
        data["plugin"]["api_key_env"] = "sk-not-a-variable-name"
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps(data), encoding="utf-8")
        semantic = {"scorer": str(bad)}
    with pytest.MonkeyPatch.context() as mp:
        if problem == "no-key":
            mp.delenv(KEY_ENV, raising=False)
        else:
            mp.setenv(KEY_ENV, KEY)
        with pytest.raises(ConfigError, match=r"semantic\.scorer") as raised:
            SemanticCache(
                _settings(env, **semantic),
                embedder=cache_embedder() if problem != "other-embedder" else None,
                store=InMemoryStore(),
                upstream=FakeUpstream(),
            )
    if problem == "no-key":
        assert KEY_ENV in str(raised.value)


# -- the file format -----------------------------------------------------------------------------


def test_the_judge_timeout_in_the_file_bounds_each_call(judge_server):
    spec = PluginSpec("llm-judge", JUDGE, api_base=judge_server.api_base, timeout_s=0.3)
    judge = build_plugin(spec, api_key=KEY)
    judge_server.reset()
    judge_server.delay_s = 2.0
    try:
        from semcache.errors import ScorerError

        with pytest.raises(ScorerError, match="judge"):
            judge.score("topic a needs 1 steps", "topic a takes 1 steps", 0.9)
    finally:
        judge_server.delay_s = 0.0


def test_plugin_spec_checks_its_fields():
    assert PluginSpec.parse("llm-judge:ollama/llama3:8b").model == "ollama/llama3:8b"
    assert PluginSpec.parse("llm-judge:x").timeout_s == 10.0
    assert PluginSpec.parse("cross-encoder:/models/ce").timeout_s is None
    for text in ("judge:x", "cross-encoder", "cross-encoder:"):
        with pytest.raises(ConfigError):
            PluginSpec.parse(text)
    for judge_only in ({"api_base": "http://x"}, {"api_key_env": "K"}, {"timeout_s": 1.0}):
        with pytest.raises(ConfigError, match="llm-judge only"):
            PluginSpec("cross-encoder", "/m", **judge_only)
    with pytest.raises(ConfigError, match="never the key"):
        PluginSpec("llm-judge", "m", api_key_env="sk-123")
    with pytest.raises(ConfigError, match="timeout_s"):
        PluginSpec("llm-judge", "m", timeout_s=0.0)


def _plugin_json() -> dict:
    return {
        "format": "semcache-scorer",
        "version": 2,
        "kind": "cross-encoder",
        "plugin": {"kind": "cross-encoder", "model": "/models/ce"},
        "primary": "minilm",
        "threshold": -1.5,
        "band": {"lo": 0.8, "hi": 0.97},
        "calibration": {},
    }


def test_a_plugin_file_round_trips_and_every_field_is_required():
    from semcache.scoring.saved import plugin_to_json

    saved = plugin_from_json(_plugin_json())
    assert (saved.plugin.model, saved.primary, saved.threshold) == ("/models/ce", "minilm", -1.5)
    assert (saved.band.lo, saved.band.hi) == (0.8, 0.97)
    assert plugin_to_json(saved) == _plugin_json()
    for field in ("plugin", "primary", "threshold", "band"):
        data = _plugin_json()
        del data[field]
        with pytest.raises(ConfigError):
            plugin_from_json(data)
    for change in (
        {"kind": "llm-judge"},
        {"kind": "oracle"},
        {"version": 3},
        {"threshold": float("nan")},
        {"band": {"lo": 0.9, "hi": 0.8}},
    ):
        with pytest.raises(ConfigError):
            plugin_from_json({**_plugin_json(), **change})
    with pytest.raises(ConfigError, match="not a learned"):
        SavedScorer.from_json(_plugin_json())


# -- a cross-encoder -----------------------------------------------------------------------------


def test_a_cross_encoder_calibrates_saves_and_decides_in_the_cache(tiny_cross_encoder, tmp_path):
    data, embedder = _pairs(tmp_path)
    env = tmp_path / ".env"
    plugin = f"cross-encoder:{tiny_cross_encoder}"
    argv = ["--target", "0.2", "--scorer", "plugin", "--plugin", plugin, "--save", str(env)]
    assert _calibrate(data, embedder, *argv) == 0
    saved = load_scorer_file(CacheSettings(_env_file=env).semantic.scorer)
    assert isinstance(saved, SavedPlugin)
    assert saved.plugin == PluginSpec("cross-encoder", str(tiny_cross_encoder))
    assert saved.calibration["plugin_calls"] > 100 and "judge_usd" not in saved.calibration
    reference = CrossEncoderScorer(str(tiny_cross_encoder))
    # find, inside the band, a question the random model refuses at a high cosine and one it
    # serves at a lower cosine: the cache must follow the model, not the cosine
    lo, hi = saved.band.lo, min(saved.band.hi, 1.0)
    high, low = lo + 0.9 * (hi - lo), lo + 0.1 * (hi - lo)
    stored = "topic omega needs 4 steps"
    candidates = [
        f"topic omega {w} 4 steps"
        for w in (
            "takes",
            "wants",
            "has",
            "uses",
            "gets",
            "asks",
            "runs",
            "adds",
            "sees",
            "holds",
            "lists",
            "makes",
        )
    ]
    scores = {c: reference.score(c, stored, 0.0) for c in candidates}
    refused = [c for c, s in scores.items() if s < saved.threshold]
    served = [c for c, s in scores.items() if s >= saved.threshold]
    assert refused and served, (scores, saved.threshold)
    vectors = {stored: _axis(0, 8), refused[0]: _at(high, 0, 1, 8), served[0]: _at(low, 0, 2, 8)}
    settings = _settings(env)
    with SemanticCache(
        settings,
        embedder=PlacedEmbedder(vectors, 8),
        store=InMemoryStore(),
        upstream=FakeUpstream(),
    ) as cache:
        cache.store(stored, "four", model=MODEL)
        cache.flush()
        assert cache.check(refused[0], model=MODEL) is None
        hit = cache.check(served[0], model=MODEL)
        assert hit is not None and hit.info.score == pytest.approx(scores[served[0]], abs=1e-5)
        assert cache.stats().counts["scorer_scored"] == 2


def test_old_version_1_learned_files_still_load(tmp_path):
    from semcache.scoring import ScoreBand
    from semcache.scoring.model import LogisticModel
    from semcache.scoring.saved import feature_names

    width = len(feature_names(("minilm",)))
    model = LogisticModel(np.ones(width), 0.5, np.zeros(width), np.ones(width))
    saved = SavedScorer(model, ("minilm",), "minilm", 0.7, ScoreBand(0.8, 2.0))
    data = saved.to_json()
    assert (data["version"], data["kind"]) == (2, "learned")
    old = {k: v for k, v in data.items() if k != "kind"} | {"version": 1}
    (tmp_path / "v1.json").write_text(json.dumps(old), encoding="utf-8")
    loaded = load_scorer_file(tmp_path / "v1.json")
    assert isinstance(loaded, SavedScorer) and loaded.threshold == 0.7
    assert loaded.to_json() == data


def test_plugin_band_sets_the_band_and_the_calls_follow_it(judge_server, tmp_path):
    data, embedder = _pairs(tmp_path)
    env = tmp_path / ".env"
    judge_server.reset()
    argv = [
        "--target",
        "0.05",
        "--scorer",
        "plugin",
        "--plugin",
        f"llm-judge:{JUDGE}",
        "--judge-api-base",
        judge_server.api_base,
        "--plugin-band",
        "0.9",
        "inf",
        "--save",
        str(env),
    ]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("OPENAI_API_KEY", KEY)  # no --judge-api-key-env: LiteLLM's own variable
        assert _calibrate(data, embedder, *argv) == 0
    saved = load_scorer_file(CacheSettings(_env_file=env).semantic.scorer)
    assert isinstance(saved, SavedPlugin)
    assert (saved.band.lo, saved.band.hi) == (0.9, float("inf"))
    assert saved.plugin.api_key_env is None and saved.plugin.timeout_s == 10.0
    cosines = [
        embedder.vectors[json.loads(line)["text_b"]][0]
        for line in data.read_text(encoding="utf-8").splitlines()
    ]
    inside = sum(c >= 0.9 for c in cosines)
    assert judge_server.chat_calls == saved.calibration["plugin_calls"] == inside


@pytest.mark.parametrize(
    "argv",
    [
        ["--scorer", "plugin"],
        ["--plugin", "oracle:x"],
        ["--plugin", "cross-encoder:/m", "--judge-api-base", "http://x"],
        ["--plugin", "llm-judge:m", "--judge-api-key-env", "NO_SUCH_JUDGE_KEY_VARIABLE"],
        ["--plugin", "llm-judge:m", "--namespace", "faq"],
        ["--plugin", "llm-judge:m", "--plugin-band", "0.9", "0.8"],
        ["--plugin-band", "0", "1"],
        ["--plugin", "llm-judge:m", "--scorer", "cosine"],
    ],
)
def test_bad_plugin_arguments_are_errors_before_any_call(argv, tmp_path, judge_server):
    data, embedder = _pairs(tmp_path, n=40)
    judge_server.reset()
    assert _calibrate(data, embedder, "--target", "0.05", *argv) == 2
    assert judge_server.chat_calls == 0


def test_plugin_with_labels_is_an_error(tmp_path):
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"text_a": "a", "text_b": "b", "label": 1, "similarity": 0.9}\n')
    assert (
        cli.calibrate_main(["--labels", str(labels), "--target", "0.05", "--plugin", "llm-judge:m"])
        == 2
    )

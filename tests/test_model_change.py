"""A provider moving a model name to a new snapshot: older answers of that name stop being
served (policy ``invalidate``), or are kept (``keep``); counted either way."""

from __future__ import annotations

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.config.settings import PolicySettings, StoreSettings
from semcache.core.model_watch import ModelWatch, snapshot_of
from semcache.stats import Stats
from semcache.testing import FakeUpstream


def req(content: str, model: str = "gpt-4o-mini") -> dict:
    return {"model": model, "messages": [{"role": "user", "content": content}]}


def make(upstream: FakeUpstream, policy: str = "invalidate") -> SemanticCache:
    settings = CacheSettings(
        store=StoreSettings(backend="none"), policy=PolicySettings(on_model_change=policy)
    )
    return SemanticCache(settings, upstream=upstream)


def tier(cache: SemanticCache, content: str, model: str = "gpt-4o-mini") -> str:
    return str(cache_info(cache.completion(**req(content, model))).tier)


@pytest.mark.parametrize(
    "change", [{"model": "gpt-4o-mini-2025-01-31"}, {"system_fingerprint": "fp_new"}]
)
def test_a_new_snapshot_withdraws_older_answers_of_that_model_name(change):
    upstream = FakeUpstream(model="gpt-4o-mini-2024-07-18", system_fingerprint="fp_old")
    with make(upstream) as cache:
        assert tier(cache, "one") == tier(cache, "two") == "miss"
        assert tier(cache, "other model", "gpt-4o") == "miss"
        assert tier(cache, "one") == "exact"
        for name, value in change.items():
            setattr(upstream, name, value)
        assert tier(cache, "three") == "miss"  # reports the new snapshot
        assert cache.stats().counts["model_changes"] == 1
        assert tier(cache, "one") == "miss" and tier(cache, "two") == "miss"  # withdrawn
        assert tier(cache, "three") == "exact"  # the new snapshot's answers are served
        assert tier(cache, "one") == "exact"  # and so is the fresh answer to "one"
        assert tier(cache, "other model", "gpt-4o") == "exact"  # another name is untouched
        assert cache.stats().counts["model_changes"] == 1


def test_keep_serves_older_answers_but_still_counts_the_change():
    upstream = FakeUpstream(model="gpt-4o-mini-2024-07-18")
    with make(upstream, policy="keep") as cache:
        tier(cache, "one")
        upstream.model = "gpt-4o-mini-2025-01-31"
        assert tier(cache, "two") == "miss"
        assert tier(cache, "one") == "exact"
        assert cache.stats().counts["model_changes"] == 1


def test_the_same_snapshot_again_changes_nothing():
    upstream = FakeUpstream(model="gpt-4o-mini-2024-07-18")
    with make(upstream) as cache:
        for question in ("one", "two", "three"):
            tier(cache, question)
        assert tier(cache, "one") == "exact"
        assert "model_changes" not in cache.stats().counts


def test_watch_units():
    watch = ModelWatch(Stats(), invalidate=True)
    assert snapshot_of(object()) is None
    assert not watch.observe("m", None, 1.0)  # nothing reported: nothing decided
    assert not watch.observe("m", "a|", 1.0)  # first sighting
    assert watch.observe("m", "b|", 5.0)
    from semcache.stores.base import Entry

    def entry(created_at: float, model: str = "m") -> Entry:
        return Entry("k", "t", "n", model, "s", "{}", created_at, 10.0, "e")

    assert not watch.fresh(entry(4.9)) and watch.fresh(entry(5.0))
    assert watch.fresh(entry(0.0, model="other"))
    watch.mark("m", 3.0)  # an older mark never moves the watermark back
    assert not watch.fresh(entry(4.0))


def test_namespace_default_ttl_overrides_the_global_one_and_a_request_ttl_wins():
    now = [1_700_000_000.0]
    settings = CacheSettings(
        store=StoreSettings(backend="none"),
        policy=PolicySettings(default_ttl_s=1000, namespace_ttl_s={"news": 10, "forever": None}),
    )
    upstream = FakeUpstream()
    with SemanticCache(settings, upstream=upstream, clock=lambda: now[0]) as cache:

        def ask(namespace: str | None = None, **control: object) -> str:
            cache_control = {**control, **({"namespace": namespace} if namespace else {})}
            response = cache.completion(**req("q"), cache=cache_control)
            return str(cache_info(response).tier)

        for namespace in (None, "news", "forever"):
            ask(namespace)
        ask("pinned", ttl=5000)
        now[0] += 11  # past the news default only
        assert [ask(ns) for ns in (None, "news", "forever", "pinned")] == [
            "exact",
            "miss",
            "exact",
            "exact",
        ]
        now[0] += 1000  # past the global default too
        assert [ask(ns) for ns in (None, "forever", "pinned")] == ["miss", "exact", "exact"]


def test_namespace_ttls_are_validated():
    from semcache.errors import SettingsError

    with pytest.raises(SettingsError, match="namespace_ttl_s"):
        PolicySettings(namespace_ttl_s={"news": -1})


@pytest.mark.parametrize("how", [{"num_results": 3}, {"threshold": 0.99}, {"filters": {}}])
def test_check_with_options_never_serves_an_older_snapshot(how, tmp_path):
    """``check()`` with ``num_results`` / ``threshold`` / ``filters`` takes its own lookup
    path; a withdrawn snapshot's answers stay withdrawn there too (exact and semantic)."""
    from semcache.testing import FakeEmbedder

    upstream = FakeUpstream(model="gpt-4o-mini-2024-07-18")
    settings = CacheSettings(
        store=StoreSettings(path=":memory:"),
        policy=PolicySettings(on_model_change="invalidate"),
        semantic={"threshold": 0.5, "verifier": "none"},
    )
    with SemanticCache(settings, upstream=upstream, embedder=FakeEmbedder()) as cache:
        assert tier(cache, "what is the capital of france") == "miss"
        cache.flush()
        ask = {"model": "gpt-4o-mini", "prompt": "what is the capital of france"}
        assert cache.check(**ask, **how)  # served before the change
        upstream.model = "gpt-4o-mini-2025-01-31"
        assert tier(cache, "an unrelated question about rivers") == "miss"
        cache.flush()
        assert cache.stats().counts["model_changes"] == 1
        assert not cache.check(**ask, **how)
        assert cache.check(**ask) is None  # the stages agree

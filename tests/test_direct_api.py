"""The direct API a RedisVL / GPTCache user expects (issue 22 item 6): metadata, filters,
num_results, a per-call threshold, drop / update, and ``model`` optional."""

from __future__ import annotations

import pytest

from semcache import CacheSettings, InvalidRequest, SemanticCache
from semcache.direct import DEFAULT_MODEL
from semcache.stats import Tier
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

Q = "How do I reset my password?"
PARA = "how do i reset my password"
JACKET = "Can I still return the blue jacket I bought at the store {} days ago?"


@pytest.fixture
def store():
    return InMemoryStore()


@pytest.fixture
def cache(store):
    settings = CacheSettings(semantic={"threshold": 0.9, "verifier": "details"})
    with SemanticCache(
        settings, embedder=FakeEmbedder(), store=store, upstream=FakeUpstream()
    ) as cache:
        assert cache.ready()
        yield cache


def test_metadata_is_kept_and_returned_by_both_tiers(cache, store):
    meta = {"source": "faq", "rank": 2, "tags": ["auth"]}
    cache.store(Q, "Settings > Security", metadata=meta)
    assert cache.check(Q).metadata == meta  # exact, from memory
    cache.flush()  # the write has landed: the paraphrase is answered by the store
    assert cache.check(PARA).metadata == meta  # semantic, from the store
    assert store.upserted[-1].metadata == meta
    assert cache.check("Name the largest ocean.") is None


def test_model_is_optional_and_its_default_is_a_partition_of_its_own(cache):
    cache.store(Q, "A")
    assert cache.check(Q).text == "A" and cache.check(Q, model=DEFAULT_MODEL).text == "A"
    assert cache.check(Q, model="gpt-4o-mini") is None
    messages = [{"role": "user", "content": Q}]
    assert (
        cache.completion(model="gpt-4o-mini", messages=messages).choices[0].message.content != "A"
    )


def test_filters_select_on_metadata(cache):
    cache.store(Q, "faq answer", metadata={"source": "faq"})
    cache.store(Q + " Please help.", "blog answer", metadata={"source": "blog"})
    cache.flush()
    assert cache.check(Q, filters={"source": "faq"}).text == "faq answer"
    assert cache.check(Q, filters={"source": "blog"}).text == "blog answer"  # semantic
    assert cache.check(Q, filters={"source": ["blog", "faq"]}).info.tier is Tier.EXACT
    assert cache.check(Q, filters={"source": "nowhere"}) is None
    assert cache.check(Q, filters={"missing": 1}) is None


def test_a_filter_never_reaches_another_tenant(cache):
    cache.store(Q, "team blue's answer", tenant="blue", metadata={"team": "blue"})
    cache.flush()
    assert cache.check(Q, tenant="red", filters={"team": "blue"}) is None
    assert cache.check(PARA, tenant="red", filters={"team": "blue"}, num_results=5) == []
    assert cache.check(Q, tenant="blue", filters={"team": "blue"}).text == "team blue's answer"


def test_num_results_returns_the_exact_entry_then_by_similarity(cache):
    cache.store(Q, "exact")
    cache.store(Q + " Quickly", "close")
    cache.store("What is the capital of France?", "far")
    cache.flush()
    hits = cache.check(Q, num_results=5)
    assert [h.text for h in hits][:2] == ["exact", "close"]
    assert "far" not in [h.text for h in hits]  # below the threshold: not a hit
    sims = [h.info.nearest_similarity for h in hits]
    assert sims == sorted(sims, reverse=True)
    assert len(cache.check(Q, num_results=1)) == 1


def test_threshold_may_only_tighten_unless_loosening_is_explicit(cache):
    cache.store(Q, "A")
    cache.flush()
    near = "how do i reset my password please"
    para = cache.check(near)
    assert para is not None and para.info.tier is Tier.SEMANTIC and para.info.similarity < 1
    assert cache.check(near, threshold=para.info.similarity).text == "A"  # stricter, passes
    assert cache.check(near, threshold=para.info.similarity + 1e-4) is None  # stricter, fails
    with pytest.raises(InvalidRequest, match="looser") as caught:
        cache.check(PARA, threshold=0.5)
    assert caught.value.field == "threshold"
    cache.store(JACKET.format(14), "14 days: yes")
    cache.flush()
    # the guard still vetoes a different number even with an explicit looser threshold
    assert cache.check(JACKET.format(40), threshold=0.5, allow_looser=True) is None
    loose = cache.check("please, how do i reset my password now", threshold=0.5, allow_looser=True)
    assert loose is not None and loose.text == "A"
    assert cache.check("please, how do i reset my password now") is None  # served threshold


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"filters": {"k": 1.5}}, "filters"),
        ({"num_results": 0}, "num_results"),
        ({"threshold": 2}, "threshold"),
        ({"threshold": "high"}, "threshold"),
    ],
)
def test_bad_arguments_name_the_field(cache, kwargs, field):
    with pytest.raises(InvalidRequest) as caught:
        cache.check(Q, **kwargs)
    assert caught.value.field == field


def test_bad_metadata_is_refused_and_nothing_stored(cache, store):
    for bad in ({"x": object()}, "not an object", {"x": float("nan")}):
        with pytest.raises(InvalidRequest) as caught:
            cache.store(Q, "A", metadata=bad)
        assert caught.value.field == "metadata"
    cache.flush()
    assert store.upserted == () and cache.check(Q) is None


def test_drop_removes_the_entry_everywhere(cache, store):
    cache.store(Q, "A", tenant="t")
    cache.flush()
    assert cache.drop(Q, tenant="other") == 0  # another tenant's drop touches nothing
    assert cache.check(Q, tenant="t").text == "A"
    assert cache.drop(Q, tenant="t") == 2  # memory and store
    assert cache.check(Q, tenant="t") is None and cache.check(PARA, tenant="t") is None


def test_update_replaces_answer_and_metadata(cache):
    cache.store(Q, "old", metadata={"v": 1})
    cache.update(Q, "new", metadata={"v": 2})
    cache.flush()
    assert (cache.check(Q).text, cache.check(Q).metadata) == ("new", {"v": 2})
    assert cache.check(PARA).metadata == {"v": 2}


def test_check_with_options_passes_the_private_data_gate_as_every_lookup():
    """``check`` with ``num_results``, ``filters`` or ``threshold`` looks up through the same
    gates as ``completion``: a question the gate makes private is never answered from the
    semantic tier."""
    mail = "How do I reset my password for jane.doe@example.com?"
    para = "how do i reset my password for jane.doe@example.com"
    settings = CacheSettings(
        semantic={"threshold": 0.9, "verifier": "details"}, privacy={"policy": "off"}
    )
    with SemanticCache(
        settings, embedder=FakeEmbedder(), store=InMemoryStore(), upstream=FakeUpstream()
    ) as cache:
        assert cache.ready()
        cache.store(mail, "A")
        cache.flush()
        assert cache.check(para).info.tier is Tier.SEMANTIC  # the gate is off: a hit
        assert [h.info.tier for h in cache.check(para, num_results=3)] == [Tier.SEMANTIC]
        private = {"privacy": "no-store"}
        assert cache.check(para, cache=private) is None
        assert cache.check(para, cache=private, num_results=3) == []
        assert cache.check(para, cache=private, filters={}) is None
        assert cache.check(para, cache=private, threshold=0.95) is None

"""Feedback: a wrong verdict withdraws the entry at once, for its tenant only; labels recorded."""

from __future__ import annotations

import json

import pytest
from tuning_helpers import PARAPHRASE, QUESTION, ask, make_cache

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.errors import InvalidRequest, InvalidRequestType, UnknownServe
from semcache.eval.recalibrate import read_recorded
from semcache.testing import FakeEmbedder, FakeUpstream
from semcache.tuning.records import Source


def _hit(cache, tenant=None):
    extra = {} if tenant is None else {"tenant": tenant}
    ask(cache, QUESTION, **extra)
    cache.flush()
    response = ask(cache, PARAPHRASE, **extra)
    info = cache_info(response)
    assert info.tier == "semantic" and info.serve_id is not None
    return response, info


def test_wrong_withdraws_the_entry_at_once_and_records_the_pair():
    cache, upstream, _ = make_cache()
    with cache:
        response, info = _hit(cache)
        result = cache.feedback(response, False)
        assert result.withdrawn and result.labeled and not result.correct
        assert cache_info(ask(cache, PARAPHRASE)).tier == "miss"  # no longer served
        assert upstream.call_count == 2
        [pair] = cache.labeled_pairs()
        assert (pair.text_a, pair.text_b, pair.label) == (PARAPHRASE, QUESTION, 0)
        assert pair.similarity == pytest.approx(info.similarity)
        assert pair.source is Source.FEEDBACK and pair.sample_probability is None
        stats = cache.stats()
        assert stats.counts["feedback_wrong"] == 1 and stats.counts["feedback_withdrawn"] == 1
        assert stats.tuning is not None and stats.tuning.feedback_wrong == 1


def test_wrong_also_ends_the_exact_copy_in_memory():
    cache, _, _ = make_cache()
    with cache:
        _hit(cache)
        first = ask(cache, QUESTION)  # exact hit from memory
        assert cache_info(first).tier == "exact"
        cache.feedback(cache_info(first).key, False)
        assert cache_info(ask(cache, QUESTION)).tier == "miss"


def test_right_is_recorded_and_changes_nothing():
    cache, _, _ = make_cache()
    with cache:
        response, _ = _hit(cache)
        result = cache.feedback(response, True)
        assert not result.withdrawn and result.labeled
        assert cache_info(ask(cache, PARAPHRASE)).tier == "semantic"
        assert [p.label for p in cache.labeled_pairs()] == [1]
        assert cache.stats().counts["feedback_right"] == 1


def test_a_tenant_cannot_mark_another_tenants_entry():
    cache, _, _ = make_cache()
    with cache:
        response, info = _hit(cache, tenant="a")
        for ref in (response, info.serve_id, info.key):
            with pytest.raises(UnknownServe):
                cache.feedback(ref, False, tenant="b")
        assert cache_info(ask(cache, PARAPHRASE, tenant="a")).tier == "semantic"  # untouched
        assert cache.labeled_pairs() == []
        assert "feedback_wrong" not in cache.stats().counts


def test_feedback_by_serve_id_and_by_key():
    cache, _, _ = make_cache()
    with cache:
        _, info = _hit(cache)
        assert cache.feedback(info.serve_id, True).serve.query == PARAPHRASE
        assert cache.feedback(info.key, True).serve.query == PARAPHRASE  # latest serve of key


def test_bad_feedback_input_names_the_field():
    cache, _, _ = make_cache()
    with cache:
        response, _ = _hit(cache)
        with pytest.raises(InvalidRequestType, match="correct"):
            cache.feedback(response, "no")  # type: ignore[arg-type]
        with pytest.raises(InvalidRequestType, match="response_or_key"):
            cache.feedback(42, False)
        with pytest.raises(InvalidRequest, match="not served from the cache"):
            cache.feedback(ask(cache, "tell me a joke"), False)  # a miss
        with pytest.raises(UnknownServe):
            cache.feedback("no-such-id", False)
        assert cache.labeled_pairs() == []


async def test_afeedback_matches_feedback():
    cache, _, _ = make_cache()
    async with cache:
        await cache.acompletion(
            model="gpt-4o-mini", messages=[{"role": "user", "content": QUESTION}]
        )
        await cache.aflush()
        response = await cache.acompletion(
            model="gpt-4o-mini", messages=[{"role": "user", "content": PARAPHRASE}]
        )
        result = await cache.afeedback(response, False)
        assert result.withdrawn


def test_withdrawal_survives_a_restart_with_a_persistent_store(tmp_path):
    def open_cache():
        settings = CacheSettings(
            semantic={"threshold": 0.8, "verifier": "none"},
            store={"backend": "edge", "path": str(tmp_path / "store")},
        )
        from tuning_helpers import city_answer

        return SemanticCache(settings, embedder=FakeEmbedder(), upstream=FakeUpstream(city_answer))

    cache = open_cache()
    response, _ = _hit(cache)
    cache.feedback(response, False)
    cache.close()
    again = open_cache()
    with again:
        # the withdrawn entry is not served, neither exactly nor to its paraphrase
        assert cache_info(ask(again, QUESTION)).tier == "miss"


def test_labels_are_appended_to_the_file_calibrate_reads(tmp_path):
    path = tmp_path / "labels.jsonl"
    cache, _, _ = make_cache(tuning={"labels_path": str(path)})
    with cache:
        response, info = _hit(cache)
        cache.feedback(response, False)
    row = json.loads(path.read_text().splitlines()[0])
    assert row["text_a"] == PARAPHRASE and row["label"] == 0 and row["source"] == "feedback"
    [rec] = read_recorded(path)
    assert rec.label == 0 and rec.similarity == pytest.approx(info.similarity) and rec.feedback


def _entry(key: str):
    from semcache.stores.base import Entry

    return Entry(key, "t", "ns", "m", "s", "{}", 0.0, 10.0, "e", "q")


def test_a_withdrawal_fences_only_its_own_key():
    from semcache.pipeline.fence import Fence, PurgeFilter

    assert PurgeFilter(key="a").covers(_entry("a"))
    assert not PurgeFilter(key="a").covers(_entry("b"))
    assert not PurgeFilter(key="a", tenant="other").covers(_entry("a"))
    fence = Fence()
    token = fence.begin()
    fence.record(PurgeFilter(key="a"))
    assert not fence.admits(_entry("a"), token)  # a write of it that began before: refused
    assert fence.admits(_entry("b"), token)  # other entries' pending writes still land


def test_memory_discard_drops_one_key():
    from dataclasses import replace

    from litellm import ModelResponse

    from semcache.core.answer import Answer, encode
    from semcache.core.memory import MemoryTier

    memory = MemoryTier(max_entries=10, max_bytes=1 << 20, clock=lambda: 1.0)
    envelope = encode(ModelResponse(), 0.0)
    for key in ("a", "b"):
        memory.put(Answer.of(replace(_entry(key), response=envelope)))
    assert memory.discard("a") == 1 and memory.discard("a") == 0
    assert memory.get("a") is None and memory.get("b") is not None

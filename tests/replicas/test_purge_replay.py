"""A purge or a "wrong" verdict made while a replica was down reaches that replica's own
store when it starts again (issue 23 item 4): it replays the purge log before its store
serves a hit, or empties its store when the log cannot tell it what it missed.

Measured before the purge log: a purge acknowledged while replica B was down was undone when
B restarted, 100 of 200 asks served the purged answer from B's own store.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.replicas.purge_state import FILE_NAME
from semcache.testing import FakeEmbedder, FakeUpstream

NEVER_SHED = {"wait_ms": 60_000, "max_loop_lag_ms": None}
QUESTIONS = 25  # per tenant


def question(i: int) -> str:
    """Distinct words per question, so one never answers another's paraphrase."""
    return f"Zorb{i} quix{i} plonk{i} wemb{i} question?"


def paraphrase(i: int) -> str:
    return question(i).lower().rstrip("?")  # same words: a semantic hit, another exact key


def req(content: str, tenant: str) -> dict:
    return {
        "model": "gpt-4o-mini",
        "messages": [{"role": "user", "content": content}],
        "tenant": tenant,
    }


@pytest.fixture
def replica(redis_url: str, tmp_path: Path):
    made: list[SemanticCache] = []
    upstream = FakeUpstream()

    def make(name: str, **redis: object) -> SemanticCache:
        settings = CacheSettings(
            semantic={"threshold": 0.95, "verifier": "none"},
            store={"backend": "edge", "path": str(tmp_path / name)},
            redis={"url": redis_url, **redis},
            admission=NEVER_SHED,
        )
        cache = SemanticCache(settings, embedder=FakeEmbedder(dim=256), upstream=upstream)
        made.append(cache)
        return cache

    yield make
    for cache in made:
        cache.close()


def learn(cache: SemanticCache, tenant: str) -> dict[int, str]:
    """Ask every question once (misses, stored in Redis and in the cache's own store)."""
    ids = {}
    for i in range(QUESTIONS):
        response = cache.completion(**req(question(i), tenant))
        assert cache_info(response).tier == "miss"
        ids[i] = response.id
    assert cache.flush().written == QUESTIONS
    return ids


def own_store_hits(cache: SemanticCache, tenant: str, ids: dict[int, str]) -> int:
    """Paraphrases answered by the cache's own store with the answers it learned (Redis holds
    exact keys only, so a semantic hit can only come from the replica's own store)."""
    hits = 0
    for i, answer in ids.items():
        response = cache.completion(**req(paraphrase(i), tenant))
        hits += cache_info(response).tier == "semantic" and response.id == answer
    return hits


def asks_serving(cache: SemanticCache, tenant: str, withdrawn: set[str], rounds: int) -> int:
    """Ask each question ``rounds`` times, exact and paraphrase (paraphrase first for half of
    them, so both paths meet the stored answer first); how many served a withdrawn answer."""
    served = asked = 0
    for _ in range(rounds):
        for i in range(QUESTIONS):
            order = (paraphrase(i), question(i)) if i % 2 else (question(i), paraphrase(i))
            for text in order:
                asked += 1
                served += cache.completion(**req(text, tenant)).id in withdrawn
    assert asked >= 200 or rounds * QUESTIONS * 2 == asked
    return served


def test_a_purge_made_while_a_replica_was_down_is_replayed_when_it_starts(replica) -> None:
    b = replica("b")
    assert b.ready()
    purged, kept = learn(b, "t1"), learn(b, "t2")
    assert own_store_hits(b, "t2", kept) == QUESTIONS  # b's own store serves paraphrases
    b.close()
    a = replica("a")
    a.purge(tenant="t1")  # b is down: only the log can tell it
    b = replica("b")  # the same store directory
    assert b.ready()
    assert own_store_hits(b, "t2", kept) == QUESTIONS  # another tenant's entries survive
    served = asks_serving(b, "t1", set(purged.values()), rounds=4)
    assert served == 0, f"{served} of {4 * QUESTIONS * 2} asks served a purged answer"
    assert b.stats().counts.get("purge_log_resets", 0) == 0  # replayed, not wiped
    assert b.stats().counts["purge_log_applied"] >= 1


def test_a_wrong_verdict_made_while_a_replica_was_down_is_replayed(replica) -> None:
    b = replica("b")
    withdrawn, kept = learn(b, "t1"), learn(b, "t2")
    b.close()
    a = replica("a")
    assert a.ready()  # following the log: a remembers what Redis serves it
    for i in range(QUESTIONS):  # Redis serves b's answers to a; a says each one is wrong
        served = a.completion(**req(question(i), "t1"))
        assert cache_info(served).tier == "exact" and served.id == withdrawn[i]
        assert a.feedback(served, correct=False, tenant="t1").withdrawn
    b = replica("b")
    assert b.ready()
    assert own_store_hits(b, "t2", kept) == QUESTIONS
    served = asks_serving(b, "t1", set(withdrawn.values()), rounds=4)
    assert served == 0, f"{served} of {4 * QUESTIONS * 2} asks served a withdrawn answer"
    assert b.stats().counts.get("purge_log_resets", 0) == 0


@pytest.mark.parametrize("mark", ["kept", "lost"])
def test_a_log_trimmed_past_the_replicas_position_empties_its_store(replica, raw, mark) -> None:
    b = replica("b")
    kept = learn(b, "t2")
    b.close()
    a = replica("a", purge_log_entries=2)
    for tenant in ("t7", "t8", "t9"):  # three entries b never read; the first is trimmed
        a.purge(tenant=tenant)
    assert raw.xlen("{semcache:purges}") == 2 and raw.get("{semcache:purges}:trimmed")
    if mark == "lost":  # the trim mark deleted or evicted: the log's own counts must tell
        raw.delete("{semcache:purges}:trimmed")
    b = replica("b")
    assert b.ready()
    assert own_store_hits(b, "t2", kept) == 0  # it cannot know what it missed: emptied
    assert b.stats().counts["purge_log_resets"] == 1
    part = b.health(wait=False).parts["purge_log"]
    reason = "trimmed past" if mark == "kept" else "lost entries"
    assert reason in (part.reason or "") and part.status == "degraded"


def test_a_restart_without_purges_keeps_the_replicas_entries(replica, tmp_path: Path) -> None:
    b = replica("b")
    kept = learn(b, "t2")
    b.close()
    assert (tmp_path / "b" / FILE_NAME).exists()  # its position, beside its store
    b = replica("b")
    assert b.ready()
    assert own_store_hits(b, "t2", kept) == QUESTIONS
    assert b.stats().counts.get("purge_log_resets", 0) == 0
    assert "purge_log" not in b.health(wait=False).parts


def test_a_store_with_entries_but_no_saved_position_is_emptied(replica, tmp_path: Path) -> None:
    b = replica("b")
    kept = learn(b, "t2")
    b.close()
    (tmp_path / "b" / FILE_NAME).unlink()  # a store from before the purge log, say
    b = replica("b")
    assert b.ready()
    assert own_store_hits(b, "t2", kept) == 0
    assert b.stats().counts["purge_log_resets"] == 1

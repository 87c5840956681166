"""The in-process exact tier: bounds, TTL by injected clock, purge."""

from __future__ import annotations

import litellm

from semcache.core import answer as _answer
from semcache.core.memory import MemoryTier
from semcache.stores.base import Entry


class Clock:
    now = 1000.0

    def __call__(self) -> float:
        return self.now


def answer(key: str, *, tenant="t", namespace="n", model="openai/m", expires_at=2000.0, size=10):
    response = litellm.ModelResponse(
        choices=[{"message": {"role": "assistant", "content": "x" * size}, "finish_reason": "stop"}]
    )
    entry = Entry(
        key=key,
        tenant=tenant,
        namespace=namespace,
        model=model,
        scope="s",
        response=_answer.encode(response, 0.001),
        created_at=0.0,
        expires_at=expires_at,
        embedder="e",
    )
    return _answer.Answer.of(entry)


def test_lru_evicts_least_recently_used_by_count():
    memory = MemoryTier(max_entries=2, max_bytes=10**9, clock=Clock())
    memory.put(answer("a"))
    memory.put(answer("b"))
    assert memory.get("a") is not None  # a is now most recent
    memory.put(answer("c"))
    assert memory.get("b") is None and memory.get("a") is not None and memory.get("c") is not None


def test_byte_bound_is_respected():
    one = answer("a", size=1000)
    memory = MemoryTier(max_entries=100, max_bytes=int(one.nbytes * 2.5), clock=Clock())
    for key in "abcd":
        memory.put(answer(key, size=1000))
    assert len(memory) == 2 and memory.nbytes <= one.nbytes * 2.5
    huge = MemoryTier(max_entries=100, max_bytes=10, clock=Clock())
    huge.put(one)
    assert len(huge) == 0


def test_expiry_uses_the_injected_clock():
    clock = Clock()
    memory = MemoryTier(max_entries=10, max_bytes=10**9, clock=clock)
    memory.put(answer("a", expires_at=1010.0))
    assert memory.get("a") is not None
    clock.now = 1010.0
    assert memory.get("a") is None and len(memory) == 0


def test_zero_entries_disables():
    memory = MemoryTier(max_entries=0, max_bytes=10**9, clock=Clock())
    memory.put(answer("a"))
    assert memory.get("a") is None


def test_overwrite_keeps_byte_count_exact():
    memory = MemoryTier(max_entries=10, max_bytes=10**9, clock=Clock())
    memory.put(answer("a", size=10))
    memory.put(answer("a", size=500))
    assert len(memory) == 1 and memory.nbytes == answer("a", size=500).nbytes


def test_purge_by_fields():
    memory = MemoryTier(max_entries=10, max_bytes=10**9, clock=Clock())
    memory.put(answer("1", tenant="a", namespace="x"))
    memory.put(answer("2", tenant="a", namespace="y"))
    memory.put(answer("3", tenant="b", namespace="x", model="openai/other"))
    assert memory.purge(tenant="a", namespace="x") == 1
    assert memory.purge(model="openai/other") == 1
    assert memory.purge() == 1 and len(memory) == 0 and memory.nbytes == 0


def test_answers_give_private_copies():
    a = answer("a")
    first, second = a.response(), a.response()
    first.choices[0].message.content = "mutated"
    assert second.choices[0].message.content == "x" * 10
    assert a.cost_usd == 0.001

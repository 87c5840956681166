"""The questions in flight in every replica: what the cross-replica paraphrase merge reads.

A leader whose answer would be stored semantically adds its question's vector (``NOQUANT``,
with question, exact key and model) to its partition's set ``P:q:{b}:h(partition)`` and
removes it when its call ends; a paraphrase that missed elsewhere asks for the nearest and,
when the hit rule accepts it, follows that flight (:meth:`SharedFlights.peek`). Elements
expire on Redis's clock, so a crashed leader's entry goes. Redis failures raise
:class:`~semcache.errors.StoreError`.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import orjson

from semcache.replicas.connect import mapped
from semcache.replicas.keys import KeySpace

if TYPE_CHECKING:
    from redis.asyncio import Redis

ADD = """
local now = redis.call('TIME')
local expires = tonumber(now[1]) + tonumber(ARGV[4])
local attributes = cjson.decode(ARGV[3])
attributes['exp'] = expires
redis.call('VADD', KEYS[1], 'FP32', ARGV[1], ARGV[2], 'NOQUANT', 'SETATTR',
  cjson.encode(attributes))
redis.call('EXPIRE', KEYS[1], ARGV[4])
return 1
"""
"""KEYS: the partition's set; ARGV: FP32 vector, element id, attributes JSON, lifetime s."""

NEAREST = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {} end
local now = redis.call('TIME')
return redis.call('VSIM', KEYS[1], 'FP32', ARGV[1], 'WITHSCORES', 'WITHATTRIBS',
  'COUNT', tonumber(ARGV[3]), 'FILTER', '.exp > ' .. now[1] .. ' and .r != "' .. ARGV[2] .. '"')
"""
"""KEYS: the partition's set; ARGV: FP32 query, this replica's id (hex), how many. The
nearest live elements another replica asked, nearest first: {id, score, attrs, ...}. This
replica's own were judged in-process; returning one of them (the nearest overall) used to
hide every other replica's question."""

REMOVE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
return redis.call('VREM', KEYS[1], ARGV[1])
"""


@dataclass(frozen=True, slots=True)
class Published:
    """A question this replica added (what :meth:`SharedQuestions.remove` takes back)."""

    key: str
    element: str


@dataclass(frozen=True, slots=True)
class Nearest:
    """The in-flight question nearest to a query: its text, exact key, model, cosine
    similarity, whether this replica asked it (``own``: it was judged in-process), and the
    element (to remove one whose leader is gone)."""

    prompt: str
    exact: str
    model: str
    similarity: float
    own: bool
    published: Published


class SharedQuestions:
    def __init__(self, client: Redis, keys: KeySpace, *, lifetime_s: int) -> None:
        if lifetime_s < 1:
            raise ValueError("lifetime_s must be >= 1")
        self._keys = keys
        self.replica = uuid.uuid4().hex  # tells this replica's questions from the others'
        self._lifetime_s = lifetime_s
        self._add = client.register_script(ADD)
        self._nearest = client.register_script(NEAREST)
        self._remove = client.register_script(REMOVE)

    def _key(self, partition: tuple[str, str, str, str]) -> str:
        return self._keys.in_flight(*partition)

    async def add(
        self,
        partition: tuple[str, str, str, str],
        vector: np.ndarray,
        *,
        prompt: str,
        exact: str,
        model: str,
    ) -> Published:
        key, element = self._key(partition), uuid.uuid4().hex
        attributes = orjson.dumps({"p": prompt, "x": exact, "m": model, "r": self.replica})
        blob = np.asarray(vector, dtype=np.float32).reshape(-1).tobytes()
        async with mapped():
            await self._add(keys=[key], args=[blob, element, attributes, self._lifetime_s])
        return Published(key, element)

    async def nearest(
        self, partition: tuple[str, str, str, str], vector: np.ndarray
    ) -> Nearest | None:
        """The nearest live question another replica asked, or None."""
        found = await self.nearest_k(partition, vector, 1)
        return found[0] if found else None

    async def nearest_k(
        self, partition: tuple[str, str, str, str], vector: np.ndarray, k: int
    ) -> list[Nearest]:
        """The ``k`` nearest live questions other replicas asked, nearest first."""
        blob = np.asarray(vector, dtype=np.float32).reshape(-1).tobytes()
        key = self._key(partition)
        async with mapped():
            found = await self._nearest(keys=[key], args=[blob, self.replica, max(1, k)])
        result = []
        for i in range(0, len(found or []) - 2, 3):
            element, score, raw = found[i : i + 3]
            attributes = orjson.loads(raw)
            similarity = 2.0 * float(score) - 1.0  # VSIM scores (1 + cos) / 2
            own = attributes.get("r") == self.replica
            name = element.decode() if isinstance(element, bytes) else str(element)
            result.append(
                Nearest(
                    attributes["p"],
                    attributes["x"],
                    attributes["m"],
                    similarity,
                    own,
                    Published(key, name),
                )
            )
        return result

    async def remove(self, published: Published) -> None:
        async with mapped():
            await self._remove(keys=[published.key], args=[published.element])

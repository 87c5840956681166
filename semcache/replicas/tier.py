"""The shared tier as one object for the facade: purge across replicas, and close."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from semcache.pipeline.fence import PurgeFilter
from semcache.replicas.exact import RedisExact
from semcache.replicas.flights import SharedFlights
from semcache.replicas.inflight import SharedQuestions
from semcache.replicas.purges import PurgeLog
from semcache.replicas.serves import SharedServes

if TYPE_CHECKING:
    from redis.asyncio import Redis

_log = logging.getLogger("semcache")


class SharedTier:
    """The Redis client and what uses it: exact tier, purge log, serve records, flights and
    the questions in flight (both None without ``redis.coalesce``)."""

    def __init__(
        self,
        client: Redis,
        exact: RedisExact,
        log: PurgeLog,
        flights: SharedFlights | None,
        questions: SharedQuestions | None = None,
        *,
        serves: SharedServes,
        ack_timeout_s: float = 2.0,
    ) -> None:
        self.serves = serves
        self.ack_timeout_s = ack_timeout_s
        self.client = client
        self.exact = exact
        self.log = log
        self.flights = flights
        self.questions = questions

    async def purge(self, purge: PurgeFilter) -> int:
        """Withdraw covered entries for every replica, then tell the others to drop their
        local copies (through the purge log, which a replica down now replays when it
        starts). Redis errors are raised (an operator asked for this)."""
        removed = await self.exact.purge(purge)
        missing = await self.log.publish(purge, ack_timeout_s=self.ack_timeout_s)
        if missing:
            _log.warning("semcache purge: %d replica(s) did not confirm in time", missing)
        return removed

    async def withdraw(self, purge: PurgeFilter) -> int:
        """Withdraw one entry (``purge.key`` in its partition and scope) for every replica (a
        "wrong" feedback verdict): remove its Redis copy, then tell the others to drop their
        in-process copies and end it in their own stores. Redis errors are raised (the
        caller asked for this)."""
        if purge.key is None or purge.tenant is None or purge.namespace is None:
            raise ValueError("withdraw: key, tenant and namespace are required")
        removed = await self.exact.withdraw(
            purge.key, tenant=purge.tenant, namespace=purge.namespace, model=purge.model or ""
        )
        missing = await self.log.publish(purge, ack_timeout_s=self.ack_timeout_s)
        if missing:
            _log.warning("semcache feedback: %d replica(s) did not confirm in time", missing)
        return removed

    async def close(self) -> None:
        await self.log.close()
        await self.client.aclose()

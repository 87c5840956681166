"""Purges announced to every replica, so none keeps serving a purged answer from its memory.

The shared Redis tier withdraws entries for everyone at once (a generation bump), but each
replica also keeps answers in its own memory and store. A purge is therefore published on a
channel; every other replica applies it locally (``on_purge``: memory, fence, local store).
The purging replica waits until every subscriber confirmed (each pushes to a reply list), so
when ``purge`` returns, no replica serves a purged answer. Pub/sub delivers only to connected
subscribers, so when the subscription is lost (a Redis outage, a partition) and again when
it is back, the replica calls ``on_gap``, which drops its whole memory tier: it cannot know
what it missed, and losing cached answers is safe where serving a purged one is not. While
it is cut off it keeps serving from memory (purges elsewhere cannot reach it then).
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import orjson

from semcache.pipeline.fence import PurgeFilter
from semcache.replicas.connect import mapped
from semcache.runtime.failopen import FailOpen

if TYPE_CHECKING:
    from redis.asyncio import Redis

#: Seconds between attempts to resubscribe after the subscription failed.
RESUBSCRIBE_S = 1.0
#: A subscription's FailOpen timeout: it is meant to run until closed.
_FOREVER_S = 365 * 24 * 3600.0


class PurgeBroadcast:
    def __init__(
        self,
        client: Redis,
        channel: str,
        failopen: FailOpen,
        *,
        on_purge: Callable[[PurgeFilter], Awaitable[object]],
        on_gap: Callable[[], None],
        on_model_change: Callable[[str, float], None] | None = None,
    ) -> None:
        self._on_model_change = on_model_change
        self._client = client
        self._channel = channel
        self._failopen = failopen
        self._on_purge = on_purge
        self._on_gap = on_gap
        self.replica_id = uuid.uuid4().hex
        self._task: asyncio.Task[None] | None = None
        self._subscribed = asyncio.Event()
        self._lost = False
        self._closed = False

    async def started(self) -> None:
        """Start listening; the first caller waits until subscribed (at most the FailOpen
        timeout), later ones never wait, so a Redis outage costs no latency per request."""
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._listen_forever())
            await self._failopen.call("redis_subscribe", self._subscribed.wait, None)

    async def publish(self, purge: PurgeFilter, *, ack_timeout_s: float) -> int:
        """Announce ``purge`` and wait until every subscribed replica has applied it (at most
        ``ack_timeout_s``); returns how many did not confirm in time."""
        ack = f"{self._channel}:ack:{uuid.uuid4().hex}"
        message = orjson.dumps(
            {
                "origin": self.replica_id,
                "ack": ack,
                "tenant": purge.tenant,
                "namespace": purge.namespace,
                "model": purge.model,
                "key": purge.key,
                "scope": purge.scope,
            }
        )
        loop = asyncio.get_running_loop()
        deadline = loop.time() + ack_timeout_s
        async with mapped():
            missing = await self._client.publish(self._channel, message)
            try:
                while missing > 0 and (left := deadline - loop.time()) > 0:
                    # short blocks: a BLPOP must end within the client's command timeout
                    if await self._client.blpop([ack], timeout=min(left, 0.1)) is not None:
                        missing -= 1
            finally:
                await self._client.delete(ack)
        return missing

    async def publish_model_change(self, model: str, before: float) -> None:
        """Tell the other replicas' model watches (no confirmation: the shared tier already
        stopped serving the older answers when Redis decided the change)."""
        message = orjson.dumps(
            {"origin": self.replica_id, "kind": "model", "model": model, "before": before}
        )
        async with mapped():
            await self._client.publish(self._channel, message)

    async def _listen_forever(self) -> None:
        while not self._closed:  # a flag too: wait_for can swallow a cancel (gh-86296)
            listen = self._listen
            await self._failopen.call("redis_subscription", listen, None, timeout_s=_FOREVER_S)
            if self._subscribed.is_set():  # lost it: what is purged from now on goes unheard
                self._subscribed.clear()
                self._lost = True
                self._on_gap()
            await asyncio.sleep(RESUBSCRIBE_S)

    async def _listen(self) -> None:
        async with mapped():
            pubsub = self._client.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(self._channel)
                if self._lost:  # back after a gap: whatever was purged meanwhile goes too
                    self._lost = False
                    self._on_gap()
                self._subscribed.set()
                async for message in pubsub.listen():
                    data = orjson.loads(message["data"])
                    if data.get("kind") == "model":
                        if self._on_model_change is not None:
                            self._on_model_change(data["model"], float(data["before"]))
                        continue
                    if data.get("origin") != self.replica_id:
                        fields = (data.get("tenant"), data.get("namespace"), data.get("model"))
                        scope = data.get("scope")
                        await self._on_purge(PurgeFilter(*fields, key=data.get("key"), scope=scope))
                    await self._client.rpush(data["ack"], b"1")
                    await self._client.pexpire(data["ack"], 60_000)
            finally:
                await pubsub.aclose()  # type: ignore[no-untyped-call]  # redis-py leaves it untyped

    async def close(self) -> None:
        self._closed = True
        if self._task is not None:
            self._task.cancel()
            # bounded: a swallowed cancel must not hang close (the task then ends by itself)
            await asyncio.wait([self._task], timeout=2.0)
            self._task = None

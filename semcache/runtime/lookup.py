"""One lookup through the cache's stages that ends in a miss instead of the upstream call.

What ``check`` runs, and what LiteLLM's cache slot runs (``semcache.integrations.litellm``):
the same stages as ``completion`` (tenants, scopes, ``s-maxage``, the guard, purges), so a
lookup here can never serve what ``completion`` would not. A miss comes back as its
``CacheInfo`` (the miss reason and the nearest similarity), because the slot hands that to
the response LiteLLM gets from the provider. Never joins or starts a shared flight: a flight
that ended in "miss" must never be handed to a ``completion`` waiting on the same key.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from semcache.pipeline.base import Found, Pipeline, Request
from semcache.stats import CacheHit, CacheInfo, MissReason, Tier

if TYPE_CHECKING:
    from semcache.compose import Assembly
    from semcache.runtime.delivery import Delivery


class _Miss(Exception):
    """The end of a lookup chain: no tier answered (carries what the stages learned)."""

    def __init__(self, request: Request) -> None:
        super().__init__("miss")
        self.request = request


async def _end_in_miss(request: Request) -> Found:
    raise _Miss(request)


async def lookup(parts: Assembly, delivery: Delivery, request: Request) -> CacheHit | CacheInfo:
    """The stored answer for ``request`` (recorded as served), or the miss's ``CacheInfo``
    (recorded as a miss; a request the policy keeps out of every tier is not recorded)."""
    if not request.decision.lookup:
        return CacheInfo(Tier.BYPASS, key=request.keys.exact, miss_reason=MissReason.BYPASS)
    private = replace(request, decision=replace(request.decision, coalesce=False))
    try:
        found = await Pipeline(parts.pipeline.stages, _end_in_miss).run(private)
    except _Miss as miss:
        ended = miss.request
        info = CacheInfo(
            Tier.MISS,
            key=request.keys.exact,
            nearest_similarity=ended.nearest,
            miss_reason=ended.miss_reason or MissReason.NO_CANDIDATE,
            private_data=_private_kinds(ended),
            unreadable=ended.miss_reason is MissReason.UNREADABLE,
            routed_to=ended.routed_to,
        )
        delivery.record(info)
        return info
    info = delivery.info(found)
    delivery.record(info)
    return CacheHit(found.answer.response(), info, metadata=found.answer.entry.metadata)


def _private_kinds(request: Request) -> tuple[str, ...]:
    verdict = request.privacy
    return () if verdict is None else verdict.labels

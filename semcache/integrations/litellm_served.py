"""What LiteLLM's cache slot served, so its responses carry ``cache_info`` and take feedback.

LiteLLM builds the response its caller gets itself, so the slot never holds the object to
tag; both carry LiteLLM's call id (a hit also its cache key). This bounded log remembers, for
recent calls, the ``CacheInfo`` and tenant of each lookup under both, and answers
``semcache.cache_info(response)`` through :func:`semcache.stats.add_info_source`.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from semcache.stats import CacheInfo, add_info_source

#: Lookups remembered (by call id; as many LiteLLM cache keys).
DEFAULT_SIZE = 10_000


@dataclass(frozen=True, slots=True)
class SlotServe:
    """One lookup of the slot: how it was served, and to which semcache tenant (None: the
    default tenant)."""

    info: CacheInfo
    tenant: str | None


class ServedLog:
    """Thread-safe, bounded: LiteLLM calls the slot from the caller's thread (``completion``)
    and from its event loop (``acompletion``)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._by_call: OrderedDict[str, SlotServe] = OrderedDict()
        self._by_key: OrderedDict[str, dict[str | None, SlotServe]] = OrderedDict()

    def record(self, call_id: str | None, litellm_key: str | None, serve: SlotServe) -> None:
        """Remember one lookup; a stored answer served is also found by LiteLLM's key (one
        per tenant: the same request from two tenants has the same LiteLLM key)."""
        with self._lock:
            if call_id is not None:
                self._by_call[call_id] = serve
                self._by_call.move_to_end(call_id)
                _trim(self._by_call, self._size)
            if litellm_key is not None and serve.info.tier.stored:
                tenants = self._by_key.setdefault(litellm_key, {})
                tenants[serve.tenant] = serve
                self._by_key.move_to_end(litellm_key)
                _trim(self._by_key, self._size)

    def by_call(self, call_id: Any) -> SlotServe | None:
        if not isinstance(call_id, str):
            return None
        with self._lock:
            return self._by_call.get(call_id)

    def by_key(self, litellm_key: str) -> dict[str | None, SlotServe]:
        """The answers served under LiteLLM's cache key, by tenant (empty: none recently)."""
        with self._lock:
            return dict(self._by_key.get(litellm_key, {}))

    def info_of(self, hidden: Mapping[str, Any]) -> CacheInfo | None:
        """``cache_info``'s source: a response's LiteLLM hidden params to its ``CacheInfo``."""
        serve = self.by_call(hidden.get("litellm_call_id"))
        return None if serve is None else serve.info


def _trim(log: OrderedDict[str, Any], size: int) -> None:
    while len(log) > size:
        log.popitem(last=False)


#: One log for every slot in the process: LiteLLM's call ids are unique, and a response
#: names no slot instance.
SERVED = ServedLog()
add_info_source(SERVED.info_of)

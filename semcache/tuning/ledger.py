"""Recent answers served from storage, so feedback can name the query an answer served."""

from __future__ import annotations

import threading
from collections import OrderedDict

from semcache.tuning.records import Served


class ServeLedger:
    """The last ``capacity`` serves by id, and the latest serve of each entry key."""

    def __init__(self, capacity: int) -> None:
        self._capacity = capacity
        self._by_id: OrderedDict[str, Served] = OrderedDict()
        self._latest: dict[str, str] = {}
        self._lock = threading.Lock()

    def add(self, served: Served) -> None:
        if self._capacity == 0:
            return
        with self._lock:
            self._by_id[served.serve_id] = served
            self._latest[served.key] = served.serve_id
            while len(self._by_id) > self._capacity:
                _, old = self._by_id.popitem(last=False)
                if self._latest.get(old.key) == old.serve_id:
                    del self._latest[old.key]

    def get(self, serve_id: str) -> Served | None:
        with self._lock:
            return self._by_id.get(serve_id)

    def latest(self, key: str, tenant: str) -> Served | None:
        """The most recent serve of entry ``key`` to ``tenant`` (None for another tenant's)."""
        with self._lock:
            serve_id = self._latest.get(key)
            served = None if serve_id is None else self._by_id.get(serve_id)
        return served if served is not None and served.tenant == tenant else None

"""Whether a leader's answer may be served to a merged follower (see :mod:`.merge`)."""

from __future__ import annotations

import time
from collections.abc import Callable

from semcache.core.answer import is_complete
from semcache.pipeline.base import Found
from semcache.pipeline.fence import Fence
from semcache.stats import Tier
from semcache.stores.base import Entry


class Servable:
    """``servable(found, token)``: would a semantic lookup have served this answer, had it
    been stored by a call that began at fence ``token``? Complete, storable, unexpired, not
    purged since, and from a model snapshot ``fresh`` accepts (None: any)."""

    def __init__(
        self,
        fence: Fence,
        fresh: Callable[[Entry], bool] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._fence = fence
        self._fresh = fresh
        self._clock = clock  # wall time, as entries' expires_at

    def __call__(self, found: Found, token: int) -> bool:
        response = found.response
        entry = (found.stored or found.answer).entry
        return (
            found.tier is Tier.MISS
            and found.storable
            and response is not None
            and is_complete(response)
            and entry.expires_at > self._clock()
            and self._fence.admits(entry, token)
            and (self._fresh is None or self._fresh(entry))
        )

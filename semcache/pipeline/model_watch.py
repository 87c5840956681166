"""After the upstream call: notice a model snapshot change (see ``semcache.core.model_watch``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from semcache.core.model_watch import ModelWatch, snapshot_of
from semcache.pipeline.base import Found, Next, Request

#: Told of a change noticed here, with the model name and the watermark (epoch seconds).
OnChange = Callable[[str, float], Awaitable[object]]


class ModelWatchStage:
    """Feeds every fresh answer's snapshot to the watch; placed last, right before upstream,
    so the watermark is set before the answer is stored anywhere (the answer itself is
    created at the watermark and stays servable). ``on_change`` (under the ``invalidate``
    policy) carries a change to a shared store, which then withdraws the older answers for
    every process (:meth:`semcache.stores.RedisVectorStore.mark_model`)."""

    def __init__(self, watch: ModelWatch, on_change: OnChange | None = None) -> None:
        self._watch = watch
        self._on_change = on_change

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = await call_next(request)
        if found.response is not None:
            entry = found.answer.entry
            changed = self._watch.observe(
                entry.model, snapshot_of(found.response), entry.created_at
            )
            if changed and self._watch.invalidate and self._on_change is not None:
                await self._on_change(entry.model, entry.created_at)
        return found

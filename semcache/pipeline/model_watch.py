"""After the upstream call: notice a model snapshot change (see ``semcache.core.model_watch``)."""

from __future__ import annotations

from semcache.core.model_watch import ModelWatch, snapshot_of
from semcache.pipeline.base import Found, Next, Request


class ModelWatchStage:
    """Feeds every fresh answer's snapshot to the watch; placed last, right before upstream,
    so the watermark is set before the answer is stored anywhere (the answer itself is
    created at the watermark and stays servable)."""

    def __init__(self, watch: ModelWatch) -> None:
        self._watch = watch

    async def __call__(self, request: Request, call_next: Next) -> Found:
        found = await call_next(request)
        if found.response is not None:
            entry = found.answer.entry
            self._watch.observe(entry.model, snapshot_of(found.response), entry.created_at)
        return found

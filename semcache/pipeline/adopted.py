"""A hedged request's own upstream call, already running when it joins in-flight merging.

See :meth:`semcache.pipeline.merge.MergeStage.adopt`: such a request follows a paraphrase's
call (cancelling its own, or racing it) or leads with its own call standing for the flight.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, NamedTuple

from semcache.pipeline.base import Found, Next
from semcache.pipeline.in_flight import CallStart

if TYPE_CHECKING:
    from litellm.types.utils import ModelResponseStream

    from semcache.core.coalesce import Subscription


class Adopted(NamedTuple):
    """An adopted request's ``running`` call, its ``start``, and how to call ``again``."""

    running: asyncio.Task[Found]
    start: CallStart
    again: Next


async def answers_first(
    own: asyncio.Task[Found], flight: Subscription[Found, ModelResponseStream]
) -> bool:
    """Whether ``own`` answers (successfully) before ``flight`` settles; waits for one."""
    settled = asyncio.ensure_future(flight.settled())
    try:
        await asyncio.wait({own, settled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        settled.cancel()  # settled() waits shielded: cancelling it leaves the flight be
    return own.done() and not own.cancelled() and own.exception() is None and not settled.done()

"""Requested writes: the loop-side core of ``store`` / ``store_many`` (``semcache.direct``).

A write the caller asked for lands in the store or raises; it is never dropped in silence,
because the caller was told it was stored and will count on it. It runs the lookup's gates
and the answer phase's stages (privacy masking, the policy, the fence) with the caller's
answer as the chain's end, then hands the answer to :meth:`WriteBehind.store`, which waits
for room among pending writes (backpressure, bounded by ``admission.store_wait_s``) instead
of dropping it. ``store_many`` sends many such writes at once, so their embeddings share
micro-batches and their upserts share group commits, and reports every item's outcome.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from semcache.errors import StoreError, WriteRefused
from semcache.pipeline.base import Found, Pipeline, Request
from semcache.pipeline.lookup import Miss
from semcache.pipeline.write_behind import WriteBehindStage, storable
from semcache.stats import ImportFailure, ImportReport

if TYPE_CHECKING:
    from litellm import ModelResponse

    from semcache.compose import Assembly

#: ``on_progress(done, total)``: called after each chunk of ``store_many``.
Progress = Callable[[int, int], None]


async def store(
    parts: Assembly,
    request: Request,
    response: ModelResponse,
    metadata: Mapping[str, Any] | None = None,
) -> StoreResult:
    """Keep ``response`` for ``request``: its key and the pending write (None when the policy
    keeps it out, or without a semantic tier, where memory is the only tier).

    Raises :class:`StoreError` when the semantic tier cannot be set up (the answer could not
    reach the store), :class:`~semcache.errors.StoreBackpressure` when no room came and
    :class:`~semcache.errors.WriteRefused` when a fence refuses it (a purge since it began).
    """
    if not request.decision.store:
        return StoreResult(None, None)
    backend = parts.backend
    tier = await backend.ready()
    if backend.tier is not None and tier is None:
        raise StoreError(
            "the semantic tier could not be set up (see cache.health()); nothing was stored"
        )
    decision = replace(request.decision, lookup=False, coalesce=False)
    request = replace(request, decision=decision)
    terminal = parts.upstream_call

    async def given(r: Request) -> Found:
        return terminal.found(r, response)

    stages = [s for s in parts.path.answer.stages if not isinstance(s, WriteBehindStage)]
    token = parts.writer.fence.begin()  # before the stages: a purge meanwhile wins
    gated = await parts.path.lookup(request)  # the gates only: lookup is off
    assert isinstance(gated, Miss)
    request = gated.request
    found = await Pipeline(stages, given).run(request)
    plan = storable(request, found)
    if plan is None:
        return StoreResult(None, None)
    answer, prompt, vector = plan
    if metadata is not None:
        answer = replace(answer, entry=replace(answer.entry, metadata=metadata))
    if tier is None:  # memory only: nothing else to write
        parts.writer.keep(answer, token)
        return StoreResult(answer.entry.key, None)
    write = await parts.writer.store(
        answer, prompt=prompt, vector=vector, token=token, timeout_s=parts.store_wait_s
    )
    return StoreResult(answer.entry.key, write)


class StoreResult:
    """A requested write in progress: its key (None: nothing to store) and its task, whose
    result is ``"written"``, ``"refused: <reason>"`` or ``"failed: <reason>"``."""

    __slots__ = ("key", "write")

    def __init__(self, key: str | None, write: asyncio.Task[str] | None) -> None:
        self.key = key
        self.write = write


async def store_many(
    parts: Assembly,
    items: Sequence[tuple[Request, ModelResponse, Mapping[str, Any] | None]],
    *,
    chunk: int,
    on_progress: Progress | None = None,
) -> ImportReport:
    """Store every item, ``chunk`` at a time concurrently, and wait for each write's outcome.

    An item that fails (its store, its embedding, no room in time) is reported with its
    index and reason; the others go on. The report is built from the writes' own outcomes.
    """
    total = len(items)
    keys: list[str | None] = [None] * total
    failed: list[ImportFailure] = []
    written = skipped = 0
    for start in range(0, total, chunk):
        part = items[start : start + chunk]
        results = await asyncio.gather(
            *(store(parts, request, response, meta) for request, response, meta in part),
            return_exceptions=True,
        )
        writes: list[tuple[int, asyncio.Task[str]]] = []
        for offset, result in enumerate(results):
            index = start + offset
            if isinstance(result, WriteRefused):
                failed.append(ImportFailure(index, f"refused: {result.reason}"))
            elif isinstance(result, BaseException):
                if not isinstance(result, Exception):
                    raise result
                failed.append(ImportFailure(index, f"{type(result).__name__}: {result}"))
            elif result.key is None:
                skipped += 1
            elif result.write is None:  # memory only
                keys[index] = result.key
                written += 1
            else:
                keys[index] = result.key
                writes.append((index, result.write))
        for index, write in writes:
            outcome = await write
            if outcome == "written":
                written += 1
            else:
                keys[index] = None
                failed.append(ImportFailure(index, outcome))
        if on_progress is not None:
            on_progress(min(start + chunk, total), total)
    return ImportReport(
        total=total, written=written, skipped=skipped, failed=tuple(failed), keys=tuple(keys)
    )

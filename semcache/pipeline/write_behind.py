"""Write-behind: store fresh answers off the response path, purge, and delete expired entries.

A miss's answer goes into memory at once (so the next identical request hits) and into the
store in a background task (so the caller never waits for embedding or the store). Two kinds
of writes, two rules, because only one of them was promised to the caller:

- a *completion's* answer (nobody asked for it to be stored) is dropped from the store (kept
  in memory) only when ``max_pending`` writes are already pending: the operator's bound,
  counted as shed (kind ``store_upsert``) and reported by ``flush()``. Pending writes are thus
  bounded, never a queue that grows with the load;
- a *requested* write (``store()``, ``store_many()``: :meth:`WriteBehind.store`) is never
  dropped: it waits for room under the same bound (backpressure), and raises
  :class:`~semcache.errors.StoreBackpressure` when no room came within its timeout.

Writes queue on the embedder's micro-batcher like lookups do, so many pending writes are
embedded in few batches. Failures are counted by ``FailOpen`` and reported by ``flush()``
(a :class:`~semcache.stats.FlushReport`), never raised from the background. Purges go
through here too, because a purge must win over writes still pending: both share the fence
and a lock around "check the fence, write" and "record the purge, delete".
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import TYPE_CHECKING

from semcache.core.answer import Answer, is_complete
from semcache.core.memory import MemoryTier
from semcache.errors import StoreBackpressure, StoreError, WriteRefused
from semcache.pipeline.backend import SemanticBackend
from semcache.pipeline.base import Found, Next, Request
from semcache.pipeline.fence import Fence, PurgeFilter, Refusal, Refusals
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE, SemanticTier
from semcache.runtime.failopen import FailOpen, failure_reason
from semcache.stats import FlushReport, Stats, Tier
from semcache.stores.base import Entry, StoreAdmin

if TYPE_CHECKING:
    import numpy as np

#: Most entries one group commit writes in a single store call.
COMMIT_BATCH = 256


class WriteBehind:
    """Pending writes, the purge fence and the expiry janitor of one cache.

    Runs on the cache's event loop. ``flush()`` waits for every write submitted so far and
    reports what happened to them; ``close()`` stops the janitor and flushes. Write failures
    are counted by ``FailOpen`` (kind ``store_upsert``), never raised to a caller.
    ``max_pending`` bounds pending writes of both kinds (a requested write waits for room
    even when it is 0, one at a time). ``timeout_s`` bounds one write, the wait for its turn
    at the embedder included (None: FailOpen's own timeout); with ``max_pending`` writes
    queued at the embedder that wait is several batches long, so it is longer than a
    lookup's.
    """

    def __init__(
        self,
        backend: SemanticBackend,
        memory: MemoryTier,
        failopen: FailOpen,
        stats: Stats,
        clock: Callable[[], float],
        *,
        purge_interval_s: float,
        max_pending: int = 256,
        timeout_s: float | None = None,
    ) -> None:
        self._timeout_s = timeout_s
        self._max_pending = max_pending
        self._tally: Counter[str] = Counter()
        self._reasons: Counter[str] = Counter()
        self._backend = backend
        self._memory = memory
        self._failopen = failopen
        self._stats = stats
        self._clock = clock
        self._purge_interval_s = purge_interval_s
        self.fence = Fence()
        self._refusals = Refusals(stats)
        self._lock = asyncio.Lock()
        self._pending: set[asyncio.Task[str]] = set()
        self._landing: dict[str, asyncio.Task[str]] = {}  # the pending write of each key
        self._partitions: dict[tuple[str, str, str], set[asyncio.Task[str]]] = {}
        self._commits: list[tuple[Entry, int, asyncio.Future[str]]] = []
        self._committer: asyncio.Task[None] | None = None
        self._janitor: asyncio.Task[None] | None = None

    def submit(
        self, answer: Answer, *, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> asyncio.Task[str] | None:
        """Keep a completion's ``answer`` in memory now and in the store soon, unless a purge
        since ``token``; dropped from the store (counted) past ``max_pending`` pending writes.

        ``prompt`` is the question to embed when ``vector`` is None; with neither, the entry
        answers exact lookups only. Returns the store write's task (its result is the
        outcome, as :meth:`store`'s), or None when nothing goes to the store.
        """
        if not self._admit(answer, token):
            return None
        if self._backend.started is None and not self._backend.warming:
            return None  # the semantic tier is off or failing: memory alone keeps the answer
        if len(self._pending) >= self._max_pending:
            self._failopen.shed("store_upsert")
            self._note("dropped", "max_pending_writes reached")
            return None
        return self._spawn(answer, prompt, vector, token)

    async def store(
        self,
        answer: Answer,
        *,
        prompt: str | None,
        vector: np.ndarray | None,
        token: int,
        timeout_s: float,
    ) -> asyncio.Task[str]:
        """A requested write: memory now, the store as soon as there is room (backpressure).

        Waits at most ``timeout_s`` for fewer than ``max_pending`` writes to be pending, then
        raises :class:`StoreBackpressure` (the answer is then in memory only, and the caller
        knows). Returns the write's task, whose result is its outcome (``"written"``,
        ``"refused: <reason>"``, or ``"failed: <reason>"``); raises :class:`WriteRefused` when
        a fence refuses it now (a purge since ``token``, or a lost purge history).
        """
        self.keep(answer, token)
        bound = max(1, self._max_pending)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout_s
        while len(self._pending) >= bound:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise StoreBackpressure(
                    f"no room among {len(self._pending)} pending store writes within "
                    f"{timeout_s:g} s (admission.max_pending_writes = {self._max_pending}); "
                    "the answer is in memory only"
                )
            await asyncio.wait(
                tuple(self._pending), timeout=remaining, return_when=asyncio.FIRST_COMPLETED
            )
        return self._spawn(answer, prompt, vector, token)

    def keep(self, answer: Answer, token: int) -> None:
        """A requested write's memory half: ``answer`` in memory now, or
        :class:`WriteRefused` naming why a fence refuses it (counted, logged; then nothing
        goes to memory or the store)."""
        refusal = self.fence.refusal(answer.entry, token)
        if refusal is not None:
            self._refused(refusal, answer.entry.key)
            raise WriteRefused(
                str(refusal),
                f"write refused ({refusal}): a purge or withdrawal covering it, or a lost purge "
                "history, since it began; not kept in memory or the store (the shared exact "
                "tier keeps its own fences); store it again to keep it",
            )
        self._memory.put(answer)

    def _admit(self, answer: Answer, token: int) -> bool:
        refusal = self.fence.refusal(answer.entry, token)
        if refusal is not None:
            self._refused(refusal, answer.entry.key)
            return False
        self._memory.put(answer)
        return True

    def _refused(self, reason: Refusal, key: str) -> str:
        """Count, log and tally one write a fence refused; its outcome."""
        self._stats.count("fenced_writes")
        self._refusals.note("store", reason, key)
        outcome = f"refused: {reason}"
        self._note("fenced", outcome)
        return outcome

    def _spawn(
        self, answer: Answer, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> asyncio.Task[str]:
        task = asyncio.get_running_loop().create_task(
            self._write_when_ready(answer, prompt, vector, token)
        )
        self._pending.add(task)
        task.add_done_callback(self._pending.discard)
        entry = answer.entry
        partition = (entry.tenant, entry.namespace, entry.scope)
        self._landing[entry.key] = task
        self._partitions.setdefault(partition, set()).add(task)
        task.add_done_callback(partial(self._landed, entry.key, partition))
        self._start_janitor()
        return task

    def landing(self, key: str) -> asyncio.Task[str] | None:
        """The store write of ``key`` while it is pending (a paraphrase asked meanwhile cannot
        find that answer in the store yet), else None."""
        return self._landing.get(key)

    def _landed(self, key: str, partition: tuple[str, str, str], task: asyncio.Task[str]) -> None:
        if self._landing.get(key) is task:
            del self._landing[key]
        tasks = self._partitions.get(partition)
        if tasks is not None:
            tasks.discard(task)
            if not tasks:
                del self._partitions[partition]

    async def settle(self, tenant: str, namespace: str, scope: str, timeout_s: float) -> None:
        """Wait (at most ``timeout_s``) for this process's pending writes into one partition,
        so a lookup right after a ``store()`` reads that write (read-your-writes): a paraphrase
        is found only in the store, which the write reaches behind the caller's back."""
        tasks = self._partitions.get((tenant, namespace, scope))
        if tasks:
            await asyncio.wait(tuple(tasks), timeout=timeout_s)

    def _note(self, outcome: str, reason: str | None = None) -> None:
        self._tally[outcome] += 1
        if reason is not None:
            self._reasons[reason] += 1

    async def _write_when_ready(
        self, answer: Answer, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> str:
        """Wait for a warm-up in progress (answers given while the model loads are stored
        too), then write under the store's timeout; returns and tallies the outcome."""
        if self._backend.started is None:
            await self._backend.ready()
        failure: list[BaseException] = []

        async def attempt() -> str:
            try:
                return await self._write(answer, prompt, vector, token)
            except Exception as exc:
                failure.append(exc)
                raise

        timeout_s = self._failopen.timeout_s if self._timeout_s is None else self._timeout_s
        outcome = await self._failopen.call("store_upsert", attempt, None, timeout_s=timeout_s)
        if outcome is None:  # FailOpen counted it; this write's own reason, not the last one's
            reason = failure_reason(
                failure[0] if failure else TimeoutError(), None if failure else timeout_s
            )
            self._note("failed", reason)
            return f"failed: {reason}"
        if outcome == "written":  # a refusal was tallied where the fence refused it
            self._note(outcome)
        return outcome

    async def _write(
        self, answer: Answer, prompt: str | None, vector: np.ndarray | None, token: int
    ) -> str:
        tier = self._backend.started
        if tier is None or tier.embedder is None:
            raise self._backend.not_set_up()
        entry = answer.entry
        lane = tier.lane(prompt)  # a routed question's entry goes to the fallback's store
        if vector is None and prompt is not None:
            vector = await lane.embed(prompt, background=True)
        if vector is None:
            lane, vector = tier, tier.exact_only_vector()
        embedder = lane.embedder
        if embedder is None:  # pragma: no cover - embed() set the lane up
            raise StoreError("the fallback embedder is not set up")
        future: asyncio.Future[str] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_retrieved)  # a writer that timed out no longer reads it
        self._commits.append((replace(entry, vector=vector, embedder=embedder.name), token, future))
        if self._committer is None or self._committer.done():
            self._committer = asyncio.get_running_loop().create_task(self._commit(tier))
        return await asyncio.shield(future)

    async def _commit(self, tier: SemanticTier) -> None:
        """Group commit: entries whose vectors are ready while an upsert runs go together in
        the next one (one store call per batch instead of one per entry). The fence is checked
        under the lock, as for a single write, so a purge still wins."""
        while self._commits:
            batch, self._commits = self._commits[:COMMIT_BATCH], self._commits[COMMIT_BATCH:]
            async with self._lock:
                admitted = []
                for entry, token, future in batch:
                    refusal = self.fence.refusal(entry, token)
                    if refusal is None:
                        admitted.append((entry, future))
                        continue
                    _settle(future, self._refused(refusal, entry.key))
                if not admitted:
                    continue
                job = asyncio.get_running_loop().create_task(
                    tier.upsert_many([e for e, _ in admitted])
                )
                await asyncio.wait([job])
            error = job.exception() if not job.cancelled() else StoreError("upsert cancelled")
            for _, future in admitted:
                if error is not None:
                    if not future.done():
                        future.set_exception(error)
                else:
                    self._stats.count("stored")
                    _settle(future, "written")

    async def purge(self, purge: PurgeFilter, reason: Refusal | None = None) -> int:
        """Delete matching entries everywhere, fencing writes that began before; return a count.

        Store errors are raised here, including a store that cannot be opened (locked by
        another process, unreachable): an operator asked for this, and must know it did not
        reach the store. Memory and the fence are purged first either way. A store without the
        admin operations cannot purge, so nothing is touched then.
        """
        if purge.key is not None:  # one entry, withdrawn by feedback on another replica
            return await self.withdraw(purge.key, lambda: self.expire_stored(purge))
        started = self._backend.started
        if started is not None and not isinstance(started.store, StoreAdmin):
            name = type(started.store).__name__
            raise StoreError(f"{name} cannot purge (no StoreAdmin operations)")
        async with self._lock:
            self.fence.record(purge, reason)
            removed = self._memory.purge(
                tenant=purge.tenant, namespace=purge.namespace, model=purge.model
            )
            tier = self._backend.tier
            if tier is None:
                return removed
            stored = 0
            for lane in tier.lanes():  # every embedder's store (semantic.fallback_embedder)
                store = await lane.setup()  # raises when the store cannot be opened
                if not isinstance(store, StoreAdmin):
                    name = type(store).__name__
                    raise StoreError(f"{name} cannot purge (no StoreAdmin operations)")
                stored += await asyncio.to_thread(
                    store.purge, tenant=purge.tenant, namespace=purge.namespace, model=purge.model
                )
            return max(removed, stored)

    async def forget(self, purge: PurgeFilter, reason: Refusal | None = None) -> int:
        """Apply a purge or withdrawal to this process's own tiers only: fence pending writes
        and drop the matching memory entries (how many). For a store every process shares,
        which the process that purged has already purged (and fenced) for all: doing it
        again from here could only delete what others wrote since."""
        async with self._lock:
            self.fence.record(purge, reason)
            if purge.key is not None:
                return self._memory.discard(purge.key)
            return self._memory.purge(
                tenant=purge.tenant, namespace=purge.namespace, model=purge.model
            )

    async def withdraw(self, key: str, expire: Callable[[], Awaitable[int]]) -> int:
        """Withdraw one entry: fence pending writes of ``key``, drop it from memory, then run
        ``expire`` (which ends it in the store) under the write lock, so no write that began
        before lands after it. Returns how many copies were removed."""
        async with self._lock:
            self.fence.record(PurgeFilter(key=key))
            removed = self._memory.discard(key)
            return removed + await expire()

    async def expire_stored(self, withdrawn: PurgeFilter) -> int:
        """End the one entry ``withdrawn`` names (key, tenant, namespace, scope) in this
        cache's store: re-written with ``expires_at = now``, so a persistent store keeps it
        withdrawn across restarts. On a store every replica shares it is already ended by the
        replica that withdrew it; doing it again is harmless. Returns 1 if it was live."""
        tier = await self._backend.ready()
        if tier is None or tier.store is None or tier.embedder is None:
            return 0
        if withdrawn.key is None or withdrawn.tenant is None or withdrawn.namespace is None:
            return 0
        now = self._clock()
        entry = await tier.retrieve(
            withdrawn.key,
            tenant=withdrawn.tenant,
            namespace=withdrawn.namespace,
            scope=withdrawn.scope or EXACT_ONLY_SCOPE,
            now=now,
        )
        if entry is None:
            return 0
        lane = tier.lane_named(entry.embedder)  # a routed entry is in the fallback's store
        await lane.upsert(replace(entry, expires_at=now, vector=lane.exact_only_vector()))
        return 1

    async def flush(self) -> FlushReport:
        """Wait until every write submitted so far has landed or failed; report what happened
        to the writes handed over since the previous flush (then start a new tally)."""
        while self._pending:
            await asyncio.gather(*self._pending, return_exceptions=True)
        tally, reasons = self._tally, self._reasons
        self._tally, self._reasons = Counter(), Counter()
        return FlushReport(
            written=tally["written"],
            dropped=tally["dropped"],
            failed=tally["failed"],
            fenced=tally["fenced"],
            reasons=dict(reasons),
        )

    def _start_janitor(self) -> None:
        if self._janitor is None:
            self._janitor = asyncio.get_running_loop().create_task(self._purge_expired_forever())

    async def _purge_expired_forever(self) -> None:
        while True:
            await asyncio.sleep(self._purge_interval_s)
            tier = self._backend.started
            for lane in () if tier is None else tier.lanes():
                if lane.store is not None:
                    purge = partial(asyncio.to_thread, lane.store.purge_expired, self._clock())
                    await self._failopen.call("purge_expired", purge, 0)

    async def close(self) -> FlushReport:
        if self._janitor is not None:
            self._janitor.cancel()
            await asyncio.gather(self._janitor, return_exceptions=True)
            self._janitor = None
        return await self.flush()


class WriteBehindStage:
    """After the upstream call: hand a complete, storable answer to :class:`WriteBehind`."""

    def __init__(self, writer: WriteBehind) -> None:
        self._writer = writer

    async def __call__(self, request: Request, call_next: Next) -> Found:
        token = self._writer.fence.begin()  # before the call: a purge during it wins
        found = await call_next(request)
        plan = storable(request, found)
        if plan is None:
            return found
        answer, prompt, vector = plan
        self._writer.submit(answer, prompt=prompt, vector=vector, token=token)
        return found


def storable(request: Request, found: Found) -> tuple[Answer, str | None, np.ndarray | None] | None:
    """What to write for a fresh, complete, storable answer (answer, question to embed,
    vector if known), or None when nothing may be stored; exact-only entries get neither."""
    response = found.response
    if not (
        found.tier is Tier.MISS
        and found.storable
        and request.decision.store
        and response is not None
        and is_complete(response)
    ):
        return None
    semantic = request.entry_scope != EXACT_ONLY_SCOPE
    prompt = request.keys.prompt if semantic else None
    vector = request.vector if semantic else None
    answer = found.stored if found.stored is not None else found.answer
    return answer, prompt, vector


def _retrieved(future: asyncio.Future[str]) -> None:
    if not future.cancelled():
        future.exception()


def _settle(future: asyncio.Future[str], outcome: str) -> None:
    if not future.done():  # its writer may have timed out meanwhile
        future.set_result(outcome)

"""``cache.health()``: which part of the cache is degraded, and whether it is ready.

The cache never fails a call because of itself (it degrades to a miss), so "degraded" is
something an operator has to be told. Parts are named by the kinds that ``FailOpen`` counts
(``semantic_lookup``, ``store_upsert``, ``store_retrieve``, ``semantic_setup``, ...), plus
``store_integrity`` for a store directory that was lost and reopened and ``readiness`` for
the active probe.

Not-ready policy (what makes the proxy's ``/readyz`` answer 503): the cache cannot do its
work here, though a replica beside it could:

- the semantic tier is still warming up (loading its model, opening its store, or holding
  the local store's hits back until the purge log is replayed: part ``semantic_warming``,
  :mod:`semcache.replicas.purges`); or
- a part is *down*: its most recent call failed, within the health window, with no success
  since (for example every store write failing because the disk is full, an embedder that
  raises), or the probe fails (the tier cannot be set up, or cannot embed a question and
  read the store right now).

In these cases requests are still answered (upstream, at no-cache speed), but the cache is
doing nothing, so an orchestrator should know.

A dependency that does not answer is *degraded*, never down: the shared Redis (kinds
``redis_*``) and any failure that is a ``ConnectionError`` (a store server unreachable:
:class:`~semcache.errors.StoreUnreachable`), the probe's and the setup's included. Every
replica shares that outage and each still answers upstream, so taking them all out of
rotation would turn a cache outage into a service outage. Work shed by admission control
and a call timed out (within the shorter shed window) are degraded too: the cache protecting
latency under load; a timeout never makes a part down (once the load stops no call may come
to clear it), while a part that hangs for good fails the probe.

A part whose most recent call succeeded is ok again at once: a failure within the health
window is then listed under ``recovered`` (with its reason) but no longer grades the cache,
so ``/readyz`` says ``ok`` as soon as a dependency is back and used, not a window later.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from semcache.stats import CacheStats
from semcache.stores.base import StoreIntegrity

if TYPE_CHECKING:
    from semcache.compose import Assembly


#: FailOpen kinds of the shared Redis tier: degraded when failing, never down (see above).
SHARED_KINDS = "redis_"


class Status(enum.StrEnum):
    OK = "ok"
    DEGRADED = "degraded"
    DOWN = "down"


@dataclass(frozen=True, slots=True)
class PartHealth:
    """One part's state and, when not ``ok``, why."""

    status: Status
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Health:
    """The cache's health now; ``parts`` lists only the parts that are not ``ok``;
    ``recovered``: parts ok again after a failure within the health window, with its reason."""

    ready: bool
    parts: Mapping[str, PartHealth] = field(default_factory=dict)
    recovered: Mapping[str, str] = field(default_factory=dict)

    @property
    def status(self) -> Status:
        """The worst part's status (``ok`` when every part is)."""
        statuses = {part.status for part in self.parts.values()}
        for status in (Status.DOWN, Status.DEGRADED):
            if status in statuses:
                return status
        return Status.OK

    def as_dict(self) -> dict[str, object]:
        """JSON-ready form (the proxy's ``/readyz`` body)."""
        return {
            "ready": self.ready,
            "status": str(self.status),
            "parts": {
                name: {"status": str(part.status), "reason": part.reason}
                for name, part in self.parts.items()
            },
            "recovered": dict(self.recovered),
        }


async def probe(parts: Assembly, timeout_s: float, *, wait: bool = True) -> bool:
    """Is the semantic tier usable now: set up, able to embed and to read the store?

    True when there is no semantic tier to probe (memory only). Runs through ``FailOpen``
    (kind ``readiness``), so a failing probe is counted like any other failure. ``wait``:
    wait for the warm-up (model load, store open) to finish; without it a tier still
    warming up is simply not ready (False at once, counted as nothing failed).
    ``timeout_s`` covers the warm-up; once the tier is set up the probe gets no longer than
    any store call (``store.timeout_s``): it is what tells a store that hangs for good from
    one that timed out under a load that has stopped (a timeout never makes a part down).
    """
    backend = parts.backend
    if backend.started is not None:
        timeout_s = min(timeout_s, parts.failopen.timeout_s)
    if not wait and backend.tier is not None and backend.started is None:
        backend.start()
        if backend.warming:
            return False

    async def check() -> bool:
        tier = await backend.ready()
        if tier is None:
            return backend.tier is None
        await tier.embed("readiness probe")
        await tier.retrieve(
            "readiness probe", tenant="-", namespace="-", scope="-", now=parts.clock()
        )
        return True

    ready = await parts.failopen.call("readiness", check, False, timeout_s=timeout_s)
    if wait and backend.locked is not None:
        raise backend.locked  # another process holds the store: say so, never miss in silence
    if ready and not backend.gate.open:  # the store's hits wait for the purge log's replay
        ready = await backend.gate.settled(timeout_s) if wait else False
    return ready


async def assess(parts: Assembly, timeout_s: float, *, wait: bool = True) -> Health:
    """Probe the tier, then grade every part FailOpen has seen within the health window.

    ``wait=False`` (the proxy's ``/readyz``) answers at once: while the model loads the
    cache is not ready, with part ``semantic_warming`` saying so."""
    ready = await probe(parts, timeout_s, wait=wait)
    if not ready and parts.backend.warming and not parts.backend.reconnecting:
        why = parts.backend.gate.reason or "loading the embedder and opening the store"
        return Health(
            ready=False,
            parts={"semantic_warming": PartHealth(Status.DEGRADED, f"warming up: {why}")},
        )
    failopen = parts.failopen
    now, window = failopen.now(), parts.health_window_s
    graded: dict[str, PartHealth] = {}
    recovered: dict[str, str] = {}
    unreachable: set[str] = set()
    set_up = parts.backend.started is not None  # by the warm-up or a caller's own setup
    for kind, state in failopen.state().items():
        down = state.down and not (kind == "semantic_setup" and set_up)
        recent_failure = state.last_failure is not None and now - state.last_failure <= window
        recent_shed = state.last_shed is not None and now - state.last_shed <= parts.shed_window_s
        slow = state.last_timeout is not None and now - state.last_timeout <= parts.shed_window_s
        if kind == "readiness" and ready:
            continue
        if recent_failure and down and (state.unreachable or kind.startswith(SHARED_KINDS)):
            graded[kind] = PartHealth(Status.DEGRADED, f"unreachable: {state.last_reason}")
            unreachable.add(kind)
        elif recent_failure and down:
            graded[kind] = PartHealth(Status.DOWN, state.last_reason)
        elif recent_shed:
            graded[kind] = PartHealth(Status.DEGRADED, "overloaded: work shed")
        elif slow:
            graded[kind] = PartHealth(Status.DEGRADED, "overloaded: a call timed out")
        elif recent_failure:
            recovered[kind] = f"recovered from: {state.last_reason}"
    tier = parts.backend.started
    store = tier.store if tier is not None else None
    if isinstance(store, StoreIntegrity):
        report = store.integrity()
        if report.last_at is not None and now - report.last_at <= window:
            graded["store_integrity"] = PartHealth(
                Status.DEGRADED, f"{report.last_problem} (reopened {report.reopened}x)"
            )
    shared = parts.shared
    note = shared.log.note(now, window) if shared is not None else None
    if note is not None:
        graded["purge_log"] = PartHealth(Status.DEGRADED, note)
    if shared is not None and shared.log.eviction is not None:
        graded["redis_eviction"] = PartHealth(Status.DEGRADED, shared.log.eviction)
    probe_down = not ready and not unreachable & {"readiness", "semantic_setup"}
    if probe_down and graded.get("readiness", PartHealth(Status.OK)).status is not Status.DOWN:
        graded["readiness"] = PartHealth(Status.DOWN, "probe failed")
    down = any(part.status is Status.DOWN for part in graded.values())
    return Health(ready=not down, parts=graded, recovered=recovered)


def with_integrity(stats: CacheStats, store: object) -> CacheStats:
    """``stats`` with the store's reopenings counted as errors of kind ``store_lost``."""
    if not isinstance(store, StoreIntegrity):
        return stats
    reopened = store.integrity().reopened
    if not reopened:
        return stats
    return replace(stats, errors={**stats.errors, "store_lost": reopened})

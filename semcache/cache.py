"""``SemanticCache``: the facade that wraps LiteLLM's ``completion`` / ``acompletion``.

A request goes through the tiers in order: policy (may it be shared at all?), exact memory
(in the caller's thread, no hop), exact store (retrieve by id), the in-flight coalescer, the
semantic tier, and finally the upstream LLM through LiteLLM. Only complete, successful
answers are stored. Every cache failure degrades to a miss (``FailOpen``); upstream errors
reach the caller unchanged.

All work after the memory tier runs on one private event loop, so the sync API (any
thread) and the async API (any loop) share one coalescer: 16 threads or 100 tasks asking the
same question cost one upstream call.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from litellm import ModelResponse
from litellm.types.utils import ModelResponseStream

from semcache import _answer
from semcache._coalesce import Coalescer, Role
from semcache._failopen import FailOpen
from semcache._loop import shared_loop
from semcache._memory import MemoryTier
from semcache._streams import AsyncCacheStream, SyncCacheStream
from semcache._upstream import LiteLLMUpstream, Upstream, stream_and_assemble
from semcache.embedders.base import Embedder
from semcache.errors import StoreError
from semcache.fingerprint import RequestKeys, request_keys
from semcache.guard import HitVerifier
from semcache.policy import CacheControl, Decision, decide, validate_sampling, validate_tenant
from semcache.semantic import EXACT_ONLY_SCOPE, SemanticTier
from semcache.settings import CacheSettings
from semcache.stats import CacheInfo, HitAudit, Stats, Tier
from semcache.stores.base import NEVER_EXPIRES, Entry, StoreAdmin, VectorStore

#: Seconds a first model load and store open may take before setup counts as failed.
SETUP_TIMEOUT_S = 120.0
#: Seconds between setup attempts after a failure (requests go upstream meanwhile).
SETUP_RETRY_S = 30.0


@dataclass(frozen=True, slots=True)
class _Request:
    params: dict[str, Any]
    tenant: str
    control: CacheControl
    keys: RequestKeys
    decision: Decision
    stream: bool


@dataclass(frozen=True, slots=True)
class _Filled:
    """What a flight produced: the answer, how it was found, and the live upstream object."""

    answer: _answer.Answer
    tier: Tier
    similarity: float | None = None
    nearest: float | None = None
    response: ModelResponse | None = None  # the upstream object itself, for the leader


class SemanticCache:
    """Drop-in cache for LiteLLM completion calls.

    Extra keyword arguments understood on every call: ``tenant=`` (a partition no tier ever
    answers across) and ``cache=`` (a ``CacheControl`` or a dict with LiteLLM's names:
    ``no-cache``, ``no-store``, ``ttl``, ``namespace``, plus ``share-sampled``). Everything
    else goes to LiteLLM unchanged; the caller's dict is never mutated.
    """

    def __init__(
        self,
        settings: CacheSettings | None = None,
        *,
        embedder: Embedder | None = None,
        store: VectorStore | None = None,
        verifier: HitVerifier | None = None,
        upstream: Upstream | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.settings = settings if settings is not None else CacheSettings()
        s = self.settings
        self._clock = clock
        self._stats = Stats()
        self._failopen = FailOpen(self._stats, timeout_s=s.store.timeout_s)
        self._memory = MemoryTier(
            max_entries=s.exact.max_entries, max_bytes=s.exact.max_bytes, clock=clock
        )
        self._coalescer: Coalescer[_Filled, ModelResponseStream] = Coalescer(
            max_wait=s.coalesce.max_wait_s
        )
        self._upstream = upstream if upstream is not None else LiteLLMUpstream()
        self._loop = shared_loop()
        self._semantic: SemanticTier | None = None
        if s.semantic.enabled and (store is not None or s.store.backend != "none"):
            self._semantic = SemanticTier(
                embedder=(lambda: embedder) if embedder is not None else self._load_embedder,
                store=(lambda: store) if store is not None else self._open_store,
                verifier=verifier if verifier is not None else self._load_verifier(),
                threshold=s.semantic.threshold,
                namespace_thresholds=s.semantic.namespace_thresholds,
                max_batch=s.semantic.batch_size,
                max_wait_ms=s.semantic.max_batch_wait_ms,
            )
        self._writes: set[asyncio.Task[None]] = set()
        self._audit = HitAudit()
        self._janitor: asyncio.Task[None] | None = None
        self._setup_failed_at: float | None = None
        self._closed = False

    # -- construction helpers (settings are read here and nowhere else) -------------------------
    def _load_embedder(self) -> Embedder:
        from semcache.embedders import load_embedder

        s = self.settings.semantic
        return load_embedder(
            s.embedder,
            device=s.device,
            batch_size=s.batch_size,
            precision=s.precision,
            runtime=s.runtime,
        )

    def _open_store(self) -> VectorStore:
        from semcache.stores import open_store

        s = self.settings.store
        store = open_store(
            s.backend,
            path=s.path,
            url=s.url,
            api_key=s.api_key.get_secret_value() if s.api_key is not None else None,
            prefer_grpc=s.prefer_grpc,
            collection=s.collection,
            timeout_s=s.timeout_s,
        )
        assert store is not None  # backend "none" never builds a semantic tier
        return store

    def _load_verifier(self) -> HitVerifier | None:
        name = self.settings.semantic.verifier
        if name == "none":
            return None
        from semcache.guard_details import get_verifier

        return get_verifier(name)

    # -- public API ---------------------------------------------------------------------------
    def completion(self, **kwargs: Any) -> ModelResponse | Iterator[ModelResponseStream]:
        """``litellm.completion`` through the cache (``stream=True`` returns an iterator)."""
        request = self._prepare(kwargs)
        hit = self._memory_hit(request)
        if request.stream:
            source = self._stream(request, hit)
            return SyncCacheStream(AsyncCacheStream(source, self._loop))
        if hit is not None:
            return hit
        return self._loop.run(self._resolve(request))

    async def acompletion(
        self, **kwargs: Any
    ) -> ModelResponse | AsyncIterator[ModelResponseStream]:
        """``litellm.acompletion`` through the cache (``stream=True`` returns an async iterator)."""
        request = self._prepare(kwargs)
        hit = self._memory_hit(request)
        if request.stream:
            return AsyncCacheStream(self._stream(request, hit), self._loop)
        if hit is not None:
            return hit
        return await self._loop.arun(self._resolve(request))

    def batch_completion(
        self, requests: Sequence[Mapping[str, Any]], *, max_concurrency: int = 8
    ) -> list[ModelResponse | BaseException]:
        """Answer many requests concurrently; identical ones cost one upstream call.

        Every request is validated before any call is made (a bad one raises and nothing
        runs). Results keep the input order; an upstream failure is returned in its slot.
        """
        prepared = []
        for i, kwargs in enumerate(requests):
            try:
                prepared.append(self._prepare({**kwargs, "stream": False}))
            except ValueError as exc:
                field = getattr(exc, "field", None)
                if field is not None:
                    raise type(exc)(f"requests[{i}].{field}", exc.problem) from None
                raise

        async def run_all() -> list[ModelResponse | BaseException]:
            gate = asyncio.Semaphore(max_concurrency)

            async def one(request: _Request) -> ModelResponse:
                hit = self._memory_hit(request)
                if hit is not None:
                    return hit
                async with gate:
                    return await self._resolve(request)

            return await asyncio.gather(*(one(r) for r in prepared), return_exceptions=True)

        return self._loop.run(run_all())

    def stats(self) -> dict[str, Any]:
        """Counters since start, plus sizes of the memory tier and the store."""
        snapshot = self._stats.snapshot()
        snapshot["memory_entries"] = len(self._memory)
        snapshot["memory_bytes"] = self._memory.nbytes
        snapshot["in_flight"] = self._coalescer.in_flight()
        store = self._semantic.store if self._semantic is not None else None
        snapshot["store_entries"] = None
        if isinstance(store, StoreAdmin):
            try:
                snapshot["store_entries"] = store.count()
            except Exception as exc:
                self._failopen.record("store_count", exc)
        return snapshot

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """Delete matching entries from every tier; returns how many were removed.

        ``model`` is matched against the resolved ``provider/model`` name and may be given
        in any form LiteLLM resolves (``gpt-4o-mini`` or ``openai/gpt-4o-mini``).
        Store errors are raised here (an operator asked for this), not swallowed.
        """
        return self._loop.run(self._purge(tenant, namespace, model))

    async def apurge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        """``purge`` for async callers (does not block their loop)."""
        return await self._loop.arun(self._purge(tenant, namespace, model))

    def recent_entries(self, *, tenant: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """Newest stored entries with their hit counts, for auditing what is served."""
        return self._loop.run(self._recent(tenant, limit))

    async def arecent_entries(
        self, *, tenant: str | None = None, limit: int = 50
    ) -> list[dict[str, Any]]:
        """``recent_entries`` for async callers."""
        return await self._loop.arun(self._recent(tenant, limit))

    def ready(self) -> bool:
        """True when the store and embedder are usable (loads them if needed)."""
        return self._loop.run(self._ready())

    async def aready(self) -> bool:
        """``ready`` for async callers."""
        return await self._loop.arun(self._ready())

    def close(self) -> None:
        """Finish pending writes and close the store (the shared loop stays for other caches)."""
        if not self._closed:
            self._closed = True
            self._loop.run(self._shutdown())

    async def _purge(self, tenant: str | None, namespace: str | None, model: str | None) -> int:
        if model is not None:
            from semcache.fingerprint import resolve_model

            model = resolve_model(model)
        store = None if self._semantic is None else await self._semantic.setup()
        if store is not None and not isinstance(store, StoreAdmin):
            raise StoreError(f"{type(store).__name__} cannot purge (no StoreAdmin operations)")
        removed = self._memory.purge(tenant=tenant, namespace=namespace, model=model)
        if store is None:
            return removed
        stored = await asyncio.to_thread(
            store.purge, tenant=tenant, namespace=namespace, model=model
        )
        return max(removed, stored)

    async def _recent(self, tenant: str | None, limit: int) -> list[dict[str, Any]]:
        if self._semantic is None:
            return []
        store = await self._semantic.setup()
        if not isinstance(store, StoreAdmin):
            return []
        entries = await asyncio.to_thread(store.recent, tenant=tenant, limit=limit)
        out = []
        for entry in entries:
            audit = self._audit.get(entry.key)
            out.append(
                {
                    "key": entry.key,
                    "tenant": entry.tenant,
                    "namespace": entry.namespace,
                    "model": entry.model,
                    "question": entry.question,
                    "created_at": entry.created_at,
                    "expires_at": entry.expires_at,
                    "hits": audit.get("hits", 0),
                    "last_similarity": audit.get("last_similarity"),
                }
            )
        return out

    async def _ready(self) -> bool:
        semantic = self._semantic
        if semantic is None:
            return True

        async def check() -> bool:
            await semantic.setup()
            await semantic.embed("readiness probe")
            # a read the store must answer (a key no request has)
            await semantic.retrieve(
                "readiness probe", tenant="", namespace="", scope=EXACT_ONLY_SCOPE, now=0.0
            )
            return True

        return await self._failopen.call("readiness", check, False, timeout_s=SETUP_TIMEOUT_S)

    async def _shutdown(self) -> None:
        if self._janitor is not None:
            self._janitor.cancel()
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        if self._semantic is not None:
            await self._semantic.close()

    async def aclose(self) -> None:
        """``close`` for async callers."""
        if not self._closed:
            self._closed = True
            await self._loop.arun(self._shutdown())

    def __enter__(self) -> SemanticCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> SemanticCache:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # -- request path -------------------------------------------------------------------------
    def _prepare(self, kwargs: Mapping[str, Any]) -> _Request:
        params = dict(kwargs)
        tenant = validate_tenant(params.pop("tenant", None))
        control = CacheControl.parse(params.pop("cache", None))
        validate_sampling(params)
        keys = request_keys(params, tenant=tenant, namespace=control.namespace)
        decision = decide(params, control, self.settings.policy.max_shared_temperature)
        return _Request(params, tenant, control, keys, decision, bool(params.get("stream")))

    def _memory_answer(self, request: _Request) -> _answer.Answer | None:
        return self._memory.get(request.keys.exact) if request.decision.lookup else None

    def _memory_hit(self, request: _Request) -> ModelResponse | None:
        answer = self._memory_answer(request)
        return None if answer is None else self._deliver(answer, "exact")

    async def _resolve(self, request: _Request) -> ModelResponse:
        if request.decision.bypass:
            response = await self._upstream.complete(request.params)
            self._stats.count("upstream_calls")
            return self._tag(response, CacheInfo(tier="bypass", key=request.keys.exact))
        # Checked again after the store's await: a flight for this key may have finished
        # meanwhile, and its answer is in memory. No await between this and joining a
        # flight, so a request either joins the flight or finds its answer.
        answer = await self._store_hit(request) or self._memory_answer(request)
        if answer is not None:
            return self._deliver(answer, "exact")
        key: object = request.keys.exact
        if not (request.decision.coalesce and self.settings.coalesce.enabled):
            key = (key, uuid.uuid4())  # a private flight: same path, nobody can join
        outcome = await self._coalescer.do(key, partial(self._fill, request))
        filled = outcome.value
        tier: Tier = "coalesced" if outcome.role is Role.FOLLOWER else filled.tier
        if filled.response is not None and outcome.role is not Role.FOLLOWER:
            return self._tag(
                filled.response, self._info(filled.answer, tier, nearest=filled.nearest)
            )
        return self._deliver(filled.answer, tier, filled.similarity, filled.nearest)

    async def _stream(
        self, request: _Request, hit: ModelResponse | None
    ) -> AsyncIterator[ModelResponseStream | CacheInfo]:
        """Chunks for a streaming caller; the first item yielded is its ``CacheInfo``."""
        if hit is not None:
            info = self._tagged_info(hit)
            yield info
            for chunk in _answer.as_stream(hit.model_dump()):
                yield self._tag(chunk, info)
            return
        if request.decision.bypass:
            info = CacheInfo(tier="bypass", key=request.keys.exact)
            self._stats.served(info)
            self._stats.count("upstream_calls")
            yield info
            async for chunk in self._upstream.stream(request.params):
                yield self._tag(chunk, info)
            return
        answer = await self._store_hit(request) or self._memory_answer(request)
        if answer is not None:
            info = self._info(answer, "exact")
            self._stats.served(info)
            yield info
            for chunk in _answer.as_stream(_answer.decode(answer.entry.response)[0]):
                yield self._tag(chunk, info)
            return
        key: object = request.keys.exact
        if not (request.decision.coalesce and self.settings.coalesce.enabled):
            key = (key, uuid.uuid4())
        async with self._coalescer.subscribe(key, partial(self._fill, request)) as flight:
            info = None
            async for chunk in flight:
                if info is None:
                    tier: Tier = "coalesced" if flight.role is Role.FOLLOWER else "miss"
                    info = CacheInfo(tier=tier, key=request.keys.exact)
                    yield info
                if flight.role is Role.FOLLOWER:
                    chunk = chunk.model_copy(deep=True)
                yield self._tag(chunk, info)
            filled = await flight.result()
            if info is None:  # nothing streamed live: a semantic hit or a non-streaming leader
                tier = "coalesced" if flight.role is Role.FOLLOWER else filled.tier
                info = self._info(filled.answer, tier, filled.similarity, filled.nearest)
                yield info
                for chunk in _answer.as_stream(_answer.decode(filled.answer.entry.response)[0]):
                    yield self._tag(chunk, info)
                self._stats.served(info)
            elif info.tier == "miss":
                self._stats.served(info)
            else:  # a follower of a live stream: what it saved is known only now
                self._stats.served(self._info(filled.answer, info.tier))

    async def _semantic_ready(self) -> SemanticTier | None:
        """The semantic tier once its model and store are up; None while they cannot be.

        Loading a model takes seconds, so setup has its own generous timeout, and after a
        failure it is retried only every ``SETUP_RETRY_S`` instead of on every request.
        """
        semantic = self._semantic
        if semantic is None or semantic.store is not None:
            return semantic
        failed_at = self._setup_failed_at
        if failed_at is not None and time.monotonic() - failed_at < SETUP_RETRY_S:
            return None
        store = await self._failopen.call(
            "semantic_setup", semantic.setup, None, timeout_s=SETUP_TIMEOUT_S
        )
        if store is None:
            self._setup_failed_at = time.monotonic()
            return None
        return semantic

    async def _store_hit(self, request: _Request) -> _answer.Answer | None:
        if not request.decision.lookup:
            return None
        semantic = await self._semantic_ready()
        if semantic is None:
            return None
        entry = await self._failopen.call(
            "store_retrieve",
            partial(
                semantic.retrieve,
                request.keys.exact,
                tenant=request.tenant,
                namespace=request.control.namespace,
                scope=EXACT_ONLY_SCOPE if request.keys.scope is None else request.keys.scope,
                now=self._clock(),
            ),
            None,
        )
        if entry is None:
            return None
        answer = _answer.Answer.of(entry)
        self._memory.put(answer)
        return answer

    async def _fill(
        self, request: _Request, emit: Callable[[ModelResponseStream], None]
    ) -> _Filled:
        """One flight: semantic lookup, else upstream; store what came back complete."""
        keys, semantic = request.keys, await self._semantic_ready()
        vector, nearest = None, None
        if semantic is not None and keys.scope is not None and keys.prompt is not None:
            lookup = None
            if request.decision.lookup:
                lookup = await self._failopen.call(
                    "semantic_lookup",
                    partial(
                        semantic.lookup,
                        keys.prompt,
                        tenant=request.tenant,
                        namespace=request.control.namespace,
                        scope=keys.scope,
                        now=self._clock(),
                    ),
                    None,
                )
            if lookup is not None:
                vector, nearest = lookup.vector, lookup.nearest
                if lookup.rejected:
                    self._stats.count("verifier_rejections")
                if lookup.match is not None:
                    # Not put in memory: memory answers exact repeats of *this* entry's
                    # question, and the paraphrase's own key is not that entry's key.
                    answer = _answer.Answer.of(lookup.match.entry)
                    return _Filled(answer, "semantic", lookup.match.similarity, nearest)
        if request.stream:
            response = await stream_and_assemble(self._upstream, request.params, emit)
        else:
            response = await self._upstream.complete(request.params)
        self._stats.count("upstream_calls")
        answer = _answer.Answer.of(self._entry(request, response))
        if request.decision.store and _answer.is_complete(response):
            self._memory.put(answer)
            self._write_behind(request, answer.entry, vector)
        return _Filled(answer, "miss", nearest=nearest, response=response)

    def _entry(self, request: _Request, response: ModelResponse) -> Entry:
        now = self._clock()
        ttl = request.control.ttl
        if ttl is None:
            ttl = self.settings.policy.default_ttl_s
        store_question = self.settings.semantic.store_question
        return Entry(
            key=request.keys.exact,
            tenant=request.tenant,
            namespace=request.control.namespace,
            model=request.keys.model,
            scope=request.keys.scope or EXACT_ONLY_SCOPE,
            response=_answer.encode(response, _answer.response_cost(response)),
            created_at=now,
            expires_at=NEVER_EXPIRES if ttl is None else now + ttl,
            embedder=self._semantic.embedder.name
            if self._semantic is not None and self._semantic.embedder is not None
            else "",
            question=request.keys.prompt if store_question else None,
        )

    def _write_behind(self, request: _Request, entry: Entry, vector: Any) -> None:
        """Store in the vector store off the response path (awaited on close)."""
        semantic = self._semantic
        if semantic is None or semantic.store is None:
            return  # not set up (disabled or failing): the memory tier has the entry

        async def write() -> None:
            v = vector
            if v is None:
                prompt = request.keys.prompt
                eligible = request.keys.scope is not None and prompt is not None
                v = await semantic.embed(prompt) if eligible else semantic.exact_only_vector()
            assert semantic.embedder is not None
            await semantic.upsert(replace(entry, vector=v, embedder=semantic.embedder.name))
            self._stats.count("stored")

        task = asyncio.get_running_loop().create_task(
            self._failopen.call("store_upsert", write, None)
        )
        self._writes.add(task)
        task.add_done_callback(self._writes.discard)
        self._start_janitor()

    def _start_janitor(self) -> None:
        if self._janitor is not None or self._semantic is None:
            return
        semantic, interval = self._semantic, self.settings.store.purge_interval_s

        async def purge_expired_forever() -> None:
            while True:
                await asyncio.sleep(interval)
                store = semantic.store
                if store is not None:
                    await self._failopen.call(
                        "purge_expired",
                        partial(asyncio.to_thread, store.purge_expired, self._clock()),
                        0,
                    )

        self._janitor = asyncio.get_running_loop().create_task(purge_expired_forever())

    # -- responses ----------------------------------------------------------------------------
    def _info(
        self,
        answer: _answer.Answer,
        tier: Tier,
        similarity: float | None = None,
        nearest: float | None = None,
    ) -> CacheInfo:
        entry = answer.entry
        if tier not in ("exact", "semantic", "coalesced"):
            return CacheInfo(tier=tier, key=entry.key, nearest_similarity=nearest)
        if tier != "coalesced":
            self._audit.record(entry.key, similarity)
        return CacheInfo(
            tier=tier,
            key=entry.key,
            similarity=similarity,
            nearest_similarity=nearest,
            age_s=max(0.0, self._clock() - entry.created_at),
            saved_cost_usd=answer.cost_usd,
            saved_tokens=answer.tokens,
        )

    def _deliver(
        self,
        answer: _answer.Answer,
        tier: Tier,
        similarity: float | None = None,
        nearest: float | None = None,
    ) -> ModelResponse:
        """A private response object for one caller, tagged with its CacheInfo."""
        return self._tag(answer.response(), self._info(answer, tier, similarity, nearest))

    def _tag(self, response: Any, info: CacheInfo) -> Any:
        """Attach ``info`` where ``cache_info`` and LiteLLM's own tooling look for it."""
        hidden = getattr(response, "_hidden_params", None)
        if not isinstance(hidden, dict):
            hidden = {}
            response._hidden_params = hidden
        hidden["semcache"] = info
        hidden["cache_hit"] = info.hit
        if not isinstance(response, ModelResponseStream):
            self._stats.served(info)
        return response

    @staticmethod
    def _tagged_info(response: Any) -> CacheInfo:
        return response._hidden_params["semcache"]

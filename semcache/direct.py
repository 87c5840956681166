"""Look up and store answers without an LLM call: ``check`` / ``store`` (RedisVL, GPTCache).

For callers that do not go through LiteLLM (their own client, a framework adapter, a batch
job that already has the answers). Both run the cache's own stages in order, so tenants,
namespaces, TTLs, ``s-maxage``, the sampling policy, the answer guard, purges and every
future stage apply exactly as they do to ``completion``; only the chain's end differs:
``check`` ends in a miss instead of the upstream call, ``store`` ends in the caller's answer.
Neither joins or starts a shared flight (a check has nothing to share, and a flight that
ended in "miss" must never be handed to a ``completion`` waiting on the same key).
"""

from __future__ import annotations

import json
from collections.abc import Coroutine, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from litellm import ModelResponse

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.facade import query, writes
from semcache.pipeline.base import Request
from semcache.pipeline.lookup import Query
from semcache.protocols import MESSAGES, RESPONSES
from semcache.stats import CacheHit, CacheInfo, ImportReport

if TYPE_CHECKING:
    from semcache.compose import Assembly
    from semcache.core.policy import CacheControl
    from semcache.facade.delivery import Delivery
    from semcache.runtime.loop import LoopThread


#: The model partition of ``check`` / ``store`` calls that name no model: answers stored
#: without a model are found only by checks without one (and never by ``completion``, whose
#: requests always name a model). Name a model to share entries with ``completion``.
DEFAULT_MODEL = "semcache-direct"


def call_kwargs(
    prompt: str | None,
    messages: Sequence[Mapping[str, Any]] | None,
    model: str | None,
    tenant: str | None,
    cache: CacheControl | Mapping[str, Any] | None,
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """The ``completion`` keyword arguments that ``check``/``store`` stand for."""
    if (prompt is None) == (messages is None):
        raise InvalidRequest("prompt", "give exactly one of prompt= or messages=")
    if prompt is not None and not isinstance(prompt, str):
        raise InvalidRequestType("prompt", f"expected a string, got {type(prompt).__name__}")
    if messages is None:
        messages = [{"role": "user", "content": prompt}]
    kwargs = {**params, "model": DEFAULT_MODEL if model is None else model, "messages": messages}
    if tenant is not None:
        kwargs["tenant"] = tenant
    if cache is not None:
        kwargs["cache"] = cache
    return kwargs


def wire_protocol(protocol: str | None) -> str | None:
    """``protocol`` checked: None (chat completions) or the name of a protocol adapter."""
    if protocol is None or protocol in (RESPONSES.name, MESSAGES.name):
        return protocol
    names = [RESPONSES.name, MESSAGES.name]
    raise InvalidRequest("protocol", f"expected one of {names} or None, got {protocol!r}")


def json_object(metadata: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``metadata`` as a plain JSON object (a copy), or InvalidRequest naming ``metadata``."""
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise InvalidRequestType("metadata", f"expected an object, got {type(metadata).__name__}")
    try:
        text = json.dumps(dict(metadata), allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise InvalidRequest("metadata", f"not JSON-serialisable: {exc}") from None
    plain: dict[str, Any] = json.loads(text)
    if any(not isinstance(key, str) for key in metadata):
        raise InvalidRequestType("metadata", "keys must be strings")
    return plain


def as_response(response: str | ModelResponse, model: str | None) -> ModelResponse:
    """The caller's answer as a complete ``ModelResponse`` (text becomes one stop choice)."""
    if isinstance(response, ModelResponse):
        return response
    if not isinstance(response, str):
        raise InvalidRequestType(
            "response", f"expected a string or a ModelResponse, got {type(response).__name__}"
        )
    message = {"role": "assistant", "content": response}
    built = ModelResponse(
        model=DEFAULT_MODEL if model is None else model,
        choices=[{"index": 0, "message": message, "finish_reason": "stop"}],
    )
    built._hidden_params["response_cost"] = 0.0  # what the caller paid is unknown here
    return built


class DirectAPI:
    """``check`` / ``store`` and their async twins; mixed into ``SemanticCache``.

    Each call is one operation span (``semcache.check``, ``semcache.store``,
    ``semcache.store_many``, ``semcache.lookup``, ``semcache.drop``) when OpenTelemetry is
    on; a lookup's outcome is recorded (the dashboard's lookups) as ``completion``'s is."""

    _parts: Assembly
    _loop: LoopThread
    _delivery: Delivery

    def check(
        self,
        prompt: str | None = None,
        *,
        model: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tenant: str | None = None,
        cache: CacheControl | Mapping[str, Any] | None = None,
        filters: Mapping[str, Any] | None = None,
        num_results: int | None = None,
        threshold: float | None = None,
        allow_looser: bool = False,
        **params: Any,
    ) -> Any:
        """The stored answer ``completion`` would serve for this question, or None.

        Give ``prompt`` (one user message) or ``messages``; ``model`` (default: the
        ``semcache-direct`` partition, see ``DEFAULT_MODEL``) and every other parameter
        (temperature, tools, ...) are part of the key as in ``completion``.

        ``filters`` (``{key: value}`` or ``{key: [v1, v2]}``, strs or ints): only answers
        whose stored metadata match every one; they narrow the caller's tenant and scope,
        never widen them. ``num_results``: return a list of up to that many hits, the exact
        entry first, then by similarity. ``threshold``: this call's cosine threshold; it may
        only be stricter than the served one unless ``allow_looser=True``. With any of the
        three the lookup is :meth:`~semcache.pipeline.lookup.Lookup.many`, through the same gates.
        """
        with self._parts.observer.operation("check"):
            return self._loop.run(
                self._checking(
                    prompt,
                    model,
                    messages,
                    tenant,
                    cache,
                    filters,
                    num_results,
                    threshold,
                    allow_looser,
                    params,
                )
            )

    async def acheck(
        self,
        prompt: str | None = None,
        *,
        model: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tenant: str | None = None,
        cache: CacheControl | Mapping[str, Any] | None = None,
        filters: Mapping[str, Any] | None = None,
        num_results: int | None = None,
        threshold: float | None = None,
        allow_looser: bool = False,
        **params: Any,
    ) -> Any:
        """``check`` for async callers."""
        with self._parts.observer.operation("check"):
            return await self._loop.arun(
                self._checking(
                    prompt,
                    model,
                    messages,
                    tenant,
                    cache,
                    filters,
                    num_results,
                    threshold,
                    allow_looser,
                    params,
                )
            )

    def drop(
        self,
        prompt: str | None = None,
        *,
        model: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tenant: str | None = None,
        cache: CacheControl | Mapping[str, Any] | None = None,
        **params: Any,
    ) -> int:
        """Withdraw the answer stored for this question (the same arguments as ``store``)
        from memory and the store; returns how many copies were removed (0: none stored).
        A write of it still pending never lands after."""
        request = self._parts.prepare(call_kwargs(prompt, messages, model, tenant, cache, params))
        with self._parts.observer.operation("drop"):
            return self._loop.run(query.drop(self._parts, request))

    async def adrop(
        self,
        prompt: str | None = None,
        *,
        model: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tenant: str | None = None,
        cache: CacheControl | Mapping[str, Any] | None = None,
        **params: Any,
    ) -> int:
        """``drop`` for async callers."""
        request = self._parts.prepare(call_kwargs(prompt, messages, model, tenant, cache, params))
        with self._parts.observer.operation("drop"):
            return await self._loop.arun(query.drop(self._parts, request))

    def _checking(
        self,
        prompt: str | None,
        model: str | None,
        messages: Sequence[Mapping[str, Any]] | None,
        tenant: str | None,
        cache: CacheControl | Mapping[str, Any] | None,
        filters: Mapping[str, Any] | None,
        num_results: int | None,
        threshold: float | None,
        allow_looser: bool,
        params: Mapping[str, Any],
    ) -> Coroutine[Any, Any, Any]:
        """Validate in the caller's thread; the coroutine to run on the cache's loop."""
        request = self._parts.prepare(call_kwargs(prompt, messages, model, tenant, cache, params))
        if filters is None and num_results is None and threshold is None:
            return self._check(request)
        parsed = query.parse_filters(filters)
        limit = 1 if num_results is None else num_results
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidRequest("num_results", f"expected an int >= 1, got {num_results!r}")
        cut = query.parse_threshold(threshold)

        async def run() -> Any:
            await self._settle(request)
            options = Query(parsed, limit, cut, allow_looser)
            found = await self._delivery.query(self._parts.path, request, options)
            hits = self._looked(request, found)
            if num_results is not None:
                return hits
            return hits[0] if hits else None

        return run()

    def store(
        self,
        prompt: str | None = None,
        response: str | ModelResponse | None = None,
        *,
        model: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tenant: str | None = None,
        cache: CacheControl | Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        protocol: str | None = None,
        **params: Any,
    ) -> str | None:
        """Keep ``response`` as the answer to this question; returns its key, or None when
        the policy keeps it out (``no-store``, ``ttl=0``, a sampling request, an incomplete
        answer). Memory has it at once; the store write is behind (``flush()`` waits and
        reports it). Never dropped: when ``admission.max_pending_writes`` writes are pending
        this waits for room, and raises ``StoreBackpressure`` after ``admission.store_wait_s``;
        ``StoreError`` when the semantic tier cannot be set up.

        ``metadata``: a JSON object kept with the answer and returned by ``check`` (and
        matched by its ``filters``); not part of the key, so storing the same question again
        replaces both answer and metadata (that is ``update``).

        ``protocol`` (``"responses"``, ``"messages"``): these chat arguments are a request of
        that wire protocol as its adapter translated it, and the answer is kept under that
        protocol's keys, where ``cache.responses`` / ``cache.messages`` find it (for
        integrations that translate protocol requests, as LiteLLM's cache slot does)."""
        request, answer, meta = self._prepare_store(
            prompt, response, model, messages, tenant, cache, params, metadata, protocol
        )
        with self._parts.observer.operation("store"):
            return self._loop.run(writes.store(self._parts, request, answer, meta)).key

    async def astore(
        self,
        prompt: str | None = None,
        response: str | ModelResponse | None = None,
        *,
        model: str | None = None,
        messages: Sequence[Mapping[str, Any]] | None = None,
        tenant: str | None = None,
        cache: CacheControl | Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        protocol: str | None = None,
        **params: Any,
    ) -> str | None:
        """``store`` for async callers."""
        request, answer, meta = self._prepare_store(
            prompt, response, model, messages, tenant, cache, params, metadata, protocol
        )
        with self._parts.observer.operation("store"):
            return (await self._loop.arun(writes.store(self._parts, request, answer, meta))).key

    update = store
    """``update(prompt, response, metadata=...)``: replace the answer and metadata stored for
    this question (the same call as ``store``: entries are keyed by the question)."""
    aupdate = astore

    def store_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        model: str | None = None,
        tenant: str | None = None,
        chunk: int = 256,
        on_progress: writes.Progress | None = None,
    ) -> ImportReport:
        """Bulk import (GPTCache's ``import_data``, RedisVL's ``load``): store every item and
        wait until each has landed or failed; returns an :class:`ImportReport`.

        Each item is a mapping with ``prompt`` or ``messages``, ``response``, and optionally
        ``model``, ``tenant``, ``cache`` and any other parameter ``store`` takes; ``model`` /
        ``tenant`` given here are the defaults. Every item is validated before anything is
        stored (a bad one raises ``InvalidRequest`` naming ``items[i].field``). ``chunk``
        items are written concurrently, so their embeddings share batches and their upserts
        share store calls; ``on_progress(done, total)`` is called after each chunk.
        """
        prepared = self._prepare_many(items, model, tenant, chunk)
        with self._parts.observer.operation("store_many"):
            return self._loop.run(
                writes.store_many(self._parts, prepared, chunk=chunk, on_progress=on_progress)
            )

    async def astore_many(
        self,
        items: Iterable[Mapping[str, Any]],
        *,
        model: str | None = None,
        tenant: str | None = None,
        chunk: int = 256,
        on_progress: writes.Progress | None = None,
    ) -> ImportReport:
        """``store_many`` for async callers."""
        prepared = self._prepare_many(items, model, tenant, chunk)
        with self._parts.observer.operation("store_many"):
            return await self._loop.arun(
                writes.store_many(self._parts, prepared, chunk=chunk, on_progress=on_progress)
            )

    # -- shared core (validation in the caller's thread, work on the cache's loop) -------------
    def _prepare_store(
        self,
        prompt: str | None,
        response: str | ModelResponse | None,
        model: str | None,
        messages: Sequence[Mapping[str, Any]] | None,
        tenant: str | None,
        cache: CacheControl | Mapping[str, Any] | None,
        params: Mapping[str, Any],
        metadata: Mapping[str, Any] | None = None,
        protocol: str | None = None,
    ) -> tuple[Request, ModelResponse, dict[str, Any] | None]:
        if response is None:
            raise InvalidRequest("response", "missing")
        answer = as_response(response, model)
        meta = json_object(metadata)
        kwargs = call_kwargs(prompt, messages, model, tenant, cache, params)
        request = self._parts.prepare(kwargs, protocol=wire_protocol(protocol))
        return request, answer, meta

    async def _settle(self, request: Request) -> None:
        """Read-your-writes: this process's ``store()`` writes still pending into the
        request's partition land (or fail) before a ``check`` looks."""
        if request.decision.lookup:
            await self._parts.writer.settle(
                request.tenant,
                request.control.namespace,
                request.entry_scope,
                self._parts.store_wait_s,
            )

    async def _check(self, request: Request) -> CacheHit | None:
        await self._settle(request)
        found = await self._direct_lookup(request)
        return found if isinstance(found, CacheHit) else None

    async def _direct_lookup(self, request: Request) -> CacheHit | CacheInfo:
        found = await self._delivery.lookup(self._parts.path, request)
        self._looked(request, found if isinstance(found, CacheInfo) else [found])
        return found

    def _looked(self, request: Request, found: list[CacheHit] | CacheInfo) -> list[CacheHit]:
        """Record a lookup's outcome as ``completion``'s are (the recorded lookups, the
        operation span's attributes), unless the policy kept it out of every tier; the hits."""
        info = found if isinstance(found, CacheInfo) else found[0].info
        if request.decision.lookup:
            self._parts.observer.info(request.tenant, info)
        return [] if isinstance(found, CacheInfo) else found

    def lookup(self, *, protocol: str | None = None, **kwargs: Any) -> CacheHit | CacheInfo:
        """``check`` with ``completion``'s keyword arguments, for integrations: a miss
        returns its ``CacheInfo`` (why it missed, how close it came) instead of None.
        ``protocol``: as for ``store``, the wire protocol these arguments were translated from."""
        request = self._parts.prepare(kwargs, protocol=wire_protocol(protocol))
        with self._parts.observer.operation("lookup"):
            return self._loop.run(self._direct_lookup(request))

    async def alookup(self, *, protocol: str | None = None, **kwargs: Any) -> CacheHit | CacheInfo:
        """``lookup`` for async callers."""
        request = self._parts.prepare(kwargs, protocol=wire_protocol(protocol))
        with self._parts.observer.operation("lookup"):
            return await self._loop.arun(self._direct_lookup(request))

    def _prepare_many(
        self,
        items: Iterable[Mapping[str, Any]],
        model: str | None,
        tenant: str | None,
        chunk: int,
    ) -> list[tuple[Request, ModelResponse, dict[str, Any] | None]]:
        if isinstance(chunk, bool) or not isinstance(chunk, int) or chunk < 1:
            raise InvalidRequest("chunk", f"expected an int >= 1, got {chunk!r}")
        prepared = []
        for i, item in enumerate(items):
            try:
                if not isinstance(item, Mapping):
                    raise InvalidRequestType("", f"expected a mapping, got {type(item).__name__}")
                params = dict(item)
                prompt, messages = params.pop("prompt", None), params.pop("messages", None)
                response = params.pop("response", None)
                item_model = params.pop("model", model)
                item_tenant = params.pop("tenant", tenant)
                cache = params.pop("cache", None)
                meta = params.pop("metadata", None)
                prepared.append(
                    self._prepare_store(
                        prompt, response, item_model, messages, item_tenant, cache, params, meta
                    )
                )
            except InvalidRequest as exc:
                name = f"items[{i}].{exc.field}" if exc.field else f"items[{i}]"
                raise type(exc)(name, exc.problem) from None
        return prepared

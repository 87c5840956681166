"""Cached embedding calls: ``SemanticCache.embedding`` / ``aembedding`` (exact tier only).

An embedding is a pure function of model, input and parameters, so an exact repeat may
always be served; a paraphrase never (its vectors are different by definition). Entries live
in the same memory tier and store as answers, partitioned by tenant and namespace, with the
same TTL, ``s-maxage``, ``no-cache`` / ``no-store`` controls, purge fence and stats, under keys
from :func:`semcache.core.fingerprint.embedding_key` (their own version prefix, so they can never
be mistaken for a completion's answer). Not coalesced: concurrent identical embedding calls
each go upstream until the first answer is stored.
"""

from __future__ import annotations

import pickle
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast

from litellm import EmbeddingResponse

from semcache.core.answer import Answer, decode, encode, response_cost, total_tokens
from semcache.core.fingerprint import embedding_key
from semcache.core.policy import CacheControl, validate_tenant
from semcache.pipeline.base import Found
from semcache.pipeline.semantic_tier import EXACT_ONLY_SCOPE
from semcache.stats import Tier
from semcache.stores.base import NEVER_EXPIRES, Entry

if TYPE_CHECKING:
    from semcache.compose import Assembly
    from semcache.facade.delivery import Delivery
    from semcache.runtime.loop import LoopThread


def embedding_answer(entry: Entry) -> Answer:
    """A stored embedding made ready to serve (each caller unpickles its own copy)."""
    response, cost = decode(entry.response)
    prototype = pickle.dumps(EmbeddingResponse(**response), protocol=pickle.HIGHEST_PROTOCOL)
    return Answer(entry, prototype, cost, total_tokens(response))


class EmbeddingAPI:
    """``embedding`` / ``aembedding``; mixed into ``SemanticCache``."""

    _parts: Assembly
    _loop: LoopThread
    _delivery: Delivery

    def embedding(self, **kwargs: Any) -> EmbeddingResponse:
        """``litellm.embedding`` through the exact tier (``tenant=`` and ``cache=`` as in
        ``completion``; everything else goes to LiteLLM unchanged)."""
        params, tenant, control, key, model = self._prepare_embedding(kwargs)
        return self._loop.run(self._embed(params, tenant, control, key, model))

    async def aembedding(self, **kwargs: Any) -> EmbeddingResponse:
        """``embedding`` for async callers."""
        params, tenant, control, key, model = self._prepare_embedding(kwargs)
        return await self._loop.arun(self._embed(params, tenant, control, key, model))

    def _prepare_embedding(
        self, kwargs: Mapping[str, Any]
    ) -> tuple[dict[str, Any], str, CacheControl, str, str]:
        params = dict(kwargs)
        tenant = validate_tenant(params.pop("tenant", None))
        control = CacheControl.parse(params.pop("cache", None))
        key, model = embedding_key(params, tenant=tenant, namespace=control.namespace)
        return params, tenant, control, key, model

    async def _embed(
        self, params: dict[str, Any], tenant: str, control: CacheControl, key: str, model: str
    ) -> EmbeddingResponse:
        parts = self._parts
        if not control.no_cache:
            found = await self._lookup(key, tenant, control)
            if found is not None:  # deliver() unpickles the stored EmbeddingResponse
                return cast(EmbeddingResponse, self._delivery.deliver(found))
        token = parts.writer.fence.begin()  # before the call: a purge during it wins
        import litellm

        response = await litellm.aembedding(**params)
        parts.stats.count("upstream_calls")
        now = parts.clock()
        ttl = control.ttl if control.ttl is not None else parts.upstream_call.default_ttl_s
        entry = Entry(
            key=key,
            tenant=tenant,
            namespace=control.namespace,
            model=model,
            scope=EXACT_ONLY_SCOPE,
            response=encode(response, response_cost(response)),
            created_at=now,
            expires_at=NEVER_EXPIRES if ttl is None else now + ttl,
            embedder="",
        )
        answer = embedding_answer(entry)
        if not control.no_store and (control.ttl is None or control.ttl > 0):
            await parts.backend.ready()
            parts.writer.submit(answer, prompt=None, vector=None, token=token)
        found = Found(answer, Tier.MISS, response=response)
        return cast(EmbeddingResponse, self._delivery.deliver(found))

    async def _lookup(self, key: str, tenant: str, control: CacheControl) -> Found | None:
        parts = self._parts
        answer = parts.memory.get(key)
        if answer is None:
            tier = parts.backend.available()
            if tier is None:
                return None
            token = parts.writer.fence.begin()  # a purge during the read must not be undone
            entry = await parts.failopen.call(
                "store_retrieve",
                lambda: tier.retrieve(
                    key,
                    tenant=tenant,
                    namespace=control.namespace,
                    scope=EXACT_ONLY_SCOPE,
                    now=parts.clock(),
                ),
                None,
            )
            if entry is None:
                return None
            answer = embedding_answer(entry)
            if parts.writer.fence.admits(entry, token):
                parts.memory.put(answer)
        if not control.accepts(answer.entry.created_at, parts.clock()):
            return None
        return Found(answer, Tier.EXACT)

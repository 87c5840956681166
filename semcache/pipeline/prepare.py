"""The policy step before any stage: validate a call and decide what the tiers may do with it.

Runs in the caller's thread, before any I/O, so a bad request raises at once: nothing is
looked up, stored or sent upstream. The caller's mapping is copied, never mutated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from semcache.core.fingerprint import request_keys
from semcache.core.policy import CacheControl, decide, validate_sampling, validate_tenant
from semcache.pipeline.base import Request


class Prepare:
    """``Prepare(max_shared_temperature)(kwargs)`` is the :class:`Request` for one call;
    ``protocol`` names the wire protocol a non-chat request was asked in (part of its keys).
    ``tools_semantic``: a request offering tools takes part in the semantic tier (see
    :func:`semcache.core.policy.decide`); otherwise it is exact-only."""

    def __init__(self, *, max_shared_temperature: float, tools_semantic: bool = False) -> None:
        self._max_shared_temperature = max_shared_temperature
        self._tools_semantic = tools_semantic

    def __call__(self, kwargs: Mapping[str, Any], *, protocol: str | None = None) -> Request:
        params = dict(kwargs)
        tenant = validate_tenant(params.pop("tenant", None))
        control = CacheControl.parse(params.pop("cache", None))
        validate_sampling(params)
        keys = request_keys(params, tenant=tenant, namespace=control.namespace, protocol=protocol)
        decision = decide(
            params, control, self._max_shared_temperature, tools_semantic=self._tools_semantic
        )
        return Request(params, tenant, control, keys, decision, bool(params.get("stream")))

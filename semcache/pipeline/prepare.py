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
    """``Prepare(max_shared_temperature)(kwargs)`` is the :class:`Request` for one call."""

    def __init__(self, *, max_shared_temperature: float) -> None:
        self._max_shared_temperature = max_shared_temperature

    def __call__(self, kwargs: Mapping[str, Any]) -> Request:
        params = dict(kwargs)
        tenant = validate_tenant(params.pop("tenant", None))
        control = CacheControl.parse(params.pop("cache", None))
        validate_sampling(params)
        keys = request_keys(params, tenant=tenant, namespace=control.namespace)
        decision = decide(params, control, self._max_shared_temperature)
        return Request(params, tenant, control, keys, decision, bool(params.get("stream")))

"""Prompt compression before the upstream call: fewer input tokens, same request key.

Runs after every lookup missed, so the cache key stays the caller's original request (a repeat
still hits) while the upstream call gets the compressed messages. A compressor that fails or
refuses leaves the original prompt; compression never fails the caller's request.
"""

from __future__ import annotations

from dataclasses import replace

from semcache.compress.accounting import CompressionLedger
from semcache.compress.base import Compressor
from semcache.compress.settings import CompressionSettings, Mode, build_compressor
from semcache.errors import ConfigError
from semcache.pipeline.base import Found, Next, Request
from semcache.runtime.failopen import FailOpen


class CompressStage:
    """Compress the upstream call's messages under the request's mode; count what it saved."""

    def __init__(
        self,
        settings: CompressionSettings,
        ledger: CompressionLedger,
        failopen: FailOpen,
    ) -> None:
        self._settings = settings
        self._ledger = ledger
        self._failopen = failopen
        self._compressors: dict[Mode, Compressor | None] = {}

    def _compressor(self, mode: Mode) -> Compressor | None:
        if mode not in self._compressors:
            try:
                self._compressors[mode] = build_compressor(self._settings, mode)
            except ConfigError as exc:  # e.g. "model" asked for with no rewrite model set
                self._failopen.record("compression_setup", exc)
                return None
        return self._compressors[mode]

    async def __call__(self, request: Request, call_next: Next) -> Found:
        mode = self._settings.mode_for(request.control.namespace, request.control.compress)
        compressor = self._compressor(mode) if mode != "off" else None
        messages = request.params.get("messages")
        if compressor is None or not isinstance(messages, list):
            return await call_next(request)
        model = str(request.params.get("model"))
        result = await self._failopen.call(
            "compression",
            lambda: compressor.compress(messages, model=model),
            None,
            timeout_s=self._settings.timeout_s,
        )
        if result is None:
            return await call_next(request)
        saved_usd = self._ledger.record(result, model=model)
        if not result.used:
            return await call_next(request)
        params = {**request.params, "messages": list(result.messages)}
        found = await call_next(replace(request, params=params))
        return replace(
            found,
            compression_saved_tokens=result.saved_tokens,
            compression_saved_usd=saved_usd,
        )

"""The upstream call of a miss, sent for the provider's prompt cache; what that cache served.

Runs last before the upstream call (after compression, so the mark lands on what is sent):
the request keeps its keys and the caller's parameters, only the upstream request gets the
mark (see :mod:`semcache.core.prompt_cache`). The input tokens the provider reports its
prompt cache served on this request's own call are counted apart from the cache's own hits,
with what they saved (the model's input price less its cached-input price); a replayed or
coalesced answer never carries them.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from semcache.core.prompt_cache import PromptCacheMarks
from semcache.pipeline.base import Found, Next, Request


class PromptCacheStage:
    """Mark the upstream request (when ``marks`` is set); count the provider's cached tokens."""

    def __init__(self, marks: PromptCacheMarks | None) -> None:
        self._marks = marks

    async def __call__(self, request: Request, call_next: Next) -> Found:
        if self._marks is not None:
            marked = self._marks.mark(
                request.params,
                tenant=request.tenant,
                namespace=request.control.namespace,
                model=request.keys.model,
            )
            if marked is not None:
                request = replace(request, params=marked)
        found = await call_next(request)
        tokens = provider_cached_tokens(found.response)
        if not tokens:
            return found
        return replace(
            found,
            provider_cached_tokens=tokens,
            provider_cached_usd=cached_saving_usd(request.keys.model, tokens),
        )


def provider_cached_tokens(response: Any) -> int:
    """Input tokens the provider says its prompt cache served (LiteLLM reports Anthropic's
    ``cache_read_input_tokens`` and OpenAI's ``cached_tokens`` in the same field); 0 when none."""
    details = getattr(getattr(response, "usage", None), "prompt_tokens_details", None)
    tokens = getattr(details, "cached_tokens", None)
    return tokens if isinstance(tokens, int) and tokens > 0 else 0


def cached_saving_usd(model: str, tokens: int) -> float:
    """What ``tokens`` cached input tokens saved on ``model`` per LiteLLM's price map: the
    input price less the cached-input price; 0.0 when the map has no price for either."""
    import litellm

    try:
        info = litellm.get_model_info(model)
    except Exception:  # LiteLLM raises a bare Exception for a model it does not know
        return 0.0
    full = info.get("input_cost_per_token")
    cached = info.get("cache_read_input_token_cost")
    if not isinstance(full, (int, float)) or not isinstance(cached, (int, float)):
        return 0.0
    return max(0.0, float(full) - float(cached)) * tokens

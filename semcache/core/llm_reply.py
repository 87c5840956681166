"""Reading an LLM's reply when semcache asks it a yes/no question, and pricing any reply.

Shared by shadow verification's :class:`~semcache.tuning.compare.LLMJudge` and the hit
scorer :class:`~semcache.scoring.judge.LLMJudgeScorer`. :func:`price` is a USD figure when
LiteLLM's price map knows the model and None when it does not, never a silent zero.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any


def yes_no(text: str | None) -> bool | None:
    """True for a reply starting with "yes", False for "no" (any case, after whitespace and
    leading punctuation such as quotes or ``**``), None for anything else (undecided)."""
    word = (text or "").strip().lstrip("\"'*`_ ").lower()
    if word.startswith("yes"):
        return True
    if word.startswith("no"):
        return False
    return None


def reply_text(response: Any) -> str | None:
    """The first choice's message text (None when there is none)."""
    choices = getattr(response, "choices", None) or []
    message = getattr(choices[0], "message", None) if choices else None
    content = getattr(message, "content", None)
    return content if isinstance(content, str) else None


def token_usage(response: Any) -> tuple[int, int]:
    """(prompt tokens, completion tokens) the provider reported; 0 where it reported none."""
    usage = getattr(response, "usage", None)
    return (
        int(getattr(usage, "prompt_tokens", 0) or 0),
        int(getattr(usage, "completion_tokens", 0) or 0),
    )


def price(response: Any) -> float | None:
    """What ``response`` cost in USD per LiteLLM's price map; None when it has no price.

    The cost LiteLLM already computed (``_hidden_params["response_cost"]``) is used as is, so an
    unpriced model is not looked up again; only a rebuilt response is priced here.
    """
    hidden = getattr(response, "_hidden_params", None) or {}
    if "response_cost" in hidden:
        cost = hidden["response_cost"]
        return float(cost) if isinstance(cost, (int, float)) else None
    model = getattr(response, "model", None)
    if model in _UNPRICED:
        return None
    from litellm import completion_cost

    try:
        with quiet_litellm():
            return float(completion_cost(completion_response=response))
    except Exception:  # LiteLLM raises bare Exception (and others) for an unmapped model
        if isinstance(model, str) and len(_UNPRICED) < _UNPRICED_MAX:
            _UNPRICED.add(model)
        return None


_quiet_lock = threading.Lock()
_quiet_depth = 0
_quiet_saved = False


@contextmanager
def quiet_litellm() -> Iterator[None]:
    """LiteLLM's own stdout banner ("Provider List: ...", printed around each failed provider
    lookup) off while semcache merely *probes* a model name (its price, its provider): a
    self-hosted model's name is no error of the caller's. Re-entrant across threads; the
    caller's own ``litellm.suppress_debug_info`` is restored when the last probe ends."""
    global _quiet_depth, _quiet_saved
    import litellm

    with _quiet_lock:
        if _quiet_depth == 0:
            _quiet_saved = litellm.suppress_debug_info
            litellm.suppress_debug_info = True
        _quiet_depth += 1
    try:
        yield
    finally:
        with _quiet_lock:
            _quiet_depth -= 1
            if _quiet_depth == 0:
                litellm.suppress_debug_info = _quiet_saved


#: Model names ``completion_cost`` found no price for. LiteLLM prints three "Provider List"
#: lines on stdout every time it cannot route a name (a self-hosted model, a test double),
#: so a streamed answer of such a model was printing them on every call; asked once, the
#: answer stays None. Bounded, since model names come from responses.
_UNPRICED: set[str] = set()
_UNPRICED_MAX = 1024

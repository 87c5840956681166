"""Wire protocols besides chat completions: OpenAI Responses and Anthropic Messages.

Each protocol is an adapter at the edge of the one request path. Its request is checked
(a bad field raises :class:`semcache.errors.InvalidRequest` naming it, before any I/O),
translated by LiteLLM's own translators into the chat request ``completion`` takes, and
prepared with the protocol's name in its keys (an answer replays only in the protocol it was
asked in); the same lookup, coalescing, merge and write path answers it; the answer is
mapped back into the protocol's response or event stream. Which request fields enter the
key, and why, is documented per field in ``docs/protocols.md``.
"""

from __future__ import annotations

from semcache.protocols.base import Protocol, Translated
from semcache.protocols.messages import MESSAGES
from semcache.protocols.responses import RESPONSES

__all__ = ["MESSAGES", "RESPONSES", "Protocol", "Translated"]

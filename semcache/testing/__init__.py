"""Public test doubles for semcache's plug points, like httpx's ``MockTransport``.

``FakeOpenAIServer`` is a loopback OpenAI-compatible HTTP server for end-to-end tests through
LiteLLM's real client and the proxy; ``FakeAnthropicServer`` the same for Anthropic Messages.
In-process doubles for the upstream, embedder and store plug points live beside them, so
tests need no network and touch no private attribute.
"""

from __future__ import annotations

from semcache.testing._anthropic_server import FakeAnthropicServer, echo_messages
from semcache.testing._embedder import FakeEmbedder
from semcache.testing._openai_server import (
    FakeOpenAIServer,
    Responder,
    count_tokens,
    echo_responder,
    hash_embedding,
)
from semcache.testing._redis_server import RedisCluster, RedisServer
from semcache.testing._store import InMemoryStore
from semcache.testing._upstream import FakeUpstream, echo

__all__ = [
    "FakeAnthropicServer",
    "FakeEmbedder",
    "FakeOpenAIServer",
    "FakeUpstream",
    "InMemoryStore",
    "RedisCluster",
    "RedisServer",
    "Responder",
    "count_tokens",
    "echo",
    "echo_messages",
    "echo_responder",
    "hash_embedding",
]

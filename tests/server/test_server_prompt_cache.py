"""Provider prompt caching through ``semcache serve``, with the official clients: one document,
twenty questions; the upstream requests carry the breakpoint / key at the shared prefix, and
what the provider's prompt cache served is in the saved-cost metrics (apart from hits)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from protocol_harness import TENANT_KEYS, anthropic_client, openai_client
from proxy_harness import ENVIRON, LiveServer

from semcache.core.prompt_cache import partition_key
from semcache.server.app import create_app
from semcache.server.config import parse_config
from semcache.testing import FakeAnthropicServer, FakeOpenAIServer, count_tokens

DOC = " ".join(
    f"Clause {i}: the tenant keeps the premises in good repair and pays the rent monthly."
    for i in range(134)
)
QUESTIONS = [f"What does clause {i} of the lease say about repairs?" for i in range(20)]
CLAUDE = "anthropic/claude-sonnet-4-5"  # priced in LiteLLM's map, cached input included


@pytest.fixture
def claude() -> Iterator[FakeAnthropicServer]:
    with FakeAnthropicServer() as server:
        yield server


@pytest.fixture
def serve(upstream: FakeOpenAIServer, claude: FakeAnthropicServer) -> Iterator[Callable[..., Any]]:
    """``serve(**cache_settings)`` → the base URL of a proxy with 'fast' (OpenAI) and
    'claude' (Anthropic), each on its fake."""
    from semcache.cache import SemanticCache

    started: list[tuple[LiveServer, SemanticCache]] = []

    def start(**settings: Any) -> str:
        route = {"api_key": "os.environ/UPSTREAM_KEY", "max_retries": 0}
        config = parse_config(
            {
                "model_list": [
                    {
                        "model_name": "fast",
                        "litellm_params": {
                            "model": "openai/gpt-4o-mini",
                            "api_base": upstream.api_base,
                            **route,
                        },
                    },
                    {
                        "model_name": "claude",
                        "litellm_params": {"model": CLAUDE, "api_base": claude.api_base, **route},
                    },
                ],
                "clients": [{"key": k, "tenant": t} for t, k in TENANT_KEYS.items()],
                "server": {"admin_key": "os.environ/ADMIN_KEY", "graceful_shutdown_s": 5},
                "cache": {"store": {"backend": "none"}, **settings},
            }
        )
        cache = SemanticCache(config.cache)
        server = LiveServer(create_app(config, cache, environ=ENVIRON)).start()
        started.append((server, cache))
        return server.base_url

    yield start
    for server, cache in started:
        server.stop()
        cache.close()


def metric(base_url: str, name: str) -> dict[str, float]:
    """The samples of counter ``name`` by tenant."""
    text = httpx.get(f"{base_url}/metrics", timeout=10).text
    return {
        sample.labels.get("tenant", ""): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == f"{name}_total"
    }


def _breakpoints(body: dict[str, Any]) -> list[str]:
    blocks = list(body.get("system") or [])
    for message in body["messages"]:
        blocks += message["content"] if isinstance(message["content"], list) else []
    return [b.get("text", "") for b in blocks if b.get("cache_control")]


def test_messages_twenty_questions_after_one_document(
    serve: Callable[..., str], claude: FakeAnthropicServer
) -> None:
    base = serve()
    client = anthropic_client(base)

    def ask(question: str, **kwargs: Any) -> Any:
        messages = [{"role": "user", "content": question}]
        return client.messages.create(
            model="claude", max_tokens=64, system=DOC, messages=messages, **kwargs
        )

    replies = [ask(q) for q in QUESTIONS[:19]]
    with client.messages.stream(
        model="claude",
        max_tokens=64,
        system=DOC,
        messages=[{"role": "user", "content": QUESTIONS[19]}],
    ) as stream:
        last = stream.get_final_message()
    replies.append(last)
    assert claude.messages_calls == 20
    assert _breakpoints(claude.requests[0]) == []  # nothing shared yet
    assert all(_breakpoints(body) == [DOC] for body in claude.requests[1:])
    read = [m.usage.cache_read_input_tokens or 0 for m in replies]
    assert read[:2] == [0, 0] and all(r == read[2] >= count_tokens(DOC) for r in read[2:])
    assert metric(base, "semcache_provider_cached_tokens") == {"team-a": sum(read)}
    saved = metric(base, "semcache_provider_cache_saved_cost_usd")["team-a"]
    assert saved == pytest.approx(sum(read) * (3e-6 - 0.3e-6))  # input less cached input
    assert metric(base, "semcache_saved_cost_usd").get("team-a", 0.0) == 0.0  # no hits yet
    # the key is the caller's request: a repeat is an exact hit, claiming no cached tokens
    raw = client.messages.with_raw_response.create(
        model="claude",
        max_tokens=64,
        system=DOC,
        messages=[{"role": "user", "content": QUESTIONS[3]}],
    )
    again = raw.parse()
    assert raw.headers["x-semcache-tier"] == "exact" and claude.messages_calls == 20
    assert again.content == replies[3].content and not again.usage.cache_read_input_tokens
    assert metric(base, "semcache_provider_cached_tokens") == {"team-a": sum(read)}


def test_responses_carry_one_key_per_tenant(
    serve: Callable[..., str], upstream: FakeOpenAIServer
) -> None:
    base = serve()
    reads: dict[str, list[int]] = {}
    for tenant in ("team-a", "team-b"):
        client = openai_client(base, tenant)
        answers = [
            client.responses.create(model="fast", instructions=DOC, input=q) for q in QUESTIONS
        ]
        reads[tenant] = [r.usage.input_tokens_details.cached_tokens for r in answers]
    keys = [body.get("prompt_cache_key") for body in upstream.requests]
    a, b = (partition_key(t, "default", "openai/gpt-4o-mini") for t in ("team-a", "team-b"))
    assert keys == [a] * 20 + [b] * 20 and a != b
    for tenant in ("team-a", "team-b"):  # each tenant's first request reads no one's prefix
        assert reads[tenant][0] == 0 and all(r >= count_tokens(DOC) for r in reads[tenant][1:])
    assert metric(base, "semcache_provider_cached_tokens") == {
        tenant: float(sum(reads[tenant])) for tenant in reads
    }
    assert metric(base, "semcache_provider_cache_saved_cost_usd")["team-b"] > 0.0


def test_the_setting_off_sends_requests_as_asked(
    serve: Callable[..., str], upstream: FakeOpenAIServer, claude: FakeAnthropicServer
) -> None:
    base = serve(prompt_cache={"enabled": False})
    anthropic = anthropic_client(base)
    responses = openai_client(base)
    for question in QUESTIONS[:3]:
        messages = [{"role": "user", "content": question}]
        anthropic.messages.create(model="claude", max_tokens=64, system=DOC, messages=messages)
        responses.responses.create(model="fast", instructions=DOC, input=question)
    assert all(_breakpoints(body) == [] for body in claude.requests)
    assert all("prompt_cache_key" not in body for body in upstream.requests)
    assert metric(base, "semcache_provider_cached_tokens") == {}

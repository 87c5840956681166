"""Helpers of the Responses and Messages proxy tests: a proxy with one OpenAI model ('fast')
and one Anthropic model ('claude'), each on its loopback fake, and the official clients."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
from proxy_harness import ADMIN_KEY, UPSTREAM_KEY

from semcache.server.config import ProxyConfig, parse_config

TENANT_KEYS = {"team-a": "key-a", "team-b": "key-b", "team-c": "key-c"}
ENVIRON = {"UPSTREAM_KEY": UPSTREAM_KEY, "ADMIN_KEY": ADMIN_KEY}
CLAUDE = "anthropic/claude-3-5-haiku-latest"


def protocol_config(openai_base: str, anthropic_base: str, **cache: Any) -> ProxyConfig:
    route = {"api_key": "os.environ/UPSTREAM_KEY", "max_retries": 0}
    return parse_config(
        {
            "model_list": [
                {
                    "model_name": "fast",
                    "litellm_params": {
                        "model": "openai/gpt-4o-mini",
                        "api_base": openai_base,
                        **route,
                    },
                },
                {
                    "model_name": "claude",
                    "litellm_params": {"model": CLAUDE, "api_base": anthropic_base, **route},
                },
            ],
            "clients": [{"key": key, "tenant": tenant} for tenant, key in TENANT_KEYS.items()],
            "server": {"admin_key": "os.environ/ADMIN_KEY", "graceful_shutdown_s": 5},
            "cache": {"store": {"backend": "none"}, **cache},
        }
    )


def openai_client(base_url: str, tenant: str = "team-a") -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base_url}/v1", api_key=TENANT_KEYS[tenant], max_retries=0)


def anthropic_client(base_url: str, tenant: str = "team-a") -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=base_url, api_key=TENANT_KEYS[tenant], max_retries=0)


def ask_responses(client: openai.OpenAI, text: Any, **kwargs: Any) -> tuple[str, str, Any]:
    """``(tier, output text, response)`` of a Responses call (streamed when ``stream=True``)."""
    raw = client.responses.with_raw_response.create(model="fast", input=text, **kwargs)
    tier = raw.headers["x-semcache-tier"]
    if not kwargs.get("stream"):
        response = raw.parse()
        return tier, response.output_text, response
    events = list(raw.parse())
    completed = events[-1]
    assert completed.type == "response.completed", events[-1]
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == completed.response.output_text
    streamed = [e.item.id for e in events if e.type == "response.output_item.done"]
    assert streamed == [item.id for item in completed.response.output]
    return tier, deltas, completed.response


def ask_messages(client: anthropic.Anthropic, text: Any, **kwargs: Any) -> tuple[str, str, Any]:
    """``(tier, text, message)`` of a Messages call (streamed when ``stream=True``)."""
    messages = [{"role": "user", "content": text}] if isinstance(text, str) else text
    kwargs.setdefault("max_tokens", 200)
    raw = client.messages.with_raw_response.create(model="claude", messages=messages, **kwargs)
    tier = raw.headers["x-semcache-tier"]
    if not kwargs.get("stream"):
        message = raw.parse()
        return tier, "".join(b.text for b in message.content if b.type == "text"), message
    events = list(raw.parse())
    types = [e.type for e in events]
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"], types
    text_out = "".join(
        e.delta.text
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    )
    return tier, text_out, events

"""semcache's own proxy: the client key alone decides the tenant; no body field or header can."""

from __future__ import annotations

from collections.abc import Callable

import openai
from proxy_harness import CLIENT_KEYS, Proxy

from semcache.testing import FakeOpenAIServer

QUESTION = [{"role": "user", "content": "What is the capital of France?"}]

CLAIMS: list[dict] = [
    {"extra_body": {"metadata": {"tenant": "team-b"}}},
    {"extra_body": {"cache": {"tenant": "team-b"}}},
    {"extra_body": {"tenant": "team-b"}},
    {"extra_body": {"user": "team-b"}},
    {"extra_headers": {"x-semcache-tenant": "team-b"}},
    {"extra_headers": {"x-tenant": "team-b", "x-litellm-tenant": "team-b"}},
    {"extra_headers": {"x-semcache-namespace": "team-b"}},
]


def test_no_body_field_or_header_reaches_another_tenants_entries(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    b = proxy.client(CLIENT_KEYS["team-b"])
    b.chat.completions.create(model="fast", messages=QUESTION)
    assert (
        b.chat.completions.with_raw_response.create(model="fast", messages=QUESTION).headers[
            "x-semcache-tier"
        ]
        == "exact"
    )
    a = proxy.client(CLIENT_KEYS["team-a"])
    served = refused = 0
    for claim in CLAIMS:
        headers = {"x-semcache-no-store": "true", **claim.get("extra_headers", {})}
        body = claim.get("extra_body", {})
        try:  # no-store: team-a's own misses leave nothing behind that a later claim could hit
            raw = a.chat.completions.with_raw_response.create(
                model="fast", messages=QUESTION, extra_headers=headers, extra_body=body
            )
        except openai.BadRequestError:
            refused += 1
            continue
        served += raw.headers["x-semcache-tier"] != "miss"
    assert served == 0
    assert refused >= 2  # a body "tenant" and a "cache.tenant" control are refused by name

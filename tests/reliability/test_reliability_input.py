"""Proxy input limits (issue 10, finding 4): each a 4xx naming the field, no upstream call.

The body-size limit is checked on a live server over a raw socket: the client announces a
50 MB body, sends a little of it and must get 413 at once (the proxy does not wait to read
the rest); a chunked body with no length is cut off the same way while it streams in.
"""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import uvicorn
from starlette.testclient import TestClient

from semcache import CacheSettings, SemanticCache
from semcache.errors import InvalidRequest
from semcache.server.app import create_app
from semcache.server.config import parse_config
from semcache.testing import FakeUpstream

KEY = "input-key"
AUTH = {"authorization": f"Bearer {KEY}"}
LIMIT = 64 * 1024


def _config(**server: Any):
    return parse_config(
        {
            "model_list": [
                {"model_name": "fast", "litellm_params": {"model": "openai/gpt-4o-mini"}}
            ],
            "clients": [{"key": KEY, "tenant": "t"}],
            "server": {"max_body_bytes": LIMIT, **server},
            "cache": {"store": {"backend": "none"}},
        }
    )


@pytest.fixture(scope="module")
def proxy() -> Iterator[tuple[TestClient, FakeUpstream, SemanticCache]]:
    upstream = FakeUpstream()
    cache = SemanticCache(CacheSettings(store={"backend": "none"}), upstream=upstream)
    with TestClient(create_app(_config(), cache, environ={})) as client:
        yield client, upstream, cache
    cache.close()


def _chat(**extra: Any) -> dict[str, Any]:
    return {"model": "fast", "messages": [{"role": "user", "content": "hello"}], **extra}


def _nested(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"a": value}
    return value


BAD = [
    (_chat(temperature=-5), "temperature"),
    (_chat(temperature=2.5), "temperature"),
    (_chat(top_p=1.5), "top_p"),
    (_chat(max_tokens=-1), "max_tokens"),
    (_chat(max_tokens=0), "max_tokens"),
    (_chat(max_completion_tokens=0), "max_completion_tokens"),
    (_chat(n=0), "n"),
    (_chat(presence_penalty=3), "presence_penalty"),
    (_chat(frequency_penalty=-2.5), "frequency_penalty"),
    (_chat(top_logprobs=21), "top_logprobs"),
    (_chat(logit_bias={"50256": 101}), "logit_bias.50256"),
    (_chat(stop=["a", "b", "c", "d", "e"]), "stop"),
    (_chat(seed=1.5), "seed"),
    (
        {"model": "fast", "messages": [{"role": "user", "content": ["not an object"]}]},
        "messages[0].content[0]",
    ),
    (
        {"model": "fast", "messages": [{"role": "user", "content": [{"type": "video"}]}]},
        "messages[0].content[0].type",
    ),
    (
        {"model": "fast", "messages": [{"role": "user", "content": [{"type": "text"}]}]},
        "messages[0].content[0].text",
    ),
    (
        {
            "model": "fast",
            "messages": [
                {"role": "user", "content": [{"type": "image_url", "image_url": {"url": 3}}]}
            ],
        },
        "messages[0].content[0].image_url.url",
    ),
    ({"model": "fast", "messages": [{"role": "wizard", "content": "hi"}]}, "messages[0].role"),
    (
        {"model": "fast", "messages": [{"role": "tool", "content": "hi"}]},
        "messages[0].tool_call_id",
    ),
    ({"model": "fast", "messages": []}, "messages"),
    (
        _chat(tools=[{"type": "function", "function": {"name": "f", "parameters": _nested(900)}}]),
        "tools[0].function.parameters",
    ),
    (_chat(cache={"ttl": -1}), "cache.ttl"),
]


@pytest.mark.parametrize(("body", "field"), BAD, ids=[field for _, field in BAD])
def test_bad_input_is_400_naming_the_field(proxy, body: dict[str, Any], field: str) -> None:
    client, upstream, cache = proxy
    before, stored = upstream.call_count, cache.stats().memory_entries
    response = client.post("/v1/chat/completions", json=body, headers=AUTH)
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"].startswith(field), response.json()
    assert upstream.call_count == before
    assert cache.stats().memory_entries == stored


def test_infinite_ttl_is_refused_by_the_library_too(proxy) -> None:
    _client, upstream, cache = proxy
    before = upstream.call_count
    for ttl in (float("inf"), float("nan")):
        with pytest.raises(InvalidRequest) as raised:
            cache.completion(**_chat(cache={"ttl": ttl}))
        assert raised.value.field == "cache.ttl"
    assert upstream.call_count == before


def test_json_nested_too_deep_is_400_not_a_recursion_error(proxy) -> None:
    client, _upstream, _ = proxy
    raw = json.dumps(_chat(metadata=_nested(100))).encode()
    response = client.post("/v1/chat/completions", content=raw, headers=AUTH)
    assert response.status_code == 400
    assert response.json()["error"]["param"].startswith("metadata")
    raw = b'{"model": "fast", "messages": [], "tools": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    assert client.post("/v1/chat/completions", content=raw, headers=AUTH).status_code == 400


def test_valid_content_parts_still_pass(proxy) -> None:
    client, _, _ = proxy
    parts = [
        {"type": "text", "text": "what is in this picture?"},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,AAAA", "detail": "low"}},
    ]
    body = {"model": "fast", "messages": [{"role": "user", "content": parts}], "temperature": 2}
    assert client.post("/v1/chat/completions", json=body, headers=AUTH).status_code == 200


# -- body size on a live server ------------------------------------------------------------
@pytest.fixture(scope="module")
def live() -> Iterator[tuple[int, FakeUpstream]]:
    upstream = FakeUpstream()
    cache = SemanticCache(CacheSettings(store={"backend": "none"}), upstream=upstream)
    server = uvicorn.Server(
        uvicorn.Config(
            create_app(_config(), cache, environ={}),
            host="127.0.0.1",
            port=0,
            log_config=None,
            access_log=False,
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    yield server.servers[0].sockets[0].getsockname()[1], upstream
    server.should_exit = True
    thread.join(timeout=10)
    cache.close()


def _status_of(sock: socket.socket) -> int:
    sock.settimeout(5)
    head = sock.recv(4096).decode("latin-1")
    return int(head.split(" ", 2)[1])


def _headers(port: int, extra: str) -> bytes:
    return (
        f"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: Bearer {KEY}\r\nContent-Type: application/json\r\n{extra}\r\n"
    ).encode()


def test_announced_oversize_body_is_413_before_it_is_sent(live) -> None:
    port, upstream = live
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_headers(port, "Content-Length: 50000000\r\n"))
        sock.sendall(b'{"model": "fast", "messages": [')  # 49.99 MB never follow
        assert _status_of(sock) == 413
    assert upstream.call_count == 0


def test_chunked_oversize_body_is_cut_off_while_streaming(live) -> None:
    port, upstream = live
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(_headers(port, "Transfer-Encoding: chunked\r\n"))
        chunk = b" " * 16384
        for _ in range(LIMIT // len(chunk) + 2):  # a little over the limit, then stop sending
            sock.sendall(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
        assert _status_of(sock) == 413
    assert upstream.call_count == 0


def test_metrics_key_and_tenant_labels() -> None:
    upstream = FakeUpstream()
    config = _config(metrics_key="os.environ/METRICS_KEY", metrics_tenant_labels=False)
    cache = SemanticCache(CacheSettings(store={"backend": "none"}), upstream=upstream)
    app = create_app(config, cache, environ={"METRICS_KEY": "m-key"})
    with TestClient(app) as client:
        assert client.post("/v1/chat/completions", json=_chat(), headers=AUTH).status_code == 200
        assert client.get("/metrics").status_code == 401
        assert client.get("/metrics", headers=AUTH).status_code == 401  # a client key is not it
        text = client.get("/metrics", headers={"authorization": "Bearer m-key"}).text
    cache.close()
    assert 'semcache_requests_total{tier="miss"} 1.0' in text
    assert "tenant=" not in text

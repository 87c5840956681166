"""OpenTelemetry through the proxy: a request's cache spans join the caller's trace from
its ``traceparent`` header; FastAPI's own HTTP spans only with ``server.http_telemetry``."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from semcache.cache import SemanticCache
from semcache.server.app import create_app
from semcache.server.config import ProxyConfig
from semcache.testing import FakeOpenAIServer
from tests.server.proxy_harness import CLIENT_KEYS, ENVIRON, LiveServer, proxy_config

TRACE_ID = 0x4BF92F3577B34DA6A3CE929D0E0E4736
PARENT_ID = 0x00F067AA0BA902B7
TRACEPARENT = f"00-{TRACE_ID:032x}-{PARENT_ID:016x}-01"
BODY = {"model": "fast", "messages": [{"role": "user", "content": "How tall is Everest?"}]}


@pytest.fixture
def serve(upstream: FakeOpenAIServer) -> Iterator[Any]:
    started: list[tuple[LiveServer, SemanticCache]] = []

    def start(http_telemetry: bool = False, otel: bool = True) -> str:
        config = proxy_config(upstream.api_base, telemetry={"otel": otel})
        server = config.server.model_copy(update={"http_telemetry": http_telemetry})
        config = ProxyConfig.model_validate({**config.model_dump(), "server": server})
        cache = SemanticCache(config.cache)
        live = LiveServer(create_app(config, cache, environ=ENVIRON)).start()
        started.append((live, cache))
        return live.base_url

    yield start
    for live, cache in started:
        live.stop()
        cache.close()


def _chat(base: str, headers: dict[str, str] | None = None) -> httpx.Response:
    auth = {"authorization": f"Bearer {CLIENT_KEYS['team-a']}", **(headers or {})}
    response = httpx.post(f"{base}/v1/chat/completions", json=BODY, headers=auth, timeout=30)
    assert response.status_code == 200, response.text
    return response


def _settled(otel: Any) -> None:
    """Until no span has finished for 0.3 s: the last request's own (FastAPI's send spans,
    the miss's background write) may end after its response came back."""
    seen, quiet_since = -1, time.monotonic()
    deadline = quiet_since + 30
    while time.monotonic() - quiet_since < 0.3:
        assert time.monotonic() < deadline, "spans kept finishing"
        count = len(otel.spans.get_finished_spans())
        if count != seen:
            seen, quiet_since = count, time.monotonic()
        time.sleep(0.02)


def test_a_traceparent_header_joins_the_callers_trace(otel, serve) -> None:
    base = serve()
    _chat(base)  # the miss, stored
    _settled(otel)
    otel.spans.clear()
    hit = _chat(base, {"traceparent": TRACEPARENT})
    assert hit.headers["x-semcache-tier"] == "exact"
    [span] = otel.spans.get_finished_spans()  # no FastAPI span: http_telemetry is off
    assert span.name == "semcache.completion"
    assert span.context.trace_id == TRACE_ID
    assert span.parent is not None and span.parent.span_id == PARENT_ID
    assert span.attributes["semcache.tier"] == "exact"
    otel.spans.clear()
    _chat(base)  # without the header: a trace of its own
    [alone] = otel.spans.get_finished_spans()
    assert alone.parent is None and alone.context.trace_id != TRACE_ID


def test_http_telemetry_adds_fastapis_server_span_as_the_root(otel, serve) -> None:
    base = serve(http_telemetry=True)
    _chat(base)
    _settled(otel)  # none of the first request's spans is counted as the second's
    otel.spans.clear()
    _chat(base, {"traceparent": TRACEPARENT})
    spans = otel.spans.get_finished_spans()
    fastapi = [s for s in spans if s.instrumentation_scope.name == "fastapi"]
    [ours] = [s for s in spans if s.name == "semcache.completion"]
    assert fastapi and all(s.context.trace_id == TRACE_ID for s in spans)
    ids = {s.context.span_id for s in fastapi}
    assert ours.parent is not None and ours.parent.span_id in ids


def test_telemetry_off_sends_no_span_though_the_process_has_a_provider(otel, serve) -> None:
    base = serve(otel=False)
    _chat(base)
    _chat(base, {"traceparent": TRACEPARENT})
    assert otel.spans.get_finished_spans() == ()

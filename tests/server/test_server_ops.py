"""Metrics, admin API, health, request log, secrecy of provider keys, shutdown and CLI."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import httpx
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families
from proxy_harness import (
    ADMIN_KEY,
    CLIENT_KEYS,
    ENVIRON,
    UPSTREAM_KEY,
    LiveServer,
    Proxy,
    proxy_config,
    wait_until,
)

from semcache.server.app import create_app
from semcache.server.cli import serve_main
from semcache.testing import FakeOpenAIServer, InMemoryStore

QUESTION = [{"role": "user", "content": "How many legs does a spider have?"}]
OTHER = [{"role": "user", "content": "Name a prime number above 100."}]
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


class AcceptAll:
    name = "accept-all"

    def verify(self, query: str, candidate: str) -> bool:
        return True


def ask(client: openai.OpenAI, messages: list[dict], **kwargs: object):
    return client.chat.completions.with_raw_response.create(
        model="fast", messages=messages, **kwargs
    )


def metric_samples(base_url: str) -> dict[tuple, float]:
    response = httpx.get(f"{base_url}/metrics")
    assert response.status_code == 200
    samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


@pytest.fixture
def semantic_proxy(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer, minilm: object
) -> tuple[Proxy, InMemoryStore]:
    from semcache.cache import SemanticCache

    config = proxy_config(upstream.api_base, semantic={"threshold": 0.8})
    store = InMemoryStore()
    cache = SemanticCache(config.cache, embedder=minilm, store=store, verifier=AcceptAll())
    return start_proxy(cache=cache, config=config), store


# -- metrics --------------------------------------------------------------------------------
def test_metrics_count_what_the_test_did(
    start_proxy: Callable[..., Proxy], upstream: FakeOpenAIServer
) -> None:
    proxy = start_proxy()
    a, b = proxy.client(CLIENT_KEYS["team-a"]), proxy.client(CLIENT_KEYS["team-b"])
    ask(a, QUESTION)
    ask(a, QUESTION)
    ask(a, QUESTION)
    ask(b, QUESTION)
    with pytest.raises(openai.AuthenticationError):
        ask(proxy.client("bad"), QUESTION)
    with pytest.raises(openai.BadRequestError):
        ask(a, [{"role": "wizard", "content": "x"}])
    upstream.fail_next = [429]
    with pytest.raises(openai.RateLimitError):
        ask(a, OTHER)

    samples = metric_samples(proxy.base_url)
    requests = "semcache_requests_total"
    assert samples[(requests, (("tenant", "team-a"), ("tier", "miss")))] == 1
    assert samples[(requests, (("tenant", "team-a"), ("tier", "exact")))] == 2
    assert samples[(requests, (("tenant", "team-b"), ("tier", "miss")))] == 1
    assert samples[("semcache_upstream_calls_total", (("model", "fast"),))] == 2
    assert upstream.chat_calls == 3  # the two answered calls and the one that failed
    errors = "semcache_errors_total"
    assert samples[(errors, (("kind", "auth"), ("status", "401")))] == 1
    assert samples[(errors, (("kind", "invalid_request"), ("status", "400")))] == 1
    assert samples[(errors, (("kind", "upstream"), ("status", "429")))] == 1
    assert samples[("semcache_lookup_seconds_count", (("tier", "exact"),))] == 2
    assert samples[("semcache_request_duration_seconds_count", (("tier", "miss"),))] == 2
    assert samples[("semcache_saved_tokens_total", (("tenant", "team-a"),))] > 0


def test_metrics_of_semantic_tier(
    semantic_proxy: tuple[Proxy, InMemoryStore], upstream: FakeOpenAIServer
) -> None:
    proxy, store = semantic_proxy
    client = proxy.client()
    ask(client, [{"role": "user", "content": "What is the capital of France?"}])
    wait_until(lambda: store.count() == 1)
    ask(client, [{"role": "user", "content": "What's the capital city of France?"}])
    ask(client, [{"role": "user", "content": "How do I bake sourdough bread?"}])
    samples = metric_samples(proxy.base_url)
    assert samples[("semcache_semantic_hit_similarity_count", ())] == 1
    assert samples[("semcache_nearest_miss_similarity_count", ())] == 1
    assert 0.8 <= samples[("semcache_semantic_hit_similarity_sum", ())] <= 1.0
    wait_until(lambda: store.count() == 2)
    assert metric_samples(proxy.base_url)[("semcache_store_entries", ())] == 2


def test_a_merged_paraphrase_is_in_headers_and_metrics(
    semantic_proxy: tuple[Proxy, InMemoryStore], upstream: FakeOpenAIServer
) -> None:
    proxy, _ = semantic_proxy
    upstream.delay_s = 1.0
    tiers: dict[str, tuple[str, str | None]] = {}

    def one(content: str) -> None:
        raw = ask(proxy.client(), [{"role": "user", "content": content}])
        tiers[content] = (raw.headers["x-semcache-tier"], raw.headers.get("x-semcache-similarity"))

    first = threading.Thread(target=one, args=("What is the capital of France?",))
    first.start()
    time.sleep(0.4)  # the first call is in flight, its answer not stored
    one("What's the capital city of France?")
    first.join(timeout=30)
    assert tiers["What is the capital of France?"] == ("miss", None)
    tier, similarity = tiers["What's the capital city of France?"]
    assert tier == "merged" and similarity is not None and 0.8 <= float(similarity) <= 1.0
    assert upstream.chat_calls == 1
    samples = metric_samples(proxy.base_url)
    assert samples[("semcache_requests_total", (("tenant", "team-a"), ("tier", "merged")))] == 1


# -- admin ----------------------------------------------------------------------------------
def test_admin_purge_stats_and_entries(
    semantic_proxy: tuple[Proxy, InMemoryStore], upstream: FakeOpenAIServer
) -> None:
    proxy, store = semantic_proxy
    a, b = proxy.client(CLIENT_KEYS["team-a"]), proxy.client(CLIENT_KEYS["team-b"])
    ask(a, QUESTION)
    ask(b, QUESTION)
    wait_until(lambda: store.count() == 2)
    ask(a, QUESTION)
    url = proxy.base_url

    denied = httpx.post(
        f"{url}/admin/purge",
        json={"tenant": "team-a"},
        headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
    )
    assert denied.status_code == 401
    assert denied.json()["error"]["code"] == "invalid_api_key"
    no_filter = httpx.post(f"{url}/admin/purge", json={}, headers=ADMIN)
    assert no_filter.status_code == 400
    typo = httpx.post(f"{url}/admin/purge", json={"tennant": "x"}, headers=ADMIN)
    assert typo.status_code == 400
    assert typo.json()["error"]["param"] == "tennant"

    entries = httpx.get(f"{url}/admin/entries", params={"tenant": "team-a"}, headers=ADMIN)
    assert entries.status_code == 200
    [entry] = entries.json()["data"]
    assert entry["question"] == QUESTION[0]["content"]
    assert entry["hits"] == 1
    assert entry["tenant"] == "team-a"
    for limit in ("many", "0", "1001"):
        bad_limit = httpx.get(f"{url}/admin/entries", params={"limit": limit}, headers=ADMIN)
        assert bad_limit.status_code == 400
        assert bad_limit.json()["error"]["param"] == "limit"

    purged = httpx.post(f"{url}/admin/purge", json={"tenant": "team-a"}, headers=ADMIN)
    assert purged.status_code == 200
    assert purged.json()["deleted"] == 1
    assert ask(a, QUESTION).headers["x-semcache-tier"] == "miss"
    assert ask(b, QUESTION).headers["x-semcache-tier"] == "exact"
    by_model = httpx.post(f"{url}/admin/purge", json={"model": "fast"}, headers=ADMIN)
    assert by_model.json()["deleted"] >= 1

    stats = httpx.get(f"{url}/admin/stats", headers=ADMIN).json()
    assert stats["tiers"]["exact"] == 2
    assert stats["upstream_calls"] == upstream.chat_calls == 3


def test_admin_disabled_without_admin_key(upstream: FakeOpenAIServer) -> None:
    config = proxy_config(upstream.api_base).model_copy(
        update={
            "server": proxy_config(upstream.api_base).server.model_copy(update={"admin_key": None})
        }
    )
    server = LiveServer(create_app(config, environ=ENVIRON)).start()
    try:
        response = httpx.get(f"{server.base_url}/admin/stats", headers=ADMIN)
        assert response.status_code == 403
    finally:
        server.stop()


# -- health ---------------------------------------------------------------------------------
def test_health_and_readiness(start_proxy: Callable[..., Proxy]) -> None:
    proxy = start_proxy()
    assert httpx.get(f"{proxy.base_url}/healthz").json() == {"status": "ok"}
    ready = httpx.get(f"{proxy.base_url}/readyz")
    assert ready.status_code == 200
    assert ready.json() == {"ready": True, "status": "ok", "parts": {}, "recovered": {}}


# -- request log ----------------------------------------------------------------------------
def _request_lines(caplog: pytest.LogCaptureFixture) -> list[dict]:
    return [r.fields for r in caplog.records if r.name == "semcache.server.access"]  # type: ignore[attr-defined]


def test_one_log_line_per_request_without_content(
    start_proxy: Callable[..., Proxy], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="semcache")
    client = start_proxy().client()
    ask(client, QUESTION)
    streamed = ask(client, QUESTION, stream=True).parse()
    assert "".join(c.choices[0].delta.content or "" for c in streamed).endswith("have?")
    with pytest.raises(openai.AuthenticationError):
        ask(start_proxy().client("bad"), QUESTION)
    miss, hit, denied = _request_lines(caplog)
    assert (miss["tenant"], miss["tier"], miss["status"], miss["upstream_status"]) == (
        "team-a",
        "miss",
        200,
        200,
    )
    assert (hit["tier"], hit["stream"], hit["upstream_status"]) == ("exact", True, None)
    assert denied["status"] == 401
    assert denied["tenant"] is None
    assert all(line["latency_ms"] >= 0 for line in (miss, hit, denied))
    assert "spider" not in caplog.text


def test_log_content_setting_adds_messages(
    start_proxy: Callable[..., Proxy],
    upstream: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="semcache")
    config = proxy_config(upstream.api_base)
    config = config.model_copy(
        update={"server": config.server.model_copy(update={"log_content": True})}
    )
    ask(start_proxy(config=config).client(), QUESTION)
    [line] = _request_lines(caplog)
    assert line["messages"] == QUESTION
    assert "spider" in line["answer"]


def test_client_closing_a_stream_is_logged_as_499(
    start_proxy: Callable[..., Proxy],
    upstream: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="semcache")
    proxy = start_proxy()
    upstream.chunks, upstream.chunk_delay_s = 8, 0.1
    body = {"model": "fast", "messages": QUESTION, "stream": True}
    headers = {"authorization": f"Bearer {CLIENT_KEYS['team-a']}"}
    with httpx.stream(
        "POST", f"{proxy.base_url}/v1/chat/completions", json=body, headers=headers
    ) as response:
        next(response.iter_lines())
    wait_until(lambda: len(_request_lines(caplog)) == 1)
    [line] = _request_lines(caplog)
    assert (line["status"], line["tier"], line["error"]) == (499, "miss", "client_closed")


# -- secrecy of the provider key ------------------------------------------------------------
def test_provider_key_never_leaves_the_process(
    semantic_proxy: tuple[Proxy, InMemoryStore],
    upstream: FakeOpenAIServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG, logger="semcache")
    proxy, store = semantic_proxy
    client = proxy.client()
    seen: list[str] = []
    seen.append(ask(client, QUESTION).text)
    streamed = httpx.post(
        f"{proxy.base_url}/v1/chat/completions",
        json={"model": "fast", "messages": QUESTION, "stream": True},
        headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
    )
    assert streamed.text.endswith("data: [DONE]\n\n")
    seen.append(streamed.text)
    upstream.fail_next = [401]
    with pytest.raises(openai.AuthenticationError) as caught:
        ask(client, OTHER)
    seen.append(json.dumps(caught.value.body))
    wait_until(lambda: store.count() == 1)
    seen.append(httpx.get(f"{proxy.base_url}/metrics").text)
    seen.append(httpx.get(f"{proxy.base_url}/admin/stats", headers=ADMIN).text)
    seen.append(httpx.get(f"{proxy.base_url}/admin/entries", headers=ADMIN).text)
    seen.extend(json.dumps(entry.payload()) for entry in store.upserted)
    seen.append(caplog.text)
    seen.extend(json.dumps(getattr(r, "fields", {}), default=str) for r in caplog.records)
    assert upstream.headers[0]["authorization"] == f"Bearer {UPSTREAM_KEY}"  # it was used
    for text in seen:
        assert UPSTREAM_KEY not in text


# -- shutdown and CLI -----------------------------------------------------------------------
def test_shutdown_lets_in_flight_requests_finish_and_closes_owned_cache(
    upstream: FakeOpenAIServer,
) -> None:
    app = create_app(proxy_config(upstream.api_base), environ=ENVIRON)
    server = LiveServer(app).start()
    upstream.delay_s = 0.8
    results: list[int] = []

    def slow_request() -> None:
        response = httpx.post(
            f"{server.base_url}/v1/chat/completions",
            json={"model": "fast", "messages": QUESTION},
            headers={"authorization": f"Bearer {CLIENT_KEYS['team-a']}"},
            timeout=10,
        )
        results.append(response.status_code)

    thread = threading.Thread(target=slow_request)
    thread.start()
    wait_until(lambda: upstream.chat_calls == 1)
    server.stop()
    thread.join(timeout=10)
    assert results == [200]
    assert app.state.proxy.cache.closed


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_serve_main_rejects_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    path = tmp_path / "proxy.toml"
    path.write_text('[[model_list]]\nmodel_name = "m"\nlitellm_params.model = "x"\n')
    assert serve_main(["--config", str(path)]) == 2
    assert "clients" in capsys.readouterr().err


def serve_config(tmp_path: Path, upstream: FakeOpenAIServer, extra: str = "") -> Path:
    """A ``semcache serve`` config: model "fast" on ``upstream``, client "key-a" (team-a),
    no store; ``extra`` TOML tables are appended."""
    path = tmp_path / "proxy.toml"
    path.write_text(
        f"""
[[model_list]]
model_name = "fast"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{upstream.api_base}"
litellm_params.api_key = "os.environ/UPSTREAM_KEY"
litellm_params.max_retries = 0
[[clients]]
key = "key-a"
tenant = "team-a"
[cache.store]
backend = "none"
{extra}"""
    )
    return path


def test_serve_main_runs_until_sigterm(tmp_path: Path, upstream: FakeOpenAIServer) -> None:
    path = serve_config(tmp_path, upstream)
    port = _free_port()
    code = "import sys; from semcache.server.cli import serve_main as m; sys.exit(m(sys.argv[1:]))"
    process = subprocess.Popen(
        [sys.executable, "-c", code, "--port", str(port), "--config", str(path)],
        env={**os.environ, **ENVIRON},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/healthz").status_code == 200:
                    break
            except httpx.ConnectError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        client = openai.OpenAI(base_url=f"{base}/v1", api_key="key-a", max_retries=0)
        assert ask(client, QUESTION).headers["x-semcache-tier"] == "miss"
        client.close()
    finally:
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    # uvicorn re-raises the signal it caught once shutdown is complete
    assert process.returncode in (0, -signal.SIGTERM)
    lines = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    assert any(line["msg"] == "Application shutdown complete." for line in lines)
    requests = [line for line in lines if line.get("logger") == "semcache.server.access"]
    assert [(r["tenant"], r["tier"]) for r in requests] == [("team-a", "miss")]
    assert UPSTREAM_KEY not in stderr


@pytest.mark.parametrize("freeze", [True, False])
def test_serve_freezes_the_start_up_heap_unless_told_not_to(
    tmp_path: Path, upstream: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch, freeze: bool
) -> None:
    """A full collection of the start-up heap (~800k objects with LiteLLM) is a 0.4 s pause
    for every request in flight; serve freezes it unless ``server.gc_freeze`` is false."""
    import gc

    import uvicorn

    path = serve_config(
        tmp_path,
        upstream,
        f"[server]\ngc_freeze = {str(freeze).lower()}\n[cache.semantic]\nenabled = false\n",
    )
    for name, value in ENVIRON.items():
        monkeypatch.setenv(name, value)
    import semcache.server.access_log

    # serve's JSON logging would take the semcache logger away from caplog in later tests
    monkeypatch.setattr(semcache.server.access_log, "configure_json_logging", lambda: None)
    frozen_at_run: list[int] = []
    monkeypatch.setattr(
        uvicorn.Server, "run", lambda self: frozen_at_run.append(gc.get_freeze_count())
    )
    gc.unfreeze()
    try:
        assert serve_main(["--port", str(_free_port()), "--config", str(path)]) == 0
    finally:
        gc.unfreeze()
    assert len(frozen_at_run) == 1
    assert (frozen_at_run[0] > 100_000) is freeze


def test_every_response_names_the_worker_that_answered(start_proxy: Callable[..., Proxy]) -> None:
    proxy = start_proxy()
    me = str(os.getpid())  # the proxy runs in this process (each --workers child: its own)
    answered = ask(proxy.client(), QUESTION)
    assert answered.headers["x-semcache-worker"] == me
    streamed = ask(proxy.client(), QUESTION, stream=True)
    assert streamed.headers["x-semcache-worker"] == me
    for response in (
        httpx.get(f"{proxy.base_url}/readyz"),
        httpx.get(f"{proxy.base_url}/no-such-route"),
        httpx.post(f"{proxy.base_url}/v1/chat/completions", json={}),  # no key: 401
    ):
        assert response.headers.get_list("x-semcache-worker") == [me], response

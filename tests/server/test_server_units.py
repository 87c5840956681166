"""Request parsing, error mapping, metrics and JSON logging of the proxy (no HTTP)."""

from __future__ import annotations

import io
import json
import logging

import httpx
import litellm
import openai
import pytest
from prometheus_client.parser import text_string_to_metric_families

from semcache.errors import InvalidRequest, InvalidRequestType
from semcache.server.access_log import JsonFormatter, configure_json_logging, log_request
from semcache.server.http_errors import to_api_error
from semcache.server.metrics import ProxyMetrics
from semcache.server.request import (
    cache_controls,
    parse_chat_request,
    parse_completion_request,
    parse_embedding_request,
)
from semcache.stats import CacheInfo, CacheStats, Tier

MESSAGES = [{"role": "user", "content": "hi"}]


def _stats(store_entries: int | None) -> CacheStats:
    return CacheStats(
        requests=0,
        tiers={},
        upstream_calls=0,
        stored=0,
        verifier_rejections=0,
        errors={},
        saved_cost_usd=0.0,
        saved_tokens=0,
        store_entries=store_entries,
    )


def _samples(metrics: ProxyMetrics, stats: CacheStats | None = None) -> dict[tuple, float]:
    text = metrics.render(stats).decode()
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


# -- request parsing ------------------------------------------------------------------------
def test_parse_forwards_openai_fields_and_separates_model_stream_cache() -> None:
    request = parse_chat_request(
        {"model": "m", "messages": MESSAGES, "temperature": 0, "stream": True, "cache": {"ttl": 5}},
        {},
    )
    assert request.model == "m"
    assert request.stream is True
    assert request.params == {"messages": MESSAGES, "temperature": 0}
    assert request.cache == {"ttl": 5}


@pytest.mark.parametrize(
    ("body", "field", "error"),
    [
        ([1], "body", InvalidRequestType),
        ({"model": "m", "messages": MESSAGES, "tenant": "b"}, "tenant", InvalidRequest),
        ({"messages": MESSAGES}, "model", InvalidRequestType),
        ({"model": 3, "messages": MESSAGES}, "model", InvalidRequestType),
        ({"model": "m", "messages": MESSAGES, "stream": "yes"}, "stream", InvalidRequestType),
        ({"model": "m"}, "messages", InvalidRequest),
        (
            {"model": "m", "messages": MESSAGES, "api_base": "http://evil"},
            "api_base",
            InvalidRequest,
        ),
        ({"model": "m", "messages": MESSAGES, "api_key": "x"}, "api_key", InvalidRequest),
        (
            {"model": "m", "messages": MESSAGES, "mock_response": "x"},
            "mock_response",
            InvalidRequest,
        ),
        ({"model": "m", "messages": MESSAGES, "cache": "no"}, "cache", InvalidRequestType),
        ({"model": "m", "messages": MESSAGES, "seed": 2**63}, "seed", InvalidRequest),
    ],
)
def test_parse_rejects_by_field(body: object, field: str, error: type[Exception]) -> None:
    with pytest.raises(error) as caught:
        parse_chat_request(body, {})
    assert caught.value.field == field


def test_every_route_reads_cache_controls_the_same_way() -> None:
    headers = {"x-semcache-ttl": "7", "x-semcache-namespace": "docs"}
    chat = parse_chat_request({"model": "m", "messages": MESSAGES, "cache": {"ttl": 5}}, headers)
    embed = parse_embedding_request({"model": "m", "input": "x", "cache": {"ttl": 5}}, headers)
    done = parse_completion_request({"model": "m", "prompt": "hi", "cache": {"ttl": 5}}, headers)
    assert chat.cache == embed.cache == done.cache == {"ttl": 5, "namespace": "docs"}


def test_an_empty_namespace_header_is_refused_even_when_the_body_names_one() -> None:
    body = {"model": "m", "messages": MESSAGES, "cache": {"namespace": "docs"}}
    with pytest.raises(InvalidRequest) as caught:
        parse_chat_request(body, {"x-semcache-namespace": ""})
    assert caught.value.field == "x-semcache-namespace"


def test_a_completion_prompt_becomes_one_user_message() -> None:
    request = parse_completion_request({"model": "m", "prompt": ["hi"], "max_tokens": 3}, {})
    assert request.params == {"max_tokens": 3, "messages": MESSAGES}
    assert request.stream is False and request.cache is None


@pytest.mark.parametrize(
    ("parse", "body", "field", "error"),
    [
        (parse_embedding_request, [1], "body", InvalidRequestType),
        (parse_embedding_request, {"input": "x"}, "model", InvalidRequestType),
        (
            parse_embedding_request,
            {"model": "m", "input": "x", "stream": True},
            "stream",
            InvalidRequest,
        ),
        (
            parse_embedding_request,
            {"model": "m", "input": "x", "stream": "no"},
            "stream",
            InvalidRequestType,
        ),
        (
            parse_embedding_request,
            {"model": "m", "input": "x", "messages": []},
            "messages",
            InvalidRequest,
        ),
        (parse_embedding_request, {"model": "m"}, "input", InvalidRequest),
        (
            parse_completion_request,
            {"model": "m", "prompt": "x", "tenant": "b"},
            "tenant",
            InvalidRequest,
        ),
        (
            parse_completion_request,
            {"model": "m", "prompt": "x", "input": "x"},
            "input",
            InvalidRequest,
        ),
        (parse_completion_request, {"model": "m", "prompt": 3}, "prompt", InvalidRequestType),
        (parse_completion_request, {"model": "m"}, "prompt", InvalidRequest),
    ],
)
def test_other_routes_reject_by_field(
    parse: object, body: object, field: str, error: type[Exception]
) -> None:
    with pytest.raises(error) as caught:
        parse(body, {})  # type: ignore[operator]
    assert caught.value.field == field


def test_header_controls_are_overlaid_by_body_controls() -> None:
    headers = {
        "x-semcache-no-cache": "true",
        "x-semcache-no-store": "0",
        "x-semcache-ttl": "0",
        "x-semcache-namespace": "docs",
    }
    assert cache_controls(headers, None) == {
        "no-cache": True,
        "no-store": False,
        "ttl": 0.0,
        "namespace": "docs",
    }
    assert cache_controls(headers, {"namespace": "faq"})["namespace"] == "faq"
    assert cache_controls({}, None) is None


@pytest.mark.parametrize(
    ("header", "value"), [("x-semcache-ttl", "soon"), ("x-semcache-no-cache", "maybe")]
)
def test_bad_header_controls_name_the_header(header: str, value: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        cache_controls({header: value}, None)
    assert caught.value.field == header


# -- error mapping --------------------------------------------------------------------------
def _litellm_error(cls: type, status: int) -> Exception:
    response = httpx.Response(status, request=httpx.Request("POST", "http://x"))
    return cls(message="boom sk-secret", llm_provider="openai", model="m", response=response)


def test_invalid_request_maps_to_400_naming_field() -> None:
    error = to_api_error(InvalidRequest("messages[0].role", "bad"), str)
    assert error.status == 400
    assert error.body()["error"]["param"] == "messages[0].role"
    assert error.body()["error"]["type"] == "invalid_request_error"


@pytest.mark.parametrize(
    ("exc", "status"),
    [
        (_litellm_error(litellm.RateLimitError, 429), 429),
        (_litellm_error(litellm.InternalServerError, 500), 500),
        (_litellm_error(litellm.ServiceUnavailableError, 503), 503),
        (litellm.Timeout(message="slow", model="m", llm_provider="openai"), 504),
        (litellm.APIConnectionError(message="down", llm_provider="openai", model="m"), 502),
    ],
)
def test_upstream_errors_keep_status_and_redact(exc: Exception, status: int) -> None:
    error = to_api_error(exc, lambda text: text.replace("sk-secret", "[redacted]"))
    assert error.status == status
    assert error.kind == "upstream"
    assert "sk-secret" not in json.dumps(error.body())
    assert isinstance(exc, openai.OpenAIError)


def test_unknown_exception_is_an_opaque_500(caplog: pytest.LogCaptureFixture) -> None:
    error = to_api_error(RuntimeError("internal detail sk-secret"), lambda t: t.replace("sk-", "x"))
    assert error.status == 500
    assert "internal detail" not in error.message
    assert "sk-secret" not in caplog.text


# -- metrics --------------------------------------------------------------------------------


def test_metrics_count_what_was_recorded() -> None:
    metrics = ProxyMetrics()
    metrics.record_request(
        tenant="a", model="m", info=CacheInfo(Tier.MISS, nearest_similarity=0.5), latency_s=0.2
    )
    metrics.record_request(
        tenant="a",
        model="m",
        info=CacheInfo(Tier.EXACT, saved_tokens=10, saved_cost_usd=0.01),
        latency_s=0.001,
    )
    metrics.record_request(
        tenant="b",
        model="m",
        info=CacheInfo(Tier.SEMANTIC, similarity=0.97, saved_tokens=5),
        latency_s=0.01,
    )
    metrics.record_error(kind="upstream", status=429)
    samples = _samples(metrics, _stats(store_entries=3))
    assert samples[("semcache_requests_total", (("tenant", "a"), ("tier", "miss")))] == 1
    assert samples[("semcache_requests_total", (("tenant", "a"), ("tier", "exact")))] == 1
    assert samples[("semcache_requests_total", (("tenant", "b"), ("tier", "semantic")))] == 1
    assert samples[("semcache_upstream_calls_total", (("model", "m"),))] == 1
    assert samples[("semcache_errors_total", (("kind", "upstream"), ("status", "429")))] == 1
    assert samples[("semcache_saved_tokens_total", (("tenant", "a"),))] == 10
    assert samples[("semcache_saved_cost_usd_total", (("tenant", "a"),))] == pytest.approx(0.01)
    assert samples[("semcache_semantic_hit_similarity_count", ())] == 1
    assert samples[("semcache_nearest_miss_similarity_count", ())] == 1
    assert samples[("semcache_lookup_seconds_count", (("tier", "exact"),))] == 1
    assert ("semcache_lookup_seconds_count", (("tier", "miss"),)) not in samples
    assert samples[("semcache_request_duration_seconds_count", (("tier", "miss"),))] == 1
    assert samples[("semcache_store_entries", ())] == 3


def test_two_apps_have_independent_registries() -> None:
    first, second = ProxyMetrics(), ProxyMetrics()
    first.record_error(kind="auth", status=401)
    assert ("semcache_errors_total", (("kind", "auth"), ("status", "401"))) not in _samples(second)


def test_store_gauge_is_left_alone_when_the_store_was_not_counted() -> None:
    metrics = ProxyMetrics()
    assert _samples(metrics, _stats(store_entries=4))[("semcache_store_entries", ())] == 4
    assert _samples(metrics, _stats(store_entries=None))[("semcache_store_entries", ())] == 4


# -- logging --------------------------------------------------------------------------------
def test_request_line_is_one_json_object() -> None:
    stream = io.StringIO()
    logger = logging.getLogger("semcache.server.access")
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    try:
        log_request({"tenant": "a", "tier": "exact", "latency_ms": 1.5, "similarity": None})
    finally:
        logger.removeHandler(handler)
        logger.setLevel(logging.NOTSET)
    lines = stream.getvalue().splitlines()
    assert len(lines) == 1
    line = json.loads(lines[0])
    assert line["tenant"] == "a"
    assert line["tier"] == "exact"
    assert line["msg"] == "request"
    assert line["similarity"] is None


def test_configure_json_logging_routes_semcache_records() -> None:
    stream = io.StringIO()
    configure_json_logging(stream=stream)
    try:
        logging.getLogger("semcache.server").warning("hello %s", "world")
    finally:
        for name in ("semcache", "uvicorn", "uvicorn.error"):
            logging.getLogger(name).handlers.clear()
            logging.getLogger(name).propagate = True
            logging.getLogger(name).setLevel(logging.NOTSET)
    assert json.loads(stream.getvalue())["msg"] == "hello world"


def test_compression_and_private_data_are_metric_series() -> None:
    from semcache.privacy.gate import PrivacyStats

    metrics = ProxyMetrics()
    info = CacheInfo(Tier.MISS, compression_saved_tokens=40, compression_saved_usd=0.002)
    metrics.record_request(tenant="a", model="m", info=info, latency_s=0.1)
    privacy = PrivacyStats(
        findings={"card": 3, "email": 1},
        questions=9,
        private_questions=4,
        not_stored=3,
        redacted=1,
        answers_not_stored=2,
        answers_redacted=0,
    )
    stats = CacheStats(
        requests=1,
        tiers={},
        upstream_calls=1,
        stored=0,
        verifier_rejections=0,
        errors={},
        saved_cost_usd=0.0,
        saved_tokens=0,
        privacy=privacy,
    )
    samples = _samples(metrics, stats)
    assert samples[("semcache_compression_saved_tokens_total", ())] == 40
    assert samples[("semcache_compression_saved_cost_usd_total", ())] == pytest.approx(0.002)
    assert samples[("semcache_private_data_findings", (("kind", "card"),))] == 3
    assert samples[("semcache_private_data_decisions", (("decision", "not_stored"),))] == 3
    assert samples[("semcache_private_data_decisions", (("decision", "answers_not_stored"),))] == 2


def test_whole_numbers_turns_exact_integral_floats_into_ints() -> None:
    from semcache.server.validate import whole_numbers

    body = {"a": 16.0, "b": [6.0, 0.5, {"c": -3.0}], "d": 1e300, "e": True, "f": "7.0"}
    out = whole_numbers(body)
    assert out == {"a": 16, "b": [6, 0.5, {"c": -3}], "d": 1e300, "e": True, "f": "7.0"}
    assert type(out["a"]) is int and type(out["b"][1]) is float and type(out["d"]) is float

"""schemathesis over every route of the served OpenAPI document (issue 24, item 6).

The document is read from the app's own ``/openapi.json``; every operation gets valid and
invalid requests (bounded and derandomized, so the run is fast and the same each time), sent
with a client or the admin key (schemathesis's auth, so it also tries none and a wrong one),
against the loopback fake upstream. Every check schemathesis has for a response runs
(``CHECKS``): no 5xx, and no mismatch between a response and the document.
``benchmarks/bench_schema_fuzz.py`` runs the same with many more examples.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Iterator
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.meta import CoveragePhaseData, CoverageScenario
from schemathesis.specs.openapi.checks import (
    allow_header_conformance,
    content_type_conformance,
    ignored_auth,
    missing_required_header,
    negative_data_rejection,
    positive_data_acceptance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
    unsupported_method,
)
from starlette.testclient import TestClient

from semcache import SemanticCache
from semcache.server.app import create_app
from semcache.server.config import ProxyConfig, parse_config
from semcache.testing import FakeEmbedder, FakeOpenAIServer, InMemoryStore

#: Examples per operation; ``benchmarks/bench_schema_fuzz.py`` raises it and adds the chat
#: route, whose large schema takes ~20 s to generate for (the suite fuzzes chat bodies in
#: ``tests/reliability/test_reliability_fuzz.py``).
EXAMPLES = int(os.environ.get("SCHEMA_FUZZ_EXAMPLES", "2"))
WITH_CHAT = os.environ.get("SCHEMA_FUZZ_CHAT") == "1"
STATUSES: Counter[int] = Counter()
ENV = {"UPSTREAM_KEY": "sk-test", "ADMIN_KEY": "admin-k"}
CLIENT = {"authorization": "Bearer client-k"}
ADMIN = {"authorization": "Bearer admin-k"}
#: Every response check schemathesis has for one request (the stateful ones need links):
#: no 5xx, a documented status, content type, headers and body; invalid data refused and
#: valid data accepted; a missing or wrong key refused; an undeclared method refused.
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    negative_data_rejection,
    positive_data_acceptance,
    ignored_auth,
    missing_required_header,
    unsupported_method,
    allow_header_conformance,
]


def schema_config(api_base: str) -> ProxyConfig:
    """Two public models on the fake upstream (no retries), one client, the admin key."""
    params = {"api_base": api_base, "api_key": "os.environ/UPSTREAM_KEY", "max_retries": 0}
    return parse_config(
        {
            "model_list": [
                {"model_name": "fast", "litellm_params": {"model": "openai/gpt-4o-mini", **params}},
                {
                    "model_name": "emb",
                    "litellm_params": {"model": "openai/text-embedding-3-small", **params},
                },
            ],
            "clients": [{"key": "client-k", "tenant": "t"}],
            "server": {"admin_key": "os.environ/ADMIN_KEY"},
            "cache": {"store": {"backend": "none"}},
        }
    )


_upstream = FakeOpenAIServer().start()
_config = schema_config(_upstream.api_base)
#: with a semantic tier (fake embedder, memory store), so the threshold routes serve
_cache = SemanticCache(_config.cache, embedder=FakeEmbedder(), store=InMemoryStore())
APP = create_app(_config, _cache, environ=ENV)
schema = schemathesis.openapi.from_asgi("/openapi.json", APP)
if not WITH_CHAT:
    schema = schema.exclude(path="/v1/chat/completions")
    # the coverage phase sends every boundary case the schema defines (~800 requests)
    schema.config.phases.coverage.enabled = False


@pytest.fixture(scope="module", autouse=True)
def _close() -> Iterator[None]:
    yield
    print(f"\nschemathesis responses by status: {dict(sorted(STATUSES.items()))}")
    _cache.close()
    _upstream.stop()


def checks_for(case: schemathesis.Case, response: Any) -> list:
    """``CHECKS``, less what a proxy cannot promise: an unknown *header* is not invalid data
    (clients, SDKs and load balancers add their own), so it is not refused (an unknown body
    field or query parameter still must be, where the document says so); and valid data the
    upstream itself refuses (LiteLLM's 400 "Upstream error: ...") is the provider's verdict."""
    data = case.meta.phase.data if case.meta is not None else None
    checks = CHECKS
    if (
        isinstance(data, CoveragePhaseData)
        and data.scenario is CoverageScenario.OBJECT_UNEXPECTED_PROPERTIES
        and data.parameter_location is ParameterLocation.HEADER
    ):
        checks = [check for check in checks if check is not negative_data_rejection]
    if response.status_code == 400 and "Upstream error:" in response.text:
        checks = [check for check in checks if check is not positive_data_acceptance]
    return checks


def headers_for(path: str) -> dict[str, str]:
    return ADMIN if path.startswith("/admin") else CLIENT


@schema.auth()
class Keys:
    """The client or admin key, as schemathesis's own auth: its ``ignored_auth`` check then
    also sends each request without a key and with a wrong one, and expects 401/403."""

    def get(self, case: schemathesis.Case, context: object) -> str:
        return headers_for(case.path)["authorization"]

    def set(self, case: schemathesis.Case, data: str, context: object) -> None:
        case.headers = {**(case.headers or {}), "Authorization": data}


@schema.parametrize()
@settings(
    max_examples=EXAMPLES,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_no_route_answers_5xx_or_differs_from_the_document(case: schemathesis.Case) -> None:
    response = case.call()
    STATUSES[response.status_code] += 1
    case.validate_response(response, checks=checks_for(case, response))


def _routes(app: Any) -> list[Any]:
    """Every route the app serves: FastAPI from 0.165 keeps an included router as one
    entry of ``app.routes``; ``iter_route_contexts`` walks into them."""
    from fastapi import routing

    walk = getattr(routing, "iter_route_contexts", None)
    if walk is None:
        return list(app.routes)
    return [context.original_route for context in walk(app.routes)]


def test_the_document_covers_every_route() -> None:
    with TestClient(APP) as client:
        document = client.get("/openapi.json").json()
    served = {
        (route.path, method.lower())
        for route in _routes(APP)
        if getattr(route, "include_in_schema", False) and route.path != "/openapi.json"
        for method in route.methods
    }
    documented = {(path, method) for path, ops in document["paths"].items() for method in ops}
    assert served - documented == set()
    assert ("/admin/threshold", "post") in served  # the walk sees routes of included routers
    namespace = next(
        p
        for p in document["paths"]["/v1/chat/completions"]["post"]["parameters"]
        if p["name"] == "x-semcache-namespace"
    )
    assert namespace["schema"]["minLength"] == 1  # the server refuses an empty namespace

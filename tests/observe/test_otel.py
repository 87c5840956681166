"""OpenTelemetry on a real cache: one trace per request with its phase spans, the request's
outcome on the operation span, and the lookup metrics (nearest similarity on misses too)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import defaultdict

from semcache import CacheSettings, SemanticCache, cache_info
from semcache.compose.observe import otel_enabled
from semcache.observe.otel import tenant_hash
from semcache.observe.settings import TelemetrySettings
from semcache.testing import FakeEmbedder, FakeUpstream, InMemoryStore

QUESTION = "how many legs does a spider have"
PARAPHRASE = "how many legs does a spider have please"
FAR = "what is the capital city of france"


class Lexical:
    """A guard that always agrees (so the judge phase runs and serves)."""

    name = "agree"

    def verify(self, query: str, candidate: str) -> bool:
        return True


def _cache(otel: bool | None = True) -> SemanticCache:
    settings = CacheSettings(
        semantic={"threshold": 0.8},
        telemetry={"otel": otel},
        tuning={"miss_margin": 0.5},
    )
    return SemanticCache(
        settings,
        embedder=FakeEmbedder(),
        store=InMemoryStore(),
        verifier=Lexical(),
        upstream=FakeUpstream(),
    )


def _ask(cache: SemanticCache, text: str, tenant: str = "acme"):
    return cache.completion(
        model="gpt-4o-mini", messages=[{"role": "user", "content": text}], tenant=tenant
    )


def _traces(otel) -> dict[int, list]:
    by_trace: dict[int, list] = defaultdict(list)
    for span in otel.spans.get_finished_spans():
        by_trace[span.context.trace_id].append(span)
    return by_trace


def _metric(otel, name: str) -> list:
    data = otel.metrics.get_metrics_data()
    points = []
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == name:
                    points += list(metric.data.data_points)
    return points


def test_one_trace_per_request_with_its_phase_spans(otel) -> None:
    with _cache() as cache:
        assert cache.ready()
        otel.spans.clear()
        _ask(cache, QUESTION)
        cache.flush()
        _ask(cache, PARAPHRASE)
    traces = _traces(otel)
    roots = {
        trace_id: [s for s in spans if s.name == "semcache.completion"]
        for trace_id, spans in traces.items()
    }
    requests = [t for t, r in roots.items() if r]
    assert len(requests) == 2, {t: [s.name for s in spans] for t, spans in traces.items()}
    first, second = (sorted(traces[t], key=lambda s: s.start_time) for t in requests)
    if first[0].start_time > second[0].start_time:
        first, second = second, first
    names_miss = {s.name for s in first}
    names_hit = {s.name for s in second}
    assert {"semcache.embed", "semcache.search", "semcache.upstream", "semcache.write"} <= (
        names_miss
    )
    assert {"semcache.embed", "semcache.search", "semcache.judge"} <= names_hit
    assert "semcache.upstream" not in names_hit
    # every phase span hangs under its request's operation span
    for spans in (first, second):
        [root] = [s for s in spans if s.name == "semcache.completion"]
        assert root.parent is None
        ids = {s.context.span_id for s in spans}
        assert all(s.parent is not None and s.parent.span_id in ids for s in spans if s is not root)
    miss_root = next(s for s in first if s.name == "semcache.completion")
    hit_root = next(s for s in second if s.name == "semcache.completion")
    assert miss_root.attributes["semcache.tier"] == "miss"
    assert miss_root.attributes["semcache.miss_reason"] == "no_candidate"
    assert miss_root.attributes["semcache.tenant_hash"] == tenant_hash("acme") != "acme"
    assert hit_root.attributes["semcache.tier"] == "semantic"
    assert hit_root.attributes["semcache.similarity"] >= 0.8
    write = next(s for s in first if s.name == "semcache.write")
    assert write.attributes["semcache.write.outcome"] == "written"


def _nearest(otel) -> dict[bool, tuple[int, float]]:
    """(count, sum) of the nearest-similarity histogram by hit (cumulative since start)."""
    found: dict[bool, tuple[int, float]] = {True: (0, 0.0), False: (0, 0.0)}
    for p in _metric(otel, "semcache.lookup.nearest_similarity"):
        count, total = found[p.attributes["semcache.hit"]]
        found[p.attributes["semcache.hit"]] = (count + p.count, total + p.sum)
    return found


def test_nearest_similarity_is_recorded_on_misses(otel) -> None:
    before = _nearest(otel)
    with _cache() as cache:
        assert cache.ready()
        _ask(cache, QUESTION, tenant="t1")
        cache.flush()
        far = _ask(cache, FAR, tenant="t1")  # a miss: its nearest is the spider question
        _ask(cache, PARAPHRASE, tenant="t1")
        _ask(cache, PARAPHRASE, tenant="t2")  # another tenant sees no entry: no nearest
    info = cache_info(far)
    nearest = info.nearest_similarity
    assert info.tier == "miss" and nearest is not None
    after = _nearest(otel)
    assert after[False][0] - before[False][0] == 1
    assert abs(after[False][1] - before[False][1] - nearest) < 1e-9
    assert after[True][0] - before[True][0] == 1
    lookups = {
        (p.attributes["semcache.tier"], p.attributes["semcache.tenant_hash"]): p.value
        for p in _metric(otel, "semcache.lookups")
    }
    assert lookups[("miss", tenant_hash("t1"))] >= 2
    assert lookups[("semantic", tenant_hash("t1"))] >= 1
    assert lookups[("miss", tenant_hash("t2"))] >= 1
    phases = {p.attributes["semcache.phase"] for p in _metric(otel, "semcache.phase.duration")}
    assert {"embed", "search", "judge", "upstream", "write"} <= phases


def test_off_by_default_and_on_with_a_standard_variable(otel) -> None:
    assert not otel_enabled(TelemetrySettings(), {})
    assert otel_enabled(TelemetrySettings(), {"OTEL_TRACES_EXPORTER": "otlp"})
    assert not otel_enabled(
        TelemetrySettings(), {"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"}
    )
    assert not otel_enabled(TelemetrySettings(otel=False), {"OTEL_TRACES_EXPORTER": "otlp"})
    with _cache(otel=False) as cache:
        _ask(cache, QUESTION)
        assert cache.stats().lookups.lookups == 1
    assert otel.spans.get_finished_spans() == ()


def test_standard_variables_alone_export_spans(tmp_path) -> None:
    """A process with no provider of its own: OTEL_TRACES_EXPORTER=console prints the spans."""
    script = (
        "from semcache import CacheSettings, SemanticCache\n"
        "s = CacheSettings(store={'backend': 'none'}, semantic={'enabled': False})\n"
        "with SemanticCache(s) as cache:\n"
        "    cache.completion(model='gpt-4o-mini', mock_response='Paris.',\n"
        "                     messages=[{'role': 'user', 'content': 'capital of France?'}])\n"
    )
    env = {
        **os.environ,
        "OTEL_TRACES_EXPORTER": "console",
        "OTEL_METRICS_EXPORTER": "none",
        "OTEL_SERVICE_NAME": "semcache-test",
    }
    unset_env = {k: v for k, v in env.items() if not k.startswith("OTEL_")}
    runs = [  # both at once: each is mostly imports
        subprocess.Popen(
            [sys.executable, "-c", script],
            env=e,
            cwd=tmp_path,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for e in (env, unset_env)
    ]
    (out, err), (unset_out, _) = (run.communicate(timeout=120) for run in runs)
    assert runs[0].returncode == 0, err
    assert '"name": "semcache.completion"' in out
    assert '"name": "semcache.upstream"' in out
    assert "semcache-test" in out
    assert runs[1].returncode == 0 and "semcache.completion" not in unset_out


def test_a_stream_is_one_trace_and_one_recorded_lookup(otel) -> None:
    with _cache() as cache:
        assert cache.ready()
        otel.spans.clear()
        chunks = list(
            cache.completion(
                model="gpt-4o-mini",
                messages=[{"role": "user", "content": QUESTION}],
                stream=True,
                tenant="streamer",
            )
        )
        cache.flush()
        assert chunks and cache.stats().lookups.tenants["streamer"] == {"miss": 1}
    traces = _traces(otel)
    [spans] = [s for s in traces.values() if any(x.name == "semcache.completion" for x in s)]
    names = {s.name for s in spans}
    assert {"semcache.completion", "semcache.embed", "semcache.search", "semcache.upstream"} <= (
        names
    )
    root = next(s for s in spans if s.name == "semcache.completion")
    assert root.attributes["semcache.stream"] is True
    assert root.attributes["semcache.tier"] == "miss"
    assert root.attributes["semcache.tenant_hash"] == tenant_hash("streamer")


def test_an_exact_hit_is_one_span_with_its_outcome(otel) -> None:
    """A memory-tier hit runs no phase: its trace is the operation span alone, with the
    request's tier and hashed tenant, timed from before the lookup to the answer."""
    with _cache() as cache:
        assert cache.ready()
        _ask(cache, QUESTION, tenant="exact-tenant")
        cache.flush()
        otel.spans.clear()
        hit = _ask(cache, QUESTION, tenant="exact-tenant")
        assert cache_info(hit).tier == "exact"
        assert cache.stats().lookups.tenants["exact-tenant"] == {"miss": 1, "exact": 1}
    [span] = otel.spans.get_finished_spans()
    assert span.name == "semcache.completion" and span.parent is None
    assert span.attributes["semcache.tier"] == "exact"
    assert span.attributes["semcache.tenant_hash"] == tenant_hash("exact-tenant")
    assert "semcache.similarity" not in span.attributes
    assert 0 < span.start_time <= span.end_time


def test_an_exact_hit_span_is_a_child_of_the_callers(otel) -> None:
    from opentelemetry import trace

    with _cache() as cache:
        _ask(cache, QUESTION)
        cache.flush()
        otel.spans.clear()
        with trace.get_tracer("caller").start_as_current_span("caller") as outer:
            _ask(cache, QUESTION)
    spans = {s.name: s for s in otel.spans.get_finished_spans()}
    assert set(spans) == {"caller", "semcache.completion"}
    child = spans["semcache.completion"]
    assert child.context.trace_id == outer.get_span_context().trace_id
    assert child.parent is not None and child.parent.span_id == outer.get_span_context().span_id


def _roots(otel) -> list[tuple[str, set[str], dict]]:
    """Per trace: its root span's name, the names of its other spans, the root's attributes."""
    found = []
    for spans in _traces(otel).values():
        [root] = [s for s in spans if s.parent is None]
        found.append((root.name, {s.name for s in spans if s is not root}, root.attributes))
    return sorted(found, key=lambda r: r[0])


def test_check_store_and_lookup_are_operation_spans(otel) -> None:
    with _cache() as cache:
        assert cache.ready()
        otel.spans.clear()
        assert cache.check(QUESTION, model="gpt-4o-mini", tenant="direct") is None
        cache.store(QUESTION, "Eight.", model="gpt-4o-mini", tenant="direct")
        cache.flush()
        hit = cache.check(PARAPHRASE, model="gpt-4o-mini", tenant="direct")
        assert hit is not None and hit.info.tier == "semantic"
        far = cache.check(FAR, model="gpt-4o-mini", tenant="direct", num_results=2)
        assert far == []
        looked = cache.lookup(
            model="gpt-4o-mini", messages=[{"role": "user", "content": QUESTION}], tenant="direct"
        )
        assert looked.info.tier == "exact"
        assert cache.stats().lookups.tenants["direct"] == {"miss": 2, "semantic": 1, "exact": 1}
    roots = _roots(otel)
    checks = [r for r in roots if r[0] == "semcache.check"]
    assert [c[2]["semcache.tier"] for c in checks] == ["miss", "semantic", "miss"]
    assert all(c[2]["semcache.tenant_hash"] == tenant_hash("direct") for c in checks)
    assert {"semcache.embed", "semcache.search", "semcache.judge"} <= checks[1][1]
    [store] = [r for r in roots if r[0] == "semcache.store"]
    assert "semcache.upsert" in store[1]  # the write, under the call that made it
    [lookup] = [r for r in roots if r[0] == "semcache.lookup"]
    assert lookup[2]["semcache.tier"] == "exact"


def test_protocol_calls_are_operation_spans_and_recorded(otel) -> None:
    ask = {"model": "gpt-4o-mini", "input": QUESTION, "tenant": "proto"}
    with _cache() as cache:
        assert cache.ready()
        otel.spans.clear()
        assert cache.responses(**ask).cache_info.tier == "miss"
        cache.flush()
        assert cache.responses(**ask).cache_info.tier == "exact"
        events = list(cache.responses(**ask, stream=True))
        assert events[-1]["type"] == "response.completed"
        assert cache.stats().lookups.tenants["proto"] == {"miss": 1, "exact": 2}
    roots = [r for r in _roots(otel) if r[0] == "semcache.responses"]
    assert len(roots) == 3
    miss = next(r for r in roots if r[2]["semcache.tier"] == "miss")
    assert "semcache.upstream" in miss[1]
    exact = [r for r in roots if r[2]["semcache.tier"] == "exact"]
    assert len(exact) == 2 and any(r[2].get("semcache.stream") for r in exact)
    assert all(r[2]["semcache.tenant_hash"] == tenant_hash("proto") for r in roots)


def test_the_fallback_lane_is_traced_like_the_primary(otel) -> None:
    """A question only the fallback embedder reads: its embed and search spans come from
    the fallback's lane, named by its embedder."""
    from tests.pipeline.test_routing import RU_A, RU_B, English, Multilingual

    settings = CacheSettings(
        semantic={"threshold": 0.85, "fallback_threshold": 0.85, "verifier": "none"},
        store={"backend": "edge"},
        telemetry={"otel": True},
    )
    with SemanticCache(
        settings,
        embedder=English(dim=64, name="en"),
        store=InMemoryStore(),
        fallback_embedder=Multilingual(dim=32, name="multi"),
        fallback_store=InMemoryStore(),
        upstream=FakeUpstream(),
    ) as cache:
        assert cache.ready()
        _ask(cache, RU_A)
        cache.flush()
        otel.spans.clear()
        hit = _ask(cache, RU_B)
        assert cache_info(hit).tier == "semantic" and cache_info(hit).routed_to == "multi-32"
    [(name, children, attributes)] = _roots(otel)
    assert name == "semcache.completion" and attributes["semcache.tier"] == "semantic"
    assert {"semcache.embed", "semcache.search"} <= children
    embeds = [s for s in otel.spans.get_finished_spans() if s.name == "semcache.embed"]
    assert {s.attributes["semcache.embedder"] for s in embeds} == {"multi-32"}

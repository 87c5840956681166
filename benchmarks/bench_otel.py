"""The proxy's exact-hit latency with OpenTelemetry off and on, against a baseline, same run.

``semcache serve`` processes in front of one loopback upstream, each with the exact tiers
only (the hit is the memory tier's):

- ``baseline`` (``--baseline-python``: an interpreter whose ``semcache`` is the code to
  compare with, e.g. a checkout of main; left out when not given), telemetry off;
- ``off``: this tree, telemetry off (the default);
- ``on``: this tree, ``telemetry.otel`` on, behind the SDK as a deployment sets it up: a
  ``BatchSpanProcessor`` and a ``PeriodicExportingMetricReader`` (its default 60 s
  interval), with exporters that drop what they get, so every span is built and batched;
- ``on_sampled_10pct``: ``on`` with the standard sampler variables, 1 trace in 10;
- ``on_http_telemetry``: ``on`` plus FastAPI's own HTTP spans and metrics
  (``server.http_telemetry``);
- ``on_console`` (``--console``): the standard variables alone, console exporters into
  /dev/null (spans serialised too).

Requests interleave the processes: each round sends the same question in blocks of
``--block`` to one process after another (one keep-alive socket each, sequentially), so load
elsewhere on the machine falls on all of them alike. Prints the median of the per-round
p50s (client side), the median of the proxy's own latency from its access log
(``server_p50_ms``), and the ratios to ``off`` and ``baseline``.

    python benchmarks/bench_otel.py [--baseline-python /path/to/main/.venv/bin/python]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _procs import free_port
from bench_proxy import RawClient

from semcache.testing import FakeOpenAIServer

CLIENT_KEY = "bench-client"
BODY = {"model": "m", "messages": [{"role": "user", "content": "What is the capital of France?"}]}


#: ``semcache serve`` behind an SDK whose exporters drop what they get: every span and
#: metric is built, processed and batched as with a real exporter, none is serialised.
DROPPING = """
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import (
    MetricExporter, MetricExportResult, PeriodicExportingMetricReader)
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
class Spans(SpanExporter):
    def export(self, spans): return SpanExportResult.SUCCESS
class Metrics(MetricExporter):
    def __init__(self): super().__init__()
    def export(self, data, timeout_millis=0, **kw): return MetricExportResult.SUCCESS
    def force_flush(self, timeout_millis=0): return True
    def shutdown(self, timeout_millis=0, **kw): pass
provider = TracerProvider(); provider.add_span_processor(BatchSpanProcessor(Spans()))
trace.set_tracer_provider(provider)
metrics.set_meter_provider(MeterProvider(metric_readers=[PeriodicExportingMetricReader(Metrics())]))
"""
SERVE = "import sys; from semcache.server.cli import serve_main as m; sys.exit(m(sys.argv[1:]))"


def start(python: str, api_base: str, workdir: Path, name: str, otel: str) -> subprocess.Popen:
    """``otel``: "off", "dropping" (an SDK set up in-process), "sampled" (the same, 1 trace
    in 10), "http" (the same, FastAPI's HTTP telemetry on) or "console" (the standard
    variables: console exporters into /dev/null)."""
    extra = "\n[cache.telemetry]\notel = true\n" if otel != "off" else ""
    server = "\n[server]\nhttp_telemetry = true\n" if otel == "http" else ""
    config = workdir / f"{name}.toml"
    config.write_text(
        f"""
[[model_list]]
model_name = "m"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/BENCH_UPSTREAM_KEY"
litellm_params.max_retries = 0

[[clients]]
key = "{CLIENT_KEY}"
tenant = "bench"
{server}
[cache.store]
backend = "none"

[cache.semantic]
enabled = false
{extra}""",
        encoding="utf-8",
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["BENCH_UPSTREAM_KEY"] = "sk-bench"
    if otel == "console":
        env |= {"OTEL_TRACES_EXPORTER": "console", "OTEL_METRICS_EXPORTER": "console"}
    if otel == "sampled":  # the standard sampler variables: 1 trace in 10 recorded
        env |= {"OTEL_TRACES_SAMPLER": "traceidratio", "OTEL_TRACES_SAMPLER_ARG": "0.1"}
    port = free_port()
    code = (DROPPING if otel in ("dropping", "sampled", "http") else "") + SERVE
    process = subprocess.Popen(
        [python, "-c", code, "--port", str(port), "--config", str(config)],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(workdir / f"{name}.log").open("w"),
        cwd=workdir,
    )
    process.base = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
    deadline = time.monotonic() + 120
    while True:
        try:
            if httpx.get(f"{process.base}/readyz", timeout=10).status_code == 200:  # type: ignore[attr-defined]
                return process
        except httpx.TransportError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            raise RuntimeError(f"{name} did not start; see {workdir / (name + '.log')}")
        time.sleep(0.2)


def round_p50s_ms(bases: dict[str, str], n: int, first: int, block: int) -> dict[str, float]:
    """One round: ``n`` exact hits per process, in blocks of ``block`` sent to one process
    after another, so a burst of load elsewhere on the machine falls on every process alike
    while each block finds its process warm (a block's first request, which wakes the
    process, is not counted). The turn starts at process ``first``. The median latency of
    each, in ms."""
    names = list(bases)
    order = names[first % len(names) :] + names[: first % len(names)]
    clients = {name: RawClient(bases[name]) for name in names}
    times: dict[str, list[float]] = {name: [] for name in names}
    try:
        for name in order:  # the miss, stored (a hit from then on)
            clients[name].post("/v1/chat/completions", BODY, f"Bearer {CLIENT_KEY}")
        for _ in range(max(1, n // block)):
            for name in order:
                for i in range(block + 1):
                    t0 = time.perf_counter()
                    headers = clients[name].post(
                        "/v1/chat/completions", BODY, f"Bearer {CLIENT_KEY}"
                    )
                    if i:
                        times[name].append(time.perf_counter() - t0)
                    assert headers["x-semcache-tier"] == "exact", headers
    finally:
        for client in clients.values():
            client.close()
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def server_p50_ms(log: Path) -> float:
    """Median of the proxy's own latency (its access log) over the exact hits: the app's
    time without the client's or the loopback's."""
    latencies = []
    for line in log.read_text(encoding="utf-8").splitlines():
        if '"tier":"exact"' in line:
            latencies.append(float(json.loads(line)["latency_ms"]))
    return statistics.median(latencies)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-python", help="interpreter of the code to compare with")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--requests", type=int, default=400, help="per process and round")
    parser.add_argument("--block", type=int, default=25, help="requests in a row to one process")
    parser.add_argument("--console", action="store_true", help="add the console exporters")
    args = parser.parse_args()
    upstream = FakeOpenAIServer().start()
    workdir = Path(tempfile.mkdtemp(prefix="semcache-bench-otel-"))
    configs = {
        "off": (sys.executable, "off"),
        "on": (sys.executable, "dropping"),
        "on_sampled_10pct": (sys.executable, "sampled"),
        "on_http_telemetry": (sys.executable, "http"),
    }
    if args.console:
        configs["on_console"] = (sys.executable, "console")
    if args.baseline_python:
        configs = {"baseline": (args.baseline_python, "off"), **configs}
    processes = {
        name: start(python, upstream.api_base, workdir, name, otel)
        for name, (python, otel) in configs.items()
    }
    try:
        bases = {name: process.base for name, process in processes.items()}  # type: ignore[attr-defined]
        round_p50s_ms(bases, 50, 0, args.block)  # warm each up
        rounds: dict[str, list[float]] = {name: [] for name in processes}
        for i in range(args.rounds):
            for name, value in round_p50s_ms(bases, args.requests, i, args.block).items():
                rounds[name].append(value)
    finally:
        for process in processes.values():
            process.terminate()
            process.wait(timeout=30)
        upstream.stop()
    p50 = {name: statistics.median(values) for name, values in rounds.items()}
    server = {name: server_p50_ms(workdir / f"{name}.log") for name in processes}
    summary: dict[str, object] = {
        "exact_hit_p50_ms": {name: round(v, 3) for name, v in p50.items()},
        "server_p50_ms": {name: round(v, 3) for name, v in server.items()},
        "over_off": {name: round(v / p50["off"], 3) for name, v in p50.items()},
        "server_over_off": {name: round(v / server["off"], 3) for name, v in server.items()},
        "target_on_over_off": 1.2,
    }
    if "baseline" in p50:
        summary["off_over_baseline"] = round(p50["off"] / p50["baseline"], 3)
        summary["on_over_baseline"] = round(p50["on"] / p50["baseline"], 3)
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

"""Cold start, before and after, each measurement in a fresh process, in one run.

    python benchmarks/bench_startup.py [--before /work/main/.venv/bin/python] [--rounds 1]

For each interpreter (``--before``: another checkout's venv, e.g. main's; ``after``: this
one), in a fresh subprocess started in an empty directory (so each imports its own
installed semcache, not this checkout's folder):

- import: ``from semcache import SemanticCache`` (LiteLLM included);
- construction: ``SemanticCache(settings)`` with the default embedder and runtime and an
  embedded Qdrant store in a temporary directory;
- first exact hit: from the end of construction, a question (upstream: a loopback fake
  OpenAI server in this process, answering at once) and its repeat, until the repeat is an
  exact hit;
- first semantic hit: from the end of construction, ``check`` of a paraphrase every 20 ms
  until it is a semantic hit (the question's answer must have reached the vector store);
- proxy: ``semcache serve`` started as a process; seconds until ``/healthz`` answers
  (listening) and until ``/readyz`` answers 200 (warm).

The ONNX export is cached per user (``~/.cache/semcache/onnx``); a first-ever start exports
it once (about 5-10 s here). Prints the load average beside each figure.
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

from semcache.testing import FakeOpenAIServer

ENV = {
    **os.environ,
    "HF_HUB_OFFLINE": "1",
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "BENCH_UPSTREAM_KEY": "sk-bench",
}
QUESTION = "What is the capital of France?"
PARAPHRASE = "What's the capital of France?"

CHILD = """
import json, sys, tempfile, time
started = time.perf_counter()
from semcache import CacheSettings, SemanticCache, cache_info
imported = time.perf_counter() - started
api_base, question, paraphrase = sys.argv[1:4]
settings = CacheSettings(
    store={"path": tempfile.mkdtemp() + "/store"}, semantic={"threshold": 0.8}
)
started = time.perf_counter()
cache = SemanticCache(settings)
built = time.perf_counter() - started
request = {"model": "openai/gpt-4o-mini", "api_base": api_base, "api_key": "sk-bench",
           "messages": [{"role": "user", "content": question}]}
started = time.perf_counter()
while True:
    cache.completion(**request)
    if cache_info(cache.completion(**request)).tier == "exact":
        break
exact = time.perf_counter() - started
while time.perf_counter() - started < 120:
    hit = cache.check(paraphrase, model="openai/gpt-4o-mini", api_base=api_base)
    if hit is not None and hit.info.tier == "semantic":
        break
    time.sleep(0.02)
else:
    raise SystemExit("no semantic hit within 120 s")
semantic = time.perf_counter() - started
cache.close()
print(json.dumps({"import_s": imported, "construct_s": built, "first_exact_s": exact,
                  "first_semantic_s": semantic}))
"""


def library_times(python: str, api_base: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as empty:
        done = subprocess.run(
            [python, "-c", CHILD, api_base, QUESTION, PARAPHRASE],
            cwd=empty,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=600,
        )
    if done.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def proxy_times(python: str, api_base: str, port: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as work:
        config = Path(work) / "proxy.toml"
        config.write_text(
            f"""
[[model_list]]
model_name = "bench-model"
litellm_params.model = "openai/gpt-4o-mini"
litellm_params.api_base = "{api_base}"
litellm_params.api_key = "os.environ/BENCH_UPSTREAM_KEY"

[[clients]]
key = "bench-client-key"
tenant = "bench"

[cache.store]
path = "{Path(work) / "store"}"
""",
            encoding="utf-8",
        )
        code = (
            "import sys; from semcache.server.cli import serve_main as m; sys.exit(m(sys.argv[1:]))"
        )
        log = (Path(work) / "serve.log").open("w")
        started = time.perf_counter()
        process = subprocess.Popen(
            [python, "-c", code, "--port", str(port), "--config", str(config)],
            cwd=work,
            env=ENV,
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        listening = ready = None
        try:
            base = f"http://127.0.0.1:{port}"
            while ready is None and time.perf_counter() - started < 300:
                if process.poll() is not None:
                    tail = (Path(work) / "serve.log").read_text()[-2000:]
                    raise RuntimeError(f"{python}: semcache serve exited: {tail}")
                try:
                    if listening is None:
                        httpx.get(f"{base}/healthz", timeout=1.0).raise_for_status()
                        listening = time.perf_counter() - started
                    if httpx.get(f"{base}/readyz", timeout=120.0).status_code == 200:
                        ready = time.perf_counter() - started
                except httpx.TransportError:
                    pass
                time.sleep(0.05)
        finally:
            process.terminate()
            process.wait(timeout=60)
            log.close()
    return {"proxy_listening_s": listening or float("nan"), "proxy_ready_s": ready or float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="/work/main/.venv/bin/python")
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--port", type=int, default=18931)
    args = parser.parse_args()
    sides = {"before": args.before, "after": sys.executable}
    results: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    with FakeOpenAIServer() as upstream:
        for round_ in range(args.rounds):
            for side, python in sides.items():
                load = os.getloadavg()[0]
                row = library_times(python, upstream.api_base)
                row |= proxy_times(python, upstream.api_base, args.port + round_)
                row["load_1m"] = load
                results[side].append(row)
                print(f"round {round_ + 1} {side}: " + json.dumps(row), flush=True)
    keys = ["import_s", "construct_s", "first_exact_s", "first_semantic_s"]
    keys += ["proxy_listening_s", "proxy_ready_s", "load_1m"]
    print(
        f"\n{'median of ' + str(args.rounds):24} {'before':>10} {'after':>10} {'after/before':>13}"
    )
    for key in keys:
        before = statistics.median(r[key] for r in results["before"])
        after = statistics.median(r[key] for r in results["after"])
        ratio = after / before if before else float("nan")
        print(f"{key:24} {before:10.2f} {after:10.2f} {ratio:13.2f}")
    print("targets: first exact <= 2 s, first semantic <= 5 s, proxy ready <= 10 s (after)")


if __name__ == "__main__":
    main()

"""The dashboard with 100,000 recorded lookups: time to build ``GET /admin/dashboard`` and
time for headless Chromium to load ``/ui`` and draw it (navigation start to drawn).

The lookups go through the library (exact hits and misses of 2,000 questions, 150 tenants,
a clock that walks through a full day of time buckets), so the recorded aggregates are as
large as the settings allow: every time bucket kept, 100 tenants one by one and the rest
as "(other)". The page is then served by the proxy app in this process. Needs Debian's
``chromium`` and ``chromium-driver`` for the page timing (the JSON timing runs without).

    python benchmarks/bench_dashboard.py [--lookups 100000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "server"))

from browser import FLAGS  # noqa: E402  (the browser tests' launch flags)

from semcache import CacheSettings, SemanticCache  # noqa: E402
from semcache.server.app import create_app  # noqa: E402
from semcache.server.config import parse_config  # noqa: E402

ADMIN_KEY = "bench-admin"


def fill(lookups: int) -> SemanticCache:
    now = [1_700_000_000.0]
    step = 86_400 / lookups  # a day of 60 s buckets: all 1,440 kept
    settings = CacheSettings(store={"backend": "none"}, semantic={"enabled": False})
    cache = SemanticCache(settings, clock=lambda: now[0])
    for i in range(lookups):
        now[0] += step
        cache.completion(
            model="gpt-4o-mini",
            messages=[{"role": "user", "content": f"question {i % 2000}"}],
            mock_response="answer",
            tenant=f"tenant-{i % 150}",
        )
    return cache


def serve(cache: SemanticCache) -> tuple[uvicorn.Server, str]:
    config = parse_config(
        {
            "model_list": [{"model_name": "m", "litellm_params": {"model": "openai/gpt-4o-mini"}}],
            "clients": [{"key": "client", "tenant": "t"}],
            "server": {"admin_key": "os.environ/BENCH_ADMIN_KEY"},
        }
    )
    app = create_app(config, cache, environ={"BENCH_ADMIN_KEY": ADMIN_KEY})
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False)
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}"


def page_times(base: str, rounds: int) -> list[float] | None:
    binary, driver_path = shutil.which("chromium"), shutil.which("chromedriver")
    if binary is None or driver_path is None:
        return None
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.support.ui import WebDriverWait

    profile = tempfile.mkdtemp(prefix="semcache-bench-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*FLAGS, f"--user-data-dir={profile}", "--window-size=1280,1000"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    times = []
    try:
        driver.get(f"{base}/ui")
        driver.execute_script(f"sessionStorage.setItem('semcache-admin-key', '{ADMIN_KEY}')")
        for _ in range(rounds):
            driver.get(f"{base}/ui")
            rendered = WebDriverWait(driver, 30).until(
                lambda d: d.execute_script("return document.body.dataset.rendered")
            )
            times.append(float(rendered) / 1000.0)
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lookups", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    started = time.perf_counter()
    cache = fill(args.lookups)
    fill_s = time.perf_counter() - started
    stats = cache.lookups(buckets=None)
    assert stats.lookups == args.lookups
    server, base = serve(cache)
    headers = {"authorization": f"Bearer {ADMIN_KEY}"}
    json_s, size = [], 0
    for _ in range(args.rounds):
        t0 = time.perf_counter()
        response = httpx.get(f"{base}/admin/dashboard", headers=headers, timeout=60)
        json_s.append(time.perf_counter() - t0)
        size = len(response.content)
    pages = page_times(base, args.rounds)
    server.should_exit = True
    cache.close()
    summary = {
        "lookups": args.lookups,
        "fill_s": round(fill_s, 1),
        "buckets_kept": len(stats.history),
        "buckets_shown": 60,
        "tenants": len(stats.tenants),
        "dashboard_json_bytes": size,
        "dashboard_json_s_median": round(statistics.median(json_s), 4),
        "page_load_s_median": None if pages is None else round(statistics.median(pages), 3),
        "page_load_s_max": None if pages is None else round(max(pages), 3),
        "target_s": 1.0,
    }
    print(json.dumps(summary, indent=2))


if __name__ == "__main__":
    main()

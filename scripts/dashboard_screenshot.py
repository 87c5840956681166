"""Take docs/dashboard.png: the dashboard of a proxy after half an hour of simulated traffic.

A proxy in this process (a loopback fake upstream, the test embedder, an in-memory store)
answers two tenants' questions over 30 one-minute buckets (a clock the cache reads), with
exact repeats, paraphrases that hit and paraphrases that just miss; shadow verification
samples the semantic hits, so the live estimate has verdicts; all but 8 near misses are
labeled through the API (yes when both name the same animal); then headless Chromium
(Debian's ``chromium`` and ``chromium-driver``) opens ``/ui`` and saves the page.

    python scripts/dashboard_screenshot.py [--out docs/dashboard.png]
"""

from __future__ import annotations

import argparse
import random
import sys
import threading
import time
from pathlib import Path

import httpx
import uvicorn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "server"))

from browser import chromium  # noqa: E402

from semcache import CacheSettings, SemanticCache  # noqa: E402
from semcache.server.app import create_app  # noqa: E402
from semcache.server.config import parse_config  # noqa: E402
from semcache.testing import FakeEmbedder, FakeOpenAIServer, InMemoryStore  # noqa: E402

ADMIN = "admin-key"
KEYS = {"team-a": "key-a", "team-b": "key-b"}
TOPICS = [
    "spider",
    "octopus",
    "beetle",
    "crab",
    "lobster",
    "shrimp",
    "ant",
    "horse",
    "eagle",
    "snail",
]
CLOSE = ["today", "exactly", "usually"]  # one word more: cosine 0.94, a hit at 0.9
FAR = ["in total", "on average", "when grown", "at birth"]  # two more: 0.88, a near miss


def topic_of(text: str) -> str:
    return next((t for t in TOPICS if t in text.split()), "it")


def answer(body: dict) -> str:
    return f"A {topic_of(body['messages'][-1]['content'])} has the legs its kind has."


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "dashboard.png")
    args = parser.parse_args()
    upstream = FakeOpenAIServer(responder=answer).start()
    config = parse_config(
        {
            "model_list": [
                {
                    "model_name": "fast",
                    "litellm_params": {
                        "model": "openai/gpt-4o-mini",
                        "api_base": upstream.api_base,
                        "api_key": "os.environ/UPSTREAM",
                    },
                }
            ],
            "clients": [{"key": k, "tenant": t} for t, k in KEYS.items()],
            "server": {"admin_key": "os.environ/ADMIN"},
        }
    )
    now = [time.time() - 30 * 60]
    settings = CacheSettings(
        semantic={"threshold": 0.9, "verifier": "none"},
        tuning={"miss_margin": 0.05, "delta": 0.2},
        verify={"sample_rate": 0.5, "seed": 1},
    )
    cache = SemanticCache(
        settings, embedder=FakeEmbedder(dim=512), store=InMemoryStore(), clock=lambda: now[0]
    )
    app = create_app(config, cache, environ={"ADMIN": ADMIN, "UPSTREAM": "sk-fake"})
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=0, log_config=None, access_log=False)
    )
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.01)
    base = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
    rng = random.Random(7)
    with httpx.Client(base_url=base, timeout=30) as client:
        for minute in range(30):
            now[0] += 60
            for _ in range(20 + minute):
                tenant = rng.choice(list(KEYS))
                topic = rng.choice(TOPICS)
                question = f"how many legs does a {topic} have"
                kind = rng.random()
                if kind < 0.3:
                    text = question
                elif kind < 0.45 + minute / 100:
                    text = f"{question} {rng.choice(CLOSE)}"
                else:
                    text = f"{question} {rng.choice(FAR)}"
                client.post(
                    "/v1/chat/completions",
                    json={"model": "fast", "messages": [{"role": "user", "content": text}]},
                    headers={"authorization": f"Bearer {KEYS[tenant]}"},
                )
            cache.flush()
        cache.drain_tuning()
        admin = {"authorization": f"Bearer {ADMIN}"}
        for _ in range(3):  # label all but the last 8 near misses: yes when same animal
            rows = client.get("/admin/dashboard", headers=admin).json()["near_misses"]
            for row in rows[:-8]:
                same = topic_of(row["text_a"]) == topic_of(row["text_b"])
                client.post(
                    "/admin/dashboard/labels",
                    json={"id": row["id"], "correct": same},
                    headers=admin,
                )
    with chromium() as driver:
        driver.get(f"{base}/ui")
        driver.execute_script(f"sessionStorage.setItem('semcache-admin-key', '{ADMIN}')")
        driver.get(f"{base}/ui")
        while not driver.execute_script("return document.body.dataset.rendered"):
            time.sleep(0.05)
        height = driver.execute_script("return document.documentElement.scrollHeight")
        driver.set_window_size(1280, height + 40)
        time.sleep(0.3)
        driver.save_screenshot(str(args.out))
    server.should_exit = True
    cache.close()
    upstream.stop()
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()

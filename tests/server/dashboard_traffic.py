"""Traffic for the dashboard tests: 20 stored questions and 20 paraphrases that come close
(cosine 0.88 with ``FakeEmbedder(dim=512)``: two words more) but miss at threshold 0.9, so
each is a near miss to label; ``tuning.delta`` 0.2 lets 20 "yes" labels certify a looser
threshold."""

from __future__ import annotations

from pathlib import Path

import httpx
from proxy_harness import ADMIN_KEY, CLIENT_KEYS, proxy_config

from semcache import SemanticCache
from semcache.server.config import ProxyConfig
from semcache.testing import FakeEmbedder, InMemoryStore

TOPICS = [
    "spider",
    "octopus",
    "river",
    "mountain",
    "violin",
    "bicycle",
    "volcano",
    "glacier",
    "comet",
    "tulip",
    "falcon",
    "lantern",
    "harbor",
    "meadow",
    "canyon",
    "quartz",
    "walrus",
    "saffron",
    "cobalt",
    "pyramid",
]
QUESTIONS = [f"how many legs does a {t} have" for t in TOPICS]
EXTRAS = [
    "on average",
    "as adults",
    "at birth",
    "in winter",
    "right now",
    "these days",
    "in theory",
    "in practice",
    "for sure",
    "all told",
    "at most",
    "at least",
    "in general",
    "most often",
    "by count",
    "in captivity",
    "when grown",
    "in summer",
    "by default",
    "in nature",
]
PARAPHRASES = [f"{q} {extra}" for q, extra in zip(QUESTIONS, EXTRAS, strict=True)]
#: Close to ``QUESTIONS[0]`` (cosine 0.88) and asked only after a looser threshold is served.
LATER = f"{QUESTIONS[0]} ever recorded"
THRESHOLD = 0.9
ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


def dashboard_config(api_base: str, labels: Path) -> ProxyConfig:
    return proxy_config(
        api_base,
        semantic={"threshold": THRESHOLD, "verifier": "none"},
        tuning={"miss_margin": 0.03, "delta": 0.2, "labels_path": str(labels)},
    )


def dashboard_cache(config: ProxyConfig) -> SemanticCache:
    return SemanticCache(config.cache, embedder=FakeEmbedder(dim=512), store=InMemoryStore())


def chat(base: str, text: str, tenant: str = "team-a") -> httpx.Response:
    response = httpx.post(
        f"{base}/v1/chat/completions",
        json={"model": "fast", "messages": [{"role": "user", "content": text}]},
        headers={"authorization": f"Bearer {CLIENT_KEYS[tenant]}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response


def traffic(base: str, cache: SemanticCache) -> None:
    """Store the questions (team-a), repeat two (exact hits), then the paraphrases miss
    near them; team-b asks one question of its own."""
    for question in QUESTIONS:
        chat(base, question)
    cache.flush()
    for question in QUESTIONS[:2]:
        tier = chat(base, question).headers["x-semcache-tier"]
        assert tier == "exact", tier
    for paraphrase in PARAPHRASES:
        headers = chat(base, paraphrase).headers
        assert headers["x-semcache-tier"] == "miss", dict(headers)
    chat(base, QUESTIONS[0], tenant="team-b")
    cache.flush()
    cache.drain_tuning()


def dashboard(base: str) -> dict:
    response = httpx.get(f"{base}/admin/dashboard", headers=ADMIN, timeout=30)
    assert response.status_code == 200, response.text
    return response.json()

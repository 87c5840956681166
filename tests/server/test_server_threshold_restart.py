"""An applied threshold survives a restart when ``tuning.thresholds_path`` is set: written
before it is served, read back by the composition root, overruled by a changed config."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from proxy_harness import ADMIN_KEY, ENVIRON, LiveServer, proxy_config

from semcache import CacheSettings, SemanticCache
from semcache.errors import ConfigError
from semcache.server.app import create_app
from semcache.testing import FakeEmbedder, FakeOpenAIServer, InMemoryStore

ADMIN = {"authorization": f"Bearer {ADMIN_KEY}"}


def _settings(path: Path, threshold: float = 0.95, **tuning: Any) -> dict[str, Any]:
    return {
        "semantic": {"threshold": threshold, "verifier": "none"},
        "tuning": {"thresholds_path": str(path), **tuning},
    }


class Proxy:
    """One proxy process's life: started, asked, stopped (a restart is a new one)."""

    def __init__(self, upstream: FakeOpenAIServer, **cache: Any) -> None:
        config = proxy_config(upstream.api_base, **cache)
        self.cache = SemanticCache(config.cache, embedder=FakeEmbedder(), store=InMemoryStore())
        self.live = LiveServer(create_app(config, self.cache, environ=ENVIRON)).start()

    def served(self) -> dict[str, Any]:
        got = httpx.get(f"{self.live.base_url}/admin/threshold", headers=ADMIN, timeout=10)
        assert got.status_code == 200, got.text
        return got.json()

    def apply(self, threshold: float, namespace: str | None = None) -> httpx.Response:
        body = {"threshold": threshold, "namespace": namespace}
        return httpx.post(
            f"{self.live.base_url}/admin/threshold", json=body, headers=ADMIN, timeout=10
        )

    def stop(self) -> None:
        self.live.stop()
        self.cache.close()


def test_an_applied_threshold_is_served_after_a_restart(upstream, tmp_path) -> None:
    path = tmp_path / "thresholds.json"
    first = Proxy(upstream, **_settings(path))
    try:
        assert first.served()["threshold"] == 0.95
        assert first.apply(0.83).status_code == 200
        assert first.apply(0.9, namespace="faq").status_code == 200
        assert first.served()["threshold"] == 0.83
        board = httpx.get(f"{first.live.base_url}/admin/dashboard", headers=ADMIN, timeout=10)
        assert board.json()["threshold"]["persisted"] is True  # the page says it is kept
    finally:
        first.stop()
    assert json.loads(path.read_text())["applied"] == {
        "threshold": 0.83,
        "namespace_thresholds": {"faq": 0.9},
    }
    second = Proxy(upstream, **_settings(path))
    try:
        served = second.served()
        assert served["threshold"] == 0.83 and served["namespace_thresholds"] == {"faq": 0.9}
        # a reload of the unchanged config keeps it too
        reloaded = httpx.post(f"{second.live.base_url}/admin/reload", headers=ADMIN, timeout=10)
        assert reloaded.status_code == 200 and second.served()["threshold"] == 0.83
    finally:
        second.stop()


def test_a_changed_configured_threshold_wins_over_an_older_apply(upstream, tmp_path) -> None:
    path = tmp_path / "thresholds.json"
    first = Proxy(upstream, **_settings(path))
    try:
        assert first.apply(0.83).status_code == 200
    finally:
        first.stop()
    edited = Proxy(upstream, **_settings(path, threshold=0.9))
    try:
        assert edited.served()["threshold"] == 0.9
    finally:
        edited.stop()


def test_without_the_setting_a_restart_serves_the_configured_threshold(upstream, tmp_path) -> None:
    first = Proxy(upstream, semantic={"threshold": 0.95, "verifier": "none"})
    try:
        assert first.apply(0.83).status_code == 200
    finally:
        first.stop()
    second = Proxy(upstream, semantic={"threshold": 0.95, "verifier": "none"})
    try:
        assert second.served()["threshold"] == 0.95
    finally:
        second.stop()
    assert list(tmp_path.iterdir()) == []


def test_a_write_that_fails_changes_nothing(tmp_path) -> None:
    folder = tmp_path / "state"
    settings = CacheSettings(**_settings(folder / "thresholds.json"))
    with SemanticCache(settings, embedder=FakeEmbedder(), store=InMemoryStore()) as cache:
        folder.write_text("a file where the folder should be")  # the write cannot land
        with pytest.raises(OSError):
            cache.serve_threshold(0.8)
        assert cache.served_thresholds() == (0.95, {})


def test_an_unreadable_file_is_an_error_naming_it(tmp_path) -> None:
    path = tmp_path / "thresholds.json"
    path.write_text('{"applied": {"threshold": 7}}')
    with pytest.raises(ConfigError, match=r"thresholds_path.*applied\.threshold"):
        SemanticCache(
            CacheSettings(**_settings(path)), embedder=FakeEmbedder(), store=InMemoryStore()
        )

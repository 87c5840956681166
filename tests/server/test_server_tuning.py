"""The tuning loop on the proxy: tenant-scoped feedback, admin misses/labels, metrics, and
calibrate --apply reaching a running proxy through POST /admin/threshold."""

from __future__ import annotations

import json
import random
import re

import httpx
import pytest
from proxy_harness import ADMIN_KEY, CLIENT_KEYS, ENVIRON, LiveServer, proxy_config

from semcache import CacheSettings, SemanticCache
from semcache.eval.cli import calibrate_main
from semcache.server.app import create_app
from semcache.testing import FakeEmbedder, FakeOpenAIServer, InMemoryStore
from semcache.tuning.misses_cli import misses_main

QUESTION = "how many legs does a spider have"
PARAPHRASE = "how many legs does a spider have please"


def _cache(config):
    return SemanticCache(config.cache, embedder=FakeEmbedder(), store=InMemoryStore())


def _chat(base: str, text: str, tenant: str = "team-a") -> httpx.Response:
    response = httpx.post(
        f"{base}/v1/chat/completions",
        json={"model": "fast", "messages": [{"role": "user", "content": text}]},
        headers={"authorization": f"Bearer {CLIENT_KEYS[tenant]}"},
        timeout=10,
    )
    assert response.status_code == 200, response.text
    return response


def _feedback(base: str, body: dict, tenant: str | None = "team-a", path: str = "/v1/feedback"):
    headers = {} if tenant is None else {"authorization": f"Bearer {CLIENT_KEYS[tenant]}"}
    return httpx.post(f"{base}{path}", json=body, headers=headers, timeout=10)


@pytest.fixture
def proxy(start_proxy, upstream: FakeOpenAIServer):
    config = proxy_config(upstream.api_base, semantic={"threshold": 0.8, "verifier": "none"})
    return start_proxy(cache=_cache(config), config=config)


def test_feedback_is_tenant_scoped_and_withdraws_at_once(proxy) -> None:
    base = proxy.base_url
    _chat(base, QUESTION)
    proxy.cache.flush()
    hit = _chat(base, PARAPHRASE)
    assert hit.headers["x-semcache-tier"] == "semantic"
    serve_id, key = hit.headers["x-semcache-serve-id"], hit.headers["x-semcache-key"]
    # another tenant can neither mark it nor tell it exists
    for ref in (serve_id, key):
        refused = _feedback(base, {"id": ref, "correct": False}, tenant="team-b")
        assert refused.status_code == 404
        # without redis.url: says that only the serving process knows it, and what to do
        message = refused.json()["error"]["message"]
        assert "known only to the process that served" in message and "redis.url" in message
    assert _chat(base, PARAPHRASE).headers["x-semcache-tier"] == "semantic"
    assert _feedback(base, {"id": serve_id, "correct": False}, tenant=None).status_code == 401
    bad = _feedback(base, {"id": serve_id, "correct": "no"})
    assert bad.status_code == 400 and "correct" in bad.json()["error"]["message"]
    assert _chat(base, PARAPHRASE).headers["x-semcache-tier"] == "semantic"
    # the owner marks it wrong: gone at once
    done = _feedback(base, {"id": serve_id, "correct": False}, path="/feedback")
    assert done.status_code == 200 and done.json()["withdrawn"] is True
    assert _chat(base, PARAPHRASE).headers["x-semcache-tier"] == "miss"
    admin = {"authorization": f"Bearer {ADMIN_KEY}"}
    assert httpx.get(f"{base}/admin/labels", timeout=10).status_code == 401
    labels = httpx.get(f"{base}/admin/labels", headers=admin, timeout=10).json()["data"]
    assert [(r["text_a"], r["text_b"], r["label"]) for r in labels] == [(PARAPHRASE, QUESTION, 0)]
    metrics = httpx.get(f"{base}/metrics", timeout=10).text
    assert 'semcache_feedback_total{verdict="wrong"} 1.0' in metrics


def test_admin_misses_lists_near_misses(
    start_proxy, upstream: FakeOpenAIServer, tmp_path, monkeypatch, capsys
) -> None:
    config = proxy_config(
        upstream.api_base,
        semantic={"threshold": 0.99, "verifier": "none"},
        tuning={"miss_margin": 0.3},
    )
    proxy = start_proxy(cache=_cache(config), config=config)
    _chat(proxy.base_url, QUESTION)
    proxy.cache.flush()
    _chat(proxy.base_url, PARAPHRASE)
    proxy.cache.drain_tuning()
    assert httpx.get(f"{proxy.base_url}/admin/misses", timeout=10).status_code == 401
    body = httpx.get(
        f"{proxy.base_url}/admin/misses",
        headers={"authorization": f"Bearer {ADMIN_KEY}"},
        timeout=10,
    ).json()
    [cluster] = body["clusters"]
    assert cluster["question"] == QUESTION and cluster["count"] == 1
    assert body["rows"][0]["text_a"] == PARAPHRASE and body["rows"][0]["label"] is None
    # the command line: the same clusters, and a file to label
    monkeypatch.setenv("TEST_PROXY_ADMIN_KEY", ADMIN_KEY)
    out = tmp_path / "misses.jsonl"
    argv = ["--url", proxy.base_url, "--admin-key-env", "TEST_PROXY_ADMIN_KEY", "--out", str(out)]
    assert misses_main(argv) == 0
    assert QUESTION in capsys.readouterr().out
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert (row["text_a"], row["text_b"], row["label"]) == (PARAPHRASE, QUESTION, None)


def test_shadow_estimate_is_exported(start_proxy, upstream: FakeOpenAIServer) -> None:
    config = proxy_config(
        upstream.api_base,
        semantic={"threshold": 0.8, "verifier": "none"},
        verify={"sample_rate": 1.0, "seed": 0},
    )
    proxy = start_proxy(cache=_cache(config), config=config)
    _chat(proxy.base_url, QUESTION)
    proxy.cache.flush()
    _chat(proxy.base_url, PARAPHRASE)  # the echo upstream answers each text differently
    proxy.cache.drain_tuning()
    metrics = httpx.get(f"{proxy.base_url}/metrics", timeout=10).text
    assert 'semcache_false_hit_verdicts{namespace="default"} 1.0' in metrics
    # one right verdict is no evidence that delta is exceeded: no alert (issue 24 item 8)
    assert 'semcache_false_hit_alert{namespace="default"} 0.0' in metrics
    assert "semcache_shadow_calls_total 1.0" in metrics


def test_calibrate_apply_reaches_a_running_proxy(
    tmp_path, upstream: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = tmp_path / "semcache.env"
    env.write_text("SEMCACHE_SEMANTIC__THRESHOLD=0.99\n")
    config = proxy_config(upstream.api_base, semantic={"threshold": 0.99, "verifier": "none"})
    cache = _cache(config)
    app = create_app(
        config, cache, environ=ENVIRON, settings_source=lambda: CacheSettings(_env_file=env)
    )
    server = LiveServer(app).start()
    try:
        _chat(server.base_url, QUESTION)
        cache.flush()
        assert _chat(server.base_url, PARAPHRASE).headers["x-semcache-tier"] == "miss"
        # labeled pairs as the cache records them: right above 0.75, wrong below
        rng = random.Random(0)
        labels = tmp_path / "labels.jsonl"
        with labels.open("w") as handle:
            for i in range(900):
                sim = rng.uniform(0.6, 1.0)
                row = {
                    "text_a": f"q{i}",
                    "text_b": f"s{i}",
                    "label": int(sim >= 0.75),
                    "similarity": sim,
                }
                handle.write(json.dumps(row) + "\n")
        monkeypatch.setenv("TEST_PROXY_ADMIN_KEY", ADMIN_KEY)
        status = calibrate_main(
            [
                "--labels",
                str(labels),
                "--target",
                "0.05",
                "--current",
                "0.99",
                "--max-change",
                "0.3",
                "--apply",
                "--save",
                str(env),
                "--reload-url",
                server.base_url,
                "--admin-key-env",
                "TEST_PROXY_ADMIN_KEY",
            ]
        )
        assert status == 0
        saved = CacheSettings(_env_file=env).semantic.threshold
        assert 0.74 < saved < 0.8
        # served with the new threshold without a restart
        assert _chat(server.base_url, PARAPHRASE + " now").headers["x-semcache-tier"] == "semantic"
    finally:
        server.stop()
        cache.close()


def test_calibrate_reports_without_apply(tmp_path, capsys: pytest.CaptureFixture) -> None:
    labels = tmp_path / "labels.jsonl"
    rng = random.Random(1)
    rows = []
    for i in range(900):
        sim = rng.uniform(0.6, 1.0)
        rows.append(
            {"text_a": f"q{i}", "text_b": f"s{i}", "label": int(sim >= 0.8), "similarity": sim}
        )
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = tmp_path / "x.env"
    assert (
        calibrate_main(
            ["--labels", str(labels), "--target", "0.05", "--current", "0.9", "--save", str(env)]
        )
        == 0
    )
    out = capsys.readouterr().out
    assert "threshold 0.9000 ->" in out and "before: served" in out and "after: served" in out
    assert "not applied" in out and not env.exists()
    rows[0]["label"] = None
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert calibrate_main(["--labels", str(labels), "--target", "0.05"]) == 2
    assert "label" in capsys.readouterr().err


def test_recalibration_walks_every_labeled_row_unless_a_holdout_is_asked(
    tmp_path, capsys: pytest.CaptureFixture
) -> None:
    """Issue 25: the labels are the scarce thing, so by default every row goes into the
    walk (the binomial test needs no second sample); ``--holdout`` sets a share aside."""
    labels = tmp_path / "labels.jsonl"
    rng = random.Random(2)
    rows = []
    for i in range(600):
        sim = rng.uniform(0.6, 1.0)
        rows.append(
            {"text_a": f"q{i}", "text_b": f"s{i}", "label": int(sim >= 0.8), "similarity": sim}
        )
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["--labels", str(labels), "--target", "0.05", "--current", "0.9"]
    assert calibrate_main(base) == 0
    out = capsys.readouterr().out
    assert "of 600 labeled (the walk's own" in out
    hits_all = int(re.search(r"false of (\d+) hits", out).group(1))  # type: ignore[union-attr]
    assert calibrate_main([*base, "--holdout", "0.5"]) == 0
    out = capsys.readouterr().out
    assert "of 300 held-out pairs" in out
    hits_half = int(re.search(r"false of (\d+) hits", out).group(1))  # type: ignore[union-attr]
    assert hits_all > 1.6 * hits_half  # the walk saw about twice the rows


def test_calibrate_changes_nothing_when_the_current_threshold_is_not_certified(
    tmp_path, capsys: pytest.CaptureFixture
) -> None:
    rng = random.Random(2)
    rows = [
        {
            "text_a": f"q{i}",
            "text_b": f"s{i}",
            "label": int(rng.random() < 0.8),
            "similarity": rng.uniform(0.8, 1.0),
        }
        for i in range(400)
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    env = tmp_path / "x.env"
    argv = [
        "--labels",
        str(labels),
        "--target",
        "0.05",
        "--current",
        "0.85",
        "--apply",
        "--save",
        str(env),
    ]
    assert calibrate_main(argv) == 1  # 20% wrong everywhere: nothing certified
    assert "no change" in capsys.readouterr().out and not env.exists()

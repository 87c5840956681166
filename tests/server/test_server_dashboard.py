"""The dashboard's JSON API on a live proxy: lookups by tier and tenant, near misses to
label (written where ``calibrate --labels`` reads them), the what-if, and apply."""

from __future__ import annotations

import httpx
import pytest
from dashboard_traffic import (
    ADMIN,
    LATER,
    PARAPHRASES,
    THRESHOLD,
    chat,
    dashboard,
    dashboard_cache,
    dashboard_config,
    traffic,
)

from semcache.eval.recalibrate import read_recorded
from semcache.testing import FakeOpenAIServer


@pytest.fixture
def proxy(start_proxy, upstream: FakeOpenAIServer, tmp_path):
    config = dashboard_config(upstream.api_base, tmp_path / "labels.jsonl")
    proxy = start_proxy(cache=dashboard_cache(config), config=config)
    proxy.labels = tmp_path / "labels.jsonl"
    return proxy


def test_page_holds_no_data_and_the_data_needs_the_admin_key(proxy) -> None:
    base = proxy.base_url
    page = httpx.get(f"{base}/ui", timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert "default-src 'none'" in page.headers["content-security-policy"]
    text = page.text.replace("http://www.w3.org/2000/svg", "")  # a name, never fetched
    assert "http://" not in text and "https://" not in text and " src=" not in text
    assert httpx.get(f"{base}/admin/dashboard", timeout=10).status_code == 401
    wrong = {"authorization": "Bearer key-a"}  # a client key is no admin key
    assert httpx.get(f"{base}/admin/dashboard", headers=wrong, timeout=10).status_code == 401
    posted = httpx.post(f"{base}/admin/dashboard/labels", json={"id": "x", "correct": True})
    assert posted.status_code == 401


def test_lookups_by_tier_and_tenant_and_the_near_misses(proxy) -> None:
    traffic(proxy.base_url, proxy.cache)
    body = dashboard(proxy.base_url)
    lookups = body["lookups"]
    assert lookups["tenants"]["team-a"] == {"miss": 40, "exact": 2}
    assert lookups["tenants"]["team-b"] == {"miss": 1}
    assert lookups["lookups"] == 43 and lookups["hits"] == 2
    # every miss that had a candidate: 19 questions (after the first) and 20 paraphrases
    assert sum(lookups["miss_similarity"]) == 39 and sum(lookups["hit_similarity"]) == 0
    history = lookups["history"]
    assert sum(b["tenants"]["team-a"][1] for b in history if "team-a" in b["tenants"]) == 42
    assert sum(b["tenants"]["team-a"][0] for b in history if "team-a" in b["tenants"]) == 2
    by_tier = [b["tenant_tiers"]["team-a"] for b in history if "team-a" in b["tenant_tiers"]]
    assert sum(t.get("exact", 0) for t in by_tier) == 2
    assert sum(t.get("miss", 0) for t in by_tier) == 40
    assert body["threshold"]["persisted"] is False  # no tuning.thresholds_path
    assert body["threshold"]["default"] == THRESHOLD
    assert len(body["near_misses"]) == 20
    assert {row["text_a"] for row in body["near_misses"]} == set(PARAPHRASES)
    assert body["what_if"]["certified"] is None and body["what_if"]["pairs"] == 0
    assert body["estimate"]["delta"] == 0.2
    # cache.stats() carries the same lookups for library users
    stats = proxy.cache.stats()
    assert stats.lookups is not None and stats.lookups.tenants["team-a"]["exact"] == 2


def test_labels_land_where_calibrate_reads_them_and_certify_a_threshold(proxy) -> None:
    base = proxy.base_url
    traffic(base, proxy.cache)
    bad = httpx.post(
        f"{base}/admin/dashboard/labels", json={"id": "nope", "correct": True}, headers=ADMIN
    )
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "id"
    rows = dashboard(base)["near_misses"]
    for row in rows:
        done = httpx.post(
            f"{base}/admin/dashboard/labels",
            json={"id": row["id"], "correct": True},
            headers=ADMIN,
            timeout=10,
        )
        assert done.status_code == 200, done.text
    body = dashboard(base)
    assert body["near_misses"] == [] and body["labels"]["by_source"] == {"review:yes": 20}
    recorded = read_recorded(proxy.labels)  # calibrate --labels' own reader
    assert len(recorded) == 20 and {r.label for r in recorded} == {1}
    whatif = body["what_if"]
    certified = whatif["certified"]
    assert certified is not None and certified < THRESHOLD
    served = {round(r["threshold"], 4): r["served"] for r in whatif["rows"]}
    assert served[THRESHOLD] == 0.0 and served[0.85] == 1.0
    # apply: the route the page's confirmation calls; the next paraphrase hits
    applied = httpx.post(
        f"{base}/admin/threshold", json={"threshold": certified}, headers=ADMIN, timeout=10
    )
    assert applied.status_code == 200 and applied.json()["threshold"] == certified
    served_now = httpx.get(f"{base}/admin/threshold", headers=ADMIN, timeout=10).json()
    assert served_now["threshold"] == certified
    assert chat(base, LATER).headers["x-semcache-tier"] == "semantic"

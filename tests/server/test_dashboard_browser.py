"""The dashboard in a real browser (headless Chromium): a proxy under traffic, an operator
labels 20 near misses with the keyboard, the what-if moves, apply (confirmed) serves the
certified threshold, and a following request hits with it.

``DASHBOARD_SCREENSHOT=docs/dashboard.png`` saves the page (after labeling) for the README.
"""

from __future__ import annotations

import os

import httpx
import pytest
from browser import chromium, need_browser
from dashboard_traffic import (
    ADMIN,
    LATER,
    THRESHOLD,
    chat,
    dashboard_cache,
    dashboard_config,
    traffic,
)
from proxy_harness import ADMIN_KEY

from semcache.testing import FakeOpenAIServer

pytestmark = pytest.mark.timeout(300)


def _text(driver, element_id: str) -> str:
    return driver.find_element("id", element_id).text


def _tier_counts(driver) -> dict[str, int]:
    """The hits the time chart draws, by tier (each bar segment carries its count), read
    in one script so a re-render cannot interleave."""
    return driver.execute_script(
        "const c = {};"
        "for (const r of document.querySelectorAll('#time-chart rect[data-tier]'))"
        "  c[r.dataset.tier] = (c[r.dataset.tier] || 0) + Number(r.dataset.count);"
        "return c;"
    )


def test_label_near_misses_then_apply_the_certified_threshold(
    start_proxy, upstream: FakeOpenAIServer, tmp_path
) -> None:
    need_browser()
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select, WebDriverWait

    config = dashboard_config(upstream.api_base, tmp_path / "labels.jsonl")
    proxy = start_proxy(cache=dashboard_cache(config), config=config)
    base = proxy.base_url
    traffic(base, proxy.cache)
    with chromium() as driver:
        wait = WebDriverWait(driver, 20)
        driver.get(f"{base}/ui")
        key = wait.until(lambda d: d.find_element("id", "key"))
        assert driver.find_element("id", "board").is_displayed() is False
        key.send_keys(ADMIN_KEY, Keys.ENTER)  # the keyboard alone
        wait.until(lambda d: d.find_element("id", "board").is_displayed())
        assert _text(driver, "threshold") == f"{THRESHOLD:.4f}"
        assert _text(driver, "certified") == "none"
        assert _text(driver, "lookups") == "43"
        # hit rate over time by tier: team-a's two exact hits, none for team-b
        assert _tier_counts(driver) == {"exact": 2}
        Select(driver.find_element("id", "tenant")).select_by_value("team-b")
        assert _tier_counts(driver) == {}
        Select(driver.find_element("id", "tenant")).select_by_value("team-a")
        assert _tier_counts(driver) == {"exact": 2}
        assert "exact" in _text(driver, "time-legend")
        before = _text(driver, "whatif")
        yes = "#misses button[data-correct='true']"
        assert len(driver.find_elements("css selector", yes)) == 20
        for done in range(1, 21):
            button = driver.find_element("css selector", yes)
            button.send_keys(Keys.ENTER)
            wait.until(lambda d, n=done: _text(d, "label-count") == str(n))
        assert driver.find_elements("css selector", yes) == []
        after = _text(driver, "whatif")
        assert after != before  # the what-if moved: the labels serve at looser thresholds
        certified = _text(driver, "certified")
        assert certified != "none" and float(certified) < THRESHOLD
        assert driver.find_element("css selector", "tr.certified").is_displayed()
        screenshot = os.environ.get("DASHBOARD_SCREENSHOT")
        if screenshot:
            height = driver.execute_script("return document.documentElement.scrollHeight")
            driver.set_window_size(1280, height + 40)
            driver.save_screenshot(screenshot)
            driver.set_window_size(1280, 1000)
        # apply, with its confirmation, by keyboard
        driver.find_element("id", "apply").send_keys(Keys.ENTER)
        confirm = wait.until(lambda d: d.find_element("id", "confirm-apply"))
        assert certified in _text(driver, "confirm-text")
        assert "is not saved" in _text(driver, "confirm-persist")
        confirm.send_keys(Keys.ENTER)
        wait.until(lambda d: _text(d, "threshold") == certified)
        assert "Now serving" in _text(driver, "status")
        # readable in a narrow window: nothing wider than the viewport
        driver.set_window_size(360, 800)
        overflow = driver.execute_script(
            "return document.documentElement.scrollWidth - window.innerWidth"
        )
        assert overflow <= 1
        served = httpx.get(f"{base}/admin/threshold", headers=ADMIN, timeout=10).json()
        assert f"{served['threshold']:.4f}" == certified
        assert chat(base, LATER).headers["x-semcache-tier"] == "semantic"
        # the semantic hit joins the chart after a refresh, stacked on the exact ones
        driver.set_window_size(1280, 1000)
        driver.find_element("id", "refresh").send_keys(Keys.ENTER)
        wait.until(lambda d: _tier_counts(d) == {"exact": 2, "semantic": 1})

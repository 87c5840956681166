"""Headless Chromium for the dashboard's browser tests: Debian's ``chromium`` and
``chromium-driver`` driven by Selenium, with a fresh profile and no background traffic.

Without a browser the tests skip with one line naming the install, except under CI
(``CI`` set), where a missing browser fails them: CI must run them.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

INSTALL = "apt-get install -y chromium chromium-driver (and pip install selenium)"
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
)


def _missing(why: str) -> None:
    message = f"no headless browser ({why}): {INSTALL}"
    if os.environ.get("CI"):
        pytest.fail(message)
    pytest.skip(message)


def need_browser() -> None:
    """Skip (fail under CI) now when there is no browser to drive."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        _missing("selenium is not installed")
    if shutil.which("chromium") is None or shutil.which("chromedriver") is None:
        _missing("chromium or chromedriver not found")


@contextmanager
def chromium(width: int = 1280, height: int = 1000) -> Iterator[Any]:
    """A Selenium driver of headless Chromium; skips (fails under CI) without one."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        _missing("selenium is not installed")
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if binary is None or driver_path is None:
        _missing("chromium or chromedriver not found")
    profile = tempfile.mkdtemp(prefix="semcache-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for flag in (*FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)

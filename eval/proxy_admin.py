"""The running proxy's threshold, read and set by ``semcache calibrate --reload-url``.

The proxy is the one source of truth for the threshold it serves, so recalibration starts
from what it reports, and ``--apply`` sets the new value there and reads it back: a proxy
that does not then serve the certified value is an error, never a quiet success.
"""

from __future__ import annotations

from typing import Any

from semcache.errors import ConfigError


def _call(method: str, url: str, admin_key: str | None, body: Any = None) -> dict[str, Any]:
    import httpx

    if admin_key is None:
        raise ConfigError("--reload-url needs the admin key in --admin-key-env's variable")
    target = url.rstrip("/") + "/admin/threshold"
    try:
        response = httpx.request(
            method,
            target,
            json=body,
            headers={"authorization": f"Bearer {admin_key}"},
            timeout=30,
        )
    except httpx.HTTPError as exc:
        raise ConfigError(f"{method} {target} failed: {exc}") from exc
    if response.status_code != 200:
        raise ConfigError(f"{method} {target} refused: HTTP {response.status_code} {response.text}")
    payload: dict[str, Any] = response.json()
    return payload


def served_threshold(url: str, admin_key: str | None, namespace: str | None) -> float:
    """The threshold the proxy at ``url`` serves now in ``namespace`` (default: its default)."""
    body = _call("GET", url, admin_key)
    if body.get("threshold") is None:
        raise ConfigError(f"the proxy at {url} has no semantic tier (no threshold to tune)")
    overrides = body.get("namespace_thresholds") or {}
    if namespace is not None and namespace in overrides:
        return float(overrides[namespace])
    return float(body["threshold"])


def serve_threshold(url: str, admin_key: str | None, value: float, namespace: str | None) -> float:
    """Set the proxy's threshold to ``value`` and read it back; ConfigError unless it serves
    exactly ``value`` afterwards. Returns the threshold served before."""
    before = served_threshold(url, admin_key, namespace)
    _call("POST", url, admin_key, {"threshold": value, "namespace": namespace})
    after = served_threshold(url, admin_key, namespace)
    if after != value:
        raise ConfigError(
            f"the proxy at {url} serves {after:.4f} after the change, not the certified {value:.4f}"
        )
    return before

"""What every route of one app shares: config, cache, keys, upstreams, metrics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from starlette.requests import Request

from semcache.server.auth import KeyRing
from semcache.server.config import ProxyConfig
from semcache.server.metrics import ProxyMetrics
from semcache.server.upstreams import UpstreamTable

if TYPE_CHECKING:
    from semcache.cache import SemanticCache


@dataclass(frozen=True, slots=True)
class Proxy:
    config: ProxyConfig
    cache: SemanticCache
    keys: KeyRing
    upstreams: UpstreamTable
    metrics: ProxyMetrics
    owns_cache: bool


def proxy_of(request: Request) -> Proxy:
    """The :class:`Proxy` of the app serving ``request``."""
    return cast(Proxy, request.app.state.proxy)


#: Methods of every read-only route: HEAD is answered as GET is (RFC 9110, section 9.3.2).
READ_METHODS = ["GET", "HEAD"]

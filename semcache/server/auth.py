"""Who is calling: client keys map to tenants, one separate key opens the admin API.

The tenant comes only from the key. Nothing a client sends in a body or header can choose
another tenant's partition, which is what keeps one tenant's cached answers from another.
The ``Authorization: Bearer`` header is read by FastAPI's ``HTTPBearer`` (:func:`bearer`);
keys are compared by digest in constant time.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Mapping

from fastapi.security import HTTPBearer
from pydantic import SecretStr
from starlette.requests import HTTPConnection

from semcache.errors import ConfigError
from semcache.server.config import ProxyConfig, resolve_secret

#: Never answers on its own (``auto_error=False``): each route sends its own OpenAI-shaped
#: 401, which clients and the tests expect.
_BEARER = HTTPBearer(auto_error=False)


async def bearer(request: HTTPConnection) -> str | None:
    """The token of the request's ``Authorization: Bearer <token>`` header, else None."""
    credentials = await _BEARER(request)
    return None if credentials is None else credentials.credentials


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8")).digest()


class KeyRing:
    """Resolves bearer tokens to tenants and recognises the admin key.

    Keys are held as SHA-256 digests and looked up by digest, so lookup time says nothing
    useful about how much of a guessed key was right, and the keys themselves are not kept.
    """

    def __init__(
        self,
        clients: Mapping[str, str],
        admin_key: SecretStr | None = None,
        metrics_key: SecretStr | None = None,
    ) -> None:
        self._tenants = {_digest(key): tenant for key, tenant in clients.items()}
        self._admin = None if admin_key is None else _digest(admin_key.get_secret_value())
        self._metrics = None if metrics_key is None else _digest(metrics_key.get_secret_value())

    @classmethod
    def from_config(cls, config: ProxyConfig, environ: Mapping[str, str] | None = None) -> KeyRing:
        """Read client and admin keys (``os.environ/NAME`` references resolved now)."""
        clients: dict[str, str] = {}
        for i, client in enumerate(config.clients):
            field = f"clients[{i}].key"
            key = resolve_secret(client.key.get_secret_value(), field=field, environ=environ)
            if key.get_secret_value() in clients:
                raise ConfigError(f"{field}: the same client key is listed twice")
            clients[key.get_secret_value()] = client.tenant
        admin = config.server.admin_key
        admin_key = (
            None
            if admin is None
            else resolve_secret(admin, field="server.admin_key", environ=environ)
        )
        metrics = config.server.metrics_key
        metrics_key = (
            None
            if metrics is None
            else resolve_secret(metrics, field="server.metrics_key", environ=environ)
        )
        return cls(clients, admin_key, metrics_key)

    def tenant_for(self, token: str | None) -> str | None:
        """The tenant of a client's bearer token, or None when it is not valid."""
        return None if token is None else self._tenants.get(_digest(token))

    @property
    def admin_enabled(self) -> bool:
        return self._admin is not None

    def is_admin(self, token: str | None) -> bool:
        """True only for the admin key (a client key never opens the admin API)."""
        if token is None or self._admin is None:
            return False
        return hmac.compare_digest(_digest(token), self._admin)

    def may_read_metrics(self, token: str | None) -> bool:
        """True when /metrics is open (no metrics key set) or the metrics key was sent."""
        if self._metrics is None:
            return True
        return token is not None and hmac.compare_digest(_digest(token), self._metrics)

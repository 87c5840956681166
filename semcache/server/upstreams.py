"""Public model names and where each is sent, with the provider keys kept out of sight.

Provider keys live only here, as ``SecretStr``, and are handed to LiteLLM per call. Anything
the proxy writes back to a client or a log that could contain upstream text goes through
:meth:`UpstreamTable.redact` first.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import SecretStr

from semcache.server.config import ProxyConfig, resolve_secret

REDACTED = "[redacted]"


@dataclass(frozen=True, slots=True)
class Upstream:
    """One public model: the provider model LiteLLM calls, its base URL and key."""

    public_name: str
    model: str
    api_base: str | None = None
    api_key: SecretStr | None = field(default=None, repr=False)
    timeout: float | None = None
    max_retries: int | None = None

    def call_params(self) -> dict[str, Any]:
        """Keyword arguments for ``acompletion`` (only the options that are set)."""
        params: dict[str, Any] = {"model": self.model}
        if self.api_base is not None:
            params["api_base"] = self.api_base
        if self.api_key is not None:
            params["api_key"] = self.api_key.get_secret_value()
        if self.timeout is not None:
            params["timeout"] = self.timeout
        if self.max_retries is not None:
            params["max_retries"] = self.max_retries
        return params


class UpstreamTable:
    """Public name → :class:`Upstream`, in config order."""

    def __init__(self, upstreams: list[Upstream]) -> None:
        self._by_name = {upstream.public_name: upstream for upstream in upstreams}
        self._no_retry_clients: dict[str, Any] = {}
        self._secrets = sorted(
            {u.api_key.get_secret_value() for u in upstreams if u.api_key is not None},
            key=len,
            reverse=True,  # longest first, so a key containing another is fully replaced
        )

    @classmethod
    def from_config(
        cls, config: ProxyConfig, environ: Mapping[str, str] | None = None
    ) -> UpstreamTable:
        """Build the table, reading every provider key from the environment now."""
        upstreams = []
        for i, route in enumerate(config.model_list):
            params = route.litellm_params
            key = (
                None
                if params.api_key is None
                else resolve_secret(
                    params.api_key, field=f"model_list[{i}].litellm_params.api_key", environ=environ
                )
            )
            upstreams.append(
                Upstream(
                    public_name=route.model_name,
                    model=params.model,
                    api_base=params.api_base,
                    api_key=key,
                    timeout=params.timeout,
                    max_retries=params.max_retries,
                )
            )
        return cls(upstreams)

    def get(self, public_name: str) -> Upstream | None:
        return self._by_name.get(public_name)

    def embedding_params(self, public_name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` for ``aembedding``, with ``max_retries = 0`` honoured: LiteLLM's OpenAI
        embedding path turns 0 into 2, so OpenAI models get a client that keeps it at 0.
        """
        upstream = self._by_name.get(public_name)
        if upstream is None or upstream.max_retries != 0 or not _is_openai(upstream.model):
            return kwargs
        client = self._no_retry_clients.get(public_name)
        if client is None:
            client = _no_retry_client_class()(
                api_key=None if upstream.api_key is None else upstream.api_key.get_secret_value(),
                base_url=upstream.api_base,
                timeout=upstream.timeout if upstream.timeout is not None else 600.0,
            )
            self._no_retry_clients[public_name] = client
        return {**kwargs, "client": client}

    def names(self) -> list[str]:
        return list(self._by_name)

    def provider_model(self, name: str) -> str:
        """The provider model behind a public name; any other name is returned unchanged."""
        upstream = self._by_name.get(name)
        return name if upstream is None else upstream.model

    def redact(self, text: str) -> str:
        """``text`` with every provider key replaced by ``[redacted]``."""
        for secret in self._secrets:
            if secret in text:
                text = text.replace(secret, REDACTED)
        return text


def _is_openai(model: str) -> bool:
    import litellm  # lazy: imported with the cache anyway
    from litellm.exceptions import BadRequestError

    try:
        return bool(litellm.get_llm_provider(model)[1] == "openai")
    except BadRequestError:  # a model name LiteLLM cannot place
        return False


def _no_retry_client_class() -> type:
    import openai  # lazy: imported with LiteLLM anyway

    class NoRetryClient(openai.AsyncOpenAI):
        """An OpenAI client whose ``max_retries`` stays 0 whatever LiteLLM assigns."""

        @property
        def max_retries(self) -> int:
            return 0

        @max_retries.setter
        def max_retries(self, value: int) -> None:
            """Ignored: LiteLLM assigns ``max_retries or 2``."""

    return NoRetryClient

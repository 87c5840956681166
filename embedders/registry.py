"""Embedders by name, as the settings, the CLI and the eval harness spell them.

Names: ``minilm`` (default, bundled all-MiniLM-L6-v2), ``use-multilingual``,
``e5-small-4bit``, ``litellm:<model>`` (any embedding model LiteLLM can call), and otherwise
a sentence-transformers hub name (``org/model``) or a local model directory. Construction is
cheap and does no I/O; a model that cannot be found fails with
:class:`~semcache.errors.EmbedderError` on first use.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from semcache.errors import ConfigError

from .base import Embedder

_LITELLM_PREFIX = "litellm:"


RUNTIMES = ("torch", "onnx")


def _sentence_transformer(
    model: str, device: str, batch_size: int, precision: str, runtime: str
) -> Embedder:
    if runtime == "onnx":
        if precision not in ("auto", "float32") or device not in ("auto", "cpu"):
            raise ConfigError(
                "runtime 'onnx' runs float32 on the CPU: leave precision and device at 'auto'"
            )
        from .onnx_runtime import OnnxEmbedder

        return OnnxEmbedder(model, batch_size=batch_size)
    from .sentence_transformer import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(
        model, device=device, batch_size=batch_size, precision=precision
    )


def _minilm(device: str, batch_size: int, precision: str, runtime: str) -> Embedder:
    from .sentence_transformer import DEFAULT_MODEL

    return _sentence_transformer(DEFAULT_MODEL, device, batch_size, precision, runtime)


def _use(device: str, batch_size: int, precision: str, runtime: str) -> Embedder:
    from .use_multilingual import UseMultilingualEmbedder

    return UseMultilingualEmbedder(batch_size=batch_size)


def _e5(device: str, batch_size: int, precision: str, runtime: str) -> Embedder:
    from .e5_small import E5SmallEmbedder

    return E5SmallEmbedder(batch_size=batch_size)


_NAMED: dict[str, Callable[[str, int, str, str], Embedder]] = {
    "minilm": _minilm,
    "use-multilingual": _use,
    "e5-small-4bit": _e5,
}


def registered_names() -> tuple[str, ...]:
    """The fixed names :func:`load_embedder` knows (besides prefixes, hub names and paths)."""
    return tuple(_NAMED)


def _choices() -> str:
    return (
        ", ".join(repr(name) for name in _NAMED)
        + ", 'litellm:<model>', a sentence-transformers hub name ('org/model') "
        "or a local model directory"
    )


def load_embedder(
    name: str,
    *,
    device: str = "auto",
    batch_size: int = 64,
    precision: str = "auto",
    runtime: str = "torch",
) -> Embedder:
    """The embedder called ``name``; ``device``, ``precision`` and ``runtime`` apply to
    sentence-transformers models only (the others have one fixed build). ``runtime="onnx"``
    runs such a model with ONNX Runtime on the CPU (see :mod:`.onnx_runtime`).

    Raises :class:`~semcache.errors.ConfigError` for a name that is none of the choices.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"embedder name must be a non-empty string; choices: {_choices()}")
    name = name.strip()
    if runtime not in RUNTIMES:
        raise ConfigError(f"runtime {runtime!r} is not one of {', '.join(RUNTIMES)}")
    factory = _NAMED.get(name)
    if factory is not None:
        return factory(device, batch_size, precision, runtime)
    if name.startswith(_LITELLM_PREFIX):
        model = name.removeprefix(_LITELLM_PREFIX)
        if not model:
            raise ConfigError("'litellm:' needs a model, e.g. 'litellm:text-embedding-3-small'")
        from .litellm_embedder import LiteLLMEmbedder

        return LiteLLMEmbedder(model, batch_size=batch_size)
    path = Path(name).expanduser()
    if "/" in name or path.exists():
        return _sentence_transformer(name, device, batch_size, precision, runtime)
    raise ConfigError(f"unknown embedder {name!r}; choices: {_choices()}")

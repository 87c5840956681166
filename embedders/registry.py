"""Embedders by name, as the settings, the CLI and the eval harness spell them.

``minilm`` (default, bundled), ``use-multilingual``, ``e5-small-4bit``, ``litellm:<model>``,
else a sentence-transformers hub name or a local model directory. Construction does no I/O;
a model that cannot be found fails with :class:`~semcache.errors.EmbedderError` on first
use. ``runtime="auto"`` runs MiniLM on the CPU with ONNX Runtime when installed (same
vectors, a third of the CPU), everything else with PyTorch.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from semcache.errors import ConfigError

from .base import Embedder
from .readability import ANY, E5_MULTILINGUAL, ENGLISH, USE_MULTILINGUAL, Readability

_LITELLM_PREFIX = "litellm:"


RUNTIMES = ("auto", "torch", "onnx")
ONNX_ONLY_PRECISIONS = ("int8",)


@dataclass(frozen=True, slots=True)
class _Options:
    device: str
    batch_size: int
    precision: str
    runtime: str
    threads: int | None


def onnx_available() -> bool:
    """Is ONNX Runtime importable (checked without importing it)?"""
    return importlib.util.find_spec("onnxruntime") is not None


def resolve_runtime(runtime: str, *, device: str, precision: str, onnx_shaped: bool) -> str:
    """``torch`` or ``onnx`` for a sentence-transformers model; ``auto`` prefers ONNX where
    it gives the same vectors faster: a known-shaped model, on the CPU, float32 or int8."""
    if runtime != "auto":
        return runtime
    if precision in ONNX_ONLY_PRECISIONS:
        return "onnx"
    cpu_float32 = device in ("auto", "cpu") and precision in ("auto", "float32")
    return "onnx" if onnx_shaped and cpu_float32 and onnx_available() else "torch"


def _sentence_transformer(model: str, o: _Options, *, onnx_shaped: bool = False) -> Embedder:
    runtime = resolve_runtime(
        o.runtime, device=o.device, precision=o.precision, onnx_shaped=onnx_shaped
    )
    if runtime == "onnx":
        if o.precision not in ("auto", "float32", "int8") or o.device not in ("auto", "cpu"):
            raise ConfigError(
                "runtime 'onnx' runs float32 or int8 on the CPU: leave device at 'auto' and "
                "precision at 'auto' (or 'int8')"
            )
        from .onnx_runtime import OnnxEmbedder

        precision = "int8" if o.precision == "int8" else "float32"
        return OnnxEmbedder(model, batch_size=o.batch_size, threads=o.threads, precision=precision)
    if o.precision in ONNX_ONLY_PRECISIONS:
        raise ConfigError(f"precision {o.precision!r} needs runtime 'onnx' (or 'auto')")
    from .sentence_transformer import SentenceTransformerEmbedder

    return SentenceTransformerEmbedder(
        model, device=o.device, batch_size=o.batch_size, precision=o.precision, threads=o.threads
    )


def _minilm(o: _Options) -> Embedder:
    from .sentence_transformer import DEFAULT_MODEL

    return _sentence_transformer(DEFAULT_MODEL, o, onnx_shaped=True)


def _use(o: _Options) -> Embedder:
    from .use_multilingual import UseMultilingualEmbedder

    return UseMultilingualEmbedder(batch_size=o.batch_size, threads=o.threads)


def _e5(o: _Options) -> Embedder:
    from .e5_small import E5SmallEmbedder

    return E5SmallEmbedder(batch_size=o.batch_size, threads=o.threads)


_NAMED: dict[str, Callable[[_Options], Embedder]] = {
    "minilm": _minilm,
    "use-multilingual": _use,
    "e5-small-4bit": _e5,
}


_READS = {
    "minilm": ENGLISH,
    "sentence-transformers/all-MiniLM-L6-v2": ENGLISH,
    "use-multilingual": USE_MULTILINGUAL,
    "e5-small-4bit": E5_MULTILINGUAL,
}


def readability_for(name: str) -> Readability:
    """What the embedder :func:`load_embedder` would build for ``name`` declares it reads,
    without building it (the same constants the embedder classes return)."""
    return _READS.get(name.strip(), ANY) if isinstance(name, str) else ANY


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
    runtime: str = "auto",
    threads: int | None = None,
) -> Embedder:
    """The embedder called ``name``; ``device``, ``precision`` and ``runtime`` apply to
    sentence-transformers models only. ``runtime="onnx"`` runs one with ONNX Runtime on the CPU;
    ``"auto"`` does so for MiniLM when ``onnxruntime`` is installed. ``precision="int8"`` is ONNX
    Runtime's dynamic quantization. ``threads`` caps every local runtime's CPU threads (None:
    its default). Raises :class:`~semcache.errors.ConfigError` for an unknown name.
    """
    if not isinstance(name, str) or not name.strip():
        raise ConfigError(f"embedder name must be a non-empty string; choices: {_choices()}")
    name = name.strip()
    if runtime not in RUNTIMES:
        raise ConfigError(f"runtime {runtime!r} is not one of {', '.join(RUNTIMES)}")
    if threads is not None and (isinstance(threads, bool) or threads < 1):
        raise ConfigError(f"threads must be an int >= 1 or None, got {threads!r}")
    options = _Options(device, batch_size, precision, runtime, threads)
    factory = _NAMED.get(name)
    if factory is not None:
        return factory(options)
    if name.startswith(_LITELLM_PREFIX):
        model = name.removeprefix(_LITELLM_PREFIX)
        if not model:
            raise ConfigError("'litellm:' needs a model, e.g. 'litellm:text-embedding-3-small'")
        from .litellm_embedder import LiteLLMEmbedder

        return LiteLLMEmbedder(model, batch_size=batch_size)
    path = Path(name).expanduser()
    if "/" in name or path.exists():
        from .sentence_transformer import DEFAULT_MODEL

        return _sentence_transformer(name, options, onnx_shaped=name == DEFAULT_MODEL)
    raise ConfigError(f"unknown embedder {name!r}; choices: {_choices()}")

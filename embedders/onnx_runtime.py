"""A sentence-transformers model run by ONNX Runtime: the same vectors, a third of the latency.

On this 2-core CPU, PyTorch spends ~9 ms embedding one short question with all-MiniLM-L6-v2,
most of it per-operator overhead and unfused kernels; ONNX Runtime runs the same float32
graph in ~3 ms, and the vectors agree to ~1e-7. That is the latency of every semantic
lookup, so teams serving from CPUs will want it; batches gain less (PyTorch's big matrix
products are already efficient), which is why PyTorch stays the default.

The model is exported once (``torch.onnx.export``, about a second) into ``cache_dir``
(default ``$SEMCACHE_ONNX_CACHE`` or ``~/.cache/semcache/onnx``), keyed by the model's name
and its weight files, and reused by every later process. Only models of the usual shape are
accepted: a Hugging Face transformer, mean or CLS pooling, optionally a normalisation layer.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._buckets import token_batches
from ._common import Lazy, as_text_list, check_batch_size, import_optional
from .base import l2_normalise
from .sentence_transformer import DEFAULT_MODEL, SentenceTransformerEmbedder

_log = logging.getLogger(__name__)

POOLING_MODES = ("mean", "cls")
OPSET = 17


def default_cache_dir() -> Path:
    configured = os.environ.get("SEMCACHE_ONNX_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "semcache" / "onnx"


@dataclass
class _Runtime:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: Any  # a Hugging Face fast tokenizer
    max_length: int
    dim: int
    errors: tuple[type[BaseException], ...]  # what onnxruntime raises


def _ort_errors(ort: Any) -> tuple[type[BaseException], ...]:
    """onnxruntime's exception classes (pybind11 types deriving from Exception directly)."""
    state = ort.capi.onnxruntime_pybind11_state
    names: tuple[str, ...] = ("Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf")
    names += ("NoSuchFile", "NotImplemented", "RuntimeException", "EPFail")
    found = tuple(getattr(state, name) for name in names if hasattr(state, name))
    return (*found, RuntimeError)


class OnnxEmbedder:
    """The :class:`~semcache.embedders.SentenceTransformerEmbedder` model, run by ONNX Runtime.

    Same ``name`` as the PyTorch embedder of the same model: the vectors are the same to
    float32 rounding, so both may share a collection. The constructor does no I/O; the first
    ``dim`` or ``embed`` exports (once per cache) and loads the model.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        batch_size: int = 64,
        cache_dir: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        self._torch = SentenceTransformerEmbedder(model, device="cpu", batch_size=batch_size)
        self._batch_size = check_batch_size(batch_size)
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        if threads is not None and threads < 1:
            raise ConfigError(f"threads must be >= 1, got {threads}")
        self._threads = threads
        self._runtime: Lazy[_Runtime] = Lazy(self._load)

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.name!r})"

    @property
    def name(self) -> str:
        return self._torch.name

    @property
    def dim(self) -> int:
        return self._runtime.get().dim

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        runtime = self._runtime.get()
        vectors = np.zeros((len(texts), runtime.dim), dtype=np.float32)
        if not texts:
            return vectors
        with self._runtime.lock:  # the tokenizer is not thread-safe; one batch fills the CPU
            batches = token_batches(runtime.tokenizer, texts, runtime.max_length, self._batch_size)
            for rows in batches:
                features = runtime.tokenizer(
                    [texts[i] for i in rows],
                    padding=True,
                    truncation=True,
                    max_length=runtime.max_length,
                    return_tensors="np",
                )
                feed = {
                    "input_ids": features["input_ids"].astype(np.int64),
                    "attention_mask": features["attention_mask"].astype(np.int64),
                }
                try:
                    (pooled,) = runtime.session.run(None, feed)
                except runtime.errors as exc:
                    message = f"{self.name} (onnx) failed to embed {len(rows)} texts: {exc}"
                    raise EmbedderError(message) from exc
                vectors[rows] = pooled
        return l2_normalise(vectors)

    def _load(self) -> _Runtime:
        ort = import_optional("onnxruntime", package="onnxruntime", extra="onnx")
        model = self._torch.model  # the PyTorch model: tokenizer, config, export
        pooling = _pooling_mode(model)
        path = self._export_path(model)
        if not path.exists():
            import_optional("onnx", package="onnx", extra="onnx")  # torch.onnx.export needs it
            _export(model, pooling, path)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # ONNX Runtime's threads spin after each run by default: inside an application that
        # then searches a store and decodes JSON, the spinning stole those cores (GPTCache's
        # faiss search, measured beside it, went from 8 ms to 33 ms).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self._threads is not None:
            options.intra_op_num_threads = self._threads
        errors = _ort_errors(ort)
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except errors as exc:  # a truncated or foreign file: say where it is
            raise EmbedderError(f"could not load the ONNX export at {path}: {exc}") from exc
        dim = int(session.get_outputs()[0].shape[-1])
        _log.info("loaded embedder %s with onnxruntime from %s (dim %d)", self.name, path, dim)
        return _Runtime(session, model.tokenizer, int(model.max_seq_length or 512), dim, errors)

    def _export_path(self, model: Any) -> Path:
        """One export per model name and weight files (size and mtime), per opset."""
        digest = hashlib.sha256(f"{self.name}|opset{OPSET}".encode())
        folder = Path(model[0].auto_model.name_or_path)
        for weights in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
            stat = weights.stat()
            digest.update(f"|{weights.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        root = self._cache_dir if self._cache_dir is not None else default_cache_dir()
        return root / digest.hexdigest()[:24] / "model.onnx"


def _pooling_mode(model: Any) -> str:
    modules = [type(module).__name__ for module in model]
    if modules not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ConfigError(
            f"the onnx runtime handles Transformer + Pooling (+ Normalize) models; this one "
            f"is {' + '.join(modules)}: use runtime 'torch'"
        )
    mode = model[1].get_config_dict().get("pooling_mode")
    if mode not in POOLING_MODES:
        raise ConfigError(
            f"the onnx runtime handles {' and '.join(POOLING_MODES)} pooling, not {mode!r}: "
            "use runtime 'torch'"
        )
    return str(mode)


def _export(model: Any, pooling: str, path: Path) -> None:
    """Write the transformer and its pooling as one ONNX graph, atomically."""
    import torch

    class Pooled(torch.nn.Module):
        def __init__(self, transformer: torch.nn.Module) -> None:
            super().__init__()
            self.transformer = transformer

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
            hidden = self.transformer(
                input_ids=input_ids, attention_mask=attention_mask
            ).last_hidden_state
            if pooling == "cls":
                return cast(torch.Tensor, hidden[:, 0])
            mask = attention_mask.unsqueeze(-1).to(hidden.dtype)
            return cast(torch.Tensor, (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9))

    module = Pooled(model[0].auto_model).eval()
    sample = model.tokenizer(["an example", "a second, longer example"], padding=True)
    inputs = (torch.tensor(sample["input_ids"]), torch.tensor(sample["attention_mask"]))
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=".onnx", delete=False) as tmp:
        partial = Path(tmp.name)
    try:
        with torch.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the tracer's notes on Python control flow
            torch.onnx.export(
                module,
                inputs,
                str(partial),
                input_names=["input_ids", "attention_mask"],
                output_names=["embedding"],
                dynamic_axes={
                    "input_ids": {0: "batch", 1: "tokens"},
                    "attention_mask": {0: "batch", 1: "tokens"},
                    "embedding": {0: "batch"},
                },
                opset_version=OPSET,
                dynamo=False,
            )
        partial.replace(path)  # another process exporting at once writes the same bytes
    finally:
        partial.unlink(missing_ok=True)
    _log.info("exported %s to %s", model[0].auto_model.name_or_path, path)

"""A sentence-transformers model run by ONNX Runtime: the same vectors, a third of the latency.

The default runtime when ``onnxruntime`` is installed, because embedding is the latency of
every semantic lookup. The model is exported once into ``cache_dir`` (``$SEMCACHE_ONNX_CACHE``
or ``~/.cache/semcache/onnx``), keyed by name and weight files, written to a temporary file
and renamed so concurrent exports never leave a torn file; later loads never import torch.
``precision="int8"`` adds dynamic int8 quantization, under its own ``name`` since its vectors
differ. Accepted: a Hugging Face transformer, mean or CLS pooling, optional normalisation.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._buckets import plan_batches
from ._common import Lazy, as_text_list, check_batch_size, import_optional
from .base import l2_normalise
from .readability import ANY, ENGLISH, Readability
from .sentence_transformer import (
    DEFAULT_MODEL,
    SentenceTransformerEmbedder,
    _is_local_path,
    bundled_model_path,
)
from .window import Window

_log = logging.getLogger(__name__)

POOLING_MODES = ("mean", "cls")
ONNX_PRECISIONS = ("float32", "int8")
OPSET = 17
INT8_SUFFIX = "#onnx-int8"
"""Appended to the model's name for int8 vectors: a threshold, a scorer or a stored entry
made with float32 vectors must never be matched against int8 ones, and vice versa."""


def default_cache_dir() -> Path:
    configured = os.environ.get("SEMCACHE_ONNX_CACHE")
    if configured:
        return Path(configured).expanduser()
    return Path.home() / ".cache" / "semcache" / "onnx"


@dataclass(frozen=True, slots=True)
class ModelSpec:
    """What the export and the runtime need to know about a model folder."""

    folder: Path
    pooling: str
    max_length: int
    lower_case: bool


@dataclass
class _Runtime:
    session: Any  # onnxruntime.InferenceSession
    tokenizer: _Tokenizer
    max_length: int
    dim: int
    errors: tuple[type[BaseException], ...]  # what onnxruntime raises
    lower_case: bool


class _Tokenizer:
    """The model's fast tokenizer (``tokenizer.json``) without ``transformers``: the same
    token ids, padded and truncated like the Hugging Face wrapper does."""

    def __init__(self, folder: Path, max_length: int) -> None:
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        pad_token = _special_token(folder, "pad_token") or "[PAD]"
        pad_id = self._tokenizer.token_to_id(pad_token)
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length)
        self._pad = (pad_id if pad_id is not None else 0, pad_token)

    def encode(self, texts: list[str]) -> list[list[int]]:
        """Token ids of each text, truncated to the model's limit (one pass per call)."""
        return [encoding.ids for encoding in self._tokenizer.encode_batch(texts)]

    def pad(self, ids: list[list[int]]) -> tuple[np.ndarray, np.ndarray]:
        """``input_ids`` and ``attention_mask`` of one batch, padded to its longest row."""
        width = max((len(row) for row in ids), default=0)
        input_ids = np.full((len(ids), width), self._pad[0], dtype=np.int64)
        mask = np.zeros((len(ids), width), dtype=np.int64)
        for row, tokens in enumerate(ids):
            input_ids[row, : len(tokens)] = tokens
            mask[row, : len(tokens)] = 1
        return input_ids, mask


def _special_token(folder: Path, name: str) -> str | None:
    for file in ("special_tokens_map.json", "tokenizer_config.json"):
        path = folder / file
        if path.is_file():
            value = json.loads(path.read_text()).get(name)
            if isinstance(value, dict):
                value = value.get("content")
            if isinstance(value, str):
                return value
    return None


def _ort_errors(ort: Any) -> tuple[type[BaseException], ...]:
    """onnxruntime's exception classes (pybind11 types deriving from Exception directly)."""
    state = ort.capi.onnxruntime_pybind11_state
    names: tuple[str, ...] = ("Fail", "InvalidArgument", "InvalidGraph", "InvalidProtobuf")
    names += ("NoSuchFile", "NotImplemented", "RuntimeException", "EPFail")
    found = tuple(getattr(state, name) for name in names if hasattr(state, name))
    return (*found, RuntimeError)


class OnnxEmbedder:
    """The :class:`~semcache.embedders.SentenceTransformerEmbedder` model, run by ONNX Runtime.

    ``precision="float32"`` keeps the PyTorch embedder's ``name`` (same vectors to float32
    rounding, so they may share a collection); ``"int8"`` is ``<model>#onnx-int8``. ``threads``:
    intra-op threads. No I/O in the constructor; the first use exports (once) and loads.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        batch_size: int = 64,
        cache_dir: str | Path | None = None,
        threads: int | None = None,
        precision: str = "float32",
    ) -> None:
        self._torch = SentenceTransformerEmbedder(model, device="cpu", batch_size=batch_size)
        self._model_ref = model
        self._batch_size = check_batch_size(batch_size)
        self._cache_dir = Path(cache_dir) if cache_dir is not None else None
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise ConfigError(f"threads must be an int >= 1 or None, got {threads!r}")
        if precision not in ONNX_PRECISIONS:
            raise ConfigError(
                f"onnx precision {precision!r} is not one of {', '.join(ONNX_PRECISIONS)}"
            )
        self._threads = threads
        self._precision = precision
        self._runtime: Lazy[_Runtime] = Lazy(self._load)

    def __repr__(self) -> str:
        return f"OnnxEmbedder({self.name!r})"

    @property
    def readability(self) -> Readability:
        """English (Latin script) for all-MiniLM-L6-v2; undeclared (reads all) otherwise."""
        return ENGLISH if self._model_ref == DEFAULT_MODEL else ANY

    @property
    def window(self) -> Window:
        """The same window as the PyTorch model's (one tokenizer, one length limit)."""
        return self._torch.window

    @property
    def name(self) -> str:
        base = self._torch.name
        return base + INT8_SUFFIX if self._precision == "int8" else base

    @property
    def precision(self) -> str:
        return self._precision

    @property
    def threads(self) -> int | None:
        """ONNX Runtime intra-op threads asked for (None: its default)."""
        return self._threads

    @property
    def dim(self) -> int:
        return self._runtime.get().dim

    @property
    def session(self) -> Any:
        """The loaded ``onnxruntime.InferenceSession`` (loading it on first use)."""
        return self._runtime.get().session

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        runtime = self._runtime.get()
        vectors = np.zeros((len(texts), runtime.dim), dtype=np.float32)
        if not texts:
            return vectors
        if runtime.lower_case:
            texts = [text.lower() for text in texts]
        with self._runtime.lock:  # the tokenizer is not thread-safe; one batch fills the CPU
            ids = runtime.tokenizer.encode(texts)  # once: the counts plan the batches too
            if len(ids) == 1:
                batches = [np.zeros(1, dtype=np.int64)]
            else:
                lengths = np.fromiter(map(len, ids), np.int64, len(ids))
                batches = plan_batches(lengths, self._batch_size)
            for rows in batches:
                input_ids, mask = runtime.tokenizer.pad([ids[i] for i in rows])
                feed = {"input_ids": input_ids, "attention_mask": mask}
                try:
                    (pooled,) = runtime.session.run(None, feed)
                except runtime.errors as exc:
                    message = f"{self.name} (onnx) failed to embed {len(rows)} texts: {exc}"
                    raise EmbedderError(message) from exc
                vectors[rows] = pooled
        return l2_normalise(vectors)

    def _folder(self) -> Path:
        """The model's folder, found without loading torch when it is bundled or local."""
        if self._model_ref == DEFAULT_MODEL:
            bundled = bundled_model_path()
            if bundled is not None:
                return bundled
        elif _is_local_path(self._model_ref):
            return Path(self._model_ref).expanduser().resolve()
        transformer: Any = self._torch.model[0]  # a hub model: found via torch
        return Path(transformer.auto_model.name_or_path)

    def _load(self) -> _Runtime:
        ort = import_optional("onnxruntime", package="onnxruntime", extra="onnx")
        spec = read_spec(self._folder())
        path = self._export_path(spec.folder)
        if not path.exists():
            import_optional("onnx", package="onnx", extra="onnx")  # torch.onnx.export needs it
            _export(self._torch.model, spec.pooling, path)
        if self._precision == "int8":
            path = _quantized(path)
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # ONNX Runtime's threads spin after each run by default: inside an application that
        # then searches a store and decodes JSON, the spinning steals those cores.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        if self._threads is not None:
            options.intra_op_num_threads = self._threads
            options.inter_op_num_threads = 1
        errors = _ort_errors(ort)
        try:
            session = ort.InferenceSession(str(path), options, providers=["CPUExecutionProvider"])
        except errors as exc:  # a truncated or foreign file: say where it is
            raise EmbedderError(f"could not load the ONNX export at {path}: {exc}") from exc
        dim = int(session.get_outputs()[0].shape[-1])
        tokenizer = _Tokenizer(spec.folder, spec.max_length)
        _log.info("loaded embedder %s with onnxruntime from %s (dim %d)", self.name, path, dim)
        return _Runtime(session, tokenizer, spec.max_length, dim, errors, spec.lower_case)

    def _export_path(self, folder: Path) -> Path:
        """One export per model name and weight files (size and mtime), per opset."""
        digest = hashlib.sha256(f"{self._torch.name}|opset{OPSET}".encode())
        for weights in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
            stat = weights.stat()
            digest.update(f"|{weights.name}:{stat.st_size}:{stat.st_mtime_ns}".encode())
        root = self._cache_dir if self._cache_dir is not None else default_cache_dir()
        return root / digest.hexdigest()[:24] / "model.onnx"


def read_spec(folder: Path) -> ModelSpec:
    """Pooling, length limit and casing from a sentence-transformers folder's own files."""
    modules_file = folder / "modules.json"
    if not modules_file.is_file():
        raise ConfigError(f"{folder} has no modules.json: use runtime 'torch' for this model")
    modules = json.loads(modules_file.read_text())
    kinds = [str(module.get("type", "")).rsplit(".", 1)[-1] for module in modules]
    if kinds not in (["Transformer", "Pooling"], ["Transformer", "Pooling", "Normalize"]):
        raise ConfigError(
            f"the onnx runtime handles Transformer + Pooling (+ Normalize) models; this one "
            f"is {' + '.join(kinds)}: use runtime 'torch'"
        )
    if not (folder / "tokenizer.json").is_file():
        raise ConfigError(f"{folder} has no tokenizer.json (a fast tokenizer): use runtime 'torch'")
    pooling_config = json.loads((folder / modules[1].get("path", "") / "config.json").read_text())
    mode = pooling_config.get("pooling_mode")
    if mode is None:  # older configs: one boolean per mode
        on = [
            key.removeprefix("pooling_mode_")
            for key, value in pooling_config.items()
            if key.startswith("pooling_mode_") and value
        ]
        names = {"mean_tokens": "mean", "cls_token": "cls"}
        mode = names.get(on[0], on[0]) if len(on) == 1 else "+".join(on)
    if mode not in POOLING_MODES:
        raise ConfigError(
            f"the onnx runtime handles {' and '.join(POOLING_MODES)} pooling, not {mode!r}: "
            "use runtime 'torch'"
        )
    config_file = folder / "sentence_bert_config.json"
    config = json.loads(config_file.read_text()) if config_file.is_file() else {}
    max_length = config.get("max_seq_length") or 512
    return ModelSpec(folder, str(mode), int(max_length), bool(config.get("do_lower_case")))


def _atomic_write(path: Path, write: Callable[[Path], None]) -> None:
    """``write`` a temporary file beside ``path`` and rename it into place: concurrent
    processes each write their own temp file, and whichever rename lands last wins whole."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=path.parent, suffix=path.suffix, delete=False) as tmp:
        partial = Path(tmp.name)
    try:
        write(partial)
        partial.replace(path)
    finally:
        partial.unlink(missing_ok=True)


def _quantized(path: Path) -> Path:
    """The int8 (dynamic quantization) copy of the float32 export at ``path``, made once."""
    target = path.with_name("model.int8.onnx")
    if target.exists():
        return target
    import_optional("onnx", package="onnx", extra="onnx")
    from onnxruntime.quantization import QuantType, quantize_dynamic

    def write(partial: Path) -> None:
        quantize_dynamic(path, partial, weight_type=QuantType.QInt8)

    _atomic_write(target, write)
    _log.info("quantized %s to int8 at %s", path, target)
    return target


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

    def write(partial: Path) -> None:
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

    _atomic_write(path, write)
    _log.info("exported %s to %s", model[0].auto_model.name_or_path, path)

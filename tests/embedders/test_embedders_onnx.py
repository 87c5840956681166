"""The ONNX Runtime embedder: the PyTorch model's vectors, exported once per cache."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from semcache.embedders import OnnxEmbedder, load_embedder, onnx_runtime
from semcache.errors import ConfigError, EmbedderError, MissingDependency

pytest.importorskip("onnxruntime")

TEXTS = [
    "Hi",
    "What is the capital of France?",
    "Explain, step by step and with an example for each step, how a hash map resolves "
    "collisions with open addressing.",
    "如何修改密码？",
]


@pytest.fixture(scope="module")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("onnx")


@pytest.fixture(scope="module")
def minilm_onnx(onnx_cache: Path) -> OnnxEmbedder:
    embedder = OnnxEmbedder(cache_dir=onnx_cache)
    embedder.embed(["warm up"])
    return embedder


def test_same_vectors_and_name_as_pytorch(minilm_onnx: OnnxEmbedder, minilm) -> None:
    assert minilm_onnx.name == minilm.name
    assert minilm_onnx.dim == minilm.dim == 384
    got = minilm_onnx.embed(TEXTS)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, minilm.embed(TEXTS), atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_rows_come_back_in_caller_order(minilm_onnx: OnnxEmbedder) -> None:
    together = minilm_onnx.embed(TEXTS)
    alone = np.vstack([minilm_onnx.embed([text]) for text in TEXTS])
    np.testing.assert_allclose(together, alone, atol=1e-5)
    assert minilm_onnx.embed([]).shape == (0, 384)


def test_export_is_reused_by_later_instances(
    minilm_onnx: OnnxEmbedder, onnx_cache: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (exported,) = onnx_cache.glob("*/model.onnx")
    written = exported.stat().st_mtime_ns

    def no_export(*args: object) -> None:
        raise AssertionError("exported again")

    monkeypatch.setattr(onnx_runtime, "_export", no_export)
    again = OnnxEmbedder(cache_dir=onnx_cache)
    np.testing.assert_allclose(again.embed(TEXTS[:2]), minilm_onnx.embed(TEXTS[:2]), atol=1e-6)
    assert exported.stat().st_mtime_ns == written
    assert [p.name for p in exported.parent.iterdir()] == ["model.onnx"]  # no temp files left


def test_a_corrupt_export_is_a_clear_error(tmp_path: Path, minilm_onnx: OnnxEmbedder) -> None:
    fresh = OnnxEmbedder(cache_dir=tmp_path)
    path = fresh._export_path(fresh._folder())
    path.parent.mkdir(parents=True)
    path.write_bytes(b"not a model")
    with pytest.raises(EmbedderError, match="ONNX export at"):
        fresh.embed(["hello"])


def test_registry_and_settings_select_it(monkeypatch: pytest.MonkeyPatch) -> None:
    assert isinstance(load_embedder("minilm", runtime="onnx"), OnnxEmbedder)
    assert not isinstance(load_embedder("minilm", runtime="torch"), OnnxEmbedder)
    from semcache.eval import resolve

    assert isinstance(resolve.resolve_embedder("minilm", 8, "onnx"), OnnxEmbedder)
    with pytest.raises(ConfigError, match="runtime"):
        load_embedder("minilm", runtime="tensorrt")
    with pytest.raises(ConfigError, match="on the CPU"):
        load_embedder("minilm", runtime="onnx", precision="bfloat16")
    from semcache import CacheSettings
    from semcache.compose import embedder_factory

    settings = CacheSettings(semantic={"runtime": "onnx"}, store={"path": ":memory:"})
    assert isinstance(embedder_factory(settings.semantic)(), OnnxEmbedder)


def test_missing_onnxruntime_names_the_extra(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setitem(sys.modules, "onnxruntime", None)  # makes `import onnxruntime` fail
    with pytest.raises(MissingDependency) as caught:
        OnnxEmbedder(cache_dir=tmp_path).embed(["hello"])
    assert "pip install 'semcache-llm[onnx]'" in str(caught.value)


def test_bad_options_fail_at_construction() -> None:
    with pytest.raises(ConfigError, match="threads"):
        OnnxEmbedder(threads=0)
    with pytest.raises(ConfigError, match="batch_size"):
        OnnxEmbedder(batch_size=0)


def test_threads_reach_the_session(onnx_cache: Path, minilm_onnx: OnnxEmbedder) -> None:
    embedder = OnnxEmbedder(threads=1, cache_dir=onnx_cache)
    assert embedder.session.get_session_options().intra_op_num_threads == 1


def test_int8_keeps_the_ranking_under_its_own_name(
    onnx_cache: Path, minilm_onnx: OnnxEmbedder
) -> None:
    int8 = OnnxEmbedder(cache_dir=onnx_cache, precision="int8")
    assert int8.name == minilm_onnx.name + onnx_runtime.INT8_SUFFIX
    got, ref = int8.embed(TEXTS), minilm_onnx.embed(TEXTS)
    assert np.all(np.einsum("ij,ij->i", got, ref) > 0.9)  # close, but not the same vectors
    assert not np.allclose(got, ref, atol=1e-4)
    assert (onnx_cache / next(onnx_cache.iterdir()).name / "model.int8.onnx").is_file()
    with pytest.raises(ConfigError, match="precision"):
        OnnxEmbedder(precision="int4")


def test_a_cached_export_loads_without_torch(onnx_cache: Path, minilm_onnx: OnnxEmbedder) -> None:
    code = (
        "import sys; from semcache.embedders import OnnxEmbedder; "
        f"e = OnnxEmbedder(cache_dir={str(onnx_cache)!r}); v = e.embed(['hello']); "
        "print(v.shape, 'torch' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.split()[-1] == "False", done.stdout + done.stderr


def test_processes_exporting_at_once_leave_one_whole_file(tmp_path: Path) -> None:
    code = (
        "from semcache.embedders import OnnxEmbedder; "
        f"print(OnnxEmbedder(cache_dir={str(tmp_path)!r}).embed(['hello'])[0, :3])"
    )
    children = [
        subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outputs = [child.communicate(timeout=300)[0] for child in children]
    assert [child.returncode for child in children] == [0, 0]
    assert outputs[0] == outputs[1]
    (folder,) = tmp_path.iterdir()
    assert [p.name for p in folder.iterdir()] == ["model.onnx"]  # no temp file left behind

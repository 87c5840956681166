"""Build semcache's collision corpus, ``semcache/data/collisions.jsonl``.

Every text comes from the hand-written parts in ``collision_documents.py`` and
``collision_phrases.py``; nothing is read from another data set, the network or a model, and the
output is byte-for-byte deterministic (``--check`` verifies the shipped file is current).

One pair per line::

    {"id": "en-antonym-001", "text_a": "...", "text_b": "...", "label": 0, "lang": "en",
     "kind": "antonym", "detail": "eat/avoid"}

``label`` 1: one answer serves both texts; 0: serving one's answer for the other is a wrong
answer. ``kind`` is the shape of the pair:

- ``long_context``: a 40+-line document and a question about it. ``detail`` says where the
  question sits: ``past_window`` (after the document, beyond the first 256 word pieces an
  embedder like MiniLM reads), ``question_first`` (before the document) or ``in_window`` (after
  the first paragraphs only). Neighbouring questions of a document are negatives; a question and
  its paraphrase are positives.
- ``template``: a ~120-word instruction template with a short customer message; different
  messages are negatives, a paraphrased message a positive (``detail``: the template).
- ``antonym``, ``number`` (numbers, IDs, dates, units), ``entity``, ``code`` (languages,
  function names, directions) and ``negation``: negatives whose ``detail`` names what differs.
- ``paraphrase``: short reworded or casual questions that should hit (``detail``: reworded,
  casual or code).

Usage: ``python scripts/build_collisions.py`` (write) or ``... --check``.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from collision_documents import (
    EN_CONTEXTS,
    EN_TEMPLATES,
    ZH_CONTEXTS,
    ZH_TEMPLATES,
    Ask,
    Context,
    Template,
)
from collision_phrases import (
    ANTONYM_EN,
    ANTONYM_ZH,
    CODE_EN,
    CODE_ZH,
    ENTITY_EN,
    ENTITY_ZH,
    NEGATION_EN,
    NEGATION_ZH,
    NUMBER_EN,
    NUMBER_ZH,
    PARAPHRASE_EN,
    PARAPHRASE_ZH,
    Row,
)

OUTPUT = Path(__file__).resolve().parents[1] / "semcache" / "data" / "collisions.jsonl"

#: Lines of a document kept before an ``in_window`` question (its first paragraphs).
HEAD_LINES = {"en": 8, "zh": 5}

Pair = tuple[str, str, int, str]
"""(text_a, text_b, label, detail)."""

# Which neighbouring questions (i, i + 1) and which paraphrases each placement uses: every
# placement gets negatives and positives, and the past-window one only two positives (a
# paraphrase beyond the window is invisible to the embedder, so serving it is luck).
_PLACEMENTS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "past_window": ((0, 1, 2, 3, 4, 5, 6), (0, 1)),
    "question_first": ((0, 2, 4, 6), (2, 3, 4)),
    "in_window": ((1, 3, 5), (0, 3, 5)),
}


def _doc_prompt(context: Context, placement: str, question: str) -> str:
    """The prompt a user would send: the document and one question, placed as named."""
    en = context.lang == "en"
    label = "Question: " if en else "问题："
    if placement == "question_first":
        intro = "Answer the question about the text below." if en else "请根据下面的文字回答问题。"
        return f"{intro}\n{label}{question}\n\n{context.text}"
    text = context.text
    if placement == "in_window":
        text = "\n".join(text.splitlines()[: HEAD_LINES[context.lang]])
    return f"{text.rstrip()}\n\n{label}{question}"


def _paraphrased(asks: tuple[Ask, ...], index: int) -> str:
    paraphrase = asks[index].paraphrase
    if paraphrase is None:
        raise ValueError(f"ask {index} ({asks[index].text!r}) has no paraphrase")
    return paraphrase


def context_pairs(context: Context) -> Iterator[Pair]:
    asks = context.asks
    for placement, (negatives, positives) in _PLACEMENTS.items():
        for i in negatives:
            first, second = asks[i].text, asks[i + 1].text
            yield (
                _doc_prompt(context, placement, first),
                _doc_prompt(context, placement, second),
                0,
                placement,
            )
        for i in positives:
            first, second = asks[i].text, _paraphrased(asks, i)
            yield (
                _doc_prompt(context, placement, first),
                _doc_prompt(context, placement, second),
                1,
                placement,
            )


def template_pairs(template: Template) -> Iterator[Pair]:
    def fill(message: str) -> str:
        return template.text.replace("{message}", message)

    asks = template.asks
    for first, second in itertools.pairwise(asks):
        yield fill(first.text), fill(second.text), 0, template.tid
    for ask in asks:
        if ask.paraphrase is not None:
            yield fill(ask.text), fill(ask.paraphrase), 1, template.tid


def _rows(rows: tuple[Row, ...], label: int) -> Iterator[Pair]:
    for text_a, text_b, detail in rows:
        yield text_a, text_b, label, detail


def _language(
    contexts: tuple[Context, ...],
    templates: tuple[Template, ...],
    short: dict[str, tuple[tuple[Row, ...], int]],
) -> Iterator[tuple[str, Pair]]:
    for context in contexts:
        for pair in context_pairs(context):
            yield "long_context", pair
    for template in templates:
        for pair in template_pairs(template):
            yield "template", pair
    for kind, (rows, label) in short.items():
        for pair in _rows(rows, label):
            yield kind, pair


def build() -> list[dict[str, object]]:
    languages = {
        "en": _language(
            EN_CONTEXTS,
            EN_TEMPLATES,
            {
                "antonym": (ANTONYM_EN, 0),
                "number": (NUMBER_EN, 0),
                "entity": (ENTITY_EN, 0),
                "code": (CODE_EN, 0),
                "negation": (NEGATION_EN, 0),
                "paraphrase": (PARAPHRASE_EN, 1),
            },
        ),
        "zh": _language(
            ZH_CONTEXTS,
            ZH_TEMPLATES,
            {
                "antonym": (ANTONYM_ZH, 0),
                "number": (NUMBER_ZH, 0),
                "entity": (ENTITY_ZH, 0),
                "code": (CODE_ZH, 0),
                "negation": (NEGATION_ZH, 0),
                "paraphrase": (PARAPHRASE_ZH, 1),
            },
        ),
    }
    rows: list[dict[str, object]] = []
    counters: dict[tuple[str, str], int] = {}
    for lang, pairs in languages.items():
        for kind, (text_a, text_b, label, detail) in pairs:
            counters[(lang, kind)] = counters.get((lang, kind), 0) + 1
            rows.append(
                {
                    "id": f"{lang}-{kind}-{counters[(lang, kind)]:03d}",
                    "text_a": text_a,
                    "text_b": text_b,
                    "label": label,
                    "lang": lang,
                    "kind": kind,
                    "detail": detail,
                }
            )
    return rows


def validate(rows: list[dict[str, object]]) -> None:
    """Raise ValueError unless ids are unique and every pair is two distinct texts, once."""
    ids: set[object] = set()
    pairs: set[frozenset[object]] = set()
    for row in rows:
        if row["id"] in ids:
            raise ValueError(f"duplicate id {row['id']}")
        ids.add(row["id"])
        if row["text_a"] == row["text_b"]:
            raise ValueError(f"{row['id']}: identical texts")
        key = frozenset((row["text_a"], row["text_b"]))
        if key in pairs:
            raise ValueError(f"{row['id']}: duplicate pair")
        pairs.add(key)


def serialise(rows: list[dict[str, object]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="fail if the shipped file is stale")
    args = parser.parse_args()
    rows = build()
    validate(rows)
    text = serialise(rows)
    if args.check:
        current = OUTPUT.read_text(encoding="utf-8") if OUTPUT.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale; run scripts/build_collisions.py", file=sys.stderr)
            return 1
        return 0
    OUTPUT.write_text(text, encoding="utf-8")
    positives = sum(int(row["label"]) for row in rows)  # type: ignore[call-overload]
    zh = sum(row["lang"] == "zh" for row in rows)
    print(f"wrote {len(rows)} pairs ({positives} positive, {zh} zh) to {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

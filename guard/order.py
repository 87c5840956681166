"""Role swaps: two parts of a question trading places around the same relation.

Mean-pooled embeddings barely see word order, so "convert Markdown to HTML" and "convert
HTML to Markdown" score near 1 while their answers are opposite. A swap is ``X M Y`` in one
question and ``Y M X`` in the other, each span holding a content word. To keep paraphrases
out, the middle must match exactly and must relate (an English function word or a position
inside a sentence; in Chinese a directional word such as 到, 比, 给), and a coordinating
middle ("and", "or", "vs", 和, 还是) is symmetric.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from semcache.guard.patterns import CJK

MAX_SPAN = 6
SYMMETRIC = frozenset(
    {"and", "or", "vs", "versus", "with", "&", "和", "与", "或", "及", "跟", "同", "还"}
)
ZH_RELATIONS = frozenset("到比给对向往至去成转")
PREPOSITIONS = frozenset(
    {"in", "on", "at", "during", "for", "from", "with", "by", "about", "after", "before"}
    | {"under", "over", "into", "to", "of"}
)
_STOP_WORDS = """
    a an the is are was were be been being am do does did to of in on at for from by with
    and or but if then so as it its this that these those i me my you your he him his she her
    we our they them their what which who whom whose how why when where can could should would
    will shall may might must have has had not no there here than too very just about into
    out up down over under again s t 的 了 吗 呢 是 在 我 你 他 她 它 们 怎 么 什 么 哪 个
    一 有 吧 啊 呀 把 从 到 给 对 向"""
STOP = frozenset(_STOP_WORDS.split())


def _relates(middle: Sequence[str], rotation: bool) -> bool:
    """Can ``middle`` carry roles? ``rotation``: the swap spans a whole text (``X M Y``)."""
    if any(word in SYMMETRIC for word in middle):
        return False
    if any(CJK.match(word) for word in middle):
        return any(word in ZH_RELATIONS for word in middle)
    # a bare verb ("ever beat") relates inside a sentence; a whole text "X M Y" with no
    # function word is a reordered keyword query ("css dark mode in:title")
    return any(word in STOP for word in middle) or not rotation


def _adverbial(x: Sequence[str], y: Sequence[str]) -> bool:
    """Two phrases that each open with a preposition ("during the war" / "in Singapore"), or
    that hold a coordination, move freely: such a reordering keeps the roles."""
    if x[0] in PREPOSITIONS and y[0] in PREPOSITIONS:
        return True
    return any(word in SYMMETRIC for word in (*x, *y))


def _content(span: Sequence[str]) -> bool:
    return any(token not in STOP for token in span)


def _swapped_span(before: Sequence[str], after: Sequence[str]) -> tuple[str, ...] | None:
    """A span that ends ``before`` and starts ``after`` (the shortest with a content word)."""
    for length in range(1, min(len(before), len(after), MAX_SPAN) + 1):
        span = tuple(before[len(before) - length :])
        if span == tuple(after[:length]) and _content(span):
            return span
    return None


def role_swap(a: Sequence[str], b: Sequence[str]) -> tuple[str, str, str] | None:
    """``(x, middle, y)`` when ``a`` reads ``x middle y`` and ``b`` reads ``y middle x``."""
    counts_a, counts_b = Counter(a), Counter(b)
    position_b = {token: j for j, token in enumerate(b) if counts_b[token] == 1}
    for i, token in enumerate(a):
        j = position_b.get(token)
        if j is None or counts_a[token] != 1:
            continue
        length = 1
        while i + length < len(a) and j + length < len(b) and a[i + length] == b[j + length]:
            length += 1
        middle = a[i : i + length]
        x = _swapped_span(a[:i], b[j + length :])
        y = x and _swapped_span(b[:j], a[i + length :])
        if not (x and y and x != y) or _adverbial(x, y):
            continue
        rotation = i == len(x) and i + length + len(y) == len(a)
        if _relates(middle, rotation):
            return " ".join(x), " ".join(middle), " ".join(y)
    return None

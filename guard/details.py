"""``DetailGuard``: refuse a semantic hit whose question differs in an answer-determining detail.

Embeddings place "reset my password in 2 steps" and "... in 3 steps", or "Can I cancel?" and
"Can't I cancel?", almost on top of each other; serving one's answer for the other is a wrong
answer. The guard compares the details both questions pin down (extracted by
``semcache.guard.features``, English and Chinese) and rejects the candidate when one differs.

Rules (a candidate is rejected when any applies; texts are NFKC-normalised and lower-cased and
punctuation and spacing are ignored first):

``number``
    A number (digits, number words "two"/"二"/"两", 万/亿, "a hundred", ordinals, percentages,
    money) stated on one side only or with another value; or the same number with a different
    attached unit ("5 km" vs "5 miles", "3月" vs "3个月"); or two different bare units of one
    dimension ("in miles" vs "in km", "in km/h" vs "in mph"); or the same numbers stated in
    another order in questions worded alike ("ordered two but need four" vs "ordered four but
    need two"; a sentence rebuilt around the same numbers is not judged by their order). A
    number written as a lone "one"/"一" (often "a") only counts against a different number,
    not against silence.
``date``
    Month and weekday names, today/tomorrow/昨天/明天, this/last/next week/下周, time of day,
    seasons and holidays: any one-sided or differing item.
``negation``
    The parity of negation cues (not, n't, never, no, without, cannot, 不, 没, 别, 无, 非, 未…)
    differs, after dropping idioms that only look negative ("not only", "or not", "not sure",
    "能不能", "差不多", "非常", "区别").
``entity``
    Each side names an entity the other does not mention (a substitution: France vs Germany,
    Python vs Java). Entities are capitalised, mixed-case and all-caps English tokens outside
    sentence starts, known lower-case names (python, csv, iphone), quoted titles, capitalised
    Latin-script names in Chinese text, and Chinese place and brand names. Common aliases and
    demonyms (JS/JavaScript, US/United States, French/France, 安卓/Android) are one entity.
``comparison``
    The two sides take opposite poles of one axis: more/less (cheaper, over/under), larger/
    smaller, higher/lower, increase/decrease, before/after, ascending/descending, first/last,
    upload/download, enable/disable, 更多/更少, 之前/之后, 大于/小于, 升序/降序, 涨/跌; or a
    conversion in opposite directions ("USD to EUR" vs "EUR to USD"); or, in the part where
    the two questions differ (their shared beginning and end set aside), opposite words of the
    comparison and opposite lists (eat/avoid, allow/deny, pros/cons, 收入/支出, 开灯/关灯) or a
    word against its negative-prefixed self (friendly/unfriendly); also an opposite word put in
    the other's place where the two align, even when the other question uses it elsewhere
    ("return the curtains" vs "keep the curtains but return the rug"): see
    ``semcache.guard.opposites``.
``order``
    Two parts trade places around the same relation: "convert Markdown to HTML" vs "convert
    HTML to Markdown", "A person is kicking a monkey" vs "A monkey is kicking a person",
    "从北京到上海" vs "从上海到北京" (see ``semcache.guard.order``). Added after the dev sets
    showed such pairs among the highest-scoring false hits (cosine 0.98-0.99): over the eight
    dev sets it rejects 48 pairs that the other rules pass, 43 of them labeled wrong (QQP 12
    of 13, SICK 11 of 11, LCQMC 9 of 10, PAWS-X 8 of 8).

Decisions, measured with ``benchmarks/guard_effect.py`` (false-hit rate at equal recall):
a number or date stated on one side only *is* a difference (answers about "2016" or "tomorrow"
are time- and quantity-specific); a name on one side only is *not* ("how to sort a list" vs
"... in Python" is kept): paraphrases often add or drop context names, and counting them cost
many true hits without removing more false hits than a higher threshold would. Comparison
words count only as opposite poles, because qualifiers such as "ascending" or "the best way
to" are often implied defaults; so "sort a list" vs "sort a list in reverse" is kept.

Known blind spots: role swaps that rephrase as well ("convert 5 km to miles" vs "how many km
is 5 miles", "A pours oil into a pot on the stove" vs "... into the stove from a pot"), or
that only reorder around 的/是 in Chinese (left alone: there such reorders are mostly
paraphrases); antonyms outside the
lists ("broken" vs "not working", which also makes negation paraphrases such as
"hasn't arrived" vs "where is it" a false reject); lower-case entities not in the list, Chinese
person names, a sentence-initial capitalised name ("Paris weather"), an added name that changes
the answer ("sort a list" vs "sort a list in Python"); synonyms across lists ("$" vs "USD" is
handled, "3 pm" vs "15:00" is not). The guard never looks at answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import cache

from semcache.errors import ConfigError

RULES = ("number", "date", "negation", "entity", "comparison", "order")


@dataclass(frozen=True, slots=True)
class Difference:
    """Why a candidate was refused: the rule and the differing detail, for logs and audits."""

    rule: str
    detail: str


Compare = Callable[[str, str, tuple[str, ...]], Iterator[Difference]]


@cache
def _compare() -> Compare:
    """``semcache.guard.rules.differences``, imported on the guard's first comparison.

    Importing it compiles the extractor's regular expressions and reads ``lexicon.toml``
    (tens of milliseconds); deferring that keeps ``import semcache`` and ``DetailGuard()``
    cheap, for processes that never compare two questions (``tests/guard`` pins this).
    """
    from semcache.guard.rules import differences

    return differences


class DetailGuard:
    """A ``HitVerifier`` that rejects candidates differing in an answer-determining detail.

    Pure and symmetric: ``verify(a, b) == verify(b, a)`` and ``verify(a, a)`` is True.
    ``rules`` selects a subset of ``RULES`` (all by default). Extraction is cached per text
    (stored candidates recur), so a typical call costs a dictionary lookup or two. The
    constructor does no work beyond checking ``rules``; the first comparison builds the
    extractor, once per process.
    """

    def __init__(self, rules: Iterable[str] | None = None) -> None:
        chosen = RULES if rules is None else tuple(rules)
        unknown = sorted(set(chosen) - set(RULES))
        if unknown:
            raise ConfigError(f"unknown guard rules {unknown}; expected a subset of {RULES}")
        self._rules = tuple(rule for rule in RULES if rule in chosen)

    @property
    def name(self) -> str:
        return "details"

    @property
    def rules(self) -> tuple[str, ...]:
        return self._rules

    def verify(self, query: str, candidate: str) -> bool:
        """True when the candidate's answer may be served for ``query``."""
        return next(self._differences(query, candidate), None) is None

    def differences(self, query: str, candidate: str) -> list[Difference]:
        """Every detail in which the two questions differ (empty: safe to serve)."""
        return list(self._differences(query, candidate))

    def _differences(self, query: str, candidate: str) -> Iterator[Difference]:
        if query == candidate:
            return iter(())
        return _compare()(query, candidate, self._rules)

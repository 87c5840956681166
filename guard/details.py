"""``DetailGuard``: refuse a semantic hit whose question differs in an answer-determining detail.

Embeddings place "reset my password in 2 steps" and "... in 3 steps" almost on top of each
other; serving one's answer for the other is a wrong answer. The guard compares the details
both questions pin down (``semcache.guard.features``, English and Chinese; NFKC, lower case,
punctuation and spacing ignored) and rejects the candidate when any of these differs:

- ``number``: a number stated on one side only or with another value or unit (a lone
  "one"/"一" counts only against a different number);
- ``date``: month, weekday, relative day, time of day, season or holiday;
- ``negation``: the parity of negation cues, after idioms that only look negative;
- ``entity``: each side names an entity the other does not (a substitution; aliases and
  demonyms are one entity). A name on one side only is kept: paraphrases add and drop
  context names;
- ``comparison``: opposite poles of one axis, opposite conversions, or opposite words in
  the part where the questions differ (``semcache.guard.opposites``);
- ``order``: two parts trade places around one relation (``semcache.guard.order``).

The guard never looks at answers.
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
    """``semcache.guard.rules.differences``, imported on the guard's first comparison so that
    ``import semcache`` and ``DetailGuard()`` stay cheap.
    """
    from semcache.guard.rules import differences

    return differences


class DetailGuard:
    """A ``HitVerifier`` that rejects candidates differing in an answer-determining detail.

    Pure and symmetric: ``verify(a, b) == verify(b, a)`` and ``verify(a, a)`` is True. ``rules``
    selects a subset of ``RULES``. Extraction is cached per text; the first comparison builds
    the extractor, once per process.
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

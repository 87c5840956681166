"""The six rules of ``DetailGuard`` (documented in ``semcache.guard.details``): how two
questions' extracted ``Details`` may differ, one ``Difference`` per differing detail.
Importing this module builds the extractor, so only the guard's first comparison does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from semcache.guard.details import Difference
from semcache.guard.features import Details, extract
from semcache.guard.opposites import opposites
from semcache.guard.order import role_swap


def _number_differences(a: Details, b: Details) -> Iterator[Difference]:
    only_a, only_b = a.strong - b.values, b.strong - a.values
    if only_a or only_b:
        yield Difference("number", f"{sorted(only_a) or '-'} vs {sorted(only_b) or '-'}")
    for value in sorted(a.value_units.keys() & b.value_units.keys()):
        units_a, units_b = a.value_units[value], b.value_units[value]
        if units_a.isdisjoint(units_b):
            yield Difference("number", f"{value} {sorted(units_a)} vs {sorted(units_b)}")
    for dim in sorted(a.units.keys() & b.units.keys()):
        if a.units[dim] != b.units[dim]:
            yield Difference("number", f"{dim}: {sorted(a.units[dim])} vs {sorted(b.units[dim])}")


def _date_differences(a: Details, b: Details) -> Iterator[Difference]:
    if a.dates != b.dates:
        yield Difference("date", f"{sorted(a.dates - b.dates)} vs {sorted(b.dates - a.dates)}")


def _negation_differences(a: Details, b: Details) -> Iterator[Difference]:
    if a.negation != b.negation:
        yield Difference("negation", f"parity {a.negation} vs {b.negation}")


def _mentioned(entity: str, details: Details) -> bool:
    """Is ``entity`` named in the other text? A quoted title counts when all its words are."""
    if not entity.isascii():
        return entity in details.haystack
    return all(f" {word} " in details.haystack for word in entity.split())


def _entity_differences(a: Details, b: Details) -> Iterator[Difference]:
    """A name replaced by another; a name added on one side only is not a difference."""
    if not (a.entities and b.entities):
        return
    only_a = sorted(e for e in a.entities if not _mentioned(e, b))
    only_b = sorted(e for e in b.entities if not _mentioned(e, a))
    if only_a and only_b:
        yield Difference("entity", f"{only_a} vs {only_b}")


def _comparison_differences(a: Details, b: Details) -> Iterator[Difference]:
    reported = set()
    for axis in sorted(a.comparisons.keys() & b.comparisons.keys()):
        if a.comparisons[axis].isdisjoint(b.comparisons[axis]):
            reported.add(axis)
            yield Difference(
                "comparison", f"{axis}: {set(a.comparisons[axis])} vs {set(b.comparisons[axis])}"
            )
    for axis, part_a, part_b in opposites(a.sequence, b.sequence):
        if axis not in reported:
            yield Difference("comparison", f"{axis}: {part_a!r} vs {part_b!r} where they differ")
    if not (a.conversions and b.conversions):
        return
    for one, other in ((a, b), (b, a)):
        for source, target in sorted(one.conversions):
            if (target, source) in other.conversions and (source, target) not in other.conversions:
                yield Difference("comparison", f"{source}->{target} vs {target}->{source}")
                return


def _order_differences(a: Details, b: Details) -> Iterator[Difference]:
    swap = role_swap(a.sequence, b.sequence)
    if swap is not None:
        x, relation, y = swap
        yield Difference("order", f"{x} {relation} {y} vs {y} {relation} {x}")


CHECKS: dict[str, Callable[[Details, Details], Iterator[Difference]]] = {
    "number": _number_differences,
    "date": _date_differences,
    "negation": _negation_differences,
    "entity": _entity_differences,
    "comparison": _comparison_differences,
    "order": _order_differences,
}


"""Rule name -> its comparison, in the order ``RULES`` lists them."""


def differences(query: str, candidate: str, rules: tuple[str, ...]) -> Iterator[Difference]:
    """Every difference between the two questions under ``rules``, rule by rule; a generator,
    so a caller that needs only the first stops comparing there."""
    a, b = extract(query), extract(candidate)
    for rule in rules:
        yield from CHECKS[rule](a, b)

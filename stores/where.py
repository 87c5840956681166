"""The rules that decide which stored entries a lookup may see, written once.

Backends translate these records into their own filters and re-check what their engine
returned (:meth:`Where.retrieved`, :meth:`Where.verified`), so a filter that lost a
condition cannot serve another tenant's entry. An entry is live while ``now < expires_at``;
``purge_expired(now)`` deletes exactly the others, so none is both served and purged.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from semcache.errors import ConfigError, StoreError

if TYPE_CHECKING:
    from .entry import Entry, Match

#: Payload fields that partition every lookup (keyword equality, all AND-ed).
PARTITION_FIELDS = ("tenant", "namespace", "scope", "embedder")
#: Payload field of the expiry time (epoch seconds, a float range condition).
EXPIRES_AT = "expires_at"
#: Payload fields an operator's purge may select on.
SELECTION_FIELDS = ("tenant", "namespace", "model")
#: Every keyword field some filter tests: backends give each a payload index.
KEYWORD_FIELDS = tuple(dict.fromkeys((*PARTITION_FIELDS, *SELECTION_FIELDS)))
#: Payload field holding the caller's metadata object; a filter on key ``k`` tests the
#: payload path ``metadata.k``.
METADATA = "metadata"

#: A metadata value a filter may test: a keyword or an integer (no floats: equality on
#: floats is not what a caller means; no booleans: qdrant-edge does not match them).
FilterValue = str | int


def metadata_filters(
    filters: Mapping[str, Any] | None,
) -> tuple[tuple[str, tuple[FilterValue, ...]], ...]:
    """``{key: value}`` or ``{key: [v1, v2]}`` (``in``) as :attr:`Where.filters`, sorted
    by key; raises :class:`ConfigError` naming ``filters.<key>`` for anything else."""
    if filters is None:
        return ()
    if not isinstance(filters, Mapping):
        raise ConfigError(f"filters must be a mapping, not {type(filters).__name__}")
    out = []
    for key in sorted(filters, key=str):
        if not isinstance(key, str) or not key or "." in key:
            raise ConfigError(f"filters: {key!r} is not a metadata key (a non-empty str, no '.')")
        value = filters[key]
        values = tuple(value) if isinstance(value, list | tuple | set | frozenset) else (value,)
        kinds = {type(v) for v in values}
        if not values or not all(_filterable(v) for v in values) or len(kinds) > 1:
            raise ConfigError(
                f"filters.{key}: expected a str or an int, or a non-empty list of strs or of "
                f"ints; got {value!r}"
            )
        out.append((key, values))
    return tuple(out)


def _filterable(value: Any) -> bool:
    return isinstance(value, str | int) and not isinstance(value, bool)


def metadata_matches(
    metadata: Mapping[str, Any] | None, filters: tuple[tuple[str, tuple[FilterValue, ...]], ...]
) -> bool:
    """True when ``metadata[key]`` is one of the allowed values for every filter (a missing key
    matches nothing; a stored ``True`` is not the filter value ``1``)."""
    for key, values in filters:
        if metadata is None or key not in metadata:
            return False
        got = metadata[key]
        if not any(type(got) is type(v) and got == v for v in values):
            return False
    return True


def is_live(expires_at: float, now: float) -> bool:
    """The expiry rule: True while ``now`` is strictly before ``expires_at``."""
    return expires_at > now


@dataclass(frozen=True, slots=True)
class Where:
    """One lookup's partition and clock: tenant AND namespace AND scope AND embedder, live at now.

    One record serves both lookups: ``nearest`` filters on the scope (what makes a paraphrase
    comparable); ``retrieve`` by exact key checks it at no cost (callers pass the scope they
    would store, ``EXACT_ONLY_SCOPE`` for exact-only entries). The embedder is in the partition
    because vectors of two models are not comparable. ``filters`` (``check(..., filters=...)``):
    ``(key, allowed values)`` pairs on the entry's metadata, AND-ed; they only narrow, so a
    filter never reaches another tenant's entries (:func:`metadata_matches`).
    """

    tenant: str
    namespace: str
    scope: str
    embedder: str
    now: float
    filters: tuple[tuple[str, tuple[FilterValue, ...]], ...] = ()

    def __post_init__(self) -> None:
        for name in PARTITION_FIELDS:
            value = getattr(self, name)
            if not isinstance(value, str):
                raise ConfigError(f"Where.{name} must be a str, not {type(value).__name__}")
        now = self.now
        if isinstance(now, bool) or not isinstance(now, int | float) or not math.isfinite(now):
            raise ConfigError(f"Where.now must be finite epoch seconds, not {now!r}")

    def equalities(self) -> tuple[tuple[str, str], ...]:
        """``(payload field, required value)`` pairs a backend turns into its filter."""
        return tuple((name, getattr(self, name)) for name in PARTITION_FIELDS)

    def admits(self, entry: Entry) -> bool:
        """True when ``entry`` lies in this partition, is live at ``now`` and matches
        every metadata filter."""
        return (
            all(getattr(entry, name) == value for name, value in self.equalities())
            and is_live(entry.expires_at, self.now)
            and metadata_matches(entry.metadata, self.filters)
        )

    def retrieved(self, key: str, entry: Entry | None) -> Entry | None:
        """The post-check of a retrieve by id: ``entry`` if it is ``key``'s and admitted,
        so an id never finds another partition's entry, nor an expired one.
        """
        if entry is None or entry.key != key or not self.admits(entry):
            return None
        return entry

    def verified(self, match: Match | None) -> Match | None:
        """The post-check of ``nearest``: ``match`` if this record admits its entry; one it
        does not admit is a backend bug, raised as :class:`StoreError`, never served.
        """
        if match is not None and not self.admits(match.entry):
            raise StoreError(
                f"the store returned entry {match.entry.key!r} outside the lookup's partition "
                "or expired; its filter does not match semcache.stores.Where"
            )
        return match

    def metadata_conditions(self) -> tuple[tuple[str, tuple[FilterValue, ...]], ...]:
        """``(payload path, allowed values)`` of each filter: one value is an equality,
        several (all strs or all ints) are ``in``."""
        return tuple((f"{METADATA}.{key}", values) for key, values in self.filters)


@dataclass(frozen=True, slots=True)
class Selection:
    """An operator's selection: entries matching every field given (None matches any).

    Used by ``purge`` (and ``recent``, tenant only); an empty selection is every entry.
    """

    tenant: str | None = None
    namespace: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        for name in SELECTION_FIELDS:
            value = getattr(self, name)
            if value is not None and not isinstance(value, str):
                raise ConfigError(f"{name} must be a str or None, not {type(value).__name__}")

    def equalities(self) -> tuple[tuple[str, str], ...]:
        """``(payload field, required value)`` pairs of the fields that were given."""
        pairs = ((name, getattr(self, name)) for name in SELECTION_FIELDS)
        return tuple((name, value) for name, value in pairs if value is not None)

    def selects(self, entry: Entry) -> bool:
        return all(getattr(entry, name) == value for name, value in self.equalities())

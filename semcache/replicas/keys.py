"""Every Redis key semcache writes, as pure functions of the request's partition.

Layout (``P`` is the configured prefix, ``h(x)`` the first 16 hex digits of SHA-256 of x,
so tenant and namespace names never need escaping and never collide with the separators):

- ``P:e:h(tenant):h(namespace):h(model):<exact key>``: a stored answer (a hash: ``v`` the
  entry, ``g`` the generations it was written under). The partition is in the name so a
  purge can find its entries with one ``SCAN MATCH`` pattern per filter.
- ``P:g:<t>:<n>:<m>``: a purge generation, one per combination of filter fields, where an
  unfiltered field is ``_``. A purge of (tenant=A) bumps ``P:g:h(A):_:_``; an entry of
  (A, ns, m) is live only while all 8 generations that cover it are what it was written under.
- ``P:lease:<exact key>`` / ``P:s:<exact key>:<flight id>``: a cross-replica flight's lease and
  its chunk stream.
- ``{P:purges}``: the purge log, a stream every replica reads (purges, withdrawals and
  model changes); ``{P:purges}:epoch`` names this log's incarnation (a Redis restarted
  empty gets a new one), ``{P:purges}:trimmed`` the last ID trimmed,
  ``{P:purges}:readers`` the live readers (a sorted set of heartbeats) and
  ``{P:purges}:ack:<id>`` one purge's confirmations. One hash tag, so the log's keys live
  on one slot of a Redis Cluster and one script may touch them all.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import product

UNFILTERED = "_"


def h(value: str) -> str:
    """Short, separator-free digest of a partition value (64 bits: collisions negligible)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class KeySpace:
    prefix: str

    def entry(self, exact: str, *, tenant: str, namespace: str, model: str) -> str:
        return f"{self.prefix}:e:{h(tenant)}:{h(namespace)}:{h(model)}:{exact}"

    def generations(self, *, tenant: str, namespace: str, model: str) -> list[str]:
        """The 8 generation keys covering an entry of this partition, in a fixed order."""
        parts = [(h(tenant), UNFILTERED), (h(namespace), UNFILTERED), (h(model), UNFILTERED)]
        return [f"{self.prefix}:g:{t}:{n}:{m}" for t, n, m in product(*parts)]

    def purge_generation(
        self, *, tenant: str | None, namespace: str | None, model: str | None
    ) -> str:
        """The one generation key a purge with these filters bumps."""
        t, n, m = (UNFILTERED if v is None else h(v) for v in (tenant, namespace, model))
        return f"{self.prefix}:g:{t}:{n}:{m}"

    def purge_pattern(self, *, tenant: str | None, namespace: str | None, model: str | None) -> str:
        """``SCAN MATCH`` pattern of the entries a purge with these filters removes."""
        t, n, m = ("*" if v is None else h(v) for v in (tenant, namespace, model))
        return f"{self.prefix}:e:{t}:{n}:{m}:*"

    def snapshot(self, model: str) -> str:
        """The last upstream snapshot reported for a model name (``P:snap:h(model)``)."""
        return f"{self.prefix}:snap:{h(model)}"

    @property
    def discard(self) -> str:
        """A key written by nothing (stands in for an entry that must not be stored)."""
        return f"{self.prefix}:discard"

    def lease(self, exact: str) -> str:
        return f"{self.prefix}:lease:{exact}"

    def stream(self, exact: str, flight_id: str) -> str:
        return f"{self.prefix}:s:{exact}:{flight_id}"

    @property
    def purge_log(self) -> str:
        return "{" + self.prefix + ":purges}"

    @property
    def purge_epoch(self) -> str:
        return self.purge_log + ":epoch"

    @property
    def purge_trimmed(self) -> str:
        """The last log entry ID trimmed away (a reader older than it missed entries)."""
        return self.purge_log + ":trimmed"

    @property
    def purge_readers(self) -> str:
        return self.purge_log + ":readers"

    def purge_ack(self, ack: str) -> str:
        return f"{self.purge_log}:ack:{ack}"

"""Every Redis key semcache writes, as pure functions of the request's partition.

Every key of a tenant carries the hash tag ``{b}`` of its bucket (``b = h(tenant) mod
buckets``), so each script, which reads an entry with the purge generations covering it,
touches one Redis Cluster slot; generations covering every tenant are kept and bumped in
every bucket. ``P`` is the prefix, ``h(x)`` the first 16 hex digits of SHA-256 of x:

- ``P:e:{b}:h(tenant):h(namespace):h(model):<exact key>``: a stored answer (``v`` the entry,
  ``g`` its generations); a purge finds entries with one ``SCAN MATCH`` per filter.
- ``P:g:{b}``: purge generations, one field ``<t>:<n>:<m>`` per combination of filter fields
  (``_`` unfiltered); an entry is live while the 8 fields covering it are unchanged.
- ``P:w:{b}:<exact key>``: the key's withdrawal mark, checked by ``begin`` and the write.
- ``P:snap:h(model)``: the last upstream snapshot reported for a model name.
- ``P:serve:{b}:<serve id>``: one semantic hit's serve record, so feedback on any replica or
  worker finds it (:mod:`semcache.replicas.serves`).
- ``P:lease:{b}:<exact key>`` / ``P:s:{b}:<exact key>:<flight id>``: a flight's lease and
  its chunk stream; ``P:q:{b}:h(partition)``: the questions in flight in one partition.
- ``{P:purges}``: the purge log stream, with ``:epoch``, ``:trimmed``, ``:readers`` and
  ``:ack:<id>``, all on one slot.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from itertools import product

UNFILTERED = "_"
#: Buckets on a Redis Cluster: enough to spread tenants over any realistic number of masters,
#: few enough that a purge without a tenant (one field in every bucket) stays one quick pipeline.
CLUSTER_BUCKETS = 1024


def h(value: str) -> str:
    """Short, separator-free digest of a partition value (64 bits: collisions negligible)."""
    return hashlib.sha256(value.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class KeySpace:
    prefix: str
    buckets: int = 1

    def __post_init__(self) -> None:
        if self.buckets < 1:
            raise ValueError("buckets must be >= 1")

    def bucket(self, tenant: str) -> int:
        return int(h(tenant), 16) % self.buckets

    def tag(self, tenant: str) -> str:
        """The hash tag of every key of ``tenant`` (its bucket)."""
        return f"{{{self.bucket(tenant)}}}"

    def entry(self, exact: str, *, tenant: str, namespace: str, model: str) -> str:
        return f"{self.prefix}:e:{self.tag(tenant)}:{h(tenant)}:{h(namespace)}:{h(model)}:{exact}"

    def generation_hash(self, tenant: str) -> str:
        """The hash of generations that an entry of ``tenant`` is checked against."""
        return self._generation_hash(self.bucket(tenant))

    def _generation_hash(self, bucket: int) -> str:
        return f"{self.prefix}:g:{{{bucket}}}"

    def generations(self, *, tenant: str, namespace: str, model: str) -> list[str]:
        """The 8 generation fields covering an entry of this partition, in a fixed order."""
        parts = [(h(tenant), UNFILTERED), (h(namespace), UNFILTERED), (h(model), UNFILTERED)]
        return [f"{t}:{n}:{m}" for t, n, m in product(*parts)]

    def purge_generation(
        self, *, tenant: str | None, namespace: str | None, model: str | None
    ) -> str:
        """The one generation field a purge with these filters bumps."""
        t, n, m = (UNFILTERED if v is None else h(v) for v in (tenant, namespace, model))
        return f"{t}:{n}:{m}"

    def purge_hashes(self, tenant: str | None) -> list[str]:
        """The generation hashes a purge bumps its field in: the tenant's bucket, or every
        bucket when the purge is not limited to one tenant."""
        if tenant is not None:
            return [self.generation_hash(tenant)]
        return [self._generation_hash(b) for b in range(self.buckets)]

    def purge_pattern(self, *, tenant: str | None, namespace: str | None, model: str | None) -> str:
        """``SCAN MATCH`` pattern of the entries a purge with these filters removes."""
        tag = "{*}" if tenant is None else self.tag(tenant)
        t, n, m = ("*" if v is None else h(v) for v in (tenant, namespace, model))
        return f"{self.prefix}:e:{tag}:{t}:{n}:{m}:*"

    def snapshot(self, model: str) -> str:
        """The last upstream snapshot reported for a model name: one key of its own, read and
        set in one command (``SET .. GET``) before the write script, which it cannot join."""
        return f"{self.prefix}:snap:{h(model)}"

    def other_generation_hashes(self, tenant: str) -> list[str]:
        """Every bucket's generation hash but the tenant's: where a model change decided by a
        write of ``tenant`` is applied after the write script bumped the tenant's own."""
        own = self.bucket(tenant)
        return [self._generation_hash(b) for b in range(self.buckets) if b != own]

    def serve(self, serve_id: str, *, tenant: str) -> str:
        """One semantic hit's serve record (in the tenant's bucket)."""
        return f"{self.prefix}:serve:{self.tag(tenant)}:{serve_id}"

    def entries_of(self, exact: str, *, tenant: str) -> str:
        """``SCAN MATCH`` pattern of the tenant's entries stored under ``exact`` (any namespace
        and model)."""
        return f"{self.prefix}:e:{self.tag(tenant)}:{h(tenant)}:*:*:{exact}"

    def discard(self, tenant: str) -> str:
        """A key written by nothing (stands in for an entry that must not be stored)."""
        return f"{self.prefix}:discard:{self.tag(tenant)}"

    def withdrawn(self, exact: str, *, tenant: str) -> str:
        """The key's withdrawal mark: a write that began before it changed is refused."""
        return f"{self.prefix}:w:{self.tag(tenant)}:{exact}"

    def lease(self, exact: str, *, tenant: str) -> str:
        return f"{self.prefix}:lease:{self.tag(tenant)}:{exact}"

    def stream(self, exact: str, flight_id: str, *, tenant: str) -> str:
        return f"{self.prefix}:s:{self.tag(tenant)}:{exact}:{flight_id}"

    def in_flight(self, tenant: str, namespace: str, scope: str, embedder: str) -> str:
        """The vector set of questions in flight in one partition (in the tenant's bucket)."""
        partition = h("\x1f".join((tenant, namespace, scope, embedder)))
        return f"{self.prefix}:q:{self.tag(tenant)}:{partition}"

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

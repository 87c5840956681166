"""The shared store: a Qdrant server or cluster through ``qdrant-client``.

``url`` talks to a server (https and an API key for Qdrant Cloud; gRPC when
``prefer_grpc``); ``location=":memory:"`` or ``path=`` run qdrant-client's local mode (for
tests and small data; payload indexes ignored). The embedder name and dimension live in the
collection's metadata, so no reserved point has to be excluded from searches and purges.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from semcache.errors import (
    ConfigError,
    EmbedderMismatchError,
    SemcacheError,
    StoreError,
    StoreLockedError,
)

from ._dirlock import locked_message
from .base import Entry, Match, point_id
from .where import EXPIRES_AT, KEYWORD_FIELDS, Selection, Where

if TYPE_CHECKING:
    from qdrant_client import QdrantClient, models

MEMORY = ":memory:"
META_KEY = "semcache"
META_FORMAT = 1
_FLOAT_FIELDS = (EXPIRES_AT, "created_at")


def _library_errors() -> tuple[type[BaseException], ...]:
    """Everything qdrant-client raises: HTTP/gRPC failures, and ValueError/RuntimeError from
    local mode (missing collection, bad id, closed or locked storage)."""
    import grpc  # type: ignore[import-untyped]
    from qdrant_client.common.client_exceptions import QdrantException
    from qdrant_client.http.exceptions import ApiException

    return (ApiException, QdrantException, grpc.RpcError, ValueError, RuntimeError, OSError)


@contextlib.contextmanager
def _client_errors(operation: str) -> Iterator[None]:
    """The one place qdrant-client errors become :class:`StoreError`."""
    try:
        yield
    except SemcacheError:
        raise
    except _library_errors() as exc:
        raise StoreError(f"qdrant {operation} failed: {exc}") from exc


def _models() -> Any:
    from qdrant_client import models

    return models


def _equalities(pairs: tuple[tuple[str, str], ...]) -> list[models.FieldCondition]:
    m = _models()
    return [m.FieldCondition(key=name, match=m.MatchValue(value=value)) for name, value in pairs]


def _live_filter(where: Where) -> models.Filter:
    """``where`` in Qdrant's terms: its partition equalities AND ``expires_at > now``."""
    m = _models()
    live = m.FieldCondition(key=EXPIRES_AT, range=m.Range(gt=where.now))
    metadata = [
        m.FieldCondition(
            key=path,
            match=m.MatchValue(value=values[0])
            if len(values) == 1
            else m.MatchAny(any=list(values)),
        )
        for path, values in where.metadata_conditions()
    ]
    must = [*_equalities(where.equalities()), live, *metadata]
    return cast("models.Filter", m.Filter(must=must))


def _expired_filter(now: float) -> models.Filter:
    """Entries that are not live at ``now`` (``expires_at <= now``)."""
    m = _models()
    expired = m.FieldCondition(key=EXPIRES_AT, range=m.Range(lte=now))
    return cast("models.Filter", m.Filter(must=[expired]))


def _selection_filter(selection: Selection) -> models.Filter:
    return cast("models.Filter", _models().Filter(must=_equalities(selection.equalities())))


def _index_schemas() -> list[tuple[str, Any]]:
    """The payload indexes lookups and purges use (created at setup when missing)."""
    m = _models()
    tenant = m.KeywordIndexParams(type=m.KeywordIndexType.KEYWORD, is_tenant=True)
    schemas: list[tuple[str, Any]] = [("tenant", tenant)]
    schemas += [(f, m.PayloadSchemaType.KEYWORD) for f in KEYWORD_FIELDS if f != "tenant"]
    schemas += [(name, m.PayloadSchemaType.FLOAT) for name in _FLOAT_FIELDS]
    return schemas


class QdrantStore:
    """:class:`~semcache.stores.base.VectorStore` and ``StoreAdmin`` on a Qdrant collection
    (cosine distance).

    Give exactly one of ``url`` (server), ``location`` (``":memory:"`` or a URL) or ``path``
    (local mode on disk, one process). ``timeout`` is in seconds (qdrant-client rounds it up
    to whole seconds). Safe to call from several threads: local mode, which is not
    thread-safe, is serialised behind a lock.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        location: str | None = None,
        path: str | None = None,
        api_key: str | None = None,
        collection: str = "semcache",
        prefer_grpc: bool = True,
        timeout: float = 2.0,
    ) -> None:
        sources = {"url": url, "location": location, "path": path}
        given = [name for name, value in sources.items() if value is not None]
        if len(given) != 1:
            raise ConfigError(
                f"QdrantStore needs exactly one of url, location or path; got {given or 'none'}"
            )
        self._url, self._location, self._path = url, location, path
        self._api_key = api_key
        self._collection = collection
        self._prefer_grpc = prefer_grpc
        self._timeout = timeout
        self._local = path is not None or location == MEMORY
        self._guard: contextlib.AbstractContextManager[Any] = (
            threading.Lock() if self._local else contextlib.nullcontext()
        )
        self._client: QdrantClient | None = None

    def setup(self, embedder: str, dim: int) -> None:
        from qdrant_client import QdrantClient

        with self._guard:
            opened_here = self._client is None
            if self._client is None:
                self._client = self._connect(QdrantClient)
            try:
                self._open_collection(self._client, embedder, dim)
            except BaseException:
                if opened_here:  # a failed setup leaves nothing open (and no lock held)
                    client, self._client = self._client, None
                    with _client_errors("close"):
                        client.close()
                raise

    def _open_collection(self, client: QdrantClient, embedder: str, dim: int) -> None:
        with _client_errors("setup"):
            if not client.collection_exists(self._collection):
                self._create(client, embedder, dim)
            info = client.get_collection(self._collection)
        meta = (info.config.metadata or {}).get(META_KEY)
        if meta is None:
            raise StoreError(
                f"collection {self._collection!r} exists but was not created by semcache "
                "(no 'semcache' metadata); choose another collection name"
            )
        size = getattr(info.config.params.vectors, "size", None)
        if (meta.get("embedder"), meta.get("dim"), size) != (embedder, dim, dim):
            raise EmbedderMismatchError(
                f"collection {self._collection!r} was created with embedder "
                f"{meta.get('embedder')!r} (dim {meta.get('dim')}), not {embedder!r} (dim {dim}); "
                "vectors of two models cannot be compared: use another collection or purge it"
            )
        if not self._local:  # local mode ignores payload indexes (and warns about them)
            present = set(info.payload_schema or {})
            with _client_errors("setup"):
                for name, schema in _index_schemas():
                    if name not in present:
                        client.create_payload_index(self._collection, name, field_schema=schema)

    def _connect(self, factory: type[QdrantClient]) -> QdrantClient:
        try:
            if self._path is not None:
                return factory(path=self._path, force_disable_check_same_thread=True)
            if self._local:
                return factory(location=MEMORY)
            return factory(
                url=self._url,
                location=self._location,
                api_key=self._api_key,
                prefer_grpc=self._prefer_grpc,
                timeout=math.ceil(self._timeout),
                check_compatibility=False,
            )
        except RuntimeError as exc:
            if self._path is not None and "already accessed" in str(exc):
                raise StoreLockedError(locked_message(Path(self._path), "unknown")) from exc
            raise StoreError(f"cannot open qdrant storage: {exc}") from exc
        except _library_errors() as exc:
            raise StoreError(f"cannot open qdrant storage: {exc}") from exc

    def _create(self, client: QdrantClient, embedder: str, dim: int) -> None:
        m = _models()
        try:
            client.create_collection(
                self._collection,
                vectors_config=m.VectorParams(size=dim, distance=m.Distance.COSINE),
                metadata={META_KEY: {"format": META_FORMAT, "embedder": embedder, "dim": dim}},
            )
        except _library_errors():
            if client.collection_exists(self._collection):
                return  # another process created it first; setup() validates its metadata
            raise

    def close(self) -> None:
        with self._guard:
            client, self._client = self._client, None
        if client is not None:
            with _client_errors("close"):
                client.close()

    def _open(self) -> QdrantClient:
        if self._client is None:
            raise StoreError("store is not open; call setup() first")
        return self._client

    # -- reads --------------------------------------------------------------------------

    def nearest(self, vector: np.ndarray, where: Where) -> Match | None:
        matches = self.nearest_k(vector, where, 1)
        return matches[0] if matches else None

    def nearest_k(self, vector: np.ndarray, where: Where, k: int) -> list[Match]:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise StoreError(f"k must be an int >= 1, got {k!r}")
        with self._guard, _client_errors("search"):
            points = (
                self._open()
                .query_points(
                    self._collection,
                    query=np.asarray(vector, dtype=np.float32).tolist(),
                    query_filter=_live_filter(where),
                    limit=k,
                    with_payload=True,
                )
                .points
            )
        matches = [
            Match(Entry.from_payload(p.payload or {}), similarity=float(p.score)) for p in points
        ]
        return [m for m in map(where.verified, matches) if m is not None]

    def retrieve(self, key: str, where: Where) -> Entry | None:
        with self._guard, _client_errors("retrieve"):
            records = self._open().retrieve(self._collection, [point_id(key)], with_payload=True)
        return where.retrieved(
            key, Entry.from_payload(records[0].payload or {}) if records else None
        )

    def count(self) -> int:
        with self._guard, _client_errors("count"):
            return self._open().count(self._collection, exact=True).count

    def recent(self, *, tenant: str | None = None, limit: int = 50) -> list[Entry]:
        m = _models()
        with self._guard, _client_errors("recent"):
            records, _ = self._open().scroll(
                self._collection,
                scroll_filter=_selection_filter(Selection(tenant=tenant)),
                limit=limit,
                order_by=m.OrderBy(key="created_at", direction=m.Direction.DESC),
                with_payload=True,
            )
        return [Entry.from_payload(r.payload or {}) for r in records]

    # -- writes -------------------------------------------------------------------------

    def upsert(self, entries: Sequence[Entry]) -> None:
        m = _models()
        points = []
        for entry in entries:
            if entry.vector is None:
                raise StoreError(f"entry {entry.key!r} has no vector")
            vector = np.asarray(entry.vector, dtype=np.float32).tolist()
            points.append(
                m.PointStruct(id=point_id(entry.key), vector=vector, payload=entry.payload())
            )
        if points:
            with self._guard, _client_errors("upsert"):
                self._open().upsert(self._collection, points=points, wait=True)

    def purge(
        self, *, tenant: str | None = None, namespace: str | None = None, model: str | None = None
    ) -> int:
        selection = Selection(tenant=tenant, namespace=namespace, model=model)
        return self._delete_matching(_selection_filter(selection))

    def purge_expired(self, now: float) -> int:
        return self._delete_matching(_expired_filter(now))

    def _delete_matching(self, selection: models.Filter) -> int:
        """Count, then delete. Against a server, writes of other clients between the two
        calls make the count approximate; the deletion itself is complete."""
        selector = _models().FilterSelector(filter=selection)
        with self._guard, _client_errors("purge"):
            client = self._open()
            found = client.count(self._collection, count_filter=selection, exact=True).count
            if found:
                client.delete(self._collection, points_selector=selector, wait=True)
        return found

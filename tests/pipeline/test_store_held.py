"""A second process on an embedded store gets one clear error, never silent misses.

Issue 24, item 7: the second process's warm-up hit ``StoreLockedError``, fail-open swallowed
it and every lookup was a miss. Now ``ready()`` raises it, naming the path, the holder's pid
and the fix. The holder is a real second process.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from semcache import CacheSettings, SemanticCache
from semcache.errors import StoreLockedError
from semcache.testing import FakeEmbedder

HOLDER = """
import sys
from semcache.stores import QdrantEdgeStore
store = QdrantEdgeStore(sys.argv[1])
store.setup("fake-bow-64", 64)
print("HELD", flush=True)
sys.stdin.read()  # hold the store until the test closes our stdin
store.close()
"""


def _cache(path: Path) -> SemanticCache:
    settings = CacheSettings(store={"backend": "edge", "path": str(path)})
    return SemanticCache(settings, embedder=FakeEmbedder())


def test_a_second_process_gets_one_clear_error_at_ready(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "HELD"
        with _cache(tmp_path) as cache, pytest.raises(StoreLockedError) as refused:
            cache.ready()
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    message = str(refused.value)
    assert f"store.path {tmp_path}" in message
    assert f"pid {holder.pid}" in message
    assert "own store.path" in message and 'store.backend = "qdrant"' in message
    assert 'store.backend = "redis"' in message

    with _cache(tmp_path) as cache:  # the holder is gone: the same path opens
        assert cache.ready() is True

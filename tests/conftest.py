"""Shared fixtures: offline environment, a local OpenAI-compatible upstream, caches."""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

import ast
import gc
import threading
from collections.abc import Iterator

# CPython 3.11.7 keeps the AST converter's recursion counter in one global (gh-106905, fixed
# in 3.12): two threads in ast.parse at once fail with "AST constructor recursion depth
# mismatch". LiteLLM calls ast.literal_eval on request paths (in semcache's loop thread)
# while pytest parses sources for assertion rewriting and failure reports, so serialise it.
_ast_parse, _ast_lock = ast.parse, threading.RLock()


def _serialised_parse(*args, **kwargs):
    with _ast_lock:
        return _ast_parse(*args, **kwargs)


ast.parse = _serialised_parse

import pytest  # noqa: E402

from semcache.testing import FakeOpenAIServer, echo_responder  # noqa: E402


def pytest_collection_finish(session: pytest.Session) -> None:
    """Start the mypy gate in the background when it is selected (see tests/test_types.py)."""
    import tempfile
    from pathlib import Path

    from test_types import TEST_ID, mypy_installed, start_mypy

    if mypy_installed() and any(item.nodeid == TEST_ID for item in session.items):
        workdir = Path(tempfile.mkdtemp(prefix="semcache-mypy-"))
        session.config._semcache_mypy_dir = workdir  # type: ignore[attr-defined]
        session.config._semcache_mypy = start_mypy(workdir)  # type: ignore[attr-defined]


def pytest_unconfigure(config: pytest.Config) -> None:
    """End what is still pending on semcache's loop before pytest's final collections.

    pytest collects garbage at the end of the session (its unraisable-exception check),
    before any ``atexit`` hook; a LiteLLM logging-worker task left behind on semcache's loop
    would be destroyed there, pending, and print "Task was destroyed but it is pending!".
    """
    import shutil

    from semcache.runtime.loop import end_shared_tasks

    end_shared_tasks()
    proc = getattr(config, "_semcache_mypy", None)
    if proc is not None and proc.poll() is None:  # the run stopped before the gate's test
        proc.kill()
        proc.wait()
    workdir = getattr(config, "_semcache_mypy_dir", None)
    if workdir is not None:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    """For tests with a latency bound: they measure the cache, not the garbage collector.

    By the middle of the suite this process holds LiteLLM, torch, Qdrant and every earlier
    test's survivors; one full collection walks all of it (0.4 s measured with the imports
    alone), and one landing inside a 100 ms bound failed a shedding test once in about eight
    full runs (19 of 20 requests finished together at 102 ms). ``semcache serve`` freezes
    its start-up heap the same way (``server.gc_freeze``).
    """
    from semcache.server.cli import freeze_startup_heap

    freeze_startup_heap()
    try:
        yield
    finally:
        gc.unfreeze()


@pytest.fixture(scope="session")
def upstream_server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        _warm_up_litellm(server)
        yield server


def _warm_up_litellm(server: FakeOpenAIServer) -> None:
    """LiteLLM's first call imports for ~1 s while blocking its loop; do it before timing tests."""
    import litellm

    request = {
        "model": "openai/gpt-4o-mini",
        "api_base": server.api_base,
        "api_key": "sk-warmup",
        "messages": [{"role": "user", "content": "warm up"}],
    }
    litellm.completion(**request)
    for _ in litellm.completion(**request, stream=True):
        pass
    server.reset()


@pytest.fixture
def upstream(upstream_server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """The session's fake upstream, reset to defaults for each test."""
    upstream_server.reset()
    upstream_server.responder = echo_responder
    upstream_server.delay_s = 0.0
    upstream_server.chunk_delay_s = 0.0
    upstream_server.chunks = 4
    yield upstream_server
    upstream_server.reset()


@pytest.fixture(scope="session")
def minilm():
    """The bundled all-MiniLM-L6-v2 embedder, loaded once per session."""
    from semcache.embedders import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder()
    embedder.embed(["warm up"])
    return embedder

"""The house rules a newcomer relies on: no import cycles, a small package root, short modules."""

from __future__ import annotations

import graphlib

import pytest

from tests.house.import_graph import import_graph, module_files

#: A guide, not a cap: a module past it is named below with the one job that keeps it whole.
SOFT_LINES = 300
MAX_ROOT_MODULES = 10

#: Modules longer than ``SOFT_LINES``, each with the responsibility it holds in one place.
LONGER_MODULES = {
    "semcache.testing._redis_server": "starting and stopping real Redis servers and clusters",
    "semcache.testing._openai_server": "the loopback OpenAI-compatible upstream, every route",
    "semcache.server.validate": "every field check of a chat request, one table",
    "semcache.eval.cli": "the eval command's options and its run",
    "semcache.eval.report": "the eval report, one document",
    "semcache.eval.recalibrate": "the live recalibration's run, one procedure",
    "semcache.eval.calibrate_cmd": "the calibrate command's run, top to bottom",
    "semcache.compose.semantic": "building the semantic tier from settings (composition root)",
    "semcache.stores.qdrant": "one store backend: the Qdrant server",
    "semcache.stores.edge": "one store backend: the embedded engine",
    "semcache.stores.redis_vectors": "one store backend: Redis vector sets and their scripts",
    "semcache.pipeline.semantic": "the semantic lookup stage",
    "semcache.pipeline.semantic_tier": "embedding, search and the partition of the semantic tier",
    "semcache.pipeline.merge": "the in-flight merge: follow, lead, switch",
    "semcache.pipeline.write_behind": "write-behind: batching, fences, flush reports",
    "semcache.core.fingerprint": "the versioned fingerprint and its exclusion list",
    "semcache.cli.demo": "the demo's scripted request stream and its report",
    "semcache.replicas.flights": "the cross-replica flight protocol on Redis streams",
    "semcache.replicas.purges": "the purge log: append, follow, replay, gaps",
    "semcache.embedders.batcher": "the embedder's micro-batcher and its queue",
    "semcache.embedders.onnx_runtime": "the ONNX export and runtime of one embedder",
    "semcache.config.check": "cross-field checks of the settings, one list",
    "semcache.config.sections": "the settings sections and their field docs",
    "semcache.privacy.gate": "the private-data gate's verdicts and policies",
    "semcache.stats": "the counters and the records a request leaves",
    "semcache.direct": "the direct API: check, store, drop, update",
}


def test_no_import_cycles() -> None:
    graph = import_graph()
    try:
        tuple(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as cycle:
        pytest.fail("import cycle: " + " -> ".join(cycle.args[1]))


def test_the_cycle_check_sees_a_cycle() -> None:
    """Guards the check itself: a graph with a loop is refused."""
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter({"a": {"b"}, "b": {"a"}}).static_order())
    graph = import_graph()
    assert "semcache.errors" in graph["semcache.cache"] or graph["semcache.cache"]
    assert any(name.startswith("semcache.stores.") for name in graph)


def test_package_root_is_small() -> None:
    files = module_files()
    root = [n for n in files if n.count(".") == 1 and files[n].name != "__init__.py"]
    assert len(root) + 1 <= MAX_ROOT_MODULES, sorted(root)  # + semcache/__init__.py


def test_a_long_module_is_named_with_its_one_job() -> None:
    lengths = {name: len(path.read_text().splitlines()) for name, path in module_files().items()}
    unnamed = {
        n: lines for n, lines in lengths.items() if lines > SOFT_LINES
    } - LONGER_MODULES.keys()
    assert not unnamed, {n: lengths[n] for n in unnamed}
    stale = {n for n in LONGER_MODULES if lengths.get(n, 0) <= SOFT_LINES}
    assert not stale, f"no longer long (or gone): drop them from LONGER_MODULES: {sorted(stale)}"


def test_stores_and_embedders_import_only_errors_from_the_core() -> None:
    graph = import_graph()
    allowed = ("semcache.errors", "semcache.stores", "semcache.embedders")
    for name, edges in graph.items():
        if name.startswith(("semcache.stores", "semcache.embedders")):
            outside = {e for e in edges if not e.startswith(allowed)}
            assert not outside, (name, outside)

"""The house rules a newcomer relies on: no import cycles, a small package root, short modules."""

from __future__ import annotations

import graphlib

import pytest

from tests.house.import_graph import import_graph, module_files

MAX_LINES = 400
MAX_ROOT_MODULES = 10


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


def test_no_module_is_long() -> None:
    long = {
        name: lines
        for name, path in module_files().items()
        if (lines := len(path.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long


def test_stores_and_embedders_import_only_errors_from_the_core() -> None:
    graph = import_graph()
    allowed = ("semcache.errors", "semcache.stores", "semcache.embedders")
    for name, edges in graph.items():
        if name.startswith(("semcache.stores", "semcache.embedders")):
            outside = {e for e in edges if not e.startswith(allowed)}
            assert not outside, (name, outside)

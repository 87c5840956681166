"""Every Python snippet in README.md and docs/*.md runs as written, and again after ``ready()``.

A snippet runs offline (LiteLLM's ``mock_response`` or the loopback ``FakeOpenAIServer``), in
an empty working directory it must leave empty, with ``XDG_CACHE_HOME`` pointed at a temporary
folder: a snippet that forgot its own temporary store would still not touch the user's. Each
snippet that builds a ``SemanticCache`` must give it a store of its own
(``store={"path": ":memory:"}``), so a copy run twice, or beside another process holding the
default store, behaves the same. The ``ready()`` variant inserts ``cache.ready()`` as the
first statement inside every ``with SemanticCache(...) as cache:`` block, as docs/usage.md
advises for a first request that should hit the store.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(r"^```python\n(.*?)^```", re.S | re.M)
WITH_CACHE = re.compile(r"^(?P<indent> *)with .*SemanticCache\(.*\bas cache:\n", re.M)


def snippets() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        for number, body in enumerate(FENCE.findall(page.read_text(encoding="utf-8")), 1):
            found.append((f"{page.relative_to(ROOT)}#{number}", body))
    return found


SNIPPETS = snippets()
CACHE_SNIPPETS = [(name, body) for name, body in SNIPPETS if "SemanticCache(" in body]


def with_ready(body: str) -> str:
    """``body`` with ``cache.ready()`` first inside each ``with … SemanticCache(…) as cache:``."""

    def insert(match: re.Match[str]) -> str:
        return f"{match.group(0)}{match.group('indent')}    assert cache.ready()\n"

    changed, count = WITH_CACHE.subn(insert, body)
    assert count, "no `with SemanticCache(...) as cache:` line to insert ready() after"
    return changed


def run(name: str, body: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "user-cache"))
    exec(compile(body, name, "exec"), {"__name__": "snippet"})
    assert list(work.iterdir()) == [], f"{name} wrote into the working directory"


@pytest.mark.parametrize(("name", "body"), SNIPPETS, ids=[name for name, _ in SNIPPETS])
def test_snippet_runs_as_written(name, body, tmp_path, monkeypatch):
    run(name, body, tmp_path, monkeypatch)


@pytest.mark.parametrize(("name", "body"), CACHE_SNIPPETS, ids=[n for n, _ in CACHE_SNIPPETS])
def test_snippet_runs_with_ready(name, body, tmp_path, monkeypatch):
    """With ``ready()`` the store is up before the first call: a snippet must still hold (one
    that read a store shared with an earlier run would find that run's answers and fail)."""
    run(name, with_ready(body), tmp_path, monkeypatch)


@pytest.mark.parametrize(("name", "body"), CACHE_SNIPPETS, ids=[n for n, _ in CACHE_SNIPPETS])
def test_snippet_opens_a_store_of_its_own(name, body):
    assert 'store={"path": ":memory:"}' in body, f"{name}: give the cache a temporary store"


def test_the_snippets_are_found():
    names = {name.split("#")[0] for name, _ in SNIPPETS}
    assert {"README.md", "docs/usage.md", "docs/compression.md"} <= names
    assert len([n for n in CACHE_SNIPPETS if n[0].startswith("README.md")]) >= 3
    assert with_ready("with SemanticCache(s) as cache:\n    x = 1\n") == (
        "with SemanticCache(s) as cache:\n    assert cache.ready()\n    x = 1\n"
    )


LINK = re.compile(r"\]\(([^)\s]+)\)")


def heading_anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings (lower case, punctuation dropped, - for spaces)."""
    anchors = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            anchors.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return anchors


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_relative_links_point_at_files_and_headings(page):
    for target in LINK.findall(page.read_text(encoding="utf-8")):
        if "://" in target:
            continue
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        assert linked.exists(), f"{page.name} links to missing {target}"
        if anchor:
            assert anchor in heading_anchors(linked), f"{page.name}: no heading for {target}"


def test_the_direct_api_snippet_prints_the_stored_answer(tmp_path, monkeypatch, capsys):
    """``check`` right after ``store`` reads that write (read-your-writes): the page's first
    snippet prints the answer as written, not nothing."""
    name, body = next((n, b) for n, b in SNIPPETS if n == "docs/direct-api.md#1")
    run(name, body, tmp_path, monkeypatch)
    printed = capsys.readouterr().out
    assert printed.startswith("Settings > Security > Reset. {'source': 'faq'"), printed

"""The type checker gate: ``mypy --strict`` over the whole ``semcache`` namespace.

The namespace is assembled from four folders by setuptools' ``package-dir`` (``embedders``,
``stores``, ``eval`` and ``guard`` become ``semcache.*``), which mypy cannot follow through an
editable install; the test lays the same mapping out as links in a temporary tree.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(900)
def test_mypy_strict_passes_over_the_whole_namespace(tmp_path):
    if shutil.which("mypy", path=str(Path(sys.executable).parent)) is None:
        pytest.skip("mypy is not installed (it is in the [dev] extra)")
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    tree = tmp_path / "tree"
    package = tree / "semcache"
    package.mkdir(parents=True)
    for child in (ROOT / mapping["semcache"]).iterdir():
        (package / child.name).symlink_to(child)
    for name, folder in mapping.items():
        if name != "semcache":
            (package / name.split(".", 1)[1]).symlink_to(ROOT / folder)
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"),
         "--cache-dir", str(tmp_path / "cache"), "-p", "semcache"],
        cwd=tree, capture_output=True, text=True, timeout=880,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-6000:]

"""The type checker gate: ``mypy --strict`` over the whole ``semcache`` namespace.

The namespace is assembled from four folders by setuptools' ``package-dir`` (``embedders``,
``stores``, ``eval`` and ``guard`` become ``semcache.*``), which mypy cannot follow through an
editable install; the gate lays the same mapping out as links in a temporary tree.

mypy takes about three minutes from a cold cache (a fresh clone has no other), nearly all of
it on one core while the rest of the suite mostly waits on servers and sockets. So when this
test is selected, ``tests/conftest.py`` starts the same check in the background as soon as
collection ends (``start_mypy``), and the test only collects its verdict: the same check over
the same files, overlapped with the suite instead of added to it.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TEST_ID = "tests/test_types.py::test_mypy_strict_passes_over_the_whole_namespace"
_TIMEOUT_S = 880


def mypy_installed() -> bool:
    return shutil.which("mypy", path=str(Path(sys.executable).parent)) is not None


def start_mypy(workdir: Path) -> subprocess.Popen[str]:
    """Lay the package-dir mapping out under ``workdir`` and start mypy over it."""
    mapping = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-dir"
    ]
    tree = workdir / "tree"
    package = tree / "semcache"
    package.mkdir(parents=True)
    for child in (ROOT / mapping["semcache"]).iterdir():
        (package / child.name).symlink_to(child)
    for name, folder in mapping.items():
        if name != "semcache":
            (package / name.split(".", 1)[1]).symlink_to(ROOT / folder)
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(workdir / "cache"),
            "-p",
            "semcache",
        ],
        cwd=tree,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.mark.timeout(900)
def test_mypy_strict_passes_over_the_whole_namespace(request: pytest.FixtureRequest) -> None:
    if not mypy_installed():
        pytest.skip("mypy is not installed (it is in the [dev] extra)")
    proc: subprocess.Popen[str] | None = getattr(request.config, "_semcache_mypy", None)
    if proc is None:  # run on its own (or the hook did not start it): start it now
        workdir = Path(tempfile.mkdtemp(prefix="semcache-mypy-"))
        request.addfinalizer(lambda: shutil.rmtree(workdir, ignore_errors=True))
        proc = start_mypy(workdir)
    try:
        output, _ = proc.communicate(timeout=_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        raise
    assert proc.returncode == 0, output[-6000:]

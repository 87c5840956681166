"""The notebooks run headless, top to bottom, without a cell error.

Each notebook runs in a fresh kernel of *this* interpreter: the test writes a kernel spec
whose command is ``sys.executable`` into a temporary directory and puts that directory first
on ``JUPYTER_PATH``, so a fresh ``pip install -e ".[dev]"`` venv needs no ``ipykernel install``
step and a user-level ``python3`` kernel pointing at another Python is never picked up.

The tests set ``SEMCACHE_NOTEBOOK_SMOKE=1``: the notebooks run every cell on less data (a few
dozen pairs per third-party file, fewer replays). To re-execute them in place with the full
data, as committed, and refresh ``docs/threshold_tradeoff.png``::

    SEMCACHE_DEV_DATA=../shared/data/dev HF_HUB_OFFLINE=1 LITELLM_LOCAL_MODEL_COST_MAP=True \
        .venv/bin/python tests/test_notebooks.py

(``SEMCACHE_DEV_DATA``: a folder of third-party pair files notebook 01 also sweeps; without
it, as in the tests, which run each notebook from a copy outside the checkout, it uses the
packaged pairs only.)

Deselect with ``-m "not notebooks"``.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import pytest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ("01_threshold_tradeoffs.ipynb", "02_cache_simulation.ipynb", "03_tuning_loop.ipynb")
KERNEL = "semcache-test-python"
CELL_TIMEOUT_S = 600
OFFLINE = {"HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@contextmanager
def this_interpreter_kernel(env: Mapping[str, str]) -> Iterator[None]:
    """``KERNEL`` runs ``sys.executable`` with ``env`` added, while the block runs."""
    from ipykernel.kernelspec import write_kernel_spec

    with tempfile.TemporaryDirectory(prefix="semcache-kernels-") as root:
        write_kernel_spec(Path(root) / "kernels" / KERNEL)
        jupyter_path = os.pathsep.join(filter(None, [root, os.environ.get("JUPYTER_PATH")]))
        with mock.patch.dict(os.environ, {**env, "JUPYTER_PATH": jupyter_path}):
            yield


def execute(path: Path, env: Mapping[str, str]) -> object:
    """Run every cell of the notebook at ``path`` (cwd: its folder); return the executed node.

    Raises ``nbclient.exceptions.CellExecutionError`` at the first cell that fails.
    """
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.read(path, as_version=4)
    with this_interpreter_kernel(env):
        NotebookClient(
            notebook,
            kernel_name=KERNEL,
            timeout=CELL_TIMEOUT_S,
            resources={"metadata": {"path": str(path.parent)}},
        ).execute()
    notebook.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3 (ipykernel)",
        "language": "python",
    }
    return notebook


def error_outputs(notebook) -> list[str]:
    """``ename: evalue`` of every error output (none when ``allow_errors`` is off and all ran)."""
    return [
        f"{output.ename}: {output.evalue}"
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.get("outputs", [])
        if output.output_type == "error"
    ]


@pytest.mark.notebooks
@pytest.mark.timeout(CELL_TIMEOUT_S)
@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs_without_errors(name: str, tmp_path: Path) -> None:
    """Run from a copy outside the checkout, as after a fresh install: only packaged data."""
    pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    env = {**OFFLINE, "SEMCACHE_NOTEBOOK_SMOKE": "1", "SEMCACHE_NOTEBOOK_WRITE_DOCS": "0"}
    copy = tmp_path / name
    shutil.copyfile(NOTEBOOKS / name, copy)
    with mock.patch.dict(os.environ):
        os.environ.pop("SEMCACHE_DEV_DATA", None)
        notebook = execute(copy, env)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, f"{name} has no code cells"
    assert all(cell.execution_count is not None for cell in code), "a code cell did not run"
    assert error_outputs(notebook) == []
    # every notebook draws at least one figure and ends by printing its run time
    images = [o for c in code for o in c.outputs if "image/png" in o.get("data", {})]
    assert images, f"{name} drew no figure"
    assert "notebook ran in" in "".join(o.get("text", "") for o in code[-1].outputs)


@pytest.mark.notebooks
def test_kernel_is_this_interpreter_and_a_failing_cell_fails(tmp_path: Path) -> None:
    pytest.importorskip("nbclient")
    import nbformat
    from nbclient.exceptions import CellExecutionError
    from nbformat.v4 import new_code_cell, new_notebook

    probe = tmp_path / "probe.ipynb"
    nbformat.write(new_notebook(cells=[new_code_cell("import sys; print(sys.executable)")]), probe)
    ran = execute(probe, OFFLINE)
    assert ran.cells[0].outputs[0].text.strip() == sys.executable

    nbformat.write(new_notebook(cells=[new_code_cell("raise ValueError('boom')")]), probe)
    with pytest.raises(CellExecutionError, match="boom"):
        execute(probe, OFFLINE)


@pytest.mark.notebooks
def test_committed_notebooks_hold_their_outputs() -> None:
    """The notebooks are committed executed, so GitHub shows the plots without a kernel."""
    import nbformat

    for name in NAMES:
        notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
        code = [cell for cell in notebook.cells if cell.cell_type == "code"]
        assert all(cell.execution_count is not None for cell in code), f"{name}: not executed"
        assert error_outputs(notebook) == [], name
        assert any("image/png" in o.get("data", {}) for c in code for o in c.outputs), name


def committed_text(name: str) -> str:
    """Every text and Markdown output of the committed notebook ``name``, joined."""
    import nbformat

    notebook = nbformat.read(NOTEBOOKS / name, as_version=4)
    parts = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            parts.append(output.get("text", ""))
            parts.append(output.get("data", {}).get("text/markdown", ""))
    return "\n".join(parts)


@pytest.mark.notebooks
def test_committed_notebooks_show_what_their_text_says() -> None:
    """01 certifies something and leaves no panel empty; 02 and 03 print the lines their text
    reads (other_tenant never served another tenant's answer; when the alert was on)."""
    first = committed_text(NAMES[0])
    certified = re.search(r"(\d+) of (\d+) rows certify a threshold", first)
    assert certified and int(certified.group(1)) > 0, "01's calibration table certifies nothing"
    assert "not drawn, no hit" not in first
    assert re.search(r"answers made for another tenant: 0\.", committed_text(NAMES[1]))
    assert re.search(r"the cache's alert, on its last \d+ verdicts", committed_text(NAMES[2]))


def main() -> int:
    """Execute both notebooks with the full data and save them with their outputs."""
    import nbformat

    env = {**OFFLINE, "SEMCACHE_NOTEBOOK_SMOKE": "0", "SEMCACHE_NOTEBOOK_WRITE_DOCS": "1"}
    for name in NAMES:
        started = time.perf_counter()
        notebook = execute(NOTEBOOKS / name, env)
        nbformat.write(notebook, NOTEBOOKS / name)
        print(f"{name}: executed and saved in {time.perf_counter() - started:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""An eval stopped by a real signal keeps every finished group on disk."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

# The child runs `semcache eval` on two files; its embedder answers the first file's texts
# and blocks on the second's, after touching a marker so the test knows group one is done.
CHILD = textwrap.dedent(
    """
    import signal, sys, threading
    from pathlib import Path
    import numpy as np
    from semcache.eval import cli, resolve

    marker = Path(sys.argv[1])

    class Blocking:
        name = "blocking"
        dim = 4

        def embed(self, texts):
            if any(t.startswith("second") for t in texts):
                marker.touch()
                threading.Event().wait()  # until the signal arrives
            rows = [np.eye(4, dtype=np.float32)[len(t) % 4] for t in texts]
            return np.stack(rows) if rows else np.zeros((0, 4), np.float32)

    resolve.resolve_embedder = lambda *args, **kwargs: Blocking()
    # A job a non-interactive shell starts in the background (as CI may run this suite)
    # inherits SIGINT ignored, and Python keeps it so: give the child Ctrl-C as a terminal would.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.exit(cli.eval_main(sys.argv[2:]))
    """
)


def _pairs(path: Path, prefix: str) -> Path:
    rows = [
        {"text_a": f"{prefix} question {i}", "text_b": f"{prefix} ask {i}x", "label": i % 2}
        for i in range(12)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_keeps_the_finished_sets(tmp_path: Path, signum: int) -> None:
    first = _pairs(tmp_path / "first.jsonl", "first")
    second = _pairs(tmp_path / "second.jsonl", "second")
    marker, out = tmp_path / "blocked", tmp_path / "out"
    argv = ["--data", str(first), "--data", str(second), "--embedder", "x", "--out", str(out)]
    argv += ["--no-plots", "--verifier", "none"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), *argv],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert child.poll() is None, child.communicate()
            assert time.monotonic() < deadline, "the child never reached the second set"
            time.sleep(0.05)
        child.send_signal(signum)
        _, stderr = child.communicate(timeout=60)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 130, stderr
    assert "kept the 1 finished group(s) of 2" in stderr
    summary = json.loads((out / "summary.json").read_text())
    assert {row["dataset"] for row in summary} == {"first"}
    assert not list(out.glob(".*.tmp"))  # no half-written file left behind

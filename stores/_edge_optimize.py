"""Optimise a copy of an edge shard in a child process: ``python _edge_optimize.py SHARD_DIR``.

Run by file path so the child imports qdrant_edge and nothing of semcache; it lowers its own
CPU priority, prints ``optimized`` or ``unchanged`` and exits 0, or exits non-zero with the
engine's message. It must not outlive its parent: on Linux it asks for SIGKILL when the
parent dies (``PR_SET_PDEATHSIG``) and checks ``EDGE_OPTIMIZE_PARENT_PID`` is alive (a
watchdog thread would not do: ``optimize()`` holds the GIL).
"""

from __future__ import annotations

import contextlib
import os
import sys

NICE_INCREMENT = 10
PARENT_VARIABLE = "EDGE_OPTIMIZE_PARENT_PID"
_PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Be killed when the parent dies; exit now if it already has."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    expected = os.environ.get(PARENT_VARIABLE)
    if expected is not None and expected.isdigit() and not _alive(int(expected)):
        sys.exit(3)  # the parent died before the kernel could be asked to tell us


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def main(shard_dir: str) -> int:
    die_with_parent()
    import qdrant_edge

    with contextlib.suppress(OSError):  # a courtesy: normal priority is still correct
        os.nice(NICE_INCREMENT)
    shard = qdrant_edge.EdgeShard.load(shard_dir)
    try:
        changed = shard.optimize()
        shard.flush()
    finally:
        shard.close()
    print("optimized" if changed else "unchanged")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))

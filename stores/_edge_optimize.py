"""Optimise a copy of an edge shard in a child process: ``python _edge_optimize.py SHARD_DIR``.

Run by file path (not ``-m``) so that the child imports qdrant_edge and nothing of semcache.
Why a separate process at all is explained in :mod:`semcache.stores.edge`. The child lowers its
own CPU priority so that the serving process keeps answering lookups while it builds HNSW
graphs. It prints ``optimized`` or ``unchanged`` and exits 0, or exits non-zero with the
engine's message on stderr.
"""

from __future__ import annotations

import contextlib
import os
import sys

NICE_INCREMENT = 10


def main(shard_dir: str) -> int:
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

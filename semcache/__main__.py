"""``python -m semcache``: the same command line as ``semcache``."""

from semcache.cli import run

run()

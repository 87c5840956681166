"""``python -m semcache``: the same command line as ``semcache``."""

from semcache.cli import main

raise SystemExit(main())

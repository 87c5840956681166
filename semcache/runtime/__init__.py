"""Services below the request path: semcache's event loop, admission control, fail-open
degradation and the upstream call. They import nothing of the path above them."""

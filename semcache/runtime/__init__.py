"""Plumbing that runs the request path: semcache's event loop, admission control, fail-open
degradation, delivery to the caller, streams, the upstream call, health and operator actions."""

"""The facade's operations, above the request path: delivery of what it found, streams, the
direct API's lookups and writes, embeddings, health, and the operators' actions (purge,
counters, shutdown). They call the assembled path (``semcache.compose``); nothing below
imports them."""

"""What replicas share through one Redis: the exact tier and cross-replica coalescing.

``keys`` names every Redis key (pure), ``connect`` opens the client (TLS, auth, lazily),
``exact`` is the shared exact tier with its purge generations, ``flights`` the lease and
chunk stream of a cross-replica flight. The pipeline stages that use them live in
``semcache.pipeline.redis_exact`` and ``semcache.pipeline.shared_flight``.
"""

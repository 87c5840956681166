"""Configuration: the declared ``CacheSettings`` and the checks that name a bad setting."""

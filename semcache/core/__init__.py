"""The cache's pure core: request identity, sharing policy, coalescing, the memory tier and
the answer envelope. Nothing here does network I/O or reads settings."""

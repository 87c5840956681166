"""What replicas share through one Redis: the exact tier, cross-replica flights, the purge log."""

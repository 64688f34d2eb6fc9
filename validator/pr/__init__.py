"""Pull-request mode: what changed since the merge base, its neighbourhood, and checking only that."""

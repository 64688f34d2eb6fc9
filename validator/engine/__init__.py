"""Evaluating a registry: the full check, a pull request, or shards merged; the pipeline's shared steps."""

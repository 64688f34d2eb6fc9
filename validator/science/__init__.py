"""Formulas with sources: figures recomputed from samples, physical bounds, copy statistics, loss curves."""

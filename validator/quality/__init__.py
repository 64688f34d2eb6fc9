"""Quality evidence (SPEC §3 "Quality runs"): lm-eval output -> quality run files, re-scoring, status vs reference."""

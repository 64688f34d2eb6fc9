"""Test helpers in one package (as pre-commit's testing/): an isolated git, registry trees, recipe and run factories."""

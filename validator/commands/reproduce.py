"""`orv reproduce RECIPE`: the commands that re-run a recipe, ready to paste (validator/stacks/reproduce.py).
A recipe that cannot be read is an AdapterError: its findings, exit 1 (cli/error_handler.py)."""

from __future__ import annotations

from validator.commands.outcome import Outcome
from validator.stacks.reproduce import reproduce as plan


def reproduce(root: str, recipe: str) -> Outcome:
    outcome = Outcome()
    outcome.out("\n".join(plan(root, recipe).lines))
    return outcome

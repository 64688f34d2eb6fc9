"""`orv reproduce RECIPE`: the commands that re-run a recipe, ready to paste (validator/stacks/reproduce.py)."""

from __future__ import annotations

from validator.commands.outcome import Outcome
from validator.errors import AdapterError, ExitCode
from validator.stacks.reproduce import reproduce as plan


def reproduce(root: str, recipe: str) -> Outcome:
    try:
        done = plan(root, recipe)
    except AdapterError as exc:
        return Outcome(findings=exc.result, exit_code=ExitCode.FINDINGS)
    outcome = Outcome()
    outcome.out("\n".join(done.lines))
    return outcome

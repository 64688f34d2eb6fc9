"""`orv sign RUN --key KEY`: sign a stored run file as its measurer (RUN.sig beside it)."""

from __future__ import annotations

from validator.commands.add_run import sign_stored
from validator.commands.outcome import Outcome


def sign(root: str, run: str, key: str) -> Outcome:
    outcome = Outcome()
    sign_stored(root, run, key, outcome)
    return outcome

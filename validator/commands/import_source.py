"""`orv import leaderboard|legacy-boards FILE`: a legacy source's recipes and run files, and the import report.
A source (or catalog) that cannot be read is an ImportInputError: its finding, exit 1 (cli/error_handler.py)."""

from __future__ import annotations

import os

from validator.commands.outcome import Outcome
from validator.errors import ExitCode
from validator.importers import execute
from validator.importers.report import render_summary


def import_source(command: str, root: str, file: str, report_path: str | None) -> Outcome:
    """Import FILE with the named importer; exit 1 when a generated file conflicted with one a person wrote."""
    report, saved = execute(command, root, file, report_path)
    return Outcome(
        report=render_summary(report, os.path.relpath(saved)),
        exit_code=ExitCode.FINDINGS if report.conflicts else ExitCode.OK,
    )

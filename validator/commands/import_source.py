"""`orv import leaderboard|legacy-boards FILE`: a legacy source's recipes and run files, and the import report."""

from __future__ import annotations

import os

from validator.commands.outcome import Outcome
from validator.errors import ExitCode, ImportInputError
from validator.importers import execute
from validator.importers.report import render_summary


def import_source(command: str, root: str, file: str, report_path: str | None) -> Outcome:
    """Import FILE with the named importer; exit 1 when a finding stopped it or a generated file conflicted."""
    try:
        report, saved = execute(command, root, file, report_path)
    except ImportInputError as exc:
        return Outcome(findings=exc.result, exit_code=ExitCode.FINDINGS)
    return Outcome(
        report=render_summary(report, os.path.relpath(saved)),
        exit_code=ExitCode.FINDINGS if report.conflicts else ExitCode.OK,
    )

"""Importers for the legacy sources: seed 000's training leaderboard and seed 004's boards export.

`execute` is what `orv import <command>` runs: import, then save the report (Markdown and a JSON
twin). The importers write recipes and run files themselves, through validator.registry.store.
"""

from __future__ import annotations

import os
from collections.abc import Callable

from validator.files.atomic import transaction, write_atomic
from validator.importers.leaderboard import import_leaderboard
from validator.importers.legacy_boards import import_legacy_boards
from validator.importers.report import ImportReport, render_json, render_markdown

IMPORTER_BY_COMMAND: dict[str, Callable[[str, str], ImportReport]] = {
    "leaderboard": import_leaderboard,
    "legacy-boards": import_legacy_boards,
}


def default_report_path(root: str, command: str) -> str:
    return os.path.join(root, "docs", f"import-report-{command}.md")


def execute(command: str, root: str, source: str, report_path: str | None = None) -> tuple[ImportReport, str]:
    """Run one import into the registry at `root`; returns the report and where it was saved.

    Raises validator.errors.ImportInputError when the source or catalog cannot be read.
    """
    # every file of an import lands together or none does; other orv writers wait (docs/durability.md)
    with transaction(root):
        report = IMPORTER_BY_COMMAND[command](root, source)
        path = report_path or default_report_path(root, command)
        write_atomic(path, render_markdown(report).encode("utf-8"))
        write_atomic(os.path.splitext(path)[0] + ".json", render_json(report).encode("utf-8"))
    return report, path

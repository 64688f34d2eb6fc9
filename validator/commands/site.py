"""`orv site DIRECTORY`: the boards rendered as a static website, replaced atomically (docs/site.md)."""

from __future__ import annotations

import dataclasses
import os
from typing import Any

import orjson

from validator.boards.split import BoardsUnreadable, check_out_boards, read_boards
from validator.commands.outcome import Outcome, ProgressLine
from validator.errors import Refusal
from validator.files.atomic import environment_problem
from validator.git.partial import check_out_files
from validator.registry.layout import CATALOG_FILES
from validator.site import SiteContext, boards_problem, file_base, render_site, write_site
from validator.site.collect import collect_context, files_read


def site(
    directory: str, boards_file: str | None, root: str | None, repo_url: str | None, progress: ProgressLine
) -> Outcome:
    """Render the committed boards of `root` (or the one-file document `boards_file`) into `directory`."""
    outcome = Outcome()
    path = boards_file or os.path.join(root or ".", "boards")
    try:
        boards: Any
        if boards_file is not None:
            with open(boards_file, "rb") as fh:
                boards = orjson.loads(fh.read())
        else:
            assert root is not None  # the CLI finds the registry when no boards file is given
            check_out_boards(root)
            boards = read_boards(root)
            if boards is None:
                raise BoardsUnreadable("the registry has no boards/index.json")
    except (OSError, orjson.JSONDecodeError, BoardsUnreadable) as exc:
        raise Refusal(f"cannot read {path}: {exc}", "run `orv boards` first, or pass --boards FILE") from None
    problem = boards_problem(boards)
    if problem is not None:
        raise Refusal(
            f"{path} is not a boards document this orv can render ({problem})",
            "regenerate it with this version's `orv boards`",
        )
    if root:
        check_out_files(root, [*CATALOG_FILES, *files_read(boards)])
    context = collect_context(os.path.abspath(root), boards) if root else SiteContext()
    meta = boards.get("meta") or {}
    context = dataclasses.replace(context, file_base=file_base(directory, root, repo_url, meta.get("source_commit")))
    with progress("orv site: rendering recipe pages") as show:
        files = render_site(boards, context, show)
    try:
        write_site(directory, files)
    except OSError as exc:  # a SiteError (a folder orv must not replace) ends the command: exit 2 with its words
        environment = (
            environment_problem(OSError(exc.errno, exc.strerror, directory)) if exc.errno is not None else None
        )
        if environment is None:
            raise Refusal(str(exc)) from None
        return outcome.fail(environment)  # a full disk or a read-only folder: the machine's condition, exit 1
    outcome.out(f"{directory}: {len(files):,} files, {sum(map(len, files.values())):,} bytes")
    return outcome

"""`orv boards`: regenerate the generated files under boards/ (or --check them, or write them --combined)."""

from __future__ import annotations

import os

from validator.boards import keyfile
from validator.boards.build import render
from validator.boards.regenerate import FILE_LIMIT_MB, MB, first_difference, oversized, regenerate_files
from validator.boards.split import BoardsUnreadable, committed_files, read_boards
from validator.commands.outcome import Outcome, ProgressLine
from validator.engine.evaluate import analyse
from validator.errors import ExitCode, Refusal
from validator.files.atomic import environment_problem, remove, transaction, write_atomic
from validator.git.sparse import WHOLE_CHECKOUT, refuse_sparse
from validator.load.pipeline import default_jobs
from validator.registry.layout import (
    BOARDS_MODELS_DIR,
    BOARDS_PATH,
    BOARDS_STANDINGS_DIR,
    DOCUMENT_PATH,
    KEYS_DIR,
    KEYS_PATH,
)


class FileTooLarge(Refusal):
    """A generated file would pass the size limit: nothing is written (exit 1)."""

    exit_code = ExitCode.FINDINGS


def boards(
    root: str,
    check_only: bool,
    jobs: int | None,
    cache: bool,
    progress: ProgressLine,
    max_file_bytes: int | None = None,
) -> Outcome:
    """Regenerate every generated file, or (check_only) say which differ from a fresh regeneration.
    Either way, refuse before writing anything when a generated file would pass `max_file_bytes` (default
    FILE_LIMIT_MB)."""
    refuse_sparse(
        root,
        "`orv boards`",
        "The boards are main's: a branch never regenerates them (ORV609); "
        f"to build them anyway, first: {WHOLE_CHECKOUT}.",
    )
    outcome = Outcome()
    # the same loading as `orv check`, and of the registry checks only those a tier reads (physics)
    with progress("orv boards: loading") as show:
        analysis = analyse(root, jobs=jobs or default_jobs(), cache=cache, for_tiers=True, progress=show)
    fresh = regenerate_files(analysis)  # a HistoryError (a shallow clone) ends the command: exit 2 with its hint
    fresh.update(keyfile.fresh_key_files(analysis.snapshot))
    _refuse_oversized(fresh, max_file_bytes or FILE_LIMIT_MB * MB)
    committed = {**committed_files(root), **keyfile.committed_files(root)}
    leftover = sorted(set(committed) - set(fresh))  # a model no longer on the boards, a key shard no longer used
    changed = sorted(path for path, data in fresh.items() if committed.get(path) != data)
    if check_only:
        for path in changed:
            if path not in committed:
                outcome.out(f"{path} is missing; run `orv boards`")
                continue
            diff = first_difference(committed[path], fresh[path])
            assert diff is not None
            outcome.out(
                f"{path}:{diff[0]}: out of date (committed `{diff[1]}`, regenerated `{diff[2]}`); run `orv boards`"
            )
        for path in leftover:
            if path == DOCUMENT_PATH:
                outcome.out(
                    f"{path} is left over: the combined document is published by the boards workflow, never "
                    "committed (`orv boards --combined OUT` writes it); run `orv boards`, which removes it"
                )
                continue
            outcome.out(f"{path} is left over (no model on the boards writes it); run `orv boards`")
        outcome.out(f"{len(fresh) - len(changed)} of {len(fresh)} generated files up to date")
        if changed or leftover:
            outcome.exit_code = ExitCode.FINDINGS
        return outcome
    left_off = sum(1 for entry in analysis.snapshot.recipes if entry.recipe is None)
    if left_off:
        outcome.note(
            f"orv: note: {left_off} recipe file(s) cannot be read or fail their schema: left off the "
            "boards (`orv check` lists every finding)"
        )
    if not analysis.snapshot.catalog_ok:
        outcome.note("orv: note: the catalog has errors (`orv check` lists them); the boards show what loaded")
    # every file lands together; writers of the registry take turns (docs/durability.md). The index goes
    # last and left-over files are removed after it, for a reader without the lock
    with outcome.said_before(), transaction(root):
        for path in sorted(changed, key=lambda p: p in (BOARDS_PATH, KEYS_PATH)):
            write_atomic(os.path.join(root, path), fresh[path])
        for path in leftover:
            remove(os.path.join(root, path))
    said = [f"{path} {'written' if path in changed else 'unchanged'}" for path in (BOARDS_PATH, KEYS_PATH)]
    if DOCUMENT_PATH in leftover:
        said.append(f"{DOCUMENT_PATH} removed (the boards workflow publishes it: `orv boards --combined OUT`)")
    for folder in (BOARDS_MODELS_DIR, BOARDS_STANDINGS_DIR, KEYS_DIR):
        inside = [path for path in fresh if path.startswith(folder + "/")]
        written = sum(1 for path in inside if path in changed)
        removed = sum(1 for path in leftover if path.startswith(folder + "/"))
        said.append(f"{folder}/: {written} written, {len(inside) - written} unchanged, {removed} removed")
    outcome.out("\n".join(said))  # once they are in place: a refused write says only that
    return outcome


def _refuse_oversized(fresh: dict[str, bytes], limit_bytes: int) -> None:
    """FileTooLarge naming every generated file over the limit, before anything is written."""
    over = oversized(fresh, limit_bytes)
    if not over:
        return
    named = ", ".join(f"{path} ({size:,} bytes)" for path, size in over[:5])
    more = f" and {len(over) - 5} more" if len(over) > 5 else ""
    raise FileTooLarge(
        f"a generated file would pass the limit of {limit_bytes:,} bytes: {named}{more}; nothing was written",
        "a model's file grows with that model's recipes and GitHub refuses files over 100 MB (it warns at "
        "50 MB), so the boards must be split finer before this registry can publish them: report it to orv's "
        'maintainers with this message (docs/boards.md, "File sizes"). A registry not hosted on GitHub may '
        "raise the limit: `orv boards --max-file-mb N`",
    )


def combined(root: str, out: str) -> Outcome:
    """`orv boards --combined OUT`: the committed boards as one document, written atomically."""
    outcome = Outcome()
    try:
        document = read_boards(root)
    except BoardsUnreadable as exc:
        raise Refusal(
            f"cannot read the boards: {exc}", "run `orv boards` to regenerate them", ExitCode.FINDINGS
        ) from None
    if document is None:
        raise Refusal("the registry has no boards yet", "run `orv boards` first", ExitCode.FINDINGS)
    try:
        write_atomic(os.path.abspath(out), render(document))
    except OSError as exc:
        return outcome.fail(environment_problem(exc) or f"orv: cannot write {out}: {exc}")
    outcome.out(
        f"{out}: the boards of {len(document['models'])} trained model(s), "
        f"{sum(len(rows) for rows in document['boards'].values())} rows, {len(document['runs'])} runs"
    )
    return outcome

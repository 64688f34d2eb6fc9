"""`orv boards`: regenerate the generated files under boards/ (or --check them, or write them --combined)."""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping

from validator.boards import keyfile
from validator.boards.build import GitStamp, render
from validator.boards.regenerate import FILE_LIMIT_MB, MB, STAMP_DIRS, first_difference, over_limit, regenerate_files
from validator.boards.split import (
    BoardsUnreadable,
    check_out_boards,
    chunk_paths,
    committed_files,
    file_reader,
    read_boards,
    read_index,
)
from validator.boards.update import (
    ROWS_RELATED_BY,
    BoardsNotPatchable,
    ChunksChange,
    chunk_keys,
    patched_files,
    reach,
    touched_chunk_paths,
)
from validator.commands.outcome import Outcome, ProgressLine
from validator.engine.evaluate import analyse
from validator.engine.evaluation import Config, Evaluation
from validator.errors import ExitCode, Refusal
from validator.evidence.tiers import tier_reads
from validator.files.atomic import environment_problem, remove, transaction, write_atomic
from validator.git.diff import MODE_SYMLINK, FileChange
from validator.git.history import newest_commit_touching
from validator.git.partial import fetch_range_trees
from validator.git.plumbing import commit_trees, worktree_trees
from validator.git.sparse import WHOLE_CHECKOUT, hidden_blobs, keep_written, materialize, refuse_sparse, widen
from validator.load.cache import catalog_references, derivation_key
from validator.load.pipeline import default_jobs
from validator.pr.incremental import evaluate_change
from validator.registry.layout import (
    BOARDS_MODELS_DIR,
    BOARDS_PATH,
    BOARDS_STANDINGS_DIR,
    CATALOG_FILES,
    DOCUMENT_PATH,
    KEYS_DIR,
    KEYS_PATH,
    SIGNERS_PATH,
    classify,
)
from validator.registry.relations import content_keys


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
    fresh[KEYS_PATH], shards = keyfile.fresh_keys(analysis.snapshot)
    # the key shards are made one at a time as they are compared (and written), never all held: their sizes
    # are known before, so a file over the limit is refused before any is made
    _refuse_oversized(
        {**{path: len(data) for path, data in fresh.items()}, **shards.sizes}, max_file_bytes or FILE_LIMIT_MB * MB
    )
    # and the committed ones read one at a time too (keyfile.committed_files)
    committed_keys, committed_boards = keyfile.committed_files(root), committed_files(root)

    def committed(path: str) -> bytes | None:
        return committed_keys.get(path) if path in committed_keys else committed_boards.get(path)

    paths = [*fresh, *shards.sizes]
    # a model no longer on the boards, a key shard no longer used
    leftover = sorted((set(committed_keys) | set(committed_boards)) - set(paths))
    if check_only:
        stale: dict[str, str] = {}  # path -> what `--check` says of it, of every file that differs
        for path, data in itertools.chain(fresh.items(), shards.made()):
            was = committed(path)
            if was != data:
                stale[path] = _stale(path, was, data)
        for path in sorted(stale):
            outcome.out(stale[path])
        for path in leftover:
            if path == DOCUMENT_PATH:
                outcome.out(
                    f"{path} is left over: the combined document is published by the boards workflow, never "
                    "committed (`orv boards --combined OUT` writes it); run `orv boards`, which removes it"
                )
                continue
            outcome.out(f"{path} is left over (no model on the boards writes it); run `orv boards`")
        outcome.out(f"{len(paths) - len(stale)} of {len(paths)} generated files up to date")
        if stale or leftover:
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
    # every file lands together; writers of the registry take turns (docs/durability.md). Written in path
    # order, each key shard as it is made (staged by the transaction, so a reader still sees none of them
    # before the end); the index goes last and left-over files are removed after it, for a reader without the lock
    changed: set[str] = set()

    def write(path: str, data: bytes) -> None:
        if committed(path) != data:
            write_atomic(os.path.join(root, path), data)
            changed.add(path)

    with outcome.said_before(), transaction(root):
        held = sorted(path for path in fresh if path not in (BOARDS_PATH, KEYS_PATH))
        at = 0  # the held files written so far (in path order, between the shards)
        for path, data in shards.made():
            while at < len(held) and held[at] < path:
                write(held[at], fresh[held[at]])
                at += 1
            write(path, data)
        for path in [*held[at:], *sorted((BOARDS_PATH, KEYS_PATH))]:
            write(path, fresh[path])
        for path in leftover:
            remove(os.path.join(root, path))
    said = [f"{path} {'written' if path in changed else 'unchanged'}" for path in (BOARDS_PATH, KEYS_PATH)]
    if DOCUMENT_PATH in leftover:
        said.append(f"{DOCUMENT_PATH} removed (the boards workflow publishes it: `orv boards --combined OUT`)")
    for folder in (BOARDS_MODELS_DIR, BOARDS_STANDINGS_DIR, KEYS_DIR):
        inside = [path for path in paths if path.startswith(folder + "/")]
        written = sum(1 for path in inside if path in changed)
        removed = sum(1 for path in leftover if path.startswith(folder + "/"))
        said.append(f"{folder}/: {written} written, {len(inside) - written} unchanged, {removed} removed")
    outcome.out("\n".join(said))  # once they are in place: a refused write says only that
    return outcome


def update(
    root: str,
    jobs: int | None,
    cache: bool,
    progress: ProgressLine,
    max_file_bytes: int | None = None,
) -> Outcome:
    """`orv boards --incremental`: after a merge, rewrite only what the data changed since the commit the
    committed boards were made from (boards/update.py): the touched models' files, the index and the key
    shards of the changed files' keys. Works in a sparse, partial clone (it checks out just what it reads
    and writes). Regenerates everything instead, saying why, whenever a patch cannot be trusted to equal
    a regeneration; in a sparse checkout it first checks every file out (`git sparse-checkout disable`)."""
    try:
        return _update(root, jobs or default_jobs(), cache, max_file_bytes or FILE_LIMIT_MB * MB)
    except BoardsNotPatchable as exc:
        reason = str(exc)
    widen(root, f"orv boards --incremental: {reason}")
    outcome = boards(root, False, jobs, cache, progress, max_file_bytes)
    outcome.lines.insert(0, ("out", f"full regeneration: {reason}"))
    return outcome


def _stale(path: str, was: bytes | None, fresh: bytes) -> str:
    """What `orv boards --check` says of a generated file whose committed bytes differ from the fresh ones
    (read once: first_difference finds a line)."""
    if was is None:
        return f"{path} is missing; run `orv boards`"
    diff = first_difference(was, fresh)
    assert diff is not None  # (the bytes differ)
    return f"{path}:{diff[0]}: out of date (committed `{diff[1]}`, regenerated `{diff[2]}`); run `orv boards`"


def _update(root: str, jobs: int, cache: bool, limit_bytes: int) -> Outcome:
    """The incremental update, or BoardsNotPatchable saying why a full regeneration must run."""
    outcome = Outcome()
    # what is read before the diff: the index (its stamp names the commit the boards were made from), the
    # keys' header (its orv stamp: this orv's code, schemas and catalog), and what the stamp is made of
    materialize(root, [BOARDS_PATH, KEYS_PATH, *CATALOG_FILES, SIGNERS_PATH])
    materialize(root, sorted(catalog_references(root)))
    read = file_reader(root)
    try:
        index = read_index(read(BOARDS_PATH))
    except BoardsUnreadable as exc:
        raise BoardsNotPatchable(f"the committed boards cannot be read ({exc})") from None
    if index is None:
        raise BoardsNotPatchable(f"there are no committed boards ({BOARDS_PATH})")
    since = index["meta"].get("source_commit")
    if not isinstance(since, str) or not since:
        raise BoardsNotPatchable(f"{BOARDS_PATH} names no data commit they were made from")
    # a tree-less clone: the trees of the commits since then, only where they differ from HEAD's (reading
    # `since`'s folders below, the diff and the walk for the newest data commit would each fetch a whole tree)
    fetch_range_trees(root, since)
    stamp = derivation_key(root)
    header = keyfile.read_header(read(KEYS_PATH), stamp)
    if header is None:
        raise BoardsNotPatchable(
            f"{KEYS_PATH} is missing, unreadable or stamped by another orv (its code, schemas or catalog changed)"
        )
    if header.total is None:
        raise BoardsNotPatchable(f"{KEYS_PATH} was written before it recorded its shards' size")
    if commit_trees(root, since, keyfile.TREE_DIRS) != dict(header.trees):
        raise BoardsNotPatchable(f"{KEYS_PATH} was not made from data commit {since[:12]}, which {BOARDS_PATH} names")
    # only what a tier reads is checked (as `orv boards` does), over the relations a row is read across
    evaluation = evaluate_change(
        Config(root=root, base=since, jobs=jobs, cache=cache),
        data_only=True,
        keep=tier_reads,
        rows_related_by=ROWS_RELATED_BY,
        keys_at="HEAD",  # the committed keys, made from `since` (checked above)
    )
    if evaluation is None:
        raise BoardsNotPatchable(
            f"the data changed since {since[:12]} outside recipes/ and runs/ (catalog, measurers or a submodule)"
        )
    assert evaluation.change is not None and evaluation.base is not None
    data = [c for c in evaluation.change.files if c.path.split("/", 1)[0] in keyfile.TREE_DIRS]
    if not data:
        outcome.out(f"boards up to date: nothing changed in recipes/ or runs/ since {since[:12]}")
        return outcome
    found = reach(evaluation)
    newest = newest_commit_touching(root, STAMP_DIRS, since)
    # the keys: each changed keyed file's old and new version, and the shards their keys fall in
    changes, still = _key_changes(evaluation, data)
    shard_paths = {
        keyfile.shard_path(keyfile.shard_name(k, header.digits))
        for pair in changes
        for side in pair
        if side
        for k in side.keys
    }
    # what is read, checked out in one call (each rewrites git's index and fetches once); the standings are
    # only written (derived from the parts), so a sparse checkout never fetches them
    materialize(root, [*found.read_paths(), *sorted(shard_paths)])
    # of the touched models' rows, only the chunks holding the merge's recipes and runs
    chunks = touched_chunk_paths(read, found, chunk_keys(evaluation, found))
    materialize(root, chunks)
    newest_stamp = GitStamp(*newest) if newest else None
    try:
        files, removed = patched_files(evaluation, read, found, newest_stamp)
    except ChunksChange as change:  # a model doubled (or halved): every chunk of it is rewritten
        more = [path for path in chunk_paths(read, change.models) if path not in chunks]
        materialize(root, more)
        chunks += more
        files, removed = patched_files(evaluation, read, found, newest_stamp, change.models)
    try:
        keys = keyfile.patched_key_files(
            read, header, header.total, changes, still, stamp, worktree_trees(root, keyfile.TREE_DIRS)
        )
    except keyfile.KeysUnusable as exc:
        raise BoardsNotPatchable(f"a key shard cannot be read ({exc})") from None
    if keys is None:
        raise BoardsNotPatchable("the key shards would take one more hex digit (every shard is renamed)")
    files.update(keys[0])
    removed += keys[1]
    _refuse_oversized({path: len(data) for path, data in files.items()}, limit_bytes)
    materialize(root, removed)  # a model leaving the boards (rare): its files are removed from the checkout
    # a file left out of the checkout (written only) is compared by git's blob id, without fetching it
    left_out = hidden_blobs(root, files)
    changed = sorted(
        path
        for path, data in files.items()
        if (left_out[path] != keyfile.blob_id(data) if path in left_out else read(path) != data)
    )
    gone = [path for path in removed if read(path) is not None]
    with outcome.said_before(), transaction(root):
        for path in sorted(changed, key=lambda p: p in (BOARDS_PATH, KEYS_PATH)):  # the index last, as boards() does
            write_atomic(os.path.join(root, path), files[path])
        for path in gone:
            remove(os.path.join(root, path))
    # written, never read (left out, or a chunk no manifest listed: a model new to the boards, or stored in
    # more chunks than before): a pattern each, so the workflow's `git add -A -- boards/` takes them
    written_only = set(left_out)
    written_only |= {path for path in changed if path.startswith(BOARDS_MODELS_DIR + "/") and path.count("/") == 3}
    written_only -= set(chunks)
    keep_written(root, [path for path in changed if path in written_only])
    outcome.out(
        f"incremental update since {since[:12]}: {len(data)} changed file(s) in recipes/ and runs/ touch "
        f"{len(found.models)} model(s) ({', '.join(sorted(found.models)) or 'none'}); "
        f"{len(changed)} generated file(s) written, {len(files) - len(changed)} unchanged, {len(gone)} removed"
    )
    return outcome


def _key_changes(
    evaluation: Evaluation, data: list[FileChange]
) -> tuple[list[tuple[keyfile.FileKeys | None, keyfile.FileKeys | None]], Callable[[str], bool]]:
    """Each changed keyed file's (old, new) blob and content keys, as `orv boards` would publish them
    (keyfile.published_files: the files the snapshot loaded), and whether an unchanged file keeps a blob."""
    assert evaluation.change is not None and evaluation.base is not None
    root = evaluation.snapshot.root
    changes = []
    for c in data:
        old = new = None
        loaded = evaluation.base.snapshot.loaded.get(c.path)
        if loaded is not None and c.present_at_base:
            raw = evaluation.change.base.read(c.path)
            if raw is not None:
                old = keyfile.FileKeys(keyfile.blob_id(raw), tuple(content_keys(loaded[0])))
        loaded = evaluation.snapshot.loaded.get(c.path)
        if loaded is not None and c.present_at_head:
            with open(os.path.join(root, c.path), "rb") as fh:
                new = keyfile.FileKeys(keyfile.blob_id(fh.read()), tuple(content_keys(loaded[0])))
        changes.append((old, new))
    changed_paths = {c.path for c in data}
    by_blob: dict[str, list[str]] | None = None

    def still_held(blob: str) -> bool:
        nonlocal by_blob
        if by_blob is None:  # the base's listing, once and only when a file's old bytes may live on elsewhere
            assert evaluation.change is not None
            by_blob = {}
            for rel, (mode, object_id) in evaluation.change.base.listing(keyfile.TREE_DIRS).items():
                if rel not in changed_paths and mode != MODE_SYMLINK and classify(rel) in keyfile.KEYED:
                    by_blob.setdefault(object_id, []).append(rel)
        return blob in by_blob

    return changes, still_held


def _refuse_oversized(sizes: Mapping[str, int], limit_bytes: int) -> None:
    """FileTooLarge naming every generated file over the limit (`sizes`: each one's bytes), before anything
    is written."""
    over = over_limit(sizes, limit_bytes)
    if not over:
        return
    named = ", ".join(f"{path} ({size:,} bytes)" for path, size in over[:5])
    more = f" and {len(over) - 5} more" if len(over) > 5 else ""
    raise FileTooLarge(
        f"a generated file would pass the limit of {limit_bytes:,} bytes: {named}{more}; nothing was written",
        "a model's rows and runs are stored in chunks of about a fixed number each, but its manifest and "
        "standings grow with its recipes (and a chunk with unusually large rows), and GitHub refuses files over "
        "100 MB (it warns at 50 MB), so the boards must be split finer before this registry can publish them: "
        'report it to orv\'s maintainers with this message (docs/boards.md, "File sizes"). A registry not '
        "hosted on GitHub may raise the limit: `orv boards --max-file-mb N`",
    )


def combined(root: str, out: str) -> Outcome:
    """`orv boards --combined OUT`: the committed boards as one document, written atomically."""
    outcome = Outcome()
    try:
        check_out_boards(root)  # a push's sparse checkout: the index and the parts, nothing else
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

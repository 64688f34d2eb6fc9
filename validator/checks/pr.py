"""ORV6xx: pull-request rules — what a change may do to the registry, judged against its merge base."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.errors import LoadError
from validator.evidence.signing import keys_by_principal, parse_signers
from validator.git.diff import ADDED, DELETED, MODE_SUBMODULE, MODE_SYMLINK, FileChange
from validator.load.documents import decode_utf8, parse_yaml
from validator.pr.change import Change
from validator.registry.layout import (
    DOCUMENT_PATH,
    REGISTRY_DIRS,
    SIGNERS_PATH,
    classify,
    is_generated,
    run_digest_from_path,
)

E, W = Severity.ERROR, Severity.WARNING

CONTRIBUTION_DIRS = ("recipes", "runs")
RECIPE_KINDS = ("recipe-training", "recipe-inference")
# Files that define the check itself: a pull request touching them ran its own version of the gate.
GATE_FILES = (
    "validator/",
    "schema/",
    "requirements/",
    ".github/",
    "action.yml",
    "pyproject.toml",
    ".pre-commit-hooks.yaml",
)


@dataclass(frozen=True)
class _BaseRecipe:
    path: str
    id: str
    data: dict[str, Any] | None  # None when the base file did not parse


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].rsplit(".", 1)[0]


def _verb(c: FileChange) -> str:
    return {ADDED: "adds", DELETED: "deletes"}.get(c.status, "changes")


def _base_recipes(change: Change) -> dict[str, _BaseRecipe]:
    """Recipes as they were at the merge base, by id — only those whose files this change touches."""
    out: dict[str, _BaseRecipe] = {}
    for c in change.files:
        if not c.present_at_base or classify(c.path) not in RECIPE_KINDS:
            continue
        data = _parse_yaml(change.base.read(c.path))
        value = data.get("id") if data is not None else None
        rid = value if isinstance(value, str) else _stem(c.path)
        out.setdefault(rid, _BaseRecipe(c.path, rid, data))
    return out


def _parse_yaml(raw: bytes | None) -> dict[str, Any] | None:
    if raw is None:
        return None
    try:
        data = parse_yaml(decode_utf8(raw))
    except LoadError:
        return None
    return data if isinstance(data, dict) else None


def renames(change: Change) -> dict[str, str]:
    """Base path -> head path of each recipe the pull request moved (`git mv`, perhaps with edits).

    The diff is taken without rename detection, so a move is a deleted and an added recipe; they
    are paired when their texts are at least half alike, git's own default rename threshold.
    """
    deleted = [c.path for c in change.files if c.status == DELETED and classify(c.path) in RECIPE_KINDS]
    added = [
        c.path
        for c in change.files
        if c.status == ADDED and classify(c.path) in RECIPE_KINDS and c.path in change.snapshot.documents
    ]
    out: dict[str, str] = {}
    for old in deleted:
        raw = change.base.read(old)
        if raw is None or not added:
            continue
        before = raw.decode("utf-8", "replace")
        score, new = max(
            (difflib.SequenceMatcher(None, before, change.snapshot.documents[new].text).ratio(), new) for new in added
        )
        if score >= 0.5:
            out[old] = new
            added.remove(new)
    return out


def _changed_recipes(change: Change) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """(path, id, data) of every recipe the change adds or edits that parsed as a mapping."""
    touched = change.head_paths
    for entry in change.snapshot.recipes:
        if entry.path in touched and isinstance(entry.doc.data, dict):
            yield entry.path, entry.id or _stem(entry.path), entry.doc.data


@check("ORV601", E, "run file modified or deleted", scope="pr")
def run_files_are_append_only(change: Change) -> Iterator[Finding]:
    """
    A pull request modifies or deletes a run file that exists on the base branch. Run files are the
    evidence behind published tiers and are named by the SHA-256 of their bytes, so they are
    append-only: once merged, a run file never changes and never goes away.

    Restore the file (`git checkout origin/main -- runs/ab/ab….json`). To correct a measurement,
    store the new output as a new run file with `orv add-run FILE` and list its `sha256:` reference
    in the recipe's `runs:`; the old run stays on record.
    """
    for c in change.files:
        kind = classify(c.path)
        if c.status == ADDED or kind not in ("run", "run-signature"):
            continue
        noun = "run file" if kind == "run" else "run signature"  # a signature is evidence too
        if c.status == DELETED:
            message = f"this pull request deletes {noun} `{c.path}`, which is on the base branch"
        else:
            message = f"this pull request changes {noun} `{c.path}`, which is on the base branch"
        yield Finding(
            c.path,
            message,
            f"run files are append-only: restore it with `git checkout {change.base_ref} -- {c.path}`; "
            "to correct a measurement add a new run file with `orv add-run`",
            line=1,
            col=1,
        )


@check("ORV602", E, "recipe id renamed or removed", scope="pr")
def recipe_ids_are_permanent(change: Change) -> Iterator[Finding]:
    """
    A recipe id that exists on the base branch is gone after this pull request: the recipe was
    deleted, or its `id` (and file name) changed. Recipe ids are permanent — the boards, links from
    the leaderboard and discussions refer to them.

    Keep the id and the file name, and edit the recipe in place. A different configuration is a new
    recipe with a new id, next to the old one. Retiring a recipe is a maintainer's decision (they
    can waive ORV602 for that pull request).

    A moved file (`git mv`, a deleted and an added recipe at least half alike) is reported on the
    new file's `id:` line, where the diff shows it; the move keeps its `provenance` (no ORV605).
    """
    snapshot = change.snapshot
    head_ids = {entry.id or _stem(entry.path) for entry in snapshot.recipes}
    moved = renames(change)
    for rid, base in sorted(_base_recipes(change).items()):
        if rid in head_ids:
            continue
        hint = (
            f"keep `id: {rid}` in `{rid}.yaml`; a new configuration gets a new recipe beside it; "
            "only a maintainer can retire a recipe"
        )
        if base.path in moved:  # annotated on the new file's `id:` line, which the diff shows
            new_path = moved[base.path]
            now = snapshot.documents[new_path].data
            new_id = now.get("id") if isinstance(now, dict) else None
            yield Finding(
                new_path,
                f"recipe id `{rid}` (on the base branch, {base.path}) is renamed to `{new_id}` and its file moved",
                hint,
                at=("id",),
            )
        elif base.path in snapshot.documents:
            now = snapshot.documents[base.path].data
            new_id = now.get("id") if isinstance(now, dict) else None
            yield Finding(
                base.path, f"recipe id `{rid}` (on the base branch) is renamed to `{new_id}`", hint, at=("id",)
            )
        else:
            yield Finding(
                base.path, f"this pull request removes recipe `{rid}`, which is on the base branch", hint, line=1, col=1
            )


def _same_value(a: Any, b: Any) -> bool:
    if (
        isinstance(a, (int, float))
        and isinstance(b, (int, float))
        and not isinstance(a, bool)
        and not isinstance(b, bool)
    ):
        return float(a) == float(b)  # 1480 and 1480.0 are the same claim
    return bool(a == b)


def _claim_changes(before: Any, after: Any) -> list[tuple[str, Any, Any]]:
    """(metric, old, new) for each claimed figure that differs; whole-block change as metric ''."""
    if not isinstance(before, dict) or not isinstance(after, dict):
        return [] if before == after else [("", before, after)]
    return [
        (k, before.get(k), after.get(k))
        for k in sorted(set(before) | set(after))
        if not _same_value(before.get(k), after.get(k))
    ]


def _run_refs(data: Mapping[str, Any]) -> set[str]:
    refs = data.get("runs")
    if not isinstance(refs, list):
        return set()
    return {r.split(":", 1)[1] for r in refs if isinstance(r, str) and r.startswith("sha256:")}


@check("ORV603", E, "claim changed without a new run", scope="pr")
def changed_claims_need_a_new_run(change: Change) -> Iterator[Finding]:
    """
    A pull request changes the `claimed` figures of a recipe that exists on the base branch, but
    adds no new run file to back them. A published figure may only move with new evidence.

    Store the run that measured the new figure (`orv add-run result.json`, which prints its
    `sha256:` reference), add that reference to the recipe's `runs:`, and commit the run file in the
    same pull request. If the figure was a typo with no new measurement, keep the old claim.
    """
    base_recipes = _base_recipes(change)
    moved_from = {new: old for old, new in renames(change).items()}
    by_path = {b.path: b for b in base_recipes.values()}
    on_record = change.snapshot.runs
    for path, rid, data in _changed_recipes(change):
        base = base_recipes.get(rid) or by_path.get(moved_from.get(path, ""))
        if base is None or base.data is None:
            continue  # a new recipe: its claim is checked against its runs by the integrity rules
        diffs = _claim_changes(base.data.get("claimed"), data.get("claimed"))
        if not diffs:
            continue
        new_runs = {d for d in _run_refs(data) - _run_refs(base.data) if d in on_record}
        if new_runs:
            continue
        metric, old, new = diffs[0]
        at: tuple[str, ...] = (
            ("claimed", metric)
            if metric and isinstance(data.get("claimed"), dict) and metric in data["claimed"]
            else ("claimed",)
        )
        what = f"`claimed.{metric}` changes from {old} to {new}" if metric else "`claimed` changes"
        yield Finding(
            path,
            f"{what} on recipe `{rid}` with no new run file on record",
            "add the run that measured it (`orv add-run result.json`), list its sha256: under "
            "`runs:` and commit the run file; or keep the old claim",
            at=at,
        )


@check("ORV604", E, "symlink or file outside the layout added", scope="pr", supersedes=("ORV107", "ORV114"))
def nothing_outside_the_layout(change: Change) -> Iterator[Finding]:
    """
    A pull request adds a symbolic link or a git submodule anywhere in the repository, or a file
    under recipes/, runs/, catalog/ or boards/ that has no place in the registry layout. Links can
    point outside the repository and submodules pull in content nobody reviewed; a stray file is
    usually a recipe or run file saved in the wrong place.

    Commit regular files only: recipes at recipes/<training|inference>/<model-id>/<recipe-id>.yaml,
    run files where `orv add-run` puts them (runs/<first two hex>/<sha256>.json). In pull-request
    mode this finding replaces ORV107 and ORV114 for the same path.
    """
    for c in change.files:
        problem = _layout_problem(change, c)
        if problem is not None:
            yield Finding(c.path, problem[0], problem[1], line=1, col=1)


def _layout_problem(change: Change, c: FileChange) -> tuple[str, str] | None:
    """(message, hint) when the head side of this change breaks the layout, else None."""
    if not c.present_at_head:
        return None
    if c.head_mode == MODE_SYMLINK:
        return (
            f"this pull request adds a symbolic link `{c.path}`{_link_target(change, c.path)}",
            "commit the file itself, not a link to it",
        )
    if c.head_mode == MODE_SUBMODULE:
        return (
            f"this pull request adds a git submodule or embedded repository at `{c.path}`",
            "commit regular files only; remove it with `git rm --cached` and delete the folder",
        )
    if c.path.split("/", 1)[0] in REGISTRY_DIRS and classify(c.path) is None:
        return (f"this pull request adds `{c.path}`, which has no place in the registry layout", _layout_hint(c.path))
    return None


def _link_target(change: Change, path: str) -> str:
    try:
        return f" (to `{os.readlink(os.path.join(change.snapshot.root, path))}`)"
    except OSError:
        return ""


def _layout_hint(path: str) -> str:
    if path.startswith("runs/"):
        return "run files live at runs/<first two hex>/<sha256>.json; `orv add-run FILE` puts them there"
    if path.startswith("recipes/"):
        return "recipes live at recipes/<training|inference>/<model-id>/<recipe-id>.yaml"
    return "remove the file; catalog/ and boards/ hold only their fixed files"


@check("ORV605", E, "provenance block added or edited", scope="pr")
def provenance_is_written_by_import_only(change: Change) -> Iterator[Finding]:
    """
    A pull request adds or edits a `provenance` block in a recipe or run file. Provenance marks
    entries imported from legacy sources that never recorded their software stack; it grants them a
    warning instead of an error for missing pins, so only `orv import` writes it (SPEC §2).

    Remove the block: a new contribution states its pinned stack instead. To bring a legacy entry
    above T0, pin its software and add a run; keep its provenance as it is. A maintainer running
    an import can waive ORV605 for that pull request.
    """
    base_recipes = _base_recipes(change)
    moved_from = {new: old for old, new in renames(change).items()}
    by_path = {b.path: b for b in base_recipes.values()}
    for path, rid, data in _changed_recipes(change):
        if "provenance" not in data:
            continue
        base = base_recipes.get(rid) or by_path.get(moved_from.get(path, ""))  # a renamed recipe keeps its block
        before = base.data.get("provenance") if base is not None and base.data is not None else None
        if before is not None and before == data["provenance"]:
            continue
        verb = "edits the" if before is not None else "adds a"
        yield Finding(
            path,
            f"this pull request {verb} `provenance` block on recipe `{rid}`",
            "remove the block (only `orv import` writes provenance) and pin the software instead",
            at=("provenance",),
            key=True,
        )
    for c in change.files:
        if c.status != ADDED or classify(c.path) != "run":
            continue
        run = change.snapshot.runs.get(run_digest_from_path(c.path) or "")
        if run is not None and run.meta is not None and run.meta.provenance is not None:
            yield Finding(
                c.path,
                "this pull request adds a run file with a `provenance` block",
                "store the tool's own output with `orv add-run`; only `orv import` writes provenance",
                line=1,
                col=1,
            )


# Files that configure a contributor's own tools, not the registry or the gate: never findings.
TOOL_CONFIG_FILES = (".pre-commit-config.yaml",)


@check("ORV606", W, "change outside recipes/ and runs/", scope="pr")
def outside_contributions_need_review(change: Change) -> Iterator[Finding]:
    """
    A pull request changes a file outside recipes/ and runs/: the catalog, the validator, the
    schemas, the workflows, documentation. Such changes are not contributions of recipes or
    evidence and need a maintainer's review; the gate does not judge them.

    Contributors: a new model or GPU that this pull request's recipe needs belongs in the same pull
    request (appended to the catalog, `orv catalog add-model`; docs/contributing.md, "Review"); a change
    to an existing catalog entry, to the validator, the schemas, the workflows or the documentation
    belongs in a pull request of its own. A change to the validator, the schemas or the workflows means
    this check ran the pull request's own version of them. The generated boards/ files (the index, the model files, the keys) are not this check's: changing
    them is an error (ORV609). A
    `.pre-commit-config.yaml` configures a contributor's own hooks and is not reported.
    """
    for c in change.files:
        top = c.path.split("/", 1)[0]
        if (
            top in CONTRIBUTION_DIRS
            or c.path in (SIGNERS_PATH, *TOOL_CONFIG_FILES)
            or is_generated(c.path)
            or _layout_problem(change, c) is not None
        ):
            continue  # recipes and runs are what the gate judges; ORV604, ORV607 and ORV609 judge the rest
        message, hint = _review_reason(c, change.base_ref)
        yield Finding(c.path, message, hint, line=1, col=1)


def _review_reason(c: FileChange, base_ref: str) -> tuple[str, str]:
    verb = _verb(c)
    if c.path.startswith("catalog/"):
        return (
            f"this pull request {verb} `{c.path}`: catalog changes affect every check",
            "a maintainer reviews catalog changes against their sources: a new model or GPU for this pull "
            "request's recipe belongs here; a change to an existing entry, in a pull request of its own",
        )
    if c.path.startswith(GATE_FILES):
        return (
            f"this pull request {verb} `{c.path}`, part of the validator or its CI: this check ran "
            "the pull request's own version",
            "a maintainer must review changes to the gate itself",
        )
    return (
        f"this pull request {verb} `{c.path}`, outside recipes/ and runs/",
        "a maintainer reviews changes outside recipes/ and runs/",
    )


@check("ORV609", E, "boards file changed by a pull request", scope="pr")
def boards_are_mains_business(change: Change) -> Iterator[Finding]:
    """
    A pull request adds, edits or deletes a generated file: boards/index.json, a model's file under
    boards/models/ or boards/standings/, the published keys' header boards/keys.json or a shard under
    boards/keys/, or boards/boards.json (the combined document, which the boards workflow publishes with the
    site and never commits). The boards are what the public leaderboard shows, and the keys tell
    the gate which files a change can affect; both are generated: main's boards workflow regenerates them from the merged recipes
    and run files after every merge. A hand-edited boards file (a tier raised from T0 to T3, a rank
    moved) would be published as it is until the next regeneration, so the gate fails the pull
    request. (The gate never reads a pull request's own key files: it reads the merge base's.)

    Drop the change: `git checkout <base> -- boards/` and commit. Nothing is lost: the job summary
    shows how the boards will change once the pull request is merged. Running `orv boards` on a
    branch is never needed; plain `orv check` does not compare the boards.
    """
    for c in change.files:
        if not is_generated(c.path):
            continue
        undo = f"git checkout {change.base_ref} -- {c.path}" if c.present_at_base else f"git rm {c.path}"
        what = (
            "which main's boards workflow publishes with the site and never commits"
            if c.path == DOCUMENT_PATH
            else "which main's boards workflow generates after every merge"
        )
        yield Finding(
            c.path,
            f"this pull request {_verb(c)} {c.path}, {what}",
            f"drop the change (`{undo}`); the job summary shows how the boards will change",
            line=1,
            col=1,
        )


def _signers_at(raw: bytes | None) -> dict[str, set[str]]:
    return keys_by_principal(parse_signers(raw.decode("utf-8", "replace"))[0]) if raw else {}


def _signers_change(change: Change) -> FileChange | None:
    return next((c for c in change.files if c.path == SIGNERS_PATH), None)


def _head_signers(change: Change) -> bytes | None:
    try:
        with open(os.path.join(change.snapshot.root, SIGNERS_PATH), "rb") as fh:
            return fh.read()
    except OSError:
        return None


@check("ORV607", E, "measurers file changed", scope="pr")
def measurers_need_a_maintainer(change: Change) -> Iterator[Finding]:
    """
    A pull request changes `measurers/allowed_signers`, the list of measurers whose signed runs
    can lift a recipe to T3. Who counts as an independent measurer is the registry's trust root,
    so the gate rejects every change to it until a maintainer has checked the new key belongs to
    the measurer it names (for example against https://github.com/<user>.keys) and waives ORV607
    for that pull request (the waiver label).

    Contributors: propose a new measurer in a pull request of its own that changes only this file,
    and say where the key is published.
    """
    c = _signers_change(change)
    if c is not None:
        yield Finding(
            c.path,
            f"this pull request {_verb(c)} {SIGNERS_PATH}, the registry's list of measurers",
            "a maintainer verifies the key's owner and waives ORV607 for this pull request; keep the "
            "change in a pull request of its own",
            line=1,
            col=1,
        )


@check("ORV608", E, "measurer's key added, replaced or removed", scope="pr")
def measurer_keys_never_change_silently(change: Change) -> Iterator[Finding]:
    """
    A pull request adds, replaces or removes a key registered for an existing measurer in
    `measurers/allowed_signers`. A key added to a measurer speaks as that measurer from then on —
    it needs the same check of its owner as a new measurer's key (docs/maintainers.md); runs
    signed with a removed key stop verifying (ORV222), and a replaced key could let someone else
    speak as that measurer. A key change is therefore its own finding, waived separately from
    ORV607 only when a maintainer has confirmed the key with the measurer (`orv measurers verify`
    where the entry names its GitHub account).

    Add the new key on a line of its own next to the old one if old runs should stay verified;
    to revoke a key, keep its line and mark it `revoked:YYYY-MM-DD` (its runs then count as unsigned).
    """
    c = _signers_change(change)
    if c is None or not c.present_at_base:
        return
    before = _signers_at(change.base.read(SIGNERS_PATH))
    after = _signers_at(_head_signers(change) if c.present_at_head else None)
    for principal in sorted(before):
        gone = before[principal] - after.get(principal, set())
        added = after.get(principal, set()) - before[principal]
        if added and not gone:
            yield Finding(
                SIGNERS_PATH,
                f"measurer `{principal}` gains a key ({len(added)} added): it would sign as `{principal}`",
                "a maintainer checks the new key's owner as for a new measurer and waives ORV608",
                line=1,
                col=1,
            )
            continue
        if not gone:
            continue
        if after.get(principal):
            message = f"measurer `{principal}`'s registered key is replaced by another key"
        else:
            message = f"measurer `{principal}`'s key is removed (revoked)"
        yield Finding(
            SIGNERS_PATH,
            message,
            "keep the old key line and add the new one beside it, or have a maintainer confirm the "
            "rotation with the measurer and waive ORV608",
            line=1,
            col=1,
        )

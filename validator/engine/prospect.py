"""A change judged before it is made: the check engine run on the registry as it would be.

`orv add-run` stores nothing `orv check` would refuse (issue 52). Rather than a second copy of the rules,
the change is made in a scratch registry (hard links to the real files, so nothing real is touched) and
the same checks `orv check` runs judge it; the errors it brings to the files it touches are the answer,
all of them at once. The scratch holds what those files can be judged against: the catalog, the
measurers, every recipe of the same model (duplicates, reproductions and copies are all within one model)
and the run files they reference with their signatures.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path

from validator.diagnostics import Diagnostic, Severity
from validator.engine.evaluate import analyse

_REFERENCE = re.compile(r"sha256:([0-9a-f]{64})")
_JUDGED_AGAINST = ("catalog", "measurers")  # every file of these bears on every judgement


def _place(root: Path, scratch: Path, rel: str) -> None:
    source, target = root / rel, scratch / rel
    if not source.is_file() or source.is_symlink():  # a link is ORV114's business, never followed
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)  # a write to the scratch replaces the link (write_atomic renames), never the file
    except OSError:  # another file system, or links refused
        shutil.copyfile(source, target)


def _scratch_registry(root: Path, scratch: Path, recipe_rel: str | None) -> None:
    for folder in _JUDGED_AGAINST:
        for path in sorted((root / folder).rglob("*")) if (root / folder).is_dir() else ():
            _place(root, scratch, path.relative_to(root).as_posix())
    if recipe_rel is None:
        return
    parts = recipe_rel.split("/")
    if len(parts) < 4 or parts[0] != "recipes":
        _place(root, scratch, recipe_rel)
        return
    model = parts[2]
    recipes = (
        sorted(p for p in (root / "recipes").glob(f"*/{model}/*") if p.is_file()) if (root / "recipes").is_dir() else []
    )
    digests: set[str] = set()
    for path in recipes:
        rel = path.relative_to(root).as_posix()
        _place(root, scratch, rel)
        try:
            digests.update(_REFERENCE.findall(path.read_text(encoding="utf-8", errors="replace")))
        except OSError:
            continue
    for digest in sorted(digests):
        rel = f"runs/{digest[:2]}/{digest}.json"
        _place(root, scratch, rel)
        for sig in sorted((root / rel).parent.glob(f"{digest}.json.*")):
            _place(root, scratch, sig.relative_to(root).as_posix())


def _errors(scratch: str) -> list[Diagnostic]:
    return [d for d in analyse(scratch).diagnostics if d.severity is Severity.ERROR]


def would_refuse(
    root: str, recipe_rel: str | None, change: Callable[[str], Iterable[str]]
) -> tuple[tuple[Diagnostic, ...], tuple[str, ...]]:
    """The errors `orv check` would report, after `change(scratch_root)` (which returns the paths it wrote,
    relative to the root), on the paths it wrote and the recipe, that it does not report before: the
    change's own problems, not the registry's old ones. Returns them and the paths written."""
    # outside every repository: the scratch must not inherit the checkout's git state (a sparse checkout's
    # refusal, the cache's blob ids); the links fall back to copies across file systems
    scratch = tempfile.mkdtemp(prefix="orv-would-be-", dir=tempfile.gettempdir())
    try:
        _scratch_registry(Path(root), Path(scratch), recipe_rel)
        before = {(d.code, d.path, d.message) for d in _errors(scratch)}
        written = tuple(change(scratch))
        focus = set(written) | ({recipe_rel} if recipe_rel else set())
        after = _errors(scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return tuple(d for d in after if d.path in focus and (d.code, d.path, d.message) not in before), written

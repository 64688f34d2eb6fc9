"""The pull request's diff: the merge base with --base REF, every path that differs from it, and its tree.

Two mechanisms, each where it pays: GitPython for object access (trees, blobs, merge bases) and
plain `git` subprocess calls for bulk listings the cache needs before anything is loaded
(`ls-files -s`, `status`), which must never raise — outside a repository they return None.

`diff(root, ref)` finds the merge base of REF and HEAD (what GitHub diffs a pull request
against), lists every path that differs between that commit's tree and the working tree (tracked
changes, staged or not, plus untracked files that .gitignore does not exclude), and keeps a handle
on the base tree so that the pull-request rules can read a file as it was. In CI the working tree is
the checked-out pull-request commit, so "working tree" and "HEAD" are the same thing there; locally
it lets a contributor check before committing.

Renames are not detected: a moved file is a deletion plus an addition, so no similarity heuristic
decides whether a rule applies. Paths are relative to the registry root; when the root is a
sub-folder of the repository, changes outside it are ignored.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from validator.errors import GitError
from validator.git.partial import fetch_tree_difference
from validator.git.plumbing import EMPTY_TREE, REMOTE_HINT, cat_file_batch, plumbing, registry_prefix, trees_only_env

MODE_FILE = 0o100644
MODE_EXECUTABLE = 0o100755
MODE_SYMLINK = 0o120000
MODE_SUBMODULE = 0o160000

ADDED, MODIFIED, DELETED, TYPE_CHANGED = "A", "M", "D", "T"


@dataclass(frozen=True)
class FileChange:
    """One path that differs between the merge base and the working tree."""

    path: str  # relative to the registry root, forward slashes
    status: str  # A added, M modified, D deleted, T type changed (e.g. file -> symlink)
    base_mode: int  # git mode at the merge base; 0 when added
    head_mode: int  # git mode in the working tree; 0 when deleted

    @property
    def present_at_head(self) -> bool:
        return self.status != DELETED

    @property
    def present_at_base(self) -> bool:
        return self.status != ADDED


@dataclass(frozen=True)
class BaseTree:
    """Read access to the merge-base commit's files (relative to the registry root)."""

    commit: Any = field(repr=False, compare=False)  # git.Commit
    prefix: str = ""  # the registry root inside the repository, "" or "sub/dir/"

    def _tree(self) -> Any:
        tree = self.commit.tree
        return tree / self.prefix.rstrip("/") if self.prefix else tree

    def read(self, path: str) -> bytes | None:
        """The bytes of `path` at the merge base, or None if it did not exist or is not a file."""
        return self.read_many([path])[path]

    def read_many(self, paths: list[str]) -> dict[str, bytes | None]:
        """path -> its bytes at the merge base (None if it did not exist or is not a file), from one
        `git cat-file --batch`: the gate reads the key shards it needs this way, where walking the tree
        objects through GitPython cost it about half its time. A partial clone fetches what it lacks from
        its remote; a fetch that fails is a GitError naming the files, never a file taken as absent."""
        specs = {path: f"{self.commit.hexsha}:{self.prefix}{path}" for path in dict.fromkeys(paths)}
        found = cat_file_batch(str(self.commit.repo.working_tree_dir), list(specs.values()))
        if found is None:
            named = ", ".join(sorted(specs)[:3]) + (f" and {len(specs) - 3} more" if len(specs) > 3 else "")
            raise GitError(f"cannot read {named} at the merge base {self.commit.hexsha[:12]}" + REMOTE_HINT)
        return {path: found[spec] for path, spec in specs.items()}

    def entries(self, tops: tuple[str, ...]) -> Iterator[tuple[str, int, Any]]:
        """(path, mode, blob) of every file under the given top-level folders, in tree order."""
        try:
            root = self._tree()
        except KeyError:
            return
        for top in tops:
            try:
                sub = root / top
            except KeyError:
                continue
            if sub.type == "blob":
                yield top, sub.mode, sub
                continue
            if sub.type != "tree":
                continue
            for item in sub.traverse():
                if item.type in ("blob", "commit"):
                    yield f"{top}/{item.path[len(sub.path) + 1 :]}", item.mode, item

    def listing(self, tops: tuple[str, ...], leave_out: str | None = None) -> dict[str, tuple[int, str]]:
        """path -> (git mode, object id) of every entry under the given top-level folders, but none under
        `leave_out` (a folder inside one of them).

        One `git ls-tree` call (two with `leave_out`): ~50x faster than walking the tree objects through
        GitPython, which matters when only the ids are needed (pull-request mode on a large registry).
        """
        wanted = list(tops)
        if leave_out is not None:  # its top's other entries instead of the whole top
            top = leave_out.split("/", 1)[0]
            wanted = [t for t in wanted if t != top] + [c for c in self._ls_tree(top + "/") if c != leave_out]
        return self._ls_tree(*wanted, recursive=True) if wanted else {}

    def _ls_tree(self, *paths: str, recursive: bool = False) -> dict[str, tuple[int, str]]:
        listed = plumbing(
            str(self.commit.repo.working_tree_dir),
            "ls-tree", *(["-r"] if recursive else []), "-z", "--full-tree", self.commit.hexsha, "--",
            *(self.prefix + path for path in paths),
            timeout=600,
        )  # fmt: skip
        if listed is None:  # a tree-less clone fetches the trees it lacks: its remote is gone
            raise GitError(f"cannot list the merge base {self.commit.hexsha[:12]}" + REMOTE_HINT)
        out: dict[str, tuple[int, str]] = {}
        for record in listed.decode(errors="surrogateescape").split("\0"):
            meta, sep, path = record.partition("\t")
            if not sep:
                continue
            mode, _type, object_id = meta.split(" ", 2)
            out[path[len(self.prefix) :]] = (int(mode, 8), object_id)
        return out

    def export(self, dest: str, tops: tuple[str, ...]) -> None:
        """Write the base version of every file under `tops` into `dest` (symlinks stay links)."""
        for rel, mode, item in self.entries(tops):
            if mode == MODE_SUBMODULE or item.type != "blob":
                continue  # a submodule has no content here; the pull-request rules report it
            full = os.path.join(dest, *rel.split("/"))
            os.makedirs(os.path.dirname(full), exist_ok=True)
            data = item.data_stream.read()
            if mode == MODE_SYMLINK:
                os.symlink(data.decode("utf-8", "surrogateescape"), full)
            else:
                with open(full, "wb") as fh:
                    fh.write(data)


@dataclass(frozen=True)
class Diff:
    """What changed since the merge base, before any file is loaded."""

    base_ref: str
    base_commit: str
    files: tuple[FileChange, ...]
    base: BaseTree = field(repr=False, compare=False)


def diff(root: str, base_ref: str) -> Diff:
    """The paths that differ between the merge base of `base_ref` and HEAD, and the working tree at root."""
    import git

    try:
        repo = git.Repo(root, search_parent_directories=True)
    except (git.InvalidGitRepositoryError, git.NoSuchPathError):
        raise GitError(f"--base needs a git repository, and {root} is not inside one") from None
    if repo.bare or repo.working_tree_dir is None:
        raise GitError("--base needs a working tree, not a bare repository")
    prefix = _prefix(str(repo.working_tree_dir), root)
    merge_base = _merge_base(repo, base_ref)
    # a tree-less clone (the gate's) has HEAD's trees from its checkout: of the merge base's, fetch
    # only those that differ (otherwise the diff below would fetch all of them)
    fetch_tree_difference(root, repo.head.commit.tree.hexsha, merge_base.tree.hexsha)
    try:
        files = sorted(_changed_files(repo, merge_base.hexsha, prefix), key=lambda c: c.path)
    except git.GitCommandError as exc:  # in a partial clone git fetches what the diff reads: the remote's state
        raise GitError(
            f"cannot compare HEAD with the merge base {merge_base.hexsha[:12]} ({_complaint(exc)})" + REMOTE_HINT
        ) from None
    return Diff(base_ref, merge_base.hexsha, tuple(files), BaseTree(merge_base, prefix))


def _complaint(exc: BaseException) -> str:
    """git's last line of complaint from a GitPython error (its stderr), else the error's own last line."""
    stderr = getattr(exc, "stderr", None)
    text = stderr if isinstance(stderr, str) and stderr.strip() else str(exc)
    lines = [line.strip().strip("'").strip() for line in text.strip().splitlines()]
    lines = [line for line in lines if line]
    return lines[-1][:300] if lines else type(exc).__name__


def _prefix(work_tree: str, root: str) -> str:
    rel = os.path.relpath(os.path.realpath(root), os.path.realpath(work_tree)).replace(os.sep, "/")
    if rel == ".":
        return ""
    if rel.startswith(".."):
        raise GitError(f"{root} is outside the repository at {work_tree}")
    return rel + "/"


def _merge_base(repo: Any, base_ref: str) -> Any:
    """The merge base of `base_ref` and HEAD, from the history this clone has (a blobless partial
    clone has every commit and tree; only a shallow one lacks history). Never a guess: no merge
    base is a GitError, which stops the check (exit 2) rather than checking everything."""
    import git

    shallow = _is_shallow(repo)
    try:
        base = repo.commit(base_ref)
    except (git.BadName, git.BadObject, ValueError):
        raise GitError(
            f"--base {base_ref}: no such commit or branch here; fetch it first "
            f"(`git fetch origin {base_ref}`; in GitHub Actions check out with `fetch-depth: 0`)"
        ) from None
    try:
        head = repo.head.commit
    except ValueError:
        raise GitError("--base needs at least one commit on HEAD") from None
    bases = repo.merge_base(base, head)
    if not bases and shallow:
        raise GitError(
            f"this clone is too shallow to find where HEAD and {base_ref} meet: its history is cut "
            "off before their merge base, so nothing can be compared (and checking everything "
            "instead would judge the pull request for what it did not introduce). Fetch the history: "
            "`git fetch --unshallow` (in GitHub Actions, actions/checkout with `fetch-depth: 0`; with "
            "`filter: tree:0` that is the commits only, trees and file contents fetched when needed)"
        )
    if not bases:
        raise GitError(f"HEAD and {base_ref} share no history, so there is no merge base to compare with")
    return bases[0]


def _is_shallow(repo: Any) -> bool:
    common = getattr(repo, "common_dir", None) or repo.git_dir
    path = os.path.join(str(common), "shallow")
    return os.path.isfile(path) and os.path.getsize(path) > 0


_DIFF_FLAGS = (
    "--raw",
    "-z",
    "--no-renames",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--ignore-submodules=none",
)
# past this many candidate paths, one whole-tree diff is cheaper than naming them all on the command line
_NAMED_PATHS_AT_MOST = 1000


def _changed_files(repo: Any, merge_base: str, prefix: str) -> Iterator[FileChange]:
    """The files that differ between the merge base and the working tree (staged and unstaged changes alike),
    and the untracked ones .gitignore does not exclude.

    `git diff <merge base>` alone reads every index entry against the working tree: 0.8 s of a one-recipe
    pull request at 100,000 run files. A path differs from the merge base only if the index differs from it
    (`diff-index --cached`: tree against index, unchanged subtrees skipped) or the working tree differs from
    the index (`diff-files`: a sparse checkout's absent files are not looked at), so those two name the
    candidates, and `git diff <merge base>` on just those paths gives the same records as on all of them."""
    git = repo.git
    candidates = {
        path
        for raw in (git.diff_index(merge_base, "--cached", *_DIFF_FLAGS, "--"), git.diff_files(*_DIFF_FLAGS, "--"))
        for _meta, path in _raw_records(raw)
    }
    seen: set[str] = set()
    if candidates:
        # literal pathspecs: a path with `*` or `:` in its name is that one path
        named = ("--", *sorted(candidates)) if len(candidates) <= _NAMED_PATHS_AT_MOST else ("--",)
        raw = git.execute(["git", "--literal-pathspecs", "diff", merge_base, *_DIFF_FLAGS, *named])
        for meta, path in _raw_records(raw):
            old_mode, new_mode, _old_sha, _new_sha, status = meta[1:].split(" ", 4)
            rel = _under(path, prefix)
            if rel is None:
                continue
            seen.add(rel)
            yield FileChange(rel, status[0], int(old_mode, 8), int(new_mode, 8))
    for path in _untracked(git):
        rel = _under(path, prefix)
        rel = rel.rstrip("/") if rel is not None else None
        if rel is None or rel in seen:
            continue
        yield FileChange(rel, ADDED, 0, _mode_on_disk(os.path.join(str(repo.working_tree_dir), path)))


def _raw_records(raw: str) -> Iterator[tuple[str, str]]:
    """(":oldmode newmode oldsha newsha status", path) from `--raw -z` output: a record, then its path, NUL-separated."""
    fields = raw.split("\0")
    i = 0
    while i + 1 < len(fields):
        meta, path = fields[i], fields[i + 1]
        i += 2
        if meta.startswith(":"):
            yield meta, path


def _untracked(git: Any) -> list[str]:
    """Untracked files .gitignore does not exclude, from the top level; an embedded repository is one entry
    ending in "/". `ls-files --others` walks only the working tree (`git status` compared every index entry too)."""
    raw = git.ls_files("--others", "--exclude-standard", "-z", "--full-name", ":/")
    return [path for path in raw.split("\0") if path]


def _under(path: str, prefix: str) -> str | None:
    if not prefix:
        return path
    return path[len(prefix) :] if path.startswith(prefix) else None


def _mode_on_disk(full: str) -> int:
    st = os.lstat(full.rstrip("/"))
    if stat.S_ISLNK(st.st_mode):
        return MODE_SYMLINK
    if stat.S_ISDIR(st.st_mode):
        return MODE_SUBMODULE  # git lists an embedded repository as one untracked entry
    return MODE_EXECUTABLE if st.st_mode & 0o111 else MODE_FILE


def changed_since(root: str, old_tree: str, commit: str, top: str) -> set[str] | None:
    """Paths under `top` (the registry's folder, registry-relative) whose entry differs between the tree
    `old_tree` and that folder at `commit`: added, deleted, modified or changed in mode. None when git cannot
    compare them (a tree not in this repository). Trees only: a blobless clone fetches nothing."""
    prefix = registry_prefix(root)
    if prefix is None:
        return None
    new_tree = plumbing(root, "rev-parse", "--verify", "-q", f"{commit}^{{tree}}:{prefix}{top}")
    new = new_tree.decode().strip() if new_tree is not None else EMPTY_TREE
    fetch_tree_difference(root, new, old_tree)  # a tree-less clone: only the trees that moved since
    raw = plumbing(root, "diff-tree", "-r", "-z", "--no-renames", "--name-only", old_tree, new, env=trees_only_env())
    if raw is None:
        return None
    return {f"{top}/{path}" for path in raw.decode(errors="surrogateescape").split("\0") if path}

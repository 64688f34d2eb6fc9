"""Every git call orv makes: merge base and diff for --base, the base tree, history for the boards stamp, plumbing for the cache.

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
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, Iterable, Iterator

from validator.errors import GitError, HistoryError, UsageError

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
        try:
            blob = self._tree() / path
        except KeyError:
            return None
        if blob.type != "blob":
            return None
        data: bytes = blob.data_stream.read()
        return data

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
                    yield f"{top}/{item.path[len(sub.path) + 1:]}", item.mode, item

    def listing(self, tops: tuple[str, ...]) -> dict[str, tuple[int, str]]:
        """path -> (git mode, object id) of every entry under the given top-level folders.

        One `git ls-tree` call: ~50x faster than walking the tree objects through GitPython, which
        matters when only the ids are needed (pull-request mode on a large registry).
        """
        raw = self.commit.repo.git.ls_tree("-r", "-z", "--full-tree", self.commit.hexsha, "--",
                                           *(self.prefix + top for top in tops))
        out: dict[str, tuple[int, str]] = {}
        for record in raw.split("\0"):
            meta, sep, path = record.partition("\t")
            if not sep:
                continue
            mode, _type, object_id = meta.split(" ", 2)
            out[path[len(self.prefix):]] = (int(mode, 8), object_id)
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
    files = sorted(_changed_files(repo, merge_base.hexsha, prefix), key=lambda c: c.path)
    return Diff(base_ref, merge_base.hexsha, tuple(files), BaseTree(merge_base, prefix))


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
        raise GitError(f"--base {base_ref}: no such commit or branch here; fetch it first "
                       f"(`git fetch origin {base_ref}`; in GitHub Actions check out with `fetch-depth: 0`)") from None
    try:
        head = repo.head.commit
    except ValueError:
        raise GitError("--base needs at least one commit on HEAD") from None
    bases = repo.merge_base(base, head)
    if not bases and shallow:
        raise GitError(f"this clone is too shallow to find where HEAD and {base_ref} meet: its history is cut "
                       "off before their merge base, so nothing can be compared (and checking everything "
                       "instead would judge the pull request for what it did not introduce). Fetch the history: "
                       "`git fetch --unshallow` (in GitHub Actions, actions/checkout with `fetch-depth: 0`; with "
                       "`filter: tree:0` that is the commits only, trees and file contents fetched when needed)")
    if not bases:
        raise GitError(f"HEAD and {base_ref} share no history, so there is no merge base to compare with")
    return bases[0]


def _is_shallow(repo: Any) -> bool:
    common = getattr(repo, "common_dir", None) or getattr(repo, "git_dir")
    path = os.path.join(str(common), "shallow")
    return os.path.isfile(path) and os.path.getsize(path) > 0


_DIFF_FLAGS = ("--raw", "-z", "--no-renames", "--no-ext-diff", "--no-textconv", "--no-color", "--ignore-submodules=none")
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
    candidates = {path for raw in (git.diff_index(merge_base, "--cached", *_DIFF_FLAGS, "--"),
                                   git.diff_files(*_DIFF_FLAGS, "--"))
                  for _meta, path in _raw_records(raw)}
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
    return path[len(prefix):] if path.startswith(prefix) else None


def _mode_on_disk(full: str) -> int:
    st = os.lstat(full.rstrip("/"))
    if stat.S_ISLNK(st.st_mode):
        return MODE_SYMLINK
    if stat.S_ISDIR(st.st_mode):
        return MODE_SUBMODULE  # git lists an embedded repository as one untracked entry
    return MODE_EXECUTABLE if st.st_mode & 0o111 else MODE_FILE


# --------------------------------------------------------------------------- plumbing (never raises)


def plumbing(root: str, *args: str) -> bytes | None:
    """stdout of `git -C root ARGS`, or None when git fails or is absent (callers then work uncached)."""
    try:
        done = subprocess.run(["git", "-C", root, *args], capture_output=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def git_dir_of_top_level(root: str) -> str | None:
    """The repository's git folder when root is its top level; None outside git or in a sub-folder."""
    git_dir = plumbing(root, "rev-parse", "--absolute-git-dir")
    top = plumbing(root, "rev-parse", "--show-toplevel")
    if git_dir is None or top is None or os.path.realpath(top.decode().strip()) != os.path.realpath(root):
        return None
    return git_dir.decode().strip()


def git_folder_of(path: str) -> str | None:
    """The git folder of the work tree holding `path` (a folder), found without running git: the
    nearest `.git` above it, a folder or (in a linked worktree or submodule) a file naming one.
    Its own files are never in `git status`, so orv keeps its temporary files and locks there."""
    here = os.path.realpath(path)
    while True:
        dot_git = os.path.join(here, ".git")
        if os.path.isdir(dot_git):
            return dot_git
        if os.path.isfile(dot_git):
            try:
                with open(dot_git, encoding="utf-8") as fh:
                    line = fh.readline().strip()
            except (OSError, UnicodeDecodeError):
                return None
            if not line.startswith("gitdir:"):
                return None
            target = os.path.join(here, line[len("gitdir:"):].strip())
            return os.path.realpath(target) if os.path.isdir(target) else None
        if os.path.basename(here) == ".git" or os.path.isfile(os.path.join(here, "HEAD")) and \
                os.path.isdir(os.path.join(here, "objects")):
            return here  # inside a git folder itself (the cache under .git/orv)
        parent = os.path.dirname(here)
        if parent == here:
            return None
        here = parent


def clean_blobs(root: str, tops: tuple[str, ...]) -> dict[str, str] | None:
    """path -> blob id of every regular tracked file under `tops` that is unmodified in the work tree.

    git keeps these ids fresh through its stat cache, so they are the hash of the bytes on disk.
    """
    listing = plumbing(root, "ls-files", "-s", "-z", "--", *tops)
    status = plumbing(root, "status", "--porcelain", "-z", "--untracked-files=no", "--", *tops)
    if listing is None or status is None:
        return None
    changed = {entry[3:] for entry in status.decode(errors="replace").split("\0") if len(entry) > 3}
    blobs = {}
    for entry in listing.decode(errors="replace").split("\0"):
        if "\t" not in entry:
            continue
        meta, rel = entry.split("\t", 1)
        mode, blob, stage = meta.split()
        if stage == "0" and mode == "100644" and rel not in changed:
            blobs[rel] = blob
    return blobs


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the tree with nothing in it


def worktree_trees(root: str, tops: tuple[str, ...]) -> dict[str, str] | None:
    """top -> the git tree id each registry folder has in the work tree: what `git add -A` and a commit
    would make of it (HEAD's tree when nothing changed there; the empty tree's id when absent). Built in a
    throwaway copy of git's index (its stat cache spares re-hashing unchanged files), so the real index is
    untouched; the trees' objects are written to the repository. None outside git or when git fails."""
    git_dir = plumbing(root, "rev-parse", "--absolute-git-dir")
    prefix = _registry_prefix(root)
    if git_dir is None or prefix is None:
        return None
    folder = git_dir.decode().strip()
    try:
        handle, scratch = tempfile.mkstemp(prefix="orv-keys-index-", dir=folder)
        os.close(handle)
    except OSError:
        return None
    try:
        try:
            shutil.copyfile(os.path.join(folder, "index"), scratch)
        except FileNotFoundError:
            os.remove(scratch)  # no index yet (no file added): git starts an empty one
        except OSError:  # no room, a file size limit: the keys then name no trees (the gate loads instead)
            return None
        env = {**os.environ, "GIT_INDEX_FILE": scratch}
        trees = {}
        for top in tops:
            update = (["add", "-A", "--", top] if os.path.isdir(os.path.join(root, top))
                      else ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--", top])
            if _git(root, env, *update) is None:
                return None
            listed = _git(root, env, "ls-files", "--", top)
            if listed is None:
                return None
            tree = _git(root, env, "write-tree", f"--prefix={prefix}{top}/") if listed.strip() else EMPTY_TREE.encode()
            if tree is None:
                return None
            trees[top] = tree.decode().strip()
        return trees
    finally:
        if os.path.exists(scratch):
            try:
                os.remove(scratch)
            except OSError:
                pass


def _git(root: str, env: dict[str, str], *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", root, *args], capture_output=True, timeout=300, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def changed_since(root: str, old_tree: str, commit: str, top: str) -> set[str] | None:
    """Paths under `top` (the registry's folder, registry-relative) whose entry differs between the tree
    `old_tree` and that folder at `commit`: added, deleted, modified or changed in mode. None when git cannot
    compare them (a tree not in this repository). Trees only: a blobless clone fetches nothing."""
    prefix = _registry_prefix(root)
    if prefix is None:
        return None
    new_tree = plumbing(root, "rev-parse", "--verify", "-q", f"{commit}^{{tree}}:{prefix}{top}")
    new = new_tree.decode().strip() if new_tree is not None else EMPTY_TREE
    fetch_tree_difference(root, new, old_tree)  # a tree-less clone: only the trees that moved since
    raw = plumbing(root, "diff-tree", "-r", "-z", "--no-renames", "--name-only", old_tree, new)
    if raw is None:
        return None
    return {f"{top}/{path}" for path in raw.decode(errors="surrogateescape").split("\0") if path}


def prefetch(root: str, commit: str, paths: Iterable[str]) -> int:
    """Fetch in one request the blobs a partial clone lacks of `paths` (registry-relative) at `commit`, so
    reading them one by one (BaseTree.read) does not fetch each on its own: one round trip instead of one per
    file. Returns how many blob ids were asked for; 0 outside a partial clone, or when git cannot fetch them
    (reading then fetches each file as before: nothing here is needed, only time-saving)."""
    remote = _promisor_remote(root)
    wanted = sorted(set(paths))
    if not remote or not wanted:
        return 0
    listing = plumbing(root, "ls-tree", "-z", commit, "--", *wanted)  # trees only: a blobless clone has them
    if listing is None:
        return 0
    blobs = [record.split("\t", 1)[0].split(" ")[2] for record in listing.decode(errors="surrogateescape").split("\0")
             if "\t" in record and record.split(" ", 2)[1] == "blob"]
    # as git's own lazy fetch asks (promisor-remote.c), for all at once; blobs already here are not sent again
    if _git_input(root, dict(os.environ), "\n".join(blobs) + "\n", "-c", "fetch.negotiationAlgorithm=noop",
                  "fetch", remote, "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
                  "--filter=blob:none", "--stdin") is None:
        return 0
    return len(blobs)


def _promisor_remote(root: str) -> str:
    """The remote a partial clone fetches missing objects from ("" when this is no partial clone)."""
    named = _config(root, "extensions.partialClone")
    if named:
        return named
    listed = plumbing(root, "config", "--get-regexp", r"^remote\..*\.promisor$")
    for line in (listed or b"").decode(errors="replace").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lower() in ("true", "yes", "on", "1"):
            return key[len("remote."):-len(".promisor")]
    return ""


def _git_input(root: str, env: dict[str, str], data: str, *args: str) -> bytes | None:
    try:
        done = subprocess.run(["git", "-C", root, *args], input=data.encode(errors="surrogateescape"),
                              capture_output=True, timeout=3600, check=False, env=env)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout if done.returncode == 0 else None


def _registry_prefix(root: str) -> str | None:
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    return prefix.decode().strip() if prefix is not None else None


def arrival_order(root: str, tops: tuple[str, ...]) -> dict[str, int]:
    """path -> when it first appeared on HEAD's first-parent history (0 = the oldest commit), for
    every file ever added under `tops` — one `git log` for all of them. A merge counts as adding
    what its branch brought (`-m --first-parent`: the diff against the first parent), so a pull
    request's files arrive with the commit that merged them. Empty outside git (never raises);
    files absent from the answer (uncommitted, or added by the work tree) are the newest.
    """
    fetch_history_trees(root)
    out = plumbing(root, "log", "--first-parent", "-m", "--reverse", "--relative", "--diff-filter=A",
                   "--name-only", "--format=%x01", "--", *tops)
    if out is None:
        return {}
    order: dict[str, int] = {}
    for index, commit in enumerate(out.decode(errors="replace").split("\x01")):
        for line in commit.splitlines():
            if line.strip():
                order.setdefault(line.strip(), index)
    return order


def _tree_filtered_remote(root: str) -> str:
    """The remote a tree-less partial clone (`--filter=tree:N`) fetches missing trees from, or ""."""
    filters = plumbing(root, "config", "--get-regexp", r"^remote\..*\.partialclonefilter$")
    for key, _, value in (line.partition(" ") for line in (filters or b"").decode(errors="replace").splitlines()):
        if value.strip().startswith("tree:"):
            return key[len("remote."):-len(".partialclonefilter")]
    return ""


def fetch_tree_difference(root: str, have_tree: str, want_tree: str) -> int:
    """In a tree-less partial clone, fetch the trees below `want_tree` that `have_tree` does not share.

    git fetches a missing tree with every tree below it (its lazy fetch asks with `blob:none`): at
    100,000 run files that is ~10 MB for any commit's tree, though the merge base's differs from the
    pull request's by a handful of folders. `have_tree` must be here with all its trees (the
    checkout's HEAD's is); `want_tree` is fetched alone (`tree:0`: the object asked for and nothing it
    holds), its entries compared with `have_tree`'s, and only the subtrees that differ fetched next,
    one request per level (a registry path is three folders deep). Afterwards every tree below
    `want_tree` is here — the shared ones were `have_tree`'s — so git diffs and lists it without
    fetching. Returns the trees fetched; 0 outside a tree-less clone or when either id is empty.
    Never raises: a failure leaves git to fetch on demand, as before."""
    remote = _tree_filtered_remote(root)
    if not remote or not have_tree or not want_tree or have_tree == want_tree or not _present(root, have_tree):
        return 0
    fetched = 0
    pairs = [(have_tree, want_tree)]
    while pairs:
        # a tree already here (the workflow's rules step fetched the base's top-level one) is not asked
        # for again; the trees below it may still be missing, so the walk goes on regardless
        wanted = [w for _, w in pairs if not _present(root, w)]
        if wanted and not _fetch_exact(root, remote, wanted):
            return fetched
        fetched += len(wanted)
        following = _differing_subtrees(root, pairs)
        if following is None:
            return fetched
        pairs = following
    return fetched


_TREE_PAIR = re.compile(r"^[0-9a-f]{40}(?:[0-9a-f]{24})? [0-9a-f]{40}(?:[0-9a-f]{24})?$")


def _differing_subtrees(root: str, pairs: list[tuple[str, str]]) -> list[tuple[str, str]] | None:
    """For each (have, want) pair of trees that are here, the subtrees of `want` that `have` does not hold
    as they are, as (have's subtree of that name or "", want's subtree). One `git diff-tree --stdin` for
    the pairs with a `have` (git compares the entries: a registry folder of 30,000 recipes parsed in
    Python took 0.15 s a side), the listing of `want` for those without. None when git cannot say."""
    following: list[tuple[str, str]] = []
    compared = [(h, w) for h, w in pairs if h]
    if compared:
        try:
            done = subprocess.run(["git", "-C", root, "diff-tree", "--stdin", "-z", "--raw", "--no-renames"],
                                  input="".join(f"{h} {w}\n" for h, w in compared).encode(), capture_output=True,
                                  timeout=600, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
        if done.returncode != 0:
            return None
        # each pair with differences: a "<have> <want>" line, then ":<mode> <mode> <id> <id> <status>" NUL
        # <name> NUL per differing entry; the next pair's line starts the field after its last name
        fields = done.stdout.decode(errors="surrogateescape").split("\0")
        for meta in fields[0::2]:
            while "\n" in meta and _TREE_PAIR.match(meta.split("\n", 1)[0]):
                meta = meta.split("\n", 1)[1]
            if not meta.startswith(":"):
                continue
            old_mode, new_mode, old, new, _status = meta[1:].split(" ", 4)
            if new_mode == "040000":
                following.append((old if old_mode == "040000" else "", new))
    listed = _read_trees(root, sorted({w for h, w in pairs if not h}))
    if listed is None:
        return None
    following += [("", oid) for entries in listed.values() for mode, oid in entries.values() if mode == "40000"]
    return following


def _present(root: str, tree: str) -> bool:
    """Is this tree here? (rev-list with `--missing=print` never fetches; a missing id is "bad object".)"""
    listed = plumbing(root, "rev-list", "--objects", "--missing=print", "--filter=tree:1", "--no-walk", tree)
    return listed is not None and bool(listed.strip()) and not listed.startswith(b"?")


def _read_trees(root: str, trees: list[str]) -> dict[str, dict[str, tuple[str, str]]] | None:
    """tree id -> {name: (mode, object id)} for trees that are here (`cat-file --batch`, one process)."""
    try:
        done = subprocess.run(["git", "-C", root, "cat-file", "--batch"], input="".join(t + "\n" for t in trees).encode(),
                              capture_output=True, timeout=600, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    out, data, at = {}, done.stdout, 0
    try:
        for tree in trees:
            end = data.index(b"\n", at)
            header = data[at:end].split(b" ")
            if len(header) != 3 or header[1] != b"tree":
                return None
            size = int(header[2])
            body, at = data[end + 1:end + 1 + size], end + 2 + size
            entries, i = {}, 0
            while i < len(body):  # entries: "<mode> <name>\0<20-byte id>"
                space, nul = body.index(b" ", i), body.index(b"\0", i)
                entries[body[space + 1:nul].decode(errors="surrogateescape")] = (body[i:space].decode(),
                                                                                 body[nul + 1:nul + 21].hex())
                i = nul + 21
            out[tree] = entries
    except ValueError:  # output git would not write: leave the trees to git's own fetch
        return None
    return out


def _fetch_exact(root: str, remote: str, oids: list[str]) -> bool:
    """Fetch exactly these objects, nothing they hold (`--filter=tree:0`), in one request.

    Not in the clone itself: there git first fetches each wanted id through its own lazy fetch, with
    everything below it. A throwaway repository beside it (no promisor of its own, so no lazy fetch)
    fetches from the same remote with the clone's http settings (credentials a checkout kept) and
    writes the pack straight into the clone's objects, marked as the promisor's like any other."""
    git_dir = plumbing(root, "rev-parse", "--absolute-git-dir")
    objects = plumbing(root, "rev-parse", "--path-format=absolute", "--git-path", "objects")
    url = _config(root, f"remote.{remote}.url")
    if git_dir is None or objects is None or not url:
        return False
    if "://" not in url and not re.match(r"^[^/]+:", url):  # a local path, relative to the work tree
        top = plumbing(root, "rev-parse", "--show-toplevel")
        url = os.path.join(top.decode().strip() if top else root, url)
    # how the clone reaches its remote: credentials a checkout kept, URL rewrites, the remote's
    # upload-pack and proxy (never its promisor settings: those would make this a partial clone too)
    carried = plumbing(root, "config", "--local", "--get-regexp",
                       rf"^((http|credential|url)\.|remote\.{re.escape(remote)}\.(uploadpack|proxy|proxyauthmethod)$)")
    settings = [arg for line in (carried or b"").decode(errors="surrogateescape").splitlines() if " " in line
                for arg in ("-c", "=".join(line.split(" ", 1)))]
    try:
        scratch = tempfile.mkdtemp(prefix="orv-fetch-", dir=git_dir.decode().strip())
    except OSError:
        return False
    try:
        if plumbing(scratch, "init", "-q", "--bare") is None:
            return False
        env = {**os.environ, "GIT_OBJECT_DIRECTORY": objects.decode().strip()}
        # no gc, maintenance or commit graph in the throwaway repository: its objects are the clone's
        done = subprocess.run(["git", "-C", scratch, "-c", f"remote.{remote}.url={url}", "-c", "gc.auto=0",
                               "-c", "maintenance.auto=false", "-c", "fetch.writeCommitGraph=false",
                               "-c", "fetch.negotiationAlgorithm=noop", *settings,
                               "fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--recurse-submodules=no",
                               "--filter=tree:0", "--stdin", remote], input="".join(o + "\n" for o in oids).encode(),
                              capture_output=True, timeout=3600, check=False, env=env)
        return done.returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def fetch_history_trees(root: str) -> None:
    """In a tree-less partial clone, fetch every tree of HEAD's history in one request, before a walk
    over paths (`git log -- runs`, the boards stamp) would fetch them one commit at a time.

    The gate checks out with `filter: tree:0` (commits only: its merge base and diff need two trees,
    which git fetches on demand). A walk over paths needs the tree of every commit it passes, and git
    fetches a missing tree — with all its subtrees — in one round trip each: at 10,000 run files the
    copied-run pull request's `arrival_order` made 168 fetches and 117 MB. One fetch with `blob:none`
    and no negotiation (the client has every commit, so negotiating would send nothing) brings them
    all, as a blobless clone holds them: the missing root trees, asked for by id (git
    sends each with its subtrees, every object once). Only when a commit of HEAD's history lacks its
    root tree; never raises (a failed fetch leaves git to fetch on demand, or to fail as it would)."""
    remote = _tree_filtered_remote(root)
    if not remote:
        return
    # the root trees of HEAD's commits, missing ones marked `?` (rev-list never fetches)
    listed = plumbing(root, "rev-list", "--objects", "--missing=print", "--filter=tree:1", "HEAD")
    missing = [line[1:].strip() for line in (listed or b"").splitlines() if line.startswith(b"?")]
    if not missing:
        return
    try:  # the whole history's trees: longer than plumbing's minute on a slow network
        # the missing trees themselves are asked for (a commit the clone has would be "already here")
        subprocess.run(["git", "-C", root, "-c", "fetch.negotiationAlgorithm=noop", "fetch", "--quiet", "--no-tags",
                        "--no-write-fetch-head", "--recurse-submodules=no", "--filter=blob:none", "--stdin",
                        remote], input=b"\n".join(missing) + b"\n", capture_output=True, timeout=3600,
                       check=False)
    except (OSError, subprocess.TimeoutExpired):
        pass


# --------------------------------------------------------------------------- history (the boards stamp)


def _inside_git(root: str) -> bool:
    here = os.path.realpath(root)
    while True:
        if os.path.exists(os.path.join(here, ".git")):
            return True
        parent = os.path.dirname(here)
        if parent == here:
            return False
        here = parent


def _shallow_boundary(repo: Any, sha: str) -> bool:
    """True when `sha` is where a shallow clone's history was cut: git cannot see what it changed."""
    common = getattr(repo, "common_dir", None) or getattr(repo, "git_dir")
    path = os.path.join(str(common), "shallow")
    if not os.path.isfile(path):
        return False
    with open(path, encoding="ascii", errors="replace") as fh:
        return sha in {line.strip() for line in fh}


def newest_commit_touching(root: str, dirs: tuple[str, ...]) -> tuple[str, str] | None:
    """(ISO committer time in UTC, SHA) of the newest commit on HEAD touching `dirs` under root.

    None outside a git work tree or before the first such commit. Inside one, any failure to read
    the history raises HistoryError rather than answering None, so two machines never disagree.
    """
    if not _inside_git(root):
        return None
    try:
        import git

        repo = git.Repo(root, search_parent_directories=True)
        top = repo.working_tree_dir
        if top is None:
            return None
        rel = os.path.relpath(os.path.realpath(root), os.path.realpath(top)).replace(os.sep, "/")
        paths = [d if rel == "." else f"{rel}/{d}" for d in dirs]
        if not repo.head.is_valid():
            return None
        fetch_history_trees(root)
        newest = next(iter(repo.iter_commits("HEAD", paths=paths, max_count=1)), None)
        if newest is None:
            return None
        if _shallow_boundary(repo, newest.hexsha):
            raise HistoryError(
                f"this clone is shallow: git cannot tell when {', '.join(d + '/' for d in dirs)} last changed",
                "fetch the full history (`git fetch --unshallow`; in GitHub Actions, actions/checkout with "
                "`fetch-depth: 0`)")
        when = datetime.fromtimestamp(newest.committed_date, tz=timezone.utc)
        return when.isoformat(timespec="seconds"), newest.hexsha
    except HistoryError:
        raise
    except Exception as exc:  # noqa: BLE001 - GitPython raises many types; all mean "history unreadable"
        raise HistoryError(f"cannot read the git history of {root}: {type(exc).__name__}: {exc}".strip(),
                           "make sure `git log` works in this folder (git installed, repository readable, "
                           "marked safe.directory if owned by another user)") from None


# --------------------------------------------------------------------------- sparse and partial clones
#
# A cheap clone (`git clone --filter=blob:none --sparse`, or actions/checkout with `sparse-checkout`)
# holds every commit and tree but only the file contents its sparse patterns select; the others are
# tracked with git's skip-worktree bit and absent from disk, and their blobs are fetched from the
# promisor remote when something reads them. orv never assumes a full working tree: a whole-registry
# check refuses such a checkout (it would judge part of the registry), and `--base`, `orv new` and
# `orv add-run` widen the sparse patterns by exactly the files they read or write (`materialize`), so
# git fetches those blobs — in one batch per call — and the files stay in the checkout afterwards.
# The gate's clone is tree-less too (`filter: tree:0`: commits only); git fetches the trees it reads
# (HEAD's for the checkout, the merge base's for the diff) on demand, and `fetch_history_trees` the
# history's before a walk over paths.

# Past this many files, materialize adds their top-level folders instead of one pattern per file:
# non-cone pattern matching costs (patterns x index entries), and that many files is most of them.
MANY_FILES = 2000
_PATTERN_SPECIAL = re.compile(r"([\\*?\[])")


@dataclass(frozen=True)
class SparseCheckout:
    """A sparse work tree holding the registry at `root`: what it leaves out and how to widen it."""

    root: str
    prefix: str  # the registry root inside the repository, "" or "sub/dir/"
    cone: bool  # core.sparseCheckoutCone: patterns are folders, not paths
    hidden: frozenset[str]  # registry-relative paths git tracks that the checkout leaves off disk
    partial: bool  # a partial clone: missing blobs come from the promisor remote on demand


def sparse_checkout(root: str) -> SparseCheckout | None:
    """The sparse checkout holding `root`, or None (not git, not sparse, or nothing left out)."""
    if _config(root, "--bool", "core.sparseCheckout") != "true":
        return None
    listing = plumbing(root, "ls-files", "-t", "-z", "--", ".")
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    if listing is None or prefix is None:
        return None
    # `ls-files -t`: "S " marks a skip-worktree entry (outside the patterns); paths relative to root
    hidden = frozenset(entry[2:] for entry in listing.decode(errors="surrogateescape").split("\0")
                       if entry.startswith("S "))
    if not hidden:
        return None
    partial = bool(_config(root, "extensions.partialClone")) or bool(
        plumbing(root, "config", "--get-regexp", r"^remote\..*\.promisor$"))
    return SparseCheckout(root, prefix.decode().strip(), _config(root, "--bool", "core.sparseCheckoutCone") == "true",
                          hidden, partial)


def _config(root: str, *args: str) -> str:
    out = plumbing(root, "config", *args)
    return out.decode(errors="replace").strip() if out is not None else ""


def refuse_sparse(root: str, what: str, instead: str) -> None:
    """UsageError when `root` is a sparse checkout: `what` would see only part of the registry."""
    sparse = sparse_checkout(root)
    if sparse is None:
        return
    raise UsageError(f"{what} needs every file of the registry, but this checkout is sparse: "
                     f"{len(sparse.hidden):,} tracked file(s) are not in the working tree, so it would judge "
                     f"only part of the registry. {instead}")


def widen(root: str, why: str) -> None:
    """Check every file out of a sparse checkout (`git sparse-checkout disable`; a partial clone fetches
    the contents it lacks in one request), saying so on stderr. A no-op when nothing is left out; a
    GitError naming git's reason when git cannot (no network, no credentials)."""
    sparse = sparse_checkout(root)
    if sparse is None:
        return
    print(f"orv: {why}: checking out the {len(sparse.hidden):,} file(s) this sparse checkout leaves out "
          "(`git sparse-checkout disable`, --widen)", file=sys.stderr)
    _sparse_checkout_command(root, ["disable"], "", "check out every file of this sparse checkout",
                             "check out every file of this sparse checkout")


WHOLE_CHECKOUT = "`git sparse-checkout disable` checks out every file (fetching what a partial clone lacks)"


def materialize(root: str, paths: Iterable[str]) -> list[str]:
    """Make `paths` (registry-relative) part of a sparse checkout; the patterns it added.

    Tracked files left out are checked out (a partial clone fetches their blobs from its promisor
    remote, all in one request); paths not tracked yet (a file about to be written) get a pattern
    too, so git keeps them in the checkout and `git add` takes them. A no-op outside a sparse
    checkout. A fetch that fails (no network, no credentials) is a GitError naming git's reason.
    """
    wanted = sorted({p for p in paths if p})
    if not wanted or _config(root, "--bool", "core.sparseCheckout") != "true":
        return []
    # few paths: ask about those (literally: a path is never a glob); many: list everything once
    asked = ("--", *wanted) if len(wanted) <= 256 else ("--", ".")
    status = plumbing(root, "--literal-pathspecs", "ls-files", "-t", "-z", *asked)
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    if status is None or prefix is None:
        return []
    shown = {entry[2:]: entry[:1] for entry in status.decode(errors="surrogateescape").split("\0") if len(entry) > 2}
    needed = [p for p in wanted if shown.get(p) == "S" or (p not in shown and not os.path.lexists(os.path.join(root, p)))]
    patterns = _patterns(prefix.decode().strip(), needed, _config(root, "--bool", "core.sparseCheckoutCone") == "true")
    if not patterns:
        return []
    _sparse_checkout_command(root, ["add", "--stdin"], "\n".join(patterns) + "\n",
                             f"widen the sparse checkout to the {len(needed)} file(s) orv needs",
                             f"check out the {len(needed)} file(s) orv needs from this sparse clone",
                             "; a partial clone fetches them from its remote, so that remote must be reachable "
                             "(and, for a private repository, the credentials kept: actions/checkout's "
                             "`persist-credentials: true`)")
    return patterns


def _sparse_checkout_command(root: str, args: list[str], stdin: str, doing: str, failing: str, hint: str = "") -> None:
    """`git sparse-checkout ARGS` (which checks files out, fetching what a partial clone lacks), or a
    GitError: "cannot <doing>: <error>" when git cannot run, "cannot <failing> (`git sparse-checkout
    <verb>`: <git's last line>)<hint>" when it fails."""
    try:
        done = subprocess.run(["git", "-C", root, "sparse-checkout", *args], input=stdin, capture_output=True,
                              text=True, errors="surrogateescape", timeout=3600, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"cannot {doing}: {exc}") from None
    if done.returncode != 0:
        reason = done.stderr.strip().splitlines()[-1:] or [f"git exited with status {done.returncode}"]
        raise GitError(f"cannot {failing} (`git sparse-checkout {args[0]}`: {reason[0]}){hint}")


def _patterns(prefix: str, paths: list[str], cone: bool) -> list[str]:
    """Sparse-checkout patterns selecting `paths`: anchored, escaped paths (non-cone), folders (cone),
    or their top-level folders when there are many."""
    if len(paths) > MANY_FILES:
        paths = sorted({p.split("/", 1)[0] + ("/" if "/" in p else "") for p in paths})
    full = [prefix + p for p in paths]
    if cone:  # cone mode takes folders: the one holding each path (files directly in the registry's
        # folder come with any folder below it, and the top's files are always in)
        folders = {p.rstrip("/") if p.endswith("/") else p.rpartition("/")[0] for p in full}
        return sorted(folders - {"", prefix.rstrip("/")})
    out = []
    for p in full:
        escaped = _PATTERN_SPECIAL.sub(r"\\\1", p)
        if escaped.endswith(" "):
            escaped = escaped[:-1] + "\\ "
        out.append("/" + escaped)
    return out


def tracked(root: str, top: str) -> list[str] | None:
    """Every path git tracks under root/top (registry-relative), on disk or not; None outside git."""
    out = plumbing(root, "ls-files", "-z", "--", top)
    if out is None:
        return None
    return [p for p in out.decode(errors="surrogateescape").split("\0") if p]

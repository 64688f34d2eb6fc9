"""Plain `git` calls that never raise (outside a repository they return None): the cache's listings,
the working tree's trees, tree comparisons, and the command runner the other git modules share.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile

# what a failed read in a partial clone tells the contributor (and the Action's author) to do
REMOTE_HINT = (
    "; a partial clone fetches what it lacks from its remote, so that remote must be reachable (and, for a "
    "private repository, the credentials kept: actions/checkout's `persist-credentials: true`)"
)

# --------------------------------------------------------------------------- plumbing (never raises)


def plumbing(
    root: str, *args: str, input: bytes | None = None, env: dict[str, str] | None = None, timeout: int = 60
) -> bytes | None:
    """stdout of `git -C root ARGS` (fed `input`, in `env`), or None when git fails, is absent or takes longer
    than `timeout` seconds: the one way orv runs git without GitPython, and it never raises."""
    try:
        done = subprocess.run(
            ["git", "-C", root, *args], input=input, capture_output=True, timeout=timeout, check=False, env=env
        )
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
            target = os.path.join(here, line[len("gitdir:") :].strip())
            return os.path.realpath(target) if os.path.isdir(target) else None
        if (
            os.path.basename(here) == ".git"
            or os.path.isfile(os.path.join(here, "HEAD"))
            and os.path.isdir(os.path.join(here, "objects"))
        ):
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


def uncommitted(root: str, tops: tuple[str, ...]) -> list[str] | None:
    """Registry-relative paths under `tops` whose working-tree state is not committed: modified, staged,
    deleted or untracked (what .gitignore does not exclude); None outside git."""
    status = plumbing(root, "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames", "--", *tops)
    if status is None:
        return None
    return sorted({entry[3:] for entry in status.decode(errors="surrogateescape").split("\0") if len(entry) > 3})


EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the tree with nothing in it


def trees_only_env() -> dict[str, str]:
    """The environment for git commands that compare trees and never need the index (`diff-tree`).

    `git diff-tree` reads the index though it compares trees only: 0.08 s a call at 100,000 run files (a
    195,367-path index, git 2.39), and a pull request's check makes several. Pointed at an index that does
    not exist, it reads none and answers the same."""
    return {**os.environ, "GIT_INDEX_FILE": os.path.join(tempfile.gettempdir(), f"orv-no-index-{os.urandom(8).hex()}")}


def cat_file_batch(root: str, specs: list[str]) -> dict[str, bytes | None] | None:
    """The bytes of each object named by `specs` (`<commit>:<path>` or an id) from one `git cat-file --batch`,
    None for a spec that names no object or not a blob; None as a whole when git fails (in a partial clone,
    a blob it could not fetch from its remote). One process for any number of files, where GitPython walks
    the tree objects in Python for each path."""
    if not specs:
        return {}
    if any("\n" in spec for spec in specs):
        return None  # one spec a line: a path with a newline cannot be asked this way
    raw = plumbing(root, "cat-file", "--batch", input="".join(f"{spec}\n" for spec in specs).encode(), timeout=600)
    if raw is None:
        return None
    found: dict[str, bytes | None] = {}
    at = 0
    for spec in specs:
        end = raw.find(b"\n", at)
        if end < 0:
            return None
        line = raw[at:end]
        at = end + 1
        if line.endswith((b" missing", b" ambiguous")):  # "<spec> missing": no such path at that commit
            found[spec] = None
            continue
        _id, kind, size = line.split(b" ")  # "<id> <type> <size>", then the content and a newline
        found[spec] = raw[at : at + int(size)] if kind == b"blob" else None
        at += int(size) + 1
    return found


def worktree_trees(root: str, tops: tuple[str, ...]) -> dict[str, str] | None:
    """top -> the git tree id each registry folder has in the work tree: what `git add -A` and a commit
    would make of it (HEAD's tree when nothing changed there; the empty tree's id when absent). Built in a
    throwaway copy of git's index (its stat cache spares re-hashing unchanged files), so the real index is
    untouched; the trees' objects are written to the repository. None outside git or when git fails."""
    git_dir = plumbing(root, "rev-parse", "--absolute-git-dir")
    prefix = registry_prefix(root)
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
            update = (
                ["add", "-A", "--", top]
                if os.path.isdir(os.path.join(root, top))
                else ["rm", "-r", "--cached", "-q", "--ignore-unmatch", "--", top]
            )
            if plumbing(root, *update, env=env, timeout=300) is None:
                return None
            listed = plumbing(root, "ls-files", "--", top, env=env, timeout=300)
            if listed is None:
                return None
            tree = (
                plumbing(root, "write-tree", f"--prefix={prefix}{top}/", env=env, timeout=300)
                if listed.strip()
                else EMPTY_TREE.encode()
            )
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


def commit_trees(root: str, commit: str, tops: tuple[str, ...]) -> dict[str, str] | None:
    """top -> the git tree id each registry folder has in `commit` (the empty tree's id when absent); None
    outside git or when git cannot read the commit."""
    prefix = registry_prefix(root)
    if prefix is None:
        return None
    trees = {}
    for top in tops:
        found = plumbing(root, "rev-parse", "--verify", "-q", f"{commit}:{prefix}{top}")
        if found is None and plumbing(root, "rev-parse", "--verify", "-q", f"{commit}^{{commit}}") is None:
            return None
        trees[top] = found.decode().strip() if found else EMPTY_TREE
    return trees


def registry_prefix(root: str) -> str | None:
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    return prefix.decode().strip() if prefix is not None else None


def tracked(root: str, top: str) -> list[str] | None:
    """Every path git tracks under root/top (registry-relative), on disk or not; None outside git."""
    out = plumbing(root, "ls-files", "-z", "--", top)
    if out is None:
        return None
    return [p for p in out.decode(errors="surrogateescape").split("\0") if p]


def configured_user_name(root: str) -> str | None:
    """`git config user.name` as git resolves it for the checkout at `root` (the global one outside a
    repository), or None: no git, no name, or an unreadable config."""
    import git  # GitPython, imported where used: most commands never need it (as git/diff.py)

    try:
        try:
            reader = git.Repo(root, search_parent_directories=True).config_reader()
        except (git.InvalidGitRepositoryError, git.NoSuchPathError):
            reader = git.GitConfigParser(git.config.get_config_path("global"), read_only=True)
        name = reader.get_value("user", "name", "")
        return str(name).strip() or None
    except Exception:  # noqa: BLE001 - no git, or an unreadable config: the caller asks instead
        return None

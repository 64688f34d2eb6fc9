"""Partial (blob- and tree-less) clones: fetching exactly the objects a check reads, nothing more."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Iterable

from validator.errors import GitError
from validator.git.plumbing import REMOTE_HINT, cat_file_batch, plumbing, trees_only_env
from validator.git.sparse import read_config


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
    blobs = [
        record.split("\t", 1)[0].split(" ")[2]
        for record in listing.decode(errors="surrogateescape").split("\0")
        if "\t" in record and record.split(" ", 2)[1] == "blob"
    ]
    # as git's own lazy fetch asks (promisor-remote.c), for all at once; blobs already here are not sent again
    if not fetch_by_id(root, remote, blobs, "blob:none"):
        return 0
    return len(blobs)


CHECK_OUT_BATCH = 1000  # blobs read from git per `cat-file --batch` (run files: ~14-110 KB each)


def check_out_files(root: str, paths: Iterable[str]) -> int:
    """Write tracked files a sparse checkout leaves out (registry-relative `paths`) to disk from git's objects,
    their missing blobs fetched in one request, without adding a sparse pattern per file: for a reader of
    thousands of files (`orv site`: every training run file's loss curve), where materialize would widen to
    whole folders (a pattern per file costs patterns x index entries in git). git then counts them as
    checked out (it clears the skip-worktree bit of a file on disk); a later `git sparse-checkout add`
    removes them from disk again, since no pattern selects them, so read them before changing the patterns.
    Returns how many files were written; 0 outside a sparse checkout. A GitError when a blob cannot be had."""
    wanted = set(paths)
    if not wanted or read_config(root, "--bool", "core.sparseCheckout") != "true":
        return 0
    listing = plumbing(root, "ls-files", "-t", "-s", "-z", "--", ".")  # git's index: fetches nothing
    left_out: dict[str, str] = {}
    for entry in (listing or b"").decode(errors="surrogateescape").split("\0"):
        meta, tab, rel = entry.partition("\t")  # "S <mode> <blob> <stage>\t<path>": S, left out
        fields = meta.split()
        if tab and rel in wanted and len(fields) == 4 and fields[0] == "S" and fields[1] == "100644":
            if not os.path.lexists(os.path.join(root, rel)):
                left_out[rel] = fields[2]
    if not left_out:
        return 0
    blobs = sorted(set(left_out.values()))
    here = _local_objects(root) or set()
    remote = _promisor_remote(root)
    missing = [b for b in blobs if b not in here]
    if missing and remote:
        fetch_by_id(root, remote, missing, "blob:none")
    by_blob: dict[str, list[str]] = {}
    for rel, blob in sorted(left_out.items()):
        by_blob.setdefault(blob, []).append(rel)
    for start in range(0, len(blobs), CHECK_OUT_BATCH):  # bounded memory: a batch's bytes at a time
        batch = blobs[start : start + CHECK_OUT_BATCH]
        found = cat_file_batch(root, batch)
        if found is None or any(found.get(b) is None for b in batch):
            raise GitError(f"cannot check out the {len(blobs):,} file(s) left out of this sparse checkout{REMOTE_HINT}")
        for blob in batch:
            for rel in by_blob[blob]:
                target = os.path.join(root, rel)
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "wb") as fh:  # committed bytes checked out, as git's own checkout writes them
                    fh.write(found[blob] or b"")
    return len(left_out)


def _promisor_remote(root: str) -> str:
    """The remote a partial clone fetches missing objects from ("" when this is no partial clone)."""
    named = read_config(root, "extensions.partialClone")
    if named:
        return named
    listed = plumbing(root, "config", "--get-regexp", r"^remote\..*\.promisor$")
    for line in (listed or b"").decode(errors="replace").splitlines():
        key, _, value = line.partition(" ")
        if value.strip().lower() in ("true", "yes", "on", "1"):
            return key[len("remote.") : -len(".promisor")]
    return ""


def _tree_filtered_remote(root: str) -> str:
    """The remote a tree-less partial clone (`--filter=tree:N`) fetches missing trees from, or ""."""
    filters = plumbing(root, "config", "--get-regexp", r"^remote\..*\.partialclonefilter$")
    for key, _, value in (line.partition(" ") for line in (filters or b"").decode(errors="replace").splitlines()):
        if value.strip().startswith("tree:"):
            return key[len("remote.") : -len(".partialclonefilter")]
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
    return fetch_tree_differences(root, have_tree, [want_tree])


def fetch_tree_differences(root: str, have_tree: str, want_trees: Iterable[str]) -> int:
    """fetch_tree_difference for several trees at once: one request per level for all of them."""
    remote = _tree_filtered_remote(root)
    wanted_trees = sorted({w for w in want_trees if w and w != have_tree})
    if not remote or not have_tree or not wanted_trees:
        return 0
    here = _local_objects(root)  # one listing, not one `git rev-list` per tree (a merge's commits: hundreds)
    if here is None or have_tree not in here:
        return 0
    fetched = 0
    pairs = [(have_tree, want) for want in wanted_trees]
    while pairs:
        # a tree already here (the workflow's rules step fetched the base's top-level one) is not asked
        # for again; the trees below it may still be missing, so the walk goes on regardless
        wanted = sorted({w for _, w in pairs if w not in here})
        if wanted and not _fetch_exact(root, remote, wanted):
            return fetched
        here.update(wanted)
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
        raw = plumbing(
            root,
            "diff-tree",
            "--stdin",
            "-z",
            "--raw",
            "--no-renames",
            input="".join(f"{h} {w}\n" for h, w in compared).encode(),
            env=trees_only_env(),
            timeout=600,
        )
        if raw is None:
            return None
        # each pair with differences: a "<have> <want>" line, then ":<mode> <mode> <id> <id> <status>" NUL
        # <name> NUL per differing entry; the next pair's line starts the field after its last name
        fields = raw.decode(errors="surrogateescape").split("\0")
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


def _local_objects(root: str) -> set[str] | None:
    """The ids of every object this clone holds (never fetches: git lists its own object store). A tree-less
    clone holds its commits, HEAD's trees and the few blobs checked out: thousands of ids, not millions."""
    listed = plumbing(root, "cat-file", "--batch-check=%(objectname)", "--batch-all-objects", "--unordered")
    return None if listed is None else set(listed.decode().split())


def _read_trees(root: str, trees: list[str]) -> dict[str, dict[str, tuple[str, str]]] | None:
    """tree id -> {name: (mode, object id)} for trees that are here (`cat-file --batch`, one process)."""
    data = plumbing(root, "cat-file", "--batch", input="".join(t + "\n" for t in trees).encode(), timeout=600)
    if data is None:
        return None
    out, at = {}, 0
    try:
        for tree in trees:
            end = data.index(b"\n", at)
            header = data[at:end].split(b" ")
            if len(header) != 3 or header[1] != b"tree":
                return None
            size = int(header[2])
            body, at = data[end + 1 : end + 1 + size], end + 2 + size
            entries, i = {}, 0
            while i < len(body):  # entries: "<mode> <name>\0<20-byte id>"
                space, nul = body.index(b" ", i), body.index(b"\0", i)
                entries[body[space + 1 : nul].decode(errors="surrogateescape")] = (
                    body[i:space].decode(),
                    body[nul + 1 : nul + 21].hex(),
                )
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
    url = read_config(root, f"remote.{remote}.url")
    if git_dir is None or objects is None or not url:
        return False
    if "://" not in url and not re.match(r"^[^/]+:", url):  # a local path, relative to the work tree
        top = plumbing(root, "rev-parse", "--show-toplevel")
        url = os.path.join(top.decode().strip() if top else root, url)
    # how the clone reaches its remote: credentials a checkout kept, URL rewrites, the remote's
    # upload-pack and proxy (never its promisor settings: those would make this a partial clone too)
    carried = plumbing(
        root,
        "config",
        "--local",
        "--get-regexp",
        rf"^((http|credential|url)\.|remote\.{re.escape(remote)}\.(uploadpack|proxy|proxyauthmethod)$)",
    )
    settings = [
        "=".join(line.split(" ", 1))
        for line in (carried or b"").decode(errors="surrogateescape").splitlines()
        if " " in line
    ]
    try:
        scratch = tempfile.mkdtemp(prefix="orv-fetch-", dir=git_dir.decode().strip())
    except OSError:
        return False
    try:
        if plumbing(scratch, "init", "-q", "--bare") is None:
            return False
        env = {**os.environ, "GIT_OBJECT_DIRECTORY": objects.decode().strip()}
        # no gc, maintenance or commit graph in the throwaway repository: its objects are the clone's
        no_upkeep = ("gc.auto=0", "maintenance.auto=false", "fetch.writeCommitGraph=false")
        config = [f"remote.{remote}.url={url}", *no_upkeep, *settings]
        return fetch_by_id(scratch, remote, oids, "tree:0", config, env)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def fetch_range_trees(root: str, since: str) -> int:
    """In a tree-less partial clone, fetch the trees of the commits after `since` on HEAD (and of their
    parents), each only where it differs from HEAD's (fetch_tree_differences), before a walk over paths
    (`git rev-list since..HEAD -- recipes runs`) or a read of `since`'s trees would fetch each commit's
    whole tree: a merge's boards update walks a few commits, and at 10,000 run files each whole tree is
    ~1 MB against a few KB of folders that differ. Returns the trees fetched; never raises."""
    if not _tree_filtered_remote(root):
        return 0
    listed = plumbing(root, "rev-list", "--parents", f"{since}..HEAD")  # commits only: a tree-less clone has them
    head = plumbing(root, "rev-parse", "--verify", "-q", "HEAD^{tree}")
    if listed is None or head is None:
        return 0
    commits = sorted({sha for line in listed.decode().splitlines() for sha in line.split()} | {since})
    # their root trees' ids, read from the commit objects (rev-list without --objects never fetches; `git show`
    # would fetch each whole tree)
    listed = plumbing(root, "rev-list", "--no-walk=unsorted", "--format=%T", *commits)
    if listed is None:
        return 0
    trees = [line for line in listed.decode().splitlines() if line and not line.startswith("commit ")]
    return fetch_tree_differences(root, head.decode().strip(), trees)


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
    # the missing trees themselves are asked for (a commit the clone has would be "already here"); a failed
    # fetch leaves git to fetch on demand
    fetch_by_id(root, remote, [m.decode() for m in missing], "blob:none")


def fetch_by_id(
    root: str,
    remote: str,
    ids: list[str],
    object_filter: str,
    config: list[str] | None = None,
    env: dict[str, str] | None = None,
) -> bool:
    """Fetch objects of a partial clone by id, in one request, as git's own lazy fetch asks
    (promisor-remote.c): no negotiation (the clone has every commit), no tags, no FETCH_HEAD, no
    submodules; `config` adds `-c` settings. Up to an hour (a whole history on a slow network); never
    raises: False when git could not."""
    settings = [arg for value in config or [] for arg in ("-c", value)]
    done = plumbing(
        root,
        "-c",
        "fetch.negotiationAlgorithm=noop",
        *settings,
        "fetch",
        "--quiet",
        "--no-tags",
        "--no-write-fetch-head",
        "--recurse-submodules=no",
        f"--filter={object_filter}",
        "--stdin",
        remote,
        input="".join(i + "\n" for i in ids).encode(errors="surrogateescape"),
        env=env,
        timeout=3600,
    )
    return done is not None

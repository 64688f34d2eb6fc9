"""Sparse checkouts: what a check needs checked out (materialize), and refusing what needs every file."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from validator.errors import GitError, UsageError
from validator.git.plumbing import REMOTE_HINT, plumbing

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
    if read_config(root, "--bool", "core.sparseCheckout") != "true":
        return None
    listing = plumbing(root, "ls-files", "-t", "-z", "--", ".")
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    if listing is None or prefix is None:
        return None
    # `ls-files -t`: "S " marks a skip-worktree entry (outside the patterns); paths relative to root
    hidden = frozenset(
        entry[2:] for entry in listing.decode(errors="surrogateescape").split("\0") if entry.startswith("S ")
    )
    if not hidden:
        return None
    partial = bool(read_config(root, "extensions.partialClone")) or bool(
        plumbing(root, "config", "--get-regexp", r"^remote\..*\.promisor$")
    )
    return SparseCheckout(
        root, prefix.decode().strip(), read_config(root, "--bool", "core.sparseCheckoutCone") == "true", hidden, partial
    )


def read_config(root: str, *args: str) -> str:
    out = plumbing(root, "config", *args)
    return out.decode(errors="replace").strip() if out is not None else ""


def refuse_sparse(root: str, what: str, instead: str) -> None:
    """UsageError when `root` is a sparse checkout: `what` would see only part of the registry."""
    sparse = sparse_checkout(root)
    if sparse is None:
        return
    raise UsageError(
        f"{what} needs every file of the registry, but this checkout is sparse: "
        f"{len(sparse.hidden):,} tracked file(s) are not in the working tree, so it would judge "
        f"only part of the registry. {instead}"
    )


def widen(root: str, why: str) -> None:
    """Check every file out of a sparse checkout (`git sparse-checkout disable`; a partial clone fetches
    the contents it lacks in one request), saying so on stderr. A no-op when nothing is left out; a
    GitError naming git's reason when git cannot (no network, no credentials)."""
    sparse = sparse_checkout(root)
    if sparse is None:
        return
    print(
        f"orv: {why}: checking out the {len(sparse.hidden):,} file(s) this sparse checkout leaves out "
        "(`git sparse-checkout disable`, --widen)",
        file=sys.stderr,
    )
    _sparse_checkout_command(
        root,
        ["disable"],
        "",
        "check out every file of this sparse checkout",
        "check out every file of this sparse checkout",
    )


WHOLE_CHECKOUT = "`git sparse-checkout disable` checks out every file (fetching what a partial clone lacks)"


def materialize(root: str, paths: Iterable[str]) -> list[str]:
    """Make `paths` (registry-relative) part of a sparse checkout; the patterns it added.

    Tracked files left out are checked out (a partial clone fetches their blobs from its promisor
    remote, all in one request); paths not tracked yet (a file about to be written) get a pattern
    too, so git keeps them in the checkout and `git add` takes them. A no-op outside a sparse
    checkout. A fetch that fails (no network, no credentials) is a GitError naming git's reason.
    """
    wanted = sorted({p for p in paths if p})
    if not wanted or read_config(root, "--bool", "core.sparseCheckout") != "true":
        return []
    # few paths: ask about those (literally: a path is never a glob); many: list everything once
    asked = ("--", *wanted) if len(wanted) <= 256 else ("--", ".")
    status = plumbing(root, "--literal-pathspecs", "ls-files", "-t", "-z", *asked)
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    if status is None or prefix is None:
        return []
    shown = {entry[2:]: entry[:1] for entry in status.decode(errors="surrogateescape").split("\0") if len(entry) > 2}
    needed = [
        p for p in wanted if shown.get(p) == "S" or (p not in shown and not os.path.lexists(os.path.join(root, p)))
    ]
    patterns = _patterns(
        prefix.decode().strip(), needed, read_config(root, "--bool", "core.sparseCheckoutCone") == "true"
    )
    if not patterns:
        return []
    _sparse_checkout_command(
        root,
        ["add", "--stdin"],
        "\n".join(patterns) + "\n",
        f"widen the sparse checkout to the {len(needed)} file(s) orv needs",
        f"check out the {len(needed)} file(s) orv needs from this sparse clone",
        REMOTE_HINT,
    )
    return patterns


def keep_written(root: str, paths: Iterable[str]) -> list[str]:
    """Give files just written at paths a sparse checkout leaves out (registry-relative `paths`) a pattern
    each, so `git add` takes them: git counts a file on disk as checked out, but `git add` still skips a path
    no pattern selects. git keeps the written bytes (a modified file is never overwritten) and fetches
    nothing. The patterns added; a no-op outside a sparse checkout."""
    wanted = sorted({p for p in paths if p})
    if not wanted or read_config(root, "--bool", "core.sparseCheckout") != "true":
        return []
    prefix = plumbing(root, "rev-parse", "--show-prefix")
    if prefix is None:
        return []
    patterns = _patterns(
        prefix.decode().strip(), wanted, read_config(root, "--bool", "core.sparseCheckoutCone") == "true"
    )
    _sparse_checkout_command(
        root,
        ["add", "--stdin"],
        "\n".join(patterns) + "\n",
        f"add the {len(wanted)} file(s) orv wrote to the sparse checkout",
        f"add the {len(wanted)} file(s) orv wrote to the sparse checkout",
    )
    return patterns


def hidden_blobs(root: str, paths: Iterable[str]) -> dict[str, str]:
    """path -> git's blob id of each of `paths` (registry-relative) that a sparse checkout tracks but leaves
    off disk, read from git's index (nothing is fetched): whether a file about to be written differs from
    the committed one, without fetching its bytes. Empty outside a sparse checkout."""
    wanted = sorted({p for p in paths if p})
    if not wanted or read_config(root, "--bool", "core.sparseCheckout") != "true":
        return {}
    asked = ("--", *wanted) if len(wanted) <= 256 else ("--", ".")
    listing = plumbing(root, "--literal-pathspecs", "ls-files", "-t", "-s", "-z", *asked)
    out = {}
    for entry in (listing or b"").decode(errors="surrogateescape").split("\0"):
        # "S <mode> <blob> <stage>\t<path>": S marks a skip-worktree entry
        meta, tab, rel = entry.partition("\t")
        fields = meta.split()
        if tab and len(fields) == 4 and fields[0] == "S" and fields[3] == "0" and rel in wanted:
            out[rel] = fields[2]
    return out


def _sparse_checkout_command(root: str, args: list[str], stdin: str, doing: str, failing: str, hint: str = "") -> None:
    """`git sparse-checkout ARGS` (which checks files out, fetching what a partial clone lacks), or a
    GitError: "cannot <doing>: <error>" when git cannot run, "cannot <failing> (`git sparse-checkout
    <verb>`: <git's last line>)<hint>" when it fails."""
    try:
        done = subprocess.run(
            ["git", "-C", root, "sparse-checkout", *args],
            input=stdin,
            capture_output=True,
            text=True,
            errors="surrogateescape",
            timeout=3600,
            check=False,
        )
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

"""A pull request as the "pr" checks see it: the working tree's snapshot plus what changed since the merge base."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property

from validator.git.diff import ADDED, BaseTree, Diff, FileChange, diff
from validator.registry.snapshot import Snapshot


@dataclass(frozen=True)
class Change:
    """The snapshot (working tree) plus what changed since the merge base: what "pr" checks receive."""

    snapshot: Snapshot
    base_ref: str  # as given on the command line
    base_commit: str  # the merge base's full SHA
    files: tuple[FileChange, ...]
    base: BaseTree = field(repr=False, compare=False)

    @cached_property
    def by_path(self) -> Mapping[str, FileChange]:
        return {c.path: c for c in self.files}

    @cached_property
    def added_paths(self) -> frozenset[str]:
        return frozenset(c.path for c in self.files if c.status == ADDED)

    @cached_property
    def head_paths(self) -> frozenset[str]:
        """Paths the pull request added or altered (present in the working tree)."""
        return frozenset(c.path for c in self.files if c.present_at_head)


def on_snapshot(d: Diff, snapshot: Snapshot) -> Change:
    """The change `d` seen from the working tree loaded as `snapshot`."""
    return Change(snapshot, d.base_ref, d.base_commit, d.files, d.base)


def compare(snapshot: Snapshot, base_ref: str) -> Change:
    """The change between the merge base of `base_ref` and HEAD, and the working tree at snapshot.root."""
    return on_snapshot(diff(snapshot.root, base_ref), snapshot)

"""validator/git/ `_changed_files`: what differs between the merge base and the working tree.

It names candidate paths with two cheap comparisons (index against the merge base, working tree against
the index) and asks `git diff <merge base>` about those paths only. Each test here builds a working tree
where a shortcut could go wrong and holds the answer to the whole-tree `git diff`, the command it replaced.
"""

from __future__ import annotations

import os
from pathlib import Path

import git as gitpython
import pytest

import validator.git.diff as vgit
import validator.git.partial as vpartial
from tests.testing.git import git

pytestmark = pytest.mark.git


def whole_tree(repo: Path, base: str) -> set[tuple[str, str, int, int]]:
    """The records of the whole-tree `git diff <base>`, plus the untracked files, as before the shortcut."""
    raw = gitpython.Repo(repo).git.diff(base, *vgit._DIFF_FLAGS, "--")
    out = set()
    for meta, path in vgit._raw_records(raw):
        old_mode, new_mode, _o, _n, status = meta[1:].split(" ", 4)
        out.add((path, status[0], int(old_mode, 8), int(new_mode, 8)))
    seen = {path for path, *_ in out}
    for path in gitpython.Repo(repo).untracked_files:
        if path not in seen:
            out.add((path, vgit.ADDED, 0, vgit._mode_on_disk(str(repo / path))))
    return out


def changed(repo: Path, base: str) -> set[tuple[str, str, int, int]]:
    return {(c.path, c.status, c.base_mode, c.head_mode) for c in vgit._changed_files(gitpython.Repo(repo), base, "")}


def write(repo: Path, rel: str, text: str) -> None:
    path = repo / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def tricky(tmp_path: Path) -> Path:
    """A merge base, then every kind of difference a contributor's working tree can have from it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel in (
        "recipes/a.yaml",
        "recipes/b.yaml",
        "recipes/c.yaml",
        "recipes/*.yaml",
        "runs/x:y.json",
        ":!recipes",
        "runs/kept.json",
        "runs/gone.json",
        "runs/staged-gone.json",
        "tools/run.sh",
    ):
        write(repo, rel, f"{rel}\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "base")
    write(repo, "recipes/a.yaml", "committed change\n")  # changed in a commit after the merge base
    git(repo, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qam", "pr")
    write(repo, "recipes/b.yaml", "staged\n")
    git(repo, "add", "recipes/b.yaml")
    write(repo, "recipes/c.yaml", "staged, then put back\n")  # index differs, working tree equals the base
    git(repo, "add", "recipes/c.yaml")
    write(repo, "recipes/c.yaml", "recipes/c.yaml\n")
    write(repo, "recipes/*.yaml", "a glob in its name: names itself only\n")  # unstaged
    write(repo, "runs/x:y.json", "a colon in its name\n")
    write(repo, ":!recipes", "read as pathspec magic, this name would exclude recipes/\n")
    os.remove(repo / "runs/gone.json")  # deleted, not staged
    git(repo, "rm", "-q", "runs/staged-gone.json")
    os.chmod(repo / "tools/run.sh", 0o755)  # a mode change only
    write(repo, "runs/new.json", "untracked\n")
    write(repo, "notes/staged-new.md", "staged, new\n")
    git(repo, "add", "notes/staged-new.md")
    embedded = repo / "vendor/lib"
    embedded.mkdir(parents=True)
    git(embedded, "init", "-q")
    return repo


def test_the_candidates_diff_equals_the_whole_tree_diff(tricky: Path) -> None:
    base = git(tricky, "rev-parse", "HEAD~1").strip()
    expected = whole_tree(tricky, base)
    assert changed(tricky, base) == {(p.rstrip("/"), s, o, n) for p, s, o, n in expected}
    paths = {path for path, *_ in changed(tricky, base)}
    assert "recipes/c.yaml" not in paths  # staged and put back: no difference from the base
    assert {
        "recipes/a.yaml",
        "recipes/b.yaml",
        "recipes/*.yaml",
        "runs/x:y.json",
        "runs/gone.json",
        "runs/staged-gone.json",
        "tools/run.sh",
        "runs/new.json",
        ":!recipes",
        "notes/staged-new.md",
        "vendor/lib",
    } == paths
    assert ("vendor/lib", vgit.ADDED, 0, vgit.MODE_SUBMODULE) in changed(tricky, base)


def test_many_candidates_fall_back_to_the_whole_tree(tricky: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = git(tricky, "rev-parse", "HEAD~1").strip()
    named = changed(tricky, base)
    monkeypatch.setattr(vgit, "_NAMED_PATHS_AT_MOST", 2)
    assert changed(tricky, base) == named


def test_a_clean_working_tree_asks_no_path_diff(tricky: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """HEAD equal to the merge base and nothing changed: no candidate, so the path-limited diff never runs."""
    git(tricky, "checkout", "-q", "-f", "HEAD")
    git(tricky, "clean", "-qffdx")  # -ff: the embedded repository too
    head = git(tricky, "rev-parse", "HEAD").strip()
    calls: list[list[str]] = []
    real = gitpython.Git.execute

    def spy(self: gitpython.Git, command: list[str], *args: object, **kwargs: object) -> object:
        calls.append(list(command))
        return real(self, command, *args, **kwargs)

    monkeypatch.setattr(gitpython.Git, "execute", spy)
    assert changed(tricky, head) == set()
    assert not [c for c in calls if "diff" in c and "--literal-pathspecs" in c]


def test_differing_subtrees_are_those_a_name_by_name_comparison_finds(tmp_path: Path) -> None:
    """fetch_tree_difference's step (validator/git/ `_differing_subtrees`, one `git diff-tree --stdin` per
    level) against comparing the two trees' entries name by name, as it did before."""
    repo = tmp_path / "trees"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel in ("a/x/1", "a/y/2", "b/3", "c/4", "d/5", "top", "same/6"):
        write(repo, rel, rel + "\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "one")
    write(repo, "a/x/1", "changed\n")  # a folder two deep changes
    write(repo, "b/3", "changed\n")  # only a file changes in b/: no subtree differs there
    git(repo, "rm", "-q", "-r", "c")
    write(repo, "c", "a folder turned into a file\n")
    write(repo, "e/new/7", "a new folder\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.email=t@e", "-c", "user.name=t", "commit", "-qm", "two")

    def tree(rev: str) -> str:
        return git(repo, "rev-parse", rev if ":" in rev else f"{rev}^{{tree}}").strip()

    def by_name(pairs: list[tuple[str, str]]) -> list[tuple[str, str]]:
        listed = vpartial._read_trees(str(repo), sorted({t for pair in pairs for t in pair if t}))
        assert listed is not None
        out = []
        for h, w in pairs:
            ours = listed.get(h, {})
            for name, (mode, oid) in listed[w].items():
                shared = ours.get(name)
                if mode == "40000" and shared != (mode, oid):
                    out.append((shared[1] if shared and shared[0] == "40000" else "", oid))
        return sorted(out)

    pairs = [
        (tree("HEAD~1"), tree("HEAD")),
        (tree("HEAD~1:a"), tree("HEAD:a")),
        (tree("HEAD~1:b"), tree("HEAD:b")),
        ("", tree("HEAD:e")),
    ]
    found = vpartial._differing_subtrees(str(repo), pairs)
    assert found is not None and sorted(found) == by_name(pairs)
    assert (tree("HEAD~1:a"), tree("HEAD:a")) in found and ("", tree("HEAD:e")) in found
    assert ("", tree("HEAD:e/new")) in found and not any(w == tree("HEAD:same") for _, w in found)

"""docs/releasing.md's release, cut by .ci/release in a scratch clone of this repository (issue 52): an
annotated vX.Y.Z tag on the release commit, the series tag (v0.Y while X is 0, vX from 1.0) moved to it,
and every way a release goes wrong refused before a tag is made."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.testing.git import commit_all, git, git_env
from tests.testing.paths import REPO

pytestmark = pytest.mark.git


def _set_version(clone: Path, version: str) -> None:
    for rel, pattern, line in (
        ("pyproject.toml", r'^version = ".*"$', f'version = "{version}"'),
        ("validator/__init__.py", r'^__version__ = ".*"$', f'__version__ = "{version}"'),
    ):
        path = clone / rel
        path.write_text(re.sub(pattern, line, path.read_text(encoding="utf-8"), count=1, flags=re.M), encoding="utf-8")


def _release(clone: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(clone / ".ci" / "release"), *args], cwd=clone, env=git_env(clone), capture_output=True, text=True
    )


def _points_at(clone: Path, tag: str) -> str:
    return git(clone, "rev-parse", f"{tag}^{{}}")


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The files .ci/release reads, from this repository, in a repository of their own on `main`."""
    root = tmp_path / "clone"
    for rel in (".ci/release", "pyproject.toml", "validator/__init__.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, root / rel)
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "the repository")
    return root


def test_a_release_tags_the_commit_and_moves_its_series(clone: Path) -> None:
    _set_version(clone, "0.2.0")
    first = commit_all(clone, "Release v0.2.0")
    done = _release(clone, "0.2.0")
    assert done.returncode == 0, done.stderr
    assert "git push origin v0.2.0 && git push --force origin v0.2" in done.stdout
    assert git(clone, "cat-file", "-t", "v0.2.0") == "tag"  # annotated
    assert _points_at(clone, "v0.2.0") == _points_at(clone, "v0.2") == first
    _set_version(clone, "0.2.1")
    second = commit_all(clone, "Release v0.2.1")
    assert _release(clone, "0.2.1").returncode == 0
    assert _points_at(clone, "v0.2") == second and _points_at(clone, "v0.2.0") == first  # only the series moves
    _set_version(clone, "1.0.0")
    third = commit_all(clone, "Release v1.0.0")
    assert _release(clone, "1.0.0").returncode == 0
    assert _points_at(clone, "v1") == third and _points_at(clone, "v0.2") == second


@pytest.mark.parametrize(
    "setup, args, says",
    [
        ("none", ["0.2.0"], "pyproject.toml says 0.1.0"),  # the version was not set first
        ("set", ["0.2"], "usage"),
        ("set-dirty", ["0.2.0"], "uncommitted changes"),
        ("set-branch", ["0.2.0"], "releases are cut on main"),
        ("set-tagged", ["0.2.0"], "v0.2.0 exists"),
        ("set-older", ["0.2.0"], "older than the newest release v0.3.0"),
    ],
)
def test_a_wrong_release_is_refused_and_tags_nothing(clone: Path, setup: str, args: list[str], says: str) -> None:
    if setup != "none":
        _set_version(clone, "0.2.0")
        commit_all(clone, "Release v0.2.0")
    if setup == "set-dirty":
        (clone / "pyproject.toml").write_text((clone / "pyproject.toml").read_text() + "\n", encoding="utf-8")
    if setup == "set-branch":
        git(clone, "switch", "-q", "-c", "release-branch")
    if setup == "set-tagged":
        git(clone, "tag", "-a", "v0.2.0", "-m", "orv 0.2.0")
    if setup == "set-older":
        git(clone, "tag", "-a", "v0.3.0", "-m", "orv 0.3.0")
    tags_before = git(clone, "tag", "--list")
    done = _release(clone, *args)
    assert done.returncode == 1 and says in done.stderr, done.stderr
    assert git(clone, "tag", "--list") == tags_before

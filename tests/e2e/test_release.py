"""docs/releasing.md's release, cut by .ci/release in a scratch clone of this repository (issue 52): an
annotated vX.Y.Z tag on the release commit (a child of main's commit holding the action and the validator
without registry data), the series tag (v0.Y while X is 0, vX from 1.0) moved to it, and every way a release
goes wrong refused before a tag is made."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.e2e.test_gate_model import install_orv_from
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


# What a release tag's tree holds (.ci/release's RELEASED): the action, the hooks, and what pip installs.
RELEASED = (
    "action.yml",
    ".pre-commit-hooks.yaml",
    "pyproject.toml",
    "README.md",
    "requirements",
    "schema",
    "validator",
)
REGISTRY = ("catalog", "measurers", "recipes", "runs", "boards", "docs", ".github")


def _points_at(clone: Path, tag: str) -> str:
    """The main commit a release tag was cut from (the release commit's only parent)."""
    parents = git(clone, "rev-list", "--parents", "-n", "1", f"{tag}^{{}}").split()[1:]
    assert len(parents) == 1, parents
    return parents[0]


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """The files .ci/release reads, from this repository, in a repository of their own on `main`."""
    root = tmp_path / "clone"
    listed = git(REPO, "ls-files", "--", ".ci/release", *RELEASED, *REGISTRY).splitlines()
    for rel in listed:
        if (REPO / rel).is_file():
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


def test_a_release_holds_the_action_and_the_validator_without_registry_data(clone: Path) -> None:
    _set_version(clone, "0.2.0")
    main = commit_all(clone, "Release v0.2.0")
    assert _release(clone, "0.2.0").returncode == 0
    top = set(git(clone, "ls-tree", "--name-only", "v0.2.0^{tree}").splitlines())
    assert top == set(RELEASED)  # what `uses: …@v0.2` downloads: no recipes, runs, catalog or boards
    assert set(git(clone, "ls-tree", "--name-only", "main^{tree}").splitlines()) >= {"catalog", "recipes", "runs"}
    for rel in RELEASED:  # byte for byte the files of main's release commit
        assert git(clone, "rev-parse", f"v0.2.0:{rel}") == git(clone, "rev-parse", f"{main}:{rel}")
    assert git(clone, "rev-parse", "HEAD") == main and git(clone, "status", "--porcelain") == ""  # main untouched
    # the released tree alone runs: orv laid out from it as its wheel would be (test_gate_model's install)
    export = clone.parent / "export"
    export.mkdir()
    subprocess.run(f"git -C {clone} archive v0.2.0 | tar -x -C {export}", shell=True, check=True, env=git_env(clone))
    bin_dir = install_orv_from(export, clone.parent / "venv")
    done = subprocess.run(
        [str(bin_dir / "python"), "-I", "-m", "validator", "--version"], capture_output=True, text=True
    )
    assert done.returncode == 0 and "0.2.0" in done.stdout, done.stdout + done.stderr


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

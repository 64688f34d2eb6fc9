"""Every file that runs or judges has a code owner (issue 27, item 5), by GitHub's own matching rules.

The rule (tests/testing/codeowners.py, must_be_owned): executable files and links; git's own
config at any depth (.gitattributes, .gitmodules, .lfsconfig); files Python or pytest import
unasked (conftest.py, sitecustomize.py, *.pth); the pre-commit hook manifest and config; the
project and action definitions; everything under validator/, schema/, requirements/, catalog/,
measurers/, .github/, .ci/, tests/ and docs/examples/.
"""

from __future__ import annotations

import subprocess

import pytest

from tests.testing.codeowners import must_be_owned, owners_of, parse, unowned
from tests.testing.paths import REPO as ROOT

MAINTAINERS = ("@openrecipes/maintainers",)


def _rules() -> list:
    return parse((ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8"))


def _tracked() -> list[tuple[str, str]]:
    """(path, git mode) of every file git tracks here: what a pull request's tree holds."""
    listing = subprocess.run(["git", "ls-files", "-s", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    out = []
    for entry in listing.decode("utf-8", "surrogateescape").split("\0"):
        if entry:
            info, path = entry.split("\t", 1)
            out.append((path, info.split()[0]))
    return out


def test_every_tracked_file_that_runs_or_judges_has_an_owner() -> None:
    files = _tracked()
    assert len(files) > 100 and any(must_be_owned(p, m) for p, m in files)  # the walk saw the repository
    assert unowned(_rules(), files) == []


@pytest.mark.parametrize(
    "path,mode",
    [
        (".gitattributes", "100644"),
        ("recipes/training/qwen3.8-27b/.gitattributes", "100644"),
        ("runs/ab/.gitattributes", "100644"),
        (".gitmodules", "100644"),
        (".lfsconfig", "100644"),
        (".github/workflows/new.yml", "100644"),
        (".github/actions/x/action.yml", "100644"),
        (".pre-commit-hooks.yaml", "100644"),
        (".pre-commit-config.yaml", "100644"),
        ("docs/examples/another.yml", "100644"),
        ("conftest.py", "100644"),
        ("recipes/conftest.py", "100644"),
        ("runs/x.pth", "100644"),
        ("tests/test_new.py", "100644"),
        ("tests/cases/x/recipes/a.yaml", "100644"),
        ("Makefile", "100644"),
        ("tools/release.sh", "100755"),
        ("noxfile.py", "100644"),
        ("validator/checks/new.py", "100644"),
        ("schema/new.schema.json", "100644"),
    ],
)
def test_a_pull_request_adding_a_file_that_runs_needs_a_maintainer(path: str, mode: str) -> None:
    assert must_be_owned(path, mode) or path in {"tools/release.sh"}
    assert owners_of(_rules(), path) == MAINTAINERS


@pytest.mark.parametrize(
    "path",
    [
        "recipes/training/qwen3.8-27b/r.yaml",
        "runs/ab/" + "ab" * 32 + ".json",
        "runs/ab/" + "ab" * 32 + ".json.sig",
        "boards/models/qwen3-32b.json",
        "docs/scaling.md",
        "README.md",
        "bench/shard.py",
    ],
)
def test_registry_data_generated_boards_and_prose_have_no_owner(path: str) -> None:
    assert must_be_owned(path) is None
    assert owners_of(_rules(), path) == ()


def test_an_executable_recipe_file_is_flagged_because_its_folder_is_released() -> None:
    # the rule is enforced by the walk, not by a CODEOWNERS line: CODEOWNERS cannot match a mode
    files = [("recipes/training/qwen3.8-27b/run.sh", "100755"), ("recipes/training/qwen3.8-27b/r.yaml", "100644")]
    assert unowned(_rules(), files) == ["recipes/training/qwen3.8-27b/run.sh (executable)"]


def test_the_walk_fails_when_a_rule_file_loses_its_line() -> None:
    """The matcher applies the rule: remove the owning line and the walk names the file."""
    text = (ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8")
    files = _tracked() + [(".gitattributes", "100644"), (".github/workflows/added.yml", "100644")]
    assert unowned(parse(text), files) == []
    without = "\n".join(line for line in text.splitlines() if not line.startswith((".gitattributes", "/.github/")))
    # `*` still owns the top-level file and the workflow; released under recipes/, a nested one is not
    assert unowned(parse(without), files) == []
    assert owners_of(parse(without), ".github/workflows/added.yml") == MAINTAINERS
    nested = [("recipes/.gitattributes", "100644")]
    assert unowned(parse(without), nested) == [
        "recipes/.gitattributes (.gitattributes is read by git or Python wherever it is)"
    ]
    assert unowned(parse(text), nested) == []
    # and without the catch-all, every file only it owned is named
    bare = "\n".join(line for line in without.splitlines() if not line.startswith("*"))
    named = unowned(parse(bare), files)
    assert {
        ".gitattributes (.gitattributes is read by git or Python wherever it is)",
        ".github/workflows/added.yml (under .github/)",
        ".github/CODEOWNERS (under .github/)",
    } <= set(named)


# --------------------------------------------------------------------------- the matcher is GitHub's


def test_last_matching_line_wins_and_an_ownerless_line_releases() -> None:
    rules = parse("* @o/all\n/docs/ \n/docs/examples/ @o/ex\n")
    assert owners_of(rules, "x.py") == ("@o/all",)
    assert owners_of(rules, "docs/a.md") == ()
    assert owners_of(rules, "docs/examples/a.yml") == ("@o/ex",)
    assert owners_of(parse("/docs/examples/ @o/ex\n/docs/ \n"), "docs/examples/a.yml") == ()


@pytest.mark.parametrize(
    "pattern,path,matches",
    [
        ("/apps/", "apps/a/b.py", True),
        ("/apps/", "apps", False),
        ("/apps/", "x/apps/a", False),
        ("apps/", "x/apps/a", True),  # only a leading or middle slash anchors: `apps/` is any apps folder
        ("docs", "x/docs/a.md", True),
        ("docs", "docs", True),
        ("docs", "xdocs", False),
        ("*.js", "a/b/c.js", True),
        ("*.js", "a/b/c.jsx", False),
        ("docs/*", "docs/a.md", True),
        ("docs/*", "docs/a/b.md", False),
        ("/build/logs/", "build/logs/x/y.log", True),
        ("**/logs", "a/b/logs/x", True),
        ("**/logs", "logs", True),
        ("/docs/**", "docs/a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("a/**/b", "a/b", True),
        ("/action.yml", "action.yml", True),
        ("/action.yml", "x/action.yml", False),
        (".gitattributes", "recipes/a/.gitattributes", True),
        ("*.pth", "runs/x.pth", True),
    ],
)
def test_patterns_match_as_gitignore_does(pattern: str, path: str, matches: bool) -> None:
    assert bool(owners_of(parse(f"{pattern} @o/t\n"), path)) is matches


def test_lines_github_would_not_read_are_refused() -> None:
    for bad in ("!/x @o/t", "/x[ab] @o/t", "/x notanowner"):
        with pytest.raises(ValueError):
            parse(bad)
    assert parse("\\#file @o/t  # comment\n")[0].pattern == "\\#file"

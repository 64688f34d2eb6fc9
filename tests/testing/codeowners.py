"""GitHub's CODEOWNERS matching, and the rule for which files must have an owner (tests/e2e/test_codeowners.py).

Matching follows GitHub's documented semantics: gitignore-like patterns (a pattern with a slash at
its start or middle is anchored to the repository root, one without matches at any depth; a
trailing slash matches a directory's contents, `dir/*` only its direct files; `*` stays within one path segment, `**` crosses
them), no `!` negation, and the LAST matching line wins — a line with no owners makes its paths
ownerless again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import PurePosixPath

OWNER = re.compile(r"@[A-Za-z0-9-]+(/[A-Za-z0-9_.-]+)?|[^@\s]+@[^@\s]+")  # @user, @org/team or an e-mail


@dataclass(frozen=True)
class Rule:
    pattern: str
    owners: tuple[str, ...]
    regex: re.Pattern[str]
    line: int


def _translate(pattern: str) -> re.Pattern[str]:
    """The regex of the paths a pattern matches: the file itself or anything below a matched directory."""
    directory_only = pattern.endswith("/")
    body = pattern.strip("/") if pattern != "/" else ""
    anchored = pattern.startswith("/") or "/" in body
    out, i = [], 0
    while i < len(body):
        if body.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif body.startswith("/**", i) and i + 3 == len(body):
            out.append("/.*")
            i += 3
        elif body.startswith("**", i):
            out.append(".*")
            i += 2
        elif body[i] == "*":
            out.append("[^/]*")
            i += 1
        elif body[i] == "?":
            out.append("[^/]")
            i += 1
        elif body[i] == "\\" and i + 1 < len(body):
            out.append(re.escape(body[i + 1]))
            i += 2
        else:
            out.append(re.escape(body[i]))
            i += 1
    prefix = "" if anchored else "(?:[^/]+/)*"
    # a matched name also matches everything below it; `dir/` matches only below it; GitHub's
    # `docs/*` matches docs/a.md but not docs/a/b.md
    below = "/.+" if directory_only else "" if body.endswith("/*") else "(?:/.+)?"
    return re.compile(prefix + "".join(out) + below)


def parse(text: str) -> list[Rule]:
    """CODEOWNERS lines in order; refuses what GitHub would reject or read otherwise (ValueError)."""
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = re.sub(r"(?<!\\)#.*", "", raw).strip()  # `#` starts a comment unless escaped
        if not line:
            continue
        pattern, *owners = line.split()
        if pattern.startswith("!") or "[" in pattern:
            raise ValueError(f"CODEOWNERS line {number}: `{pattern}`: GitHub supports neither `!` nor `[ ]`")
        bad = [o for o in owners if not OWNER.fullmatch(o)]
        if bad:
            raise ValueError(f"CODEOWNERS line {number}: {bad} is not @user, @org/team or an e-mail")
        rules.append(Rule(pattern, tuple(owners), _translate(pattern), number))
    return rules


def owners_of(rules: list[Rule], path: str) -> tuple[str, ...]:
    """The owners GitHub requests for a repository path: the last matching rule's (possibly none)."""
    owners: tuple[str, ...] = ()
    for rule in rules:
        if rule.regex.fullmatch(path):
            owners = rule.owners
    return owners


# --------------------------------------------------------------------------- which files must be owned

# Files that run: read by git on checkout or merge (filters, merge drivers, submodules, LFS
# endpoints), by pre-commit on a contributor's machine, by Python or pytest on import.
RUN_ANYWHERE = {".gitattributes", ".gitmodules", ".lfsconfig", "conftest.py", "sitecustomize.py", "usercustomize.py"}
# Files that run or judge by where they are: the rules and what installs them, the data the rules
# trust, the gate's and the tests' machinery, the tests that judge a change to the rules, and the
# workflows a registry copies from the docs.
RUN_UNDER = (
    "validator/",
    "schema/",
    "requirements/",
    "catalog/",
    "measurers/",
    ".github/",
    ".ci/",
    "tests/",
    "docs/examples/",
)
RUN_AT_TOP = {
    ".pre-commit-hooks.yaml",
    ".pre-commit-config.yaml",
    "action.yml",
    "action.yaml",
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "MANIFEST.in",
    "tox.ini",
    "noxfile.py",
    "Makefile",
}


def must_be_owned(path: str, mode: str = "100644") -> str | None:
    """Why a file (repository path, git mode) changes what the gate, the tests or a hook executes; None if not."""
    name = PurePosixPath(path).name
    if mode == "100755":
        return "executable"
    if mode == "120000":
        return "a symbolic link (it can stand in for any file it names)"
    if name in RUN_ANYWHERE or name.endswith(".pth"):
        return f"{name} is read by git or Python wherever it is"
    if path.startswith(RUN_UNDER):
        return f"under {path.split('/')[0]}/"
    if path in RUN_AT_TOP:
        return "project or action definition"
    return None


def unowned(rules: list[Rule], files: list[tuple[str, str]]) -> list[str]:
    """`path (why)` for each (path, mode) that must have an owner and has none."""
    return [
        f"{path} ({why})" for path, mode in files if (why := must_be_owned(path, mode)) and not owners_of(rules, path)
    ]

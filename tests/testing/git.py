"""Real git for tests, isolated from the user's and the system's configuration (never mocked)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "Contributor",
    "GIT_AUTHOR_EMAIL": "c@example.org",
    "GIT_COMMITTER_NAME": "Contributor",
    "GIT_COMMITTER_EMAIL": "c@example.org",
}


def git_env(home: Path, date: str | None = None) -> dict[str, str]:
    """The environment every test git call runs in: no global or system config, a fixed identity."""
    env = {**os.environ, **IDENTITY, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(home)}
    if date is not None:
        env.update(GIT_AUTHOR_DATE=date, GIT_COMMITTER_DATE=date)
    return env


def git(repo: Path, *args: str, date: str | None = None) -> str:
    done = subprocess.run(["git", *args], cwd=repo, env=git_env(repo, date), check=True, capture_output=True, text=True)
    return done.stdout.strip()


def git_init(repo: Path) -> None:
    git(repo, "init", "-q", "-b", "main")


def commit_all(repo: Path, message: str, date: str | None = None) -> str:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--allow-empty", "-m", message, date=date)
    return git(repo, "rev-parse", "HEAD")

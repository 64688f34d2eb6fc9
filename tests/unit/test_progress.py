"""Progress on long work, as terminals expect it (issue 36 item 5): one helper (validator/cli/progress.py), on stderr,
only on a terminal, never under CI, --quiet or a machine format, and its line always ends before anything else
is printed — tested under a pseudo-terminal, with totals that are not a multiple of the step."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testing.factories import recipe_text, training_recipe_path
from tests.testing.paths import REPO
from tests.testing.registry import make_registry, write
from validator.cli.progress import progress

_CURSOR = re.compile(r"\x1b\[\?25[lh]")


def _terminal_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "GITHUB_ACTIONS")}
    env.update(TERM="xterm", COLUMNS="100", NO_COLOR="1")
    return env


def under_pty(args: list[str], env: dict[str, str], cwd: Path) -> str:
    """What a terminal shows of `args` run with stdout and stderr on one pseudo-terminal."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=env, cwd=cwd)
    os.close(slave)
    text = drain(master)  # EIO once the last holder of the terminal closed it
    proc.wait(timeout=300)
    return text


def drain(master: int) -> str:
    """Everything written to the terminal once its other end is closed."""
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    return b"".join(chunks).decode("utf-8", "replace").replace("\r\n", "\n")


def assert_lines_end(text: str, label: str) -> None:
    """Every line the progress bar drew holds only its frames: nothing else was printed onto it."""
    drawn = [line for line in text.split("\n") if label in line]
    assert drawn, f"no progress line `{label}` in {text!r}"
    for line in drawn:
        last_frame = _CURSOR.sub("", line).split("\r")[-1].strip()
        assert last_frame.startswith(label), f"something was glued to the progress line: {line!r}"


def test_the_line_ends_even_when_the_work_never_reports_its_total(monkeypatch: pytest.MonkeyPatch) -> None:
    """Work that reports every 100 of 253 (as the loader did every 500 of 5,956): leaving the block ends the line."""
    monkeypatch.delenv("CI", raising=False)
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8")
    with progress("loading", stream=stream) as show:
        assert show.enabled
        for done in (100, 200):
            show(done, 253)
    stream.write("orv: 253 files checked, no findings\n")
    stream.close()
    text = drain(master)
    assert "200/253" in text
    assert "\norv: 253 files checked, no findings\n" in text
    assert_lines_end(text, "loading")


def test_reaching_the_total_ends_the_line_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8")
    show = progress("loading", stream=stream)
    show(100, 103)
    show(103, 103)
    stream.write("next\n")
    stream.close()
    text = drain(master)
    assert "103/103" in text and "\nnext\n" in text


@pytest.mark.parametrize("ci, quiet, machine", [("true", False, False), ("", True, False), ("", False, True)])
def test_nothing_is_drawn_under_ci_quiet_or_a_machine_format(
    monkeypatch: pytest.MonkeyPatch, ci: str, quiet: bool, machine: bool
) -> None:
    monkeypatch.setenv("CI", ci) if ci else monkeypatch.delenv("CI", raising=False)
    master, slave = pty.openpty()
    stream = os.fdopen(slave, "w", encoding="utf-8")
    with progress("loading", quiet=quiet, machine=machine, stream=stream) as show:
        show(50, 103)
    stream.write("x\n")
    stream.close()
    assert drain(master) == "x\n"


def test_nothing_is_drawn_off_a_terminal(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("CI", raising=False)
    with open(tmp_path / "log", "w", encoding="utf-8") as stream:
        with progress("loading", stream=stream) as show:
            assert not show.enabled
            show(50, 103)
    assert (tmp_path / "log").read_text(encoding="utf-8") == ""


# --------------------------------------------------------------------------- the commands, under a pseudo-terminal


@pytest.fixture(scope="module")
def small_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = make_registry(tmp_path_factory.mktemp("progress") / "registry")
    for n in range(3):  # 3 recipes, with the catalog: a total no step divides
        rid = f"qwen3-8-27b-h100-tp1-pp4-dp2{'-' + str(n) if n else ''}"
        write(root, training_recipe_path(rid), recipe_text(rid))
    return root


ORV = [sys.executable, "-m", "validator"]


@pytest.mark.parametrize(
    "args, label",
    [
        (["check", "--no-cache"], "orv check: loading"),
        (["boards", "--no-cache"], "orv boards: loading"),  # not a git repository: the error comes after the line
        (["wanted"], "orv wanted: loading"),
    ],
)
def test_each_command_ends_its_line_before_it_prints(small_registry: Path, args: list[str], label: str) -> None:
    text = under_pty([*ORV, *args, "--root", str(small_registry)], _terminal_env(), small_registry)
    assert_lines_end(text, label)
    assert "Traceback" not in text


def test_orv_site_draws_its_line_and_ends_it(tmp_path: Path) -> None:
    text = under_pty(
        [*ORV, "site", str(tmp_path / "site"), "--root", str(REPO)],  # the split boards, assembled
        _terminal_env(),
        tmp_path,
    )
    assert_lines_end(text, "orv site: rendering recipe pages")
    assert re.search(r"\n[^\n]*site: \d[\d,]* files", text)


@pytest.mark.slow
def test_orv_check_under_ci_quiet_or_json_draws_nothing(small_registry: Path) -> None:
    env = _terminal_env()
    for extra, env_ci in (([], {"CI": "true"}), (["--quiet"], {}), (["--format", "json"], {})):
        text = under_pty(
            [*ORV, "check", "--no-cache", "--root", str(small_registry), *extra], {**env, **env_ci}, small_registry
        )
        assert "loading" not in text, (extra, env_ci)

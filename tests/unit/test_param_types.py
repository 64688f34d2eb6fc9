"""cli/param_types.py: --root as given, else the registry found from the command's argument or the current
folder — and found only when the command runs, so options that do not go together are said first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.testing.registry import make_registry
from validator.cli import main
from validator.cli.param_types import Root


@pytest.mark.parametrize(
    "args, said",
    [
        (["check", "--partial-out", "x.partial"], "--partial-out goes with --shard K/N"),
        (["check", "--widen"], "--widen goes with --base"),
        (["check", "--boards", "--base", "main"], "--boards checks main's boards file"),
        (["check", "--shard", "1/2", "recipes"], "PATHS does not go with --shard"),
    ],
)
def test_options_that_do_not_go_together_are_said_before_the_registry_is_looked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    (tmp_path / "recipes").mkdir()  # a folder PATHS can name, in no registry
    monkeypatch.chdir(tmp_path)
    assert main(args) == 2
    err = capsys.readouterr().err
    assert said in err and "Usage: orv check" in err, err
    assert "not inside an OpenRecipes registry" not in err


def test_outside_a_registry_the_command_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["check"]) == 2
    assert "not inside an OpenRecipes registry" in capsys.readouterr().err


def test_a_given_root_is_made_absolute_and_a_missing_one_is_found_from_the_start(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry = make_registry(tmp_path / "registry")
    monkeypatch.chdir(registry / "recipes")
    assert Root("..", ".").path() == str(registry)  # given: as the user wrote it, made absolute
    assert Root(None, ".").path() == str(registry)  # found from the current folder, upwards
    assert Root(None, str(registry / "catalog" / "models.yaml")).path() == str(registry)  # from a file
    monkeypatch.chdir(tmp_path)
    assert Root(None, os.path.join(str(registry), "recipes")).path() == str(registry)  # from an argument

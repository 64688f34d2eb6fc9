"""`orv --help` and `orv new --help` as a newcomer reads them (issue 29): whole summaries, every option explained."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from validator.cli import main
from validator.cli.app import SUMMARIES, cli


def _commands(group: click.Group, prefix: str = "") -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for name, command in group.commands.items():
        found[prefix + name] = command
        if isinstance(command, click.Group):
            found.update(_commands(command, f"{prefix}{name} "))
    return found


def test_every_command_has_a_summary_and_help_shows_it_whole_on_80_columns() -> None:
    commands = _commands(cli)
    assert set(commands) == set(SUMMARIES)
    for group in [[]] + [[name] for name, c in commands.items() if isinstance(c, click.Group)]:
        result = CliRunner().invoke(cli, [*group, "--help"], terminal_width=80)
        assert result.exit_code == 0
        listed = result.output.split("Commands:\n")[1]
        for name in commands:
            words = name.split(" ")
            if words[:-1] != group:
                continue
            line = next(line for line in listed.splitlines() if line.strip().startswith(words[-1] + " "))
            assert line.split(None, 1)[1] == SUMMARIES[name], line  # whole: not cut, not wrapped
            assert "..." not in line and len(line) <= 80
            assert SUMMARIES[name].count("(") == SUMMARIES[name].count(")")


def test_every_option_of_orv_new_has_help_text() -> None:
    new = cli.commands["new"]
    options = [p for p in new.params if isinstance(p, click.Option)]
    assert {"--vpp", "--cp", "--ep", "--etp"} <= {o.opts[0] for o in options}
    for option in options:
        assert option.help and len(option.help) > 10, option.opts
    text = CliRunner().invoke(cli, ["new", "--help"], terminal_width=100).output
    for flag in ("--vpp", "--cp", "--ep", "--etp"):
        line = next(line for line in text.splitlines() if line.strip().startswith(flag + " "))
        assert "Training:" in line, line


def test_orv606s_explanation_its_hint_and_contributing_md_agree_on_a_new_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A new model or GPU for the recipe goes in the recipe's pull request; a change to an existing entry in its
    own: `orv explain ORV606`, the finding's hint and docs/contributing.md say the same (issue 52)."""
    from tests.testing.paths import REPO
    from validator.checks.pr import _review_reason
    from validator.git.diff import FileChange

    assert main(["explain", "ORV606"]) == 0
    explained = " ".join(capsys.readouterr().out.split())
    assert "a new model or GPU that this pull request's recipe needs belongs in the same pull request" in explained
    assert "a change to an existing catalog entry" in explained and "belongs in a pull request of its own" in explained
    _, hint = _review_reason(FileChange("catalog/models.yaml", "M", 0o100644, 0o100644), "main")
    assert "a new model or GPU for this pull request's recipe belongs here" in hint
    assert "a change to an existing entry, in a pull request of its own" in hint
    guide = " ".join((REPO / "docs" / "contributing.md").read_text(encoding="utf-8").split())
    assert "Appending a model or GPU for your recipe belongs in the recipe's pull request" in guide
    assert "changing an existing entry" in guide and "belongs in a pull request of its own" in guide

"""`orv --help` and `orv new --help` as a newcomer reads them (issue 29): whole summaries, every option explained."""

from __future__ import annotations

import click
from click.testing import CliRunner

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

"""Options several commands share, declared once so they cannot drift apart (`check` and `merge-results`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

FORMAT = click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "json", "github", "sarif"]),
    default=None,
    help="Output format (default: text; github when GITHUB_ACTIONS=true).",
)
WAIVE = click.option("--waive", multiple=True, metavar="CODE", help="Waive one rule for this run (maintainers only).")
SUMMARY = click.option(
    "--summary",
    "summary_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Append a Markdown report (findings, waivers, board changes) to FILE, e.g. $GITHUB_STEP_SUMMARY.",
)
OUTPUTS = click.option(
    "--github-output",
    "outputs_file",
    type=click.Path(dir_okay=False),
    default=None,
    help="Append name=value outputs (errors, warnings, tiers of new entries) to FILE, e.g. $GITHUB_OUTPUT.",
)
BOARDS = click.option(
    "--boards",
    "with_boards",
    is_flag=True,
    help="Also compare boards/ with a fresh regeneration (ORV7xx). Main's business: "
    "the boards workflow runs it; a contributor's branch never needs it.",
)


def jobs(what: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """-j/--jobs: how many processes do `what` (`check`, `merge-results`, `boards`)."""
    return click.option(
        "--jobs", "-j", type=click.IntRange(min=1), default=None, help=f"Processes for {what} (default: usable cores)."
    )


def split(
    flag: str, dest: str, help: str, out: str, out_help: str
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A K/N option (`--shard` of `check`, `--judge` of `merge-results`) and the file it writes to."""
    spec = click.option(flag, dest, metavar="K/N", default=None, help=help)
    written = click.option(out, type=click.Path(dir_okay=False), default=None, help=out_help)
    return lambda command: spec(written(command))


_DISPLAY = (
    click.option(
        "--severity",
        "least",
        type=click.Choice(["error", "warning", "notice"]),
        default="notice",
        show_default=True,
        help="Show findings of this severity and above (the exit status still counts every error).",
    ),
    click.option("--quiet", "-q", is_flag=True, help="Print errors and the summary line only."),
    click.option(
        "--statistics", is_flag=True, help="Print one line per code (count, severity, title) instead of each finding."
    ),
    click.option(
        "--show-all",
        is_flag=True,
        help="List every finding on legacy-imported entries (default: one line per code with the count).",
    ),
    click.option(
        "--color",
        "color_choice",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        help="Colour the text output. auto: on a terminal, unless NO_COLOR is set; FORCE_COLOR forces it.",
    ),
)


def display_options(func: Callable[..., Any]) -> Callable[..., Any]:
    """--severity, --quiet, --statistics, --show-all, --color: how findings are shown."""
    for option in reversed(_DISPLAY):
        func = option(func)
    return func

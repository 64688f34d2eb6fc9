"""cli/error_handler.py: the one mapping of how a command ended to an exit code and what stderr says."""

from __future__ import annotations

import errno

import click
import pytest

from validator.cli.error_handler import INTERRUPTED, run
from validator.diagnostics import Diagnostic, Result, Severity
from validator.errors import AdapterError, ExitCode, GitError, HistoryError, Refusal, UsageError


def group_raising(exc: BaseException) -> click.Group:
    @click.group()
    def cli() -> None:
        pass

    @cli.command("go")
    def go() -> None:
        raise exc

    return cli


FINDING = Diagnostic("ORV201", Severity.ERROR, "runs/ab/x.json", 3, 7, "the name is not the hash", "rename it")


@pytest.mark.parametrize(
    "exc, code, said",
    [
        (UsageError("no such ref"), ExitCode.USAGE, "orv: no such ref\n"),
        (GitError("no merge base"), ExitCode.USAGE, "orv: no merge base\n"),
        (
            HistoryError("this clone is shallow", "fetch the history"),
            ExitCode.USAGE,
            "orv: this clone is shallow\n    hint: fetch the history\n",
        ),
        (
            Refusal("cannot read the boards", "run `orv boards`", ExitCode.FINDINGS),
            ExitCode.FINDINGS,
            "orv: cannot read the boards\n    hint: run `orv boards`\n",
        ),
        # Click ends the line a Ctrl-C interrupted before it hands the interruption on
        (KeyboardInterrupt(), ExitCode.INTERRUPTED, "\n" + INTERRUPTED + "\n"),
    ],
)
def test_each_ending_has_its_exit_code_and_words(
    exc: BaseException, code: int, said: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(group_raising(exc), ["go"]) == code
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("", said)


def test_findings_that_stop_a_command_are_printed_with_their_place(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(group_raising(AdapterError([FINDING])), ["go"]) == ExitCode.FINDINGS
    err = capsys.readouterr().err
    assert "runs/ab/x.json:3:7" in err and "ORV201" in err and "rename it" in err


def test_a_full_disk_is_the_machines_condition_not_a_bug(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(group_raising(OSError(errno.ENOSPC, "No space left on device")), ["go"]) == ExitCode.FINDINGS
    err = capsys.readouterr().err
    assert "internal error" not in err and "Traceback" not in err


def test_a_bug_is_one_line_naming_the_error_never_a_traceback(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ORV_DEBUG", raising=False)
    assert run(group_raising(KeyError("missing")), ["go"]) == ExitCode.USAGE
    err = capsys.readouterr().err
    assert err.startswith("orv: internal error: KeyError: 'missing'") and "Traceback" not in err


def test_click_usage_errors_show_the_usage_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(group_raising(UsageError("x")), ["nonsense"]) == ExitCode.USAGE
    assert "No such command 'nonsense'" in capsys.readouterr().err


def test_a_command_that_exits_keeps_its_code() -> None:
    assert run(group_raising(SystemExit(1)), ["go"]) == 1
    assert run(group_raising(SystemExit(None)), ["go"]) == ExitCode.OK
    assert Result((FINDING,)).exit_code == ExitCode.FINDINGS

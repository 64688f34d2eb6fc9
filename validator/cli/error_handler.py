"""The one place that maps how a command ended to an exit code and a message: never a traceback for the user."""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence

import click

from validator.diagnostics import Result
from validator.errors import ExitCode, FindingError, Refusal

INTERRUPTED = "orv: interrupted (files orv writes are whole: each is old or new; rerun to finish)"


def run(group: click.Group, argv: Sequence[str] | None) -> int:
    """Run the Click group; every outcome becomes an exit code (ExitCode), and every error one message."""
    try:
        group.main(args=list(argv) if argv is not None else None, prog_name="orv", standalone_mode=False)
        return ExitCode.OK
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else ExitCode.USAGE
    except click.exceptions.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # Ctrl-C: every write is whole (docs/durability.md)
            click.echo(INTERRUPTED, err=True)
            return ExitCode.INTERRUPTED
        click.echo("orv: aborted", err=True)
        return ExitCode.USAGE
    except KeyboardInterrupt:
        click.echo(INTERRUPTED, err=True)
        return ExitCode.INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return ExitCode.USAGE
    except Refusal as exc:
        click.echo(exc.words(), err=True)
        return exc.exit_code
    except FindingError as exc:
        write_findings(exc.result)
        return exc.exit_code
    except Exception as exc:  # noqa: BLE001 - internal error: exit 2 with a short report, not a traceback
        from validator.files.atomic import environment_problem

        problem = environment_problem(exc)
        if problem is not None:  # a full disk or a read-only folder is the machine's condition, not a bug
            click.echo(problem, err=True)
            return ExitCode.FINDINGS
        click.echo(internal_error_message(exc), err=True)
        if os.environ.get("ORV_DEBUG"):
            click.echo(traceback.format_exc().rstrip(), err=True)
        return ExitCode.USAGE


def write_findings(result: Result) -> None:
    """Findings that stopped a command, as text on standard error (the one way the CLI shows them)."""
    from validator.report import REPORTER_BY_NAME  # lazily: `orv --help` loads no check

    click.echo(REPORTER_BY_NAME["text"](result), nl=False, err=True)


def internal_error_message(exc: BaseException) -> str:
    """One report line for a bug: the exception's type and text, and the innermost orv frame
    (file:line in function), which is what a maintainer needs to find it; ORV_DEBUG=1 adds the rest."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if "/validator/" in f.filename.replace(os.sep, "/")]
    where = ""
    if frames:
        f = frames[-1]
        rel = f.filename.replace(os.sep, "/").rsplit("/validator/", 1)[1]
        where = f" at validator/{rel}:{f.lineno} in {f.name}()"
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return (
        f"orv: internal error: {type(exc).__name__}{': ' + text if text else ''}{where}\n"
        "(this is a bug in orv, not in your files; please report it with this message — "
        "ORV_DEBUG=1 prints the full traceback)"
    )

"""Click only: parse options -> config -> engine -> render -> exit code. Nothing else lives here."""

from __future__ import annotations

import os
import sys
import traceback
from typing import Sequence

import click

from validator import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE = 0, 1, 2


def _default_format() -> str:
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="orv")
def cli() -> None:
    """orv — the OpenRecipes validator."""


@cli.command("check")
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--base", metavar="REF", help="Apply the pull-request rules against the merge base with REF.")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github", "sarif"]), default=None,
              help="Output format (default: text; github when GITHUB_ACTIONS=true).")
@click.option("--waive", multiple=True, metavar="CODE", help="Waive one rule for this run (maintainers only).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from PATHS or the current folder).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes for loading files (default: usable cores).")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="Reuse results for files git reports unchanged (kept in the .git folder).")
@click.option("--summary", "summary_file", type=click.Path(dir_okay=False), default=None,
              help="Append a Markdown report (findings, waivers, board changes) to FILE, e.g. $GITHUB_STEP_SUMMARY.")
@click.option("--github-output", "outputs_file", type=click.Path(dir_okay=False), default=None,
              help="Append name=value outputs (errors, warnings, tiers of new entries) to FILE, e.g. $GITHUB_OUTPUT.")
def check_cmd(paths: tuple[str, ...], base: str | None, fmt: str | None, waive: tuple[str, ...],
              root: str | None, jobs: int | None, cache: bool, summary_file: str | None,
              outputs_file: str | None) -> None:
    """Check the registry; report findings in PATHS (default: everything)."""
    from validator.engine import Config, default_jobs, evaluate, find_root
    from validator.report import REPORTER_BY_NAME

    root = os.path.abspath(root) if root else find_root(paths[0] if paths else ".")
    rel_paths = tuple(_relative(root, p) for p in paths)
    reports = summary_file is not None or outputs_file is not None
    evaluation = evaluate(Config(root=root, paths=tuple(p for p in rel_paths if p), base=base,
                                 waive=tuple(w.upper() for w in waive),
                                 jobs=jobs or default_jobs(), progress=_progress_printer(), cache=cache,
                                 neighbourhood=not reports))  # the board delta needs every recipe
    if reports:
        from validator.report import summary

        report = summary.build(evaluation)
        if summary_file is not None:
            _append(summary_file, summary.render_markdown(report))
        if outputs_file is not None:
            _append(outputs_file, summary.render_outputs(report))
    click.echo(REPORTER_BY_NAME[fmt or _default_format()](evaluation.result), nl=False)
    sys.exit(evaluation.result.exit_code)


def _append(path: str, text: str) -> None:
    """Append to a file another process also writes (GitHub's step files): never replace it."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _progress_printer():  # type: ignore[no-untyped-def]
    """A progress line on stderr, only when a person is watching a terminal."""
    if not sys.stderr.isatty() or os.environ.get("CI"):
        return None

    def show(done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        click.echo(f"\rorv: loaded {done:,}/{total:,} files", err=True, nl=False)
        if end:
            click.echo("", err=True)

    return show


def _relative(root: str, path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel.startswith(".."):
        raise click.UsageError(f"{path} is outside the registry at {root}")
    return "" if rel == "." else rel


@cli.command("hash")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
def hash_cmd(file: str) -> None:
    """Print the content address (sha256:<hex>) of FILE's exact bytes.

    For a JSON file that is not in canonical form, also say (on stderr) under which address
    `orv add-run` would store it.
    """
    from validator.hashing import canonical_bytes, content_address, is_canonical
    from validator.loading import LoadError, decode_utf8, parse_json

    with open(file, "rb") as fh:
        raw = fh.read()
    click.echo(f"sha256:{content_address(raw)}")
    if file.endswith(".json"):
        try:
            data = parse_json(raw, decode_utf8(raw))
        except LoadError:
            return
        if not is_canonical(raw, data):
            click.echo(f"note: not canonical JSON; `orv add-run` stores it as "
                       f"sha256:{content_address(canonical_bytes(data))}", err=True)


_ADAPTER_FORMATS = ("megatron", "nemo", "sglang", "vllm")  # validator.adapters.ADAPTER_BY_NAME, imported lazily


@cli.command("add-run")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, allow_dash=True))
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
@click.option("--from", "fmt", type=click.Choice(_ADAPTER_FORMATS), default=None,
              help="FILE is this tool's own output (Megatron-LM/NeMo log, vLLM result JSON, SGLang JSONL), "
                   "not a run document.")
@click.option("--recipe", "recipe_path", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Take model, hardware, software, layout/serving, author and date from this recipe.")
@click.option("--model", default=None, help="Catalog model id (overrides the recipe).")
@click.option("--gpu", default=None, help="Catalog GPU id (overrides the recipe).")
@click.option("--gpus", type=click.IntRange(min=1), default=None, help="GPU count (overrides the recipe).")
@click.option("--workload", default=None, help="Catalog workload id, for training (overrides the recipe).")
@click.option("--quant", default=None, help="Quantization id, for inference (overrides the recipe).")
@click.option("--measured-by", default=None, help="Who ran the benchmark (default: the recipe's author).")
@click.option("--measured-at", default=None, help="When, if the output does not say (ISO date or time).")
@click.option("--tool-version", default=None, help="Exact version of the benchmark tool.")
@click.option("--tool-commit", default=None, help="Commit of the benchmark tool, if built from source.")
@click.option("--record", type=click.IntRange(min=1), default=None,
              help="Which result of a file holding several (JSON lines), counting from 1.")
def add_run_cmd(file: str, root: str | None, fmt: str | None, recipe_path: str | None, **flags: object) -> None:
    """Store a run file under runs/ and print its sha256: reference.

    FILE is a run document (JSON, any key order or spacing), or with --from a benchmark tool's own
    output, converted to a run document (docs/metrics.md says how figures are recomputed).
    """
    from validator.engine import find_root
    from validator.report import REPORTER_BY_NAME
    from validator.storing import AddRunError, add_run, store_run_document

    root = os.path.abspath(root) if root else find_root(".")
    raw = sys.stdin.buffer.read() if file == "-" else open(file, "rb").read()
    given = {k: v for k, v in flags.items() if v is not None}
    if fmt is None and (given or recipe_path):
        raise click.UsageError("metadata options (--recipe, --model, ...) need --from FORMAT")
    try:
        if fmt is None:
            stored = add_run(root, raw, source_name=file)
        else:
            from validator.adapters import AdapterError, Source, convert, metadata

            try:
                meta = metadata(fmt, root, recipe_path, given)
                converted = convert(fmt, Source(file, raw), meta)
            except AdapterError as exc:
                raise AddRunError(exc.result) from None
            for note in converted.notes:
                click.echo(f"note: {note}", err=True)
            stored = store_run_document(root, converted.document)
    except AddRunError as exc:
        click.echo(REPORTER_BY_NAME["text"](exc.result), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    click.echo(f"sha256:{stored.digest}")
    click.echo(f"{'stored' if stored.created else 'already stored'}: {stored.path}", err=True)


@cli.command("explain")
@click.argument("code")
def explain_cmd(code: str) -> None:
    """Print the documentation of check CODE (e.g. ORV501), or list every code with `all`."""
    from validator.checks import all_checks

    checks = all_checks()
    if code.lower() == "all":
        for c in checks.values():
            click.echo(f"{c.code}  {c.severity.value:<7}  {c.title}")
        return
    entry = checks.get(code.upper())
    if entry is None:
        raise click.UsageError(f"unknown check code {code!r}; `orv explain all` lists them")
    click.echo(f"{entry.code} ({entry.severity.value}): {entry.title}\n\n{entry.doc}")


@cli.command("boards")
@click.option("--check", "check_only", is_flag=True,
              help="Write nothing; exit 1 if boards/boards.json differs from a fresh regeneration.")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
def boards_cmd(check_only: bool, root: str | None) -> None:
    """Regenerate boards/boards.json (tiers derived from the evidence on record), or --check it."""
    from validator.checks.boards import BoardsError, first_difference, read_committed, regenerate
    from validator.diagnostics import Severity
    from validator.engine import analyse, find_root
    from validator.registry import BOARDS_PATH
    from validator.storing import write_atomic

    root = os.path.abspath(root) if root else find_root(".")
    analysis = analyse(root)
    try:
        fresh = regenerate(analysis)
    except BoardsError as exc:
        click.echo(f"orv: {exc.message}\n    hint: {exc.hint}", err=True)
        sys.exit(EXIT_USAGE)
    committed = read_committed(root)
    if check_only:
        if committed is None:
            click.echo(f"{BOARDS_PATH} is missing; run `orv boards`")
            sys.exit(EXIT_FINDINGS)
        diff = first_difference(committed, fresh)
        if diff is not None:
            click.echo(f"{BOARDS_PATH}:{diff[0]}: out of date (committed `{diff[1]}`, regenerated `{diff[2]}`); "
                       "run `orv boards`")
            sys.exit(EXIT_FINDINGS)
        click.echo(f"{BOARDS_PATH} is up to date")
        return
    errors = sum(1 for d in analysis.diagnostics if d.severity is Severity.ERROR)
    if errors:
        click.echo(f"orv: note: the registry has {errors} error(s) (`orv check` lists them); "
                   "recipes that fail their schema are left off the boards", err=True)
    if committed != fresh:
        write_atomic(os.path.join(root, BOARDS_PATH), fresh)
    click.echo(f"{BOARDS_PATH} {'written' if committed != fresh else 'unchanged'}")


@cli.command("site")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--boards", "boards_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The boards document to render (default: boards/boards.json of the registry).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root, for loss curves and catalog order (default: found from the current folder).")
def site_cmd(directory: str, boards_file: str | None, root: str | None) -> None:
    """Render the boards as a static website into DIRECTORY (replaced atomically; docs/site.md)."""
    import orjson

    from validator.site import SiteContext, SiteError, boards_problem, render_site, write_site
    from validator.site.collect import collect_context

    if root is None and boards_file is None:
        from validator.engine import find_root

        root = find_root(".")
    path = boards_file or os.path.join(root, "boards", "boards.json")  # type: ignore[arg-type]
    try:
        with open(path, "rb") as fh:
            boards = orjson.loads(fh.read())
    except (OSError, orjson.JSONDecodeError) as exc:
        click.echo(f"orv: cannot read {path}: {exc}\n    hint: run `orv boards` first, or pass --boards FILE",
                   err=True)
        sys.exit(EXIT_USAGE)
    problem = boards_problem(boards)
    if problem is not None:
        click.echo(f"orv: {path} is not a boards document this orv can render ({problem})\n"
                   "    hint: regenerate it with this version's `orv boards`", err=True)
        sys.exit(EXIT_USAGE)
    context = collect_context(os.path.abspath(root), boards) if root else SiteContext()
    files = render_site(boards, context)
    try:
        write_site(directory, files)
    except (SiteError, OSError) as exc:
        click.echo(f"orv: {exc}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(f"{directory}: {len(files):,} files, {sum(map(len, files.values())):,} bytes")


@cli.group("import")
def import_group() -> None:
    """Import a legacy source: recipes and run files into the registry, and an import report."""


_REPORT_HELP = ("Where to save the Markdown report (a .json twin is written beside it); "
                "default: docs/import-report-<command>.md in the registry.")


def _import_command(name: str, doc: str) -> None:
    """Register `orv import NAME FILE [--root] [--report]`: every legacy source takes the same options."""

    @import_group.command(name, help=doc)
    @click.argument("file", type=click.Path(exists=True, dir_okay=False))
    @click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
                  help="Registry root (default: found from the current folder).")
    @click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, help=_REPORT_HELP)
    def command(file: str, root: str | None, report_path: str | None) -> None:
        _run_import(name, file, root, report_path)


_import_command("leaderboard", "Seed 000's training leaderboard (FILE) -> training recipes and "
                               "catalog/starting-points.yaml.")
_import_command("legacy-boards", "Seed 004's tier-boards JSON export (FILE) -> inference recipes and run files.")


def _run_import(command: str, file: str, root: str | None, report_path: str | None) -> None:
    from validator.diagnostics import Diagnostic, Result, Severity
    from validator.engine import find_root
    from validator.importers import execute
    from validator.importers.common import ImportInputError
    from validator.importers.report import render_summary
    from validator.report import REPORTER_BY_NAME

    root = os.path.abspath(root) if root else find_root(".")
    try:
        report, saved = execute(command, root, file, report_path)
    except ImportInputError as exc:
        finding = Diagnostic(exc.code, Severity.ERROR, exc.path, exc.line, exc.col, exc.message, exc.hint)
        click.echo(REPORTER_BY_NAME["text"](Result((finding,))), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    click.echo(render_summary(report, os.path.relpath(saved)), nl=False)
    sys.exit(EXIT_FINDINGS if report.conflicts else EXIT_OK)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: map every outcome to an exit code; never let a traceback reach the user."""
    from validator.engine import UsageError

    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="orv", standalone_mode=False)
        return EXIT_OK
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    except click.exceptions.Abort:
        click.echo("orv: aborted", err=True)
        return EXIT_USAGE
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except UsageError as exc:
        click.echo(f"orv: {exc}", err=True)
        return EXIT_USAGE
    except Exception:  # noqa: BLE001 - internal error: exit 2 with a short report, not a traceback
        lines = traceback.format_exc().strip().splitlines()
        click.echo(f"orv: internal error: {lines[-1]}\n(this is a bug in orv; please report it)", err=True)
        if os.environ.get("ORV_DEBUG"):
            click.echo("\n".join(lines), err=True)
        return EXIT_USAGE

"""Click only: parse options -> config -> engine -> render -> exit code. Nothing else lives here."""

from __future__ import annotations

import inspect
import os
import sys
import traceback
from typing import Any, Sequence

import click

from validator import __version__

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
EXIT_CODES_HELP = ("\b\nExit status:\n  0  no errors (warnings and notices allowed)\n  1  errors found (or the command "
                   "failed its task: a full disk, a read-only folder)\n  2  usage error, or an internal error of orv\n"
                   "  130  interrupted (Ctrl-C); every file orv writes is old or new")


def _default_format() -> str:
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="orv")
def cli() -> None:
    """orv — the OpenRecipes validator."""


# Options `orv check` and `orv merge-results` share: one declaration each, so they cannot drift apart.
_FORMAT = click.option("--format", "fmt", type=click.Choice(["text", "json", "github", "sarif"]), default=None,
                       help="Output format (default: text; github when GITHUB_ACTIONS=true).")
_WAIVE = click.option("--waive", multiple=True, metavar="CODE", help="Waive one rule for this run (maintainers only).")
_ROOT = click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
                     help="Registry root (default: found from PATHS or the current folder).")
_SUMMARY = click.option("--summary", "summary_file", type=click.Path(dir_okay=False), default=None,
                        help="Append a Markdown report (findings, waivers, board changes) to FILE, e.g. "
                             "$GITHUB_STEP_SUMMARY.")
_OUTPUTS = click.option("--github-output", "outputs_file", type=click.Path(dir_okay=False), default=None,
                        help="Append name=value outputs (errors, warnings, tiers of new entries) to FILE, e.g. "
                             "$GITHUB_OUTPUT.")
_BOARDS = click.option("--boards", "with_boards", is_flag=True,
                       help="Also compare boards/ with a fresh regeneration (ORV7xx). Main's business: "
                            "the boards workflow runs it; a contributor's branch never needs it.")
_DISPLAY = (
    click.option("--severity", "least", type=click.Choice(["error", "warning", "notice"]), default="notice",
                 show_default=True, help="Show findings of this severity and above (the exit status still counts "
                                         "every error)."),
    click.option("--quiet", "-q", is_flag=True, help="Print errors and the summary line only."),
    click.option("--statistics", is_flag=True, help="Print one line per code (count, severity, title) instead of "
                                                    "each finding."),
    click.option("--show-all", is_flag=True,
                 help="List every finding on legacy-imported entries (default: one line per code with the count)."),
    click.option("--color", "color_choice", type=click.Choice(["auto", "always", "never"]), default="auto",
                 show_default=True, help="Colour the text output. auto: on a terminal, unless NO_COLOR is set; "
                                         "FORCE_COLOR forces it."),
)


def _display_options(func: Any) -> Any:
    for option in reversed(_DISPLAY):
        func = option(func)
    return func


@cli.command("check", epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--base", metavar="REF", help="Apply the pull-request rules against the merge base with REF.")
@_FORMAT
@_WAIVE
@_ROOT
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes for loading files (default: usable cores).")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="Reuse results for files git reports unchanged (kept in the .git folder).")
@_SUMMARY
@_OUTPUTS
@_BOARDS
@_display_options
@click.option("--shard", "shard_spec", metavar="K/N", default=None,
              help="Load only shard K of N of the recipes and run files and write their results to "
                   "--partial-out; `orv merge-results` checks the rest and reports (docs/scaling.md).")
@click.option("--partial-out", type=click.Path(dir_okay=False), default=None,
              help="With --shard: where to write the partial result (default: ./orv-shard-K-of-N.partial).")
@click.option("--widen", is_flag=True, default=False,
              help="With --base in a sparse checkout: when the change needs every file (it touches catalog/, "
                   "measurers/ or a submodule), check them all out instead of refusing (a partial clone "
                   "downloads them). The pull-request gate passes it.")
def check_cmd(paths: tuple[str, ...], base: str | None, fmt: str | None, waive: tuple[str, ...],
              root: str | None, jobs: int | None, cache: bool, summary_file: str | None,
              outputs_file: str | None, with_boards: bool, least: str, quiet: bool, statistics: bool,
              show_all: bool, color_choice: str, shard_spec: str | None, partial_out: str | None,
              widen: bool) -> None:
    """Check the registry; report findings in PATHS (default: everything).

    Plain `orv check` is clean when the change is acceptable as a pull request; stale boards are
    main's business (--boards). Findings on legacy-imported entries are counted by code unless
    --show-all is given; the summary line says how many findings each option left out.
    """
    from validator.engine.evaluate import Config, evaluate, find_root
    from validator.load.pipeline import default_jobs

    if shard_spec is not None:
        _check_shard(shard_spec, partial_out, root, jobs)
        return
    if partial_out is not None:
        raise click.UsageError("--partial-out goes with --shard K/N")
    if with_boards and base is not None:
        raise click.UsageError("--boards checks main's boards file; a pull request (--base) never changes it")
    if widen and base is None:
        raise click.UsageError("--widen goes with --base (a check of the whole registry needs a whole checkout)")
    root = os.path.abspath(root) if root else find_root(paths[0] if paths else ".")
    rel_paths = tuple(_relative(root, p) for p in paths)
    with _progress("orv check: loading", quiet, fmt) as show:
        evaluation = evaluate(Config(root=root, paths=tuple(p for p in rel_paths if p), base=base,
                                     waive=tuple(w.upper() for w in waive), skip_boards=not with_boards,
                                     jobs=jobs or default_jobs(), progress=show, cache=cache, widen=widen))
    _report(evaluation, fmt, summary_file, outputs_file, least, quiet, statistics, show_all, color_choice)


def _report(evaluation: Any, fmt: str | None, summary_file: str | None, outputs_file: str | None, least: str,
            quiet: bool, statistics: bool, show_all: bool, color_choice: str) -> None:
    """Print an Evaluation as asked (and append the job summary and outputs), then exit with its status."""
    from validator.checks import all_checks
    from validator.diagnostics import Result, Severity
    from validator.registry.snapshot import imported_paths
    from validator.report import REPORTER_BY_NAME
    from validator.report.text import TextOptions, render_with

    if summary_file is not None or outputs_file is not None:
        from validator.report import summary

        report = summary.build(evaluation)
        if summary_file is not None:
            _append(summary_file, summary.render_markdown(report))
        if outputs_file is not None:
            _append(outputs_file, summary.render_outputs(report))
    result = evaluation.result
    threshold = Severity.ERROR if quiet else Severity(least)
    if (fmt or _default_format()) == "text":
        color = _use_color(color_choice)
        options = TextOptions(color=color, quiet=quiet, statistics=statistics, least=threshold,
                              collapse=not show_all, legacy=imported_paths(evaluation.snapshot),
                              titles={code: entry.title for code, entry in all_checks().items()})
        click.echo(render_with(result, options), nl=False, color=color)
    else:
        shown = Result(tuple(d for d in result.diagnostics if d.severity.rank <= threshold.rank),
                       result.files_checked, result.notes)
        click.echo(REPORTER_BY_NAME[fmt or _default_format()](shown), nl=False)
    sys.exit(result.exit_code)


# What a shard never takes: it reports nothing (the merge does) and checks the whole tree.
_MERGE_ONLY = ("paths", "base", "fmt", "waive", "summary_file", "outputs_file", "with_boards", "least", "quiet",
               "statistics", "show_all", "color_choice")


def _check_shard(spec: str, partial_out: str | None, root: str | None, jobs: int | None) -> None:
    from click.core import ParameterSource

    from validator.engine.evaluate import find_root
    from validator.load.pipeline import default_jobs
    from validator.registry.layout import REGISTRY_DIRS
    from validator.engine.shard import check_shard, default_partial_path, parse_shard

    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name in _MERGE_ONLY and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE:
            what = "PATHS" if param.name == "paths" else param.opts[0]
            raise click.UsageError(f"{what} does not go with --shard: a shard checks every file of its part and "
                                   "reports nothing; give the reporting options to `orv merge-results`")
    shard = parse_shard(spec)
    root = os.path.abspath(root) if root else find_root(".")
    out = os.path.abspath(partial_out or default_partial_path(shard))
    # resolved, so a symlinked folder (`lnk -> recipes`) cannot put the partial inside the tree
    inside = os.path.relpath(os.path.realpath(out), os.path.realpath(root)).replace(os.sep, "/")
    if inside.split("/")[0] in REGISTRY_DIRS:
        raise click.UsageError(f"--partial-out {partial_out or out}: inside the registry's {inside.split('/')[0]}/ "
                               "folder, it would become part of the tree being checked; write it elsewhere")
    try:
        with _progress(f"orv check --shard {shard}: loading") as show:
            written = check_shard(root, shard, out, jobs or default_jobs(), show)
    except OSError as exc:
        raise click.UsageError(f"--partial-out {out}: cannot write: {exc.strerror}") from None
    click.echo(f"orv: shard {shard}: {written.files:,} recipe and run files loaded, {written.findings:,} finding(s) "
               f"among them; partial result written to {written.path} ({written.size:,} bytes). "
               "`orv merge-results` checks the rest and reports.")


@cli.command("merge-results", epilog=EXIT_CODES_HELP)
@click.argument("partials", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@_FORMAT
@_WAIVE
@_ROOT
@_SUMMARY
@_OUTPUTS
@_BOARDS
@_display_options
def merge_results_cmd(partials: tuple[str, ...], fmt: str | None, waive: tuple[str, ...], root: str | None,
                      summary_file: str | None, outputs_file: str | None, with_boards: bool, least: str,
                      quiet: bool, statistics: bool, show_all: bool, color_choice: str) -> None:
    """Combine the partial results of `orv check --shard K/N` (every K of one N) and report once.

    Refuses partials from another orv, another registry tree or an incomplete set (exit 2). Loads the
    catalog, runs the registry checks (ids, identities, references, tiers; the boards with --boards)
    on the merged results and reports exactly as `orv check` on one machine would (docs/scaling.md).
    """
    from validator.diagnostics import Result
    from validator.engine.evaluate import Config, evaluate_loaded, find_root
    from validator.report import REPORTER_BY_NAME
    from validator.engine.shard import PartialRefused, merge

    root = os.path.abspath(root) if root else find_root(".")
    with _progress("orv merge-results: reading partials", quiet, fmt) as show:
        try:
            loaded = merge(root, partials, show)
        except PartialRefused as exc:  # a finding on the partial (ORV901); nothing else can be reported
            click.echo(REPORTER_BY_NAME["text"](Result((exc.finding,))), nl=False, err=True)
            sys.exit(EXIT_USAGE)
    evaluation = evaluate_loaded(Config(root=root, waive=tuple(w.upper() for w in waive),
                                        skip_boards=not with_boards), loaded)
    _report(evaluation, fmt, summary_file, outputs_file, least, quiet, statistics, show_all, color_choice)


def _use_color(choice: str) -> bool:
    """--color, then NO_COLOR (no-color.org), then FORCE_COLOR (force-color.org), then a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _append(path: str, text: str) -> None:
    """Append to a file another process also writes (GitHub's step files): never replace it."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


def _progress(label: str, quiet: bool = False, fmt: str | None = None) -> Any:
    """The one progress line (validator/progress.py): stderr, a terminal only, never under CI, --quiet or a
    machine format; a context manager that ends the line before anything else is printed."""
    from validator.progress import progress

    return progress(label, quiet=quiet, machine=(fmt or _default_format()) != "text")


def _relative(root: str, path: str) -> str:
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel.startswith(".."):
        raise click.UsageError(f"{path} is outside the registry at {root}")
    return "" if rel == "." else rel


@cli.command("reproduce")
@click.argument("recipe", type=click.Path(dir_okay=False))  # a cheap clone may have left it out: checked out
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
def reproduce_cmd(recipe: str, root: str | None) -> None:
    """Print how to re-run RECIPE, ready to paste: the pinned stack, the launch command, the benchmark
    for its workload and concurrency, and the `orv add-run` line (docs/protocols.md). What the recipe
    does not state is named as missing."""
    from validator.engine.evaluate import find_root
    from validator.errors import AdapterError
    from validator.report import REPORTER_BY_NAME
    from validator.stacks.reproduce import reproduce

    root = os.path.abspath(root) if root else find_root(".")
    try:
        done = reproduce(root, recipe)
    except AdapterError as exc:
        click.echo(REPORTER_BY_NAME["text"](exc.result), nl=False, err=True)
        sys.exit(1)
    click.echo("\n".join(done.lines))


@cli.command("hash")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option("--bytes", "exact_bytes", is_flag=True,
              help="Print the SHA-256 of FILE's exact bytes, even where add-run would store a canonical form.")
def hash_cmd(file: str, exact_bytes: bool) -> None:
    """Print the content address (sha256:<hex>) under which `orv add-run FILE` stores FILE.

    For a run document that is canonical JSON (every file under runs/) that is the SHA-256 of its
    bytes, as `sha256sum` prints it. For a run document in any other key order or spacing it is the
    address of the canonical form add-run writes (said on stderr, with the bytes' own hash). A
    benchmark tool's own output has no run address until `orv add-run --from` converts it: the bytes'
    hash is printed and stderr says so.
    """
    from validator.adapters.detect import RUN, detect
    from validator.errors import LoadError
    from validator.hashing import canonical_bytes, content_address, is_canonical
    from validator.load.documents import decode_utf8, parse_json

    with open(file, "rb") as fh:
        raw = fh.read()
    own = f"sha256:{content_address(raw)}"
    found = detect(raw)
    if exact_bytes or found is None:
        click.echo(own)
        return
    if found.fmt != RUN:
        click.echo(own)
        click.echo(f"note: {file} is {found.what}; this is the hash of its bytes, not a run address: "
                   f"`orv add-run --from {found.fmt} --recipe …` converts it and prints the address it stores "
                   "the run under", err=True)
        return
    try:
        data = parse_json(raw, decode_utf8(raw))
    except LoadError:
        click.echo(own)
        return
    if is_canonical(raw, data):
        click.echo(own)
        return
    click.echo(f"sha256:{content_address(canonical_bytes(data))}")
    click.echo(f"note: {file} is not canonical JSON (RFC 8785): the address above is that of the canonical form "
               f"`orv add-run` writes; the file's own bytes hash to {own} (--bytes prints that)", err=True)


# The formats `--from` offers, spelled out so `orv --help` need not import every adapter; a test holds
# them equal to validator.commands.add_run's ADAPTER_FORMATS + QUALITY_FORMATS.
_ADD_RUN_FORMATS = ("aiperf", "llama-bench", "megatron", "nemo", "sglang", "trtllm-bench", "vllm", "lm-eval")


@cli.command("add-run")
@click.argument("file", type=click.Path(exists=True, dir_okay=True, allow_dash=True))
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
@click.option("--from", "fmt", type=click.Choice(_ADD_RUN_FORMATS), default=None,
              help="FILE is this tool's own output (Megatron-LM/NeMo log, vLLM result JSON, SGLang JSONL, AIPerf's "
                   "artifact directory or profile_export.jsonl, trtllm-bench --request_json with --report, "
                   "llama-bench -o json|jsonl; "
                   "lm-eval: its --output_path directory or results_*.json, written with --log_samples), "
                   "not a run document. Default: detected from FILE.")
@click.option("--report", "report", type=click.Path(exists=True, dir_okay=False), default=None,
              help="The run's second file: trtllm-bench's --report_json (needed), or AIPerf's "
                   "profile_export_aiperf.json when it is not beside FILE.")
@click.option("--reference-for", "reference_for", default=None, metavar="MODEL",
              help="lm-eval: store the run as MODEL's quality reference; megatron/nemo (with --workload W): as "
                   "MODEL's convergence reference for W (catalog/models.yaml; docs/convergence.md).")
@click.option("--recipe", "recipe_path", type=click.Path(dir_okay=False), default=None,
              help="Take model, hardware, software, layout/serving, author and date from this recipe.")
@click.option("--write-recipe/--no-write-recipe", default=None,
              help="Add the run's sha256: reference to the recipe's `runs:` and fill an empty `claimed:` from "
                   "the recomputed figures, editing it in place (comments, order and quoting kept). "
                   "Default: on when standard output is a terminal, off otherwise (scripts opt in).")
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
@click.option("--sign-with", "sign_key", type=click.Path(exists=True, dir_okay=False), default=None,
              help="Sign the stored run with this SSH key (as `orv sign`).")
def add_run_cmd(file: str, root: str | None, fmt: str | None, recipe_path: str | None, write_recipe: bool | None,
                reference_for: str | None, sign_key: str | None, report: str | None, **flags: object) -> None:
    """Store a run file under runs/ and print its sha256: reference.

    FILE is a run document (JSON, any key order or spacing), or a benchmark tool's own output
    (detected, or named with --from), converted to a run document (docs/metrics.md says how
    figures are recomputed). The recomputed headline, and what it leaves out, go to stderr; with
    --write-recipe the recipe gains the reference (and its claim, if it had none).
    """
    from validator.commands.add_run import AddRunRequest, execute
    from validator.engine.evaluate import find_root

    request = AddRunRequest(
        root=os.path.abspath(root) if root else find_root("."), file=file, fmt=fmt, recipe_path=recipe_path,
        write_recipe=sys.stdout.isatty() if write_recipe is None else write_recipe,
        reference_for=reference_for, sign_key=sign_key, report=report, given={k: v for k, v in flags.items() if v is not None})
    _finish(execute(request))


def _finish(outcome: Any) -> None:
    """Print an add-run/sign outcome's lines in order, its findings, and exit with its code."""
    from validator.report import REPORTER_BY_NAME

    for stream, text in outcome.lines:
        click.echo(text, err=stream == "err")
    if outcome.findings is not None:
        click.echo(REPORTER_BY_NAME["text"](outcome.findings), nl=False, err=True)
    if outcome.exit_code:
        sys.exit(outcome.exit_code)


@cli.command("new")
@click.argument("kind", type=click.Choice(["inference", "training"]))
@click.option("--model", default=None, help="Catalog model id (a name or alias is resolved to its id).")
@click.option("--gpu", default=None, help="Catalog GPU id or alias (H100 -> h100).")
@click.option("--count", type=click.IntRange(min=1), default=None, help="GPUs used (inference default: 1).")
@click.option("--engine", default=None, metavar="NAME@VERSION", help="Inference engine, e.g. vllm@0.11.0.")
@click.option("--framework", default=None, metavar="NAME@VERSION",
              help="Training framework, e.g. megatron-core@0.14.0.")
@click.option("--component", "components", multiple=True, metavar="ROLE=NAME@PIN",
              help="Another pinned component, e.g. kernels=flashinfer@0.4.1 (repeatable). A pin is a version, "
                   "commit:SHA or image:REF@sha256:DIGEST.")
@click.option("--quant", default=None, help="Inference: quantization id (default bf16).")
@click.option("--context-len", type=click.IntRange(min=1), default=None, help="Inference: context length served.")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Inference: the benchmark's --max-concurrency (default 1).")
@click.option("--speculative", default=None, metavar="METHOD:K", help="Inference: speculative decoding, e.g. mtp:3.")
@click.option("--workload", default=None, help="Catalog workload id: inference (required: isl1k-osl1k, ...; "
                                               "docs/protocols.md) or training (default: the catalog's only one).")
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Training: tensor-parallel size (default 1).")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Training: pipeline-parallel stages (default 1).")
@click.option("--vpp", type=click.IntRange(min=1), default=None,
              help="Training: virtual pipeline stages per pipeline rank (interleaved schedule; default none).")
@click.option("--cp", type=click.IntRange(min=1), default=None,
              help="Training: context-parallel size, splitting each sequence (default 1).")
@click.option("--ep", type=click.IntRange(min=1), default=None,
              help="Training: expert-parallel size, for mixture-of-experts models (default 1).")
@click.option("--etp", type=click.IntRange(min=1), default=None,
              help="Training: tensor-parallel size inside each expert (default: none stated).")
@click.option("--dp", type=click.IntRange(min=1), default=None,
              help="Training: data-parallel size (default: GPUs / (TP x PP x CP)).")
@click.option("--author", default=None, help="Who measured it (default: git config user.name).")
@click.option("--measured", default=None, help="Date of the measurement, YYYY-MM-DD (default: today).")
@click.option("--id", "recipe_id", default=None, help="Recipe id (default: derived by the naming rule).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
@click.option("--interactive/--no-interactive", default=None,
              help="Ask for missing values (default: when standard input is a terminal).")
@click.option("--dry-run", is_flag=True, help="Print the recipe instead of writing it.")
def new_cmd(kind: str, root: str | None, interactive: bool | None, dry_run: bool, components: tuple[str, ...],
            engine: str | None, framework: str | None, tp: int | None, pp: int | None, vpp: int | None,
            cp: int | None, ep: int | None, etp: int | None, dp: int | None, **given: object) -> None:
    """Write a new recipe: recipes/KIND/<model>/<id>.yaml, ready for `orv add-run --write-recipe`.

    The id follows the registry's naming rule (docs/contributing.md); model and GPU must be in the
    catalog (the message says how to add one). Prints the path written.
    """
    import datetime

    from validator.commands import new_recipe as scaffold
    from validator.engine.evaluate import find_root

    root = os.path.abspath(root) if root else find_root(".")
    parts: dict[str, str] = {}
    for item in components:
        role, sep, spec = item.partition("=")
        if not sep or not role.strip():
            raise click.UsageError(f"--component `{item}` is not ROLE=NAME@PIN")
        parts[role.strip()] = spec
    if engine:
        parts["engine"] = engine
    if framework:
        parts["framework"] = framework
    answers = scaffold.Answers(kind=kind, components=parts, **given,  # type: ignore[arg-type]
                               layout={k: v for k, v in dict(tp=tp, pp=pp, vpp=vpp, cp=cp, ep=ep, etp=etp,
                                                                dp=dp).items() if v is not None})
    if interactive if interactive is not None else sys.stdin.isatty():
        answers = scaffold.fill_interactively(answers, lambda text, default: click.prompt(text, default=default),
                                              author=scaffold.default_author(root))
    elif not answers.author:
        answers.author = scaffold.default_author(root)
    left = scaffold.missing(answers)
    if left:
        raise click.UsageError(f"missing {', '.join(left)} (or run on a terminal to be asked)")
    try:
        rel, text, note = scaffold.build(root, scaffold.catalog_of(root), answers, datetime.date.today())
        if note:
            click.echo(f"orv: note: {note}", err=True)
        if dry_run:
            click.echo(text, nl=False)
            return
        scaffold.write(root, rel, text)
    except scaffold.ScaffoldError as exc:
        click.echo(f"orv: {exc.message}\n    hint: {exc.hint}", err=True)
        sys.exit(EXIT_USAGE)
    click.echo(rel)
    fmt = "vllm|sglang|aiperf|trtllm-bench" if kind == "inference" else "megatron|nemo"
    if answers.components.get("engine", "").split("@")[0] in ("llama.cpp", "llama-cpp", "llamacpp"):
        fmt = "llama-bench"  # llama.cpp recipes are measured with llama-bench (docs/contributing.md)
    click.echo(f"next: orv add-run --from {fmt} --recipe {rel} --write-recipe OUTPUT", err=True)


@cli.group("catalog")
def catalog_group() -> None:
    """Add to the catalog: models (from a config.json). GPUs are added by hand (docs/contributing.md)."""


@catalog_group.command("add-model")
@click.option("--config", "config_path", required=True, type=click.Path(exists=True, dir_okay=False),
              help="The model's Hugging Face config.json (a local file; nothing is downloaded).")
@click.option("--id", "model_id", required=True, help="Catalog id, e.g. llama-3.1-8b.")
@click.option("--family", default=None, help="Model family (default: from the config's model_type).")
@click.option("--name", default=None, help="Display name, e.g. Llama-3.1-8B (default: the id).")
@click.option("--source", "sources", multiple=True, metavar="URL",
              help="Where the config.json came from (cited in the entry; repeatable).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
@click.option("--dry-run", is_flag=True, help="Print the entry instead of writing catalog/models.yaml.")
def add_model_cmd(config_path: str, model_id: str, family: str | None, name: str | None,
                  sources: tuple[str, ...], root: str | None, dry_run: bool) -> None:
    """Add a model to catalog/models.yaml: layers, shape, experts, total and active parameters from config.json.

    Parameters are counted by one formula (validator/science/params.py); the file is edited in
    place, every other entry, comment and quote kept.
    """
    from validator.commands.catalog import MODELS, CatalogToolError, add_model
    from validator.engine.evaluate import find_root

    root = os.path.abspath(root) if root else find_root(".")
    try:
        added = add_model(root, config_path, model_id, family, name, sources, dry_run=dry_run)
    except CatalogToolError as exc:
        finding = exc.diagnostic()  # a finding about a file (config.json, the catalog): exit 1
        if finding is None:
            click.echo(f"orv: {exc.message}\n    hint: {exc.hint}", err=True)
            sys.exit(EXIT_USAGE)
        from validator.diagnostics import Result
        from validator.report import REPORTER_BY_NAME

        click.echo(REPORTER_BY_NAME["text"](Result((finding,))), nl=False, err=True)
        sys.exit(EXIT_FINDINGS)
    e = added.entry
    experts = (f", {e['architecture']['experts']} experts ({e['architecture']['experts_per_token']} per token)"
               if e["moe"] else "")
    click.echo(f"{'would add' if dry_run else 'added'} {model_id} to {MODELS}: {e['params_b']}B parameters, "
               f"{e['active_b']}B active, {e['layers']} layers{experts}")


@cli.command("sign")
@click.argument("run", type=click.Path(exists=True, dir_okay=False))
@click.option("--key", required=True, type=click.Path(exists=True, dir_okay=False),
              help="SSH private key (or its .pub with the private half in ssh-agent).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the run file).")
def sign_cmd(run: str, key: str, root: str | None) -> None:
    """Sign a stored run file as its measurer: writes RUN.sig beside it.

    Uses `ssh-keygen -Y sign` in the namespace openrecipes-run@v1. The run's `measured_by` must be
    the measurer id your key is registered under in measurers/allowed_signers.
    """
    from validator.commands.add_run import Outcome, sign_stored
    from validator.engine.evaluate import find_root

    root = os.path.abspath(root) if root else find_root(run)
    outcome = Outcome()
    sign_stored(root, run, key, outcome)
    _finish(outcome)


@cli.command("explain")
@click.argument("code")
def explain_cmd(code: str) -> None:
    """Print the documentation of check CODE (e.g. ORV501), list every code with `all`, or print what
    each tier needs with `tiers`, and how sweeps, the frontier and its cost are computed with `frontier`."""
    from validator.checks import all_checks

    if code.lower() in ("tiers", "frontier"):
        from validator.evidence import tiers
        from validator.boards import frontier

        click.echo(inspect.cleandoc((tiers if code.lower() == "tiers" else frontier).__doc__ or ""))
        return
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
              help="Write nothing; exit 1 if a boards file or a key file (boards/keys.json, boards/keys/) differs "
                   "from a fresh regeneration.")
@click.option("--combined", "combined", type=click.Path(dir_okay=False), default=None, metavar="OUT",
              help="Regenerate nothing: write the committed boards assembled into one document (seed 004's "
                   "one-file shape) to OUT.")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=None,
              help="Processes for loading files (default: usable cores).")
@click.option("--cache/--no-cache", default=True, show_default=True,
              help="Reuse `orv check`'s results for files git reports unchanged (kept in the .git folder).")
def boards_cmd(check_only: bool, combined: str | None, root: str | None, jobs: int | None, cache: bool) -> None:
    """Regenerate the boards (boards/boards.json, and the same split into boards/index.json and one file per
    model under boards/models/, tiers derived
    from the evidence on record) and the keys (boards/keys.json and its shards under boards/keys/: each file's
    relation keys, for pull-request checks on a fresh runner), or --check them, or write them --combined
    into one file."""
    from validator.files.atomic import remove, transaction, write_atomic
    from validator.boards import keyfile
    from validator.boards.regenerate import first_difference, regenerate_files
    from validator.boards.split import committed_files
    from validator.engine.evaluate import analyse, find_root
    from validator.errors import HistoryError
    from validator.git.sparse import WHOLE_CHECKOUT, refuse_sparse
    from validator.load.pipeline import default_jobs
    from validator.registry.layout import (
        BOARDS_MODELS_DIR,
        BOARDS_PATH,
        BOARDS_STANDINGS_DIR,
        DOCUMENT_PATH,
        KEYS_DIR,
        KEYS_PATH,
    )

    root = os.path.abspath(root) if root else find_root(".")
    if combined is not None:
        _write_combined(root, combined)
        return
    refuse_sparse(root, "`orv boards`", "The boards are main's: a branch never regenerates them (ORV609); "
                  f"to build them anyway, first: {WHOLE_CHECKOUT}.")
    # the same loading as `orv check`, and of the registry checks only those a tier reads (physics)
    with _progress("orv boards: loading") as show:
        analysis = analyse(root, jobs=jobs or default_jobs(), cache=cache, for_tiers=True, progress=show)
    try:
        fresh = regenerate_files(analysis)
    except HistoryError as exc:
        click.echo(f"orv: {exc.message}\n    hint: {exc.hint}", err=True)
        sys.exit(EXIT_USAGE)
    fresh.update(keyfile.fresh_key_files(analysis.snapshot))
    committed = {**committed_files(root), **keyfile.committed_files(root)}
    leftover = sorted(set(committed) - set(fresh))  # a model no longer on the boards, a key shard no longer used
    changed = sorted(path for path, data in fresh.items() if committed.get(path) != data)
    if check_only:
        for path in changed:
            if path not in committed:
                click.echo(f"{path} is missing; run `orv boards`")
                continue
            diff = first_difference(committed[path], fresh[path])
            assert diff is not None
            click.echo(f"{path}:{diff[0]}: out of date (committed `{diff[1]}`, regenerated `{diff[2]}`); "
                       "run `orv boards`")
        for path in leftover:
            click.echo(f"{path} is left over (no model on the boards writes it); run `orv boards`")
        click.echo(f"{len(fresh) - len(changed)} of {len(fresh)} generated files up to date")
        if changed or leftover:
            sys.exit(EXIT_FINDINGS)
        return
    left_off = sum(1 for entry in analysis.snapshot.recipes if entry.recipe is None)
    if left_off:
        click.echo(f"orv: note: {left_off} recipe file(s) cannot be read or fail their schema: left off the boards "
                   "(`orv check` lists every finding)", err=True)
    if not analysis.snapshot.catalog_ok:
        click.echo("orv: note: the catalog has errors (`orv check` lists them); the boards show what loaded",
                   err=True)
    # every file lands together; writers of the registry take turns (docs/durability.md). The index goes
    # last and left-over files are removed after it, for a reader without the lock
    with transaction(root):
        for path in sorted(changed, key=lambda p: p in (DOCUMENT_PATH, BOARDS_PATH, KEYS_PATH)):
            write_atomic(os.path.join(root, path), fresh[path])
        for path in leftover:
            remove(os.path.join(root, path))
    said = [f"{path} {'written' if path in changed else 'unchanged'}" for path in (DOCUMENT_PATH, BOARDS_PATH, KEYS_PATH)]
    for folder in (BOARDS_MODELS_DIR, BOARDS_STANDINGS_DIR, KEYS_DIR):
        inside = [path for path in fresh if path.startswith(folder + "/")]
        written = sum(1 for path in inside if path in changed)
        removed = sum(1 for path in leftover if path.startswith(folder + "/"))
        said.append(f"{folder}/: {written} written, {len(inside) - written} unchanged, {removed} removed")
    click.echo("\n".join(said))  # once they are in place: a refused write says only that


def _write_combined(root: str, out: str) -> None:
    """`orv boards --combined OUT`: the committed boards as one document, written atomically."""
    from validator.files.atomic import environment_problem, write_atomic
    from validator.boards.build import render
    from validator.boards.split import BoardsUnreadable, read_boards

    try:
        document = read_boards(root)
    except BoardsUnreadable as exc:
        click.echo(f"orv: cannot read the boards: {exc}\n    hint: run `orv boards` to regenerate them", err=True)
        sys.exit(EXIT_FINDINGS)
    if document is None:
        click.echo("orv: the registry has no boards yet\n    hint: run `orv boards` first", err=True)
        sys.exit(EXIT_FINDINGS)
    try:
        write_atomic(os.path.abspath(out), render(document))
    except OSError as exc:
        click.echo(environment_problem(exc) or f"orv: cannot write {out}: {exc}", err=True)
        sys.exit(EXIT_FINDINGS)
    click.echo(f"{out}: the boards of {len(document['models'])} trained model(s), "
               f"{sum(len(rows) for rows in document['boards'].values())} rows, {len(document['runs'])} runs")


@cli.command("site")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--boards", "boards_file", type=click.Path(exists=True, dir_okay=False), default=None,
              help="A one-file boards document to render (`orv boards --combined`; default: the registry's "
                   "committed boards, boards/index.json and boards/models/).")
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root, for loss curves and catalog order (default: found from the current folder).")
@click.option("--repo-url", default=None, metavar="URL",
              help="GitHub repository (https://github.com/OWNER/REPO) to link run and recipe files to, at the "
                   "boards' commit (default: a relative link from DIRECTORY to the registry's files).")
def site_cmd(directory: str, boards_file: str | None, root: str | None, repo_url: str | None) -> None:
    """Render the boards as a static website into DIRECTORY (replaced atomically; docs/site.md)."""
    import dataclasses

    import orjson

    from validator.files.atomic import environment_problem
    from validator.site import (
        SiteContext,
        SiteError,
        boards_problem,
        file_base,
        render_site,
        write_site,
    )
    from validator.site.collect import collect_context

    if root is None and boards_file is None:
        from validator.engine.evaluate import find_root

        root = find_root(".")
    from validator.boards.split import BoardsUnreadable, read_boards

    path = boards_file or os.path.join(root, "boards")  # type: ignore[arg-type]
    try:
        if boards_file is not None:
            with open(boards_file, "rb") as fh:
                boards = orjson.loads(fh.read())
        else:
            boards = read_boards(root)  # type: ignore[arg-type]
            if boards is None:
                raise BoardsUnreadable("the registry has no boards/index.json")
    except (OSError, orjson.JSONDecodeError, BoardsUnreadable) as exc:
        click.echo(f"orv: cannot read {path}: {exc}\n    hint: run `orv boards` first, or pass --boards FILE",
                   err=True)
        sys.exit(EXIT_USAGE)
    problem = boards_problem(boards)
    if problem is not None:
        click.echo(f"orv: {path} is not a boards document this orv can render ({problem})\n"
                   "    hint: regenerate it with this version's `orv boards`", err=True)
        sys.exit(EXIT_USAGE)
    context = collect_context(os.path.abspath(root), boards) if root else SiteContext()
    meta = boards.get("meta") or {}
    context = dataclasses.replace(context, file_base=file_base(directory, root, repo_url, meta.get("source_commit")))
    with _progress("orv site: rendering recipe pages") as show:
        files = render_site(boards, context, show)
    try:
        write_site(directory, files)
    except (SiteError, OSError) as exc:
        problem = environment_problem(OSError(exc.errno, exc.strerror, directory)) \
            if isinstance(exc, OSError) and exc.errno is not None else None
        click.echo(problem or f"orv: {exc}", err=True)
        sys.exit(EXIT_FINDINGS if problem else EXIT_USAGE)
    click.echo(f"{directory}: {len(files):,} files, {sum(map(len, files.values())):,} bytes")


@cli.command("wanted")
@click.option("--kind", type=click.Choice(["training", "inference"]), default=None,
              help="Only the lists for one kind of recipe (default: both).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--root", type=click.Path(file_okay=False, exists=True), default=None,
              help="Registry root (default: found from the current folder).")
def wanted_cmd(kind: str | None, fmt: str, root: str | None) -> None:
    """Where a contribution counts: models and GPUs with no training recipe yet, T2 recipes waiting for an
    independent reproduction, recipes waiting for quality evidence — each with the command that starts it.

    The same lists as boards' `wanted` object (docs/boards.md), from the registry as it is now.
    """
    from validator.engine.evaluate import analyse, find_root
    from validator.git.sparse import WHOLE_CHECKOUT, refuse_sparse
    from validator.report import wanted

    root = os.path.abspath(root) if root else find_root(".")
    refuse_sparse(root, "`orv wanted`", "Its lists are also the `wanted` object of main's published boards "
                  f"(docs/boards.md); or first: {WHOLE_CHECKOUT}.")
    with _progress("orv wanted: loading", fmt=fmt) as show:
        document = wanted.document_for(analyse(root, progress=show))
    click.echo(wanted.render(document, kind, fmt), nl=False)


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
    from validator.engine.evaluate import find_root
    from validator.errors import ImportInputError
    from validator.importers import execute
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


# The one-line summaries `orv --help` lists, kept here in one place and short enough for an
# 80-column terminal: Click would cut a docstring's first sentence off at its own width, or at
# the first period ("e.g."), mid-parenthesis.
SUMMARIES = {
    "add-run": "Store a tool's output as a run file; record it in a recipe",
    "boards": "Regenerate boards/: an index, a file per model, keys.json",
    "catalog": "Add a model to the catalog from its config.json",
    "check": "Check the registry and report findings",
    "explain": "Print the documentation of a check code, or of all",
    "hash": "Print the content address a file is stored under",
    "import": "Import a legacy source's recipes and run files",
    "merge-results": "Combine the partial results of `orv check --shard`",
    "new": "Write a new recipe, ready for `orv add-run`",
    "reproduce": "Print the commands that re-run a recipe and store its run",
    "sign": "Sign a stored run file as its measurer (RUN.sig)",
    "site": "Render the boards as a static website",
    "wanted": "List where a contribution counts most",
    "catalog add-model": "Add a model from its Hugging Face config.json",
    "import leaderboard": "Seed 000's training leaderboard -> training recipes",
    "import legacy-boards": "Seed 004's boards export -> inference recipes, run files",
}


def _summarise(group: click.Group, prefix: str = "") -> None:
    for name, command in group.commands.items():
        command.short_help = SUMMARIES.get(prefix + name)  # tests/test_cli_help.py: every command has one
        if isinstance(command, click.Group):
            _summarise(command, f"{prefix}{name} ")


_summarise(cli)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: map every outcome to an exit code; never let a traceback reach the user."""
    from validator.files.atomic import environment_problem
    from validator.errors import UsageError

    try:
        cli.main(args=list(argv) if argv is not None else None, prog_name="orv", standalone_mode=False)
        return EXIT_OK
    except SystemExit as exc:
        return int(exc.code or 0) if not isinstance(exc.code, str) else EXIT_USAGE
    except click.exceptions.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # Ctrl-C: every write is whole (docs/durability.md)
            click.echo("orv: interrupted (files orv writes are whole: each is old or new; rerun to finish)", err=True)
            return EXIT_INTERRUPTED
        click.echo("orv: aborted", err=True)
        return EXIT_USAGE
    except KeyboardInterrupt:
        click.echo("orv: interrupted (files orv writes are whole: each is old or new; rerun to finish)", err=True)
        return EXIT_INTERRUPTED
    except click.ClickException as exc:
        exc.show()
        return EXIT_USAGE
    except UsageError as exc:
        click.echo(f"orv: {exc}", err=True)
        return EXIT_USAGE
    except Exception as exc:  # noqa: BLE001 - internal error: exit 2 with a short report, not a traceback
        problem = environment_problem(exc)
        if problem is not None:  # a full disk or a read-only folder is the machine's condition, not a bug
            click.echo(problem, err=True)
            return EXIT_FINDINGS
        click.echo(internal_error_message(exc), err=True)
        if os.environ.get("ORV_DEBUG"):
            click.echo(traceback.format_exc().rstrip(), err=True)
        return EXIT_USAGE


def internal_error_message(exc: BaseException) -> str:
    """One report line for a bug: the exception's type and text, and the innermost orv frame
    (file:line in function), which is what a maintainer needs to find it; ORV_DEBUG=1 adds the rest."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if "/validator/" in f.filename.replace(os.sep, "/")]
    where = ""
    if frames:
        f = frames[-1]
        rel = f.filename.replace(os.sep, "/").rsplit("/validator/", 1)[1]
        where = f" at validator/{rel}:{f.lineno} in {f.name}()"
    text = str(exc).splitlines()[0][:300] if str(exc) else ""
    return (f"orv: internal error: {type(exc).__name__}{': ' + text if text else ''}{where}\n"
            "(this is a bug in orv, not in your files; please report it with this message — "
            "ORV_DEBUG=1 prints the full traceback)")

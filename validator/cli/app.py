"""The `orv` command line, Click only: declare options, resolve their defaults, call the command in
validator/commands/ and write what it returns. Commands are imported when run, so `orv --help` loads
no check; validator/cli/error_handler.py maps how a command ended to an exit code."""

from __future__ import annotations

import datetime
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import click

from validator import __version__
from validator.cli import error_handler, options
from validator.cli.param_types import Root, root_option
from validator.cli.progress import progress
from validator.errors import BadOptions

if TYPE_CHECKING:
    from validator.commands.check import ReportOptions
    from validator.commands.outcome import Outcome, ProgressLine

EXIT_CODES_HELP = (
    "\b\nExit status:\n  0  no errors (warnings and notices allowed)\n  1  errors found (or the command "
    "failed its task: a full disk, a read-only folder)\n  2  usage error, or an internal error of orv\n"
    "  130  interrupted (Ctrl-C); every file orv writes is old or new"
)


def _default_format() -> str:
    return "github" if os.environ.get("GITHUB_ACTIONS") == "true" else "text"


def _use_color(choice: str) -> bool:
    """--color, then NO_COLOR (no-color.org), then FORCE_COLOR (force-color.org), then a terminal."""
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return sys.stdout.isatty() and os.environ.get("TERM") != "dumb"


def _progress_line(quiet: bool = False, fmt: str | None = None) -> ProgressLine:
    """The one progress line (validator/cli/progress.py): stderr, a terminal only, never under CI, --quiet or a
    machine format; a context manager that ends the line before anything else is printed."""
    machine = (fmt or _default_format()) != "text"
    return lambda label: progress(label, quiet=quiet, machine=machine)


def _run(command: Callable[[], Outcome]) -> None:
    """Call a command and write its outcome: lines in order, then its report, then its findings; exit with its code."""
    try:
        outcome = command()
    except BadOptions as exc:  # options that do not go together: shown with the command's usage, as Click's own
        raise click.UsageError(exc.message) from None
    except BaseException as exc:  # what the command said before it failed is said first (Outcome.said_before)
        for stream, text in getattr(exc, "orv_said", ()):
            click.echo(text, err=stream == "err")
        raise
    for stream, text in outcome.lines:
        click.echo(text, err=stream == "err")
    if outcome.report:
        click.echo(outcome.report, nl=False, color=outcome.color)
    if outcome.findings is not None:
        error_handler.write_findings(outcome.findings)
    if outcome.exit_code:
        sys.exit(outcome.exit_code)


def _report_options(
    fmt: str | None,
    summary_file: str | None,
    outputs_file: str | None,
    least: str,
    quiet: bool,
    statistics: bool,
    show_all: bool,
    color_choice: str,
) -> ReportOptions:
    from validator.commands.check import ReportOptions

    chosen = fmt or _default_format()
    return ReportOptions(
        fmt=chosen,
        summary_file=summary_file,
        outputs_file=outputs_file,
        least=least,
        quiet=quiet,
        statistics=statistics,
        show_all=show_all,
        color=_use_color(color_choice) if chosen == "text" else False,
    )


@click.group(context_settings={"help_option_names": ["-h", "--help"]}, epilog=EXIT_CODES_HELP)
@click.version_option(__version__, prog_name="orv")
def cli() -> None:
    """orv — the OpenRecipes validator."""


@cli.command("check", epilog=EXIT_CODES_HELP)
@click.argument("paths", nargs=-1, type=click.Path(exists=True))
@click.option("--base", metavar="REF", help="Apply the pull-request rules against the merge base with REF.")
@options.FORMAT
@options.WAIVE
@root_option("Registry root (default: found from PATHS or the current folder).", start_from="paths")
@options.jobs("loading files and judging ORV304's pairs of runs")
@click.option(
    "--cache/--no-cache",
    default=True,
    show_default=True,
    help="Reuse results for files git reports unchanged (kept in the .git folder).",
)
@options.SUMMARY
@options.OUTPUTS
@options.BOARDS
@options.display_options
@options.split(
    "--shard",
    "shard_spec",
    "Load only shard K of N of the recipes and run files and write their results to "
    "--partial-out; `orv merge-results` checks the rest and reports (docs/scaling.md).",
    "--partial-out",
    "With --shard: where to write the partial result (default: ./orv-shard-K-of-N.partial).",
)
@click.option(
    "--widen",
    is_flag=True,
    default=False,
    help="With --base in a sparse checkout: when the change needs every file (it touches catalog/, "
    "measurers/ or a submodule), check them all out instead of refusing (a partial clone "
    "downloads them). The pull-request gate passes it.",
)
@click.option(
    "--profile",
    is_flag=True,
    default=False,
    help="Also print on stderr the seconds each pipeline stage and each check took (everything runs in "
    "one process then, so the per-file checks are counted; for finding what is slow, docs/benchmarks.md).",
)
def check_cmd(
    paths: tuple[str, ...],
    base: str | None,
    fmt: str | None,
    waive: tuple[str, ...],
    root: Root,
    jobs: int | None,
    cache: bool,
    summary_file: str | None,
    outputs_file: str | None,
    with_boards: bool,
    least: str,
    quiet: bool,
    statistics: bool,
    show_all: bool,
    color_choice: str,
    shard_spec: str | None,
    partial_out: str | None,
    widen: bool,
    profile: bool,
) -> None:
    """Check the registry; report findings in PATHS (default: everything).

    Plain `orv check` is clean when the change is acceptable as a pull request; stale boards are
    main's business (--boards). Findings on legacy-imported entries are counted by code unless
    --show-all is given; the summary line says how many findings each option left out.
    """
    from validator.commands import check
    from validator.engine.shard import parse_shard

    if shard_spec is not None:
        if profile:
            raise click.UsageError("--profile times a whole check in one process; it does not go with --shard")
        _refuse_reporting_options_with_a_shard()
        shard = parse_shard(shard_spec)
        _run(lambda: check.check_shard(root.path(), shard, partial_out, jobs, _progress_line()))
        return
    if partial_out is not None:
        raise click.UsageError("--partial-out goes with --shard K/N")
    if with_boards and base is not None:
        raise click.UsageError("--boards checks main's boards file; a pull request (--base) never changes it")
    if widen and base is None:
        raise click.UsageError("--widen goes with --base (a check of the whole registry needs a whole checkout)")
    report = _report_options(fmt, summary_file, outputs_file, least, quiet, statistics, show_all, color_choice)
    _run(
        lambda: check.check(
            root.path(),
            paths,
            base,
            waive,
            with_boards,
            jobs,
            cache,
            widen,
            report,
            _progress_line(quiet, fmt),
            profile,
        )
    )


# What a shard or a judging part never takes: it reports nothing (the merge does).
_REPORTING = (
    "fmt",
    "waive",
    "summary_file",
    "outputs_file",
    "with_boards",
    "least",
    "quiet",
    "statistics",
    "show_all",
    "color_choice",
)
# ... and a shard checks the whole tree, not a pull request
_MERGE_ONLY = ("paths", "base", *_REPORTING)


def _refuse_reporting_options_with_a_shard() -> None:
    _refuse_given(
        _MERGE_ONLY,
        "--shard: a shard checks every file of its part and reports nothing; give the reporting options to "
        "`orv merge-results`",
    )


def _refuse_given(names: tuple[str, ...], why: str) -> None:
    """A usage error for the first of these options given on the command line: it does not go with `why`."""
    from click.core import ParameterSource

    ctx = click.get_current_context()
    for param in ctx.command.params:
        if param.name in names and ctx.get_parameter_source(param.name) is ParameterSource.COMMANDLINE:
            what = "PATHS" if param.name == "paths" else param.opts[0]
            raise click.UsageError(f"{what} does not go with {why}")


@cli.command("merge-results", epilog=EXIT_CODES_HELP)
@click.argument("partials", nargs=-1, required=True, type=click.Path(exists=True, dir_okay=False))
@options.FORMAT
@options.WAIVE
@root_option("Registry root (default: found from PATHS or the current folder).")
@options.SUMMARY
@options.OUTPUTS
@options.BOARDS
@options.jobs("judging ORV304's pairs of runs")
@options.display_options
@options.split(
    "--judge",
    "judge_spec",
    "Judge only part K of N of ORV304's pairs of runs and write the verdicts to --judged-out; the "
    "merge given every part's file with --judged reports (docs/scaling.md).",
    "--judged-out",
    "With --judge: where to write the part's verdicts (default: ./orv-judged-K-of-N.json).",
)
@click.option(
    "--judged",
    "judged_files",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False),
    help="A file `--judge K/N` wrote (repeat for every K): ORV304 takes their verdicts instead of judging.",
)
def merge_results_cmd(
    partials: tuple[str, ...],
    fmt: str | None,
    waive: tuple[str, ...],
    root: Root,
    summary_file: str | None,
    outputs_file: str | None,
    with_boards: bool,
    jobs: int | None,
    least: str,
    quiet: bool,
    statistics: bool,
    show_all: bool,
    color_choice: str,
    judge_spec: str | None,
    judged_out: str | None,
    judged_files: tuple[str, ...],
) -> None:
    """Combine the partial results of `orv check --shard K/N` (every K of one N) and report once.

    Refuses partials from another orv, another registry tree or an incomplete set (exit 2). Loads the
    catalog, runs the registry checks (ids, identities, references, tiers; the boards with --boards)
    on the merged results and reports exactly as `orv check` on one machine would (docs/scaling.md).
    ORV304's pairs may be judged on several runners first (--judge K/N, then --judged).
    """
    from validator.commands.check import judge_merged, merge_results
    from validator.engine.judging import parse_part

    if judge_spec is not None:
        _refuse_given(
            (*_REPORTING, "judged_files"),
            "--judge: a part judges its pairs and reports nothing; give the reporting options to the "
            "`orv merge-results --judged` that reads every part",
        )
        part = parse_part(judge_spec)
        _run(lambda: judge_merged(root.path(), partials, part, judged_out, jobs, _progress_line()))
        return
    if judged_out is not None:
        raise click.UsageError("--judged-out goes with --judge K/N")
    report = _report_options(fmt, summary_file, outputs_file, least, quiet, statistics, show_all, color_choice)
    _run(
        lambda: merge_results(
            root.path(), partials, waive, with_boards, report, _progress_line(quiet, fmt), jobs, judged_files
        )
    )


@cli.command("reproduce")
@click.argument("recipe", type=click.Path(dir_okay=False))  # a cheap clone may have left it out: checked out
@root_option("Registry root (default: found from the current folder).")
def reproduce_cmd(recipe: str, root: Root) -> None:
    """Print how to re-run RECIPE, ready to paste: the pinned stack, the launch command, the benchmark
    for its workload and concurrency, and the `orv add-run` line (docs/protocols.md). What the recipe
    does not state is named as missing."""
    from validator.commands.reproduce import reproduce

    _run(lambda: reproduce(root.path(), recipe))


@cli.command("hash")
@click.argument("file", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--bytes",
    "exact_bytes",
    is_flag=True,
    help="Print the SHA-256 of FILE's exact bytes, even where add-run would store a canonical form.",
)
def hash_cmd(file: str, exact_bytes: bool) -> None:
    """Print the content address (sha256:<hex>) under which `orv add-run FILE` stores FILE.

    For a run document that is canonical JSON (every file under runs/) that is the SHA-256 of its
    bytes, as `sha256sum` prints it. For a run document in any other key order or spacing it is the
    address of the canonical form add-run writes (said on stderr, with the bytes' own hash). A
    benchmark tool's own output has no run address until `orv add-run --from` converts it: the bytes'
    hash is printed and stderr says so.
    """
    from validator.commands.hash import hash_file

    _run(lambda: hash_file(file, exact_bytes))


# The formats `--from` offers, spelled out so `orv --help` need not import every adapter; a test holds
# them equal to validator.commands.add_run's ADAPTER_FORMATS + QUALITY_FORMATS.
_ADD_RUN_FORMATS = ("aiperf", "llama-bench", "megatron", "nemo", "sglang", "trtllm-bench", "vllm", "lm-eval")


@cli.command("add-run")
@click.argument("file", type=click.Path(exists=True, dir_okay=True, allow_dash=True))
@root_option("Registry root (default: found from the current folder).")
@click.option(
    "--from",
    "fmt",
    type=click.Choice(_ADD_RUN_FORMATS),
    default=None,
    help="FILE is this tool's own output (Megatron-LM/NeMo log, vLLM result JSON, SGLang JSONL, AIPerf's "
    "artifact directory or profile_export.jsonl, trtllm-bench --request_json with --report, "
    "llama-bench -o json|jsonl; "
    "lm-eval: its --output_path directory or results_*.json, written with --log_samples), "
    "not a run document. Default: detected from FILE.",
)
@click.option(
    "--report",
    "report",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="The run's second file: trtllm-bench's --report_json (needed), or AIPerf's "
    "profile_export_aiperf.json when it is not beside FILE.",
)
@click.option(
    "--reference-for",
    "reference_for",
    default=None,
    metavar="MODEL",
    help="lm-eval: store the run as MODEL's quality reference; megatron/nemo (with --workload W): as "
    "MODEL's convergence reference for W (catalog/models.yaml; docs/convergence.md).",
)
@click.option(
    "--recipe",
    "recipe_path",
    type=click.Path(dir_okay=False),
    default=None,
    help="Take model, hardware, software, layout/serving, author and date from this recipe.",
)
@click.option(
    "--write-recipe/--no-write-recipe",
    default=None,
    help="Add the run's sha256: reference to the recipe's `runs:` and fill an empty `claimed:` from "
    "the recomputed figures, editing it in place (comments, order and quoting kept). "
    "Default: on when standard output is a terminal, off otherwise (scripts opt in).",
)
@click.option("--model", default=None, help="Catalog model id (overrides the recipe).")
@click.option("--gpu", default=None, help="Catalog GPU id (overrides the recipe).")
@click.option("--gpus", type=click.IntRange(min=1), default=None, help="GPU count (overrides the recipe).")
@click.option("--workload", default=None, help="Catalog workload id, for training (overrides the recipe).")
@click.option("--quant", default=None, help="Quantization id, for inference (overrides the recipe).")
@click.option("--measured-by", default=None, help="Who ran the benchmark (default: the recipe's author).")
@click.option("--measured-at", default=None, help="When, if the output does not say (ISO date or time).")
@click.option("--tool-version", default=None, help="Exact version of the benchmark tool.")
@click.option("--tool-commit", default=None, help="Commit of the benchmark tool, if built from source.")
@click.option(
    "--record",
    type=click.IntRange(min=1),
    default=None,
    help="Which result of a file holding several (JSON lines), counting from 1.",
)
@click.option(
    "--sign-with",
    "sign_key",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="Sign the stored run with this SSH key (as `orv sign`).",
)
def add_run_cmd(
    file: str,
    root: Root,
    fmt: str | None,
    recipe_path: str | None,
    write_recipe: bool | None,
    reference_for: str | None,
    sign_key: str | None,
    report: str | None,
    **flags: object,
) -> None:
    """Store a run file under runs/ and print its sha256: reference.

    FILE is a run document (JSON, any key order or spacing), or a benchmark tool's own output
    (detected, or named with --from), converted to a run document (docs/metrics.md says how
    figures are recomputed). The recomputed headline, and what it leaves out, go to stderr; with
    --write-recipe the recipe gains the reference (and its claim, if it had none).
    """
    from validator.commands.add_run import AddRunRequest, execute

    request = AddRunRequest(
        root=root.path(),
        file=file,
        fmt=fmt,
        recipe_path=recipe_path,
        write_recipe=sys.stdout.isatty() if write_recipe is None else write_recipe,
        write_recipe_chosen=write_recipe is not None,
        reference_for=reference_for,
        sign_key=sign_key,
        report=report,
        given={k: v for k, v in flags.items() if v is not None},
    )
    _run(lambda: execute(request))


@cli.command("new")
@click.argument("kind", type=click.Choice(["inference", "training"]))
@click.option("--model", default=None, help="Catalog model id (a name or alias is resolved to its id).")
@click.option("--gpu", default=None, help="Catalog GPU id or alias (H100 -> h100).")
@click.option("--count", type=click.IntRange(min=1), default=None, help="GPUs used (inference default: 1).")
@click.option("--engine", default=None, metavar="NAME@VERSION", help="Inference engine, e.g. vllm@0.11.0.")
@click.option(
    "--framework", default=None, metavar="NAME@VERSION", help="Training framework, e.g. megatron-core@0.14.0."
)
@click.option(
    "--component",
    "components",
    multiple=True,
    metavar="ROLE=NAME@PIN",
    help="Another pinned component, e.g. kernels=flashinfer@0.4.1 (repeatable). A pin is a version, "
    "commit:SHA or image:REF@sha256:DIGEST.",
)
@click.option("--quant", default=None, help="Inference: quantization id (default bf16).")
@click.option("--context-len", type=click.IntRange(min=1), default=None, help="Inference: context length served.")
@click.option(
    "--concurrency",
    type=click.IntRange(min=1),
    default=None,
    help="Inference: the benchmark's --max-concurrency (default 1).",
)
@click.option("--speculative", default=None, metavar="METHOD:K", help="Inference: speculative decoding, e.g. mtp:3.")
@click.option(
    "--workload",
    default=None,
    help="Catalog workload id: inference (required: isl1k-osl1k, ...; "
    "docs/protocols.md) or training (default: the catalog's only one).",
)
@click.option("--tp", type=click.IntRange(min=1), default=None, help="Training: tensor-parallel size (default 1).")
@click.option("--pp", type=click.IntRange(min=1), default=None, help="Training: pipeline-parallel stages (default 1).")
@click.option(
    "--vpp",
    type=click.IntRange(min=1),
    default=None,
    help="Training: virtual pipeline stages per pipeline rank (interleaved schedule; default none).",
)
@click.option(
    "--cp",
    type=click.IntRange(min=1),
    default=None,
    help="Training: context-parallel size, splitting each sequence (default 1).",
)
@click.option(
    "--ep",
    type=click.IntRange(min=1),
    default=None,
    help="Training: expert-parallel size, for mixture-of-experts models (default 1).",
)
@click.option(
    "--etp",
    type=click.IntRange(min=1),
    default=None,
    help="Training: tensor-parallel size inside each expert (default: none stated).",
)
@click.option(
    "--dp",
    type=click.IntRange(min=1),
    default=None,
    help="Training: data-parallel size (default: GPUs / (TP x PP x CP)).",
)
@click.option("--author", default=None, help="Who measured it (default: git config user.name).")
@click.option("--measured", default=None, help="Date of the measurement, YYYY-MM-DD (default: today).")
@click.option("--id", "recipe_id", default=None, help="Recipe id (default: derived by the naming rule).")
@root_option("Registry root (default: found from the current folder).")
@click.option(
    "--interactive/--no-interactive",
    default=None,
    help="Ask for missing values (default: when standard input is a terminal).",
)
@click.option("--dry-run", is_flag=True, help="Print the recipe instead of writing it.")
@click.option(
    "--force",
    is_flag=True,
    help="Replace an untracked draft holding the derived id (never a committed recipe) instead of writing -2.",
)
def new_cmd(
    kind: str,
    root: Root,
    interactive: bool | None,
    dry_run: bool,
    force: bool,
    components: tuple[str, ...],
    engine: str | None,
    framework: str | None,
    tp: int | None,
    pp: int | None,
    vpp: int | None,
    cp: int | None,
    ep: int | None,
    etp: int | None,
    dp: int | None,
    **given: object,
) -> None:
    """Write a new recipe: recipes/KIND/<model>/<id>.yaml, ready for `orv add-run --write-recipe`.

    The id follows the registry's naming rule (docs/contributing.md); model and GPU must be in the
    catalog (the message says how to add one). Prints the path written.
    """
    from validator.commands.new_recipe import Answers, new_recipe

    answers = Answers(
        kind=kind,
        **given,  # type: ignore[arg-type]
        layout={k: v for k, v in dict(tp=tp, pp=pp, vpp=vpp, cp=cp, ep=ep, etp=etp, dp=dp).items() if v is not None},
    )
    asking = interactive if interactive is not None else sys.stdin.isatty()
    ask = (lambda text, default: click.prompt(text, default=default)) if asking else None
    _run(
        lambda: new_recipe(
            root.path(), answers, components, engine, framework, ask, dry_run, datetime.date.today(), force
        )
    )


@cli.group("catalog")
def catalog_group() -> None:
    """Add to the catalog: models (from a config.json), GPUs and CPU hosts (from a datasheet)."""


@catalog_group.command("add-host")
@click.option("--id", "host_id", required=True, help="Catalog id, e.g. rtx-4090 or epyc-9654.")
@click.option("--name", required=True, help="The vendor's name, e.g. 'AMD EPYC 9654'.")
@click.option("--vendor", type=click.Choice(["nvidia", "amd", "intel", "apple", "other"]), required=True)
@click.option(
    "--device",
    type=click.Choice(["gpu", "cpu"]),
    default="gpu",
    show_default=True,
    help="cpu: a CPU host (a llama.cpp CPU build); its memory figures are the system memory's, all sockets.",
)
@click.option("--memory-gib", type=click.FloatRange(min=0, min_open=True), required=True, help="Memory, GB.")
@click.option(
    "--memory-tb-s", type=click.FloatRange(min=0, min_open=True), required=True, help="Peak memory bandwidth, TB/s."
)
@click.option("--memory-kind", required=True, help="HBM3, GDDR6X, LPDDR5X, DDR5, …")
@click.option(
    "--bf16-tflops",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Dense BF16 TFLOP/s (without sparsity), where the vendor publishes one.",
)
@click.option("--alias", "aliases", multiple=True, help="A name people type (repeatable), e.g. 'RTX 4090'.")
@click.option("--source", "sources", multiple=True, help="Where the figures come from (repeatable; at least one).")
@click.option("--dry-run", is_flag=True, help="Check the entry without writing it.")
@root_option("Registry root (default: found from the current folder).")
def add_host_cmd(
    host_id: str,
    name: str,
    vendor: str,
    device: str,
    memory_gib: float,
    memory_tb_s: float,
    memory_kind: str,
    bf16_tflops: float | None,
    aliases: tuple[str, ...],
    sources: tuple[str, ...],
    dry_run: bool,
    root: Root,
) -> None:
    """Add a GPU or a CPU host the catalog lacks to catalog/hardware.yaml, from its vendor's datasheet.

    Everything else in the file is kept byte for byte; the entry is checked against the catalog schema
    before it is written (docs/contributing.md, "Adding a GPU")."""
    from validator.commands.catalog import Host, add_host_command

    host = Host(host_id, name, vendor, device, memory_gib, memory_tb_s, memory_kind, sources, bf16_tflops, aliases)
    _run(lambda: add_host_command(root.path(), host, dry_run))


@catalog_group.command("add-model")
@click.option(
    "--config",
    "config_path",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="The model's Hugging Face config.json (a local file; nothing is downloaded).",
)
@click.option("--id", "model_id", required=True, help="Catalog id, e.g. llama-3.1-8b.")
@click.option("--family", default=None, help="Model family (default: from the config's model_type).")
@click.option("--name", default=None, help="Display name, e.g. Llama-3.1-8B (default: the id).")
@click.option(
    "--source",
    "sources",
    multiple=True,
    metavar="URL",
    help="Where the config.json came from (cited in the entry; repeatable).",
)
@root_option("Registry root (default: found from the current folder).")
@click.option("--dry-run", is_flag=True, help="Print the entry instead of writing catalog/models.yaml.")
def add_model_cmd(
    config_path: str,
    model_id: str,
    family: str | None,
    name: str | None,
    sources: tuple[str, ...],
    root: Root,
    dry_run: bool,
) -> None:
    """Add a model to catalog/models.yaml: layers, shape, experts, total and active parameters from config.json.

    Parameters are counted by one formula (validator/science/params.py); the file is edited in
    place, every other entry, comment and quote kept.
    """
    from validator.commands.catalog import add_model_command

    _run(lambda: add_model_command(root.path(), config_path, model_id, family, name, sources, dry_run))


@cli.command("sign")
@click.argument("run", type=click.Path(exists=True, dir_okay=False))
@click.option(
    "--key",
    required=True,
    type=click.Path(exists=True, dir_okay=False),
    help="SSH private key (or its .pub with the private half in ssh-agent).",
)
@root_option("Registry root (default: found from the run file).", start_from="run")
def sign_cmd(run: str, key: str, root: Root) -> None:
    """Sign a stored run file as its measurer: writes RUN.sig beside it.

    Uses `ssh-keygen -Y sign` in the namespace openrecipes-run@v1. The run's `measured_by` must be
    the measurer id your key is registered under in measurers/allowed_signers.
    """
    from validator.commands.sign import sign

    _run(lambda: sign(root.path(), run, key))


@cli.group("measurers")
def measurers_group() -> None:
    """Who stands behind a measurer's key (verify, network) and what rests on a measurer (audit)."""


@measurers_group.command("verify")
@click.option(
    "--api-url",
    default="https://api.github.com",
    show_default=True,
    help="GitHub's REST API (another address for GitHub Enterprise, or a test server).",
)
@root_option("Registry root (default: found from the current folder).")
def measurers_verify_cmd(api_url: str, root: Root) -> None:
    """Check each measurer key against the signing keys its GitHub account publishes; mark it verified.

    A maintainer runs this before waiving ORV607/ORV608: every line of measurers/allowed_signers must
    name its account (`github:<user>` after the key); a key GitHub publishes for that account gets
    `verified:<today>` on its line, so the gate itself never needs the network. Exit 1 when a line
    names no account or its key is not published there.
    """
    from validator.commands.measurers import verify

    _run(lambda: verify(root.path(), datetime.date.today(), api_url))


@measurers_group.command("audit")
@click.argument("name")
@root_option("Registry root (default: found from the current folder).")
def measurers_audit_cmd(name: str, root: Root) -> None:
    """List every recipe with a run signed by measurer NAME, with its tier (what a revocation moves)."""
    from validator.commands.measurers import audit

    _run(lambda: audit(root.path(), name))


@cli.command("explain")
@click.argument("code")
def explain_cmd(code: str) -> None:
    """Print the documentation of check CODE (e.g. ORV501), list every code with `all`, or print what
    each tier needs with `tiers`, and how sweeps, the frontier and its cost are computed with `frontier`."""
    from validator.commands.explain import explain

    _run(lambda: explain(code))


@cli.command("boards")
@click.option(
    "--check",
    "check_only",
    is_flag=True,
    help="Write nothing; exit 1 if a boards file or a key file (boards/keys.json, boards/keys/) differs "
    "from a fresh regeneration.",
)
@click.option(
    "--incremental",
    is_flag=True,
    help="After a merge on main: rewrite only what the data changed since the commit the committed boards "
    "were made from (the touched models' files, the index, the changed files' key shards); works in a "
    "sparse, partial clone. Regenerates everything instead, saying why, when orv's code, schemas or catalog "
    "changed, the committed boards cannot be read, or the data changed outside recipes/ and runs/ "
    "(docs/boards.md).",
)
@click.option(
    "--combined",
    "combined",
    type=click.Path(dir_okay=False),
    default=None,
    metavar="OUT",
    help="Regenerate nothing: write the committed boards assembled into one document (seed 004's "
    "one-file shape, the readers' contract; the boards workflow publishes it with the site) to OUT.",
)
@root_option("Registry root (default: found from the current folder).")
@options.jobs("loading files")
@click.option(
    "--cache/--no-cache",
    default=True,
    show_default=True,
    help="Reuse `orv check`'s results for files git reports unchanged (kept in the .git folder).",
)
@click.option(
    "--max-file-mb",
    type=click.IntRange(min=1),
    default=None,
    help="Refuse, writing nothing, when a generated file would pass this many MB (default 25; GitHub warns "
    "at 50 and refuses 100); raise it only for a registry not hosted on GitHub.",
)
def boards_cmd(
    check_only: bool,
    incremental: bool,
    combined: str | None,
    root: Root,
    jobs: int | None,
    cache: bool,
    max_file_mb: int | None,
) -> None:
    """Regenerate the boards (boards/index.json, per model a manifest and chunks under boards/models/ and
    its standings under boards/standings/, tiers derived from the evidence on record) and the keys (boards/keys.json and its
    shards under boards/keys/: each file's relation keys, for pull-request checks on a fresh runner), or
    --check them, or write them --combined into the one document readers fetch (published by the boards
    workflow, never committed)."""
    from validator.commands import boards

    if combined is not None:
        _run(lambda: boards.combined(root.path(), combined))
        return
    limit = max_file_mb * 1_000_000 if max_file_mb is not None else None
    if incremental and check_only:
        raise click.UsageError("--incremental writes the boards; --check compares them in full: give one of them")
    if incremental:
        _run(lambda: boards.update(root.path(), jobs, cache, _progress_line(), limit))
        return
    _run(lambda: boards.boards(root.path(), check_only, jobs, cache, _progress_line(), limit))


@cli.command("site")
@click.argument("directory", type=click.Path(file_okay=False))
@click.option(
    "--boards",
    "boards_file",
    type=click.Path(exists=True, dir_okay=False),
    default=None,
    help="A one-file boards document to render (`orv boards --combined`; default: the registry's "
    "committed boards, boards/index.json and boards/models/).",
)
@root_option("Registry root, for loss curves and catalog order (default: found from the current folder).")
@click.option(
    "--repo-url",
    default=None,
    metavar="URL",
    help="GitHub repository (https://github.com/OWNER/REPO) to link run and recipe files to, at the "
    "boards' commit (default: a relative link from DIRECTORY to the registry's files).",
)
def site_cmd(directory: str, boards_file: str | None, root: Root, repo_url: str | None) -> None:
    """Render the boards as a static website into DIRECTORY (replaced atomically; docs/site.md)."""
    from validator.commands.site import site

    # --root as given (links are made relative to it), found only when no boards file is given
    registry = root.given if root.given or boards_file else root.path()
    _run(lambda: site(directory, boards_file, registry, repo_url, _progress_line()))


@cli.command("wanted")
@click.option(
    "--kind",
    type=click.Choice(["training", "inference"]),
    default=None,
    help="Only the lists for one kind of recipe (default: both).",
)
@click.option("--model", default=None, help="Only items about this catalog model id.")
@click.option("--gpu", default=None, help="Only items about this catalog GPU id.")
@click.option("--workload", default=None, help="Only items about this catalog workload id.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many items a list.")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text", show_default=True)
@root_option("Registry root (default: found from the current folder).")
def wanted_cmd(
    kind: str | None,
    model: str | None,
    gpu: str | None,
    workload: str | None,
    limit: int | None,
    fmt: str,
    root: Root,
) -> None:
    """Where a contribution counts: models and GPUs with no training recipe yet, T2 recipes waiting for an
    independent reproduction, recipes waiting for quality evidence — each with the command that starts it.

    The same lists as boards' `wanted` object (docs/boards.md), from the registry as it is now.
    """
    from validator.commands.wanted import wanted
    from validator.report.wanted import Scope

    scope = Scope(model, gpu, workload, limit)
    _run(lambda: wanted(root.path(), kind, fmt, _progress_line(fmt=fmt), scope))


@cli.group("import")
def import_group() -> None:
    """Import a legacy source: recipes and run files into the registry, and an import report."""


_REPORT_HELP = (
    "Where to save the Markdown report (a .json twin is written beside it); "
    "default: docs/import-report-<command>.md in the registry."
)


def _import_command(name: str, doc: str) -> None:
    """Register `orv import NAME FILE [--root] [--report]`: every legacy source takes the same options."""

    @import_group.command(name, help=doc)
    @click.argument("file", type=click.Path(exists=True, dir_okay=False))
    @root_option("Registry root (default: found from the current folder).")
    @click.option("--report", "report_path", type=click.Path(dir_okay=False), default=None, help=_REPORT_HELP)
    def command(file: str, root: Root, report_path: str | None) -> None:
        from validator.commands.import_source import import_source

        _run(lambda: import_source(name, root.path(), file, report_path))


_import_command(
    "leaderboard", "Seed 000's training leaderboard (FILE) -> training recipes and catalog/starting-points.yaml."
)
_import_command("legacy-boards", "Seed 004's tier-boards JSON export (FILE) -> inference recipes and run files.")


# The one-line summaries `orv --help` lists, kept here in one place and short enough for an
# 80-column terminal: Click would cut a docstring's first sentence off at its own width, or at
# the first period ("e.g."), mid-parenthesis.
SUMMARIES = {
    "add-run": "Store a tool's output as a run file; record it in a recipe",
    "boards": "Regenerate boards/: an index, a file per model, keys.json",
    "catalog": "Add a model, a GPU or a CPU host to the catalog",
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
    "catalog add-host": "Add a GPU or CPU host from its vendor's datasheet",
    "measurers": "Verify measurers' keys on GitHub; audit what rests on one",
    "measurers verify": "Check measurer keys against GitHub; mark them verified",
    "measurers audit": "List the recipes resting on a measurer's runs",
    "import leaderboard": "Seed 000's training leaderboard -> training recipes",
    "import legacy-boards": "Seed 004's boards export -> inference recipes, run files",
}


def _summarise(group: click.Group, prefix: str = "") -> None:
    for name, command in group.commands.items():
        command.short_help = SUMMARIES.get(prefix + name)  # tests/unit/test_cli_help.py: every command has one
        if isinstance(command, click.Group):
            _summarise(command, f"{prefix}{name} ")


_summarise(cli)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point: map every outcome to an exit code; never let a traceback reach the user."""
    return error_handler.run(cli, argv)

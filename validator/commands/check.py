"""`orv check` and `orv merge-results`: evaluate the registry (whole, a pull request, or merged shards) and
report the findings in the format asked, with the job summary and step outputs."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from validator.checks import all_checks
from validator.checks.collect import profiling, stage
from validator.commands.outcome import Outcome, ProgressLine
from validator.diagnostics import Result, Severity
from validator.engine import shard as shards
from validator.engine.evaluate import Config, Evaluation, evaluate, evaluate_loaded
from validator.engine.judging import Part, default_judged_path, judge_part, read_judged, verdicts
from validator.engine.shard import PartialRefused, Shard, default_partial_path, merge
from validator.errors import BadOptions, ExitCode
from validator.git.plumbing import uncommitted
from validator.load.pipeline import default_jobs
from validator.registry.layout import REGISTRY_DIRS
from validator.registry.snapshot import imported_paths
from validator.report import REPORTER_BY_NAME, summary
from validator.report.profile import render as render_profile
from validator.report.text import TextOptions, render_with

T = TypeVar("T")


@dataclass(frozen=True)
class ReportOptions:
    """How the findings are shown; the CLI has resolved every default (format, colour)."""

    fmt: str = "text"
    summary_file: str | None = None  # Markdown job summary appended here ($GITHUB_STEP_SUMMARY)
    outputs_file: str | None = None  # name=value step outputs appended here ($GITHUB_OUTPUT)
    least: str = "notice"
    quiet: bool = False
    statistics: bool = False
    show_all: bool = False
    color: bool = False


def check(
    root: str,
    paths: tuple[str, ...],
    base: str | None,
    waive: tuple[str, ...],
    with_boards: bool,
    jobs: int | None,
    cache: bool,
    widen: bool,
    options: ReportOptions,
    progress: ProgressLine,
    profile: bool = False,
) -> Outcome:
    """The whole registry, or a pull request against the merge base with `base`; PATHS limit what is reported.
    `profile`: also say on stderr how many seconds each stage and check took (in one process, so that
    the per-file checks are counted too)."""
    rel_paths = tuple(relative(root, p) for p in paths)
    config = Config(
        root=root,
        paths=tuple(p for p in rel_paths if p),
        base=base,
        waive=tuple(w.upper() for w in waive),
        skip_boards=not with_boards,
        jobs=1 if profile else jobs or default_jobs(),
        cache=cache,
        widen=widen,
    )
    if not profile:
        with progress("orv check: loading") as show:
            outcome = report(evaluate(replace(config, progress=show)), options)
    else:
        start = time.perf_counter()
        with profiling() as timings:
            with stage("evaluate (everything above)"):
                evaluation = evaluate(config)
            with stage("report (format, job summary, outputs)"):
                outcome = report(evaluation, options)
        outcome.note(render_profile(timings, time.perf_counter() - start).rstrip("\n"))
    if base is not None:
        _warn_uncommitted(root, outcome)
    return outcome


PUSHED_DIRS = ("recipes", "runs", "catalog", "measurers")  # what a contributor's pull request carries


def _warn_uncommitted(root: str, outcome: Outcome) -> None:
    """--base judges the working tree; the pull request gets only what is committed. Say which registry
    files differ between the two, and the `git add` that closes the gap (issue 52)."""
    pending = uncommitted(root, PUSHED_DIRS)
    if not pending:
        return
    shown = ", ".join(pending[:5]) + (f" and {len(pending) - 5} more" if len(pending) > 5 else "")
    folders = " ".join(d for d in PUSHED_DIRS if any(p.startswith(d + "/") for p in pending)) or " ".join(PUSHED_DIRS)
    outcome.lines.insert(
        0,
        (
            "err",
            f"orv: warning: {len(pending)} file(s) under {', '.join(d + '/' for d in PUSHED_DIRS)} are not "
            f"committed ({shown}): this check judged them, but the pull request gets only what is committed. "
            f"Run `git add {folders} && git commit`, then `orv check --base` again.",
        ),
    )


def check_shard(root: str, shard: Shard, partial_out: str | None, jobs: int | None, progress: ProgressLine) -> Outcome:
    """`orv check --shard K/N`: one shard's per-file results written for `orv merge-results`; reports nothing."""
    out = _outside_the_registry(root, partial_out or default_partial_path(shard), "--partial-out")
    with progress(f"orv check --shard {shard}: loading") as show:
        written = _writing(
            "--partial-out", out, lambda: shards.check_shard(root, shard, out, jobs or default_jobs(), show)
        )
    outcome = Outcome()
    outcome.out(
        f"orv: shard {shard}: {written.files:,} recipe and run files loaded, {written.findings:,} finding(s) "
        f"among them; partial result written to {written.path} ({written.size:,} bytes). "
        "`orv merge-results` checks the rest and reports."
    )
    return outcome


def _outside_the_registry(root: str, path: str, option: str) -> str:
    """path, absolute, after refusing a place inside the registry's folders, where a written file would become
    part of the tree being checked."""
    out = os.path.abspath(path)
    # resolved, so a symlinked folder (`lnk -> recipes`) cannot put the file inside the tree
    inside = os.path.relpath(os.path.realpath(out), os.path.realpath(root)).replace(os.sep, "/")
    if inside.split("/")[0] in REGISTRY_DIRS:
        raise BadOptions(
            f"{option} {path}: inside the registry's {inside.split('/')[0]}/ "
            "folder, it would become part of the tree being checked; write it elsewhere"
        )
    return out


def _writing(option: str, out: str, write: Callable[[], T]) -> T:
    """write(), a path it cannot write (a missing folder's parent, no permission) a usage error naming `option`."""
    try:
        return write()
    except OSError as exc:
        raise BadOptions(f"{option} {out}: cannot write: {exc.strerror}") from None


def merge_results(
    root: str,
    partials: tuple[str, ...],
    waive: tuple[str, ...],
    with_boards: bool,
    options: ReportOptions,
    progress: ProgressLine,
    jobs: int | None = None,
    judged_files: tuple[str, ...] = (),
) -> Outcome:
    """Combine every shard's partial result, run the registry checks on them (ORV304's pairs judged in
    `jobs` processes, default the usable cores, or read from `judged_files`, the parts other runners judged),
    and report once."""
    with progress("orv merge-results: reading partials") as show:
        try:
            merged = merge(root, partials, show)
            files = [(path, read_judged(path)) for path in judged_files]
        except PartialRefused as exc:  # a finding on the partial (ORV901); nothing else can be reported
            return Outcome(findings=Result((exc.finding,)), exit_code=ExitCode.USAGE)
    evaluation = evaluate_loaded(
        Config(
            root=root, waive=tuple(w.upper() for w in waive), skip_boards=not with_boards, jobs=jobs or default_jobs()
        ),
        merged.loaded,
        (lambda snapshot: verdicts(snapshot, files, merged)) if files else None,
    )
    return report(evaluation, options)


def judge_merged(
    root: str, partials: tuple[str, ...], part: Part, judged_out: str | None, jobs: int | None, progress: ProgressLine
) -> Outcome:
    """`orv merge-results PARTIALS --judge K/N`: part K of ORV304's pairs judged, the verdicts written for the
    reporting merge (`--judged`); reports nothing else."""
    out = _outside_the_registry(root, judged_out or default_judged_path(part), "--judged-out")
    with progress("orv merge-results: reading partials") as show:
        try:
            merged = merge(root, partials, show, runs_only=True)
        except PartialRefused as exc:
            return Outcome(findings=Result((exc.finding,)), exit_code=ExitCode.USAGE)
    with stage("ORV304's pairs, one part judged"):
        written = _writing("--judged-out", out, lambda: judge_part(root, merged, part, out, jobs or default_jobs()))
    outcome = Outcome()
    outcome.out(
        f"orv: ORV304's pairs, part {part}: {written.pairs:,} of the merge's {written.total:,} judged, "
        f"{written.copies:,} found one measurement; written to {written.path} ({written.size:,} bytes). "
        "`orv merge-results PARTIALS --judged FILE...` with every part's file reports."
    )
    return outcome


def report(evaluation: Evaluation, options: ReportOptions) -> Outcome:
    """An Evaluation as asked (the job summary and outputs appended to their files), ending with its status."""
    if options.summary_file is not None or options.outputs_file is not None:
        built = summary.build(evaluation)
        if options.summary_file is not None:
            _append(options.summary_file, summary.render_markdown(built))
        if options.outputs_file is not None:
            _append(options.outputs_file, summary.render_outputs(built))
    result = evaluation.result
    threshold = Severity.ERROR if options.quiet else Severity(options.least)
    if options.fmt == "text":
        text = TextOptions(
            color=options.color,
            quiet=options.quiet,
            statistics=options.statistics,
            least=threshold,
            collapse=not options.show_all,
            legacy=imported_paths(evaluation.snapshot),
            titles={code: entry.title for code, entry in all_checks().items()},
        )
        return Outcome(report=render_with(result, text), color=options.color, exit_code=result.exit_code)
    shown = Result(
        tuple(d for d in result.diagnostics if d.severity.rank <= threshold.rank), result.files_checked, result.notes
    )
    return Outcome(report=REPORTER_BY_NAME[options.fmt](shown), exit_code=result.exit_code)


def relative(root: str, path: str) -> str:
    """PATH relative to the registry root ("" for the root itself); refused when it is outside."""
    rel = os.path.relpath(os.path.abspath(path), root).replace(os.sep, "/")
    if rel.startswith(".."):
        raise BadOptions(f"{path} is outside the registry at {root}")
    return "" if rel == "." else rel


def _append(path: str, text: str) -> None:
    """Append to a file another process also writes (GitHub's step files): never replace it."""
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)

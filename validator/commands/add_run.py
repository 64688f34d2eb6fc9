"""`orv add-run`: a tool's output (or a run document) -> a stored run file, recorded in its recipe.

The whole flow lives here so it can be driven and tested without Click: the CLI builds an
`AddRunRequest` from its options, calls `execute`, prints the outcome's lines and exits with its
code. Nothing here prints or exits; a bad invocation raises errors.UsageError (exit 2), and every
problem with the user's files comes back as findings in the outcome (exit 1).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from validator.adapters import (
    ADAPTER_BY_NAME,
    FORMATS,
    KIND_OF,
    Recomputed,
    check_identity,
    convert,
    metadata,
    records_in,
    with_report,
)
from validator.adapters import recomputed as recompute
from validator.adapters.detect import RUN, detect
from validator.commands.outcome import Outcome
from validator.diagnostics import Diagnostic, Result
from validator.engine.prospect import would_refuse
from validator.errors import AdapterError, AddRunError, ExitCode, InputFileError, Refusal, UsageError
from validator.evidence.signing import NO_TOOL, OK, SigningError, sign_run
from validator.files.atomic import transaction
from validator.files.yamledit import EditError
from validator.git.plumbing import tracked
from validator.git.sparse import materialize
from validator.load import contributor
from validator.load.contributor import Budget
from validator.load.references import unusable_as_reference
from validator.quality.add import add as add_quality
from validator.registry.catalog import load_catalog
from validator.registry.catalog_edits import set_model_references
from validator.registry.layout import MODELS_PATH
from validator.registry.recipe_edits import disagreeing_claims, recipe_write_problem, record_run_in_recipe
from validator.registry.store import StoredRun, add_run, refuse_inconsistent, store_run_document

ADAPTER_FORMATS = tuple(sorted(ADAPTER_BY_NAME))
QUALITY_FORMATS = ("lm-eval",)
TRAINING_FORMATS = tuple(
    sorted(f for f in ADAPTER_FORMATS if KIND_OF.get(f) == "training")
)  # validator.quality.add: an output directory or results file, not one file
SIZE_ONE_BY_DEFAULT = ("vpp", "cp", "ep", "etp")  # a layout without them means 1 (SPEC §6, ORV206 agrees)
# The most bytes read of FILE per --from format (its adapters.Format, docs/limits.md); any other name gets
# TOOL_OUTPUT's. Without --from the format is known only after reading, so the largest applies.
INPUT_BUDGET: dict[str, Budget] = {name: f.budget for name, f in FORMATS.items()}
UNDETECTED_BUDGET = max(
    (contributor.TOOL_OUTPUT, contributor.RUN_DOCUMENT, *INPUT_BUDGET.values()), key=lambda b: b.limit
)


@dataclass(frozen=True)
class AddRunRequest:
    """What the user asked for, options already parsed (paths as given, `-` for standard input)."""

    root: str
    file: str
    fmt: str | None = None
    recipe_path: str | None = None
    write_recipe: bool = False
    reference_for: str | None = None
    sign_key: str | None = None
    report: str | None = None  # a tool's second file of the run (trtllm-bench --report_json, AIPerf's summary)
    given: Mapping[str, Any] = field(default_factory=dict)  # metadata flags the user set (--model, --gpu, …)
    write_recipe_chosen: bool = True  # False: --write-recipe was left to its default (on only on a terminal)


def execute(request: AddRunRequest) -> Outcome:
    """Store the run the request names and record it where asked; see the module docstring."""
    if request.reference_for is not None and request.fmt not in QUALITY_FORMATS + TRAINING_FORMATS:
        raise UsageError(
            "--reference-for needs --from lm-eval (a quality reference) or --from megatron|nemo "
            "(a convergence reference)"
        )
    if request.reference_for is not None and request.fmt in TRAINING_FORMATS:
        if not request.given.get("workload"):
            raise UsageError(
                "a convergence reference takes --reference-for MODEL --workload W (with --recipe R for "
                "the stack, e.g. the model's baseline recipe)"
            )
        request = replace(request, given={**request.given, "model": request.reference_for})
    outcome = Outcome()
    _in_checkout(request.root, request.recipe_path)
    problem = recipe_write_problem(request.recipe_path) if request.write_recipe and request.recipe_path else None
    if problem:  # asked before storing: a run the recipe cannot list is not stored (docs/durability.md)
        return outcome.fail(
            f"orv: {request.recipe_path}: {problem}; nothing was stored. Make it writable and "
            "rerun, or rerun without --write-recipe"
        )
    try:
        prepared = None if request.fmt in QUALITY_FORMATS else _prepare(request, outcome)
        if prepared is not None:
            judged = _judged(request, prepared)
            seen = {(d.code, d.message) for d in prepared.identity}
            refused = prepared.identity + tuple(d for d in judged if (d.code, d.message) not in seen)
            if refused and not judged:  # the identity alone: as before, no judgement to name
                raise AddRunError(Result(prepared.identity))
            if refused:  # judged before anything is written: the tree stays as it was
                outcome.findings = Result(refused)
                outcome.exit_code = ExitCode.FINDINGS
                outcome.note(
                    f"orv: nothing was stored: `orv check` would refuse this run in {request.recipe_path} "
                    f"({len(refused)} error(s), all listed); measure again as `orv reproduce "
                    f"{request.recipe_path}` prints, or attach the output to the recipe it measured"
                )
                return outcome
        with transaction(request.root):  # the run file and the recipe's new line land together (docs/durability.md)
            stored = (
                _add_quality_run(request, outcome) if prepared is None else _store_prepared(request, prepared, outcome)
            )
    except AddRunError as exc:
        outcome.findings = exc.result
        outcome.exit_code = ExitCode.FINDINGS
        return outcome
    if stored is not None and request.sign_key and outcome.exit_code == ExitCode.OK:  # signs the file now in place
        sign_stored(request.root, os.path.join(request.root, stored.path), request.sign_key, outcome)
    return outcome


@dataclass(frozen=True)
class _Prepared:
    """A run ready to store: its document (or, for a run document given as it is, its bytes) and what
    the recipe is told about it. Nothing is written yet."""

    raw: bytes | None
    document: Any | None
    recomputed: Recomputed | None
    stated: dict[str, dict[str, Any]]
    measured_at: str | None
    identity: tuple[Diagnostic, ...] = ()  # the tool's output names another model or GPU (ORV226, ORV227, ORV249)


def _recipe_rel(request: AddRunRequest) -> str | None:
    if not request.recipe_path:
        return None
    rel = os.path.relpath(os.path.abspath(request.recipe_path), os.path.abspath(request.root)).replace(os.sep, "/")
    return None if rel.startswith("../") else rel


def _judged(request: AddRunRequest, prepared: _Prepared) -> tuple[Diagnostic, ...]:
    """Every error `orv check` would report once the run is stored and listed in its recipe (as
    --write-recipe would list it), judged by the check engine on the registry as it would be
    (engine/prospect.py). Only a tool's output for a recipe inside the registry is judged so."""
    rel = _recipe_rel(request)
    if rel is None or prepared.document is None:
        return ()
    document = prepared.document
    claim = prepared.recomputed.claim() if prepared.recomputed is not None else {}

    def change(scratch: str) -> list[str]:
        stored = store_run_document(scratch, document, request.file)
        record_run_in_recipe(
            os.path.join(scratch, rel), f"sha256:{stored.digest}", claim, prepared.stated, prepared.measured_at
        )
        return [stored.path]

    try:
        refused, _ = would_refuse(request.root, rel, change)
    except (EditError, OSError):
        return ()  # the recipe cannot be edited safely: the real edit says so, and what to write by hand
    return refused


def _in_checkout(root: str, recipe_path: str | None) -> None:
    """In a sparse checkout, the recipe (and the catalog a reference is written to) are checked out
    first: git tracks them even when the working tree leaves them out (validator/git/)."""
    wanted = [MODELS_PATH]
    if recipe_path:
        rel = os.path.relpath(os.path.abspath(recipe_path), os.path.abspath(root)).replace(os.sep, "/")
        # only a recipe git tracks: a mistyped path fails to load, and leaves no sparse pattern behind
        if not rel.startswith("../") and not os.path.exists(recipe_path) and rel in (tracked(root, rel) or []):
            wanted.append(rel)
    materialize(root, wanted)


def _add_quality_run(request: AddRunRequest, outcome: Outcome) -> StoredRun:
    stored, notes = add_quality(request.root, request.file, request.recipe_path, request.given, request.reference_for)
    for text in notes:
        outcome.note(f"note: {text}")
    _report_stored(stored, outcome)
    if request.recipe_path:  # a quality run is listed in `runs:` like any other (docs/quality.md)
        _record_in_recipe(request, f"sha256:{stored.digest}", None, {}, outcome)
    return stored  # signed by execute() with --sign-with, like any other run


def _prepare(request: AddRunRequest, outcome: Outcome) -> _Prepared:
    """Read and convert the output (every refusal of the adapters raised here), writing nothing."""
    try:
        inside = records_in(request.file, request.fmt) if os.path.isdir(request.file) else None
    except InputFileError as exc:
        raise AddRunError(Result((exc.diagnostic(),))) from None
    if os.path.isdir(request.file) and inside is None:
        raise UsageError(
            f"{request.file} is a directory; only --from lm-eval and --from aiperf (AIPerf's artifact "
            "directory) take one"
        )
    if request.write_recipe and not request.recipe_path:
        raise UsageError("--write-recipe needs --recipe PATH (the recipe this run backs)")
    if request.report is not None and request.fmt not in (None, "aiperf", "trtllm-bench"):
        raise UsageError("--report names the second file of an AIPerf or trtllm-bench run")
    raw = read_input(inside or request.file, request.fmt, inside is not None)
    fmt = request.fmt
    if fmt is None:
        fmt = detected_format(request.file, raw, bool(request.given or request.recipe_path), outcome)
    if fmt is None:
        return _Prepared(raw, None, None, {}, None)
    try:
        source = with_report(fmt, inside or request.file, raw, request.report)
        meta = metadata(fmt, request.root, request.recipe_path, request.given)
        converted = convert(fmt, source, meta)
    except AdapterError as exc:
        raise AddRunError(exc.result) from None
    identity: tuple[Diagnostic, ...] = ()
    try:  # a run of another model or GPU: said together with everything else `orv check` would say
        check_identity(request.root, request.recipe_path, source, converted)
    except AdapterError as exc:
        identity = exc.result.diagnostics
    for text in converted.notes:
        outcome.note(f"note: {text}")
    refuse_inconsistent(converted.document, request.file)  # the tool's own fields disagree: ORV212-216
    if request.reference_for is not None:  # asked before storing: a reference ORV244 refuses is not recorded
        _refuse_unusable_reference(request, converted.document)
    stated = {
        k: {n: x for n, x in v.items() if not (x == 1 and n in SIZE_ONE_BY_DEFAULT)}
        for k, v in converted.document.items()
        if k in ("layout", "serving")
    }
    return _Prepared(
        None,
        converted.document,
        recompute(converted.document, meta),
        stated,
        converted.document.get("measured_at"),
        identity,
    )


def _store_prepared(request: AddRunRequest, prepared: _Prepared, outcome: Outcome) -> StoredRun:
    if prepared.document is None:
        assert prepared.raw is not None
        stored = add_run(request.root, prepared.raw, source_name=request.file)
    else:
        stored = store_run_document(request.root, prepared.document, request.file)
    recomputed = prepared.recomputed
    _report_stored(stored, outcome)
    if recomputed is not None:
        outcome.note(headline_text(recomputed))
    if request.recipe_path:
        _record_in_recipe(
            request, f"sha256:{stored.digest}", recomputed, prepared.stated, outcome, prepared.measured_at
        )
    if outcome.exit_code != ExitCode.OK:
        return stored
    if request.reference_for is not None:
        set_convergence_reference(
            request.root, request.reference_for, str(request.given["workload"]), f"sha256:{stored.digest}"
        )
        outcome.note(
            f"{MODELS_PATH}: {request.reference_for}.convergence_reference.{request.given['workload']} now "
            "names this run (a change to an existing reference needs a maintainer's waiver, ORV621)"
        )
    return stored


def _refuse_unusable_reference(request: AddRunRequest, document: Mapping[str, Any]) -> None:
    """A convergence reference must pass the workload's check against itself (docs/convergence.md, ORV244)."""
    workload = str(request.given["workload"])
    why = unusable_as_reference(load_catalog(request.root).workloads, workload, document.get("samples"))
    if why:
        raise Refusal(
            f"this run cannot be {request.reference_for}'s convergence reference for `{workload}`: {why}; "
            "nothing was stored",
            "a reference is a healthy run of the model's baseline: every loss finite, every step of the "
            "workload's window logged, the loss falling over it (docs/convergence.md)",
            ExitCode.FINDINGS,
        )


def input_budget(fmt: str | None) -> Budget:
    """How much of FILE add-run reads for --from `fmt` (None: not given)."""
    if fmt is None:
        return UNDETECTED_BUDGET
    return INPUT_BUDGET.get(fmt, contributor.TOOL_OUTPUT)


def read_input(file: str, fmt: str | None = None, inside: bool = False) -> bytes:
    """The bytes of FILE (`-`: standard input) through the bounded reader; a refusal is a finding (exit 1).
    `inside`: FILE was found in a folder the user named (no link followed there, docs/limits.md)."""
    try:
        if inside:
            return contributor.read_inside(file, input_budget(fmt))
        return contributor.read_named(file, input_budget(fmt))
    except InputFileError as exc:
        raise AddRunError(Result((exc.diagnostic(),))) from None


def _report_stored(stored: StoredRun, outcome: Outcome) -> None:
    outcome.out(f"sha256:{stored.digest}")
    outcome.note(f"{'stored' if stored.created else 'already stored'}: {stored.path}")


def detected_format(file: str, raw: bytes, has_metadata: bool, outcome: Outcome) -> str | None:
    """The --from a file needs (None for a run document), or a usage error that names the right one."""
    found = detect(raw)
    if found is None:
        if has_metadata:
            raise UsageError(
                f"cannot tell which tool wrote {file}: metadata options (--recipe, --model, ...) "
                f"need --from FORMAT ({', '.join(ADAPTER_FORMATS)})"
            )
        return None  # stored as a run document; its findings say what is wrong with it
    if found.fmt == RUN:
        if has_metadata:
            raise UsageError(
                f"{file} is already a run document, stored as it is: metadata options "
                "(--recipe, --model, ...) apply to a tool's output only"
            )
        return None
    if not has_metadata:
        raise UsageError(
            f"{file} looks like {found.what}: use `orv add-run --from {found.fmt} --recipe "
            f"recipes/{KIND_OF[found.fmt]}/<model>/<id>.yaml {file}`"
        )
    outcome.note(f"note: {file} looks like {found.what}: reading it as --from {found.fmt}")
    return found.fmt


_HEADLINE_LABELS = (
    ("tokens_per_s_per_gpu", "tokens/s/GPU", ",.1f"),
    ("decode_tok_s", "decode tok/s per stream", ".2f"),
    ("ttft_ms", "TTFT ms", ".2f"),
    ("prefill_tok_s", "prefill tok/s per stream", ".1f"),
    ("output_tok_s", "output tok/s (all streams)", ".2f"),
)


def headline_text(recomputed: Recomputed) -> str:
    """The recomputed figures in words, and what the recomputation left out."""
    unit = recomputed.unit or ("optimizer steps" if recomputed.kind == "training" else "completed requests")
    if not recomputed.headline:
        return "recomputed: nothing (the run has no raw samples; it can support tier T1 only)"
    figures = ", ".join(
        f"{label} {recomputed.headline[key]:{spec}}"
        for key, label, spec in _HEADLINE_LABELS
        if key in recomputed.headline
    )
    lines = [f"recomputed from {recomputed.samples} {unit}: {figures}"]
    lines += [f"excluded: {what}" for what in recomputed.excluded]
    return "\n".join(lines)


def _record_in_recipe(
    request: AddRunRequest,
    reference: str,
    recomputed: Recomputed | None,
    stated: dict[str, dict[str, Any]],
    outcome: Outcome,
    measured_at: str | None = None,
) -> None:
    recipe_path = request.recipe_path
    assert recipe_path is not None
    claim = recomputed.claim() if recomputed is not None else {}
    for metric, claimed, figure in disagreeing_claims(recipe_path, recomputed.headline if recomputed else {}):
        outcome.note(
            f"note: the recipe claims {metric} {claimed:g} but this run gives {figure:.4g} "
            f"({abs(claimed - figure) / figure:.1%} apart; `orv check` reports ORV207 beyond 1% when this run is "
            "the claim's primary run, the first listed with samples; a later run is held to the primary within "
            "5%, ORV245)"
        )
    if not request.write_recipe:
        why = (
            "" if request.write_recipe_chosen else " (standard output is not a terminal, so the recipe was not edited)"
        )
        outcome.note(f'next: add `- "{reference}"` under `runs:` in {recipe_path} (or rerun with --write-recipe){why}')
        return
    try:
        update = record_run_in_recipe(recipe_path, reference, claim, stated, measured_at)
    except (EditError, OSError) as exc:
        outcome.fail(f'orv: {recipe_path} was not edited ({exc}); add `- "{reference}"` under `runs:` by hand')
        return
    done = []
    if update.added_run:
        done.append("added the run to `runs:`")
    if update.filled_claim:
        where = "`claimed:`" if update.point is None else f"the sweep's claim at concurrency {update.point}"
        done.append(f"filled {where} with " + ", ".join(f"{k}: {v:g}" for k, v in update.filled_claim.items()))
    if update.added:
        done.append(
            "added what the tool's output states and the recipe lacked: "
            + ", ".join(f"{k}: {v}" for k, v in update.added.items())
        )
    if update.dated:
        done.append(f"set `measured:` to the run's date {update.dated} (it was orv new's default, today)")
    chosen = "" if request.write_recipe_chosen else " (--write-recipe: on by default on a terminal)"
    outcome.note(f"{recipe_path}: {'; '.join(done) if done else 'already lists this run'}{chosen}")
    if update.kept_date:
        outcome.note(
            f"note: the recipe says measured {update.kept_date[0]} but the run was measured "
            f"{update.kept_date[1]}: the recipe's date is kept (edit it if the run's is right)"
        )


def sign_stored(root: str, run: str, key: str, outcome: Outcome) -> None:
    """Sign a stored run file (`orv sign`, `add-run --sign-with`) and say whose signature it is."""
    try:
        sig, verdict = sign_run(root, run, key)
    except SigningError as exc:
        outcome.fail(f"error: {exc}")
        return
    outcome.note(f"signed: {sig}")
    if verdict.status == OK:
        outcome.note(f"verified: signature by registered measurer `{verdict.principal}`")
    elif verdict.status == NO_TOOL:
        outcome.note("note: ssh-keygen cannot verify here")
    else:
        outcome.note(
            f"note: key {verdict.fingerprint} is not registered in measurers/allowed_signers yet: "
            "`orv check` reports ORV222 until a maintainer registers it"
        )


def set_convergence_reference(root: str, model: str, workload: str, ref: str) -> None:
    """Write `convergence_reference: {workload: sha256:…}` into the model's entry, round-trip (comments kept)."""
    try:
        set_model_references(root, model, "convergence_reference", {workload: ref})
    except (OSError, KeyError, TypeError, EditError) as exc:
        raise UsageError(
            f"cannot record the convergence reference for {model} ({exc}): add "
            f'`convergence_reference: {{{workload}: "{ref}"}}` under `{model}:` in {MODELS_PATH}'
        ) from None

"""ORV2xx integrity: run files are what their names say, canonical, referenced once, back their recipe, and
hold figures the boards can show."""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from typing import Any

from validator.boards.figures import SMALLEST_RATE, too_small_to_show
from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.agreement import (
    CLAIM_TOLERANCE,
    REPRODUCTION_AGREEMENT,
    agreement,
    claim_gaps,
    mismatches,
    point_of,
    primary_of,
)
from validator.hashing import canonical_bytes, content_address, run_path
from validator.load.run_budget import over_budget
from validator.models import InferenceRecipe
from validator.registry.layout import misplaced_run
from validator.registry.relations import raw_references
from validator.registry.snapshot import Catalog, RecipeEntry, RunFile, Snapshot
from validator.science.throughput import relative_gap

E, W = Severity.ERROR, Severity.WARNING


def _short(digest: str) -> str:
    return f"sha256:{digest[:12]}…"


def _figure(value: float) -> str:
    """A figure as a contributor would write it: 1480.4, 0.912, 12,345.6."""
    if not math.isfinite(value):
        return str(value)
    if abs(value) >= 100:
        return f"{value:,.1f}"
    return f"{value:.4g}"


# --------------------------------------------------------------------------- run file, bytes in memory


@check("ORV201", E, "run file name is not the SHA-256 of its bytes", scope="run-file")
def name_is_hash(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A run file is stored at runs/<h[:2]>/<h>.json where h is the SHA-256 of its exact bytes, so
    that `sha256sum` of the file equals its name and a recipe's `sha256:` reference pins exactly
    the evidence a reviewer saw. A different hash means the bytes were edited after they were
    stored (or stored under a wrong name). Run files are append-only evidence: restore the
    original bytes from git. If the content really is a new measurement, store it as a new run
    with `orv add-run FILE` and reference the `sha256:` it prints.
    """
    if run.name_digest is None or run.name_digest == run.actual_digest:
        return
    hint = (
        "restore the original bytes with `git checkout -- <file>`; a changed measurement is a new run: "
        "`orv add-run FILE` stores it under its own hash, then reference that sha256 in the recipe"
    )
    if not run.canonical and _canonical_digest(run.doc.data) == run.name_digest:
        hint = (
            "only the formatting changed: the canonical form of this content has the expected hash; "
            "restore the file from git (or `orv add-run` it again) instead of editing it"
        )
    yield Finding(
        run.path,
        f"SHA-256 of the bytes does not match the file name: expected {run.name_digest} "
        f"(the name), actual {run.actual_digest} (the bytes)",
        hint,
        line=1,
        col=1,
    )


def _canonical_digest(data: Any) -> str | None:
    try:
        return content_address(canonical_bytes(data))
    except Exception:  # noqa: BLE001 - data that JCS cannot encode simply has no canonical digest
        return None


@check("ORV202", E, "run file is not RFC 8785 canonical JSON", scope="run-file")
def bytes_are_canonical(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A run file's bytes must be the RFC 8785 (JCS) canonical serialization of its document:
    keys sorted, no whitespace, numbers in shortest form, UTF-8. Only then does the same content
    always have the same address, whoever stored it and with whatever tool. The finding points
    at the first byte that differs from the canonical form. Do not reformat run files by hand:
    `orv add-run FILE` writes the canonical form and prints its sha256 reference.
    """
    if run.canonical:
        return
    try:
        expected = canonical_bytes(run.doc.data)
    except Exception as exc:  # noqa: BLE001 - data JCS cannot encode; say what it refused
        yield Finding(
            run.path,
            f"the document cannot be written in RFC 8785 canonical form ({_jcs_refusal(exc)})",
            "write such values as strings or smaller numbers, then store the file with `orv add-run FILE`",
            line=1,
            col=1,
        )
        return
    offset = _first_difference(run.raw, expected)
    line, col = _offset_location(run.raw, offset)
    yield Finding(
        run.path,
        f"bytes are not RFC 8785 canonical JSON (first difference at byte {offset}: "
        f"{_snippet(run.raw, offset)} where canonical form has {_snippet(expected, offset)})",
        "`orv add-run` writes the canonical form: run it on the tool's output and commit the file it "
        "creates (its name changes with its bytes) instead of this one",
        line=line,
        col=col,
    )


def _jcs_refusal(exc: Exception) -> str:
    """What rfc8785 refused, in words: only a number beyond 2^53 is "a number" (a lone surrogate is not)."""
    import rfc8785

    if isinstance(exc, rfc8785.IntegerDomainError):
        return "it holds an integer beyond 2^53, which JCS cannot represent exactly"
    if isinstance(exc, rfc8785.FloatDomainError):
        return "it holds a number that is not finite"
    if "UTF-8" in str(exc):
        return "it holds text that is not valid Unicode, such as a lone surrogate escape `\\ud800`"
    return f"JCS refused it: {exc}"


def _first_difference(a: bytes, b: bytes) -> int:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def _offset_location(raw: bytes, offset: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, offset) + 1
    start = raw.rfind(b"\n", 0, offset) + 1
    return line, len(raw[start:offset].decode("utf-8", errors="replace")) + 1


def _snippet(raw: bytes, offset: int) -> str:
    piece = raw[offset : offset + 12]
    return repr(piece.decode("utf-8", errors="replace")) if piece else "end of file"


@check("ORV211", E, "run file over its kind's size budget", scope="run-file")
def within_budget(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A run file is larger than its kind allows: 4 MiB for training, 2 MiB for inference, 8 MiB for
    quality (docs/limits.md, "Run-file budgets"; validator/load/run_budget.py). Run files are append-only,
    so every clone and every fresh runner carries each one forever; a run file holds what
    recomputation reads (the samples) and no more. Each budget is several times what an honest run of
    its kind measures (bench/run_sizes.py: a 10,000-iteration Megatron-LM log, a 1,000-request sweep
    point, a full gsm8k evaluation). `orv add-run` refuses such a file before storing it; the hint says
    how to split the measurement.
    """
    kind = run.doc.data.get("kind") if isinstance(run.doc.data, dict) else None
    found = over_budget(kind, len(run.raw))
    if found is not None:
        yield Finding(run.path, found[0], found[1], line=1, col=1)


@check("ORV208", E, "run summary disagrees with its raw samples", scope="run-file")
def summary_matches_samples(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A run file's `summary` (the benchmark tool's own headline) must agree within 1% with the
    same figure recomputed from its raw samples (definitions in validator/science/throughput.py: training
    tokens/s/GPU over the steps after the workload's warm-up; inference per-request means). A
    larger gap means the summary was edited, or the samples are not the ones the tool measured.
    Re-export the run from the tool; do not edit either part by hand.
    """
    if run.meta is None or run.facts is None or not run.facts.has_samples:
        return
    for metric, stated in sorted(run.meta.summary.items()):
        recomputed = run.facts.headline.get(metric)
        if recomputed is None or relative_gap(stated, recomputed) <= CLAIM_TOLERANCE:
            continue
        yield Finding(
            run.path,
            f"summary.{metric} is {_figure(stated)} but the {run.facts.sample_count} raw samples "
            f"give {_figure(recomputed)} ({_percent(relative_gap(stated, recomputed))} apart)",
            f"the samples give summary.{metric} = {_figure(recomputed)}; export the run again from the "
            "tool rather than editing the summary",
            at=("summary", metric),
        )


@check("ORV217", E, "run figure too small for the boards to show", scope="run-file")
def figures_can_be_shown(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    Every rate a run puts on the boards (its decode, prefill and output tok/s, its output tok/s per
    GPU on the frontier, a training run's tokens/s/GPU; recomputed from its samples, else its
    tool's summary) must be at least what the boards show above 0: they keep two decimals, so a
    positive rate under 0.005 tok/s would be published as 0.00, and the boards schema refuses a
    frontier point at 0 tok/s per GPU. The rule is one (validator/boards/figures.py): the gate
    refuses here what the boards could not show, so a merged file never stops `orv boards`.

    No real measurement is that slow: it is a unit slip, most often a `duration_s` written in
    milliseconds (1,000× too long) or a step time in the wrong unit. Store the tool's own output
    again with `orv add-run --from TOOL`, or correct the unit.
    """
    meta, facts = run.meta, run.facts
    if meta is None:
        return
    recomputed = facts is not None and facts.has_samples
    figures = facts.headline if facts is not None and recomputed else meta.summary
    duration = run.doc.data.get("duration_s") if isinstance(run.doc.data, dict) else None
    for found in too_small_to_show(figures, meta.hardware.count):
        shown = f"{found.value:.3g} tok/s"
        least = f"the least the boards show is {SMALLEST_RATE:g} tok/s"
        if found.figure.startswith("output_tok_s") and isinstance(duration, (int, float)):
            per = f" per GPU over {meta.hardware.count:,} GPUs" if found.figure.endswith("per GPU") else ""
            yield Finding(
                run.path,
                f"`duration_s` is {duration:,.6g} s, which gives {shown} of output{per}: the boards would "
                f"show 0.00 ({least})",
                "`duration_s` is the run's wall time in seconds; a duration in milliseconds entered as "
                "seconds is 1,000× too long. Store the tool's own output again with `orv add-run --from TOOL`",
                at=("duration_s",),
            )
            continue
        source = "recomputed from the samples" if recomputed else "in the summary"
        yield Finding(
            run.path,
            f"`{found.figure}` {source} is {shown}: the boards would show 0.00 ({least})",
            "no real run is this slow: check the samples' units (time_s in seconds, ttft_ms and e2e_ms in "
            "milliseconds) and store the tool's own output again with `orv add-run --from TOOL`",
            at=("samples",) if recomputed else ("summary", found.figure.split()[0]),
        )


def _percent(gap: float) -> str:
    return f"{gap * 100:.1f}%" if math.isfinite(gap) else "infinitely far"


# --------------------------------------------------------------------------- registry: runs vs recipes


def _misplaced_by_digest(snapshot: Snapshot) -> dict[str, str]:
    out = {}
    for rel in snapshot.files:
        if misplaced_run(rel):
            out[rel.rsplit("/", 1)[-1].removesuffix(".json")] = rel
    return out


@check("ORV203", E, "referenced run file is missing", related_by="r")
def referenced_run_exists(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A recipe's `runs:` lists `sha256:<hash>` references; each must have its file at
    runs/<hash[:2]>/<hash>.json in the same pull request. A reference without its file is a
    claim of evidence nobody can check. Add the file with `orv add-run FILE` (it prints the
    reference to copy), or remove the reference.
    """
    misplaced = _misplaced_by_digest(snapshot)
    for entry, recipe in snapshot.valid_recipes():
        for i, digest in enumerate(recipe.run_digests):
            if digest in snapshot.runs:
                continue
            hint = (
                f"the file is at {misplaced[digest]}; move it to {run_path(digest)}"
                if digest in misplaced
                else f"add the run file at {run_path(digest)} with `orv add-run FILE`, or remove this reference"
            )
            yield Finding(
                entry.path,
                f"runs[{i}] references sha256:{digest}, but there is no {run_path(digest)}",
                hint,
                at=("runs", i),
            )


@check("ORV204", E, "orphan run file", related_by="r")
def run_is_referenced(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Every run file must back a recipe: some recipe's `runs:` lists its `sha256:` reference. Run
    files are append-only (ORV6xx), so an orphan merged today could never be removed. Reference
    it from the recipe it measures (`runs: ["sha256:<hash>"]`), or leave it out of the pull request.
    A run a model names as its convergence reference (catalog/models.yaml) is referenced there.
    """
    referenced = {digest for entry in snapshot.recipes for _, digest in raw_references(entry)}
    referenced |= {
        ref.split(":", 1)[-1]
        for spec in snapshot.catalog.models.values()
        for ref in spec.convergence_reference.values()
    }
    for digest, run in snapshot.runs.items():
        if digest not in referenced and run.meta is not None:  # an unreadable file has its own finding
            yield Finding(
                run.path,
                f"no recipe references this run file (sha256:{digest})",
                f'add "sha256:{digest}" to the `runs:` list of the recipe it measures, '
                "or remove the file from the pull request",
                line=1,
                col=1,
            )


@check("ORV205", E, "run file referenced by two recipes", related_by="r")
def run_referenced_once(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A run file measures one configuration, so it is evidence for exactly one recipe. The same
    run under two recipes would count one measurement twice (and lift both to a tier only one
    earned). Keep the reference in the recipe whose settings the run used; the other recipe
    needs its own run. Reported at every recipe that references the shared run.
    """
    users: dict[str, list[tuple[RecipeEntry, int]]] = {}
    for entry, _ in snapshot.valid_recipes():
        for i, digest in raw_references(entry):
            users.setdefault(digest, []).append((entry, i))
    for digest, refs in sorted(users.items()):
        if len(refs) < 2:
            continue
        for entry, i in refs:
            others = ", ".join(other.path for other, _ in refs if other.path != entry.path)
            yield Finding(
                entry.path,
                f"run {_short(digest)} is also referenced by {others}",
                "keep the reference only in the recipe whose settings the run measured; "
                "measure the other recipe separately",
                at=("runs", i),
            )


@check("ORV206", E, "run metadata disagrees with its recipe", related_by="r")
def run_matches_recipe(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A run is evidence for a recipe only if it measured that recipe: the run file's model,
    hardware (GPU and count), software (every component and pin), and the training layout and
    workload or the inference quant and serving settings must equal the recipe's. The finding
    sits on the recipe's `runs[i]` reference and names the field with both values. Fix the
    recipe if it was written wrongly; if the run measured a different setup, that setup is a
    different recipe.
    """
    for entry, recipe, i, run in snapshot.recipe_runs():
        digest = run.name_digest
        for m in mismatches(snapshot, entry.path, recipe, run):
            fix = (
                f"add {m.run_value} to sweep.concurrency (and its claim to sweep.claimed)"
                if m.field == "sweep.concurrency"
                else f"set `{m.field}` to {_value(m.run_value)}"
            )
            yield Finding(
                entry.path,
                f"run {_short(digest)} disagrees on `{m.field}`: recipe has {_value(m.recipe_value)}, "
                f"run has {_value(m.run_value)}",
                f"if the recipe is wrong, {fix}; otherwise this run measured another setup and belongs "
                "to another recipe",
                at=("runs", i),
            )


def _value(value: Any) -> str:
    if value is None:
        return "nothing"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_value(v)}" for k, v in value.items()) + "}"
    return f"`{value}`"


@check("ORV207", E, "claimed figure differs from the run's raw samples", related_by="r")
def claim_matches_samples(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A claimed figure must agree within 1% with the same figure recomputed from the raw samples
    of its primary run (training tokens/s/GPU over the steps after the workload's warm-up;
    inference decode and prefill rates and TTFT per request; definitions in
    validator/science/throughput.py). The submitter's number is never taken on trust. Claims come
    from one run: the primary run of a claim is the first run listed in the recipe's `runs:` that
    measured its point (the headline, or a sweep point of `sweep.claimed`) and holds raw samples;
    `orv add-run` appends runs and fills an empty claim from the run it adds, so it is the run the
    claim was filled from. Later runs at the point are reproductions, held to the primary within
    T3's 5% instead (ORV245). Set the claim to the recomputed figure the message gives, or list
    the run that measured the claim first. Runs whose metadata disagrees with the recipe are left
    to ORV206.
    """
    for entry, recipe, _, run in snapshot.recipe_runs():
        if mismatches(snapshot, entry.path, recipe, run):
            continue
        primary = primary_of(snapshot, entry.path, recipe, run)
        if primary is not None and primary.name_digest != run.name_digest:
            continue  # a reproduction answers to its primary run (ORV245), not to the claim
        digest = run.name_digest
        point = point_of(run)
        swept = isinstance(recipe, InferenceRecipe) and recipe.sweep is not None and point != recipe.serving.concurrency
        for gap in claim_gaps(recipe, run.facts, point):
            if gap.within_tolerance:
                continue
            field = f"sweep.claimed (concurrency {point}) {gap.metric}" if swept else f"claimed.{gap.metric}"
            yield Finding(
                entry.path,
                f"{field} is {_figure(gap.claimed)} but run {_short(digest)}'s raw samples "
                f"give {_figure(gap.recomputed)} ({_percent(gap.gap)} apart; at most 1% is allowed)",
                f"set {_setting(gap.metric, point if swept else None)}: "
                f"{_figure(gap.recomputed).replace(',', '')}, or reference the run that measured the "
                "claimed figure",
                at=_sweep_claim_at(recipe, point, gap.metric)  # swept: an inference recipe
                if swept and isinstance(recipe, InferenceRecipe)
                else ("claimed", gap.metric),
            )


@check("ORV245", W, "reproduction disagrees with its primary run", related_by="r")
def reproduction_agrees_with_primary(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Claims come from one run (ORV207): the claim is held within 1% to its primary run, the first
    run listed at its point with raw samples. A later run at the same point is a reproduction: a
    re-measurement is expected to land near the primary, not on the claim to the last percent, so
    it is held to T3's tolerance, within 5% of the primary on every claimed figure both recompute.
    Further off, the two runs disagree: a warning, never an error (an honest re-measurement can
    land there), but the reproduction does not count as verified evidence, the recipe cannot
    reach T3 from it, and the tier reason names it. Check that the reproduction measured the same
    configuration and workload; if it did, the disagreement is the finding, and a third
    measurement tells which run is off.
    """
    for entry, recipe, i, run in snapshot.recipe_runs():
        if mismatches(snapshot, entry.path, recipe, run):
            continue
        primary = primary_of(snapshot, entry.path, recipe, run)
        if primary is None or primary.name_digest == run.name_digest:
            continue
        for g in agreement(recipe, primary.facts, run.facts, point_of(run)):
            if g.agrees:
                continue
            yield Finding(
                entry.path,
                f"reproduction {_short(run.name_digest)}'s {g.metric} is {_figure(g.other)}, "
                f"{_percent(g.gap)} from the primary run {_short(primary.name_digest)}'s {_figure(g.primary)} "
                f"(a reproduction agrees within {REPRODUCTION_AGREEMENT:.0%}); it is shown as disagreeing "
                "and cannot make the recipe T3",
                "check that both runs measured this configuration and workload; if they did, a third "
                "measurement tells which one is off",
                at=("runs", i),
            )


def _setting(metric: str, point: int | None) -> str:
    return f"claimed.{metric}" if point is None else f"the sweep.claimed entry of concurrency {point}'s {metric}"


def _sweep_claim_at(recipe: InferenceRecipe, point: int | None, metric: str) -> tuple[Any, ...]:
    """Where a sweep point's claimed figure stands in the recipe: sweep.claimed[i].metric."""
    assert recipe.sweep is not None
    index = next(i for i, p in enumerate(recipe.sweep.claimed) if p.concurrency == point)
    return ("sweep", "claimed", index, metric)


@check("ORV209", E, "run file in the wrong shard folder", per_file=True)
def run_in_its_shard(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A run file named <h>.json lives in runs/<first two hex of h>/. A file with a valid hash
    name in another folder is not found by its reference and is not checked as a run. Move it
    to the folder its name gives (`orv add-run FILE` always stores it there).
    """
    for rel in snapshot.files:
        correct = misplaced_run(rel)
        if correct and not os.path.islink(os.path.join(snapshot.root, rel)):  # a link is ORV114's
            folder = rel.rsplit("/", 1)[0] + "/"
            yield Finding(
                rel,
                f"run file is in {folder} but its hash starts with {correct.split('/')[1]}",
                f"move it to {correct}",
                line=1,
                col=1,
            )

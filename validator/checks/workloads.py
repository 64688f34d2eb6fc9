"""ORV24x protocols: a recipe names a workload of its kind, and its runs' samples prove it (docs/protocols.md)."""

from __future__ import annotations

from collections.abc import Iterator

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.agreement import workload_problems
from validator.models import UNSPECIFIED, InferenceRecipe
from validator.registry.layout import WORKLOADS_PATH
from validator.registry.snapshot import Snapshot

E = Severity.ERROR


def _inference_ids(snapshot: Snapshot) -> str:
    ids = sorted(k for k, w in snapshot.catalog.workloads.items() if w.is_inference)
    return ", ".join(f"`{i}`" for i in ids) or f"(none in {WORKLOADS_PATH})"


@check("ORV240", E, "recipe names no workload of its kind", per_file=True)
def recipe_names_its_workload(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Every figure is measured on a fixed workload (catalog/workloads.yaml; docs/protocols.md), so
    two rows are comparable only on the same one. An inference recipe must name an inference
    workload (`workload: isl1k-osl1k`, …); a training recipe a training one (sft, pretrain). The
    `unspecified` workload stands for rows imported from a source that recorded none (they carry
    `provenance`, which only `orv import` writes): a new recipe cannot use it, nor leave the
    field out. Name the workload your benchmark ran (`orv reproduce` prints its command);
    `orv new inference --workload W` writes it for you.
    """
    if not snapshot.catalog_ok:
        return
    workloads = snapshot.catalog.workloads
    for entry, recipe in snapshot.valid_recipes():
        legacy = recipe.provenance is not None
        if isinstance(recipe, InferenceRecipe):
            if recipe.workload is None and not legacy:
                yield Finding(
                    entry.path,
                    "inference recipe names no `workload`: its figures cannot be compared or reproduced",
                    f"add `workload:` with one of {_inference_ids(snapshot)}",
                    at=(),
                )
                continue
            if recipe.workload == UNSPECIFIED and not legacy:
                yield Finding(
                    entry.path,
                    "`workload: unspecified` is kept for imported rows whose source recorded no workload",
                    f"name the workload you measured: one of {_inference_ids(snapshot)}",
                    at=("workload",),
                )
                continue
        spec = workloads.get(recipe.workload) if recipe.workload is not None else None
        if spec is None or spec.kind == "unspecified":
            continue  # unknown ids are ORV115's
        if (recipe.kind == "inference") != spec.is_inference:
            yield Finding(
                entry.path,
                f"`workload: {recipe.workload}` is a {spec.kind} workload, and this is an {recipe.kind} recipe"
                if recipe.kind == "inference"
                else f"`workload: {recipe.workload}` is a {spec.kind} workload, and this is a training recipe",
                "name a workload of the recipe's kind"
                + (f": one of {_inference_ids(snapshot)}" if recipe.kind == "inference" else ""),
                at=("workload",),
            )


def _workload_findings(snapshot: Snapshot, code: str) -> Iterator[Finding]:
    for entry, recipe, i, run in snapshot.recipe_runs():
        for misfit in workload_problems(snapshot, entry.path, recipe, run):
            if misfit.code == code:
                yield Finding(
                    entry.path, f"run sha256:{run.name_digest[:12]}…: {misfit.message}", misfit.hint, at=("runs", i)
                )


@check("ORV241", E, "run's request lengths do not match the recipe's workload", related_by="r")
def run_lengths_match_workload(snapshot: Snapshot) -> Iterator[Finding]:
    """
    An inference run's samples hold every completed request's prompt and output length, so the
    workload it was measured on is checked, not trusted. Every request's lengths must lie in the
    workload's range, [⌊range_ratio × L⌋, L] for L = input_len and output_len, give or take the
    workload's `length_slack` (2% by default: re-tokenisation drift); with `ignore_eos: false`
    an answer may end early, so outputs are checked only from above. The finding names which
    length was off, the measured mean and the expected range: "mean input length 241 tokens,
    578 below the range; workload `isl1k-osl1k` (1k/1k) expects 819–1,024 tokens per request".
    A run measured on another workload belongs to a recipe that names that workload. Measure
    again with the workload's settings (`orv reproduce RECIPE` prints the command).
    """
    yield from _workload_findings(snapshot, "ORV241")


@check("ORV242", E, "run measured too few requests for its workload", related_by="r")
def run_has_enough_prompts(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A workload fixes how many requests a measurement takes: at least `min_prompts`, and
    `prompts_per_concurrency` × the run's concurrency (InferenceX's 10 × concurrency), counted
    over completed requests after warm-up (benchmark tools leave warm-up requests out of their
    results). The run's concurrency is the recipe's `serving.concurrency`, or for a run at another
    point of a sweep that point's (a c64 point needs 640 prompts of a 10-per-concurrency workload,
    whatever the headline's). A shorter run is noise. Run the benchmark with the `--num-prompts`
    the message gives.
    """
    yield from _workload_findings(snapshot, "ORV242")


@check("ORV243", E, "run's concurrency differs from the recipe's", related_by="r")
def run_keeps_its_concurrency(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Throughput depends on how many requests are served at once, so an inference recipe on a
    specified workload states `serving.concurrency` (the benchmark's `--max-concurrency`), a
    workload that fixes one (the single-stream workload: 1) gets exactly that, and a run whose
    start times show more requests in flight than the stated concurrency measured another
    configuration. Set the concurrency the benchmark ran at, or run it at the stated one.
    """
    yield from _workload_findings(snapshot, "ORV243")


@check("ORV247", E, "run's llama-bench test is not the recipe's workload", related_by="r")
def run_is_the_workloads_llama_bench_test(snapshot: Snapshot) -> Iterator[Finding]:
    """
    llama.cpp's `llama-bench` times a synthetic test, not a served workload: a `pp` test processes
    n_prompt prompt tokens, a `tg` test generates n_gen tokens, each after n_depth tokens of context,
    repeated -r times (docs/protocols.md). Its tests are `kind: llama-bench` workloads
    (`llama-bench-pp512`, `llama-bench-tg128`), and its figures are ranked only against the same
    test. So a llama-bench run backs only a recipe whose workload is the test it ran (a tg128 run on
    a pp512 recipe is refused, naming the field that differs), a recipe on a llama-bench workload
    is backed only by a llama-bench run, and a llama-bench run never backs a served workload.
    Attach the run to the recipe of its test, or run the workload's test (`orv reproduce RECIPE`).
    """
    yield from _workload_findings(snapshot, "ORV247")

"""ORV5xx consistency and physics: Megatron-Core's layout rules, and figures no hardware can reach."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.evidence.agreement import headline_unmeasured
from validator.models import (
    GpuSpec,
    InferenceRecipe,
    ModelSpec,
    RunMeta,
    Speculative,
    TrainingRecipe,
)
from validator.registry.layout import MODELS_PATH
from validator.registry.snapshot import Catalog, RecipeEntry, RunEntry, RunFile, Snapshot
from validator.science.physics import (
    DECODE_READ_FRACTION,
    ComputeBound,
    DecodeBound,
    compute_bound_for,
    decode_bound_for,
    implied_mfu,
    is_moe,
    mfu_ceiling,
    tokens_at_mfu,
)
from validator.science.throughput import RunFacts

E, W = Severity.ERROR, Severity.WARNING

# Summary figures are rounded by tools and timers differ by a little; 1% keeps ORV511 for the impossible.
AGGREGATE_TOLERANCE = 0.01
_MAX_LISTED_DIVISORS = 10**7  # list valid values in hints only for numbers this small


def _fig(value: float) -> str:
    if not math.isfinite(value):
        return str(value)
    return f"{value:,.1f}" if abs(value) >= 100 else f"{value:.3g}"


def _pct(value: float) -> str:
    return f"{value * 100:.1f}%" if math.isfinite(value) else str(value)


def divisors(n: int) -> list[int]:
    """Divisors of n, ascending (empty for n too large to list in a hint)."""
    if n < 1 or n > _MAX_LISTED_DIVISORS:
        return []
    small = [d for d in range(1, math.isqrt(n) + 1) if n % d == 0]
    return sorted(set(small + [n // d for d in small]))


def _choices(values: list[int], limit: int = 12) -> str:
    if not values:
        return "{…}"
    shown = ", ".join(str(v) for v in values[:limit])
    return "{" + shown + (", …}" if len(values) > limit else "}")


def _training(snapshot: Snapshot) -> Iterator[tuple[RecipeEntry, TrainingRecipe]]:
    for entry, recipe in snapshot.valid_recipes():
        if isinstance(recipe, TrainingRecipe):
            yield entry, recipe


def _inference(snapshot: Snapshot) -> Iterator[tuple[RecipeEntry, InferenceRecipe]]:
    for entry, recipe in snapshot.valid_recipes():
        if isinstance(recipe, InferenceRecipe):
            yield entry, recipe


def layout_text(tp: int, pp: int, cp: int, dp: int) -> str:
    return f"TP{tp}×PP{pp}×CP{cp}×DP{dp}"


# --------------------------------------------------------------------------- layout rules (training)


@check("ORV501", E, "layout does not multiply to the GPU count", per_file=True)
def layout_covers_gpus(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Megatron-Core places every GPU in exactly one (TP, PP, CP, DP) coordinate, so
    TP × PP × CP × DP must equal `hardware.count` (CP and DP default to 1; expert parallelism
    folds into these GPUs and does not multiply, see ORV502). The hint gives the DP that the
    stated GPU count implies, or the count the layout implies.
    """
    for entry, recipe in _training(snapshot):
        lay, gpus = recipe.layout, recipe.hardware.count
        product = lay.tp * lay.pp * lay.cp * lay.dp
        if product == gpus:
            continue
        model_parallel = lay.tp * lay.pp * lay.cp
        stated = f"{product} GPUs = {layout_text(lay.tp, lay.pp, lay.cp, lay.dp)}"
        if gpus % model_parallel == 0:
            hint = f"{stated}; with {gpus} GPUs DP would be {gpus // model_parallel} (or set hardware.count: {product})"
        else:
            hint = (
                f"{stated}; {gpus} GPUs is not a multiple of TP×PP×CP = {model_parallel}: set "
                f"hardware.count: {product}, or change TP, PP or CP"
            )
        yield Finding(
            entry.path, f"the layout covers {product} GPUs but hardware.count is {gpus}", hint, at=("layout", "dp")
        )


@check("ORV502", E, "expert parallelism does not fold into the layout", per_file=True)
def experts_fold(snapshot: Snapshot) -> Iterator[Finding]:
    """
    MoE parallel folding (Megatron-Core): the expert layers re-partition the same GPUs that
    attention uses as TP × CP × DP, into ETP × EP × expert-DP. So EP × ETP must divide
    TP × CP × DP. `etp` is optional and 1 when absent, as every MoE layout in the training
    leaderboard implies. The hint lists the EP values that fold.
    """
    for entry, recipe in _training(snapshot):
        lay = recipe.layout
        dense_group = lay.tp * lay.cp * lay.dp
        if dense_group % (lay.ep * lay.etp) == 0:
            continue
        if dense_group % lay.etp == 0:
            hint = (
                f"TP×CP×DP = {dense_group}; with ETP{lay.etp}, EP must be one of "
                f"{_choices(divisors(dense_group // lay.etp))}"
            )
        else:
            hint = f"TP×CP×DP = {dense_group}; ETP must divide it too: ETP ∈ {_choices(divisors(dense_group))}"
        yield Finding(
            entry.path,
            f"EP{lay.ep}×ETP{lay.etp} = {lay.ep * lay.etp} does not divide "
            f"TP×CP×DP = {lay.tp}×{lay.cp}×{lay.dp} = {dense_group}",
            hint,
            at=("layout", "ep"),
        )


@check("ORV503", E, "virtual pipeline stages without a pipeline", per_file=True)
def vpp_needs_pp(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Virtual pipeline parallelism (VPP, interleaved schedule) splits each pipeline stage into
    chunks; with PP = 1 there is no pipeline to interleave and Megatron-Core rejects the
    setting. Remove `vpp` (or set it to 1), or use PP > 1.
    """
    for entry, recipe in _training(snapshot):
        if recipe.layout.vpp > 1 and recipe.layout.pp == 1:
            yield Finding(
                entry.path,
                f"VPP{recipe.layout.vpp} with PP1: there is no pipeline to interleave",
                "remove `vpp` (or set vpp: 1), or use pp > 1",
                at=("layout", "vpp"),
            )


@check("ORV504", E, "layer split has the wrong number of stages", per_file=True)
def split_length(snapshot: Snapshot) -> Iterator[Finding]:
    """
    `layout.layer_split` gives the number of transformer layers on each pipeline stage, in
    order, so it has exactly PP × VPP entries (one per virtual stage). Give one number per stage.
    """
    for entry, recipe in _training(snapshot):
        lay = recipe.layout
        if lay.layer_split is None or len(lay.layer_split) == lay.pp * lay.vpp:
            continue
        stages = lay.pp * lay.vpp
        model = snapshot.catalog.models.get(recipe.model)
        example = _even_split(model.layers, stages) if model and model.layers else None
        hint = f"PP{lay.pp} × VPP{lay.vpp} = {stages} stages: give {stages} numbers"
        if example:
            hint += f", e.g. {example}"
        yield Finding(
            entry.path,
            f"layer_split has {len(lay.layer_split)} entries but PP×VPP = {stages}",
            hint,
            at=("layout", "layer_split"),
        )


def _even_split(layers: int, stages: int) -> str | None:
    if stages > 16 or stages > layers:
        return None
    base, extra = divmod(layers, stages)
    return "[" + ", ".join(str(base + (1 if i < extra else 0)) for i in range(stages)) + "]"


@check("ORV505", E, "layer split does not add up to the model's layers", per_file=True)
def split_sum(snapshot: Snapshot) -> Iterator[Finding]:
    """
    The stages of `layout.layer_split` together hold every transformer layer once, so the split
    sums to the model's layer count in catalog/models.yaml. Skipped when the catalog does not
    know the model's layers. Move the difference onto a stage.
    """
    for entry, recipe in _training(snapshot):
        split = recipe.layout.layer_split
        model = snapshot.catalog.models.get(recipe.model)
        if split is None or model is None or model.layers is None:
            continue
        total = sum(split)
        if total == model.layers:
            continue
        diff = model.layers - total
        change = f"add {diff} layer(s) to" if diff > 0 else f"remove {-diff} layer(s) from"
        yield Finding(
            entry.path,
            f"layer_split sums to {total} but {recipe.model} has {model.layers} layers",
            f"{change} a stage so the split sums to {model.layers} ({MODELS_PATH})",
            at=("layout", "layer_split"),
        )


@check("ORV506", E, "sequence length does not split across context-parallel ranks", per_file=True)
def sequence_fits_cp(snapshot: Snapshot) -> Iterator[Finding]:
    """
    With context parallelism (CP > 1) Megatron-Core cuts each sequence into 2 × CP chunks and
    gives every rank one early and one late chunk (load balancing for causal attention), so the
    workload's sequence length must be divisible by 2 × CP. The hint lists CP values that work.
    """
    for entry, recipe in _training(snapshot):
        cp = recipe.layout.cp
        workload = snapshot.catalog.workloads.get(recipe.workload)
        if cp <= 1 or workload is None or workload.seq_len is None or workload.seq_len % (2 * cp) == 0:
            continue
        seq = workload.seq_len
        good = [c for c in divisors(seq // 2) if c > 1][:8] if seq % 2 == 0 else []
        hint = (
            f"CP must make 2×CP divide {seq}: CP ∈ {_choices(good, 8)}"
            if good
            else f"sequence length {seq} is odd, so context parallelism cannot split it: use cp: 1"
        )
        yield Finding(
            entry.path,
            f"sequence length {seq} ({recipe.workload}) is not divisible by 2×CP = {2 * cp}",
            hint,
            at=("layout", "cp"),
        )


@check("ORV507", E, "global batch does not divide into micro-batches", per_file=True)
def batch_divides(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Each optimizer step processes the workload's global batch as DP ranks × micro-batches of
    `tuning.micro_batch_size` rows (or `rows_per_microbatch`), so the global batch must be
    divisible by micro-batch × DP. Checked only where the recipe gives a micro-batch size. The
    hint lists the micro-batch sizes that work with this DP, or says that DP itself does not
    divide the global batch.
    """
    for entry, recipe in _training(snapshot):
        tuning = recipe.tuning
        workload = snapshot.catalog.workloads.get(recipe.workload)
        if tuning is None or workload is None or workload.global_batch is None:
            continue
        field, mbs = (
            ("micro_batch_size", tuning.micro_batch_size)
            if tuning.micro_batch_size is not None
            else ("rows_per_microbatch", tuning.rows_per_microbatch)
        )
        if mbs is None:
            continue
        dp, gb = recipe.layout.dp, workload.global_batch
        if gb % (mbs * dp) == 0:
            continue
        message = f"global batch {gb} is not divisible by micro-batch {mbs} × DP{dp} = {mbs * dp}"
        if gb % dp != 0:
            yield Finding(
                entry.path,
                message,
                f"DP{dp} does not divide the global batch {gb} at all: DP must be one of {_choices(divisors(gb))}",
                at=("layout", "dp"),
            )
            continue
        yield Finding(
            entry.path,
            message,
            f"with DP{dp}, {field} must be one of {_choices(divisors(gb // dp))}",
            at=("tuning", field),
        )


@check("ORV508", E, "optimizer offload fraction outside [0, 1]", per_file=True)
def offload_fraction(snapshot: Snapshot) -> Iterator[Finding]:
    """
    `tuning.optimizer_cpu_offload` is the fraction of optimizer state kept on the CPU
    (Megatron-Core's optimizer_offload_fraction): 0 keeps all of it on the GPU, 1 moves all of
    it. A value outside [0, 1] cannot be configured; write 55% as 0.55.
    """
    for entry, recipe in _training(snapshot):
        value = recipe.tuning.optimizer_cpu_offload if recipe.tuning else None
        if value is None or 0.0 <= value <= 1.0:
            continue
        hint = "write a fraction between 0 and 1: 0 keeps the optimizer on the GPU, 1 offloads all of it"
        if 1.0 < value <= 100.0:
            hint += f"; if you meant {value:g}%, write {value / 100:g}"
        yield Finding(
            entry.path,
            f"optimizer_cpu_offload is {value}, outside [0, 1]",
            hint,
            at=("tuning", "optimizer_cpu_offload"),
        )


# --------------------------------------------------------------------------- training: implied MFU


@dataclass(frozen=True)
class _Figure:
    """One throughput figure to test: where it is, what it is, and the setup it was measured on."""

    path: str
    at: tuple[Any, ...]
    label: str  # "claimed.tokens_per_s_per_gpu", "run summary", …
    value: float
    model: str
    gpu: str
    line: int | None = None  # run files are not in the snapshot's documents: line 1


def _run_figure(run: RunEntry, metric: str) -> tuple[float, str] | None:
    """A run's figure: recomputed from raw samples when it has them, else the tool's summary."""
    meta, facts = run.meta, run.facts
    if meta is None:
        return None
    if facts is not None and facts.has_samples:
        value = facts.headline.get(metric)
        return (value, f"{metric} recomputed from the run's raw samples") if value is not None else None
    if metric in meta.summary:
        return meta.summary[metric], f"summary.{metric} of the run (it has no raw samples)"
    return None


def _training_figures(snapshot: Snapshot) -> Iterator[tuple[_Figure, str | None]]:
    """(figure, workload id) for every claimed and every run-measured training tokens/s/GPU."""
    for entry, recipe in _training(snapshot):
        yield (
            _Figure(
                entry.path,
                ("claimed", "tokens_per_s_per_gpu"),
                "claimed.tokens_per_s_per_gpu",
                recipe.claimed.tokens_per_s_per_gpu,
                recipe.model,
                recipe.hardware.gpu,
            ),
            recipe.workload,
        )
    for run in snapshot.runs.values():
        if run.meta is None or run.meta.kind != "training":
            continue
        got = _run_figure(run, "tokens_per_s_per_gpu")
        if got:
            yield (
                _Figure(run.path, (), got[1], got[0], run.meta.model, run.meta.hardware.gpu, line=1),
                run.meta.workload,
            )


def _mfu_inputs(snapshot: Snapshot, fig: _Figure) -> tuple[ModelSpec, GpuSpec, float] | None:
    model, gpu = snapshot.catalog.models.get(fig.model), snapshot.catalog.hardware.get(fig.gpu)
    if model is None or gpu is None or not gpu.bf16_dense_tflops or model.active_b is None:
        return None  # unknown active parameters: nothing to bound (the catalog says so)
    mfu = implied_mfu(fig.value, model.active_b, gpu.bf16_dense_tflops)
    return (model, gpu, mfu) if mfu is not None else None


def _mfu_hint(fig: _Figure, model: ModelSpec, gpu: GpuSpec, fraction: float) -> str:
    assert model.active_b is not None and gpu.bf16_dense_tflops is not None  # _mfu_inputs checked both
    limit = tokens_at_mfu(fraction, model.active_b, gpu.bf16_dense_tflops)
    return f"at {_pct(fraction)} MFU one {gpu.name} trains {fig.model} at most {_fig(limit)} tokens/s/GPU"


@check("ORV509", E, "implied MFU above 100%", per_file=True)
def mfu_possible(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Implied MFU = tokens/s/GPU × 6 × active parameters ÷ the GPU's dense BF16 peak
    (catalog/hardware.yaml). Counting 6 FLOPs per active parameter and token and leaving
    attention out can only under-state the real FLOPs, so an implied MFU above 100% is
    impossible: the figure, the GPU or the model's active parameters is wrong. Checked for
    recipes' claims and for runs' figures (recomputed from raw samples, else the run's summary);
    skipped when the catalog lacks the model, the GPU or its peak.
    """
    for fig, _ in _training_figures(snapshot):
        got = _mfu_inputs(snapshot, fig)
        if got is None or not got[2] > 1.0:
            continue
        model, gpu, mfu = got
        yield Finding(
            fig.path,
            f"{fig.label} = {_fig(fig.value)} implies {_pct(mfu)} MFU on {gpu.name} "
            f"({model.active_b:g}B active parameters × 6 FLOPs per token ÷ "
            f"{gpu.bf16_dense_tflops:g} TFLOP/s dense BF16)",
            _mfu_hint(fig, model, gpu, 1.0) + "; check the figure, the GPU and the model",
            at=fig.at,
            line=fig.line,
        )


@check("ORV510", W, "implied MFU above the documented ceiling", per_file=True)
def mfu_plausible(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Implied MFU (see ORV509) above the workload's documented ceiling is suspicious, though not
    impossible: `mfu_ceiling_dense` (default 0.65, about the best tuned dense training reaches)
    for dense models and `mfu_ceiling_moe` (default 0.50, since MoE layers pay for token
    dispatch and small grouped GEMMs) for MoE models (catalog `moe: true`, or more than twice
    as many total as active parameters). A warning: expect a reviewer to ask for a run file.
    """
    for fig, workload_id in _training_figures(snapshot):
        got = _mfu_inputs(snapshot, fig)
        if got is None:
            continue
        model, gpu, mfu = got
        ceiling = mfu_ceiling(model, snapshot.catalog.workloads.get(workload_id or ""))
        if not ceiling < mfu <= 1.0:
            continue
        kind = "MoE" if is_moe(model) else "dense"
        yield Finding(
            fig.path,
            f"{fig.label} = {_fig(fig.value)} implies {_pct(mfu)} MFU on {gpu.name}, above the "
            f"{_pct(ceiling)} ceiling for {kind} models",
            _mfu_hint(fig, model, gpu, ceiling) + "; attach a run file with raw samples so the figure can be verified",
            at=fig.at,
            line=fig.line,
        )


# --------------------------------------------------------------------------- inference


@check("ORV520", E, "concurrency sweep does not hold together", per_file=True)
def sweep_holds_together(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A sweep lists the concurrencies one configuration was measured at, one run per point
    (docs/boards.md). Its headline point is `serving.concurrency`, claimed in `claimed` as for any
    recipe; `sweep.claimed` holds the other points' claims. So `serving.concurrency` must be one of
    `sweep.concurrency`, and each entry of `sweep.claimed` must name a listed point other than the
    headline, once. Add the missing point to `sweep.concurrency`, or remove the stray claim.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, InferenceRecipe) or recipe.sweep is None:
            continue
        points = recipe.sweep.concurrency
        if recipe.serving.concurrency not in points:
            yield Finding(
                entry.path,
                f"serving.concurrency {recipe.serving.concurrency} is not one of the sweep's points {points}",
                f"add {recipe.serving.concurrency} to sweep.concurrency (the headline point is measured "
                "too), or set serving.concurrency to one of the points",
                at=("serving", "concurrency"),
            )
        seen: set[int] = set()
        for i, claim in enumerate(recipe.sweep.claimed):
            if claim.concurrency == recipe.serving.concurrency:
                why, hint = ("restates the headline point", "claim the headline point in `claimed`, not here")
            elif claim.concurrency not in points:
                why, hint = (
                    f"is not one of the sweep's points {points}",
                    f"add {claim.concurrency} to sweep.concurrency, or remove this claim",
                )
            elif claim.concurrency in seen:
                why, hint = ("is claimed twice", "keep one claim per point")
            else:
                seen.add(claim.concurrency)
                continue
            yield Finding(
                entry.path,
                f"sweep.claimed[{i}] at concurrency {claim.concurrency} {why}",
                hint,
                at=("sweep", "claimed", i, "concurrency"),
            )


@check("ORV511", E, "aggregate throughput above concurrency × per-stream rate", scope="run-file")
def aggregate_within_streams(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    With at most `serving.concurrency` requests in flight, the aggregate output rate cannot
    exceed concurrency × the rate of one stream. With raw samples the per-stream rate is each
    request's output tokens over its whole lifetime, Σ output_tokens ÷ Σ e2e_ms — an exact
    bound, because the requests' lifetimes (at most `concurrency` at a time) fit in the run's
    duration. Without samples it is the tool's per-stream decode rate (summary.decode_tok_s or
    1000 ÷ tpot_ms). The aggregate is summary.output_tok_s, else the one recomputed from
    `duration_s`. 1% is allowed for rounding. Checked on run files only: recipes claim
    per-stream figures, not an aggregate. Fix the duration, the concurrency or the figure.
    """
    meta = run.meta
    if meta is None or meta.kind != "inference" or meta.serving is None or not meta.serving.concurrency:
        return
    concurrency = meta.serving.concurrency
    aggregate = _aggregate(meta, run.facts)
    stream = _stream_rate(meta, run.facts)
    if aggregate is None or stream is None:
        return
    (value, at, label), (rate, rate_label) = aggregate, stream
    limit = concurrency * rate
    if not value > limit * (1 + AGGREGATE_TOLERANCE):
        return
    yield Finding(
        run.path,
        f"{label} = {_fig(value)} tok/s exceeds concurrency {concurrency} × {_fig(rate)} tok/s "
        f"({rate_label}) = {_fig(limit)} tok/s",
        f"with {concurrency} streams at {_fig(rate)} tok/s the aggregate is at most {_fig(limit)} tok/s; "
        "check serving.concurrency, duration_s and the figure",
        at=at,
    )


def _aggregate(meta: RunMeta, facts: RunFacts | None) -> tuple[float, tuple[str, ...], str] | None:
    if "output_tok_s" in meta.summary:
        return meta.summary["output_tok_s"], ("summary", "output_tok_s"), "summary.output_tok_s"
    if facts is not None and "output_tok_s" in facts.headline:
        return facts.headline["output_tok_s"], ("duration_s",), "output tokens ÷ duration_s"
    return None


def _stream_rate(meta: RunMeta, facts: RunFacts | None) -> tuple[float, str] | None:
    if facts is not None and facts.has_samples:  # recomputed with the other facts (science/throughput.py)
        rate = facts.stream_tok_s
        return None if rate is None else (rate, "per stream: Σ output tokens ÷ Σ request time")
    if "decode_tok_s" in meta.summary:
        return meta.summary["decode_tok_s"], "summary.decode_tok_s per stream"
    if meta.summary.get("tpot_ms"):
        return 1000.0 / meta.summary["tpot_ms"], "per stream: 1000 ÷ summary.tpot_ms"
    return None


def _bound_for(
    catalog: Catalog, model_id: str, gpu_id: str, gpus: int, quant: str, speculative_k: int
) -> tuple[DecodeBound, ModelSpec, GpuSpec] | None:
    model, gpu = catalog.models.get(model_id), catalog.hardware.get(gpu_id)
    bound = decode_bound_for(model, gpu, gpus, quant, speculative_k)
    if bound is None or model is None or gpu is None:
        return None  # an unknown size or bandwidth bounds nothing
    return bound, model, gpu


@check("ORV512", E, "decode faster than memory bandwidth allows", per_file=True)
def decode_within_bandwidth(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Every decode step of one stream reads all active weights from HBM (a CPU host's, catalog
    `device: cpu`: from its system memory, whose bandwidth its `hbm_tb_s` states), so a stream cannot
    decode faster than GPUs × HBM bandwidth ÷ bytes of active weights — at any concurrency,
    since batching shares a step's weight reads but still yields one token per stream per step.
    With speculative decoding (`serving.speculative.k` drafted tokens) a step yields at most
    k + 1 tokens, so the bound is (k + 1)× that. Chosen so it fires only when truly impossible:
    peak (not achievable) bandwidth from catalog/hardware.yaml, the lowest bits per weight the
    quant name allows (table in validator/science/physics.py: 3-05bpw → 3.05, w4a16/nvfp4/int4 → 4,
    fp8 → 8, bf16 → 16, a name with several widths → the smallest), and only 75% of active
    weights counted as read (embedding tables are looked up by row). Skipped when the model's
    parameters, the GPU's bandwidth or the quant's width is unknown. Checked for recipes'
    claimed.decode_tok_s and runs' decode rate (recomputed from samples, else summary). If
    speculative decoding (MTP, EAGLE, DFlash …) was used, declare it in serving.speculative.
    When speculative decoding is named without its draft length k, the bound is unknown: a figure
    above the single-token bound is then a warning asking for k, not an error.
    """
    for entry, recipe in _inference(snapshot):
        if recipe.claimed.decode_tok_s is None:
            continue
        spec = recipe.serving.speculative
        yield from _decode_finding(
            snapshot.catalog,
            entry.path,
            ("claimed", "decode_tok_s"),
            "claimed.decode_tok_s",
            recipe.claimed.decode_tok_s,
            recipe.model,
            recipe.hardware.gpu,
            recipe.hardware.count,
            recipe.quant,
            _draft_length(spec),
            None,
        )
    for run in snapshot.runs.values():
        meta = run.meta
        if meta is None or meta.kind != "inference" or meta.quant is None:
            continue
        got = _run_figure(run, "decode_tok_s")
        if got is None:
            continue
        spec = meta.serving.speculative if meta.serving else None
        yield from _decode_finding(
            snapshot.catalog,
            run.path,
            (),
            got[1],
            got[0],
            meta.model,
            meta.hardware.gpu,
            meta.hardware.count,
            meta.quant,
            _draft_length(spec),
            1,
        )


def _draft_length(spec: Speculative | None) -> int | None:
    """k of speculative decoding: 0 without it, None when it is named but k is not recorded."""
    return 0 if spec is None else spec.k


def _decode_finding(
    catalog: Catalog,
    path: str,
    at: tuple[Any, ...],
    label: str,
    value: float,
    model_id: str,
    gpu_id: str,
    gpus: int,
    quant: str,
    k: int | None,
    line: int | None,
) -> Iterator[Finding]:
    got = _bound_for(catalog, model_id, gpu_id, gpus, quant, k or 0)
    if got is None:
        return
    bound, model, gpu = got
    if not value > bound.tok_s:
        return
    if k is None:  # drafting named, k unknown: only (k+1)x the bound could rule the figure out
        yield Finding(
            path,
            f"{label} = {_fig(value)} tok/s is above the single-token bandwidth bound "
            f"{_fig(bound.per_step)} tok/s and serving.speculative records no draft length k, so "
            "whether it is possible cannot be checked",
            "record serving.speculative.k (tokens drafted per step); the figure must stay under (k+1)× the bound",
            at=at,
            line=line,
            severity=W,
        )
        return
    derivation = (
        f"{gpus} × {gpu.hbm_tb_s:g} TB/s ÷ ({model.active_b:g}B active × {bound.bits.bits:g} bits "
        f"[{bound.bits.basis}] × {DECODE_READ_FRACTION:g} read) = {_fig(bound.per_step)} tok/s"
    )
    if k:
        message = (
            f"{label} = {_fig(value)} tok/s exceeds {k + 1}× the bandwidth bound even with speculative "
            f"decoding (k={k}): {derivation}, × {k + 1} = {_fig(bound.tok_s)} tok/s"
        )
        hint = (
            f"with k={k} one stream decodes at most {_fig(bound.tok_s)} tok/s here; check the figure, k and the quant"
        )
    else:
        message = f"{label} = {_fig(value)} tok/s exceeds the memory-bandwidth bound {derivation}"
        ratio = value / bound.per_step
        needed = f" (k ≥ {max(math.ceil(ratio) - 1, 1)} would allow this figure)" if math.isfinite(ratio) else ""
        hint = (
            f"without speculative decoding one stream decodes at most {_fig(bound.per_step)} tok/s here; if "
            f"drafting was used, declare serving.speculative {{method, k}}{needed}, otherwise correct it"
        )
    yield Finding(path, message, hint, at=at, line=line)


@check("ORV521", W, "sweep has no run at its headline concurrency", related_by="r")
def sweep_headline_measured(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A sweep's headline claim (`claimed`, at `serving.concurrency`) is checked against a run at that
    concurrency, and the recipe's row on the boards shows that run's figures. When every run on
    record measured another point, the headline claim is compared with nothing: the recipe stays a
    claim (T0) with the reason, its row shows no other point's figures, and none of its points enters
    the frontier (each run is still checked at its own point, ORV206/ORV207/ORV242). Add a run at the
    headline concurrency (`orv add-run` with the benchmark's `--max-concurrency` set to it), or make
    a measured point the headline: set `serving.concurrency` to it and move its claim to `claimed`.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, InferenceRecipe) or recipe.sweep is None:
            continue
        on_record = [
            run
            for d in recipe.run_digests
            if (run := snapshot.runs.get(d)) is not None and run.meta is not None and run.quality is None
        ]
        why = headline_unmeasured(recipe, on_record) if on_record else None
        if why:
            head, _, hint = why.partition("; ")
            yield Finding(entry.path, f"{head}: the recipe stays a claim (T0)", hint, at=("serving", "concurrency"))


# --------------------------------------------------------------------------- inference: compute bounds


def _compute_bound(catalog: Catalog, model_id: str, gpu_id: str, gpus: int, quant: str) -> ComputeBound | None:
    return compute_bound_for(catalog.models.get(model_id), catalog.hardware.get(gpu_id), gpus, quant)


@check("ORV513", E, "prefill faster than the GPUs' peak compute allows", per_file=True)
def prefill_within_compute(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Prefill runs the model's forward pass over every prompt token: 2 FLOP per active parameter per
    token, so one stream cannot prefill faster than GPUs × peak FLOP/s ÷ (2 × active parameters),
    whatever it shares with other streams. The peak is the catalog's dense BF16 figure
    (catalog/hardware.yaml) × the quant's operand speed-up (8-bit ×2, 4-bit or an unread width ×4,
    as tensor cores run them) × 1.10 for clocks above the datasheet's; attention's FLOPs are left
    out. So the bound is above anything possible (validator/science/physics.py). Checked for
    recipes' claimed.prefill_tok_s and runs' prefill rate (Σ prompt tokens ÷ Σ TTFT from the
    samples, else summary.prefill_tok_s). Skipped when the model's active parameters or the GPU's
    peak is unknown. A prompt served from the prefix cache is not computed: measure prefill with
    prompts that do not repeat (the benchmarks' random dataset), and do not edit prompt lengths.
    """
    for entry, recipe in _inference(snapshot):
        if recipe.claimed.prefill_tok_s is not None:
            yield from _compute_finding(
                snapshot.catalog,
                entry.path,
                ("claimed", "prefill_tok_s"),
                "claimed.prefill_tok_s",
                recipe.claimed.prefill_tok_s,
                recipe.model,
                recipe.hardware.gpu,
                recipe.hardware.count,
                recipe.quant,
                None,
                "one stream's prefill",
            )
    for run, _meta in _measured_inference_runs(snapshot):
        got = _run_figure(run, "prefill_tok_s")
        if got is not None:
            yield from _run_compute_finding(snapshot.catalog, run, got[1], got[0], "one stream's prefill")


@check("ORV514", E, "run's aggregate token rate above the GPUs' peak compute", per_file=True)
def aggregate_within_compute(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Every prompt and every output token of a serving run passes through the model's forward pass
    (2 FLOP per active parameter), so over the run's `duration_s` the GPUs processed
    (Σ prompt tokens + Σ output tokens) ÷ duration_s tokens per second, which cannot exceed
    GPUs × peak FLOP/s ÷ (2 × active parameters) — the bound ORV513 uses, with the same peak,
    operand speed-up and 1.10 margin. Without samples, summary.output_tok_s alone is held to it.
    A run that is over it has a `duration_s` too short or token counts too large.
    """
    for run, meta in _measured_inference_runs(snapshot):
        facts = run.facts
        figure: tuple[float, str] | None = None
        stats = facts.lengths if facts is not None and facts.has_samples else None
        if stats is not None and meta.duration_s:
            tokens = stats.requests * (stats.prompt_mean + stats.output_mean)
            figure = (tokens / meta.duration_s, "(Σ prompt tokens + Σ output tokens) ÷ duration_s")
        elif "output_tok_s" in meta.summary:
            figure = (meta.summary["output_tok_s"], "summary.output_tok_s")
        if figure is not None:
            yield from _run_compute_finding(snapshot.catalog, run, figure[1], figure[0], "the GPUs' forward passes")


def _measured_inference_runs(snapshot: Snapshot) -> Iterator[tuple[RunEntry, RunMeta]]:
    """The inference runs a compute bound applies to (a quant stated, not synthetic), with their metadata."""
    for run in snapshot.runs.values():
        meta = run.meta
        if meta is not None and meta.kind == "inference" and meta.quant is not None and meta.synthetic is None:
            yield run, meta


def _run_compute_finding(catalog: Catalog, run: RunEntry, label: str, value: float, what: str) -> Iterator[Finding]:
    """A run's figure against the compute bound of the model, GPUs and quant its metadata states."""
    meta = run.meta
    assert meta is not None and meta.quant is not None  # _measured_inference_runs
    yield from _compute_finding(
        catalog, run.path, (), label, value, meta.model, meta.hardware.gpu, meta.hardware.count, meta.quant, 1, what
    )


def _compute_finding(
    catalog: Catalog,
    path: str,
    at: tuple[Any, ...],
    label: str,
    value: float,
    model_id: str,
    gpu_id: str,
    gpus: int,
    quant: str,
    line: int | None,
    what: str,
) -> Iterator[Finding]:
    bound = _compute_bound(catalog, model_id, gpu_id, gpus, quant)
    if bound is None or not value > bound.tok_s:
        return
    yield Finding(
        path,
        f"{label} = {_fig(value)} tok/s exceeds the compute bound on {what}: {bound.derivation()} = "
        f"{_fig(bound.tok_s)} tok/s",
        f"{gpus} × {gpu_id} cannot run {model_id}'s forward pass faster than {_fig(bound.tok_s)} tok/s; check the "
        "prompt lengths, TTFTs and duration against the tool's output (a prefix-cache hit is not prefill)",
        at=at,
        line=line,
    )

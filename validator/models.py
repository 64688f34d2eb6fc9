"""Typed views of recipes, runs and the catalog, built only from schema-valid data.

The JSON Schemas in schema/ are the source of truth; these models mirror them (tests prove the
two agree: tests/unit/test_schema_agreement.py) so that semantic checks read attributes, not nested dicts.
"""

from __future__ import annotations

import functools
import sys
from typing import Annotated, Any, Literal, Union

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    model_validator,
)

from validator.dates import DATE_PATTERN, TIMESTAMP_PATTERN

# The engine validates with these models first (pydantic-core is compiled: ~50x faster than
# jsonschema) and runs jsonschema only on rejection, to word the finding. So every constraint here
# must be at least as strict as the schema's; tests/unit/test_schema_agreement.py proves that property.
Slug = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+(-[a-z0-9]+)*$", max_length=96)]
CatalogId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+([.-][a-z0-9]+)*$", max_length=96)]
DateStr = Annotated[str, StringConstraints(pattern=DATE_PATTERN)]
Timestamp = Annotated[str, StringConstraints(pattern=TIMESTAMP_PATTERN)]
Hex64 = Annotated[str, StringConstraints(pattern=r"^[0-9a-f]{64}$")]
RunRef = Annotated[str, StringConstraints(pattern=r"^sha256:[0-9a-f]{64}$")]
QuantId = Annotated[str, StringConstraints(pattern=r"^[a-z0-9]+([._-][a-z0-9]+)*$", max_length=96)]
ToolName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9][A-Za-z0-9._/+-]*$", max_length=100)]
Text100 = Annotated[str, StringConstraints(min_length=1, max_length=100)]
# JSON's safe integers (I-JSON, RFC 7493; what JavaScript editors and RFC 8785 hold exactly): the
# schemas say `"maximum": 9007199254740991` for every integer, so the models do too.
MAX_SAFE_INT = 2**53 - 1
PositiveInt = Annotated[int, Field(ge=1, le=MAX_SAFE_INT)]
Count = Annotated[int, Field(ge=0, le=MAX_SAFE_INT)]
MAX_DOUBLE = sys.float_info.max


def _fits_a_double(value: Any) -> Any:
    """The schemas' `"maximum": 1.7976931348623157e308` compares an integer exactly, while float()
    would round 10**308 * 1.8 down to the largest double and take it: refuse it here too."""
    if type(value) is int and abs(value) > MAX_DOUBLE:
        raise ValueError("a number beyond the range of a double")
    return value


Double = Annotated[float, BeforeValidator(_fits_a_double)]
PositiveFloat = Annotated[Double, Field(gt=0)]


# Rust's regex (pydantic's default, named here on purpose) reads `$` as the end of the text, as
# ECMA-262 does for the schemas (validator/load/schema.py): "h100\n" matches neither.
class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, regex_engine="rust-regex")


class Hardware(_Strict):
    gpu: CatalogId
    count: PositiveInt


class Patch(_Strict):
    name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    sha256: Hex64 | None = None
    url: Annotated[str, StringConstraints(max_length=500)] | None = None


class Component(_Strict):
    name: ToolName
    version: Text100 | None = None
    commit: Annotated[str, StringConstraints(min_length=1, max_length=64)] | None = None
    image: Annotated[str, StringConstraints(min_length=1, max_length=300)] | None = None
    repository: Annotated[str, StringConstraints(max_length=300)] | None = None
    patches: Annotated[list[Patch], Field(max_length=200)] = []

    def pins(self) -> dict[str, str]:
        return {k: v for k, v in (("version", self.version), ("commit", self.commit), ("image", self.image)) if v}


SoftwareRole = Annotated[str, StringConstraints(pattern=r"^[a-z][a-z0-9_]*$", max_length=40)]
Software = Annotated[dict[SoftwareRole, Component], Field(max_length=32)]


class Layout(_Strict):
    tp: PositiveInt
    pp: PositiveInt
    dp: PositiveInt
    vpp: PositiveInt = 1
    cp: PositiveInt = 1
    ep: PositiveInt = 1
    etp: PositiveInt = 1
    layer_split: Annotated[list[PositiveInt], Field(min_length=1, max_length=1024)] | None = None

    def display(self) -> str:
        """'TP1 PP4 DP2' style, naming only what departs from the default of 1 (TP, PP, DP always)."""
        parts = [f"TP{self.tp}", f"PP{self.pp}"]
        if self.vpp > 1:
            parts.append(f"VPP{self.vpp}")
        if self.cp > 1:
            parts.append(f"CP{self.cp}")
        if self.ep > 1:
            parts.append(f"EP{self.ep}")
        if self.etp > 1:
            parts.append(f"ETP{self.etp}")
        parts.append(f"DP{self.dp}")
        return " ".join(parts)


class Speculative(_Strict):
    method: Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9_-]*$", max_length=40)]
    k: PositiveInt | None = None  # unknown: the decode bound cannot be checked (ORV512 warns)


class Serving(_Strict):
    context_len: PositiveInt | None = None
    concurrency: PositiveInt | None = None
    slots: PositiveInt | None = None
    tp: PositiveInt | None = None
    pp: PositiveInt | None = None
    ep: PositiveInt | None = None
    speculative: Speculative | None = None


RecomputeScope = Literal["attention", "moe", "moe_act", "mlp", "layernorm", "core_attn"]


class Recompute(_Strict):
    kind: Literal["none", "selective", "block", "full"]
    scope: list[RecomputeScope] = []
    layers: PositiveInt | None = None

    @model_validator(mode="after")
    def _unique_scope(self) -> Recompute:
        if len(set(self.scope)) != len(self.scope):
            raise ValueError("recompute.scope repeats an item")
        return self


class Tuning(_Strict):
    max_tokens_per_gpu: PositiveInt | None = None
    micro_batch_size: PositiveInt | None = None
    rows_per_microbatch: PositiveInt | None = None
    recompute: Recompute | None = None
    optimizer_cpu_offload: Double | None = None
    optimizer_on_gpu: bool | None = None
    moe_dispatcher: Literal["alltoall", "allgather", "flex"] | None = None
    attention_backend: (
        Literal["flash", "fused", "cudnn-fused", "cudnn-fused-sliding-window", "unfused", "local"] | None
    ) = None
    expandable_segments: bool | None = None
    load_balancing_loss: bool | None = None


class Provenance(_Strict):
    source: Annotated[str, StringConstraints(max_length=200)]
    row: Annotated[int, Field(ge=-MAX_SAFE_INT, le=MAX_SAFE_INT)] | str | None = None
    legacy_id: Annotated[str, StringConstraints(max_length=200)] | None = None
    original: dict[str, Any] | None = None


class TrainingClaim(_Strict):
    tokens_per_s_per_gpu: PositiveFloat


class InferenceClaim(_Strict):
    decode_tok_s: PositiveFloat | None = None
    prefill_tok_s: PositiveFloat | None = None
    ttft_ms: PositiveFloat | None = None

    @model_validator(mode="after")
    def _at_least_one(self) -> InferenceClaim:
        if self.decode_tok_s is None and self.prefill_tok_s is None and self.ttft_ms is None:
            raise ValueError("claimed needs at least one figure")
        return self


Concurrency = Annotated[int, Field(ge=1, le=1_000_000)]


class PointClaim(InferenceClaim):
    """A sweep point's claimed figures (at least one besides its concurrency)."""

    concurrency: Concurrency


class Sweep(_Strict):
    """The concurrencies one configuration was measured at; serving.concurrency is the headline point."""

    concurrency: Annotated[list[Concurrency], Field(min_length=2, max_length=64)]
    claimed: Annotated[list[PointClaim], Field(max_length=64)] = []

    @model_validator(mode="after")
    def _unique(self) -> Sweep:
        if len(set(self.concurrency)) != len(self.concurrency):
            raise ValueError("sweep.concurrency lists a concurrency twice")
        return self

    def claim_at(self, concurrency: int) -> PointClaim | None:
        return next((p for p in self.claimed if p.concurrency == concurrency), None)


EnvName = Annotated[str, StringConstraints(pattern=r"^[A-Za-z_][A-Za-z0-9_]*$", max_length=100)]


class Launch(_Strict):
    """How the server (inference) or the training job was started: the command's arguments as a list,
    one token each (never one shell string), and its environment (docs/protocols.md)."""

    args: Annotated[list[Annotated[str, StringConstraints(min_length=1, max_length=2000)]], Field(max_length=500)] = []
    env: Annotated[dict[EnvName, Annotated[str, StringConstraints(max_length=2000)]], Field(max_length=200)] = {}


Notes = Annotated[str, StringConstraints(max_length=4000)]
RunRefs = Annotated[list[RunRef], Field(max_length=100)]


class _RecipeBase(_Strict):
    id: Slug
    model: CatalogId
    hardware: Hardware
    author: Text100
    measured: DateStr
    software: Software
    runs: RunRefs
    notes: Notes | None = None
    provenance: Provenance | None = None

    @model_validator(mode="after")
    def _unique_runs(self) -> _RecipeBase:
        if len(set(self.runs)) != len(self.runs):
            raise ValueError("runs repeats an entry")
        return self

    # asked for ~3 times per recipe by the tiers and boards; the model is frozen (a recipe is never
    # model_copy(update=...)'d: the copy would keep these digests)
    @functools.cached_property
    def run_digests(self) -> tuple[str, ...]:
        return tuple(r.split(":", 1)[1] for r in self.runs)


class TrainingRecipe(_RecipeBase):
    kind: Literal["training"]
    workload: CatalogId
    layout: Layout
    tuning: Tuning | None = None
    claimed: TrainingClaim
    baseline: bool = False
    launch: Launch | None = None  # framework arguments the layout and tuning do not already imply


class InferenceRecipe(_RecipeBase):
    kind: Literal["inference"]
    checkpoint: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    quant: QuantId
    serving: Serving
    claimed: InferenceClaim
    sweep: Sweep | None = None

    def points(self) -> tuple[int, ...]:
        """The concurrencies a run of this recipe may measure: the sweep's, or the one it serves at."""
        if self.sweep is not None:
            return tuple(self.sweep.concurrency)
        return (self.serving.concurrency,) if self.serving.concurrency else ()

    # catalog/workloads.yaml, kind inference; absent only on an imported row (provenance): `unspecified`
    workload: CatalogId | None = None
    launch: Launch | None = None

    @property
    def workload_id(self) -> str:
        """The workload the figures were measured on; an imported row that names none is `unspecified`."""
        return self.workload or UNSPECIFIED


Recipe = Union[TrainingRecipe, InferenceRecipe]  # noqa: UP007 - a runtime alias: typing.Union kept as it was


class Tool(_Strict):
    name: ToolName
    version: Text100
    commit: Annotated[str, StringConstraints(max_length=64)] | None = None
    format: Annotated[str, StringConstraints(max_length=60)] | None = None


_SUMMARY_KEYS = {
    "training": frozenset({"tokens_per_s_per_gpu", "final_loss"}),
    "inference": frozenset({"decode_tok_s", "prefill_tok_s", "ttft_ms", "output_tok_s", "tpot_ms"}),
}
_KIND_FIELDS = {"training": ("workload", "layout"), "inference": ("quant", "serving")}


class StatedArchitecture(_Strict):
    """What a training tool printed about the model it trained (compared with the catalog, ORV227)."""

    params_b: PositiveFloat | None = None
    layers: PositiveInt | None = None
    hidden_size: PositiveInt | None = None
    attention_heads: PositiveInt | None = None
    vocab_size: PositiveInt | None = None
    experts: PositiveInt | None = None
    experts_per_token: PositiveInt | None = None


LlamaBenchTestKind = Literal["pp", "tg"]


class SyntheticTest(_Strict):
    """llama-bench's synthetic test a run measured (schema/run-inference.schema.json `synthetic`; its
    repetitions are the run's samples): a `pp` test times n_prompt prompt tokens, a `tg` test n_gen
    generated tokens, each after n_depth tokens of context. What llama-bench states about the GGUF
    it loaded is kept for the identity check (validator/evidence/identity.py, ORV226)."""

    tool: Literal["llama-bench"]
    test: LlamaBenchTestKind
    n_prompt: Count
    n_gen: Count
    n_depth: Count
    model_filename: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    model_type: Annotated[str, StringConstraints(max_length=200)]
    model_n_params: PositiveInt
    gpu_info: Annotated[str, StringConstraints(max_length=1000)]
    backends: Annotated[str, StringConstraints(max_length=200)]


class EngineReport(_Strict):
    """What trtllm-bench's own report (--report_json) states about the setup, copied unchanged so the gate
    can compare it with the recipe (schema/run-inference.schema.json `reported`; ORV229, ORV260, ORV261):
    the GPU's device name (`machine.name`), the parallel layout (`world_info`) and the engine's
    quantization and dtypes (`engine`)."""

    tool: Literal["trtllm-bench"]
    machine_name: Annotated[str, StringConstraints(min_length=1, max_length=200)]
    tp_size: PositiveInt
    pp_size: PositiveInt
    ep_size: PositiveInt | None = None
    world_size: PositiveInt
    quantization: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    dtype: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None
    kv_cache_dtype: Annotated[str, StringConstraints(min_length=1, max_length=100)] | None = None


class RunMeta(_Strict):
    """A run file without its raw samples (those are reduced to RunFacts while streaming)."""

    kind: Literal["training", "inference"]
    tool: Tool
    model: CatalogId
    checkpoint: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None
    hardware: Hardware
    software: Software
    workload: CatalogId | None = None
    layout: Layout | None = None
    quant: QuantId | None = None
    serving: Serving | None = None
    architecture: StatedArchitecture | None = None
    synthetic: SyntheticTest | None = None  # llama-bench's pp/tg test (inference only)
    reported: EngineReport | None = None  # trtllm-bench's report on its setup (inference only)
    measured_at: Timestamp
    measured_by: Text100
    duration_s: PositiveFloat | None = None
    summary: dict[str, Double]
    notes: Notes | None = None
    provenance: Provenance | None = None

    @model_validator(mode="after")
    def _per_kind(self) -> RunMeta:
        """The schema's per-kind rules: required and forbidden fields, summary keys and signs."""
        own, other = _KIND_FIELDS[self.kind], _KIND_FIELDS["inference" if self.kind == "training" else "training"]
        if any(getattr(self, f) is None for f in own) or any(getattr(self, f) is not None for f in other):
            raise ValueError("fields do not fit the run's kind")
        if self.kind == "training" and (self.checkpoint is not None or self.duration_s is not None):
            raise ValueError("fields do not fit the run's kind")
        if self.kind == "training" and (self.synthetic is not None or self.reported is not None):
            raise ValueError("fields do not fit the run's kind")
        if self.kind == "inference" and self.architecture is not None:
            raise ValueError("fields do not fit the run's kind")
        keys = set(self.summary)
        if not keys or not keys <= _SUMMARY_KEYS[self.kind]:
            raise ValueError("summary keys do not fit the run's kind")
        if self.kind == "training" and "tokens_per_s_per_gpu" not in keys:
            raise ValueError("training summary needs tokens_per_s_per_gpu")
        if any(v <= 0 for k, v in self.summary.items() if k != "final_loss"):
            raise ValueError("summary figures must be positive")
        return self


# --------------------------------------------------------------------------- catalog


class _Catalog(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, regex_engine="rust-regex")


class GpuSpec(_Catalog):
    name: str
    vendor: str
    # "cpu": a CPU host (a llama.cpp CPU build runs on it, ORV249); its hbm_* figures are its system memory's
    device: Literal["gpu", "cpu"] = "gpu"
    bf16_dense_tflops: float | None = None
    hbm_gib: float | None = None
    hbm_tb_s: float | None = None
    memory_kind: str | None = None
    price_per_gpu_hour: float | None = None
    price_source: str | None = None
    aliases: tuple[str, ...] = ()
    # the device name as the driver reports it (nvidia-smi, CUDA): what tools print (ORV249, ORV229)
    device_names: tuple[Annotated[str, StringConstraints(min_length=1, max_length=200)], ...] = ()
    device_names_source: Annotated[str, StringConstraints(min_length=1)] | None = None
    sources: tuple[str, ...] = ()
    notes: str | None = None

    @model_validator(mode="after")
    def _sourced_device_names(self) -> GpuSpec:
        """The schema's rules: each spelling once, and listed only with where it was seen."""
        if len(set(self.device_names)) != len(self.device_names):
            raise ValueError("device_names lists a spelling twice")
        if "device_names" in self.model_fields_set and self.device_names_source is None:
            raise ValueError("device_names needs device_names_source")
        return self


class DerivedCheckpoint(_Catalog):
    id: str
    base: str
    source: str


class ModelArchitecture(_Catalog):
    """The model's shape (config.json): written by `orv catalog add-model`, compared with tool logs (ORV227)."""

    hidden_size: int | None = None
    attention_heads: int | None = None
    kv_heads: int | None = None
    attention: Literal["mha", "gqa", "mqa", "mla"] | None = None
    vocab_size: int | None = None
    experts: int | None = None
    experts_per_token: int | None = None
    shared_experts: int | None = None
    moe_layers: int | None = None
    tied_embeddings: bool | None = None
    source: str | None = None


class ModelSpec(_Catalog):
    name: str
    family: str
    params_b: float | None = None
    active_b: float | None = None  # unknown for some models only seen in inference sources
    moe: bool | None = None
    layers: int | None = None
    layers_source: str | None = None
    checkpoints: tuple[str, ...] = ()
    checkpoints_source: str | None = None
    derived_checkpoints: tuple[DerivedCheckpoint, ...] = ()
    architecture: ModelArchitecture | None = None
    aliases: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    notes: str | None = None
    # Quality evidence (docs/quality.md): the reference quality run per lm-eval task, and the
    # fraction of the reference a recipe must reach.
    quality_reference: dict[str, str] = {}
    quality_bound: float | None = None
    # Convergence (docs/convergence.md): per training workload, the run whose loss curve is this model's reference.
    convergence_reference: dict[str, str] = {}


class ReferencePoint(_Catalog):
    step: int
    loss: float


class ConvergenceWindow(_Catalog):
    start: int
    end: int


class Convergence(_Catalog):
    """The workload's rule of the convergence check; the curve is the model's (ModelSpec.convergence_reference).
    A workload-level `reference` (the form before 2026-12-04) is `reference_model`'s curve only."""

    reference: tuple[ReferencePoint, ...] = ()
    reference_source: str | None = None
    reference_model: str | None = None
    tolerance: float
    tolerance_kind: Literal["relative", "absolute"] = "relative"
    window: ConvergenceWindow
    smoothing_steps: int = 1


TRAINING_WORKLOAD_KINDS = ("sft", "pretrain")
INFERENCE_WORKLOAD_KIND = "inference"
LLAMA_BENCH_WORKLOAD_KIND = "llama-bench"  # llama-bench's synthetic pp/tg test: an inference workload, never served
UNSPECIFIED_WORKLOAD_KIND = "unspecified"  # imported rows whose source recorded no workload
UNSPECIFIED = "unspecified"  # the catalog id of that workload (docs/protocols.md)
# What each kind must state; the schema (catalog-workloads.schema.json) says the same with if/then.
_WORKLOAD_REQUIRED = {
    "sft": ("seq_len", "global_batch", "dtype", "warmup_steps"),
    "pretrain": ("seq_len", "global_batch", "dtype", "warmup_steps"),
    "inference": ("dataset", "input_len", "output_len", "range_ratio", "ignore_eos", "min_prompts"),
    "llama-bench": ("n_prompt", "n_gen", "n_depth", "min_repetitions", "concurrency"),
    "unspecified": (),
}


class WorkloadDataset(_Catalog):
    """`random` token ids (a length distribution, no text) or a named dataset pinned by its hash."""

    name: str
    distribution: Literal["uniform"] | None = None  # random: lengths uniform in [⌊ratio·L⌋, L]
    sha256: str | None = None
    url: str | None = None
    source: str | None = None


class WorkloadSpec(_Catalog):
    """A fixed protocol; `kind` says which fields apply (training: sft, pretrain; inference; unspecified).
    Other kinds (llama-bench's pp/tg tests) extend the discriminator with their own required fields."""

    name: str
    kind: Literal["sft", "pretrain", "inference", "llama-bench", "unspecified"]
    label: str | None = None  # a short display name ("1k/1k") beside each figure
    rows: str | None = None
    seq_len: int | None = None
    global_batch: int | None = None
    dtype: str | None = None
    warmup_steps: int | None = None
    gpus: tuple[str, ...] = ()  # the protocol's GPU set, in order: the boards' columns (empty cells included)
    mfu_ceiling_dense: float = 0.65
    mfu_ceiling_moe: float = 0.5
    convergence: Convergence | None = None
    # inference (docs/protocols.md)
    dataset: WorkloadDataset | None = None
    input_len: int | None = None
    output_len: int | None = None
    range_ratio: float | None = None  # per-request lengths uniform in [⌊ratio·L⌋, L]; 1 = fixed
    ignore_eos: bool | None = None
    min_prompts: int | None = None  # measured (after warm-up) completed requests, at least
    prompts_per_concurrency: int | None = None  # and at least this × the recipe's concurrency
    warmups_per_concurrency: int | None = None
    concurrency: int | None = None  # a workload that fixes the concurrency (single-stream: 1)
    length_slack: float = 0.02  # re-tokenisation drift allowed beyond the bounds, as a fraction of L
    # llama-bench (docs/protocols.md): its -p/-n/-d test, and the least -r repetitions a run keeps
    n_prompt: Count | None = None
    n_gen: Count | None = None
    n_depth: Count | None = None
    min_repetitions: PositiveInt | None = None
    sources: tuple[str, ...] = ()
    notes: str | None = None

    @model_validator(mode="after")
    def _kind_fields(self) -> WorkloadSpec:
        missing = [f for f in _WORKLOAD_REQUIRED[self.kind] if getattr(self, f) is None]
        if missing:
            raise ValueError(f"a `{self.kind}` workload needs {', '.join(missing)}")
        return self

    @property
    def is_training(self) -> bool:
        return self.kind in TRAINING_WORKLOAD_KINDS

    @property
    def is_inference(self) -> bool:
        """An inference recipe may name it: a served workload, or llama-bench's synthetic test."""
        return self.kind in (INFERENCE_WORKLOAD_KIND, LLAMA_BENCH_WORKLOAD_KIND)

    @property
    def is_llama_bench(self) -> bool:
        return self.kind == LLAMA_BENCH_WORKLOAD_KIND

    def llama_bench_test(self) -> str:
        """llama-bench's own name for the test ("pp512", "tg128", "tg128 @ d4096"), as its table prints it."""
        name = (
            f"pp{self.n_prompt}"
            if not self.n_gen
            else f"tg{self.n_gen}"
            if not self.n_prompt
            else f"pp{self.n_prompt}+tg{self.n_gen}"
        )
        return name + (f" @ d{self.n_depth}" if self.n_depth else "")

    def length_bounds(self, nominal: int) -> tuple[int, int]:
        """The per-request range a length of `nominal` tokens is drawn from: [⌊ratio·L⌋, L]."""
        ratio = self.range_ratio if self.range_ratio is not None else 1.0
        return max(int(nominal * ratio), 1), nominal

    def required_prompts(self, concurrency: int | None) -> int:
        """Measured requests a run needs: min_prompts, and prompts_per_concurrency × concurrency."""
        need = self.min_prompts or 1
        if self.prompts_per_concurrency and concurrency:
            need = max(need, self.prompts_per_concurrency * concurrency)
        return need

    def display(self) -> str:
        return self.label or self.name


class StartingPoint(_Catalog):
    model: str
    gpu: str
    workload: str | None = None
    tokens_per_s_per_gpu: float
    source: str
    notes: str | None = None

"""Every physics formula orv uses, in one place: implied MFU, cost per 1M tokens, bits per weight, the decode
bound, the compute bounds on prefill and on a run's aggregate.

The checks (ORV509/510 MFU, ORV512 decode bound, ORV513/514 compute bounds), the boards (mfu, cost_per_1m) and the legacy
importer's physics screen all call these functions, so a bound can never be stricter in one place
than in another (tests/unit/test_physics.py holds them to it).

## Bits per weight

Bits per weight implied by a quantisation name are chosen low so a bandwidth bound built on it is
never too tight. ORV512 divides HBM bandwidth by the bytes of active weights a decode step must read. Fewer bits
per weight means fewer bytes and a higher (more permissive) bound, so wherever a name is vague we
take the *lowest* width it could mean: the check may then miss a borderline claim but never
rejects a possible one. The table (also printed by `orv explain ORV512`):

| in the quant name                                  | bits/weight taken                        |
|----------------------------------------------------|------------------------------------------|
| `<a>-<b>bpw`, `<a>bpw` (exl2/exl3 style: 3-05bpw)  | a.b (the stated average: 3.05)           |
| `<lo>-<hi>bit`, `<n>bit`                           | lo, n                                    |
| `fp32` / `bf16`, `fp16`, `f16`                     | 32 / 16                                  |
| `fp<n>`, `nvfp<n>`, `mxfp<n>` (fp8, nvfp4, mxfp6)  | n (block scales left out)                |
| `int<n>`, `w<n>`, `w<n>a<m>` (int4, w4a16, w8a8)   | n (group scales left out)                |
| `q<n>`, `iq<n>`, `tq<n>` (GGUF q4-k, q8-0, iq2-xxs) | n (super-block scales left out)          |
| `nf4`                                              | 4                                        |
| only `awq`                                         | 3 (AWQ's lowest published width)         |
| only `gptq` / `autoround`, `auto-round`            | 2 (the lowest width these tools emit)    |
| only `exl2` / `exl3`                               | 2 / 1 (the formats' lowest averages)     |
| nothing recognised (`official`, `exlr8-k2-k3-k4`)  | unknown: the bound is not checked        |

A name that mentions several widths (`exl3-2-9bpw-routed-experts-fp8-core-hybrid`,
`w4a16-fp8-kv`) gets the smallest, since some weights may be stored at it; a width that really
describes the KV cache or activations only makes the bound looser, never wrong. Widths of
activations (`a16` in `w4a16`) are ignored: decode reads weights.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from validator.models import GpuSpec, ModelSpec, WorkloadSpec

# Training FLOPs per token: 6 x active parameters (forward 2, backward 4), attention left out, so
# the implied MFU can only under-state the real one (SPEC §6).
FLOPS_PER_PARAM_TOKEN = 6.0
# Ceilings when the workload does not set its own (catalog/workloads.yaml mfu_ceiling_dense/_moe).
# Dense: about 65% is the best tuned dense training reaches on the 6N count. MoE: token dispatch
# (all-to-all) and many small grouped GEMMs cost time dense layers do not pay, so 50%.
DEFAULT_MFU_CEILING_DENSE = 0.65
DEFAULT_MFU_CEILING_MOE = 0.50
# A model counts as MoE when the catalog says so, or (unsaid) when it holds over twice its active
# parameters; an unsure model gets the dense (higher, more permissive) ceiling.
MOE_PARAMS_RATIO = 2.0
# Decode reads every active weight once per step, except tables looked up by row (input and
# per-layer embeddings) and encoder towers idle during text decode, which catalogs may count as
# active. Assuming only 75% of active weights are read keeps the bound above anything possible.
DECODE_READ_FRACTION = 0.75

_BPW = re.compile(r"(?:^|[-_.])(\d+)(?:[-_.](\d+))?bpw(?=$|[-_.])")
_BIT = re.compile(r"(?:^|[-_.])(\d+)(?:-\d+)?bits?(?=$|[-_.])")
_TOKEN_WIDTHS: tuple[tuple[re.Pattern[str], int | None], ...] = (
    (re.compile(r"fp32|f32"), 32),
    (re.compile(r"bf16|fp16|f16"), 16),
    (re.compile(r"(?:nv|mx)?fp(\d+)"), None),
    (re.compile(r"int(\d+)"), None),
    (re.compile(r"w(\d+)(?:a\d+)?"), None),
    (re.compile(r"(?:i|p?t)?q(\d+)"), None),
    (re.compile(r"nf4"), 4),
)
_FORMAT_FLOORS = {"awq": 3.0, "gptq": 2.0, "autoround": 2.0, "exl2": 2.0, "exl3": 1.0}


@dataclass(frozen=True)
class QuantBits:
    bits: float  # bits per weight, the lowest the name allows
    basis: str  # which part of the name gave it, for messages

    @property
    def bytes_per_weight(self) -> float:
        return self.bits / 8.0


def bits_per_weight(quant: str) -> QuantBits | None:
    """The lowest bits/weight the quant name can mean, or None when nothing in it is recognised."""
    name = quant.lower()
    widths: list[tuple[float, str]] = []
    m: re.Match[str] | None
    for m in _BPW.finditer(name):
        value = float(f"{m.group(1)}.{m.group(2)}") if m.group(2) else float(m.group(1))
        widths.append((value, m.group(0).strip("-_.")))
    for m in _BIT.finditer(name):
        widths.append((float(m.group(1)), m.group(0).strip("-_.")))
    tokens = [t for t in re.split(r"[-_.]", name) if t]
    for token in tokens:
        for pattern, fixed in _TOKEN_WIDTHS:
            m = pattern.fullmatch(token)
            if m:
                widths.append((float(fixed if fixed is not None else int(m.group(1))), token))
                break
    widths = [(bits, basis) for bits, basis in widths if bits > 0]
    if widths:
        bits, basis = min(widths)
        return QuantBits(bits, basis)
    joined = name.replace("-", "").replace("_", "").replace(".", "")
    floors = [(floor, fmt) for fmt, floor in _FORMAT_FLOORS.items() if fmt in tokens or fmt in joined]
    if floors:
        bits, basis = min(floors)
        return QuantBits(bits, basis)
    return None


# --------------------------------------------------------------------------- training


def implied_mfu(tokens_per_s_per_gpu: float, active_b: float | None, peak_tflops: float | None) -> float | None:
    """tokens/s/GPU × 6 × active parameters ÷ the GPU's dense BF16 peak (a fraction, 1.0 = 100%);
    None when the catalog lacks the model's active parameters or the GPU's peak."""
    if not active_b or not peak_tflops:
        return None
    return tokens_per_s_per_gpu * FLOPS_PER_PARAM_TOKEN * active_b * 1e9 / (peak_tflops * 1e12)


def tokens_at_mfu(fraction: float, active_b: float, peak_tflops: float) -> float:
    """The tokens/s/GPU that implied_mfu maps to `fraction` (the inverse, for hints)."""
    return fraction * peak_tflops * 1e12 / (FLOPS_PER_PARAM_TOKEN * active_b * 1e9)


def is_moe(model: ModelSpec) -> bool:
    if model.moe is not None:
        return model.moe
    return (
        model.params_b is not None and model.active_b is not None and model.params_b > MOE_PARAMS_RATIO * model.active_b
    )


def mfu_ceiling(model: ModelSpec, workload: WorkloadSpec | None) -> float:
    if is_moe(model):
        return workload.mfu_ceiling_moe if workload else DEFAULT_MFU_CEILING_MOE
    return workload.mfu_ceiling_dense if workload else DEFAULT_MFU_CEILING_DENSE


def cost_per_1m(price_per_gpu_hour: float | None, tokens_per_s_per_gpu: float) -> float | None:
    """$ per 1M tokens = price per GPU-hour × 10⁶ ÷ (3600 × tokens/s/GPU); from the catalog, never the submitter."""
    if not price_per_gpu_hour or tokens_per_s_per_gpu <= 0:
        return None
    return price_per_gpu_hour * 1e6 / (3600.0 * tokens_per_s_per_gpu)


# --------------------------------------------------------------------------- inference: the decode bound


@dataclass(frozen=True)
class DecodeBound:
    """The fastest one stream can decode: GPUs × HBM bandwidth ÷ bytes of active weights read per step."""

    tok_s: float  # including the speculative factor
    per_step: float  # without it
    bits: QuantBits
    tokens_per_step: int  # k + 1 with speculative decoding, else 1


def decode_bound(gpus: int, hbm_tb_s: float, active_b: float, bits: QuantBits, speculative_k: int = 0) -> DecodeBound:
    bytes_per_step = active_b * 1e9 * bits.bytes_per_weight * DECODE_READ_FRACTION
    per_step = gpus * hbm_tb_s * 1e12 / bytes_per_step
    return DecodeBound(per_step * (speculative_k + 1), per_step, bits, speculative_k + 1)


def decode_bound_for(
    model: ModelSpec | None, gpu: GpuSpec | None, gpus: int, quant: str, speculative_k: int = 0
) -> DecodeBound | None:
    """The bound for a catalog model on a catalog GPU, or None when a figure it needs is unknown
    (the model's active parameters, the GPU's bandwidth, or the quant's width)."""
    bits = bits_per_weight(quant)
    if model is None or gpu is None or not gpu.hbm_tb_s or bits is None or model.active_b is None:
        return None
    return decode_bound(gpus, gpu.hbm_tb_s, model.active_b, bits, speculative_k)


# --------------------------------------------------------------------------- inference: the compute bounds

# A forward pass costs 2 FLOP per active parameter per token (a multiply and an add); attention's own
# FLOPs are left out, so the bound is looser than the truth, never tighter.
FLOPS_PER_PARAM_FORWARD = 2.0
# Tensor cores run 8-bit operands at 2× and 4-bit at 4× the BF16 rate (H100/B200 datasheets); a
# weight width we cannot read might be either, so it gets the 4× too (looser, never wrong).
LOWEST_COMPUTE_BITS = 4.0
# The catalog's peaks are datasheet figures at boost clock; 10% covers a part that clocks higher.
COMPUTE_MARGIN = 1.10


@dataclass(frozen=True)
class ComputeBound:
    """The most tokens per second GPUs can push through a model's forward pass at their peak."""

    tok_s: float
    gpus: int
    peak_tflops: float  # BF16 dense, per GPU
    speedup: float  # of the quant's operand width over BF16
    active_b: float

    def derivation(self) -> str:
        return (
            f"{self.gpus} × {self.peak_tflops:g} TFLOP/s BF16 × {self.speedup:g} (operand width) × "
            f"{COMPUTE_MARGIN:g} ÷ ({FLOPS_PER_PARAM_FORWARD:g} FLOP × {self.active_b:g}B active parameters)"
        )


def operand_speedup(quant: str) -> float:
    """How much faster than BF16 the quant's operands may run: 16 ÷ its width, at least 1, at most 4
    (a width read from a name is the lowest it can mean; an unread one gets the most permissive 4)."""
    bits = bits_per_weight(quant)
    width = max(bits.bits, LOWEST_COMPUTE_BITS) if bits is not None else LOWEST_COMPUTE_BITS
    return max(1.0, 16.0 / width)


def compute_bound_for(model: ModelSpec | None, gpu: GpuSpec | None, gpus: int, quant: str) -> ComputeBound | None:
    """Tokens/s the GPUs' peak compute allows for the model's forward pass (prefill: prompt tokens; a run's
    aggregate: prompt and output tokens), or None when the catalog lacks the active parameters or the peak."""
    if model is None or gpu is None or not model.active_b or not gpu.bf16_dense_tflops or gpus <= 0:
        return None
    speedup = operand_speedup(quant)
    flops = gpus * gpu.bf16_dense_tflops * 1e12 * speedup * COMPUTE_MARGIN
    return ComputeBound(
        flops / (FLOPS_PER_PARAM_FORWARD * model.active_b * 1e9), gpus, gpu.bf16_dense_tflops, speedup, model.active_b
    )

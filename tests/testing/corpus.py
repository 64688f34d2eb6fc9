"""The calibration corpus of ORV304's near-copy rule: honest re-measurements and forgeries of runs.

Honest re-measurements repeat one workload (the same steps, the same requests and token counts,
as a deterministic benchmark does) with the noise real tools show between runs (docs/metrics.md,
"Independent runs", gives the figures and their sources):

  training   step time = base x (1 + a shared, data-dependent part, 1%) x (1 + per-run level, 1%)
             x (1 + per-step jitter, 0.05% / 0.1% (a stable cluster) / 0.5% / 1% / 2%); the first two
             steps 3x (warm-up) and every 50th +20% (a periodic save): structure both runs share.
             Megatron's log precision (0.1 ms), as the adapter stores it.
  inference  per request: TTFT = prefill time of its prompt x a per-run, per-request factor
             (log-normal, sigma 25%: queueing and batch composition; 5% of requests 2-6x more, the
             heavy tail); e2e = TTFT + (output - 1) x inter-token latency, the ITL moved per run
             (sigma 2%) and per request (sigma 3%). Token counts varying (random dataset) or fixed
             (ignore_eos at ISL/OSL).
  prefix cache  a quiet machine (vLLM's random dataset at concurrency 1) on a dataset a share of whose
             requests (30% or 50%) hit the prefix cache: TTFT = prefill of the prompt's uncached tokens
             x (1 + per-run, per-request noise, sigma 0.5%); a hit's cached prefix is 30-90% of its
             prompt in 16-token blocks, fixed by the dataset (a shared per-request part, rough in the
             prompt's order: neighbours in prompt length may be cached or not); e2e = TTFT + (output - 1)
             x inter-token latency (per run sigma 0.5%, per request 0.3%). No heavy tail.
  llama-bench  tg128 with `-r 10` or `-r 8`: ttft_ms = 0.0, e2e = the repetition's wall time
             (per-run level sigma 1%, per-repetition sigma 0.3%), to the nanosecond.

Forgeries copy one run's samples and then: append 1 or 10 samples (repeats of existing ones),
drop 1 or 10, duplicate 5, reorder, rescale (x 1.0003 or x 0.97) and offset, add jitter (relative,
uniform) below the column's honest floor, or combine jitter with a rescale, appended, dropped and
reordered samples; and issue #51's table: permute or bootstrap (TTFT, TPOT) between requests, edit
a third of the samples by 2%, jitter only TTFT, merge two runs, reorder a fixed-length workload
with 1e-6 jitter, and combinations (jitter + drop + reorder + merge); and issue #51's review: a
moving average of neighbouring samples (of 2, of 3, of 3 rescaled), and TTFTs x1.01 with the
decode times of the two halves swapped and x1.005.
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

Samples = list[dict[str, Any]]


@dataclass(frozen=True)
class Workload:
    kind: str
    size: int  # steps or requests
    seed: int
    variable: bool = True  # inference: token counts vary per request (else fixed ISL/OSL)
    jitter: float = 0.01  # training: per-step jitter (relative sigma)
    tool: str = ""  # "llama-bench": repetitions of one generation test
    cached: float = 0.0  # inference: the share of requests that hit the prefix cache (a quiet machine)


def _gauss(rng: random.Random, sigma: float) -> float:
    return max(-0.5, rng.gauss(0.0, sigma))


def measure(workload: Workload, run_seed: int) -> Samples:
    """One honest run of the workload: its structure fixed by workload.seed, its noise by run_seed."""
    shape, noise = random.Random(workload.seed), random.Random(run_seed * 7919 + workload.seed)
    if workload.kind == "training":
        base = shape.uniform(2.0, 90.0)  # seconds per step
        level = 1 + _gauss(noise, 0.01)
        samples = []
        for step in range(1, workload.size + 1):
            data = 1 + _gauss(shape, 0.01)
            structure = 3.0 if step <= 2 else (1.2 if step % 50 == 0 else 1.0)
            seconds = base * data * structure * level * (1 + _gauss(noise, workload.jitter))
            samples.append(
                {
                    "step": step,
                    "time_s": round(seconds * 1000, 1) / 1000,
                    "tokens": 1_048_576,
                    "loss": round(2.0 - step / (workload.size + 1) + _gauss(noise, 0.002), 4),
                }
            )
        return samples
    if workload.tool == "llama-bench":
        per_token = shape.uniform(5.0, 40.0)  # ms per generated token
        level = 1 + _gauss(noise, 0.01)
        return [
            {
                "prompt_tokens": 0,
                "output_tokens": 128,
                "ttft_ms": 0.0,
                "e2e_ms": round(128 * per_token * level * (1 + _gauss(noise, 0.003)), 6),
            }
            for _ in range(workload.size)
        ]
    if workload.cached:
        return _cached_run(workload, shape, noise)
    isl, osl = shape.choice([(1024, 1024), (1024, 8192), (8192, 1024), (128, 128)])
    prefill_per_token = shape.uniform(0.02, 0.2)  # ms
    itl = shape.uniform(8, 40) * (1 + _gauss(noise, 0.02))
    samples = []
    for _ in range(workload.size):
        prompt = shape.randint(int(isl * 0.9), int(isl * 1.1)) if workload.variable else isl
        output = shape.randint(osl // 2, osl) if workload.variable else osl
        tail = noise.uniform(2, 6) if noise.random() < 0.05 else 1.0  # a request queued behind others
        ttft = (5 + prompt * prefill_per_token) * math.exp(noise.gauss(0.0, 0.25)) * tail
        e2e = ttft + (output - 1) * itl * (1 + _gauss(noise, 0.03))
        samples.append({"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e})
    return samples


def _cached_run(workload: Workload, shape: random.Random, noise: random.Random) -> Samples:
    """A quiet inference run on a dataset part of whose requests hit the prefix cache (module docstring)."""
    prefill_per_token = shape.uniform(0.02, 0.1)  # ms
    itl = shape.uniform(8, 30) * (1 + _gauss(noise, 0.005))
    samples = []
    for _ in range(workload.size):
        prompt, output = shape.randint(100, 2000), shape.randint(50, 500)
        hit = shape.random() < workload.cached
        cached = int(prompt * shape.uniform(0.3, 0.9)) // 16 * 16 if hit else 0
        ttft = (10 + (prompt - cached) * prefill_per_token) * (1 + _gauss(noise, 0.005))
        e2e = ttft + (output - 1) * itl * (1 + _gauss(noise, 0.003))
        samples.append({"prompt_tokens": prompt, "output_tokens": output, "ttft_ms": ttft, "e2e_ms": e2e})
    return samples


def _timing(kind: str) -> tuple[str, ...]:
    return ("time_s",) if kind == "training" else ("ttft_ms", "e2e_ms")


def _map(kind: str, samples: Samples, scale: float, offset: float, width: float, seed: int) -> Samples:
    """Every timing x -> (scale * x + offset * the column's mean) * (1 + uniform(-width, width))."""
    rng = random.Random(seed)
    means = {c: sum(s[c] for s in samples) / len(samples) for c in _timing(kind)}
    return [
        {**s, **{c: (s[c] * scale + offset * means[c]) * (1 + rng.uniform(-width, width)) for c in _timing(kind)}}
        for s in samples
    ]


def _jitter_only(samples: Samples, column: str, width: float, seed: int) -> Samples:
    rng = random.Random(seed)
    return [{**s, column: s[column] * (1 + rng.uniform(-width, width))} for s in samples]


def _moved(samples: Samples, seed: int, replace: bool) -> Samples:
    """Each request's (TTFT, TPOT) from another request (a permutation, or drawn with replacement);
    e2e recomputed from them, token counts kept."""
    rng = random.Random(seed)
    pairs = [(s["ttft_ms"], (s["e2e_ms"] - s["ttft_ms"]) / max(s["output_tokens"] - 1, 1)) for s in samples]
    chosen = [rng.choice(pairs) for _ in pairs] if replace else rng.sample(pairs, len(pairs))
    return [
        {**s, "ttft_ms": ttft, "e2e_ms": ttft + tpot * max(s["output_tokens"] - 1, 1)}
        for s, (ttft, tpot) in zip(samples, chosen)
    ]


def _edit_third(kind: str, samples: Samples, seed: int) -> Samples:
    """A third of the samples' first timing moved by +-2%, everything else bit-identical."""
    rng = random.Random(seed)
    column = _timing(kind)[0]
    edited = set(rng.sample(range(len(samples)), len(samples) // 3))
    return [
        {**s, column: s[column] * (1 + rng.choice((-0.02, 0.02)))} if i in edited else s for i, s in enumerate(samples)
    ]


def _smoothed(kind: str, samples: Samples, taps: tuple[int, ...]) -> Samples:
    """Each sample's timings the average of the samples at the offsets `taps` from it (in list
    order, wrapping): a moving average of the original. Inference averages TTFT and decode time
    (e2e - TTFT) and adds them up again; training keeps Megatron's 0.1 ms."""
    n = len(samples)

    def mean(values: list[float], i: int) -> float:
        return sum(values[(i + t) % n] for t in taps) / len(taps)

    if kind == "training":
        times = [s["time_s"] for s in samples]
        return [{**s, "time_s": round(mean(times, i) * 1000, 1) / 1000} for i, s in enumerate(samples)]
    ttft = [s["ttft_ms"] for s in samples]
    decode = [s["e2e_ms"] - s["ttft_ms"] for s in samples]
    return [{**s, "ttft_ms": mean(ttft, i), "e2e_ms": mean(ttft, i) + mean(decode, i)} for i, s in enumerate(samples)]


def _halves_swapped(samples: Samples, ttft_scale: float, decode_scale: float) -> Samples:
    """Every TTFT rescaled, and the decode times (e2e - TTFT) of the two halves of the run swapped and
    rescaled: the TTFT column a rescaled copy, the e2e column a reshuffled one."""
    half = len(samples) // 2
    decode = [s["e2e_ms"] - s["ttft_ms"] for s in samples]
    decode = decode[half:] + decode[:half]
    return [
        {**s, "ttft_ms": s["ttft_ms"] * ttft_scale, "e2e_ms": s["ttft_ms"] * ttft_scale + d * decode_scale}
        for s, d in zip(samples, decode)
    ]


def _drop(samples: Samples, count: int, seed: int) -> Samples:
    gone = set(random.Random(seed).sample(range(len(samples)), min(count, len(samples) // 3)))
    return [s for i, s in enumerate(samples) if i not in gone]


def _shuffled(samples: Samples, seed: int) -> Samples:
    out = samples[:]
    random.Random(seed).shuffle(out)
    return out


def _merged(first: Samples, second: Samples) -> Samples:
    return [s for pair in zip(first, second) for s in pair] + first[len(second) :] + second[len(first) :]


# Below each kind's honest floor (docs/metrics.md): training per-step noise >= 0.05%, TTFT >= 5%,
# e2e >= 1.5%, llama-bench's repetitions their own spread; a quiet prefix-cache run's own noise (TTFT
# sigma 0.5%, e2e ~0.3%): +-0.1% (sigma 0.06%). Its +-0.3% copies, half its own noise, are measured
# apart (bench/copies.py, `quiet_jitter`): docs/metrics.md states what they show.
FORGED_JITTER = {"training": 1e-4, "inference": 3e-3, "prefix cache": 1e-3}


def forgeries(
    kind: str, samples: Samples, seed: int, second: Samples | None = None, floor: float | None = None
) -> Iterator[tuple[str, Samples]]:
    """(name, forged samples) for every forgery of the corpus, made from one run's samples (and
    `second`, another run of the same measurer and workload, for merges); `floor`, the jitter "at the
    floor's edge" (FORGED_JITTER of the kind unless given)."""
    rng = random.Random(seed)
    n = len(samples)
    floor = FORGED_JITTER[kind] if floor is None else floor
    yield "append 1", samples + [dict(rng.choice(samples))]
    yield "append 10", samples + [dict(rng.choice(samples)) for _ in range(10)]
    gone = rng.randrange(n)
    yield "drop 1", [s for i, s in enumerate(samples) if i != gone]
    dropped = set(rng.sample(range(n), min(10, n // 3)))
    yield "drop 10", [s for i, s in enumerate(samples) if i not in dropped]
    twice = set(rng.sample(range(n), min(5, n)))
    yield "duplicate 5", [t for i, s in enumerate(samples) for t in ([s, dict(s)] if i in twice else [s])]
    yield "reorder", _shuffled(samples, seed)
    yield "x0.97 + offset", _map(kind, samples, 0.97, 0.005, 0.0, seed)
    yield "jitter 1e-5", _map(kind, samples, 1.0, 0.0, 1e-5, seed)
    yield "x1.0003, jitter 0.01%", _map(kind, samples, 1.0003, 0.0, 1e-4, seed)
    yield "x0.98 + offset, jitter at the floor's edge", _map(kind, samples, 0.98, 0.005, floor, seed)
    jittered = _map(kind, samples, 1.0003, 0.0, 1e-4, seed)
    yield "jitter 0.01%, append 3", jittered + [dict(rng.choice(jittered)) for _ in range(3)]
    yield "jitter at the floor's edge, drop 10", _drop(_map(kind, samples, 1.0, 0.0, floor, seed), 10, seed)
    yield "jitter 0.01%, drop 10, reorder", _shuffled(_drop(_map(kind, samples, 1.0, 0.0, 1e-4, seed), 10, seed), seed)
    yield "partial edit (a third +-2%)", _edit_third(kind, samples, seed)
    yield "neighbour average", _smoothed(kind, samples, (0, 1))
    yield "moving average of 3", _smoothed(kind, samples, (-1, 0, 1))
    yield "moving average of 3, x1.01", _map(kind, _smoothed(kind, samples, (-1, 0, 1)), 1.01, 0.0, 0.0, seed)
    if kind == "inference":
        yield "permute (TTFT, TPOT)", _moved(samples, seed, replace=False)
        yield "bootstrap (TTFT, TPOT)", _moved(samples, seed, replace=True)
        yield "TTFT only +-0.3%", _jitter_only(samples, "ttft_ms", 3e-3, seed)
        yield "TTFT x1.01, decode x1.005 with its halves swapped", _halves_swapped(samples, 1.01, 1.005)
        yield "fixed-length reorder, jitter 1e-6", _shuffled(_map(kind, samples, 1.0, 0.0, 1e-6, seed), seed)
    if second is not None:
        yield "merge", _merged(samples, second)
        merged = _merged(_map(kind, samples, 1.0, 0.0, 1e-4, seed), _map(kind, second, 1.0, 0.0, 1e-4, seed + 1))
        yield "jitter 0.01% + drop 10 + reorder + merge", _shuffled(_drop(merged, 10, seed), seed)


def llama_bench_forgeries(samples: Samples, seed: int) -> Iterator[tuple[str, Samples]]:
    """A tg128 run's repetitions copied: 1e-5 jitter (issue #51), alone or with the order changed."""
    yield "jitter 1e-5", _map("inference", samples, 1.0, 0.0, 1e-5, seed)
    yield "reorder, jitter 1e-5", _shuffled(_map("inference", samples, 1.0, 0.0, 1e-5, seed), seed)
    yield "x1.0003, jitter 1e-4", _map("inference", samples, 1.0003, 0.0, 1e-4, seed)


def workloads(scale: int = 1) -> Iterator[Workload]:
    """The corpus's workloads; `scale` multiplies the seeds per shape (the published figures use 10)."""
    for seed in range(3 * scale):
        for size in (16, 64, 200, 1000):
            for jitter in (0.0005, 0.001, 0.005, 0.01, 0.02):
                yield Workload("training", size, 100 + seed, jitter=jitter)
            for variable in (True, False):
                yield Workload("inference", size, 200 + seed, variable=variable)
        for repetitions in (10, 8):
            yield Workload("inference", repetitions, 300 + seed, variable=False, tool="llama-bench")
        for size in (64, 200, 1000):  # 16 requests: `prefix_cache` (as the figures published before them)
            for share in (0.3, 0.5):
                yield Workload("inference", size, 400 + seed, cached=share)


@dataclass
class Rates:
    """What the near-copy rule says on the corpus: honest pairs flagged, forgeries missed (by name)."""

    honest_pairs: int = 0
    false_positives: int = 0
    forgeries: int = 0
    false_negatives: int = 0
    missed: dict[str, int] | None = None
    closest_honest: float = math.inf  # the smallest timing residual of an honest pair (timing_agreement's)

    def as_dict(self) -> dict[str, Any]:
        return {
            "honest_pairs": self.honest_pairs,
            "false_positives": self.false_positives,
            "forgeries": self.forgeries,
            "false_negatives": self.false_negatives,
            "missed": dict(sorted((self.missed or {}).items())),
        }


def _class(workload: Workload) -> str:
    """The corpus class a workload's figures are reported under."""
    return workload.tool or ("inference (prefix cache)" if workload.cached else workload.kind)


def forgeries_of(workload: Workload, samples: Samples, floor: float | None = None) -> Iterator[tuple[str, Samples]]:
    """The corpus's forgeries of a run of `workload` (its `samples`): llama-bench's for that tool, else
    `forgeries`, merging with another run of the workload (measure(workload, 99)); `floor` as `forgeries`'."""
    if workload.tool:
        return llama_bench_forgeries(samples, workload.seed)
    return forgeries(workload.kind, samples, workload.seed, measure(workload, 99), floor)


def _floor(workload: Workload) -> float | None:
    return FORGED_JITTER["prefix cache"] if workload.cached else None


def evaluate(scale: int = 1, reruns: int = 3) -> Rates:
    """FP and FN of ORV304 as a registry runs it (independence.compared): a forgery counts as caught
    only when the pair also shares a bucket (what keeps ORV304 near-linear finds it), and by the rules
    its shared keys lead to."""
    from validator.science.independence import buckets, compared, sample_fingerprint

    rates = Rates(missed={})
    for workload in workloads(scale):
        runs = [measure(workload, r) for r in range(reruns)]
        prints = [sample_fingerprint(workload.kind, run) for run in runs]
        for i in range(reruns):
            for j in range(i + 1, reruns):
                rates.honest_pairs += 1
                if compared(prints[i], prints[j], buckets(prints[i]), buckets(prints[j])):
                    rates.false_positives += 1
        original = prints[0]
        made = forgeries_of(workload, runs[0], _floor(workload))
        for name, forged in made:
            rates.forgeries += 1
            fake = sample_fingerprint(workload.kind, forged)
            if not compared(original, fake, buckets(original), buckets(fake)):
                rates.false_negatives += 1
                assert rates.missed is not None
                label = f"{_class(workload)}: {name}"
                rates.missed[label] = 1 + rates.missed.get(label, 0)
    return rates


TOOLS = {
    "megatron (training, 0.1 ms log)": lambda seed, size: Workload("training", size, 100 + seed, jitter=0.0005),
    "vllm (random dataset)": lambda seed, size: Workload("inference", size, 200 + seed),
    "vllm (fixed-length)": lambda seed, size: Workload("inference", size, 200 + seed, variable=False),
    "llama-bench tg128 -r 10": lambda seed, size: Workload("inference", 10, 300 + seed, tool="llama-bench"),
}
WIDTHS = (1e-6, 1e-5, 1e-4, 2e-4, 5e-4, 1e-3, 3e-3, 1e-2, 3e-2)


def detection(scale: int = 1, sizes: tuple[int, ...] = (64, 200)) -> dict[str, dict[str, dict[str, float]]]:
    """Per tool: the share of copies caught by relative jitter width (uniform, on every timing),
    alone and with one sample dropped, and the share of honest pairs flagged (the corpus's
    stable-cluster noise for training). A copy counts as caught only if it also shares a bucket."""
    from validator.science.independence import buckets, compared, sample_fingerprint

    found: dict[str, dict[str, dict[str, float]]] = {}
    for tool, make in TOOLS.items():
        caught: dict[str, list[int]] = {}
        honest = [0, 0]
        for seed in range(3 * scale):
            for size in sizes:
                workload = make(seed, size)
                original = measure(workload, 0)
                first = sample_fingerprint(workload.kind, original)
                second = sample_fingerprint(workload.kind, measure(workload, 1))
                honest[0] += 1
                honest[1] += bool(compared(first, second, buckets(first), buckets(second)))
                for width in WIDTHS:
                    for label, copy in (
                        ("jitter", _map(workload.kind, original, 1.0, 0.0, width, seed)),
                        ("jitter, drop 1", _drop(_map(workload.kind, original, 1.0, 0.0, width, seed), 1, seed)),
                    ):
                        fake = sample_fingerprint(workload.kind, copy)
                        hit = bool(compared(first, fake, buckets(first), buckets(fake)))
                        tally = caught.setdefault(f"{label} {width:g}", [0, 0])
                        tally[0] += 1
                        tally[1] += hit
        found[tool] = {
            "caught": {key: hits / total for key, (total, hits) in caught.items()},
            "honest flagged": {"pairs": float(honest[0]), "rate": honest[1] / honest[0]},
        }
    return found


def prefix_cache(scale: int = 1, sizes: tuple[int, ...] = (16, 64, 200, 1000)) -> dict[str, dict[str, Any]]:
    """The prefix-cache class (module docstring) at hit shares 30%, 50% and 80%: honest pairs flagged, and
    copies caught at +-0.1% (alone and with one request dropped) and +-0.3% jitter on every timing (uniform; the
    run's own TTFT noise is sigma 0.5%), per share and request count. A pair counts as flagged only if it also
    shares a bucket."""
    from validator.science.independence import buckets, compared, sample_fingerprint

    def flagged(a: Samples, b: Samples) -> bool:
        first, second = sample_fingerprint("inference", a), sample_fingerprint("inference", b)
        return bool(compared(first, second, buckets(first), buckets(second)))

    found: dict[str, dict[str, Any]] = {}
    for share in (0.3, 0.5, 0.8):
        for size in sizes:
            tally = {
                "pairs": 0,
                "honest flagged": 0,
                "caught +-0.1%": 0,
                "caught +-0.1%, drop 1": 0,
                "caught +-0.3%": 0,
            }
            for seed in range(3 * scale):
                workload = Workload("inference", size, 500 + seed, cached=share)
                original = measure(workload, 0)
                tally["pairs"] += 1
                tally["honest flagged"] += flagged(original, measure(workload, 1))
                tally["caught +-0.1%"] += flagged(original, _map("inference", original, 1.0, 0.0, 1e-3, seed))
                dropped = _drop(_map("inference", original, 1.0, 0.0, 1e-3, seed), 1, seed)
                tally["caught +-0.1%, drop 1"] += flagged(original, dropped)
                tally["caught +-0.3%"] += flagged(original, _map("inference", original, 1.0, 0.0, 3e-3, seed))
            found[f"{share:.0%} hits, {size} requests"] = tally
    return found

"""The calibration corpus of ORV304's near-copy rule: honest re-measurements and forgeries of runs.

Honest re-measurements repeat one workload (the same steps, the same requests and token counts,
as a deterministic benchmark does) with the noise real tools show between runs (docs/metrics.md,
"Independent runs", gives the figures and their sources):

  training   step time = base x (1 + a shared, data-dependent part, 1%) x (1 + per-run level, 1%)
             x (1 + per-step jitter, 0.5% / 1% / 2%); the first two steps 3x (warm-up) and every
             50th +20% (a periodic save): structure both runs share. Megatron's log precision
             (0.1 ms), as the adapter stores it.
  inference  per request: TTFT = prefill time of its prompt x a per-run, per-request factor
             (log-normal, sigma 25%: queueing and batch composition); e2e = TTFT + (output - 1) x
             inter-token latency, the ITL moved per run (sigma 2%) and per request (sigma 3%).
             Token counts varying (random dataset) or fixed (ignore_eos at ISL/OSL).

Forgeries copy one run's samples and then: append 1 or 10 samples (repeats of existing ones),
drop 1 or 10, duplicate 5, reorder, rescale (x 1.0003 or x 0.97) and offset, add jitter up to 0.1%
(relative, uniform) on every timing, or combine jitter with a rescale and with appended samples.
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
    isl, osl = shape.choice([(1024, 1024), (1024, 8192), (8192, 1024), (128, 128)])
    prefill_per_token = shape.uniform(0.02, 0.2)  # ms
    itl = shape.uniform(8, 40) * (1 + _gauss(noise, 0.02))
    samples = []
    for _ in range(workload.size):
        prompt = shape.randint(int(isl * 0.9), int(isl * 1.1)) if workload.variable else isl
        output = shape.randint(osl // 2, osl) if workload.variable else osl
        ttft = (5 + prompt * prefill_per_token) * math.exp(noise.gauss(0.0, 0.25))
        e2e = ttft + (output - 1) * itl * (1 + _gauss(noise, 0.03))
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


def forgeries(kind: str, samples: Samples, seed: int) -> Iterator[tuple[str, Samples]]:
    """(name, forged samples) for every forgery of the corpus, made from one run's samples."""
    rng = random.Random(seed)
    n = len(samples)
    yield "append 1", samples + [dict(rng.choice(samples))]
    yield "append 10", samples + [dict(rng.choice(samples)) for _ in range(10)]
    gone = rng.randrange(n)
    yield "drop 1", [s for i, s in enumerate(samples) if i != gone]
    dropped = set(rng.sample(range(n), min(10, n // 3)))
    yield "drop 10", [s for i, s in enumerate(samples) if i not in dropped]
    twice = set(rng.sample(range(n), min(5, n)))
    yield "duplicate 5", [t for i, s in enumerate(samples) for t in ([s, dict(s)] if i in twice else [s])]
    shuffled = samples[:]
    rng.shuffle(shuffled)
    yield "reorder", shuffled
    yield "x0.97 + offset", _map(kind, samples, 0.97, 0.005, 0.0, seed)
    yield "jitter 1e-5", _map(kind, samples, 1.0, 0.0, 1e-5, seed)
    yield "x1.0003, jitter 0.01%", _map(kind, samples, 1.0003, 0.0, 1e-4, seed)
    yield "x1.0003, jitter 0.1%", _map(kind, samples, 1.0003, 0.0, 1e-3, seed)
    yield "x0.98 + offset, jitter 0.1%", _map(kind, samples, 0.98, 0.005, 1e-3, seed)
    jittered = _map(kind, samples, 1.0003, 0.0, 1e-4, seed)
    yield "jitter 0.01%, append 3", jittered + [dict(rng.choice(jittered)) for _ in range(3)]


def workloads(scale: int = 1) -> Iterator[Workload]:
    """The corpus's workloads; `scale` multiplies the seeds per shape (the published figures use 4)."""
    for seed in range(3 * scale):
        for size in (16, 64, 200, 1000):
            for jitter in (0.005, 0.01, 0.02):
                yield Workload("training", size, 100 + seed, jitter=jitter)
            for variable in (True, False):
                yield Workload("inference", size, 200 + seed, variable=variable)


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


def evaluate(scale: int = 1, reruns: int = 3) -> Rates:
    """FP and FN of independence.same_measurement with its bucketing: a forgery counts as caught
    only when the pair also shares a bucket (what keeps ORV304 near-linear finds it)."""
    from validator.science.independence import buckets, same_measurement, sample_fingerprint

    rates = Rates(missed={})
    for workload in workloads(scale):
        runs = [measure(workload, r) for r in range(reruns)]
        prints = [sample_fingerprint(workload.kind, run) for run in runs]
        for i in range(reruns):
            for j in range(i + 1, reruns):
                rates.honest_pairs += 1
                if set(buckets(prints[i])) & set(buckets(prints[j])) and same_measurement(prints[i], prints[j]):
                    rates.false_positives += 1
        original = prints[0]
        for name, forged in forgeries(workload.kind, runs[0], workload.seed):
            rates.forgeries += 1
            fake = sample_fingerprint(workload.kind, forged)
            if not (set(buckets(original)) & set(buckets(fake)) and same_measurement(original, fake)):
                rates.false_negatives += 1
                assert rates.missed is not None
                label = f"{workload.kind}: {name}"
                rates.missed[label] = 1 + rates.missed.get(label, 0)
    return rates

"""A recipe's quality status against its model's reference: verified, below, partial, missing, no-reference.

SPEC §3 "Quality runs" and docs/quality.md. `verified`: a full-set run (every document, no
--limit, no chosen subset) with the same task_hashes as the reference, every filter at least
bound x the reference's recomputed score. `below`: comparable, some filter under the bound.
`partial`: a subset run, or different task_hashes (another prompt or few-shot count). `missing`:
no quality run. `no-reference`: the model names no (usable) reference run for the task.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from validator.models import InferenceRecipe, ModelSpec
from validator.registry.layout import MODELS_PATH
from validator.stacks.launch_args import launch_quality_reasons

DEFAULT_BOUND = 0.99  # MLPerf Inference's accuracy target: 99% of the reference
DEFAULT_TASK = "gsm8k"
FULL_PRECISION = frozenset({"bf16", "fp16", "fp32"})
# llama.cpp names a GGUF's unquantized file types f16 and f32 (validator/stacks/llamacpp.py, GGUF_FTYPE_NAMES):
# the same precisions, so an F32 or F16 GGUF recipe is at full precision as an fp32 or fp16 one is
GGUF_SPELLING = {"f16": "fp16", "f32": "fp32"}
_KV_QUANT = re.compile(r"(fp8|int8|int4|fp4|nvfp4|q[2-8])[-_]?kv|kv[-_]?(cache[-_]?)?(fp8|int8|int4|fp4|nvfp4|q[2-8])")
STATUS_ORDER = ("verified", "below", "partial", "missing", "no-reference")
# Each status in words for a reader who does not know them: a short word (the site's board cell)
# and what it means (the wanted lists of the site and of `orv wanted`).
STATUS_WORDS = {
    "verified": ("Verified", "scores within the model's quality bound of its reference run"),
    "below": ("Below bound", "scores under the model's quality bound of its reference run"),
    "partial": ("Partial", "only a subset run, or one not comparable with the reference run"),
    "missing": ("No quality run", "no quality run of this checkpoint on record yet"),
    "no-reference": ("No reference", "its model has no reference quality run to compare with yet"),
}

# A quality run whose responses are another run's on at least this share of their common documents
# is that run's evaluation (docs/quality.md, "Identical responses"): greedy decoding at another
# precision changes the text of far more documents than 2%, and a forger editing a few responses
# to slip under a 100% rule stays above this one.
IDENTICAL_RESPONSES = 0.98
COPIED = "copied"  # QualityResult.why starts so when the only runs repeat the reference's responses


@dataclass(frozen=True)
class QualityResult:
    task: str
    status: str
    metric: str | None = None
    filter: str | None = None  # the worst filter
    score: float | None = None
    reference: float | None = None
    ratio: float | None = None
    n: int | None = None
    bound: float = DEFAULT_BOUND
    run: str | None = None  # digest of the run the status comes from
    why: str = ""

    def board(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "metric": self.metric,
            "filter": self.filter,
            "score": None if self.score is None else round(self.score, 6),
            "reference": None if self.reference is None else round(self.reference, 6),
            "ratio": None if self.ratio is None else round(self.ratio, 4),
            "n": self.n,
            "status": self.status,
        }


def kv_quantized(quant: str) -> bool:
    return bool(_KV_QUANT.search(quant))


_UNQUANTIZED_KV = re.compile(r"[-_]?(bf16|fp16|fp32)[-_]?kv$")


def weight_quant(quant: str) -> str:
    """The part of a quant that names the weights' format: `bf16-fp8-kv` -> `bf16`."""
    return _UNQUANTIZED_KV.sub("", _KV_QUANT.sub("", quant)).strip("-_") or quant


def full_precision(quant: str) -> bool:
    return GGUF_SPELLING.get(quant, quant) in FULL_PRECISION


def full_precision_weights(quant: str) -> bool:
    return full_precision(weight_quant(quant))


def reference_quant(runs: Mapping[str, Any], spec: ModelSpec | None, task: str) -> str | None:
    ref = _reference_entry(runs, spec, task)
    return ref.quality.quant if ref is not None else None


def needs_quality(recipe: InferenceRecipe, ref_quant: str | None) -> list[str]:
    """Why this recipe needs quality evidence (empty: it serves the model as the reference does)."""
    why = []
    if ref_quant is not None and recipe.quant != ref_quant:
        why.append(f"quant {recipe.quant} differs from the reference's {ref_quant}")
    elif ref_quant is None and not full_precision(recipe.quant):
        why.append(f"quant {recipe.quant} is not a published full precision")
    if recipe.serving.speculative is not None:
        why.append(f"speculative decoding ({recipe.serving.speculative.method})")
    if kv_quantized(recipe.quant):
        why.append("quantized KV cache")
    # what the launch turns on is judged as that setting, stated or not (ORV254, ORV255 ask to state it)
    already = {
        "quantized KV": kv_quantized(recipe.quant),
        "quantized weights": not full_precision_weights(recipe.quant),
    }
    why += [w for w in launch_quality_reasons(recipe) if not any(w.startswith(k) and v for k, v in already.items())]
    return why


def few_shot_counts(facts: Any) -> tuple[Any, Any]:
    """The few-shot count a quality run states for a task: lm-eval's `n-shot` and its task config's
    `num_fewshot` (both are lm-eval's own; either differing from another run's means other prompts)."""
    try:
        configured = json.loads(facts.settings).get("num_fewshot") if facts.settings else None
    except (ValueError, AttributeError):
        configured = None
    return facts.n_shot, configured


def shots_conflict(a: tuple[Any, Any], b: tuple[Any, Any]) -> bool:
    """Do two runs' stated few-shot counts contradict each other? Only what both state counts: a run
    that states none (an older lm-eval writes no `n-shot`) contradicts nothing."""
    return any(x is not None and y is not None and x != y for x, y in zip(a, b))


def describe_shots(counts: tuple[Any, Any]) -> str:
    n_shot, configured = counts
    if n_shot == configured or configured is None:
        return f"n_shot {n_shot}"
    return f"n_shot {n_shot} (num_fewshot {configured})"


def identical_responses(a: Any, b: Any) -> tuple[int, int]:
    """(documents whose responses are identical, documents both runs answered) of two TaskFacts."""
    mine = dict(a.responses)
    common = [(doc, digest) for doc, digest in b.responses if doc in mine]
    return sum(mine[doc] == digest for doc, digest in common), len(common)


def repeats(a: Any, b: Any) -> bool:
    """Does one quality run repeat the other's responses (IDENTICAL_RESPONSES of common documents)?"""
    same, common = identical_responses(a, b)
    return common > 0 and same >= IDENTICAL_RESPONSES * common


def repeating_pairs(facts: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every pair (a, b), a < b, of these runs' TaskFacts with `repeats(facts[a], facts[b])`, without
    comparing every pair: at 100,000 run files one model's quality runs are thousands, and comparing each
    pair took most of a full check (4,800 runs: 11.5 million comparisons).

    Exact by pigeonhole. Two runs answering the same documents, each once, that repeat each other
    disagree on at most (1 - IDENTICAL_RESPONSES) of them, fewer than `blocks`; so split the documents
    into that many fixed blocks and at least one block holds identical responses in both runs. Only
    runs sharing a block's responses are compared. Runs answering other document sets, or a document
    twice, are compared with every run, as before (rare: a full task answers every document once)."""
    names = sorted(facts)
    answers = {name: dict(facts[name].responses) for name in names}
    by_documents: dict[frozenset[int], list[str]] = {}
    odd: list[str] = []
    for name in names:
        documents = frozenset(answers[name])
        if documents and len(documents) == len(facts[name].responses):
            by_documents.setdefault(documents, []).append(name)
        else:
            odd.append(name)
    candidates: set[tuple[str, str]] = set()
    for documents, members in by_documents.items():
        if len(members) < 2:
            continue
        order = sorted(documents)
        blocks = int((1 - IDENTICAL_RESPONSES) * len(order)) + 2  # more than the disagreements allowed
        sharing: dict[tuple[int, tuple[str, ...]], list[str]] = {}
        for name in members:
            said = answers[name]
            for block in range(blocks):
                key = (block, tuple(said[doc] for doc in order[block::blocks]))
                sharing.setdefault(key, []).append(name)
        for group in sharing.values():
            candidates.update((a, b) for i, a in enumerate(group) for b in group[i + 1 :])
    groups = list(by_documents.values())
    for i, first in enumerate(groups):  # runs of different document sets: every pair
        candidates.update((min(a, b), max(a, b)) for later in groups[i + 1 :] for a in first for b in later)
    candidates.update((min(a, b), max(a, b)) for a in odd for b in names if a != b)
    return sorted((a, b) for a, b in candidates if repeats(facts[a], facts[b]))


def lossless(recipe: InferenceRecipe, ref_quant: str | None) -> bool:
    """The recipe serves the reference's weights and KV cache and differs only by speculative
    decoding, whose greedy responses are the reference's by design (docs/quality.md)."""
    return (
        ref_quant is not None
        and recipe.quant == ref_quant
        and not kv_quantized(recipe.quant)
        and recipe.serving.speculative is not None
    )


def _digest(ref: str) -> str:
    return ref.split(":", 1)[-1]


def _reference_entry(runs: Mapping[str, Any], spec: ModelSpec | None, task: str) -> Any:
    if spec is None or task not in spec.quality_reference:
        return None
    entry = runs.get(_digest(spec.quality_reference[task]))
    if entry is None or entry.quality is None or not entry.quality.sound or task not in entry.quality.tasks:
        return None
    if entry.name_digest != entry.actual_digest:
        return None
    return entry


def _candidate(entry: Any, recipe: InferenceRecipe, task: str) -> Any:
    q = entry.quality
    if q is None or not q.sound or task not in q.tasks or entry.name_digest != entry.actual_digest:
        return None
    if (
        q.model != recipe.model
        or (q.quant is not None and q.quant != recipe.quant)
        or (recipe.checkpoint and q.served_model != recipe.checkpoint)
    ):
        return None  # another model's evaluation is no evidence (ORV235 reports it)
    return q.tasks[task]


Signer = Callable[[str], "str | None"]


def _unsigned(digest: str) -> str | None:
    return None


def evaluate(
    runs: Mapping[str, Any], spec: ModelSpec | None, recipe: InferenceRecipe, signer: Signer = _unsigned
) -> QualityResult:
    """The recipe's best quality status for its model's reference task (gsm8k when none is named).
    `signer`: the registered measurer who signed a run (by digest), for lossless configurations."""
    tasks = sorted(spec.quality_reference) if spec is not None and spec.quality_reference else [DEFAULT_TASK]
    bound = spec.quality_bound if spec is not None and spec.quality_bound is not None else DEFAULT_BOUND
    results = [_evaluate_task(runs, spec, recipe, task, bound, signer) for task in tasks]
    return max(results, key=lambda r: STATUS_ORDER.index(r.status))  # the worst task decides


def own_evaluation(
    digest: str, facts: Any, ref_digest: str, ref: Any, recipe: InferenceRecipe, ref_quant: str | None, signer: Signer
) -> bool:
    """May this quality run stand for the recipe beside its reference? Always, unless it repeats the
    reference's responses: then only for a lossless configuration, signed by a registered measurer
    other than the reference's signer (the signed-measurer rule of T3: someone else ran it)."""
    if digest == ref_digest or not repeats(facts, ref):
        return True
    if not lossless(recipe, ref_quant):
        return False
    who = signer(digest)
    return who is not None and who != signer(ref_digest)


def _evaluate_task(
    runs: Mapping[str, Any],
    spec: ModelSpec | None,
    recipe: InferenceRecipe,
    task: str,
    bound: float,
    signer: Signer = _unsigned,
) -> QualityResult:
    candidates = []
    for digest in recipe.run_digests:
        entry = runs.get(digest)
        facts = _candidate(entry, recipe, task) if entry is not None else None
        if facts is not None:
            candidates.append((digest, facts))
    ref_entry = _reference_entry(runs, spec, task)
    if ref_entry is None:
        best = candidates[0] if candidates else None
        return QualityResult(
            task,
            "no-reference",
            best[1].metric if best else None,
            n=best[1].n if best else None,
            bound=bound,
            run=best[0] if best else None,
            why=f"{recipe.model} names no usable quality_reference for {task} in {MODELS_PATH}",
        )
    ref = ref_entry.quality.tasks[task]
    own = [
        (digest, facts)
        for digest, facts in candidates
        if own_evaluation(digest, facts, ref_entry.name_digest, ref, recipe, ref_entry.quality.quant, signer)
    ]
    if candidates and not own:
        return QualityResult(
            task,
            "missing",
            ref.metric,
            bound=bound,
            run=candidates[0][0],
            why=f"{COPIED}: the {task} quality run repeats the reference's responses (ORV239); "
            "a copy of the reference shows nothing about this configuration",
        )
    candidates = own
    if not candidates:
        return QualityResult(
            task,
            "missing",
            ref.metric,
            bound=bound,
            why=f"no {task} quality run (`orv add-run --from lm-eval DIR --recipe R`, then list it in `runs:`)",
        )
    outcomes = [_compare(digest, facts, ref, task, bound) for digest, facts in candidates]
    return min(outcomes, key=lambda r: (STATUS_ORDER.index(r.status), -(r.ratio or 0.0), r.run or ""))


def _compare(digest: str, facts: Any, ref: Any, task: str, bound: float) -> QualityResult:
    base = dict(task=task, metric=facts.metric, n=facts.n, bound=bound, run=digest)
    if not facts.full:
        return QualityResult(
            status="partial",
            why=f"{task} run covers {facts.n} of {facts.original} documents (--limit or a chosen subset)",
            **base,
        )
    # hashes alone can be pasted in: the settings a score depends on are compared as they are stated
    for label, mine, theirs in (
        ("few-shot count", facts.n_shot, ref.n_shot),
        ("task version", facts.version, ref.version),
        ("few-shot and generation settings", facts.settings, ref.settings),
    ):
        if mine != theirs:
            pasted = (
                " although its prompt hashes are the reference's (ORV246)"
                if label == "few-shot count" and facts.task_hash == ref.task_hash
                else ""
            )
            return QualityResult(
                status="partial",
                why=f"{task} run's {label} ({mine}) is not the reference's ({theirs}){pasted}: "
                "the scores do not compare",
                **base,
            )
    if facts.task_hash != ref.task_hash:
        return QualityResult(
            status="partial",
            why=f"{task} run's task_hashes differ from the reference's "
            f"(other prompts, few-shot count {facts.n_shot} vs {ref.n_shot}, "
            "or documents)",
            **base,
        )
    if not facts.scored or not ref.scored or not ref.filters:
        return QualityResult(status="partial", why=f"orv cannot re-score {task} as run", **base)
    worst = None
    for name, ref_score in sorted(ref.filters.items()):
        mine = facts.filters.get(name)
        if mine is None:
            return QualityResult(status="partial", why=f"{task} run lacks filter {name}", **base)
        ratio = mine.score / ref_score.score if ref_score.score > 0 else (1.0 if mine.score >= 0 else 0.0)
        if worst is None or ratio < worst[1]:
            worst = (name, ratio, mine.score, ref_score.score)
    assert worst is not None
    name, ratio, score, reference = worst
    status = "verified" if ratio >= bound - 1e-12 else "below"
    why = (
        ""
        if status == "verified"
        else (
            f"{task} {name} is {ratio:.4f} of the reference ({score:.4f} vs {reference:.4f}), under the bound {bound}"
        )
    )
    return QualityResult(status=status, filter=name, score=score, reference=reference, ratio=ratio, why=why, **base)

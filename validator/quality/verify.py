"""One quality run document, on its own: re-score every document, recompute, and reduce to QualityFacts.

`check(doc)` returns both halves: the problems the run-file checks ORV230-ORV234 and ORV237 report and
`add-run` refuses on, and the QualityFacts tiers and boards read (the snapshot keeps facts, never the samples).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from validator.quality import credentials
from validator.quality.recompute import agrees, mean, mean_stderr
from validator.quality.scorers import scorer_for

HEADLINE, SAMPLE, COVERAGE, TASK_HASH, CREDENTIAL, UNSCORED = (
    "ORV230",
    "ORV231",
    "ORV232",
    "ORV233",
    "ORV234",
    "ORV237",
)


@dataclass(frozen=True)
class Problem:
    code: str
    at: tuple[Any, ...]
    message: str
    hint: str


@dataclass(frozen=True)
class FilterScore:
    score: float  # recomputed from the re-scored documents
    stderr: float | None


@dataclass(frozen=True)
class TaskFacts:
    task: str
    metric: str | None
    task_hash: str | None
    n: int  # documents in the samples
    original: int | None  # documents in the task's test set, as lm-eval counted them
    full: bool  # every document: no --limit, no chosen subset, doc_ids cover the set
    scored: bool  # orv re-scored it (a scorer exists and the config is the scorer's)
    filters: Mapping[str, FilterScore] = field(default_factory=dict)
    n_shot: Any = None
    # (doc_id, 16-hex BLAKE2b of the response) per document, by doc_id: what the model answered,
    # compared with the reference's and other quality runs' (status.identical_responses)
    responses: tuple[tuple[int, str], ...] = ()
    # what must equal the reference's for the scores to be comparable (status._compare): the task's
    # version, its configured few-shot count and its generation settings, as canonical JSON
    version: Any = None
    settings: str = ""


@dataclass(frozen=True)
class QualityFacts:
    model: str | None
    served_model: str | None
    quant: str | None
    tasks: Mapping[str, TaskFacts]
    sound: bool  # no integrity error (ORV230-224): usable as evidence
    measured_by: str | None = None  # whose signature can vouch for it (validator/evidence/signing.py)


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def task_hash(task: Mapping[str, Any]) -> str:
    """lm-eval's task hash over the stored per-document hashes, in lm-eval's sample order (filter, then doc)."""
    per_doc = "".join(
        f"{s.get('doc_hash', '')}{s.get('prompt_hash', '')}{s.get('target_hash', '')}" for s in task.get("samples", [])
    )
    return _hash(per_doc * len(task.get("filters", [])))


def _task_problems(name: str, task: Mapping[str, Any], out: list[Problem]) -> TaskFacts:
    at = ("tasks", name)
    samples = task.get("samples", [])
    filters = list(task.get("filters", []))
    n_samples = task.get("n_samples") or {}
    original, effective = n_samples.get("original"), n_samples.get("effective")
    ids = [s.get("doc_id") for s in samples]
    # ---- coverage
    if len(set(map(repr, ids))) != len(ids):
        out.append(
            Problem(
                COVERAGE,
                at + ("samples",),
                f"{name}: a doc_id appears twice in the samples",
                "give lm-eval's samples file unchanged",
            )
        )
    if effective != len(samples):
        out.append(
            Problem(
                COVERAGE,
                at + ("n_samples",),
                f"{name}: n-samples.effective is {effective!r} but the samples hold {len(samples)} documents",
                "give lm-eval's results and samples of the same run, unchanged",
            )
        )
    if isinstance(original, int) and any(not isinstance(i, int) or not 0 <= i < original for i in ids):
        out.append(
            Problem(
                COVERAGE,
                at + ("samples",),
                f"{name}: a doc_id lies outside the task's {original} documents",
                "give lm-eval's samples file unchanged",
            )
        )
    for s_index, s in enumerate(samples):
        missing = [f for f in filters if f not in (s.get("filters") or {})]
        if missing:
            out.append(
                Problem(
                    COVERAGE,
                    at + ("samples", s_index),
                    f"{name}: document {s.get('doc_id')} has no sample for filter {missing[0]}",
                    "give lm-eval's samples file unchanged",
                )
            )
            break
    results = task.get("results") or {}
    for flt in results:
        if flt not in filters:
            out.append(
                Problem(
                    COVERAGE,
                    at + ("results", flt),
                    f"{name}: the results report filter {flt} but no sample was logged for it "
                    "(samples of another task or run?)",
                    f"give the samples_{name}_<date>.jsonl written by the same run",
                )
            )
    # ---- task hash
    stated_hash = task.get("task_hash")
    if stated_hash is None:
        out.append(
            Problem(
                TASK_HASH,
                at,
                f"{name}: the results carry no task_hashes entry",
                "run lm-eval with --log_samples (it then writes task_hashes)",
            )
        )
    elif stated_hash != task_hash(task):
        out.append(
            Problem(
                TASK_HASH,
                at + ("task_hash",),
                f"{name}: task_hashes does not hash the samples' doc_hash/prompt_hash/target_hash",
                "give lm-eval's results and samples of the same run, unchanged",
            )
        )
    for s_index, s in enumerate(samples):
        if isinstance(s.get("target"), str) and s.get("target_hash") != _hash(s["target"]):
            out.append(
                Problem(
                    TASK_HASH,
                    at + ("samples", s_index, "target"),
                    f"{name}: document {s.get('doc_id')}'s target does not match its target_hash",
                    "give lm-eval's samples file unchanged",
                )
            )
            break
    # ---- re-scoring
    scorer = scorer_for(name)
    config_diffs = scorer.config_differences(task.get("config") or {}) if scorer else []
    scored = scorer is not None and not config_diffs and bool(samples)
    if scorer is None:
        out.append(
            Problem(
                UNSCORED,
                at,
                f"{name}: orv has no scorer for this task; its score is shown, not verified",
                "quality can be verified for: gsm8k (validator/quality/scorers/)",
            )
        )
    elif config_diffs:
        out.append(
            Problem(
                UNSCORED,
                at + ("config",),
                f"{name}: the task config is not the pinned one orv scores ({config_diffs[0]})",
                "run the task as lm-eval ships it; a changed filter or metric cannot be compared",
            )
        )
    recomputed: dict[str, FilterScore] = {}
    metric = scorer.metric if scorer else None
    for flt in filters:
        values = []
        for s_index, s in enumerate(samples):
            entry = (s.get("filters") or {}).get(flt) or {}
            stated = entry.get(metric) if metric else None
            if scored and flt in scorer.filters:  # type: ignore[union-attr]
                extracted = scorer.extract(flt, s.get("response", ""))  # type: ignore[union-attr]
                value = scorer.value(extracted, str(s.get("target", "")))  # type: ignore[union-attr]
                if stated != value or entry.get("answer") != extracted:
                    out.append(
                        Problem(
                            SAMPLE,
                            at + ("samples", s_index, "filters", flt),
                            f"{name}/{flt}: document {s.get('doc_id')} is recorded as {stated!r} "
                            f"(answer {entry.get('answer')!r}) but its response re-scores to {value} "
                            f"(answer {extracted!r})",
                            "per-sample values must be lm-eval's own; re-run the evaluation",
                        )
                    )
                values.append(value)
            elif isinstance(stated, (int, float)):
                values.append(float(stated))
        if values:
            recomputed[flt] = FilterScore(mean(values), mean_stderr(values))
    # ---- headline and stderr
    for flt, by_metric in results.items():
        for m, figures in (by_metric or {}).items():
            if metric is not None and m != metric or flt not in recomputed:
                continue
            mine = recomputed[flt]
            if not agrees(figures.get("score", float("nan")), mine.score):
                out.append(
                    Problem(
                        HEADLINE,
                        at + ("results", flt, m, "score"),
                        f"{name}/{flt}: {m} is {figures.get('score')} in the results but "
                        f"{mine.score:.6g} recomputed from the {len(samples)} samples",
                        "give lm-eval's results file unchanged; the headline is recomputed, not read",
                    )
                )
            stderr = figures.get("stderr")
            if stderr is not None and mine.stderr is not None and not agrees(stderr, mine.stderr):
                out.append(
                    Problem(
                        HEADLINE,
                        at + ("results", flt, m, "stderr"),
                        f"{name}/{flt}: {m} stderr is {stderr} in the results but {mine.stderr:.6g} "
                        "recomputed (sample std / sqrt(n))",
                        "give lm-eval's results file unchanged",
                    )
                )
    full = (
        isinstance(original, int)
        and len(samples) == original
        and sorted(i for i in ids if isinstance(i, int)) == list(range(original))
    )
    responses = tuple(
        sorted(
            (
                s["doc_id"],
                hashlib.blake2b(normalised_response(s["response"]).encode("utf-8"), digest_size=8).hexdigest(),
            )
            for s in samples
            if type(s.get("doc_id")) is int and isinstance(s.get("response"), str)
        )
    )
    stated = task.get("config")
    config: Mapping[str, Any] = stated if isinstance(stated, dict) else {}
    settings = json.dumps(
        {"num_fewshot": config.get("num_fewshot"), "generation_kwargs": config.get("generation_kwargs")},
        sort_keys=True,
        default=str,
    )
    return TaskFacts(
        name,
        metric,
        stated_hash,
        len(samples),
        original if isinstance(original, int) else None,
        full,
        scored,
        recomputed,
        task.get("n_shot"),
        responses,
        task.get("version"),
        settings,
    )


def normalised_response(text: str) -> str:
    """A response as the scorer reads it: runs of whitespace are one space and the ends stripped
    (gsm8k's filters match on words and numbers; a trailing space changes no score), so an added
    space cannot make a copied response look like the model's own."""
    return " ".join(text.split())


def check(doc: Mapping[str, Any]) -> tuple[list[Problem], QualityFacts]:
    """Every integrity problem of a (schema-valid) quality run document, and its facts. The loader
    asks once per run file and keeps both on the RunFile, which the run-file checks read."""
    return _check(doc)


def _check(doc: Mapping[str, Any]) -> tuple[list[Problem], QualityFacts]:
    out: list[Problem] = []
    limit = ((doc.get("lm_eval") or {}).get("config") or {}).get("limit")
    tasks = {}
    for name, task in sorted((doc.get("tasks") or {}).items()):
        facts = _task_problems(name, task, out)
        if limit is not None and facts.full:
            out.append(
                Problem(
                    COVERAGE,
                    ("lm_eval", "config", "limit"),
                    f"{name}: the run says --limit {limit} but its samples cover the whole set",
                    "give lm-eval's results file unchanged",
                )
            )
        if limit is not None:
            facts = TaskFacts(**{**facts.__dict__, "full": False})
        tasks[name] = facts
    for path, key in credentials.find(doc):
        out.append(
            Problem(
                CREDENTIAL,
                path,
                f"a credential ({key}) is stored in this run file",
                "rotate that key now (it was pushed), then re-add the run with `orv add-run --from lm-eval`,"
                " which drops credentials",
            )
        )
    sound = not any(p.code in (HEADLINE, SAMPLE, COVERAGE, TASK_HASH, CREDENTIAL) for p in out)
    measured_by = doc.get("measured_by")
    return out, QualityFacts(
        doc.get("model"),
        doc.get("served_model"),
        doc.get("quant"),
        tasks,
        sound,
        measured_by if isinstance(measured_by, str) else None,
    )

"""lm-evaluation-harness output (results_*.json + samples_<task>_*.jsonl) -> a quality run document.

Read as lm_eval 0.4.13 writes it (tests/fixtures/lmeval/ holds real output and its generator):
- lm_eval/loggers/evaluation_tracker.py `save_results_aggregated`: results_<date>.json under
  --output_path (in a <model_name_sanitized>/ folder), with `task_hashes` = sha256 of the
  concatenated doc_hash+prompt_hash+target_hash of every logged sample in file order, plus
  `config`, `model_name`, `lm_eval_version`, `date`; `save_results_samples`: one
  samples_<task>_<date>.jsonl per task, the same <date>.
- lm_eval/evaluator.py `evaluate`: per filter, per document, one sample line {doc_id, doc, target,
  arguments, resps, filtered_resps, filter, metrics, doc_hash, prompt_hash, target_hash, <metric>}
  and results keys "<metric>,<filter>" / "<metric>_stderr,<filter>"; `n-samples` {original,
  effective}; `n-shot`; `configs.<task>` (the task YAML as run, with --model_args copied into
  `metadata`).
The run document keeps what re-scoring needs (per document: the response, the target, the three
input hashes and, per filter, lm-eval's extracted answer and value), never prompts or docs.
"""

from __future__ import annotations

import fnmatch
import glob
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, TypeGuard

from validator.errors import InputFileError, LocatedError
from validator.load.contributor import (
    LMEVAL_RESULTS,
    LMEVAL_SAMPLES,
    Budget,
    Listing,
    list_beside,
    parse_json,
    read_inside,
    read_named,
    walk,
)
from validator.quality import credentials
from validator.science import bounds

TOOL_NAME = "lm-eval"
FORMAT = "lm-eval-results"
_RESULTS_NAME = re.compile(r"^results_(.+)\.json$")


class LmEvalError(LocatedError):
    """The output cannot become a quality run: a located finding."""

    def __init__(self, path: str, code: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        super().__init__(code, path, message, hint, line, col)


@dataclass(frozen=True)
class Output:
    results_path: str
    results: dict[str, Any]
    samples: dict[str, tuple[str, list[dict[str, Any]]]]  # task -> (path, sample lines)


def _refused(exc: InputFileError) -> LmEvalError:
    return LmEvalError(exc.path, exc.code, exc.message, exc.hint, exc.line, exc.col)  # the bounded parser's column


def _read(path: str, budget: Budget, named: bool) -> bytes:
    """A file PATH names (it may be a link, to a regular file) or one found in the folder (never a link)."""
    try:
        return read_named(path, budget) if named else read_inside(path, budget)
    except InputFileError as exc:
        raise _refused(exc) from None


def _json(path: str, raw: bytes, line: int = 1) -> Any:
    try:
        return parse_json(path, raw, line)
    except InputFileError as exc:
        if exc.code == "ORV101":
            raise LmEvalError(
                path,
                "ORV101",
                exc.message,
                "give lm-eval's output unchanged (a truncated or edited file cannot be scored)",
                exc.line,
                exc.col,
            ) from None
        raise _refused(exc) from None


def find_results(path: str) -> str:
    """The results file: PATH itself, or the one results_*.json under the output folder PATH.

    The folder is listed without following links (validator/load/contributor.py): a results file
    reached through a link, inside the folder or as the folder itself, is never read.
    """
    if not os.path.isdir(path) or os.path.islink(path):
        if os.path.islink(path) and os.path.isdir(path):
            _read_listing(path)  # refuses the link, naming where it points
        return path
    listing = _read_listing(path)
    found = [f for f in listing.files if _RESULTS_NAME.match(os.path.basename(f))]
    if not found:
        for passed in listing.skipped:  # a results file that is a link or a FIFO: refused, naming it
            if _RESULTS_NAME.match(os.path.basename(passed)):
                _read(passed, LMEVAL_RESULTS, named=False)
        passed_by = listing.skipped
        where = (
            f"; {passed_by[0]} is a link (or not a regular file), and orv follows no link inside the folder"
            if passed_by
            else ""
        )
        raise LmEvalError(
            path,
            "ORV108",
            f"no results_*.json under this directory{where}",
            "run lm-eval with --output_path DIR --log_samples and give DIR or its results file",
        )
    if len(found) > 1:
        raise LmEvalError(
            path,
            "ORV109",
            f"{len(found)} results files under this directory",
            f"give one results file, e.g. {os.path.relpath(found[-1])}",
        )
    return found[0]


def _read_listing(path: str) -> Listing:
    try:
        return walk(path)
    except InputFileError as exc:
        raise _refused(exc) from None


def _samples_path(results_path: str, folder: str, names: tuple[str, ...], task: str, stamp: str) -> str:
    wanted = f"samples_{task}_{stamp}.jsonl"
    if stamp == "*":  # a results file not named as lm-eval names it: any date
        pattern = f"samples_{glob.escape(task)}_*.jsonl"
        candidates = sorted(n for n in names if fnmatch.fnmatchcase(n, pattern))
    else:
        candidates = [wanted] if wanted in names else []
    if not candidates:
        raise LmEvalError(
            results_path,
            "ORV108",
            f"no samples file for task {task} beside the results",
            f"run lm-eval with --log_samples; it writes samples_{task}_{stamp}.jsonl here",
        )
    return os.path.join(folder, candidates[0])


def read_output(path: str) -> Output:
    results_path = find_results(path)
    data = _json(results_path, _read(results_path, LMEVAL_RESULTS, named=results_path == path))
    if not isinstance(data, dict) or not isinstance(data.get("results"), dict) or not data["results"]:
        raise LmEvalError(
            results_path,
            "ORV104",
            "not an lm-eval results file (no `results` object)",
            "give the results_<date>.json that lm-eval wrote",
        )
    m = _RESULTS_NAME.match(os.path.basename(results_path))
    stamp = m.group(1) if m else "*"
    folder = os.path.dirname(results_path) or "."
    try:
        names = list_beside(folder)
    except InputFileError as exc:
        raise _refused(exc) from None
    samples: dict[str, tuple[str, list[dict[str, Any]]]] = {}
    for task in sorted(data["results"]):
        if task in _obj(data.get("groups")) or task in _obj(data.get("group_subtasks")):
            continue  # a group's aggregate; its tasks have their own samples
        spath = _samples_path(results_path, folder, names, str(task), stamp)
        lines: list[dict[str, Any]] = []
        raw = _read(spath, LMEVAL_SAMPLES, named=False)
        for number, line in enumerate(raw.split(b"\n"), start=1):
            if not line.strip():
                continue
            item = _json(spath, line, number)
            if not isinstance(item, dict):
                raise LmEvalError(
                    spath,
                    "ORV104",
                    f"line {number} is not a JSON object",
                    "give lm-eval's samples file unchanged",
                    number,
                )
            lines.append(item)
        samples[task] = (spath, lines)
    return Output(results_path, data, samples)


def _obj(value: Any) -> dict[str, Any]:
    """A mapping lm-eval writes, or {} when the input has something else there (the schema then says what)."""
    return value if isinstance(value, dict) else {}


def _finite(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def _measured_at(data: Mapping[str, Any]) -> str | None:
    date = data.get("date")
    if _finite(date):
        try:
            return datetime.fromtimestamp(float(date), tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None  # not a time lm-eval wrote: --measured-at (or the schema's finding) decides
    return None


def served_model(data: Mapping[str, Any]) -> str | None:
    """The model the server was asked for: config.model_args.model (or pretrained), else model_name."""
    args = _obj(data.get("config")).get("model_args")
    if isinstance(args, str):
        args = dict(p.split("=", 1) for p in args.split(",") if "=" in p)  # older lm-eval: "k=v,k=v"
    if isinstance(args, dict):
        for key in ("model", "pretrained"):
            if isinstance(args.get(key), str) and args[key]:
                return str(args[key])
    name = data.get("model_name")
    return name if isinstance(name, str) and name else None


def _task(task: str, data: Mapping[str, Any], spath: str, lines: list[dict[str, Any]]) -> dict[str, Any]:
    where = _obj(_obj(data.get("results")).get(task))
    filters: list[str] = []
    docs: dict[Any, dict[str, Any]] = {}
    order: list[Any] = []
    for number, s in enumerate(lines, start=1):
        if s.get("filter") is None or "doc_id" not in s:
            raise LmEvalError(
                spath,
                "ORV104",
                f"line {number} lacks `filter` or `doc_id`",
                "give lm-eval's samples file (written with --log_samples) unchanged",
                number,
            )
        if isinstance(s.get("task"), str) and s["task"] != task:
            raise LmEvalError(
                spath,
                "ORV109",
                f"line {number} is a sample of task {s.get('task')}, not {task}",
                "give the samples file of the same run",
                number,
            )
        if isinstance(s["doc_id"], bool) or not isinstance(s["doc_id"], int):
            raise LmEvalError(
                spath,
                "ORV104",
                f"line {number}: doc_id must be an integer, not {s['doc_id']!r}",
                "give lm-eval's samples file unchanged",
                number,
            )
        flt = str(s["filter"])
        if flt not in filters:
            filters.append(flt)
        resps = s.get("resps")
        response = (
            resps[0][0] if (isinstance(resps, list) and resps and isinstance(resps[0], list) and resps[0]) else None
        )
        filtered = s.get("filtered_resps")
        answer = filtered[0] if isinstance(filtered, list) and filtered else filtered
        metric_names = (
            [m for m in s.get("metrics") or [] if isinstance(m, str)] if isinstance(s.get("metrics"), list) else []
        )
        values = {m: s.get(m) for m in metric_names}
        for m, v in values.items():
            if not _finite(v):
                raise LmEvalError(
                    spath,
                    "ORV104",
                    f"line {number}: `{m}` is {v!r}, not a finite number",
                    "give lm-eval's samples file unchanged; a NaN score cannot be verified",
                    number,
                )
        key: int | str = s["doc_id"]  # then results' and n-samples' keys below
        entry = docs.get(key)
        hashes = {h: s.get(h) for h in ("doc_hash", "prompt_hash", "target_hash")}
        if entry is None:
            entry = {"doc_id": key, **hashes, "target": s.get("target"), "response": response, "filters": {}}
            docs[key] = entry
            order.append(key)
        elif any(entry[h] != v for h, v in hashes.items()) or entry["response"] != response:
            raise LmEvalError(
                spath,
                "ORV104",
                f"line {number}: document {key} has different hashes or response under filter {flt}",
                "give lm-eval's samples file unchanged",
                number,
            )
        if flt in entry["filters"]:
            raise LmEvalError(
                spath,
                "ORV104",
                f"line {number}: document {key} appears twice under filter {flt}",
                "give lm-eval's samples file unchanged",
                number,
            )
        entry["filters"][flt] = {"answer": answer, **{m: v for m, v in values.items()}}
    metric_results: dict[str, Any] = {}
    for key, value in where.items():
        if not isinstance(key, str) or "," not in key or key.startswith("alias"):
            continue
        metric, flt = key.split(",", 1)
        if metric.endswith("_stderr"):
            continue
        if not _finite(value):
            raise LmEvalError(
                data.get("_path", "results"),
                "ORV104",
                f"results.{task}.{key} is {value!r}, not a finite number",
                "give lm-eval's results file unchanged",
            )
        stderr = where.get(f"{metric}_stderr,{flt}")
        metric_results.setdefault(flt, {})[metric] = {"score": value, "stderr": stderr if _finite(stderr) else None}
    n_samples = _obj(data.get("n-samples")).get(task)
    for key, count in _obj(n_samples).items():
        why = bounds.out_of_bounds(count, bounds.DOCUMENTS) if key in ("original", "effective") else None
        if why:
            raise LmEvalError(
                data.get("_path", "results"),
                "ORV109",
                f"`n-samples.{task}.{key}` {why}",
                "give lm-eval's results file unchanged",
            )
    config = _obj(_obj(data.get("configs")).get(task))
    return {
        "version": _obj(data.get("versions")).get(task),
        "n_shot": _obj(data.get("n-shot")).get(task),
        "n_samples": n_samples,
        "task_hash": _obj(data.get("task_hashes")).get(task),
        "config": credentials.scrub(config),
        "results": metric_results,
        "filters": filters,
        "samples": [docs[k] for k in order],
    }


def to_document(output: Output, meta: Mapping[str, Any]) -> dict[str, Any]:
    """The quality run document (before canonicalisation). `meta`: model, quant, measured_by, measured_at."""
    data = dict(output.results)
    data["_path"] = output.results_path
    if not output.samples:
        raise LmEvalError(
            output.results_path, "ORV108", "the results name no task with samples", "run lm-eval with --log_samples"
        )
    tasks = {}
    for task, (spath, lines) in output.samples.items():
        if not lines:
            raise LmEvalError(
                spath,
                "ORV108",
                f"the samples file of {task} is empty",
                "give the samples file lm-eval wrote with --log_samples",
            )
        tasks[task] = _task(task, data, spath, lines)
    version = data.get("lm_eval_version")
    config = credentials.scrub(_obj(data.get("config")))
    doc: dict[str, Any] = {
        "kind": "quality",
        "tool": {
            "name": TOOL_NAME,
            "version": version if isinstance(version, str) and version else None,
            "format": FORMAT,
        },
        "model": meta.get("model"),
        "served_model": served_model(data),
        "measured_at": meta.get("measured_at") or _measured_at(data),
        "measured_by": meta.get("measured_by"),
        "lm_eval": {"config": config, "model_name": data.get("model_name")},
        "tasks": tasks,
    }
    if meta.get("quant"):
        doc["quant"] = meta["quant"]
    return _drop_nulls(doc)


def _drop_nulls(value: Any) -> Any:
    """JSON null carries nothing a check reads; dropping it keeps the schema free of nullable fields."""
    if isinstance(value, dict):
        return {k: _drop_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_drop_nulls(v) for v in value]
    return value

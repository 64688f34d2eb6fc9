"""Shared parts of the adapters: the tool's output as a source, located problems, run metadata, the envelope.

Precedence, everywhere: what the tool's output states wins over flags, and flags win over the
recipe. When the output contradicts the flags or the recipe, the output's value is recorded and
a note says so (the recipe check, ORV206, then reports the disagreement if the run is referenced).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

from validator.diagnostics import Diagnostic, Severity
from validator.errors import AdapterError, InputFileError
from validator.load.contributor import parse_json
from validator.load.documents import locate_json


@dataclass(frozen=True)
class Source:
    """A tool's output file as given on the command line; findings carry `name` as their path."""

    name: str
    raw: bytes
    # a second file of the same run, by role ("report": AIPerf's summary, trtllm-bench's --report_json)
    companions: Mapping[str, Source] = field(default_factory=dict)

    def lines(self) -> list[str]:
        """Log lines (1-based index = position + 1); bytes that are not UTF-8 are replaced, never fatal."""
        return self.raw.decode("utf-8", errors="replace").split("\n")


@dataclass(frozen=True)
class RunMetadata:
    """What a tool's output may not say, from flags or a recipe; see the module docstring for precedence."""

    kind: str | None = None
    model: str | None = None
    checkpoint: str | None = None
    gpu: str | None = None
    gpus: int | None = None
    software: Mapping[str, Any] | None = None
    workload: str | None = None
    layout: Mapping[str, Any] | None = None
    quant: str | None = None
    serving: Mapping[str, Any] | None = None
    measured_at: str | None = None
    measured_by: str | None = None
    tool_version: str | None = None
    tool_commit: str | None = None
    # From the workload in catalog/workloads.yaml: the protocol the log must follow.
    seq_len: int | None = None
    global_batch: int | None = None
    dtype: str | None = None
    warmup_steps: int = 0
    record: int | None = None  # which record of a JSON-lines file, 1-based
    llama_bench_test: tuple[int, int, int] | None = None  # (n_prompt, n_gen, n_depth) of a llama-bench workload
    origin: Mapping[str, str] = field(default_factory=dict)  # field -> "recipe" | "flag", for notes

    def with_values(self, source_label: str, **values: Any) -> RunMetadata:
        """A copy with the non-None `values` set, remembering where each came from."""
        given = {k: v for k, v in values.items() if v is not None}
        origin = dict(self.origin)
        origin.update({k: source_label for k in given})
        return dataclasses.replace(self, origin=origin, **given)


@dataclass(frozen=True)
class Converted:
    document: dict[str, Any]
    notes: tuple[str, ...] = ()
    # what the output states that the run file has no field for, checked by add-run (e.g. vLLM's tokenizer_id)
    stated: Mapping[str, str] = field(default_factory=dict)


class Problems:
    """Collects located findings about one source so that one run reports every problem."""

    def __init__(self, source: Source) -> None:
        self.source = source
        self.found: list[Diagnostic] = []

    def add(self, code: str, message: str, hint: str, line: int = 1, col: int = 1) -> None:
        self.found.append(Diagnostic(code, Severity.ERROR, self.source.name, line, col, message, hint))

    def raise_if_any(self) -> None:
        if self.found:
            raise AdapterError(self.found)


def raise_if_any(*collected: Problems) -> None:
    """The findings about several files of one run (a tool's records and its summary), in one refusal."""
    found = [d for problems in collected for d in problems.found]
    if found:
        raise AdapterError(found)


# --------------------------------------------------------------------------- JSON outputs


@dataclass(frozen=True)
class JsonRecord:
    """One JSON document of a tool's output, with where it starts in the file (for locations)."""

    data: Any
    text: str | bytes  # the record's own text; bytes are decoded only to locate a finding
    first_line: int

    def locate(self, path: Sequence[str | int]) -> tuple[int, int]:
        text = self.text if isinstance(self.text, str) else self.text.decode("utf-8", errors="replace")
        line, col = locate_json(text, path)
        return self.first_line + line - 1, col


def _refused(problems: Problems, exc: InputFileError) -> None:
    problems.add(exc.code, exc.message, exc.hint, exc.line, exc.col)


def json_records(source: Source, problems: Problems) -> list[JsonRecord]:
    """A whole-file JSON document, or JSON lines (vLLM --append-result, SGLang --output-file), parsed by the
    bounded parser (validator/load/contributor.py: no recursion, no unbounded integer)."""
    try:
        return [JsonRecord(parse_json(source.name, source.raw), source.raw, 1)]
    except InputFileError as exc:
        whole = exc
    lines = source.raw.split(b"\n")
    if whole.code != "ORV101" or sum(1 for line in lines if line.strip()) < 2:
        _refused(problems, whole)
        problems.raise_if_any()
    records = []
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            records.append(JsonRecord(parse_json(source.name, line, number), line, number))
        except InputFileError as exc:
            if not records and exc.code == "ORV101":  # not JSON lines: one document with a mistake in it
                _refused(problems, whole)
                break
            problems.add(
                exc.code,
                f"line {number}: {exc.message}",
                "each line of a JSON-lines result file must be one JSON object",
                exc.line,
                exc.col,
            )
    problems.raise_if_any()
    return records


def pick_record(source: Source, meta: RunMetadata, problems: Problems) -> JsonRecord:
    records = json_records(source, problems)
    if not records:
        problems.add("ORV108", "the file holds no result", "give the result file the benchmark wrote")
    elif meta.record is not None and not 1 <= meta.record <= len(records):
        problems.add(
            "ORV109",
            f"--record {meta.record} asked for, but the file holds {len(records)} result(s)",
            f"pass --record between 1 and {len(records)}",
        )
    elif meta.record is None and len(records) > 1:
        problems.add(
            "ORV109",
            f"the file holds {len(records)} results (the tool appends one per run)",
            f"pass --record K (1 to {len(records)}) to choose one; each run gets its own run file",
            records[1].first_line,
        )
    problems.raise_if_any()
    record = records[(meta.record or 1) - 1]
    if not isinstance(record.data, dict):
        problems.add(
            "ORV104", "a result must be a JSON object", "give the result file the benchmark wrote", record.first_line
        )
        problems.raise_if_any()
    return record


def number(record: JsonRecord, key: str, problems: Problems, required: bool = False) -> float | None:
    """A finite number at top-level `key`, or None (with a finding when it is required or malformed)."""
    value = record.data.get(key)
    if value is None:
        if required:
            problems.add(
                "ORV108",
                f"`{key}` is missing",
                "give the result file the benchmark wrote, unchanged",
                record.first_line,
            )
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        problems.add(
            "ORV104",
            f"`{key}` must be a finite number, not {value!r}",
            "give the result file the benchmark wrote, unchanged",
            *record.locate((key,)),
        )
        return None
    return float(value)


def printed_matches(printed: float, recomputed: float, rel_tol: float) -> bool:
    return math.isclose(printed, recomputed, rel_tol=rel_tol, abs_tol=1e-9)


def ms(seconds: float) -> float:
    """Seconds -> milliseconds, rounded to the nanosecond so unit conversion adds no float noise."""
    return round(seconds * 1000.0, 6)


# --------------------------------------------------------------------------- the run envelope

_FLAG_FOR = {
    "model": "--model",
    "gpu": "--gpu",
    "gpus": "--gpus",
    "software": "--recipe",
    "workload": "--workload",
    "layout": "--recipe",
    "quant": "--quant",
    "serving": "--recipe",
    "measured_at": "--measured-at",
    "measured_by": "--measured-by",
    "tool_version": "--tool-version",
}


def require(meta: RunMetadata, names: Sequence[str], problems: Problems, what_lacks: str) -> None:
    from_recipe = "recipe" in meta.origin.values()  # a recipe was given: it lacks the value too
    for name in names:
        if getattr(meta, name) in (None, {}, ""):
            flag = _FLAG_FOR.get(name, "--recipe")
            if from_recipe:
                hint = (
                    f"the recipe given does not state `{name}` either: add it to the recipe"
                    + (
                        ' (the pinned framework or engine, docs/contributing.md "Pins"; an imported row states none)'
                        if name == "software"
                        else ""
                    )
                    if flag == "--recipe"
                    else f"pass {flag} (the recipe given does not state it either)"
                )
            else:
                hint = (
                    "pass --recipe PATH to take it from the recipe this run backs"
                    if flag == "--recipe"
                    else f"pass {flag} (or --recipe PATH to take it from the recipe)"
                )
            problems.add("ORV108", f"{what_lacks} does not state `{name}`", hint)


def tool_block(name: str, fmt: str, meta: RunMetadata) -> dict[str, Any]:
    tool: dict[str, Any] = {"name": name, "version": meta.tool_version, "format": fmt}
    if meta.tool_commit:
        tool["commit"] = meta.tool_commit
    return tool


def common_fields(kind: str, meta: RunMetadata) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "kind": kind,
        "model": meta.model,
        "hardware": {"gpu": meta.gpu, "count": meta.gpus},
        "software": _plain(meta.software or {}),
        "measured_at": meta.measured_at,
        "measured_by": meta.measured_by,
    }
    if meta.checkpoint:
        doc["checkpoint"] = meta.checkpoint
    return doc


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items() if v is not None and v != ()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def stated(meta: RunMetadata, field_name: str, stated_value: Any, tool: str, notes: list[str]) -> RunMetadata:
    """Record what the tool's output states for `field_name`, noting a contradiction with flags/recipe."""
    given = getattr(meta, field_name)
    if stated_value is None:
        return meta
    same_day = field_name == "measured_at" and isinstance(given, str) and str(stated_value).startswith(given)
    if given is not None and given != stated_value and not same_day:
        where = meta.origin.get(field_name, "the metadata")
        notes.append(
            f"{tool} output states {field_name} = {stated_value!r}; the {where} says {given!r}: "
            f"the output's value is recorded"
        )
    return meta.with_values(tool, **{field_name: stated_value})


def merge_mapping(
    meta: RunMetadata, field_name: str, stated_values: Mapping[str, Any], tool: str, notes: list[str]
) -> RunMetadata:
    """Like `stated`, key by key inside a mapping (layout, serving)."""
    current = dict(getattr(meta, field_name) or {})
    where = meta.origin.get(field_name, "metadata")
    for key, value in stated_values.items():
        if value is None:
            continue
        if key in current and current[key] != value:
            notes.append(
                f"{tool} output states {field_name}.{key} = {value!r}; the {where} says "
                f"{current[key]!r}: the output's value is recorded"
            )
        current[key] = value
    return dataclasses.replace(meta, **cast("dict[str, Any]", {field_name: current}))

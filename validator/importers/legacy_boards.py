"""`orv import legacy-boards`: seed 004's tier-boards export -> inference recipes and run files.

What the export gets wrong, and what the import does about it (each case is named in the report):
- the same row repeated up to 12 times: exact duplicates are collapsed, their positions kept;
- one legacy id covering several hardware counts or engine builds: one recipe per variant, with
  a suffix naming what differs (`-x2`, `-819146023f`); an id that survives with one variant keeps
  its legacy id unchanged;
- rows labelled T1 with no run file: kept as claims (T0) — a tier is derived, never declared;
- run records: written as content-addressed run files when they carry a headline figure and a
  board row ties them to a recipe; the others are rejected as incomplete;
- free-text engine versions: parsed into pinned components (validator/importers/stacks.py);
  unpinned ones are rejected with the reason;
- the same claim copied across hardware counts: imported but flagged;
- 64-character slugs (cut by the old site): kept as ids, listed;
- float noise: claims rounded to 2 decimals, the precision of every hand-entered figure in the
  export; a run file keeps its tool's headline exactly as the run record holds it.
A claim that the SPEC's physics bound (single-stream decode <= GPUs x memory bandwidth / bytes of
active weights, x (k+1) with speculative decoding) rules out is rejected, since `orv check` would
reject it: the bound is validator.science.physics's, the one ORV512 applies. Speculative decoding
named without a draft length leaves the bound unknown: such a claim is imported (T0, warned).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from validator.errors import AddRunError, ImportInputError, LoadError
from validator.files import yamlout
from validator.files.generated import (
    Action,
    FileOutcome,
    generated_text,
    remove_stale,
    write_generated,
)
from validator.importers.common import decode_source, read_source, round_figure
from validator.importers.lacking import document_lacks
from validator.importers.report import LACKS_INTRO, LACKS_TITLE, ImportReport, Rejection
from validator.importers.stacks import PinnedStack, parse_engine_version
from validator.load.documents import find_duplicate_json_keys, parse_json
from validator.registry.catalog import CatalogView, load_catalog
from validator.registry.layout import HARDWARE_PATH, INFERENCE_SCHEMA_LINE, MAX_ID, MODELS_PATH, SLUG, recipe_path
from validator.registry.store import store_run_document
from validator.science.physics import (
    DECODE_READ_FRACTION,
    DecodeBound,
    decode_bound_for,
)

COMMAND = "legacy-boards"
LEGACY_SLUG_LIMIT = 64  # the old site cut ids at this length
METRICS = ("decode_tok_s", "prefill_tok_s", "ttft_ms")
SERVING_FIELDS = ("context_len", "concurrency", "slots")
LOWER_IS_BETTER = frozenset({"ttft_ms"})
UNKNOWN_AUTHOR = "unrecorded (legacy boards export)"
NEAR_BOUND = 0.85  # report accepted claims above this share of the physics bound
_SPECULATIVE = (
    re.compile(r"(?:^|-)(mtp)-?(\d{1,2})(?=-|$)"),
    re.compile(r"(?:^|-)(dflash\d*|dspark|eagle\d*|medusa)-k(\d{1,2})(?=-|$)"),
)
# A speculative method named in an id with no draft length after it (`dflash2`, `eagle3`, `nextn`).
_SPECULATIVE_NAMED = re.compile(r"(?:^|-)(mtp|dflash\d*|dspark|eagle\d*|medusa|nextn|spec-decode)(?=-|$)")


@dataclass
class Observation:
    """One distinct row of a board, with where its identical copies were."""

    board: str  # measured | claimed
    indexes: list[int]
    row: dict[str, Any]

    @property
    def where(self) -> str:
        return f"boards.{self.board}[{','.join(map(str, self.indexes))}]"

    def metrics(self) -> dict[str, float]:
        if self.board == "claimed":
            value = self.row.get("claimed_tok_s")
            return {"decode_tok_s": value} if _positive(value) else {}
        return {m: self.row[m] for m in METRICS if _positive(self.row.get(m))}

    def serving(self) -> dict[str, int]:
        out = {}
        for name, key in (("context_len", "context_len"), ("concurrency", "concurrency"), ("slots", "slot_ceiling")):
            value = self.row.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                out[name] = value
        return out


def _positive(value: Any) -> TypeGuard[float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


@dataclass
class Variant:
    """Everything the export says about one (legacy id, checkpoint, quant, hardware, engine build)."""

    legacy_id: str
    checkpoint: str
    quant: str | None
    hardware: str
    engine: str
    engine_ver: str | None
    observations: list[Observation] = field(default_factory=list)
    # resolved
    model_id: str | None = None
    gpu_id: str | None = None
    count: int = 0
    stack: PinnedStack | None = None
    claimed: dict[str, Any] = field(default_factory=dict)
    serving: dict[str, Any] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    run_hashes: list[str] = field(default_factory=list)  # legacy content hashes the rows point at
    runs: list[str] = field(default_factory=list)  # sha256:<digest> of stored run files
    run_dates: list[str] = field(default_factory=list)
    measured_by: set[str] = field(default_factory=set)
    recipe_id: str = ""
    split_from: str | None = None
    merged_from: list[str] = field(default_factory=list)  # legacy ids of one configuration
    disagreements: list[str] = field(default_factory=list)

    @property
    def where(self) -> str:
        parts = defaultdict(list)
        for o in self.observations:
            parts[o.board].extend(o.indexes)
        return "; ".join(f"boards.{b}[{','.join(map(str, sorted(ix)))}]" for b, ix in sorted(parts.items()))

    @property
    def label(self) -> str:
        return f"{self.legacy_id} ({self.hardware}, {self.engine} {self.engine_ver!r})"

    @property
    def legacy_ids(self) -> list[str]:
        return self.merged_from or [self.legacy_id]

    @property
    def labelled_t1_without_run(self) -> list[Observation]:
        return [o for o in self.observations if o.row.get("tier") == "T1" and not o.row.get("run_sha")]


@dataclass
class Export:
    name: str
    sha256: str
    updated_at: str
    rows_read: int
    observations: list[Observation]
    runs: list[dict[str, Any]]


# --------------------------------------------------------------------------- reading


def read_export(path: str) -> Export:
    raw = read_source(path)
    text = decode_source(path, raw)
    try:
        data = parse_json(raw, text)
        find_duplicate_json_keys(text)
    except LoadError as exc:
        raise ImportInputError(exc.code, path, exc.message, exc.hint, exc.line, exc.col) from None
    boards = data.get("boards") if isinstance(data, dict) else None
    if not isinstance(boards, dict) or not all(isinstance(boards.get(b), list) for b in ("measured", "claimed")):
        raise ImportInputError(
            "ORV108",
            path,
            "the export has no `boards.measured` and `boards.claimed` lists",
            "pass seed 004's tier-boards JSON export",
        )
    runs = data.get("runs", [])
    if not isinstance(runs, list) or not all(isinstance(r, dict) for r in runs):
        raise ImportInputError("ORV104", path, "`runs` must be a list of run records", "pass the export unchanged")
    meta = data.get("meta") if isinstance(data.get("meta"), dict) else {}
    observations: list[Observation] = []
    rows_read = 0
    for board in ("measured", "claimed"):
        seen: dict[str, Observation] = {}
        for index, row in enumerate(boards[board]):
            rows_read += 1
            if not isinstance(row, dict):
                raise ImportInputError(
                    "ORV104", path, f"boards.{board}[{index}] is not an object", "every board row is a JSON object"
                )
            key = json.dumps(row, sort_keys=True)
            if key in seen:
                seen[key].indexes.append(index)
            else:
                seen[key] = Observation(board, [index], row)
                observations.append(seen[key])
    return Export(
        os.path.basename(path),
        hashlib.sha256(raw).hexdigest(),
        str(meta.get("updated_at", "")),
        rows_read,
        observations,
        runs,
    )


# --------------------------------------------------------------------------- resolving one variant


def parse_hardware(text: str, catalog: CatalogView) -> tuple[str, int] | None:
    """`cmp-170hx-x2` -> (cmp-170hx, 2); `nvidia-cmp-170hxx4` -> (cmp-170hx, 4); a bare id -> count 1."""
    gpu = catalog.gpu_id(text)
    if gpu:
        return gpu, 1
    m = re.fullmatch(r"(.+?)-?x(\d+)", text.strip().lower())
    if m and int(m.group(2)) > 0:
        gpu = catalog.gpu_id(m.group(1))
        if gpu:
            return gpu, int(m.group(2))
    return None


def speculative_from_id(legacy_id: str) -> dict[str, Any] | None:
    """The legacy id is the only place the export names speculative decoding: `{method, k}` when it
    gives the draft length (`mtp3`, `dflash2-k7`, `dspark-k5`), `{method}` when it names only the
    method (`dflash2`) — the decode bound is then unknown, which `orv check` reports as a warning."""
    found = {(m.group(1), int(m.group(2))) for p in _SPECULATIVE for m in p.finditer(legacy_id)}
    found = {(method, k) for method, k in found if 1 <= k <= 16}
    if len(found) == 1:
        method, k = found.pop()
        return {"method": method, "k": k}
    if found:
        return None  # several draft lengths: the id says nothing certain
    named = {m.group(1) for m in _SPECULATIVE_NAMED.finditer(legacy_id)}
    return {"method": named.pop()} if len(named) == 1 else None


def _resolve(variant: Variant, catalog: CatalogView) -> None:
    if not SLUG.match(variant.legacy_id) or len(variant.legacy_id) > MAX_ID:
        variant.reasons.append(f"legacy id `{variant.legacy_id}` is not a valid recipe id (slug, <= {MAX_ID})")
    variant.model_id = catalog.base_model(variant.checkpoint)
    if variant.model_id is None:
        variant.reasons.append(f"model `{variant.checkpoint}` derives from no model in {MODELS_PATH}")
    hw = parse_hardware(variant.hardware, catalog)
    if hw is None:
        variant.reasons.append(
            f"hardware `{variant.hardware}` is no GPU in {HARDWARE_PATH} (with an optional -xN count)"
        )
    else:
        variant.gpu_id, variant.count = hw
    if not variant.quant:
        variant.reasons.append("no quantization recorded (`quant` is empty)")
    elif not re.fullmatch(r"[a-z0-9]+([._-][a-z0-9]+)*", variant.quant):
        variant.reasons.append(f"quant `{variant.quant}` is not a lower-case slug")
    result = parse_engine_version(variant.engine, variant.engine_ver)
    if isinstance(result, PinnedStack):
        variant.stack = result
        variant.notes.extend(f"Engine version: {n}." for n in result.notes)
    else:
        variant.reasons.extend(f"not pinned: {r}" for r in result.reasons)
    _merge_figures(variant)


def _merge_figures(variant: Variant) -> None:
    """One claim per metric and one serving setup per variant; rows that disagree are a conflict."""
    any_figure = False
    for metric in METRICS:
        values: dict[Any, list[str]] = defaultdict(list)
        for o in variant.observations:
            if metric in o.metrics():
                any_figure = True
                values[round_figure(o.metrics()[metric])].append(o.where)
        if len(values) > 1:
            pick = max(values) if metric in LOWER_IS_BETTER else min(values)
            listed = ", ".join(f"{v} ({'; '.join(w)})" for v, w in values.items())
            variant.claimed[metric] = pick
            variant.disagreements.append(f"{metric}: {listed}")
            variant.notes.append(
                f"Rows of this configuration disagree on {metric}: {listed}; the least favourable, {pick}, is claimed."
            )
        elif values:
            variant.claimed[metric] = next(iter(values))
    serving: dict[str, set[int]] = defaultdict(set)
    for o in variant.observations:
        for name, value in o.serving().items():
            serving[name].add(value)
    if variant.stack and variant.stack.slots:
        serving["slots"].add(variant.stack.slots)
    for name in SERVING_FIELDS:
        if len(serving[name]) > 1:
            variant.reasons.append(f"rows disagree on {name}: {sorted(serving[name])}")
        elif serving[name]:
            variant.serving[name] = next(iter(serving[name]))
    spec = speculative_from_id(variant.legacy_id)
    if spec:
        variant.serving["speculative"] = spec
        length = f"with k={spec['k']}" if "k" in spec else "(draft length k not recorded)"
        variant.notes.append(
            f"Speculative decoding {spec['method']} {length} is read from the legacy id "
            "(the export has no field for it)."
        )
    if not any_figure:
        variant.reasons.append("no positive figure to claim (decode, prefill and TTFT are all missing)")
    for o in variant.observations:
        if o.row.get("measured_by"):
            variant.measured_by.add(str(o.row["measured_by"]))
        if o.row.get("run_sha"):
            variant.run_hashes.append(str(o.row["run_sha"]))
    variant.run_hashes = sorted(set(variant.run_hashes))


def _configuration(v: Variant) -> tuple[Any, ...]:
    """What the schema records about a configuration; the SPEC's identity of an inference recipe."""
    return (
        v.model_id,
        v.checkpoint,
        v.quant,
        v.gpu_id,
        v.count,
        json.dumps(v.stack.software if v.stack else None, sort_keys=True),
        json.dumps(v.serving, sort_keys=True),
    )


def _merge_same_configuration(variants: list[Variant], catalog: CatalogView) -> list[Variant]:
    """Entries under different legacy ids that are one configuration in everything a recipe records
    (e.g. the same server measured at three reasoning-effort levels, which the schema has no field
    for) become one recipe: several ids for one configuration are the duplicate rows SPEC §6 ORV3xx
    forbids. The merged recipe claims the least favourable figure and keeps every run."""
    groups: dict[tuple[Any, ...], list[Variant]] = defaultdict(list)
    for v in variants:
        if not v.reasons:
            groups[_configuration(v)].append(v)
    out = [v for v in variants if v.reasons]
    for group in groups.values():
        if len(group) == 1:
            out.append(group[0])
            continue
        first = group[0]
        ids = sorted(v.legacy_id for v in group)
        merged = Variant(
            _merged_id(ids),
            first.checkpoint,
            first.quant,
            first.hardware,
            first.engine,
            first.engine_ver,
            [o for v in group for o in v.observations],
            merged_from=ids,
        )
        _resolve(merged, catalog)
        merged.serving = dict(first.serving)  # identical by construction; the merged id names no method
        figures = "; ".join(
            f"`{v.legacy_id}`: {json.dumps(v.claimed)}" for v in sorted(group, key=lambda v: v.legacy_id)
        )
        merged.notes.append(f"Figures per legacy id: {figures}.")
        merged.notes.append(
            f"Merged: the legacy ids {', '.join(f'`{i}`' for i in ids)} describe this one "
            "configuration (they differ only in what a recipe has no field for); each kept its "
            "run file here."
        )
        out.append(merged)
    return sorted(out, key=lambda v: (v.legacy_id, v.where))


def _merged_id(ids: list[str]) -> str:
    """The tokens all ids share at the start and the end: `glm-5-3-flash-{max,low,high}-effort-on-...`
    -> `glm-5-3-flash-effort-on-...`."""
    tokens = [i.split("-") for i in ids]
    prefix = []
    for column in zip(*tokens):
        if len(set(column)) > 1:
            break
        prefix.append(column[0])
    suffix: list[str] = []
    for column in zip(*(t[len(prefix) :][::-1] for t in tokens)):
        if len(set(column)) > 1:
            break
        suffix.insert(0, column[0])
    merged = "-".join(prefix + suffix)[:MAX_ID].strip("-")
    return merged if merged and merged not in ids else f"{ids[0][: MAX_ID - 7]}-merged"


def _physics_screen(variant: Variant, catalog: CatalogView) -> str | None:
    """Why the decode claim is impossible by SPEC §6, or None (also None when it cannot be judged).

    The bound is validator.science.physics's, the one ORV512 applies, so the import rejects exactly
    what `orv check` would."""
    decode = variant.claimed.get("decode_tok_s")
    single_stream = variant.serving.get("concurrency", 1) == 1
    if decode is None or variant.model_id is None or variant.gpu_id is None or not single_stream:
        return None
    bound = decode_bound(variant, catalog)
    if bound is None or decode <= bound.tok_s:
        return None
    spec = variant.serving.get("speculative")
    gpu = catalog.hardware[variant.gpu_id]
    active = catalog.models[variant.model_id].active_b
    how = (
        f"{variant.count} x {gpu.hbm_tb_s:g} TB/s / ({active:g}B active x {bound.bits.bits:g} bits "
        f"[{bound.bits.basis}] x {DECODE_READ_FRACTION:g} read)"
    )
    if spec:
        return (
            f"physically impossible: {decode} tok/s single-stream decode exceeds (k+1) x {how} = "
            f"{bound.tok_s:.1f} tok/s even with {spec['method']} k={spec['k']}"
        )
    return (
        f"physically impossible without speculative decoding: {decode} tok/s exceeds {how} = {bound.tok_s:.1f} "
        "tok/s; if the figure is an aggregate over several streams, resubmit it with serving.concurrency"
    )


def decode_bound(variant: Variant, catalog: CatalogView) -> DecodeBound | None:
    """ORV512's bound for this variant, or None when it cannot be judged: a figure the catalog lacks,
    a quant naming no width, or speculative decoding whose draft length k is unknown."""
    assert variant.model_id and variant.gpu_id
    spec = variant.serving.get("speculative")
    if spec and "k" not in spec:
        return None
    return decode_bound_for(
        catalog.models[variant.model_id],
        catalog.hardware[variant.gpu_id],
        variant.count,
        variant.quant or "",
        spec["k"] if spec else 0,
    )


# --------------------------------------------------------------------------- splitting, flags


def _assign_ids(variants: list[Variant]) -> dict[str, list[Variant]]:
    """Accepted variants of one legacy id get suffixes naming what differs; returns the splits."""
    by_id: dict[str, list[Variant]] = defaultdict(list)
    for v in variants:
        by_id[v.legacy_id].append(v)
    splits = {}
    for legacy_id, group in sorted(by_id.items()):
        if len(group) == 1:
            group[0].recipe_id = legacy_id
            continue
        splits[legacy_id] = group
        dims = [d for d in ("gpu", "count", "checkpoint", "quant", "build") if len({_dim(v, d) for v in group}) > 1]
        for v in group:
            suffix = "-".join(_dim_slug(v, d) for d in dims)
            v.recipe_id = f"{legacy_id}-{suffix}"[:MAX_ID].strip("-")
            v.split_from = legacy_id
    seen: dict[str, int] = {}
    for v in sorted(variants, key=lambda v: (v.recipe_id, v.where)):
        if v.recipe_id in seen:
            seen[v.recipe_id] += 1
            v.recipe_id = f"{v.recipe_id[: MAX_ID - 3]}-{seen[v.recipe_id]}"
        else:
            seen[v.recipe_id] = 1
    return splits


def _dim(v: Variant, dim: str) -> str:
    return {
        "gpu": v.gpu_id or "",
        "count": str(v.count),
        "checkpoint": v.checkpoint,
        "quant": v.quant or "",
        "build": json.dumps(v.stack.software if v.stack else {}, sort_keys=True),
    }[dim]


def _dim_slug(v: Variant, dim: str) -> str:
    if dim == "count":
        return f"x{v.count}"
    if dim == "build" and v.stack:
        pins = []
        for component in v.stack.software.values():
            pin = component.get("commit") or component.get("version") or component.get("image", "")[-12:]
            pins.append(pin[:12] if component.get("commit") else pin)
        return re.sub(r"[^a-z0-9]+", "-", "-".join(pins).lower()).strip("-")
    return re.sub(r"[^a-z0-9]+", "-", _dim(v, dim).lower()).strip("-")


def _copied_claims(variants: list[Variant]) -> list[str]:
    """The same claim for the same stack and model on several hardware counts (SPEC ORV3xx warning)."""
    groups: dict[tuple[Any, ...], list[Variant]] = defaultdict(list)
    for v in variants:
        key = (
            v.model_id,
            v.checkpoint,
            v.quant,
            v.gpu_id,
            json.dumps(v.stack.software if v.stack else {}, sort_keys=True),
            json.dumps(v.claimed, sort_keys=True),
        )
        groups[key].append(v)
    out = []
    for group in groups.values():
        counts = sorted({v.count for v in group})
        if len(counts) > 1:
            for v in group:
                v.notes.append(
                    f"Flagged: the export claims the same {json.dumps(v.claimed)} on "
                    f"{', '.join(map(str, counts))} x {v.gpu_id}; a copied claim, not a measurement "
                    "per count."
                )
            ids = ", ".join(f"`{v.recipe_id}`" for v in sorted(group, key=lambda v: v.count))
            out.append(
                f"{json.dumps(group[0].claimed)} claimed on {', '.join(map(str, counts))} x {group[0].gpu_id}: {ids}"
            )
    return out


# --------------------------------------------------------------------------- runs


def _timestamp(text: str) -> str | None:
    """`2026-10-17 12:50:29.696994-06` -> `2026-10-17T12:50:29.696994-06:00`."""
    m = re.fullmatch(
        r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?|"
        r"(\d{4}-\d\d-\d\d)[ T](\d\d:\d\d:\d\d(?:\.\d+)?)Z",
        text.strip(),
    )
    if not m:
        return None
    if m.group(5):
        return f"{m.group(5)}T{m.group(6)}Z"
    return f"{m.group(1)}T{m.group(2)}{m.group(3)}:{m.group(4) or '00'}"


def _run_document(record: dict[str, Any], index: int, variant: Variant, source: str) -> dict[str, Any]:
    measured_at = _timestamp(str(record.get("created_at", "")))
    assert measured_at is not None and variant.stack is not None
    deployment = record.get("deployment") or {}
    detail = "; ".join(f"{k}: {v}" for k, v in sorted(deployment.items())) if isinstance(deployment, dict) else ""
    storage = ", ".join(map(str, record.get("storage") or []))
    notes = (
        f"Imported from the legacy boards export's run record {record['content_hash']} (legacy tier "
        f"'{record.get('tier')}'). It holds the tool's headline only, no raw samples, so it can support T1 at "
        f"most. Deployment as recorded: {detail or 'not recorded'}; storage: {storage or 'not recorded'}."
    )
    return {
        "kind": "inference",
        "tool": {"name": record["tool"], "version": record["tool_version"]},
        "model": variant.model_id,
        "checkpoint": variant.checkpoint,
        "hardware": {"gpu": variant.gpu_id, "count": variant.count},
        "software": variant.stack.software,
        "quant": variant.quant,
        "serving": _serving(variant),
        "measured_at": measured_at,
        "measured_by": str(_rows_citing(variant, str(record["content_hash"]))[0].row["measured_by"]),
        "summary": {k: v for k, v in record["headline"].items() if _positive(v)},
        "notes": notes,
        "provenance": {
            "source": source,
            "row": f"runs[{index}]",
            "legacy_id": record["content_hash"],
            "original": record,
        },
    }


def _run_problems(record: dict[str, Any], variant: Variant | None, catalog: CatalogView) -> list[str]:
    problems = []
    headline = record.get("headline")
    if not isinstance(headline, dict) or not any(_positive(v) for v in headline.values()):
        problems.append(
            "incomplete: the record has no headline figure (headline "
            f"{json.dumps(headline)}), so there is nothing a recipe could cite"
        )
    if not record.get("tool") or not record.get("tool_version"):
        problems.append("the record names no tool and tool version")
    if _timestamp(str(record.get("created_at", ""))) is None:
        problems.append(f"created_at `{record.get('created_at')}` is not a timestamp")
    if problems:
        return problems
    if variant is None:
        return ["no board row references this run, so it would be an orphan run file"]
    if variant.reasons:
        return [f"the recipe entry it backs ({variant.legacy_id}) was rejected"]
    if not _rows_citing(variant, str(record.get("content_hash"))):
        return ["no board row references this run"]
    if not variant.measured_by:
        problems.append("no board row records who measured it (`measured_by`)")
    same_engine = str(record.get("engine", "")).lower() == variant.engine.lower()
    if not same_engine or record.get("engine_version") != variant.engine_ver:
        problems.append(
            f"engine `{record.get('engine')} {record.get('engine_version')}` differs from its board row's "
            f"`{variant.engine} {variant.engine_ver}`"
        )
    if catalog.base_model(str(record.get("model", ""))) != variant.model_id:
        problems.append(f"model `{record.get('model')}` is not the board row's `{variant.checkpoint}`")
    rows = _rows_citing(variant, str(record.get("content_hash")))
    for metric, value in headline.items():  # type: ignore[union-attr]
        row_values = {round_figure(o.row[metric]) for o in rows if _positive(o.row.get(metric))}
        if _positive(value) and row_values and row_values != {round_figure(value)}:
            problems.append(f"headline {metric} {value} is not the figure its board rows show ({sorted(row_values)})")
    if len({o.row.get("measured_by") for o in rows}) != 1:
        problems.append("its board rows disagree on who measured it")
    return problems


def _rows_citing(variant: Variant, content_hash: str) -> list[Observation]:
    return [o for o in variant.observations if str(o.row.get("run_sha")) == content_hash]


def _serving(v: Variant) -> dict[str, Any]:
    return {k: v.serving[k] for k in (*SERVING_FIELDS, "speculative") if k in v.serving}


# --------------------------------------------------------------------------- the import


def import_legacy_boards(root: str, source_path: str) -> ImportReport:
    export = read_export(source_path)
    catalog = load_catalog(root)
    report = ImportReport(COMMAND, export.name, export.sha256)
    variants = _variants(export)
    for v in variants:
        _resolve(v, catalog)
    variants = _merge_same_configuration(variants, catalog)
    # rows labelled T1 whose run is missing from the export fall back to claims as well
    records = {str(r.get("content_hash")): (i, r) for i, r in enumerate(export.runs)}
    for v in variants:
        if not v.reasons:
            why = _physics_screen(v, catalog)
            if why:
                v.reasons.append(why)
    accepted = [v for v in variants if not v.reasons]
    run_outcomes = _store_runs(root, export, records, variants, catalog, report)
    splits = _assign_ids(accepted)
    copied = _copied_claims(accepted)
    lacks: list[str] = []
    for v in accepted:
        report.files.append(_write_recipe(root, v, export))
        assert v.model_id is not None  # _write_recipe holds it: an accepted variant resolved its model
        # the run files this import writes hold the export's headline only (_run_document): no samples
        path = recipe_path("inference", v.model_id, v.recipe_id)
        lacks.append(f"`{v.recipe_id}`: {document_lacks(root, _recipe_document(v, export), path, 0)}")
    report.files += remove_stale(root, "recipes/inference", {f.path for f in report.files}, COMMAND, export.name)
    for v in variants:
        if v.reasons:
            report.rejections.append(Rejection(v.label, v.where, tuple(v.reasons)))
    downgraded = [v for v in accepted if v.labelled_t1_without_run and not v.runs]
    t1_rows_without_run = sum(len(o.indexes) for v in variants for o in v.labelled_t1_without_run)
    truncated = sorted({v.recipe_id for v in accepted for i in v.legacy_ids if len(i) == LEGACY_SLUG_LIMIT})
    merged = [v for v in accepted if v.merged_from]
    distinct = len(export.observations)
    report.counts = {
        "rows read (boards.measured + boards.claimed)": export.rows_read,
        "run records read": len(export.runs),
        "duplicates collapsed": export.rows_read - distinct,
        "distinct rows": distinct,
        "legacy ids": len({str(o.row.get("recipe", "")) for o in export.observations}),
        "recipes written": len(accepted),
        "split (legacy ids covering several variants)": len(splits),
        "recipes from splits": sum(len(g) for g in splits.values()),
        "downgraded (T1 label without a run file -> claim)": len(downgraded),
        "rows labelled T1 without a run file": t1_rows_without_run,
        "merged (legacy ids that are one configuration -> one recipe)": sum(len(v.merged_from) for v in merged),
        "recipes from merges": len(merged),
        "configurations whose rows disagree (least favourable figure claimed)": sum(
            1 for v in accepted if v.disagreements
        ),
        "rejected (entries)": len([v for v in variants if v.reasons]),
        "run files written": sum(1 for o in run_outcomes if o),
        "run records rejected": sum(1 for o in run_outcomes if not o),
        "copied claims flagged": len(copied),
        "truncated 64-character ids kept": len(truncated),
    }
    _sections(report, export, catalog, variants, accepted, splits, downgraded, copied, truncated)
    report.section(
        "Merged",
        "Several legacy ids, one configuration: everything a recipe records is the same, so "
        "they are one recipe (SPEC §6 forbids one configuration under several ids); it claims the least "
        "favourable of their figures and keeps all their run files.",
    ).items += [f"{', '.join(f'`{i}`' for i in v.merged_from)} -> `{v.recipe_id}`" for v in merged]
    report.section(
        "Disagreeing figures",
        "Rows of one configuration that claim different figures: the least "
        "favourable is claimed (never the best), every figure is listed in the recipe's notes.",
    ).items += [f"`{v.recipe_id}`: {'; '.join(v.disagreements)}" for v in accepted if v.disagreements]
    report.section(LACKS_TITLE, LACKS_INTRO).items += sorted(lacks)
    return report


def _variants(export: Export) -> list[Variant]:
    by_key: dict[tuple[Any, ...], Variant] = {}
    for o in export.observations:
        r = o.row
        key = (
            str(r.get("recipe", "")),
            str(r.get("model", "")),
            r.get("quant"),
            str(r.get("hardware", "")),
            str(r.get("engine", "")),
            r.get("engine_ver"),
        )
        if key not in by_key:
            by_key[key] = Variant(*key)
        by_key[key].observations.append(o)
    return sorted(by_key.values(), key=lambda v: (v.legacy_id, v.where))


def _store_runs(
    root: str,
    export: Export,
    records: dict[str, tuple[int, dict[str, Any]]],
    variants: list[Variant],
    catalog: CatalogView,
    report: ImportReport,
) -> list[bool]:
    """Write each usable run record as a run file through the add-run path; reject the rest."""
    by_hash: dict[str, list[Variant]] = defaultdict(list)
    for v in variants:
        for h in v.run_hashes:
            by_hash[h].append(v)
    outcomes = []
    for index, record in enumerate(export.runs):
        content_hash = str(record.get("content_hash"))
        backers = by_hash.get(content_hash, [])
        variant = backers[0] if len(backers) == 1 else None
        problems = (
            ["board rows of several recipes point at it"]
            if len(backers) > 1
            else _run_problems(record, variant, catalog)
        )
        if problems:
            report.rejections.append(Rejection(f"run {content_hash}", f"runs[{index}]", tuple(problems)))
            outcomes.append(False)
            continue
        assert variant is not None
        document = _run_document(record, index, variant, export.name)
        try:
            stored = store_run_document(root, document)
        except AddRunError as exc:
            report.files.append(
                FileOutcome(exc.result.diagnostics[0].path, Action.CONFLICT, exc.result.diagnostics[0].message)
            )
            outcomes.append(False)
            continue
        report.files.append(FileOutcome(stored.path, Action.CREATED if stored.created else Action.UNCHANGED))
        variant.runs.append(f"sha256:{stored.digest}")
        variant.run_dates.append(document["measured_at"][:10])
        outcomes.append(True)
    for v in variants:
        missing = [h for h in v.run_hashes if h not in records]
        if missing:
            v.notes.append(f"Rows point at run {', '.join(missing)}, which the export does not contain.")
    return outcomes


def _write_recipe(root: str, v: Variant, export: Export) -> FileOutcome:
    assert v.model_id and v.gpu_id and v.stack
    body = yamlout.dump(_recipe_document(v, export))
    text = generated_text(INFERENCE_SCHEMA_LINE, COMMAND, export.name, body)
    return write_generated(root, recipe_path("inference", v.model_id, v.recipe_id), text, COMMAND, export.name)


def _recipe_document(v: Variant, export: Export) -> dict[str, Any]:
    assert v.stack is not None
    export_date = export.updated_at[:10] if re.match(r"\d{4}-\d\d-\d\d", export.updated_at) else ""
    measured = min(v.run_dates) if v.run_dates else export_date
    ids = ", ".join(f"`{i}`" for i in v.legacy_ids)
    notes = [
        f"Imported from the legacy tier-boards export {export.name}: legacy id{'s' if v.merged_from else ''} "
        f"{ids}, rows {v.where}.",
        f'Engine as recorded: {v.engine} "{v.engine_ver}".',
    ]
    if v.split_from:
        notes.append(
            f"Split: the legacy id `{v.split_from}` covers several hardware counts or engine builds; this "
            "recipe is one of them (see the import report)."
        )
    if any(len(i) == LEGACY_SLUG_LIMIT for i in v.legacy_ids) and not v.merged_from:
        notes.append("The legacy id was cut at 64 characters by the old site; it is kept as the id.")
    if v.labelled_t1_without_run and not v.runs:
        notes.append(
            "Downgraded: the export labels rows T1 but they carry no run file, so the figures are claims "
            "(T0); tiers are derived from run files, never declared."
        )
    if not v.run_dates:
        notes.append(
            f"Measured date: not recorded by the export; {export_date} is the export's own date (an upper bound)."
        )
    notes.append(
        "Claims are rounded to 2 decimals (the export carries float noise); a run file keeps its tool's "
        "headline exactly."
    )
    notes.extend(v.notes)
    original: dict[str, Any] = {"hardware": v.hardware, "engine": v.engine, "engine_ver": v.engine_ver}
    if v.merged_from:
        original["legacy_ids"] = v.merged_from
    doc: dict[str, Any] = {
        "id": v.recipe_id,
        "kind": "inference",
        "model": v.model_id,
        "checkpoint": v.checkpoint,
        "hardware": {"gpu": v.gpu_id, "count": v.count},
        "author": sorted(v.measured_by)[0] if len(v.measured_by) == 1 else UNKNOWN_AUTHOR,
        "measured": measured,
        "software": v.stack.software,
        "quant": v.quant,
        "serving": _serving(v),
        "claimed": {m: v.claimed[m] for m in METRICS if m in v.claimed},
        "runs": sorted(v.runs),
        "notes": "\n".join(notes),
        "provenance": {"source": export.name, "row": v.where, "legacy_id": _legacy_id_field(v), "original": original},
    }
    return doc


def _legacy_id_field(v: Variant) -> str:
    """provenance.legacy_id (at most 200 characters): the id, or the merged ids joined."""
    joined = " + ".join(v.legacy_ids)
    if len(joined) <= 200:
        return joined
    return f"{v.legacy_ids[0]} + {len(v.legacy_ids) - 1} more (original.legacy_ids)"


def _sections(
    report: ImportReport,
    export: Export,
    catalog: CatalogView,
    variants: list[Variant],
    accepted: list[Variant],
    splits: dict[str, list[Variant]],
    downgraded: list[Variant],
    copied: list[str],
    truncated: list[str],
) -> None:
    recipes = report.section("Recipes", "Each accepted entry: id, hardware, claim, and its evidence.")
    for v in sorted(accepted, key=lambda v: v.recipe_id):
        evidence = f"run file {', '.join(r[7:19] for r in v.runs)} (T1 evidence)" if v.runs else "claim only (T0)"
        recipes.items.append(
            f"`{v.recipe_id}` — {v.checkpoint} on {v.count} x {v.gpu_id}, {json.dumps(v.claimed)}; {evidence}"
        )
    split = report.section(
        "Splits",
        "Legacy ids that covered several hardware counts or engine builds; each "
        "variant that was accepted became its own recipe.",
    )
    for legacy_id, group in sorted(splits.items()):
        split.items.append(
            f"`{legacy_id}` -> " + ", ".join(f"`{v.recipe_id}` ({v.count} x {v.gpu_id}, {v.engine_ver})" for v in group)
        )
    partial = sorted({v.legacy_id for v in variants if v.reasons} & {v.legacy_id for v in accepted})
    for legacy_id in partial:
        split.items.append(
            f"`{legacy_id}`: some variants were rejected (see Rejected); the rest kept "
            f"{'the legacy id' if legacy_id not in splits else 'suffixed ids'}"
        )
    down = report.section(
        "Downgraded", "Rows the export labels T1 that have no run file: their figures are claims, and the recipe is T0."
    )
    down.items += [
        f"`{v.recipe_id}` (rows {', '.join(o.where for o in v.labelled_t1_without_run)})" for v in downgraded
    ]
    merged = [v for v in accepted if v.labelled_t1_without_run and v.runs]
    down.items += [
        f"`{v.recipe_id}`: rows {', '.join(o.where for o in v.labelled_t1_without_run)} are labelled T1 "
        "without a run, but the same configuration has a run file, so the recipe keeps it"
        for v in merged
    ]
    runs = report.section(
        "Run files",
        "Run records written as content-addressed run files (RFC 8785 bytes, "
        "named by their SHA-256) through the same path as `orv add-run`.",
    )
    for v in accepted:
        for ref in v.runs:
            runs.items.append(f"`{ref}` backs `{v.recipe_id}`")
    report.section(
        "Copied claims (flagged, imported)",
        "The same claim for the same stack on several hardware "
        "counts: a copy, not a measurement per count. `orv check` warns about these (ORV3xx).",
    ).items += copied
    report.section(
        "Truncated ids", "Legacy ids of exactly 64 characters, cut by the old site; unique, so kept as recipe ids."
    ).items += [f"`{t}`" for t in truncated]
    versions = report.section(
        "Engine versions",
        "Every distinct engine version in the export and how it was read (validator/importers/stacks.py).",
    )
    seen = set()
    for v in sorted(variants, key=lambda v: (str(v.engine_ver), v.engine)):
        key = (v.engine, v.engine_ver)
        if key in seen:
            continue
        seen.add(key)
        result = parse_engine_version(v.engine, v.engine_ver)
        if isinstance(result, PinnedStack):
            read = "pinned: " + json.dumps(result.software, sort_keys=True)
        else:
            read = "REJECTED: " + "; ".join(result.reasons)
        versions.items.append(f'{v.engine} "{v.engine_ver}" -> {read}')
    physics = report.section(
        "Physics bound",
        "Single-stream decode claims against GPUs x memory bandwidth / bytes "
        "of active weights (x (k+1) with speculative decoding), with the fewest bits the quant "
        "names. Listed: accepted recipes above 85% of the bound, and those that cannot be "
        "judged because the catalog has no active-parameter count for the model.",
    )
    for v in sorted(accepted, key=lambda v: v.recipe_id):
        decode = v.claimed.get("decode_tok_s")
        if decode is None:
            continue
        bound = decode_bound(v, catalog)
        if bound is None:
            spec = v.serving.get("speculative")
            why = (
                f"speculative decoding `{spec['method']}` with no recorded draft length k, so the bound is "
                "unknown (`orv check` warns, ORV512)"
                if spec and "k" not in spec
                else f"{v.model_id} has no active_b, or the quant names no bit width"
            )
            physics.items.append(f"`{v.recipe_id}`: not judged ({why})")
        elif decode > NEAR_BOUND * bound.tok_s:
            physics.items.append(
                f"`{v.recipe_id}`: {decode} tok/s is {decode / bound.tok_s:.0%} of the bound "
                f"{bound.tok_s:.1f} tok/s at {bound.bits.bits:g} bits; a stricter bytes-per-weight "
                "reading (scales, unquantised layers) may reject it"
            )
    interp = report.section("Interpretations", "Decisions the export left open.")
    interp.items += [
        "`0f685aa + row32 four-slot profile` is exllamav3 at commit 0f685aa with a serving profile: 4 slots "
        "(serving.slots 4) and `row32` in the notes; it is configuration, not a code patch. The run records' "
        'deployment text ("TP2 on 2x CMP170HX 64GiB, 4 active sequences") confirms the four slots.',
        "`claimed_tok_s` (claimed board) is a decode rate: claimed.decode_tok_s. Measured rows keep decode, prefill "
        "and TTFT as recorded; rows of one configuration that disagree on a figure are rejected, not averaged.",
        "Claims are rounded to 2 decimals (half-even on the shortest decimal of the float); run files keep the run "
        "record's headline exactly (41.47331427713861), so a recipe's claim and its run differ by the rounding only.",
        "serving.concurrency and serving.context_len are taken from the measured rows as recorded (context_len 78 for "
        "the exllamav3 spot checks is the export's value); serving.slots from `slot_ceiling` and the profile.",
        "Speculative decoding is read from the legacy id (the export has no field for it): method and draft length "
        "where both are named (mtp3, dflash2-k7, dspark-k5), the method alone where only it is (dflash2, dspark). "
        "With k unknown the decode bound is unknown, so such a claim is imported at T0 and `orv check` warns "
        "(ORV512) instead of the import rejecting it.",
        "The physics screen uses the decode bound ORV512 applies (validator/science/physics.py: lowest bits the "
        "quant names, 75% of active weights read). Until 2026-12-03 the importer had its own, 25% stricter copy "
        "that also read bits from the checkpoint name; unified, it accepts `nemotron-3-5-bolt-74b-a9b-1x-dgx-spark-"
        "vllm-b12x-lilicorr-262k` (140 tok/s, 87% of 161.8) and the speculative entries above, which it rejected.",
        "A recipe's `measured` date is its run's date (created_at, local date) when it has a run file, else the "
        "export's date (meta.updated_at), an upper bound; the notes say which.",
        f'`author` is the rows\' measured_by when they record one, else "{UNKNOWN_AUTHOR}".',
        "`model` is the catalog model a checkpoint derives from (longest name or alias it starts with); the "
        "checkpoint string is kept in `checkpoint`.",
        "Hardware strings are a catalog id or alias with an optional glued count: cmp-170hx-x2 and "
        "nvidia-cmp-170hxx4 are cmp-170hx x2 and x4.",
        'The run records describe the deployment as "2x CMP170HX 64GiB" (32 GiB per card) while the published '
        "CMP 170HX has 8 GB; the catalog keeps the published figure.",
        "`deepseek-v4-1-flash-sm80-deepinfer-kernel-port-6x-a100-dspark-k5` names 6x A100 but its hardware field "
        "says cmp-170hx-x6; the hardware field is used (the entry is rejected for unhashed patches anyway).",
    ]

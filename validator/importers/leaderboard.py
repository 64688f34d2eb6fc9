"""`orv import leaderboard`: seed 000's training leaderboard -> training recipes and starting points.

The page has three parts this import reads: the per-model cards ("Models with recipes": family,
parameters, the fastest recipe per GPU and bare "starting point" figures), the "Latest recipes"
table (one row per recipe: date, model, GPU, GPU count, tokens/s/GPU, $/1M, a layout cell, rank,
author) and the "Wanted" list. Every table row becomes a training recipe; the cards become
catalog/starting-points.yaml and a set of cross-checks; $/1M is never stored but recomputed from
the catalog's price per GPU-hour, which this module also derives from the rows.

The layout cells lost the separator between the layout and what followed it ("TP1 PP4
DP216/17/17/14 layer split" is DP2 and the split 16/17/17/14; "DP8max 16,384 tokens/GPU" is DP8
and max 16,384 tokens/GPU). The glued digits are split so that TP x PP x CP x DP equals the GPU
count and a layer split has PP x VPP entries; a cell that admits no such reading, or more than
one, is rejected rather than guessed.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from decimal import ROUND_CEILING, Decimal
from typing import Any

from validator.errors import ImportInputError
from validator.files import yamlout
from validator.files.generated import generated_text, remove_stale, write_generated
from validator.importers.common import decode_source, read_source
from validator.importers.lacking import document_lacks
from validator.importers.report import LACKS_INTRO, LACKS_TITLE, ImportReport, Rejection
from validator.registry.catalog import CatalogView, load_catalog
from validator.registry.layout import (
    HARDWARE_PATH,
    MAX_ID,
    MODELS_PATH,
    STARTING_POINTS_PATH,
    STARTING_POINTS_SCHEMA_LINE,
    TRAINING_SCHEMA_LINE,
    WORKLOADS_PATH,
    model_slug,
    recipe_path,
)
from validator.science.physics import cost_per_1m

COMMAND = "leaderboard"
WORKLOAD = "sft-8k-gb128-bf16"
# Megatron-Core's --optimizer-offload-fraction defaults to 1.0: "CPU optimizer offload" with no
# figure is the whole optimizer state on the CPU.
DEFAULT_OFFLOAD_FRACTION = 1.0
COST_STEP = Decimal("0.01")  # the page shows $/1M to the cent
TOKENS_STEP = Decimal("0.1")  # and tokens/s/GPU to a tenth
GPUS = ("H100", "H200", "B200")
_KEYS = ("TP", "PP", "VPP", "CP", "EP", "ETP", "DP")
_TOKEN = re.compile(r"(TP|PP|VPP|CP|EP|ETP|DP)(\d+)")


@dataclass(frozen=True)
class TableRow:
    index: int  # 1-based position in the "Latest recipes" table
    line: int  # line in the source file
    cells: tuple[str, ...]

    @property
    def measured(self) -> str:
        return self.cells[0]

    @property
    def model(self) -> str:
        return self.cells[1]

    @property
    def gpu(self) -> str:
        return self.cells[2]

    @property
    def gpus(self) -> int:
        return int(self.cells[3].replace(",", ""))

    @property
    def tokens(self) -> float:
        return float(self.cells[4].replace(",", ""))

    @property
    def cost(self) -> float:
        return float(self.cells[5].lstrip("$").replace(",", ""))

    @property
    def layout_cell(self) -> str:
        return self.cells[6]

    @property
    def rank(self) -> str:
        return self.cells[7]

    @property
    def author(self) -> str:
        return self.cells[8]


@dataclass
class LayoutReading:
    layout: dict[str, Any] = field(default_factory=dict)
    tuning: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # how the cell was read, where it needed judgement
    unread: list[str] = field(default_factory=list)  # phrases kept only in notes
    problems: list[str] = field(default_factory=list)


@dataclass
class CardGpu:
    gpu: str
    tokens: float | None = None
    gpus: int | None = None
    cost: float | None = None
    start: float | None = None
    start_text: str = ""
    start_best: float | None = None
    gain_pct: int | None = None


@dataclass
class Card:
    family: str
    count: int
    model: str
    params_b: float | None
    active_b: float
    newest: str
    gpus: list[CardGpu] = field(default_factory=list)


@dataclass
class Source:
    name: str
    sha256: str
    rows: list[TableRow]
    unreadable: list[tuple[int, str]]  # (line, text) inside the table that is not a row
    cards: list[Card]
    wanted: list[str]


# --------------------------------------------------------------------------- reading the page


def read_source_file(path: str) -> Source:
    raw = read_source(path)
    text = decode_source(path, raw)
    name = os.path.basename(path)
    lines = text.splitlines()
    try:
        start = next(i for i, line in enumerate(lines) if line.strip() == "Latest recipes")
    except StopIteration:
        raise ImportInputError(
            "ORV108",
            path,
            'no "Latest recipes" table in the source',
            'pass seed 000\'s leaderboard page (the table starts at a line "Latest recipes")',
        ) from None
    end = next((i for i in range(start, len(lines)) if lines[i].startswith("Wanted:")), len(lines))
    rows: list[TableRow]
    rows, unreadable = [], []
    for i in range(start + 1, end):
        line = lines[i]
        if not line.strip() or line.startswith("Newest first") or line.startswith("Measured\t"):
            continue
        cells = tuple(c.strip() for c in line.split("\t"))
        if len(cells) == 9 and re.fullmatch(r"\d{4}-\d\d-\d\d", cells[0]) and _numeric_cells_ok(cells):
            rows.append(TableRow(len(rows) + 1, i + 1, cells))
        else:
            unreadable.append((i + 1, line))
    cards = _read_cards(lines[:start])
    wanted_text = next((line.strip() for line in reversed(lines[end:]) if line.strip()), "")
    return Source(name, hashlib.sha256(raw).hexdigest(), rows, unreadable, cards, _read_wanted(wanted_text))


def _numeric_cells_ok(cells: tuple[str, ...]) -> bool:
    # cells[3] is a GPU count: at most 12 characters (int() refuses 4,300 digits; found by fuzzing)
    return (
        re.fullmatch(r"[\d,]{1,12}", cells[3]) is not None
        and re.fullmatch(r"[\d,]+(\.\d+)?", cells[4]) is not None
        and re.fullmatch(r"\$[\d,]+(\.\d+)?", cells[5]) is not None
    )


_CARD_HEAD = re.compile(r"^(?P<family>.+?)(?P<n>\d{1,9}) recipes?$")
_CARD_SIZE = re.compile(r"^(?:(?P<params>[\d.]+)B parameters · )?N (?P<active>[\d.]+)B active$")
_CARD_GPU = re.compile(
    r"(?P<gpu>H100|H200|B200)"
    r"(?:No recipe yet|(?P<tok>[\d,]+\.\d)×(?P<gpus>\d+)\$(?P<cost>[\d,.]+))"
)
_CARD_START = re.compile(r"^Starting point(?P<start>[\d,]+\.\d) → (?P<best>[\d,]+\.\d) \+(?P<gain>\d+)%$")


def _read_cards(lines: list[str]) -> list[Card]:
    body = [line.strip() for line in lines if line.strip()]
    cards: list[Card] = []
    i = 0
    while i < len(body):
        head = _CARD_HEAD.match(body[i])
        size = _CARD_SIZE.match(body[i + 2]) if head and i + 2 < len(body) else None
        if not head or not size:
            i += 1
            continue
        card = Card(
            head.group("family"),
            int(head.group("n")),
            body[i + 1],
            float(size.group("params")) if size.group("params") else None,
            float(size.group("active")),
            "",
        )
        i += 3
        while i < len(body) and not body[i].startswith("Newest "):
            for m in _CARD_GPU.finditer(body[i]):
                card.gpus.append(
                    CardGpu(m.group("gpu"), _num(m.group("tok")), _count(m.group("gpus")), _num(m.group("cost")))
                )
            start = _CARD_START.match(body[i])
            if start and card.gpus:
                target = card.gpus[-1]
                target.start, target.start_text = _num(start.group("start")), body[i]
                target.start_best, target.gain_pct = _num(start.group("best")), _count(start.group("gain"))
            i += 1
        if i < len(body):
            card.newest = body[i].removeprefix("Newest ").strip()
        cards.append(card)
    return cards


def _count(text: str | None) -> int | None:
    """A card's whole number, or None when absent or unreadable (more than 4,300 digits)."""
    try:
        return int(text) if text else None
    except ValueError:
        return None


def _num(text: str | None) -> float | None:
    """A card's figure, or None when the page has none — or a garbled one ("0.1,178.1", two
    figures run together), which the import then reports as missing instead of crashing on."""
    try:
        return float(text.replace(",", "")) if text else None
    except ValueError:
        return None


def _read_wanted(text: str) -> list[str]:
    """The wanted list lost its separators too: 'QwenQwen3.8-Flash-NextQwen3.5-27B...InklingInkling'.

    A family heading is a capitalised word written twice in a row; the text splits before every
    family name, and a bare family name is a heading unless it follows its own heading (Inkling)."""
    families = set(re.findall(r"([A-Z][A-Za-z]+?)(?=\1)", text))
    if not families:
        return []
    pattern = "|".join(sorted(map(re.escape, families), key=len, reverse=True))
    chunks = [c for c in re.split(f"(?=(?:{pattern}))", text) if c]
    out: list[str] = []
    previous = ""
    for chunk in chunks:
        if chunk in families and previous != chunk:
            previous = chunk
            continue
        out.append(chunk)
        previous = ""
    return out


# --------------------------------------------------------------------------- the layout cell


_LONG_NUMBER = re.compile(r"\d{10,}")


def read_layout_cell(cell: str, gpus: int, model_layers: int | None) -> LayoutReading:
    """Structured layout and tuning from one layout cell (see the module docstring)."""
    reading = LayoutReading()
    long_number = _LONG_NUMBER.search(cell)
    if long_number:  # no layout figure has 10 digits, and int() refuses 4,300 (found by fuzzing)
        reading.problems.append(f"a number of {len(long_number.group()):,} digits in the layout cell")
        return reading
    stated: dict[str, int] = {}
    pos = 0
    glued_key, glued_digits, tail = "", "", ""
    while True:
        while pos < len(cell) and cell[pos] == " ":
            pos += 1
        m = _TOKEN.match(cell, pos)
        if not m:
            tail = cell[pos:]
            break
        after = cell[m.end() :]
        if after.startswith(" ") and _TOKEN.match(after.lstrip(" ")):
            stated[m.group(1)] = int(m.group(2))
            pos = m.end()
            continue
        glued_key, glued_digits, tail = m.group(1), m.group(2), after
        break
    if not glued_key:
        reading.problems.append(f"`{cell}` does not start with a layout (TP.. PP.. DP..)")
        return reading
    rest = _unglue(glued_key, glued_digits, tail, stated, gpus, reading)
    if reading.problems:
        return reading
    layout = _layout(stated, gpus, reading)
    if reading.problems:
        return reading
    reading.layout = layout
    _read_phrases(rest, reading)
    _check_layout(reading.layout, gpus, model_layers, reading)
    return reading


def _unglue(key: str, digits: str, tail: str, stated: dict[str, int], gpus: int, reading: LayoutReading) -> str:
    """Split `DP216/17/17/14` into DP2 and `16/17/17/14`; returns the text after the layout."""
    if not tail.startswith("/"):
        stated[key] = int(digits)
        if tail and not tail.startswith(" ") and not tail[0].isalpha():
            reading.problems.append(f"unexpected `{tail[:10]}` after {key}{digits}")
        return tail
    split_tail = re.match(r"[\d/]*", tail).group(0)  # type: ignore[union-attr]
    readings = []
    for k in range(1, len(digits)):
        if digits[k] == "0":
            continue
        trial = dict(stated, **{key: int(digits[:k])})
        split = [int(x) for x in (digits[k:] + split_tail).split("/") if x]
        if _fits(trial, split, gpus):
            readings.append((k, trial, split))
    if len(readings) != 1:
        what = "no" if not readings else "more than one"
        reading.problems.append(
            f"`{key}{digits}{split_tail}` has {what} reading where TP x PP x CP x DP = {gpus} "
            "GPUs and the layer split has PP x VPP entries"
        )
        return ""
    k, trial, _ = readings[0]
    stated.update(trial)
    reading.notes.append(
        f"`{key}{digits}{split_tail}` read as {key}{digits[:k]} and the layer split "
        f"{digits[k:]}{split_tail} (the only reading that fits {gpus} GPUs)"
    )
    return digits[k:] + tail


def _fits(stated: dict[str, int], split: list[int], gpus: int) -> bool:
    tp, pp, cp = stated.get("TP", 1), stated.get("PP", 1), stated.get("CP", 1)
    dp = stated.get("DP", gpus // (tp * pp * cp) if gpus % (tp * pp * cp) == 0 else 0)
    return tp * pp * cp * dp == gpus and len(split) == pp * stated.get("VPP", 1)


def _layout(stated: dict[str, int], gpus: int, reading: LayoutReading) -> dict[str, Any]:
    tp, pp, cp = stated.get("TP", 1), stated.get("PP", 1), stated.get("CP", 1)
    if "TP" not in stated or "PP" not in stated:
        reading.problems.append("the cell names no TP or no PP degree")
        return {}
    if "DP" not in stated:
        if gpus % (tp * pp * cp):
            reading.problems.append(f"no DP stated and {gpus} GPUs is not a multiple of TP x PP x CP = {tp * pp * cp}")
            return {}
        stated["DP"] = gpus // (tp * pp * cp)
        reading.notes.append(
            f"DP is not stated; DP{stated['DP']} follows from {gpus} GPUs = "
            f"TP{tp} x PP{pp}{f' x CP{cp}' if cp > 1 else ''} x DP{stated['DP']}"
        )
    return {k.lower(): stated[k] for k in _KEYS if k in stated}


_RECOMPUTE_SCOPE = {"moe": ["moe"], "moe_act": ["moe_act"], "attention and moe": ["attention", "moe"]}


def _read_phrases(rest: str, reading: LayoutReading) -> None:
    tuning, layout = reading.tuning, reading.layout
    for phrase in (p.strip() for p in rest.split(", ")):
        if not phrase:
            continue
        low = phrase.lower()
        m = re.fullmatch(r"max ([\d,]+) tokens/gpu", low)
        if m:
            tuning["max_tokens_per_gpu"] = int(m.group(1).replace(",", ""))
            continue
        if low == "no recompute":
            tuning["recompute"] = {"kind": "none"}
            continue
        if low in ("full recompute", "selective recompute"):
            tuning["recompute"] = {"kind": low.split()[0]}
            continue
        m = re.fullmatch(r"selective (moe|moe_act) recompute|selective recompute of (attention and moe)", low)
        if m:
            tuning["recompute"] = {"kind": "selective", "scope": _RECOMPUTE_SCOPE[m.group(1) or m.group(2)]}
            continue
        m = re.fullmatch(r"(block )?recompute(?: of)? (\d+) layers", low)
        if m:
            tuning["recompute"] = {"kind": "block", "layers": int(m.group(2))}
            if not m.group(1):
                reading.notes.append(
                    f"`{phrase}` read as block recompute of {m.group(2)} layers "
                    "(Megatron-Core's --recompute-method block --recompute-num-layers)"
                )
            continue
        if low == "no offload":
            tuning["optimizer_cpu_offload"] = 0.0
            continue
        m = re.fullmatch(r"cpu optimizer offload(?: \(fraction ([\d.]+)\)| ([\d.]+))?", low)
        if m:
            figure = m.group(1) or m.group(2)
            tuning["optimizer_cpu_offload"] = float(figure) if figure else DEFAULT_OFFLOAD_FRACTION
            if not figure:
                reading.notes.append(
                    "`CPU optimizer offload` gives no fraction: recorded as 1.0, Megatron-Core's "
                    "default --optimizer-offload-fraction (the whole optimizer state on the CPU)"
                )
            continue
        if low in ("adam on the gpu", "optimizer on gpu"):
            tuning["optimizer_on_gpu"] = True
            continue
        if low == "flex dispatcher":
            tuning["moe_dispatcher"] = "flex"
            continue
        if low == "cudnn fused sliding-window attention":
            tuning["attention_backend"] = "cudnn-fused-sliding-window"
            continue
        if low == "cudnn fused attention":
            tuning["attention_backend"] = "cudnn-fused"
            continue
        if low in ("expandable segments off", "allocator without expandable segments"):
            tuning["expandable_segments"] = False
            continue
        if low == "load-balancing loss off":
            tuning["load_balancing_loss"] = False
            continue
        if low == "one row per microbatch":
            tuning["rows_per_microbatch"] = 1
            continue
        m = re.fullmatch(r"(\d+(?:/\d+)+) layer split", low) or re.fullmatch(
            r"uneven pipeline split (\d+(?:/\d+)+)", low
        )
        if m:
            _set_split(layout, [int(x) for x in m.group(1).split("/")], phrase, reading)
            continue
        m = re.fullmatch(r"(v?pp) (\d+)(?: with uneven split (\d+(?:/\d+)+))?", low)
        if m:
            key = m.group(1)
            if layout.get(key, 1) != int(m.group(2)):
                reading.problems.append(f"`{phrase}` contradicts the layout's {key.upper()}{layout.get(key, 1)}")
            if m.group(3):
                _set_split(layout, [int(x) for x in m.group(3).split("/")], phrase, reading)
            continue
        reading.unread.append(phrase)


def _set_split(layout: dict[str, Any], split: list[int], phrase: str, reading: LayoutReading) -> None:
    if "layer_split" in layout and layout["layer_split"] != split:
        reading.problems.append(f"`{phrase}` gives a second, different layer split")
    layout["layer_split"] = split


def _check_layout(layout: dict[str, Any], gpus: int, layers: int | None, reading: LayoutReading) -> None:
    """Megatron-Core's rules (SPEC §6 ORV5xx) on the layout as read; a reading that breaks one is rejected."""
    tp, pp, vpp, cp = layout["tp"], layout["pp"], layout.get("vpp", 1), layout.get("cp", 1)
    ep, etp, dp = layout.get("ep", 1), layout.get("etp", 1), layout["dp"]
    if tp * pp * cp * dp != gpus:
        reading.problems.append(f"TP{tp} x PP{pp} x CP{cp} x DP{dp} = {tp * pp * cp * dp}, not the {gpus} GPUs")
    if (tp * cp * dp) % (ep * etp):
        reading.problems.append(f"EP{ep} x ETP{etp} does not divide TP x CP x DP = {tp * cp * dp}")
    if vpp > 1 and pp == 1:
        reading.problems.append("VPP > 1 needs PP > 1")
    split = layout.get("layer_split")
    if split is not None:
        if len(split) != pp * vpp:
            reading.problems.append(f"layer split {split} has {len(split)} entries, not PP x VPP = {pp * vpp}")
        if layers is None:
            reading.problems.append(f"the model has no layer count in {MODELS_PATH} to check the split against")
        elif sum(split) != layers:
            reading.problems.append(
                f"layer split {'/'.join(map(str, split))} sums to {sum(split)}, but the model "
                f"has {layers} layers ({MODELS_PATH})"
            )


# --------------------------------------------------------------------------- prices


@dataclass(frozen=True)
class PriceFit:
    gpu: str
    rows: int
    low: Decimal  # lowest price that reproduces every row under the page's rounding
    high: Decimal
    price: Decimal | None  # the fewest-decimals value in [low, high], nearest the middle


def fit_prices(rows: list[TableRow]) -> dict[str, PriceFit]:
    """Per GPU, the prices consistent with every row given the page rounds $/1M and tokens/s/GPU."""
    by_gpu: dict[str, list[TableRow]] = defaultdict(list)
    for row in rows:
        by_gpu[row.gpu].append(row)
    fits = {}
    for gpu, group in sorted(by_gpu.items()):
        half_cost, half_tok, k = COST_STEP / 2, TOKENS_STEP / 2, Decimal(3600) / Decimal(10**6)
        low = max(
            (Decimal(r.cells[5].lstrip("$").replace(",", "")) - half_cost)
            * k
            * (Decimal(r.cells[4].replace(",", "")) - half_tok)
            for r in group
        )
        high = min(
            (Decimal(r.cells[5].lstrip("$").replace(",", "")) + half_cost)
            * k
            * (Decimal(r.cells[4].replace(",", "")) + half_tok)
            for r in group
        )
        fits[gpu] = PriceFit(gpu, len(group), low, high, _simplest(low, high))
    return fits


def _simplest(low: Decimal, high: Decimal) -> Decimal | None:
    if low > high:
        return None
    middle = (low + high) / 2
    for places in range(0, 7):
        step = Decimal(1).scaleb(-places)
        first = (low / step).to_integral_value(rounding=ROUND_CEILING) * step
        candidates = []
        value = first
        while value <= high:
            candidates.append(value)
            value += step
        if candidates:
            return min(candidates, key=lambda v: (abs(v - middle), v))
    return None


def cost_per_million(price_per_gpu_hour: float, tokens_per_s_per_gpu: float) -> float:
    """science.physics.cost_per_1m for a row the importer prices: a price and a positive throughput."""
    cost = cost_per_1m(price_per_gpu_hour, tokens_per_s_per_gpu)
    assert cost is not None  # the importer prices only rows with both (fit_prices, the table's own rows)
    return cost


def agrees_with_page(recomputed: float, shown: float) -> bool:
    """Within 1% of the figure shown, or within the page's own rounding (half a cent) where 1% is less."""
    return abs(recomputed - shown) <= max(0.01 * shown, float(COST_STEP) / 2)


# --------------------------------------------------------------------------- the import


@dataclass
class _Planned:
    row: TableRow
    model_id: str
    gpu_id: str
    reading: LayoutReading
    recipe_id: str = ""


def import_leaderboard(root: str, source_path: str) -> ImportReport:
    source = read_source_file(source_path)
    catalog = load_catalog(root)
    if WORKLOAD not in catalog.workloads:
        raise ImportInputError(
            "ORV115",
            WORKLOADS_PATH,
            f"workload `{WORKLOAD}` is not in the catalog",
            "restore the SFT protocol entry from the main branch",
        )
    report = ImportReport(COMMAND, source.name, source.sha256)
    planned: list[_Planned] = []
    for line, text in source.unreadable:
        report.rejections.append(
            Rejection(f"line {line}", f"line {line}", (f"not a table row of 9 tab-separated cells: `{text[:80]}`",))
        )
    duplicates = _exact_duplicates(source.rows)
    for row in source.rows:
        if row.index in duplicates:
            continue
        planned_row = _plan_row(row, catalog, report)
        if planned_row:
            planned.append(planned_row)
    _reject_same_identity(planned, report)
    _assign_ids(planned)
    lacks: list[str] = []
    for p in planned:
        document = _recipe_document(p, source.name)
        body = yamlout.dump(document)
        text = generated_text(TRAINING_SCHEMA_LINE, COMMAND, source.name, body)
        path = recipe_path("training", p.model_id, p.recipe_id)
        report.files.append(write_generated(root, path, text, COMMAND, source.name))
        lacks.append(f"`{p.recipe_id}`: {document_lacks(root, document, path, 0)}")
    report.files += remove_stale(root, "recipes/training", {f.path for f in report.files}, COMMAND, source.name)
    points = _starting_points(source, catalog, report)
    body = yamlout.dump({"starting_points": points})
    report.files.append(
        write_generated(
            root,
            STARTING_POINTS_PATH,
            generated_text(STARTING_POINTS_SCHEMA_LINE, COMMAND, source.name, body),
            COMMAND,
            source.name,
        )
    )
    report.counts = {
        "rows read (Latest recipes table)": len(source.rows) + len(source.unreadable),
        "duplicates collapsed": len(duplicates),
        "recipes written": len(planned),
        "split": 0,
        "downgraded": 0,
        "rejected": len(report.rejections),
        f"starting points ({STARTING_POINTS_PATH})": len(points),
        "model cards read": len(source.cards),
    }
    _report_sections(report, source, catalog, planned)
    report.section(LACKS_TITLE, LACKS_INTRO).items += lacks
    return report


def _exact_duplicates(rows: list[TableRow]) -> set[int]:
    seen: set[tuple[str, ...]] = set()
    out = set()
    for row in rows:
        if row.cells in seen:
            out.add(row.index)
        seen.add(row.cells)
    return out


def _plan_row(row: TableRow, catalog: CatalogView, report: ImportReport) -> _Planned | None:
    where = f"Latest recipes row {row.index} (line {row.line})"
    subject = f"{row.model} / {row.gpu} / {row.layout_cell}"
    model_id, gpu_id = catalog.model_id(row.model), catalog.gpu_id(row.gpu)
    reasons = []
    if model_id is None:
        reasons.append(f"model `{row.model}` is not in {MODELS_PATH}")
    if gpu_id is None:
        reasons.append(f"GPU `{row.gpu}` is not in {HARDWARE_PATH}")
    if reasons:
        report.rejections.append(Rejection(subject, where, tuple(reasons)))
        return None
    assert model_id is not None and gpu_id is not None
    reading = read_layout_cell(row.layout_cell, row.gpus, catalog.models[model_id].layers)
    if reading.problems:
        report.rejections.append(Rejection(subject, where, tuple(reading.problems)))
        return None
    return _Planned(row, model_id, gpu_id, reading)


def _identity(p: _Planned) -> tuple[Any, ...]:
    return (p.model_id, p.gpu_id, p.row.gpus, repr(p.reading.layout), repr(sorted(p.reading.tuning.items())))


def _reject_same_identity(planned: list[_Planned], report: ImportReport) -> None:
    """Two rows with the same model, GPUs, layout and tuning would be one recipe claimed twice."""
    first: dict[tuple[Any, ...], _Planned] = {}
    for p in sorted(planned, key=lambda p: -p.row.index):  # oldest first keeps the original
        key = _identity(p)
        if key in first:
            report.rejections.append(
                Rejection(
                    f"{p.row.model} / {p.row.gpu} / {p.row.layout_cell}",
                    f"Latest recipes row {p.row.index}",
                    (
                        f"same model, GPUs, layout and tuning as row {first[key].row.index}: one configuration cannot "
                        "carry two claims",
                    ),
                )
            )
            planned.remove(p)
        else:
            first[key] = p


def _assign_ids(planned: list[_Planned]) -> None:
    """`<model>-<gpu>-<layout>`, `-2`, `-3` for later rows of the same layout (oldest row first, so a
    row added to the top of the table later never renames an existing recipe)."""
    used: Counter[str] = Counter()
    for p in sorted(planned, key=lambda p: (p.row.measured, -p.row.index)):
        layout = p.reading.layout
        parts = [f"{k}{layout[k]}" for k in ("tp", "pp", "vpp", "cp", "ep", "etp", "dp") if k in layout]
        base = f"{model_slug(p.model_id)}-{p.gpu_id}-{'-'.join(parts)}"[: MAX_ID - 3].strip("-")
        used[base] += 1
        p.recipe_id = base if used[base] == 1 else f"{base}-{used[base]}"


def _recipe_document(p: _Planned, source_name: str) -> dict[str, Any]:
    row = p.row
    notes = [
        f'Imported from seed 000\'s "Latest recipes" table, row {row.index}: rank {row.rank} for this model '
        f"and GPU, ${row.cells[5].lstrip('$')} per 1M tokens as published ($/1M is recomputed from "
        f"{HARDWARE_PATH}, never stored).",
        f'Layout cell as published: "{row.layout_cell}".',
        "The source states no software stack (its protocol, not the row, carried it): pin the framework "
        "to rise above T0.",
    ]
    notes += [f"Read: {n}." for n in p.reading.notes]
    notes += [f'Kept only here (no structured field): "{u}".' for u in p.reading.unread]
    doc: dict[str, Any] = {
        "id": p.recipe_id,
        "kind": "training",
        "model": p.model_id,
        "hardware": {"gpu": p.gpu_id, "count": row.gpus},
        "author": row.author,
        "measured": row.measured,
        "software": {},
        "workload": WORKLOAD,
        "layout": p.reading.layout,
    }
    if p.reading.tuning:
        doc["tuning"] = _ordered_tuning(p.reading.tuning)
    doc["claimed"] = {"tokens_per_s_per_gpu": row.tokens}
    doc["runs"] = []
    doc["notes"] = "\n".join(notes)
    doc["provenance"] = {
        "source": source_name,
        "row": row.index,
        "original": dict(
            zip(
                ("measured", "model", "gpu", "gpus", "tok_s_per_gpu", "cost_per_1m", "layout", "rank", "author"),
                row.cells,
            )
        ),
    }
    return doc


_TUNING_ORDER = (
    "max_tokens_per_gpu",
    "micro_batch_size",
    "rows_per_microbatch",
    "recompute",
    "optimizer_cpu_offload",
    "optimizer_on_gpu",
    "moe_dispatcher",
    "attention_backend",
    "expandable_segments",
    "load_balancing_loss",
)


def _ordered_tuning(tuning: dict[str, Any]) -> dict[str, Any]:
    return {k: tuning[k] for k in _TUNING_ORDER if k in tuning}


# --------------------------------------------------------------------------- cards: starting points, cross-checks


def _starting_points(source: Source, catalog: CatalogView, report: ImportReport) -> list[dict[str, Any]]:
    points = []
    for card in source.cards:
        model_id = catalog.model_id(card.model)
        for g in card.gpus:
            if g.start is None:
                continue
            gpu_id = catalog.gpu_id(g.gpu)
            if model_id is None or gpu_id is None:
                report.rejections.append(
                    Rejection(
                        f"starting point {card.model} / {g.gpu}", "model cards", ("model or GPU not in the catalog",)
                    )
                )
                continue
            points.append(
                {
                    "model": model_id,
                    "gpu": gpu_id,
                    "workload": WORKLOAD,
                    "tokens_per_s_per_gpu": g.start,
                    "source": f'{source.name}, model card {card.model}: "{g.start_text}"',
                    "notes": (
                        f"Untuned starting point as published, without a layout (so not a recipe); the card's best, "
                        f"{g.start_best}, is the fastest recipe for this pair (+{g.gain_pct}%)."
                    ),
                }
            )
    return points


def _report_sections(report: ImportReport, source: Source, catalog: CatalogView, planned: list[_Planned]) -> None:
    by_row = {p.row.index: p for p in planned}
    recipes = report.section(
        "Recipes",
        "One training recipe per table row: its id, the layout as read, the claim, and $/1M recomputed "
        "from the catalog's price next to the figure the page shows.",
    )
    for row in source.rows:
        p = by_row.get(row.index)
        if p is None:
            continue
        price = catalog.hardware[p.gpu_id].price_per_gpu_hour
        recomputed = cost_per_million(price, row.tokens) if price else None
        shown = row.cost
        cost = (
            f"${recomputed:.4f} vs ${shown:.2f} shown ({(recomputed - shown) / shown * 100:+.2f}%)"
            if recomputed is not None
            else "no catalog price"
        )
        recipes.items.append(
            f"row {row.index}: `{p.recipe_id}` — {_display(p.reading.layout)}, "
            f"{row.tokens:g} tok/s/GPU on {row.gpus} {row.gpu}; {cost}"
        )
    interp = report.section(
        "Interpretations", "Where a cell needed judgement, what was decided (also in each recipe's notes)."
    )
    for p in sorted(planned, key=lambda p: p.row.index):
        for note in p.reading.notes:
            interp.items.append(f"row {p.row.index} `{p.recipe_id}`: {note}")
        for phrase in p.reading.unread:
            interp.items.append(f'row {p.row.index} `{p.recipe_id}`: "{phrase}" has no structured field; kept in notes')
    interp.items.append(
        '"no offload" is recorded as optimizer_cpu_offload 0.0; "Adam on the GPU" / "optimizer on '
        'GPU" as optimizer_on_gpu true; "one row per microbatch" as rows_per_microbatch 1.'
    )
    interp.items.append(
        "Every recipe has `software: {}` and legacy provenance: the page never recorded a stack, so "
        "the recipes stay at T0 with a missing-pin warning until a contributor pins one."
    )
    _price_section(report, source, catalog)
    _cross_checks(report, source, catalog, planned)


def _display(layout: dict[str, Any]) -> str:
    parts = [f"{k.upper()}{layout[k]}" for k in ("tp", "pp", "vpp", "cp", "ep", "etp", "dp") if k in layout]
    split = layout.get("layer_split")
    return " ".join(parts) + (f" split {'/'.join(map(str, split))}" if split else "")


def _price_section(report: ImportReport, source: Source, catalog: CatalogView) -> None:
    section = report.section(
        "Prices",
        "Seed 000 shows $/1M to the cent and tokens/s/GPU to 0.1. For each GPU, [low, high] is the range of "
        "prices per GPU-hour that reproduce every row under both roundings; the catalog records the value with the "
        "fewest decimals in it. Agreement is checked as |recomputed - shown| <= max(1% of shown, $0.005): for figures "
        "under $0.50 the page's own cent rounding is wider than 1%, and no single price can bring every such row "
        "within a literal 1% (e.g. H200 rows 23 and 53 need a price >= 7.927 and <= 7.901 respectively).",
    )
    for gpu, fit in fit_prices(source.rows).items():
        gpu_id = catalog.gpu_id(gpu)
        catalog_price = catalog.hardware[gpu_id].price_per_gpu_hour if gpu_id else None
        rows = [r for r in source.rows if r.gpu == gpu]
        errors = [(cost_per_million(catalog_price, r.tokens) - r.cost) / r.cost for r in rows] if catalog_price else []
        outside_1pct = [r.index for r, e in zip(rows, errors) if abs(e) > 0.01]
        disagree = [
            r.index
            for r in rows
            if catalog_price and not agrees_with_page(cost_per_million(catalog_price, r.tokens), r.cost)
        ]
        derived = f"{fit.price}" if fit.price is not None else "none (the rows are inconsistent)"
        line = (
            f"{gpu}: {fit.rows} rows, consistent prices [{fit.low:.4f}, {fit.high:.4f}] $/GPU-hour, derived "
            f"{derived}, catalog {catalog_price}"
        )
        if errors:
            worst = max(abs(e) for e in errors) * 100
            line += (
                f"; recomputed $/1M within {worst:.2f}% of the page at worst; rows beyond 1% "
                f"(all within the page's cent rounding): {outside_1pct or 'none'}"
            )
        if disagree:
            line += f"; DISAGREE beyond rounding: rows {disagree}"
        if fit.price is not None and catalog_price is not None and float(fit.price) != catalog_price:
            line += f"; CATALOG PRICE DIFFERS from the derived {fit.price}"
        section.items.append(line)


def _cross_checks(report: ImportReport, source: Source, catalog: CatalogView, planned: list[_Planned]) -> None:
    """The page states several things twice; every restatement is compared, and every difference listed."""
    section = report.section(
        "Cross-checks",
        "Model cards against the table and the catalog, ranks against "
        "tokens/s/GPU, layer splits against layer counts. Only differences are listed.",
    )
    checked = 0
    rows_by_model: dict[str, list[TableRow]] = defaultdict(list)
    for row in source.rows:
        rows_by_model[row.model].append(row)
    for card in source.cards:
        model_id = catalog.model_id(card.model)
        checked += 1
        if model_id is None:
            section.items.append(f"card {card.model}: not in {MODELS_PATH}")
            continue
        spec = catalog.models[model_id]
        for field_name, card_value, cat_value in (
            ("family", card.family, spec.family),
            ("params_b", card.params_b, spec.params_b),
            ("active_b", card.active_b, spec.active_b),
        ):
            checked += 1
            if card_value is not None and card_value != cat_value:
                section.items.append(f"card {card.model}: {field_name} {card_value} vs catalog {cat_value}")
        rows = rows_by_model.get(card.model, [])
        checked += 2
        if card.count != len(rows):
            section.items.append(f"card {card.model}: says {card.count} recipes, the table has {len(rows)}")
        if rows and card.newest != max(r.measured for r in rows):
            newest = max(r.measured for r in rows)
            section.items.append(f"card {card.model}: newest {card.newest}, table's newest {newest}")
        for g in card.gpus:
            pair = [r for r in rows if r.gpu == g.gpu]
            checked += 1
            if g.tokens is None:
                if pair:
                    section.items.append(f"card {card.model} / {g.gpu}: 'No recipe yet' but the table has {len(pair)}")
                continue
            best = max(pair, key=lambda r: r.tokens, default=None)
            if best is None or (best.tokens, best.gpus, best.cost) != (g.tokens, g.gpus, g.cost):
                section.items.append(
                    f"card {card.model} / {g.gpu}: {g.tokens} x{g.gpus} ${g.cost} is not the "
                    "table's fastest row for the pair"
                )
            if g.start is not None:
                checked += 1
                gain = round((g.tokens / g.start - 1) * 100)
                if g.start_best != g.tokens or gain != g.gain_pct:
                    section.items.append(
                        f"card {card.model} / {g.gpu}: starting point {g.start} -> {g.start_best} "
                        f"+{g.gain_pct}% but best is {g.tokens} (+{gain}%)"
                    )
    pairs: dict[tuple[str, str], list[TableRow]] = defaultdict(list)
    for row in source.rows:
        pairs[(row.model, row.gpu)].append(row)
    for (model, gpu), rows in sorted(pairs.items()):
        ordered = sorted(rows, key=lambda r: -r.tokens)
        for k, row in enumerate(ordered, 1):
            checked += 1
            if row.rank != f"#{k} of {len(rows)}":
                section.items.append(
                    f"row {row.index} ({model} / {gpu}): rank `{row.rank}`, but it is #{k} of "
                    f"{len(rows)} by tokens/s/GPU"
                )
    for name in source.wanted:
        checked += 1
        if catalog.model_id(name) is None:
            section.items.append(f"wanted model {name}: not in {MODELS_PATH}")
    section.intro += f" {checked} comparisons made."

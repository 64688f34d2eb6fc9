"""The boards on disk: a small index plus one file per model, for the gate and for every reader.

One boards document (build.py) is what every reader works with. SPEC §1 and §7 make the combined document
(seed 004's shape) the readers' contract, but it is never committed: at 100,000 recipes it would be ~244 MB,
past GitHub's 100 MB limit for a file, and every merge would rewrite it. The boards workflow assembles it
from the split files (`orv boards --combined OUT`, `read_boards`) and publishes it with the site. What is
committed is the same document stored split, each file bounded by what one model holds:

- boards/index.json: `format`, `meta` (the git stamp, counts, tiers, rounding), `wanted.models`
  (catalog models with no training recipe: bounded by the catalog) and `model_files` (the ids of
  the models that have a file);
- boards/models/<model-id>.json and boards/models/<model-id>/<i>.json: everything keyed by that model (its
  rows of each board, its `models` entry, its `frontiers` groups, its `runs`, and its items of
  `wanted.references`, `wanted.reproductions` and `wanted.quality`) as a manifest (what belongs to the
  model as a whole, and its chunk count) and chunks (the rows, runs and wanted items by a hash of their
  key, rows without `rank`/`rank_of`), so no file grows with the model and a merge rewrites the chunks it
  changed (`stored`, `unstored`);
- boards/standings/<model-id>.json: what the gate's summary reads of a model (`standing`): per board and
  model × GPU × workload group, each entry's recipe, tier and the figures its rank is computed from, plus
  the model's `models` entry and `frontiers`. Derived from the model's part (so it cannot disagree with
  it) and ~30x smaller: at 100,000 run files a one-recipe pull request read a 142 MB part for the ranks
  of one group (issue 32).

A boards/boards.json left in a working tree (committed before the document left git) is a generated
file no regeneration writes: `orv boards` removes it and ORV701 names it; nothing reads it. Of the split
files, a merge that adds one recipe rewrites its model's manifest, the chunk of its row,
its standings and the index (whose stamp and counts move with every data commit), nothing else; bench/merge_bytes.py measures the bytes that adds to git
history. `split` and `assemble` are inverses: every list of the document is sorted by model first,
or is re-sorted here by the document's own key (runs by digest, wanted items by kind and recipe),
so `render(assemble(split(d)))` is `render(d)` byte for byte (tests/unit/test_boards.py holds it).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import orjson

from validator.boards.build import inference_order, rank_inference, rank_training, render, training_order
from validator.errors import Refusal
from validator.git.partial import check_out_files
from validator.registry.layout import BOARDS_MODELS_DIR, BOARDS_PATH, BOARDS_STANDINGS_DIR, DOCUMENT_PATH

FORMAT = 1
STANDINGS_FORMAT = 1
PART_FORMAT = 2  # a model's manifest and its chunks (format 1 was the whole part in one file)
# A model's rows and runs are stored in 2^k chunks, k the least with items <= CHUNK_ITEMS * 2^k, so a chunk
# averages between a half and the whole of CHUNK_ITEMS (~1.7 KB an item in the bench's registries: under
# 1 MB a chunk, however large the model) and a merge rewrites the chunk(s) of what it changed, not its model
CHUNK_ITEMS = 512
RANKS = ("rank", "rank_of")  # never stored in a chunk: they follow from the figures (restored by `unstored`)
# What a model's `models` entries read of a training row (build.model_entries) that its standing does not
# keep: the manifest lists them per training row, so a merge's update recomputes the entries without
# reading every chunk
TRAINING_EXTRAS = ("gpus", "baseline", "measured", "path")
BOARD_NAMES = ("measured", "claimed", "training")
# board -> the row fields a standing keeps: the figure its rank is by, then (inference) the one a group without
# it ranks by (build.rank_inference, build._ranks), then what the summary's tables show beside them
SHOWN = {
    "training": ("tok_s_per_gpu", "cost_per_1m", "mfu", "claimed_tok_s_per_gpu"),
    "measured": ("decode_tok_s", "prefill_tok_s", "ttft_ms"),
    "claimed": ("claimed_tok_s", "claimed_prefill_tok_s", "claimed_ttft_ms"),
}
_GROUP_FIELDS = ("model", "model_name", "gpu", "workload", "workload_label")
_SAFE_ID = re.compile(r"^[a-z0-9]+([.-][a-z0-9]+)*$")  # common.schema.json's catalogId: a safe file name

Reader = Callable[[str], bytes | None]  # registry-relative path -> bytes, None when absent


class BoardsUnreadable(Refusal):
    """The committed boards cannot be assembled: a malformed index or a listed model file missing or malformed."""


def model_path(model: str) -> str:
    """The file a model's part of the boards lives in. Model ids are catalog ids (schema-checked), so the
    id is the name; anything else gets a name by hash, never a path outside boards/models/."""
    name = model if _SAFE_ID.match(model) else "_" + hashlib.sha256(model.encode()).hexdigest()[:16]
    return f"{BOARDS_MODELS_DIR}/{name}.json"


def standings_path(model: str) -> str:
    """The file of a model's standings: named as its part is (model_path), in boards/standings/."""
    return BOARDS_STANDINGS_DIR + model_path(model)[len(BOARDS_MODELS_DIR) :]


def chunk_path(model: str, index: int) -> str:
    """The file of a model's chunk `index`: boards/models/<model>/<index>.json, beside its manifest."""
    return f"{model_path(model)[: -len('.json')]}/{index}.json"


def chunk_count(items: int) -> int:
    """How many chunks a model of `items` rows and runs is stored in: the least power of two with at most
    CHUNK_ITEMS items a chunk on average. A function of the model's size alone, so a regeneration and a
    merge's update agree; it doubles (every chunk rewritten) only when the model doubles."""
    count = 1
    while items > CHUNK_ITEMS * count:
        count *= 2
    return count


def chunk_of(key: str, count: int) -> int:
    """The chunk of a row, a wanted item (by recipe id) or a run (by content hash) among `count` chunks: the
    leading bits of the key's SHA-256, so when the count doubles chunk i splits into 2i and 2i + 1."""
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest()[:4], "big") * count >> 32


def _part_items(part: Mapping[str, Any]) -> int:
    return sum(len(part["boards"][name]) for name in BOARD_NAMES) + len(part["runs"])


def stored(
    part: Mapping[str, Any],
    count: int | None = None,
    items: int | None = None,
    training: Iterable[Mapping[str, Any]] | None = None,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A model's part as it is stored: (manifest, chunks). The manifest holds what belongs to the model as a
    whole (its `models` entries, `frontiers`, `wanted.references`), its chunk count and item count, and per
    training row what its `models` entries read beyond the standing (TRAINING_EXTRAS); each chunk the rows,
    runs and wanted items whose key falls in it (chunk_of), in the part's order, rows without `rank` and
    `rank_of` (one row more in a group changes every row's `rank_of`: stored, every chunk would move).
    `count`, `items` and the `training` rows are the part's own unless given (a merge's update holds only the
    rows and runs of the chunks it rewrites, and its standing's entries for the others)."""
    model = part["model"]
    items = _part_items(part) if items is None else items
    count = chunk_count(items) if count is None else count
    chunks = [_empty_chunk(model, index) for index in range(count)]
    for name in BOARD_NAMES:
        for row in part["boards"][name]:
            kept = {key: value for key, value in row.items() if key not in RANKS}
            chunks[chunk_of(row["recipe"], count)]["boards"][name].append(kept)
    for run in part["runs"]:
        chunks[chunk_of(run["content_hash"], count)]["runs"].append(run)
    for kind in ("reproductions", "quality"):
        for item in part["wanted"][kind]:
            chunks[chunk_of(item["recipe"], count)]["wanted"][kind].append(item)
    training = sorted(part["boards"]["training"] if training is None else training, key=lambda row: row["recipe"])
    manifest = {
        "format": PART_FORMAT,
        "model": model,
        "chunks": count,
        "items": items,
        "training": [_training_fields(row) for row in training],
        "models": part["models"],
        "frontiers": part["frontiers"],
        "wanted": {"references": part["wanted"]["references"]},
    }
    return manifest, chunks


def _training_fields(row: Mapping[str, Any]) -> list[Any]:
    """A training row's entry in its manifest: [recipe, *TRAINING_EXTRAS], the path only for a `baseline` row
    (a `models` entry reads it as its starting point's source, of no other row): ~60 bytes less a row."""
    return [row["recipe"], row["gpus"], row["baseline"], row["measured"], row["path"] if row["baseline"] else None]


def _empty_chunk(model: str, index: int) -> dict[str, Any]:
    return {
        "format": PART_FORMAT,
        "model": model,
        "chunk": index,
        "boards": {name: [] for name in BOARD_NAMES},
        "runs": [],
        "wanted": {"reproductions": [], "quality": []},
    }


def unstored(manifest: Mapping[str, Any], chunks: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A model's part from its manifest and chunks (`stored`'s inverse): rows ranked in their groups as a
    full build ranks them (build.rank_training, build.rank_inference) and every list in the document's order.
    Raises BoardsUnreadable when a row lacks what ranking or ordering reads."""
    chunks = list(chunks)
    boards = {name: [dict(row) for c in chunks for row in c["boards"][name]] for name in BOARD_NAMES}
    try:
        rank_training(boards["training"])
        rank_inference(boards["measured"], "decode_tok_s")
        rank_inference(boards["claimed"], "claimed_tok_s")
        boards["training"].sort(key=training_order)
        boards["measured"].sort(key=inference_order)
        boards["claimed"].sort(key=inference_order)
        runs = sorted((run for c in chunks for run in c["runs"]), key=lambda run: run["content_hash"])
        wanted = {
            "references": manifest["wanted"]["references"],
            "reproductions": sorted(
                (i for c in chunks for i in c["wanted"]["reproductions"]), key=lambda i: (i["kind"], i["recipe"])
            ),
            "quality": sorted((i for c in chunks for i in c["wanted"]["quality"]), key=lambda i: i["recipe"]),
        }
    except (KeyError, TypeError, AttributeError) as exc:
        raise BoardsUnreadable(
            f"the chunks of {model_path(manifest['model'])} hold a malformed row ({exc!r})"
        ) from None
    return {
        "model": manifest["model"],
        "boards": boards,
        "models": manifest["models"],
        "frontiers": manifest["frontiers"],
        "runs": runs,
        "wanted": wanted,
    }


def standing(part: Mapping[str, Any]) -> dict[str, Any]:
    """What the pull-request summary reads of a model, from its part: per board, each model × GPU × workload
    group (with its display names, in the part's order) and its entries by recipe id, each as [recipe, tier, tier reasons
    (indices into `reasons`), quality (an index into `qualities`, or null), the SHOWN figures...]; the model's
    `models` entries and `frontiers` as they are. Ranks are not stored: they follow from the figures and the
    quality (a row `below` its quality bound has none). Reasons and quality records repeat across a model's
    entries, so each is stored once."""
    reasons: dict[str, int] = {}
    qualities: dict[bytes, int] = {}
    quality_list: list[Any] = []

    def quality_id(quality: Any) -> int | None:
        if quality is None:
            return None
        key = orjson.dumps(quality, option=orjson.OPT_SORT_KEYS)
        if key not in qualities:
            qualities[key] = len(quality_list)
            quality_list.append(quality)
        return qualities[key]

    boards: dict[str, list[dict[str, Any]]] = {}
    for name in BOARD_NAMES:
        groups: dict[tuple[Any, ...], dict[str, Any]] = {}
        for row in part["boards"][name]:  # groups in the part's order
            key = (row.get("model"), row.get("gpu"), row.get("workload"))
            if key not in groups:
                groups[key] = {**{f: row.get(f) for f in _GROUP_FIELDS}, "entries": []}
        # entries by recipe id within a group, not in the part's order (inference rows are sorted by fields a
        # standing does not keep): a merge's update derives the standing from the standing it read (update.py)
        for row in sorted(part["boards"][name], key=lambda row: str(row["recipe"])):
            group = groups[(row.get("model"), row.get("gpu"), row.get("workload"))]
            group["entries"].append(
                [
                    row["recipe"],
                    row.get("tier"),
                    [reasons.setdefault(str(r), len(reasons)) for r in row.get("tier_reasons") or ()],
                    quality_id(row.get("quality")),
                    *(row.get(f) for f in SHOWN[name]),
                ]
            )
        boards[name] = list(groups.values())
    return {
        "format": STANDINGS_FORMAT,
        "model": part["model"],
        "reasons": list(reasons),
        "qualities": quality_list,
        "boards": boards,
        "models": part["models"],
        "frontiers": part["frontiers"],
    }


def render_standing(found: Mapping[str, Any]) -> bytes:
    """A standing's bytes: JSON with one entry (and one reason, quality record, frontier group, models entry)
    per line, so a merge that moves one entry changes one line, and ~2.5x smaller than two-space indenting
    every list item (10.9 MB against ~4.4 MB for the bench's largest model at 100,000 run files). Each line's
    value is json.dumps's, as in every boards file (build.render)."""

    def one(value: Any) -> str:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, allow_nan=False)

    def block(items: list[Any], pad: str, line: Callable[[Any], str] = one) -> str:
        return "[]" if not items else "[\n" + ",\n".join(pad + line(item) for item in items) + "\n" + pad[:-2] + "]"

    def group(g: Mapping[str, Any]) -> str:
        head = ", ".join(f"{one(field)}: {one(g[field])}" for field in _GROUP_FIELDS)
        return "{" + head + ', "entries": ' + block(g["entries"], " " * 8) + "}"

    boards = ",\n".join(f"    {one(name)}: {block(found['boards'][name], ' ' * 6, group)}" for name in BOARD_NAMES)
    lines = [
        "{",
        f'  "format": {one(found["format"])},',
        f'  "model": {one(found["model"])},',
        '  "boards": {',
        boards,
        "  },",
    ]
    lines += [
        f'  "{key}": {block(found[key], "    ")}{"," if key != "frontiers" else ""}'
        for key in ("reasons", "qualities", "models", "frontiers")
    ]
    return ("\n".join(lines) + "\n}\n").encode("utf-8")


def standing_rows(standings: Mapping[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Each board's entries of a standing as board rows with what ranks them and what the summary's tables
    show of an entry (group, tier and reasons, quality, figures); `rank`/`rank_of` are the caller's to compute."""
    reasons, qualities = standings["reasons"], standings["qualities"]
    out: dict[str, list[dict[str, Any]]] = {}
    for name in BOARD_NAMES:
        rows = out[name] = []
        for group in standings["boards"][name]:
            where = {f: group.get(f) for f in _GROUP_FIELDS}
            for recipe, tier, reason_ids, quality, *figures in group["entries"]:
                row = {
                    "recipe": recipe,
                    **where,
                    "tier": tier,
                    "tier_reasons": [reasons[i] for i in reason_ids],
                    **dict(zip(SHOWN[name], figures)),
                }
                if name != "training":
                    row["quality"] = None if quality is None else qualities[quality]
                rows.append(row)
    return out


def _empty_part(model: str) -> dict[str, Any]:
    return {
        "model": model,
        "boards": {name: [] for name in BOARD_NAMES},
        "models": [],
        "frontiers": [],
        "runs": [],
        "wanted": {"references": [], "reproductions": [], "quality": []},
    }


def parts_of(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The document's parts: {model: everything keyed by that model}, each list in the document's order."""
    parts: dict[str, dict[str, Any]] = {}

    def part(model: str) -> dict[str, Any]:
        return parts.setdefault(model, _empty_part(model))

    owner: dict[tuple[str, str], str] = {}  # (kind, recipe id) -> model, for the wanted items
    for name in BOARD_NAMES:
        kind = "training" if name == "training" else "inference"
        for row in document["boards"].get(name, ()):
            part(row["model"])["boards"][name].append(row)
            owner.setdefault((kind, row["recipe"]), row["model"])
    for entry in document["models"]:
        part(entry["model"])["models"].append(entry)
    for group in document["frontiers"]:
        part(group["model"])["frontiers"].append(group)
    for run in document["runs"]:
        part(run["model"])["runs"].append(run)
    wanted = document["wanted"]
    for item in wanted["references"]:  # by model × workload (build.wanted_references)
        part(item["model"])["wanted"]["references"].append(item)
    for item in wanted["reproductions"]:
        part(_owner(owner, item["kind"], item["recipe"]))["wanted"]["reproductions"].append(item)
    for item in wanted["quality"]:
        part(_owner(owner, "inference", item["recipe"]))["wanted"]["quality"].append(item)
    return parts


def index_of(document: Mapping[str, Any], models: Iterable[str]) -> dict[str, Any]:
    """The boards index of a document whose parts are those of `models`."""
    return {
        "format": FORMAT,
        "meta": document["meta"],
        "wanted": {"models": document["wanted"]["models"]},
        "model_files": sorted(models),
    }


def split(document: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The document as files: {path: content}, the index at BOARDS_PATH and per model its manifest, chunks
    (`stored`) and standings."""
    parts = parts_of(document)
    files: dict[str, dict[str, Any]] = {BOARDS_PATH: index_of(document, parts)}
    expected = 1
    for model, content in parts.items():
        manifest, chunks = stored(content)
        files[model_path(model)] = manifest
        files.update((chunk_path(model, i), chunk) for i, chunk in enumerate(chunks))
        files[standings_path(model)] = standing(content)
        expected += 2 + len(chunks)
    if len(files) != expected:  # two ids hashed to one name: orv's bug, never written
        raise RuntimeError("two models' boards would share one file")
    return files


def _owner(owner: Mapping[tuple[str, str], str], kind: str, recipe: str) -> str:
    model = owner.get((kind, recipe))
    if model is None:  # every wanted item comes from a row (build._wanted): orv's bug, never written
        raise RuntimeError(f"wanted item for {kind} recipe {recipe!r} has no row on the boards")
    return model


def split_files(document: Mapping[str, Any]) -> dict[str, bytes]:
    """The bytes `orv boards` writes: {path: bytes}: the index and model files, and the models' standings
    the pull-request gate reads. Never the combined document (`orv boards --combined` assembles it)."""
    return {
        path: render_standing(content) if path.startswith(BOARDS_STANDINGS_DIR + "/") else render(content)
        for path, content in split(document).items()
    }


def assemble(index: Mapping[str, Any], parts: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The boards document from the index and model parts (all of them: the document `orv boards` built;
    some of them: that document restricted to those models, as the pull-request summary reads it)."""
    ordered = sorted(parts, key=lambda p: p["model"])
    boards = {name: [row for p in ordered for row in p["boards"][name]] for name in BOARD_NAMES}
    wanted = {
        "models": index["wanted"]["models"],
        "references": [item for p in ordered for item in p["wanted"]["references"]],
        "reproductions": sorted(
            (i for p in ordered for i in p["wanted"]["reproductions"]), key=lambda item: (item["kind"], item["recipe"])
        ),
        "quality": sorted((i for p in ordered for i in p["wanted"]["quality"]), key=lambda item: item["recipe"]),
    }
    return {
        "meta": index["meta"],
        "boards": boards,
        "models": [entry for p in ordered for entry in p["models"]],
        "frontiers": [group for p in ordered for group in p["frontiers"]],
        "runs": sorted((run for p in ordered for run in p["runs"]), key=lambda run: run["content_hash"]),
        "wanted": wanted,
    }


def _json(raw: bytes, path: str) -> Any:
    """A split file's JSON; BoardsUnreadable naming the file when it is not JSON."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise BoardsUnreadable(f"{path} is not JSON ({exc})") from None


def read_index(raw: bytes | None) -> dict[str, Any] | None:
    """The index from its bytes; None when absent. Raises BoardsUnreadable when malformed."""
    if raw is None:
        return None
    index = _json(raw, BOARDS_PATH)
    if (
        not isinstance(index, dict)
        or index.get("format") != FORMAT
        or not isinstance(index.get("meta"), dict)
        or not isinstance(index.get("wanted"), dict)
        or not isinstance(index["wanted"].get("models"), list)
        or not isinstance(index.get("model_files"), list)
        or not all(isinstance(m, str) for m in index["model_files"])
    ):
        raise BoardsUnreadable(f"{BOARDS_PATH} is not a boards index of format {FORMAT}")
    return index


def read_manifest(read: Reader, model: str) -> dict[str, Any] | None:
    """A model's manifest, None when the file is absent. Raises BoardsUnreadable when malformed."""
    path = model_path(model)
    raw = read(path)
    if raw is None:
        return None
    manifest = _json(raw, path)
    if not _is_manifest(manifest, model):
        raise BoardsUnreadable(f"{path} is not the boards manifest of model {model!r} in format {PART_FORMAT}")
    return manifest


def read_chunk(read: Reader, model: str, index: int) -> dict[str, Any]:
    """A model's chunk `index` (its manifest lists it). Raises BoardsUnreadable when missing or malformed."""
    path = chunk_path(model, index)
    raw = read(path)
    if raw is None:
        raise BoardsUnreadable(f"{model_path(model)} lists {path}, which is missing")
    chunk = _json(raw, path)
    if not _is_chunk(chunk, model, index):
        raise BoardsUnreadable(f"{path} is not chunk {index} of model {model!r} in format {PART_FORMAT}")
    return chunk


def read_part(read: Reader, model: str) -> dict[str, Any] | None:
    """One model's part (its manifest and every chunk, `unstored`), None when the manifest is absent. Raises
    BoardsUnreadable when a file is malformed or a listed chunk missing."""
    manifest = read_manifest(read, model)
    if manifest is None:
        return None
    return unstored(manifest, (read_chunk(read, model, i) for i in range(manifest["chunks"])))


def chunk_paths(read: Reader, models: Iterable[str]) -> list[str]:
    """The chunk files the manifests of `models` list (a model without a readable manifest: none), for a
    sparse checkout to materialize before reading them."""
    out = []
    for model in sorted(set(models)):
        try:
            manifest = read_manifest(read, model)
        except BoardsUnreadable:
            continue
        if manifest is not None:
            out += [chunk_path(model, i) for i in range(manifest["chunks"])]
    return out


def read_standing(read: Reader, model: str) -> dict[str, Any] | None:
    """A model's standings; derived from its part when the base has no standings file (boards written
    before standings existed); None when neither exists. Raises BoardsUnreadable when malformed."""
    path = standings_path(model)
    raw = read(path)
    if raw is None:
        part = read_part(read, model)
        return standing(part) if part is not None else None
    found = _json(raw, path)
    if not _is_standing(found, model):
        raise BoardsUnreadable(f"{path} is not the standings of model {model!r} in format {STANDINGS_FORMAT}")
    return found


def _is_standing(found: Any, model: str) -> bool:
    """Has it the shape standing_rows reads?"""
    if not isinstance(found, dict) or found.get("format") != STANDINGS_FORMAT or found.get("model") != model:
        return False
    reasons, qualities, boards = found.get("reasons"), found.get("qualities"), found.get("boards")
    if not (
        isinstance(reasons, list)
        and all(isinstance(r, str) for r in reasons)
        and isinstance(qualities, list)
        and all(isinstance(q, dict) for q in qualities)
        and isinstance(boards, dict)
        and set(boards) == set(BOARD_NAMES)
    ):
        return False

    def entries_ok(entries: Any, name: str) -> bool:
        """Column by column (a large model's standings hold ~50,000 entries: 0.3 s entry by entry)."""
        width = 4 + len(SHOWN[name])
        if not isinstance(entries, list) or not all(type(e) is list and len(e) == width for e in entries):
            return False
        if not entries:
            return True
        recipes, tiers, reason_ids, quality, *figures = zip(*entries)
        ids = [i for each in reason_ids if type(each) is list for i in each]
        quality_ids = [q for q in quality if q is not None]
        return (
            {type(v) for v in recipes} == {str}
            and {type(v) for v in tiers} <= {str, type(None)}
            and {type(v) for v in reason_ids} == {list}
            and {type(i) for i in ids} <= {int}
            and (not ids or (min(ids) >= 0 and max(ids) < len(reasons)))
            and {type(q) for q in quality_ids} <= {int}
            and (not quality_ids or (min(quality_ids) >= 0 and max(quality_ids) < len(qualities)))
            and all({type(v) for v in column} <= {int, float, type(None)} for column in figures)
        )

    return (
        all(
            isinstance(groups, list) and all(isinstance(g, dict) and entries_ok(g.get("entries"), name) for g in groups)
            for name, groups in boards.items()
        )
        and isinstance(found.get("models"), list)
        and all(isinstance(m, dict) for m in found["models"])
        and isinstance(found.get("frontiers"), list)
        and all(isinstance(g, dict) for g in found["frontiers"])
    )


def _rows(value: Any, *keys: str) -> bool:
    return isinstance(value, list) and all(
        isinstance(row, dict) and all(isinstance(row.get(key), str) for key in keys) for row in value
    )


# board -> the figures its ranks are restored from (build.rank_training, build.rank_inference): numbers, or
# null where a row may lack one (an inference group without decode figures ranks by prefill)
RANKED_BY = {
    "training": ("tok_s_per_gpu",),
    "measured": ("decode_tok_s", "prefill_tok_s"),
    "claimed": ("claimed_tok_s", "claimed_prefill_tok_s"),
}


def _figures(rows: list[dict[str, Any]], fields: tuple[str, ...]) -> bool:
    allowed = {int, float} if fields == RANKED_BY["training"] else {int, float, type(None)}
    return all(type(row.get(field)) in allowed for row in rows for field in fields)


def _is_manifest(manifest: Any, model: str) -> bool:
    """Has the manifest the shape `unstored` and a merge's update read (the schema checks the assembled
    document's rows)?"""
    keys = {"format", "model", "chunks", "items", "training", "models", "frontiers", "wanted"}
    if not isinstance(manifest, dict) or set(manifest) != keys:
        return False
    count, training = manifest["chunks"], manifest["training"]
    return (
        manifest["format"] == PART_FORMAT
        and manifest["model"] == model
        and type(count) is int
        and 1 <= count <= 1 << 20
        and count & (count - 1) == 0
        and type(manifest["items"]) is int
        and manifest["items"] >= 0
        and isinstance(training, list)
        and all(
            type(t) is list
            and len(t) == 1 + len(TRAINING_EXTRAS)
            and isinstance(t[0], str)
            and (isinstance(t[-1], str) or (t[-1] is None and t[2] is False))
            for t in training
        )
        and _rows(manifest["models"])
        and _rows(manifest["frontiers"])
        and isinstance(manifest["wanted"], dict)
        and set(manifest["wanted"]) == {"references"}
        and _rows(manifest["wanted"]["references"], "model")
    )


def _is_chunk(chunk: Any, model: str, index: int) -> bool:
    """Has the chunk the shape `unstored` reads?"""
    if not isinstance(chunk, dict) or set(chunk) != set(_empty_chunk(model, index)):
        return False
    boards, wanted = chunk["boards"], chunk["wanted"]
    return (
        chunk["format"] == PART_FORMAT
        and chunk["model"] == model
        and chunk["chunk"] == index
        and isinstance(boards, dict)
        and set(boards) == set(BOARD_NAMES)
        and all(_rows(boards[name], "recipe", "model", "gpu") for name in BOARD_NAMES)
        and all(_figures(boards[name], RANKED_BY[name]) for name in BOARD_NAMES)
        and _rows(chunk["runs"], "content_hash")
        and isinstance(wanted, dict)
        and set(wanted) == {"reproductions", "quality"}
        and _rows(wanted["reproductions"], "kind", "recipe")
        and _rows(wanted["quality"], "recipe")
    )


def read_document(read: Reader, models: Iterable[str] | None = None) -> dict[str, Any] | None:
    """The boards document through `read`: every model's part, or only `models`' (those the index lists).
    None when there is no index (a registry that publishes no boards); BoardsUnreadable when the files are
    malformed or a listed part is missing. A boards/boards.json beside them is never read."""
    index = read_index(read(BOARDS_PATH))
    if index is None:
        return None
    listed = index["model_files"]
    wanted = listed if models is None else sorted(set(models) & set(listed))
    parts = []
    for model in wanted:
        part = read_part(read, model)
        if part is None:
            raise BoardsUnreadable(f"{BOARDS_PATH} lists {model_path(model)}, which is missing")
        parts.append(part)
    return assemble(index, parts)


def file_reader(root: str) -> Reader:
    """Read registry files from a working tree; a symlink is never followed (it reads as empty)."""

    def read(rel: str) -> bytes | None:
        path = os.path.join(root, rel)
        if os.path.islink(path):
            return b""
        try:
            with open(path, "rb") as fh:
                return fh.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None

    return read


def read_boards(root: str, models: Iterable[str] | None = None) -> dict[str, Any] | None:
    """The committed boards of the registry at `root` as one document (the readers' contract: the site,
    seed 004's shape, `orv boards --combined`); with `models`, only those models' rows. None when the
    registry publishes no boards; BoardsUnreadable when they cannot be assembled."""
    return read_document(file_reader(root), models)


def check_out_boards(root: str) -> None:
    """In a sparse checkout (the boards workflow's, after a push), the split files a reader of the whole
    document reads (read_boards: the site, `--combined`): the index, then the parts it lists; never the
    standings or the keys. Elsewhere nothing happens. Raises BoardsUnreadable when the index is malformed."""
    check_out_files(root, [BOARDS_PATH])
    read = file_reader(root)
    index = read_index(read(BOARDS_PATH))
    if index is not None:
        check_out_files(root, [model_path(model) for model in index["model_files"]])
        check_out_files(root, chunk_paths(read, index["model_files"]))


def committed_files(root: str) -> dict[str, bytes]:
    """Every generated boards file in the working tree: the index, each file under boards/models/ and
    boards/standings/ (whatever its name: a file left over for a model no longer on the boards counts)
    and a boards/boards.json still in the tree (never written now: only so that it counts as left over)."""
    read = file_reader(root)
    out = {}
    for rel in (BOARDS_PATH, DOCUMENT_PATH):
        raw = read(rel)
        if raw is not None:
            out[rel] = raw
    for folder in (BOARDS_MODELS_DIR, BOARDS_STANDINGS_DIR):
        try:
            names = sorted(os.listdir(os.path.join(root, folder)))
        except (FileNotFoundError, NotADirectoryError):
            names = []
        for name in names:
            rel = f"{folder}/{name}"
            where = os.path.join(root, rel)
            if folder == BOARDS_MODELS_DIR and os.path.isdir(where) and not os.path.islink(where):  # its chunks
                for inner in sorted(os.listdir(os.path.join(root, rel))):
                    raw = read(f"{rel}/{inner}")
                    if raw is not None:
                        out[f"{rel}/{inner}"] = raw
                continue
            raw = read(rel)
            if raw is not None:
                out[rel] = raw
    return out

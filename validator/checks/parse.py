"""ORV1xx: parse and schema — syntax, duplicate keys, unknown fields, types, names and places."""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterator, Mapping

from validator.checks.base import Finding, check, declare
from validator.diagnostics import Severity
from validator.models import WorkloadSpec
from validator.registry.catalog import catalog_names
from validator.registry.layout import (
    HARDWARE_PATH,
    MODELS_PATH,
    STARTING_POINTS_PATH,
    WORKLOADS_PATH,
    classify,
    misplaced_run,
)
from validator.registry.snapshot import Snapshot
from validator.stacks.engines import LLAMA_CPP_NAMES

E = Severity.ERROR

declare(
    "ORV101",
    E,
    "syntax error",
    """
    The file is not valid YAML (recipes, catalog) or JSON (run files).

    The finding points at the position where the parser gave up; the mistake is usually just
    before it (a missing quote, a tab used for indentation, an unclosed bracket).
    """,
)
declare(
    "ORV102",
    E,
    "duplicate key",
    """
    A mapping repeats a key. YAML and JSON parsers silently keep one of the two values (which one
    differs between parsers), so a reviewer could read one number and the boards show another.
    Keep exactly one entry.
    """,
)
declare(
    "ORV103",
    E,
    "unknown field",
    """
    A field the schema does not define. Unknown fields are rejected rather than ignored so that a
    typo (`layuot:`) never silently drops data. The hint suggests the closest known field; free
    text belongs in `notes`.
    """,
)
declare(
    "ORV104",
    E,
    "wrong type",
    """
    A value has the wrong type: text where a number is expected, a single value where a list is
    expected, and so on. The hint says how to write the expected type in YAML. YAML-only types
    (`!!binary`, `!!set`, `!!omap`, `!!pairs`, custom `!tags`) are refused where they are
    written: JSON, the schemas and canonical run files cannot hold them.
    """,
)
declare(
    "ORV105",
    E,
    "version written as a number",
    """
    A `version` or `commit` was written unquoted and YAML read it as a number: `version: 0.30`
    becomes 0.3, and `commit: 1234567` loses leading zeros. Quote it exactly as released:
    `version: "0.30"`.
    """,
)
declare(
    "ORV108",
    E,
    "missing required field",
    """
    A field every document of this kind must carry is absent. The hint names the field; the
    schema in schema/ documents it.
    """,
)
declare(
    "ORV109",
    E,
    "value not allowed",
    """
    A value breaks the schema's constraint for it: a slug with capitals or spaces, a run
    reference that is not `sha256:<64 hex>`, a date not written YYYY-MM-DD, a number out of
    range, a list with repeated items, or a word not among the allowed ones. The hint gives the
    allowed form, or the closest allowed word.
    """,
)
declare(
    "ORV110",
    E,
    "unreadable bytes",
    """
    The file is not UTF-8 text (or starts with a byte-order mark), or could not be read at all.
    Save it as UTF-8 without BOM. A JSON `\\ud800`-`\\udfff` escape that is not half of a complete
    surrogate pair is refused too: it names no character, so the text cannot be UTF-8.
    """,
)
declare(
    "ORV111",
    E,
    "file too large",
    """
    The file exceeds the documented size limit: 1 MiB for YAML, 16 MiB for a run file. The limit
    keeps every clone and every check cheap; a run file holds raw samples, not full logs. The
    files a contributor hands to `orv add-run`, `orv catalog add-model` and `orv import` have a
    budget per kind (docs/limits.md lists each, with where its figure comes from), refused from
    the file's size before it is read.
    """,
)
declare(
    "ORV112",
    E,
    "unsafe structure",
    """
    The document uses YAML aliases (`*name`, also inside merge keys `<<:`), or nests deeper than
    32 levels; the finding points at the first alias. Aliases can expand a small file into
    gigabytes ("billion laughs") and hide what a reviewer reads, so recipes write every value
    out; no recipe needs deep nesting.
    """,
)
declare(
    "ORV113",
    E,
    "non-finite number",
    """
    A JSON file contains NaN or Infinity, which are not JSON, or a YAML file writes `.nan` or
    `.inf`, which pass every range check unnoticed. Write a finite number, or null (in YAML: leave
    the field out) for no value. A diverged training step records its loss as the string "nan"
    or "inf".
    """,
)
declare(
    "ORV120",
    E,
    "number too long to read",
    """
    An integer literal has more than 4,300 digits, beyond what Python (and so orv) will convert
    from text (a guard against quadratic-time parsing, CVE-2020-10735). No measurement needs that
    many digits: write the figure in scientific notation, or as quoted text if it is not a number.
    Numbers that can be read but exceed a field's range (integers beyond 2^53 - 1, JSON's safe
    integers; numbers beyond a double) are ORV109.
    """,
)
declare(
    "ORV116",
    E,
    "tier declared by submitter",
    """
    A recipe declares its own `tier`. Tiers are derived by orv from the evidence on record
    (SPEC §5) and are never declared; delete the field.
    """,
)


@check("ORV106", E, "id differs from file name", per_file=True)
def id_matches_stem(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A recipe's `id` must equal its file name without `.yaml`, so that the path alone tells which
    recipe a file holds and two files can never claim one id. Rename the file or change the id.
    """
    for entry in snapshot.recipes:
        rid = entry.id
        stem = entry.path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if rid is not None and rid != stem:
            yield Finding(
                entry.path,
                f"id `{rid}` differs from the file name `{stem}`",
                f"rename the file to `{rid}.yaml` or set `id: {stem}`",
                at=("id",),
            )


@check("ORV107", E, "file in the wrong folder", per_file=True)
def file_in_wrong_folder(snapshot: Snapshot) -> Iterator[Finding]:
    """
    Every file has one place: recipes/<kind>/<model-id>/<recipe-id>.yaml with kind and model
    matching the recipe, runs/<first two hex>/<64 hex>.json for run files, the four catalog files,
    and the generated boards/index.json, boards/models/<model-id>.json (and its chunks
    boards/models/<model-id>/<i>.json), boards/standings/<model-id>.json and boards/keys.json. A file
    anywhere else under those folders is rejected.
    """
    for rel in snapshot.files:
        # a hash-named run file in the wrong shard folder is ORV209's, with the exact path to move it to
        if classify(rel) is None and not _is_symlink_reported(snapshot, rel) and not misplaced_run(rel):
            hint = (
                "a temporary file an older orv left when it was killed: delete it (orv keeps its temporaries "
                "in the git folder now, docs/durability.md)"
                if rel.rsplit("/", 1)[-1].startswith(".orv-")
                else "run files live at runs/<first two hex>/<sha256>.json; `orv add-run FILE` puts them there"
                if rel.startswith("runs/")
                else "recipes live at recipes/<training|inference>/<model-id>/<recipe-id>.yaml"
                if rel.startswith("recipes/")
                else "remove the file or move it where it belongs"
            )
            yield Finding(rel, f"`{rel}` has no place in the registry layout", hint)
    for entry, recipe in snapshot.valid_recipes():
        parts = entry.path.split("/")
        if parts[1] != recipe.kind:
            yield Finding(
                entry.path,
                f"a {recipe.kind} recipe is filed under recipes/{parts[1]}/",
                f"move it to recipes/{recipe.kind}/{recipe.model}/",
                at=("kind",),
            )
        elif parts[2] != recipe.model:
            yield Finding(
                entry.path,
                f"recipe for model `{recipe.model}` is filed under `{parts[2]}/`",
                f"move it to recipes/{recipe.kind}/{recipe.model}/",
                at=("model",),
            )


def _is_symlink_reported(snapshot: Snapshot, rel: str) -> bool:
    return os.path.islink(os.path.join(snapshot.root, rel))


@check("ORV114", E, "symbolic link", per_file=True)
def symbolic_link(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A file or folder in the registry is a symbolic link. Links can point outside the repository
    or make one file appear under two names; orv never follows them. Commit the file itself.
    The commands that read a contributor's files (`orv add-run`, `orv catalog add-model`,
    `orv import`) report the same code for a link found inside a folder they read, and for a
    FIFO, device or socket given where a file belongs (docs/limits.md).
    """
    for rel in snapshot.files:
        if _is_symlink_reported(snapshot, rel):
            target = os.readlink(os.path.join(snapshot.root, rel))
            yield Finding(rel, f"`{rel}` is a symbolic link (to `{target}`)", "replace the link with the file itself")


@check("ORV115", E, "unknown catalog id", per_file=True)
def unknown_catalog_reference(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A recipe, run or starting point (catalog/starting-points.yaml) names a model, GPU or workload
    that catalog/ does not define. Use the
    catalog's id (the hint offers the closest one, of the recipe's kind for a workload); a new model or
    GPU is appended to catalog/ with its sources in the recipe's own pull request (`orv catalog add-model`;
    docs/contributing.md), for a maintainer to review.
    """
    if not snapshot.catalog_ok:
        return  # the catalog's own findings come first; guessing against a broken one misleads
    cat = snapshot.catalog
    value: str | None  # a recipe's or run's id, or a starting point's (which may name none)
    for entry, recipe in snapshot.valid_recipes():
        refs = [
            (("model",), recipe.model, cat.models, MODELS_PATH, cat.models),
            (("hardware", "gpu"), recipe.hardware.gpu, cat.hardware, HARDWARE_PATH, cat.hardware),
        ]
        if recipe.workload is not None:  # an imported inference row may name none (unspecified)
            offered = _workloads_for(recipe, cat.workloads)
            refs.append((("workload",), recipe.workload, cat.workloads, WORKLOADS_PATH, offered))
        names = snapshot.memo("catalog-names", lambda: catalog_names(cat))
        for at, value, table, where, offered_ids in refs:
            if value not in table:
                known = names[at].resolve(value)
                hint = (
                    f"`{value}` is a name or alias of `{known}` in {where}: write the catalog id, `{at[-1]}: {known}`"
                    if known
                    else _did_you_mean(value, offered_ids, where)
                )
                yield Finding(entry.path, f"`{'.'.join(at)}: {value}` is not in {where}", hint, at=at)
    for i, point in enumerate(cat.starting_points):
        # a starting point naming an id nobody defines silently stops matching any recipe
        for field, value, table, where in (
            ("model", point.model, cat.models, MODELS_PATH),
            ("gpu", point.gpu, cat.hardware, HARDWARE_PATH),
            ("workload", point.workload, cat.workloads, WORKLOADS_PATH),
        ):
            if value is not None and value not in table:
                yield Finding(
                    STARTING_POINTS_PATH,
                    f"starting point {i + 1}: `{field}: {value}` is not in {where}",
                    _did_you_mean(value, table, where),
                    at=("starting_points", i, field),
                )
    for _digest, run in snapshot.runs.items():
        if run.meta is None:
            continue
        for at, value, table, where in (
            (("model",), run.meta.model, cat.models, MODELS_PATH),
            (("hardware", "gpu"), run.meta.hardware.gpu, cat.hardware, HARDWARE_PATH),
        ):
            if value not in table:
                yield Finding(
                    run.path, f"`{'.'.join(at)}: {value}` is not in {where}", _did_you_mean(value, table, where)
                )


def _workloads_for(recipe: object, workloads: Mapping[str, WorkloadSpec]) -> dict[str, WorkloadSpec]:
    """The workloads a recipe of this kind could name, for the did-you-mean hint: training recipes the
    training protocols, served engines the serving benchmarks, llama.cpp also llama-bench's tests (issue 52).
    `unspecified` is never offered (a new recipe cannot name it, ORV240)."""
    kinds = {"sft", "pretrain"} if getattr(recipe, "kind", None) == "training" else {"inference"}
    software = getattr(recipe, "software", {}) or {}
    engine = software.get("engine") if isinstance(software, Mapping) else None
    if kinds == {"inference"} and engine is not None and str(getattr(engine, "name", "")).lower() in LLAMA_CPP_NAMES:
        kinds.add("llama-bench")
    return {wid: w for wid, w in workloads.items() if w.kind in kinds}


def _did_you_mean(value: str, table: object, where: str) -> str:
    ids = list(table)  # type: ignore[call-overload]
    close = difflib.get_close_matches(value.lower(), ids, n=1, cutoff=0.4)
    if close:
        return f"did you mean `{close[0]}`?"
    return f"use an id defined in {where}"

"""Relation keys: what ties a recipe or run file to the others a registry check judges it with.

Every registry check decides about a file from that file alone (with the catalog), or from a group
of files sharing one of these keys (validator/pr/neighbourhood.py says how pull-request mode uses
them; boards/keys.json publishes each committed file's content keys, validator/boards/keyfile.py):

    f:<path, case-folded>          ORV117 paths that differ only by case
    i:<id, and file stem, folded>  ORV301 one recipe per id; ORV602 ids are permanent
    r:<run digest>                 ORV203-ORV207 a recipe's references and the run files they name
                                   (a run file in the wrong shard folder carries its digest too)
    d:<configuration>              ORV302 one recipe per configuration
    c:<claims but the GPU count>   ORV303 claims copied across GPU counts
    s:<kind, sample sketch keys>   ORV304 run files that could hold one measurement (science/independence.py);
                                   its value-sketch and merge keys (`s:<kind>:v:...`, `s:<kind>:m:...`) tie two
                                   files only several of a column at a time (`ties`)
    q:<model, task, task hash>     ORV239 quality runs whose responses could repeat each other's
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

import orjson

from validator.hashing import RUN_REF
from validator.models import Recipe, TrainingRecipe
from validator.registry.layout import classify, misplaced_run, run_digest_from_path
from validator.registry.snapshot import RecipeEntry, RunEntry
from validator.science.independence import buckets, tie
from validator.stacks import launch_args

Keys = tuple[str, ...]

# Key kinds whose check judges two files at a time, each finding decided by that pair alone (ORV304 names
# both runs): a file such a key reaches can be judged differently after a change only in its pair with the
# changed file, so pull-request mode's neighbourhood takes no second hop from it over these keys
# (pr/neighbourhood.py). A run's sample keys tie it to ~20 others by chance (issue 55); two hops, to ~200.
PAIRWISE = frozenset({"s"})


def grouping(keys: Iterable[str]) -> set[str]:
    """The keys not of a PAIRWISE kind: those a second hop follows."""
    return {key for key in keys if key.split(":", 1)[0] not in PAIRWISE}


def ties(shared: Iterable[str]) -> bool:
    """Whether the keys two files share relate them (pull-request mode's neighbourhood): any one key does,
    but ORV304's sample keys (`s:<kind>:<bucket>`) only as science/independence.py `tie` says of their buckets,
    per kind (one value of a column in common is chance, and no check ever joins two files by it)."""
    by_kind: dict[str, list[str]] = {}
    for key in shared:
        if not key.startswith("s:"):
            return True
        kind, _, bucket = key[2:].partition(":")
        by_kind.setdefault(kind, []).append(bucket)
    return any(tie(buckets) is not None for buckets in by_kind.values())


def _canonical(value: Any) -> str:
    """One comparable string per value: sorted keys. orjson (~10x json.dumps, which runs 40,000
    times on a 10,000-recipe registry); json for what orjson refuses (integers beyond 64 bits)."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS, default=str).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def _software(recipe: Recipe) -> str:
    return _canonical(
        {role: c.model_dump(exclude_none=True, exclude_defaults=True) for role, c in recipe.software.items()}
    )


def identity(recipe: Recipe) -> str:
    """What makes two recipes the same configuration (SPEC §6 ORV3xx), as one comparable string.

    kind, model (and checkpoint), quant, hardware gpu and count, the software with its pins,
    the layout or serving settings, the tuning, the workload, and the launch arguments and
    environment where the recipe states them. Claims, author,
    dates, notes and runs are not part of it: they are evidence about the configuration.
    Defaults are filled in (a layout without `vpp` equals one with `vpp: 1`) and recompute scopes
    compared as sets, so spelling differences do not hide a duplicate.
    """
    fields: dict[str, Any] = {
        "kind": recipe.kind,
        "model": recipe.model,
        "hardware": recipe.hardware.model_dump(),
        "software": _software(recipe),
    }
    if isinstance(recipe, TrainingRecipe):
        tuning = recipe.tuning.model_dump(exclude_none=True) if recipe.tuning else {}
        if isinstance(tuning.get("recompute"), dict):
            tuning["recompute"]["scope"] = sorted(tuning["recompute"].get("scope", ()))
        fields.update(workload=recipe.workload, layout=recipe.layout.model_dump(), tuning=tuning)
    else:
        fields.update(
            checkpoint=recipe.checkpoint, quant=recipe.quant, serving=recipe.serving.model_dump(exclude_none=True)
        )
        if recipe.workload is not None:  # a figure on another workload is another configuration
            fields["workload"] = recipe.workload
    if recipe.launch is not None and (recipe.launch.args or recipe.launch.env):
        # how it was launched is part of what was measured (issue 28): other flags, another configuration
        # read as the engine reads it (stacks/launch_args.py): `--max_num_seqs 4` and `--max-num-seqs=4` are one
        # setting, and a port or a log level changes no figure
        parsed = launch_args.parsed(recipe)
        args: Any = list(recipe.launch.args) if parsed is None else parsed.figure_settings()
        # a variable the engine reads as a flag (llama.cpp's LLAMA_ARG_*) is in the parsed settings already
        env = {
            k: v
            for k, v in recipe.launch.env.items()
            if parsed is None or not launch_args.is_flag_variable(parsed.table, k)
        }
        fields["launch"] = {"args": args, "env": dict(sorted(env.items()))}
    return _canonical(fields)


def copied_claim_key(recipe: Recipe) -> str:
    """Everything but the GPU count: same model, quant/workload, GPU, software and claimed figures."""
    variant = recipe.workload if isinstance(recipe, TrainingRecipe) else recipe.quant
    return _canonical(
        [
            recipe.kind,
            recipe.model,
            variant,
            recipe.hardware.gpu,
            _software(recipe),
            recipe.claimed.model_dump(exclude_none=True),
        ]
    )


def raw_references(entry: RecipeEntry) -> list[tuple[int, str]]:
    """(index in runs, digest) for every well-formed reference, even in a recipe that fails its schema."""
    if entry.recipe is not None:
        return list(enumerate(entry.recipe.run_digests))
    runs = entry.doc.data.get("runs") if isinstance(entry.doc.data, dict) else None
    if not isinstance(runs, list):
        return []
    out = []
    for i, ref in enumerate(runs):
        m = RUN_REF.match(ref) if isinstance(ref, str) else None
        if m:
            out.append((i, m.group(1)))
    return out


def _short(text: str) -> str:
    return hashlib.blake2b(text.encode(), digest_size=12).hexdigest()


def path_keys(rel: str, kind: str | None = None) -> Keys:
    """The keys a file has by its path alone (all a run file has); `kind` is classify(rel) if known."""
    keys = ["f:" + rel.casefold()]
    kind = kind or classify(rel)
    if kind in ("run", "run-signature") or misplaced_run(rel):
        keys.append("r:" + (run_digest_from_path(rel) or ""))
    elif kind in ("recipe-training", "recipe-inference"):
        keys.append("i:" + rel.rsplit("/", 1)[-1].rsplit(".", 1)[0].casefold())
    return tuple(keys)


def content_keys(entry: RecipeEntry | RunEntry | None) -> Keys:
    """The keys a recipe or run file has by what it says (nothing for anything else): those its
    loader computed (with_content_keys), else computed here."""
    return unheld(held_keys(entry))


def unheld(held: Keys | str) -> Keys:
    """The keys held_keys held (the key index, load/cache.py, stores them so too)."""
    return tuple(held.split(_SEPARATOR)) if isinstance(held, str) else held


def held_keys(entry: RecipeEntry | RunEntry | None) -> Keys | str:
    """content_keys as the entry holds them: one string, the keys joined by a newline (a run file's ~380 keys
    take a third of the memory as one string: `orv boards` at 10,000 run files held ~450 MB of key strings,
    docs/scaling.md), or a tuple where there are none or a key holds a newline."""
    if isinstance(entry, (RecipeEntry, RunEntry)) and entry.keys is not None:
        return entry.keys
    return _computed_keys(entry)


_SEPARATOR = "\n"


def with_content_keys(entry: RecipeEntry | RunEntry | None) -> RecipeEntry | RunEntry | None:
    """The entry carrying its content keys: computed where the file is loaded (a worker process,
    in parallel) for the cache's index and boards/keys.json, instead of afterwards in one process."""
    if entry is None or entry.keys is not None:
        return entry
    keys = _computed_keys(entry)
    joined = _SEPARATOR.join(keys)
    keyed = replace(entry)
    # frozen, and `keys` is no init argument; joined where that gives back the same keys (held_keys)
    object.__setattr__(keyed, "keys", joined if keys and joined.count(_SEPARATOR) == len(keys) - 1 else keys)
    return keyed


def _computed_keys(entry: RecipeEntry | RunEntry | None) -> Keys:
    if isinstance(entry, RunEntry):
        if entry.quality is not None:
            return tuple(
                f"q:{_short(_canonical([entry.quality.model, task, facts.task_hash]))}"
                for task, facts in sorted(entry.quality.tasks.items())
            )
        if entry.meta is None or entry.facts is None:
            return ()
        return tuple(f"s:{entry.meta.kind}:{key}" for key in buckets(entry.facts.fingerprint))
    if not isinstance(entry, RecipeEntry):
        return ()
    keys = ["r:" + digest for _, digest in raw_references(entry)]
    if entry.id is not None:
        keys.append("i:" + entry.id.casefold())
    if entry.recipe is not None:
        keys += ["d:" + _short(identity(entry.recipe)), "c:" + _short(copied_claim_key(entry.recipe))]
    return tuple(dict.fromkeys(keys))


def keys_of(rel: str, entry: RecipeEntry | RunEntry | None) -> Keys:
    """All of a file's keys: by its path, and for a recipe by what it says (entry: its loaded entry)."""
    return path_keys(rel) + content_keys(entry)

"""`orv new`: a new recipe with the schema modeline, short comments, catalog ids checked, an id by the naming rule.

Recipe ids (docs/contributing.md, "Recipe ids"), lower-case slugs of at most 96 characters:
- training:  `<model>-<gpu>-tp<T>-pp<P>[-vpp<V>][-cp<C>][-ep<E>][-etp<F>]-dp<D>` — the rule
  `orv import leaderboard` gave every training recipe (validator/importers/leaderboard.py), parts
  present only when the layout states them;
- inference: `<model>-<gpu>[-x<N>]-<engine>-<quant>-<workload>-c<concurrency>[-<method><k>]` — `-x<N>` when more
  than one GPU, the speculative method and k when there is one; the legacy export's free-text ids
  follow no rule, so new ones follow this.
`<model>` is the catalog id with every run of other characters made one hyphen (qwen3.8-27b ->
qwen3-8-27b), as both importers do. A second recipe whose id is taken gets `-2`, `-3`, … (as the
importers number repeats); --id overrides the rule.
"""

from __future__ import annotations

import dataclasses
import datetime
import difflib
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from validator import dates
from validator.commands.outcome import Outcome
from validator.errors import BadOptions, ExitCode, ImportInputError, OrvError, Refusal
from validator.files import yamledit
from validator.files.atomic import write_atomic, writer_lock
from validator.git.plumbing import configured_user_name, tracked
from validator.git.sparse import materialize
from validator.registry.catalog import CatalogView, fold, load_catalog
from validator.registry.layout import (
    HARDWARE_PATH,
    INFERENCE_SCHEMA_LINE,
    MAX_ID,
    MODELS_PATH,
    SLUG,
    TRAINING_SCHEMA_LINE,
    WORKLOADS_PATH,
    model_slug,
    recipe_path,
)
from validator.registry.recipe_edits import DATE_COMMENT, DEFAULT_DATE_COMMENT
from validator.stacks import pins
from validator.stacks.engines import LLAMA_CPP_SERVED

Ask = Callable[[str, Any], Any]  # ask(prompt, default) -> the answer: click.prompt on a terminal

# A suggestion must be this similar (difflib ratio) to what was typed, or contain it: low enough for
# typos (qwen3.8-72b -> qwen3.8-27b), high enough that llama-3.1-8b does not "mean" glm-5.1 (0.53).
SIMILARITY_CUTOFF = 0.8
LAYOUT_KEYS = ("tp", "pp", "vpp", "cp", "ep", "etp", "dp")


class ScaffoldError(Refusal):
    """Input `orv new` cannot use; message and hint say what to give instead."""


@dataclass
class Answers:
    """What a recipe needs; None where the person has not said yet (the CLI asks or refuses)."""

    kind: str
    model: str | None = None
    gpu: str | None = None
    count: int | None = None
    author: str | None = None
    measured: str | None = None
    components: dict[str, str] = field(default_factory=dict)  # role -> "name@pin"
    # inference
    quant: str | None = None
    context_len: int | None = None
    concurrency: int | None = None
    speculative: str | None = None  # "method:k"
    # training
    workload: str | None = None
    layout: dict[str, int] = field(default_factory=dict)
    recipe_id: str | None = None


def main_role(kind: str) -> str:
    return "framework" if kind == "training" else "engine"


# --------------------------------------------------------------------------- catalog ids


def suggestions(value: str, names_by_id: Mapping[str, tuple[str, ...]]) -> list[str]:
    """Catalog ids whose id, name or alias is close to `value` (SIMILARITY_CUTOFF), best first, at most 3."""
    wanted = fold(value)
    scored = []
    for key, names in names_by_id.items():
        best = 0.0
        for name in map(fold, names):
            score = difflib.SequenceMatcher(None, wanted, name).ratio()
            if len(wanted) >= 3 and len(name) >= 3 and (wanted in name or name in wanted):
                score = max(score, 0.9)
            best = max(best, score)
        if best >= SIMILARITY_CUTOFF:
            scored.append((-best, key))
    return [key for _, key in sorted(scored)[:3]]


def catalog_id(name: str) -> str:
    """A catalog id for a name as people write it: Llama-3.1-8B -> llama-3.1-8b (dots are kept)."""
    return re.sub(r"[^a-z0-9.]+", "-", name.lower()).strip("-.").replace("-.", "-").replace(".-", "-")


def _did_you_mean(found: list[str]) -> str:
    return " or ".join(f"`{f}`" for f in found)


def resolve_model(catalog: CatalogView, value: str) -> str:
    found = catalog.model_id(value)
    if found:
        return found
    close = suggestions(value, {mid: (mid, m.name, *m.aliases) for mid, m in catalog.models.items()})
    message = f"model `{value}` is not in {MODELS_PATH}"
    add = (
        f"to add it in this pull request, run `orv catalog add-model --config config.json --id "
        f'{catalog_id(value)}` with the model\'s Hugging Face config.json (docs/contributing.md, "Adding a model")'
    )
    if close:
        raise ScaffoldError(message, f"did you mean {_did_you_mean(close)}? If not, {add}")
    raise ScaffoldError(message, add[0].upper() + add[1:])


def resolve_gpu(catalog: CatalogView, value: str) -> str:
    found = catalog.gpu_id(value)
    if found:
        return found
    close = suggestions(value, {gid: (gid, g.name, *g.aliases) for gid, g in catalog.hardware.items()})
    message = f"GPU `{value}` is not in {HARDWARE_PATH}"
    add = (
        f"to add it, give it an entry in {HARDWARE_PATH} with its vendor's figures and a cited source "
        '(docs/contributing.md, "Adding a GPU")'
    )
    if close:
        raise ScaffoldError(message, f"did you mean {_did_you_mean(close)}? If not, {add}")
    raise ScaffoldError(message, add[0].upper() + add[1:])


def resolve_workload(catalog: CatalogView, value: str | None, kind: str = "training") -> str:
    """A workload of the recipe's kind (never `unspecified`: that one is kept for imported rows)."""
    fits = sorted(k for k, w in catalog.workloads.items() if (w.is_inference if kind == "inference" else w.is_training))
    choices = f"pass --workload, one of {', '.join(fits)} (docs/protocols.md)"
    if value is None:
        if len(fits) == 1:
            return fits[0]
        raise ScaffoldError("which workload? the catalog defines several", choices)
    if value in fits:
        return value
    if value in catalog.workloads:
        raise ScaffoldError(
            f"workload `{value}` is not {'an' if kind == 'inference' else 'a'} {kind} workload", choices
        )
    raise ScaffoldError(f"workload `{value}` is not in {WORKLOADS_PATH}", choices)


# --------------------------------------------------------------------------- software pins


def parse_component(role: str, spec: str) -> dict[str, str]:
    """`vllm@0.11.0` -> {name, version}; `sglang@commit:1a2b3c4` -> {name, commit};
    `vllm@image:vllm/vllm-openai@sha256:<64 hex>` -> {name, image}. The pin must be exact."""
    name, sep, pin = spec.partition("@")
    name = name.strip().lower()
    # a hint never names a version the contributor did not run (issue 15)
    example = f"{'vllm' if role == 'engine' else 'megatron-core'}@<the exact release you ran>"
    if not sep or not name or not pin:
        raise ScaffoldError(
            f"--{role} `{spec}` names no pinned version",
            f"write NAME@VERSION, e.g. `{example}` (or NAME@commit:SHA, NAME@image:REF@sha256:DIGEST)",
        )
    if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", name):
        raise ScaffoldError(f"--{role} name `{name}` is not a lower-case name", f"e.g. `{example}`")
    if pin.startswith("commit:"):
        commit = pin[len("commit:") :]
        problem = pins.commit_problem(commit)
        if problem:
            raise ScaffoldError(f"--{role} {problem}", "`git rev-parse HEAD` in the checkout you ran prints it")
        return {"name": name, "commit": commit}
    if pin.startswith("image:"):
        image = pin[len("image:") :]
        problem = pins.image_problem(image)
        if problem:
            raise ScaffoldError(
                f"--{role} {problem}", "`docker inspect --format '{{index .RepoDigests 0}}' IMAGE` prints the digest"
            )
        return {"name": name, "image": image}
    version_problem = pins.version_problem(pin, name)  # an engine with its own scheme: llama.cpp@b6800
    if version_problem:
        raise ScaffoldError(
            f"--{role} {version_problem[1]}",
            f"give the exact release you ran (`{name} --version` or `pip show {name}` prints it)",
        )
    return {"name": name, "version": pin}


def _speculative(spec: str) -> dict[str, Any]:
    method, sep, k = spec.partition(":")
    if not sep or not k.isdigit() or int(k) < 1 or not re.fullmatch(r"[a-z0-9][a-z0-9_-]*", method):
        raise ScaffoldError(f"--speculative `{spec}` is not METHOD:K", "e.g. `--speculative mtp:3` or `eagle3:4`")
    return {"method": method, "k": int(k)}


# --------------------------------------------------------------------------- the recipe


def _layout(answers: Answers, count: int) -> dict[str, int]:
    layout = {k: v for k, v in answers.layout.items() if v is not None}
    layout.setdefault("tp", 1)
    layout.setdefault("pp", 1)
    model_parallel = layout["tp"] * layout["pp"] * layout.get("cp", 1)
    if "dp" not in layout:
        if count % model_parallel:
            raise ScaffoldError(
                f"{count} GPUs cannot be split into TP{layout['tp']} x PP{layout['pp']} x CP{layout.get('cp', 1)} x DP",
                "pass --dp, or a GPU count the layout divides",
            )
        layout["dp"] = count // model_parallel
    if model_parallel * layout["dp"] != count:
        raise ScaffoldError(
            f"TP x PP x CP x DP = {model_parallel * layout['dp']}, not the {count} GPUs of --count",
            "make the layout multiply to the GPU count (Megatron-Core's rule, ORV501)",
        )
    return {k: layout[k] for k in LAYOUT_KEYS if k in layout}


def derive_id(kind: str, model: str, gpu: str, count: int, document: Mapping[str, Any]) -> str:
    """The id by the naming rule (module docstring)."""
    if kind == "training":
        layout = document["layout"]
        parts = [f"{k}{layout[k]}" for k in LAYOUT_KEYS if k in layout]
        base = f"{model_slug(model)}-{gpu}-{'-'.join(parts)}"
    else:
        serving = document["serving"]
        parts = [model_slug(model), gpu] + ([f"x{count}"] if count > 1 else [])
        parts += [
            document["software"]["engine"]["name"],
            document["quant"],
            document.get("workload", ""),
            f"c{serving.get('concurrency', 1)}",
        ]
        spec = serving.get("speculative")
        if spec:
            parts.append(f"{spec['method']}{spec['k']}")
        base = "-".join(parts)
    return re.sub(r"[^a-z0-9]+", "-", base.lower()).strip("-")[: MAX_ID - 3].strip("-")


def _taken(root: str) -> dict[str, str]:
    """Every recipe id in use (its file name, case-folded) -> the repository path of its file: the
    files on disk and those git tracks, so a sparse checkout's left-out recipes count too."""
    found: list[str] = []
    for folder, _, files in os.walk(os.path.join(root, "recipes")):
        found += [os.path.relpath(os.path.join(folder, f), root).replace(os.sep, "/") for f in sorted(files)]
    found += tracked(root, "recipes") or []
    ids: dict[str, str] = {}
    for rel in sorted(found):
        name = rel.rsplit("/", 1)[-1]
        if name.endswith(".yaml"):
            ids.setdefault(name[:-5].lower(), rel)
    return ids


def unique_id(root: str, base: str) -> tuple[str, str | None]:
    """`base`, or the first of base-2, base-3, … that is free, and the file holding `base` when it is taken."""
    taken = _taken(root)
    if base not in taken:
        return base, None
    n = 2
    while f"{base}-{n}" in taken:
        n += 1
    return f"{base}-{n}", taken[base]


class Scaffold(NamedTuple):
    """A new recipe: its repository path and YAML text, and a note for the user (or None)."""

    path: str
    text: str
    note: str | None


def build(root: str, catalog: CatalogView, answers: Answers, today: datetime.date, force: bool = False) -> Scaffold:
    """The new recipe's repository-relative path and YAML text; ScaffoldError for unusable answers.

    When the naming rule's id is taken, the recipe gets the next free `-N` and the note says which
    file holds the id and why the two share it."""
    kind = answers.kind
    model = resolve_model(catalog, answers.model or "")
    gpu = resolve_gpu(catalog, answers.gpu or "")
    count = answers.count or 1
    role = main_role(kind)
    if role not in answers.components:
        raise ScaffoldError(
            f"a {kind} recipe needs its {role} and version",
            f"pass --{role} {'vllm' if role == 'engine' else 'megatron-core'}@<the exact release you ran>",
        )
    software = {r: parse_component(r, spec) for r, spec in answers.components.items()}
    software = {role: software.pop(role), **software}
    measured = answers.measured or today.isoformat()
    # the rule `orv check` applies (ORV121): what orv new writes, orv check accepts
    why = (
        dates.problem(measured)
        if re.fullmatch(r"[0-9]{4}-[0-9]{2}-[0-9]{2}", measured)
        else f"`{measured}` is not a date"
    )
    if why:
        raise ScaffoldError(f"--measured {why}", "write the day the benchmark ran, as YYYY-MM-DD (ORV121)")
    if not answers.author or not answers.author.strip():
        raise ScaffoldError("who measured it?", "pass --author NAME (a person or lab, shown on the boards)")
    doc: dict[str, Any] = {
        "id": "",
        "kind": kind,
        "model": model,
        "hardware": {"gpu": gpu, "count": count},
        "author": answers.author.strip(),
        "measured": measured,
        "software": software,
    }
    if kind == "training":
        doc["workload"] = resolve_workload(catalog, answers.workload)
        doc["layout"] = _layout(answers, count)
    else:
        quant = (answers.quant or "bf16").lower()
        if not re.fullmatch(r"[a-z0-9]+([._-][a-z0-9]+)*", quant):
            raise ScaffoldError(f"--quant `{quant}` is not a quantization id", "e.g. bf16, fp8, nvfp4, awq-int4")
        doc["quant"] = quant
        serving: dict[str, Any] = {"concurrency": answers.concurrency or 1}
        if answers.context_len:
            serving = {"context_len": answers.context_len, **serving}
        if answers.speculative:
            serving["speculative"] = _speculative(answers.speculative)
        doc["serving"] = serving
        doc["workload"] = resolve_workload(catalog, answers.workload, "inference")
    doc["claimed"] = {}
    doc["runs"] = []
    note = None
    if answers.recipe_id:
        recipe_id = answers.recipe_id
        if not SLUG.match(recipe_id) or len(recipe_id) > MAX_ID:
            raise ScaffoldError(
                f"--id `{recipe_id}` is not a recipe id",
                f"lower-case letters, digits and single hyphens, at most {MAX_ID} characters",
            )
        holder = _taken(root).get(recipe_id)
        if holder:
            raise ScaffoldError(f"a recipe with id `{recipe_id}` exists already ({holder})", "choose another --id")
    else:
        base = derive_id(kind, model, gpu, count, doc)
        recipe_id, holder = unique_id(root, base)
        if holder and force:
            if holder in (tracked(root, holder) or []):
                raise ScaffoldError(
                    f"--force replaces only a draft git does not track; {holder} is committed",
                    "edit that recipe, or leave out --force to write the next free id",
                )
            recipe_id, holder = base, None
            note = f"--force: replacing the untracked draft {recipe_path(kind, model, base)}"
        elif holder:
            same = "layout" if kind == "training" else "engine, quantization, concurrency and speculation"
            note = (
                f"the id `{base}` is taken by {holder} (the naming rule gives one id to the same model, GPU, "
                f"GPU count and {same}), so this recipe is `{recipe_id}`; pass --id to name it otherwise"
            )
    doc["id"] = recipe_id
    return Scaffold(recipe_path(kind, model, recipe_id), render(doc, dated_today=answers.measured is None), note)


_COMMENTS = {
    "id": "Derived by the naming rule (docs/contributing.md); it must equal the file name.",
    "hardware": f"gpu: an id from {HARDWARE_PATH}; count: GPUs used, as a number.",
    "measured": DATE_COMMENT,
    "software": "Each component pinned: version (an exact release), commit (a SHA) or image (with @sha256:).",
    "layout": "Megatron-Core parallel layout: TP x PP x CP x DP = hardware.count.",
    "serving": "What the benchmark ran with: --max-concurrency, context length, speculative decoding.",
    "claimed": "Filled by `orv add-run --recipe <this file> --write-recipe` from the run's recomputed figures.",
    "runs": "sha256: references to run files under runs/; `orv add-run --write-recipe` appends them.",
}


def render(document: Mapping[str, Any], dated_today: bool = False) -> str:
    schema_line = TRAINING_SCHEMA_LINE if document["kind"] == "training" else INFERENCE_SCHEMA_LINE
    header = (
        f"{schema_line}\n# Written by `orv new`. Next: attach a run with `orv add-run --recipe <this file> "
        f"--write-recipe OUTPUT`, then `orv check`."
    )
    comments = {**_COMMENTS, "measured": DEFAULT_DATE_COMMENT} if dated_today else _COMMENTS
    return yamledit.new_document(
        document, comments=comments, header=header, flow_keys=frozenset({"hardware", "layout", "serving"})
    )


def write(root: str, rel_path: str, text: str, replace_draft: bool = False) -> str:
    """Write the new recipe (atomically); never over an existing file, except an untracked draft with --force."""

    full = os.path.join(root, rel_path)
    with writer_lock(root):  # no other orv creates the same file between the look and the write
        materialize(root, [rel_path])  # a sparse checkout keeps it (and shows a tracked one, refused below)
        if os.path.lexists(full) and not (replace_draft and rel_path not in (tracked(root, rel_path) or [])):
            raise ScaffoldError(f"{rel_path} exists already", "pass another --id, or edit that file")
        write_atomic(full, text.encode("utf-8"))
    return full


def catalog_of(root: str) -> CatalogView:
    try:
        return load_catalog(root)
    except ImportInputError as exc:
        raise ScaffoldError(f"{exc.path}:{exc.line}: {exc.message}", exc.hint) from None


def fill_interactively(answers: Answers, ask: Ask, author: str | None = None) -> Answers:
    """Ask for what is missing; `ask(prompt, default)` is click.prompt on a terminal."""
    updates: dict[str, Any] = {}
    if not answers.model:
        updates["model"] = ask("Model (catalog id, e.g. qwen3.8-27b)", None)
    if not answers.gpu:
        updates["gpu"] = ask("GPU (catalog id, e.g. h100)", None)
    if answers.count is None:
        updates["count"] = int(ask("GPU count", 1 if answers.kind == "inference" else 8))
    role = main_role(answers.kind)
    if role not in answers.components:
        example = "vllm@0.11.0" if role == "engine" else "megatron-core@0.14.0"
        updates["components"] = {
            **answers.components,
            role: ask(f"{role.capitalize()} NAME@VERSION (e.g. {example})", None),
        }
    if answers.kind == "inference" and not answers.quant:
        updates["quant"] = ask("Quantization (bf16, fp8, nvfp4, awq-int4, ...)", "bf16")
    if answers.kind == "inference" and not answers.workload:
        updates["workload"] = ask(
            "Workload (catalog id: isl1k-osl1k, isl1k-osl8k, isl8k-osl1k, single-stream-256, ...)", None
        )
    if not answers.author:
        updates["author"] = ask("Author (person or lab shown on the boards)", author)
    return dataclasses.replace(answers, **updates)


def missing(answers: Answers) -> list[str]:
    """Options without a default that are still unset (the non-interactive CLI names them)."""
    out = [f"--{name}" for name in ("model", "gpu") if not getattr(answers, name)]
    role = main_role(answers.kind)
    if role not in answers.components:
        out.append(f"--{role}")
    if answers.kind == "training" and answers.count is None:
        out.append("--count")
    if answers.kind == "inference" and not answers.workload:
        out.append("--workload")
    if not answers.author:
        out.append("--author")
    return out


def default_author(root: str) -> str | None:
    """`git config user.name` as git itself resolves it for the registry's checkout, if set (else asked)."""
    return configured_user_name(root)


def new_recipe(
    root: str,
    answers: Answers,
    components: tuple[str, ...],
    engine: str | None,
    framework: str | None,
    ask: Ask | None,
    dry_run: bool,
    today: datetime.date,
    force: bool = False,
) -> Outcome:
    """`orv new`: fill what the person did not say (asking, when `ask` is given), write the recipe, say what next.

    `components` are ROLE=NAME@PIN strings; `engine` and `framework` (NAME@VERSION) take their roles over."""
    parts: dict[str, str] = {}
    for item in components:
        role, sep, spec = item.partition("=")
        if not sep or not role.strip():
            raise BadOptions(f"--component `{item}` is not ROLE=NAME@PIN")
        parts[role.strip()] = spec
    if engine:
        parts["engine"] = engine
    if framework:
        parts["framework"] = framework
    answers = dataclasses.replace(answers, components=parts)
    if ask is not None:
        answers = fill_interactively(answers, ask, author=default_author(root))
    elif not answers.author:
        answers.author = default_author(root)
    left = missing(answers)
    if left:
        raise BadOptions(
            f"missing {', '.join(left)} (or run on a terminal to be asked){_valid_ids(root, answers, left)}"
        )
    outcome = Outcome()
    try:
        rel, text, note = build(root, catalog_of(root), answers, today, force)
        if note:
            outcome.note(f"orv: note: {note}")
        if dry_run:
            outcome.report = text
            return outcome
        with outcome.said_before():
            write(root, rel, text, replace_draft=force)
    except ScaffoldError as exc:
        return outcome.fail(exc.words(), ExitCode.USAGE)  # after the note it may follow
    outcome.out(rel)
    fmt = "vllm|sglang|aiperf|trtllm-bench" if answers.kind == "inference" else "megatron|nemo"
    if answers.components.get("engine", "").split("@")[0] in LLAMA_CPP_SERVED:
        fmt = "llama-bench"  # llama.cpp recipes are measured with llama-bench (docs/contributing.md)
    if answers.kind == "inference":  # the benchmark command comes before the measurement (issue 52)
        outcome.note(f"next: `orv reproduce {rel}` prints the launch and the benchmark that measure its workload;")
    outcome.note(f"next: orv add-run --from {fmt} --recipe {rel} --write-recipe OUTPUT")
    return outcome


def _valid_ids(root: str, answers: Answers, left: list[str]) -> str:
    """The catalog ids a missing --model, --gpu or --workload may take, so the next try can succeed."""
    try:
        catalog = catalog_of(root)
    except OrvError:
        return ""  # a broken catalog says so when the recipe is built
    lists = []
    if "--model" in left:
        lists.append(("--model", sorted(catalog.models)))
    if "--gpu" in left:
        lists.append(("--gpu", sorted(catalog.hardware)))
    if "--workload" in left:
        kinds = {"inference", "llama-bench"} if answers.kind == "inference" else {"sft", "pretrain"}
        lists.append(("--workload", sorted(w for w, spec in catalog.workloads.items() if spec.kind in kinds)))
    return "".join(f"\n  valid {option} ids: {', '.join(ids)}" for option, ids in lists if ids)

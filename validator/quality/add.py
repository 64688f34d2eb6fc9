"""`orv add-run --from lm-eval PATH [--recipe R | --reference-for MODEL]`: store a quality run, name a reference."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from validator.adapters import AdapterError, load_recipe
from validator.diagnostics import Diagnostic, Result, Severity
from validator.errors import AddRunError
from validator.evidence.identity import NOT_LISTED, NOT_RECIPES, evaluated_mismatch
from validator.files import yamledit
from validator.load.pipeline import validate_run_data
from validator.quality import lmeval, verify
from validator.registry.catalog import catalog_entry, raw_entries
from validator.registry.catalog_edits import set_model_references
from validator.registry.layout import MODELS_PATH
from validator.registry.store import StoredRun, store_run_document


def _error(path: str, code: str, message: str, hint: str) -> AddRunError:
    return AddRunError(Result((Diagnostic(code, Severity.ERROR, path, 1, 1, message, hint),)))


def build(
    root: str, path: str, recipe_path: str | None, flags: Mapping[str, Any], reference_for: str | None
) -> tuple[dict[str, Any], list[str]]:
    """The checked quality run document and notes; AddRunError (one line each) when it cannot be stored."""
    notes: list[str] = []
    meta: dict[str, Any] = {}
    checkpoint = None
    if recipe_path and reference_for:
        raise _error(
            path,
            "ORV109",
            "--recipe and --reference-for both given",
            "a reference run is the model at its published precision, not a recipe's configuration",
        )
    if recipe_path:
        try:
            recipe = load_recipe(recipe_path)
        except AdapterError as exc:
            raise AddRunError(exc.result) from None
        if recipe.kind != "inference":
            raise _error(
                recipe_path,
                "ORV109",
                "--from lm-eval backs an inference recipe, not a training one",
                "pass the inference recipe whose served configuration was evaluated",
            )
        meta.update(model=recipe.model, quant=recipe.quant, measured_by=recipe.author)
        checkpoint = getattr(recipe, "checkpoint", None)
    if reference_for:
        meta["model"] = reference_for
    meta.update({k: v for k, v in flags.items() if k in ("model", "quant", "measured_by", "measured_at") and v})
    models = raw_entries(root, MODELS_PATH)
    if not meta.get("model"):
        raise _error(
            path,
            "ORV108",
            "the quality run needs a catalog model",
            "pass --recipe PATH (the recipe this run backs) or --reference-for MODEL",
        )
    if models and meta["model"] not in models:
        raise _error(
            path, "ORV109", f"model {meta['model']!r} is not in {MODELS_PATH}", "pass a model id from the catalog"
        )
    if reference_for and not meta.get("quant"):
        raise _error(
            path,
            "ORV108",
            "a reference run must state its precision",
            "pass --quant, e.g. --quant bf16 (the model's published precision)",
        )
    if not meta.get("measured_by"):
        raise _error(path, "ORV108", "who ran the evaluation is not stated", "pass --measured-by NAME")
    try:
        output = lmeval.read_output(path)
        document = lmeval.to_document(output, meta)
    except lmeval.LmEvalError as exc:
        raise AddRunError(exc.result) from None

    issues = validate_run_data(document)
    if issues:
        first = issues[0]
        field = ".".join(str(p) for p in first.path) or "the run"
        raise _error(
            path,
            first.code,
            f"the quality run's `{field}` is invalid: {first.message}",
            f"give lm-eval's output unchanged, or pass the missing value as a flag; {first.hint}",
        )
    problems, facts = verify.check(document)
    errors = [p for p in problems if p.code != verify.UNSCORED]
    if errors:
        raise AddRunError(
            Result(tuple(Diagnostic(p.code, Severity.ERROR, path, 1, 1, p.message, p.hint) for p in errors))
        )
    notes.extend(p.message for p in problems if p.code == verify.UNSCORED)
    served = document.get("served_model")
    # the checkpoint: ORV226's rule, as `orv check` holds it (validator/evidence/identity.py)
    spec = catalog_entry(root, MODELS_PATH, meta["model"]) if models else None
    found = evaluated_mismatch(spec, served, checkpoint)
    if found is not None and found.kind == NOT_RECIPES:
        raise _error(
            path,
            "ORV235",
            f"lm-eval evaluated {served!r}, but the recipe serves {checkpoint!r}",
            "evaluate the recipe's own checkpoint; a quality run of another checkpoint is no evidence",
        )
    if found is not None and spec is not None:
        if found.derived is not None:
            why = f"derived from {found.derived.base!r}, which the recipe does not name"
            hint = f"name it in the recipe (`checkpoint: {found.derived.id}`), or evaluate the model itself"
        else:
            why = (
                f"not one of {meta['model']}'s checkpoints ({', '.join(spec.checkpoints)})"
                if found.kind == NOT_LISTED
                else f"whose name does not mention {meta['model']} ({spec.name}, family {spec.family})"
            )
            hint = f"evaluate the model itself, or add the checkpoint to {MODELS_PATH}"
        raise _error(path, "ORV235", f"lm-eval evaluated {served!r}, {why}", hint)
    for task in facts.tasks.values():
        if reference_for and not task.full:
            raise _error(
                path,
                "ORV232",
                f"{task.task}: a reference must be a full-set run, this one covers "
                f"{task.n} of {task.original} documents",
                "run lm-eval without --limit or --samples for the reference",
            )
        if not task.full:
            notes.append(f"{task.task}: {task.n} of {task.original} documents: a subset run can only be `partial`")
    return document, notes


def add(
    root: str, path: str, recipe_path: str | None, flags: Mapping[str, Any], reference_for: str | None
) -> tuple[StoredRun, list[str]]:
    document, notes = build(root, path, recipe_path, flags, reference_for)
    stored = store_run_document(root, document, path)
    if reference_for:
        set_reference(root, reference_for, {t: f"sha256:{stored.digest}" for t in document["tasks"]})
        notes.append(
            f"{MODELS_PATH}: {reference_for}.quality_reference now names this run for "
            f"{', '.join(sorted(document['tasks']))}"
        )
    return stored, notes


def set_reference(root: str, model: str, refs: Mapping[str, str]) -> None:
    """Write `quality_reference: {task: sha256:…}` into the model's entry, round-trip (comments, order kept)."""
    try:
        set_model_references(root, model, "quality_reference", refs)
    except (OSError, KeyError, TypeError, yamledit.EditError) as exc:
        raise _error(
            MODELS_PATH,
            "ORV109",
            f"cannot record the reference for {model} ({exc})",
            f"add `quality_reference: {{{', '.join(f'{t}: {r}' for t, r in refs.items())}}}` under `{model}:` by hand",
        ) from None

"""What a recipe lacks to be re-run and to be ranked (the import report's "What each row lacks").

Read from the recipe alone, never guessed: to re-run, what `orv reproduce` names as missing (a
pinned stack, the launch, a workload with lengths, a concurrency, a checkpoint); to be ranked and
verified, what the tiers and boards need (a run file, per-request samples that prove a workload, a
named workload instead of `unspecified`, a pinned stack).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from validator.evidence.tiers import legacy_capped
from validator.models import UNSPECIFIED, InferenceRecipe, Recipe, TrainingRecipe
from validator.stacks.reproduce import reproduce_recipe


@dataclass(frozen=True)
class Lacks:
    rerun: tuple[str, ...]  # to run it again exactly
    rank: tuple[str, ...]  # to be ranked against new recipes and rise in tier

    def text(self) -> str:
        parts = []
        if self.rerun:
            parts.append("to re-run: " + "; ".join(self.rerun))
        if self.rank:
            parts.append("to rank: " + "; ".join(self.rank))
        return " — ".join(parts) or "nothing"


def recipe_lacks(root: str, recipe: Recipe, rel: str, runs_with_samples: int) -> Lacks:
    """What `recipe` (stored at `rel` in the registry at `root`) lacks; `runs_with_samples` counts its run
    files that hold per-request samples."""
    rank: list[str] = []
    if legacy_capped(recipe):
        rank.append("a pinned stack (the source states none: T0 until pinned)")
    if isinstance(recipe, InferenceRecipe) and recipe.workload_id == UNSPECIFIED:
        rank.append("a workload (`unspecified`: ranked only among imported rows, at most T1)")
    if not recipe.runs:
        rank.append("a run file (its figures are claims: T0)")
    elif isinstance(recipe, InferenceRecipe) and runs_with_samples == 0:
        rank.append("per-request samples (its run files hold a headline only: no workload can be proven, at most T1)")
    rerun = list(reproduce_recipe(root, recipe, rel).missing)
    # reproduce names the concurrency only once a workload gives the benchmark its lengths; a row lacks both
    if isinstance(recipe, InferenceRecipe) and not recipe.points() and "serving.concurrency" not in rerun:
        rerun.append("serving.concurrency")
    return Lacks(tuple(rerun), tuple(rank))


def document_lacks(root: str, document: dict[str, Any], rel: str, runs_with_samples: int) -> str:
    """recipe_lacks of a recipe document an importer writes, as one line of the import report."""
    model = TrainingRecipe if document.get("kind") == "training" else InferenceRecipe
    try:
        recipe = model.model_validate(document)
    except ValidationError as exc:  # the importer writes only schema-valid recipes: say so if one is not
        return f"the written recipe does not load ({exc.error_count()} schema error(s))"
    return recipe_lacks(root, recipe, rel, runs_with_samples).text()

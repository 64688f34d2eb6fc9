"""ORV230-ORV239, ORV620: quality runs (lm-eval accuracy evidence) are re-scored, secret-free, and gate the tiers."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.errors import LoadError
from validator.evidence.arrival import later_of
from validator.evidence.identity import NOT_LISTED, NOT_RECIPES, Mismatch, evaluated_mismatch
from validator.evidence.signing import signer
from validator.load.documents import decode_utf8, parse_yaml
from validator.models import InferenceRecipe, ModelSpec
from validator.pr.change import Change
from validator.quality import status as quality_status
from validator.quality import verify
from validator.registry.layout import MODELS_PATH
from validator.registry.snapshot import Catalog, RunFile, Snapshot

E, W = Severity.ERROR, Severity.WARNING


def _problems(run: RunFile, code: str) -> Iterator[Finding]:
    for p in run.quality_problems:  # found once by the loader (validator/quality/verify.py)
        if p.code == code:
            yield Finding(run.path, p.message, p.hint, at=p.at)


@check("ORV230", E, "quality headline or stderr disagrees with the re-scored samples", scope="run-file")
def quality_headline(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A quality run's score is recomputed, not read. For each task and filter, orv re-scores every
    document and recomputes the mean (the headline) and lm-eval's `mean_stderr` (sample standard
    deviation / sqrt(n)); a results file whose headline or stderr differs from them was edited, or
    belongs to another samples file. Give `orv add-run --from lm-eval` the results and samples of
    one run, unchanged.
    """
    yield from _problems(run, verify.HEADLINE)


@check("ORV231", E, "quality sample value disagrees with its re-scored response", scope="run-file")
def quality_sample(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    Each document's per-filter value (and the answer lm-eval extracted) must be what the task's
    filters and metric give for the stored response and target: for gsm8k, the strict-match and
    flexible-extract regexes and exact_match with gsm8k.yaml's regexes_to_ignore and ignore_case.
    A value flipped to "correct" without changing the response is caught here. Re-run the
    evaluation rather than editing its output.
    """
    yield from _problems(run, verify.SAMPLE)


@check("ORV232", E, "quality run coverage disagrees with its samples", scope="run-file")
def quality_coverage(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    `n-samples` (original, effective), `--limit` and the samples' `doc_id`s must agree: effective
    = the number of documents logged, no doc_id twice or outside the task's documents, every
    logged filter for every document, and a run that says `--limit` cannot cover the whole set.
    A `--limit` run relabelled as a full run is caught here. A subset run is allowed, but it can
    only reach `partial` quality status.
    """
    yield from _problems(run, verify.COVERAGE)


@check("ORV233", E, "quality run task_hashes do not hash its samples", scope="run-file")
def quality_task_hash(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    lm-eval's `task_hashes` entry is the SHA-256 of every logged sample's doc_hash + prompt_hash
    + target_hash, in order (lm_eval/loggers/evaluation_tracker.py). orv recomputes it from the
    stored hashes, and each stored target must hash to its target_hash. The task hash is how two
    runs are known to have asked the same questions with the same prompts; one that does not
    hash its samples cannot be compared with a reference.
    """
    yield from _problems(run, verify.TASK_HASH)


@check("ORV234", E, "credential stored in a run file", scope="run-file")
def quality_credential(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    lm-eval copies everything given in `--model_args` (api_key, auth_token, …) into the results'
    `config.model_args` and `configs.<task>.metadata`. `orv add-run --from lm-eval` drops
    credential-like keys (api_key, token, secret, password, credential, access/private key …)
    before writing; a run file that still carries one with a real-looking value is rejected.
    The key was pushed, so rotate it first, then re-add the run with `orv add-run`.
    """
    data = run.doc.data
    if not isinstance(data, dict) or data.get("kind") != "quality":
        return
    yield from _problems(run, verify.CREDENTIAL)


@check("ORV237", W, "quality task cannot be re-scored", scope="run-file")
def quality_unscored(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    orv re-scores the tasks it has a scorer for (validator/quality/scorers/: gsm8k), and only as
    the pinned task YAML defines them. A task without a scorer, or run with changed filters or
    metric settings, is recorded and shown but cannot make quality `verified`. Adding a task is
    one scorer module and its golden case.
    """
    yield from _problems(run, verify.UNSCORED)


@check("ORV235", E, "quality run evaluated another model or checkpoint", related_by="r")
def quality_identity(snapshot: Snapshot) -> Iterator[Finding]:
    """
    The model lm-eval evaluated (`config.model_args.model`, else `model_name`) must be the
    recipe's `checkpoint`, or, for a recipe without one and for a model's reference run, the
    catalog model's by ORV226's rule: one of its `checkpoints` when listed (a derived checkpoint
    only when the recipe names it), else a name that mentions its family, name or an alias.
    Names compare as in ORV226 (case ignored, a local path by its last folders). The run's
    `model` and `quant` must be the recipe's. A quality run of another checkpoint says nothing
    about this recipe: evaluate the served checkpoint itself.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, InferenceRecipe):
            continue
        for index, digest in enumerate(recipe.run_digests):
            run = snapshot.runs.get(digest)
            q = run.quality if run is not None else None
            if q is None:
                continue
            spec = snapshot.catalog.models.get(recipe.model)
            wrong = None
            if q.model != recipe.model:
                wrong = f"model {q.model!r}, not the recipe's {recipe.model!r}"
            elif q.quant is not None and q.quant != recipe.quant:
                wrong = f"quant {q.quant!r}, not the recipe's {recipe.quant!r}"
            else:  # the checkpoint: ORV226's rule (validator/evidence/identity.py)
                found = evaluated_mismatch(spec, q.served_model, recipe.checkpoint)
                wrong = f"checkpoint {q.served_model!r}, {_why(found, spec, recipe.checkpoint)}" if found else None
            if wrong:
                yield Finding(
                    entry.path,
                    f"quality run sha256:{digest[:12]}… evaluated {wrong}",
                    "add a quality run of the recipe's own checkpoint, and remove this one from `runs:`",
                    at=("runs", index),
                )
    for model_id, spec in snapshot.catalog.models.items():
        for task, ref in sorted(spec.quality_reference.items()):
            run = snapshot.runs.get(ref.split(":", 1)[-1])
            q = run.quality if run is not None else None
            if q is not None and (q.model != model_id or evaluated_mismatch(spec, q.served_model, None) is not None):
                yield Finding(
                    MODELS_PATH,
                    f"{model_id}'s {task} quality reference evaluated {q.model}/{q.served_model!r}, not this model",
                    "store a reference run of this model with `orv add-run --from lm-eval DIR "
                    f"--reference-for {model_id} --quant PRECISION`",
                    at=("models", model_id, "quality_reference", task),
                )


def _why(found: Mismatch, spec: ModelSpec | None, recipe_checkpoint: str | None) -> str:
    if found.kind == NOT_RECIPES:
        return f"but the recipe serves {recipe_checkpoint!r}"
    if found.derived is not None:
        return f"derived from {found.derived.base!r}, which the recipe does not name"
    if found.kind == NOT_LISTED and spec is not None:
        return f"not one of {', '.join(spec.checkpoints)}"
    return f"whose name does not mention {spec.name if spec else 'the model'}"


@check("ORV236", W, "quality below the model's bound", related_by="r")
def quality_below(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A recipe whose quality run is comparable with its model's reference (full set, same
    task_hashes) but scores under `quality_bound` (default 0.99) times the reference on some
    filter is `below`: it is capped at T1, marked on the board and left out of rankings. The
    message gives the worst filter's ratio. A broken low-bit export that answers fast but wrong
    is exactly what this catches; re-quantize or serve at higher precision.
    """
    for entry, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, InferenceRecipe) or not any(
            (snapshot.runs.get(d) is not None and snapshot.runs[d].quality is not None) for d in recipe.run_digests
        ):
            continue
        result = quality_status.evaluate(snapshot.runs, snapshot.catalog.models.get(recipe.model), recipe)
        if result.status == "below":
            yield Finding(
                entry.path,
                f"quality below the bound: {result.why}",
                "serve the model at a precision that keeps every filter within the bound; the recipe "
                "stays on the board at T1 at most, out of the ranking",
                at=("runs",),
            )


def _quality_run_digests(snapshot: Snapshot) -> set[str]:
    return {d for d, run in snapshot.runs.items() if run.quality is not None}


@check("ORV238", E, "quality reference missing, or quality run referenced by nothing", related_by="r")
def quality_references(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A model's `quality_reference` names, per task, a quality run stored in runs/ (`sha256:…`) of
    that task; a quality run must be named by a recipe's `runs:` or by a model's
    `quality_reference` (otherwise it is an orphan, like ORV204 for throughput runs).
    """
    named: set[str] = set()
    for model_id, spec in snapshot.catalog.models.items():
        for task, ref in sorted(spec.quality_reference.items()):
            digest = ref.split(":", 1)[-1]
            named.add(digest)
            run = snapshot.runs.get(digest)
            if run is None or run.quality is None or task not in run.quality.tasks:
                what = (
                    "is not in runs/"
                    if run is None
                    else ("is not a quality run" if run.quality is None else f"has no {task} task")
                )
                yield Finding(
                    MODELS_PATH,
                    f"{model_id}'s {task} quality reference {ref[:19]}… {what}",
                    f"store the reference with `orv add-run --from lm-eval DIR --reference-for {model_id}"
                    " --quant PRECISION`",
                    at=("models", model_id, "quality_reference", task),
                )
    referenced = set(snapshot.references())
    for digest in sorted(_quality_run_digests(snapshot) - named - referenced):
        yield Finding(
            snapshot.runs[digest].path,
            "quality run referenced by no recipe and no model's quality_reference",
            "list its sha256: in the `runs:` of the recipe it evaluated, or delete it",
            line=1,
            col=1,
        )


def _quality_users(snapshot: Snapshot) -> dict[str, list[InferenceRecipe]]:
    """Quality run digest -> the recipes that offer it as evidence and need it (status.needs_quality)."""
    users: dict[str, list[InferenceRecipe]] = {}
    for _, recipe in snapshot.valid_recipes():
        if not isinstance(recipe, InferenceRecipe):
            continue
        spec = snapshot.catalog.models.get(recipe.model)
        for digest in recipe.run_digests:
            run = snapshot.runs.get(digest)
            if run is None or run.quality is None:
                continue
            tasks = sorted(spec.quality_reference) if spec is not None and spec.quality_reference else []
            ref_quant = quality_status.reference_quant(snapshot.runs, spec, tasks[0]) if tasks else None
            if quality_status.needs_quality(recipe, ref_quant):
                users.setdefault(digest, []).append(recipe)
    return users


@check("ORV239", E, "quality run repeats another evaluation's responses", related_by="q")
def quality_runs_are_their_own(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A quality run shows a configuration's accuracy only if that configuration produced it. When its
    per-document responses are the model's reference run's — or another recipe's quality run's — on
    at least 98% of the documents both answered, it is that other evaluation (copied, with perhaps
    `base_url` or a few responses edited): greedy decoding at another precision changes far more
    text than that (docs/quality.md, "Identical responses"). It cannot verify this recipe.

    A lossless configuration — the reference's weights and KV cache with speculative decoding —
    is expected to answer exactly as the reference does: its quality run may repeat the reference's
    responses when a registered measurer other than the reference's signer signed it. Two recipes
    at the same precision likewise need their runs signed by two different measurers.

    Reported on the newcomer (the run a pull request adds; on main the later by merge order). Run
    lm-eval against the recipe's own served configuration and store that output.
    """
    users = _quality_users(snapshot)
    who = {digest: signer(snapshot, digest) for digest in users}
    flagged: dict[str, str] = {}
    for digest, recipes in sorted(users.items()):
        run = snapshot.runs[digest]
        assert run.quality is not None
        for recipe in recipes:
            spec = snapshot.catalog.models.get(recipe.model)
            for task, ref in sorted(spec.quality_reference.items()) if spec is not None else ():
                ref_run = snapshot.runs.get(ref.split(":", 1)[-1])
                if (
                    ref_run is None
                    or ref_run.quality is None
                    or task not in ref_run.quality.tasks
                    or task not in run.quality.tasks
                ):
                    continue
                mine, theirs = run.quality.tasks[task], ref_run.quality.tasks[task]
                if not quality_status.own_evaluation(
                    digest,
                    mine,
                    ref_run.name_digest,
                    theirs,
                    recipe,
                    ref_run.quality.quant,
                    lambda d: signer(snapshot, d),
                ):
                    same, common = quality_status.identical_responses(mine, theirs)
                    flagged.setdefault(
                        run.path,
                        f"its {task} responses are the reference's `{ref_run.path}` on "
                        f"{same} of {common} documents: it cannot show the quality of "
                        f"`{recipe.id}` ({recipe.quant})",
                    )
    # against each other: runs of one model, task and task_hash (the few runs that could be compared)
    groups: dict[tuple[Any, ...], list[str]] = {}
    for digest in users:
        q = snapshot.runs[digest].quality
        assert q is not None
        for task, facts in q.tasks.items():
            groups.setdefault((q.model, task, facts.task_hash), []).append(digest)
    for (_, task, _), digests in sorted(groups.items(), key=lambda item: repr(item[0])):
        task_facts: dict[str, Any] = {}
        for digest in digests:
            q = snapshot.runs[digest].quality
            assert q is not None
            task_facts[digest] = q.tasks[task]
        for a, b in quality_status.repeating_pairs(task_facts):  # a < b, as comparing every pair in order would
            run_a, run_b = snapshot.runs[a], snapshot.runs[b]
            quants = {r.quant for r in users[a] + users[b]}
            lossless = len(quants) == 1 and not any(map(quality_status.kv_quantized, quants))
            if lossless and who[a] is not None and who[b] is not None and who[a] != who[b]:
                continue
            earlier, later = later_of(snapshot, (run_a.path, ""), (run_b.path, ""))
            recipe = users[b if later == run_b.path else a][0]
            flagged.setdefault(
                later,
                f"its {task} responses are those of `{earlier}`, another recipe's "
                f"quality run: it cannot show the quality of `{recipe.id}` ({recipe.quant})",
            )
    for path, why in sorted(flagged.items()):
        yield Finding(
            path,
            f"this quality run repeats another evaluation: {why}",
            "run lm-eval against this recipe's own served configuration and store that output "
            "(a lossless configuration: signed by a registered measurer other than the reference's)",
            line=1,
            col=1,
        )


@check("ORV246", E, "quality run's prompt hashes are another run's at another few-shot count", related_by="q")
def quality_prompts_are_their_own(snapshot: Snapshot) -> Iterator[Finding]:
    """
    lm-eval hashes each document's whole prompt (`prompt_hash`), few-shot examples included, and
    `task_hashes` hashes those per-document hashes. Two runs of one model and task whose task
    hashes are equal therefore sent the same prompts, and cannot state different few-shot counts
    (`n-shot`, or the task config's `num_fewshot`; a run that states none contradicts nothing): one
    run's hashes were pasted from the other's, or its count edited. Such a run would pass for the other's comparable evaluation while saying
    it is something else. Reported on the run that is not the model's quality reference (between
    two other runs, on the later by merge order), naming the other. Store lm-eval's own output of
    the run, unchanged: its own `prompt_hash`es and `task_hashes`.
    """
    references = {
        (model, task): ref.split(":", 1)[-1]
        for model, spec in snapshot.catalog.models.items()
        for task, ref in spec.quality_reference.items()
    }
    groups: dict[tuple[Any, ...], list[str]] = {}
    for digest, run in sorted(snapshot.runs.items()):
        if run.quality is None:
            continue
        for task, facts in sorted(run.quality.tasks.items()):
            if facts.task_hash is not None:
                groups.setdefault((run.quality.model, task, facts.task_hash), []).append(digest)
    flagged: dict[tuple[str, str], str] = {}
    for (model, task, _), digests in sorted(groups.items(), key=lambda item: repr(item[0])):
        # runs sharing prompts almost always share a count: compare each run with one run of every
        # other count (not every pair: a model's runs at one count are many)
        by_count: dict[str, list[str]] = {}  # keyed by the counts as JSON: a config may state any value
        counts_of: dict[str, tuple[Any, Any]] = {}
        for digest in digests:
            quality = snapshot.runs[digest].quality
            assert quality is not None
            counts = quality_status.few_shot_counts(quality.tasks[task])
            key = json.dumps(counts, sort_keys=True, default=str)
            by_count.setdefault(key, []).append(digest)
            counts_of[digest] = counts
        if len(by_count) < 2:
            continue
        reference = references.get((model, task))
        for shots, members in sorted(by_count.items()):
            for digest in members:
                if digest == reference:
                    continue
                others = [reference] if reference in digests else [m[0] for s, m in by_count.items() if s != shots]
                for other in others:
                    if other is None or not quality_status.shots_conflict(counts_of[digest], counts_of[other]):
                        continue
                    run, other_run = snapshot.runs[digest], snapshot.runs[other]
                    if other != reference and later_of(snapshot, (run.path, ""), (other_run.path, ""))[1] != run.path:
                        continue  # the other is the later: it is the one flagged, beside its own class's first
                    flagged.setdefault(
                        (run.path, task),
                        f"its {task} prompts are `{other_run.path}`'s, document for document (the same "
                        f"task_hashes), but it states {quality_status.describe_shots(counts_of[digest])} where that "
                        f"run states {quality_status.describe_shots(counts_of[other])}: a prompt holds its few-shot "
                        "examples, so these hashes are not this run's",
                    )
    for (path, task), why in sorted(flagged.items()):
        yield Finding(
            path,
            f"this quality run's prompt hashes belong to another run: {why}",
            "store lm-eval's own output of this run unchanged (`orv add-run --from lm-eval DIR`): its own "
            "samples' prompt_hash and its own task_hashes; compare with the reference at its few-shot count",
            at=("tasks", task, "n_shot"),
        )


@check("ORV620", E, "pull request changes a model's quality reference or bound", scope="pr")
def quality_gate_changed(change: Change) -> Iterator[Finding]:
    """
    A model's `quality_reference` and `quality_bound` in catalog/models.yaml set the quality gate
    of every recipe of that model: changing or removing them moves every gate at once. Such a
    change needs a maintainer's waiver (`orv-waive:ORV620` label, or `--waive ORV620`), like a
    change to the measurers file. Adding a first reference for a model is not a finding.
    """
    path = MODELS_PATH
    if not any(c.path == path for c in change.files):
        return
    raw = change.base.read(path)
    try:
        base = parse_yaml(decode_utf8(raw)) if raw is not None else {}
    except LoadError:
        return  # the base catalog did not parse: nothing to compare against
    base = base if isinstance(base, dict) else {}
    base_models = base["models"] if isinstance(base.get("models"), dict) else {}
    head_models = change.snapshot.catalog.models
    for model_id, before in sorted(base_models.items()):
        if not isinstance(before, dict):
            continue
        spec = head_models.get(model_id)
        after_ref: dict[str, Any] = dict(spec.quality_reference) if spec is not None else {}
        for task, ref in sorted((before.get("quality_reference") or {}).items()):
            if after_ref.get(task) != ref:
                verb = "removes" if task not in after_ref else "changes"
                yield Finding(
                    path,
                    f"this pull request {verb} {model_id}'s {task} quality reference",
                    "a maintainer must waive ORV620 for this pull request (it moves every quality gate of the model)",
                    at=("models", model_id, "quality_reference"),
                )
        bound_after = spec.quality_bound if spec is not None else None
        if before.get("quality_bound") != bound_after:
            yield Finding(
                path,
                f"this pull request changes {model_id}'s quality_bound "
                f"({before.get('quality_bound', 'default 0.99')} -> {bound_after or 'default 0.99'})",
                "a maintainer must waive ORV620 for this pull request",
                at=("models", model_id),
            )

"""ORV4xx: pinning — every software component and every benchmark tool names one exact build.

The rules themselves (what is an exact release, a commit, a digest) are in validator/stacks/pins.py and
shared with tier derivation and `orv import`; this module only turns them into findings.

Recipes and run files are both checked: a run file's `software` is the stack that produced its
numbers. Run-file software is checked over the snapshot (registry scope) because the recipe rules
share its codes; a run file is canonical JSON on one line, so those findings carry line 1 and the
message names the field. The tool version (ORV405) is checked while the run's bytes are in
memory, with its exact column.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from validator.checks.base import Finding, check
from validator.diagnostics import Severity
from validator.models import InferenceRecipe, Recipe, RunMeta, TrainingRecipe
from validator.registry.snapshot import Catalog, RunFile, Snapshot
from validator.stacks.pins import PinProblem, component_problems, tool_problems

E, W = Severity.ERROR, Severity.WARNING

# The component every recipe must carry, by kind (SPEC §2).
REQUIRED_ROLE = {"training": "framework", "inference": "engine"}
_EXAMPLE_COMPONENT = {
    "framework": '`framework: {name: megatron-core, version: "<the exact release you ran>"}`',
    "engine": '`engine: {name: vllm, version: "<the exact release you ran>"}`',
}
# Which code reports which kind of pin problem (pins.PinProblem.kind). A commit that is not hex
# is reported by what it is: a branch or HEAD (`commit: main`) is ORV402, free text ORV407, a
# dirty marker ORV406.
CODE_BY_KIND = {
    "floating": "ORV402",
    "image": "ORV403",
    "patch": "ORV404",
    "dirty": "ORV406",
    "range": "ORV407",
    "inexact": "ORV407",
}
_RUN_NOTE = " (run files are immutable: record the run again with the pinned stack and reference the new file)"


def _is_legacy(owner: Recipe | RunMeta) -> bool:
    """Grace for a missing pin applies only to recipes `orv import` wrote from a source without versions."""
    return isinstance(owner, (TrainingRecipe, InferenceRecipe)) and owner.provenance is not None


def _problems(path: str, owner: Recipe | RunMeta) -> Iterator[tuple[str, Finding]]:
    """(code, finding) for every pin problem of one recipe or run file, before the code split."""
    note = _RUN_NOTE if isinstance(owner, RunMeta) else ""
    legacy = _is_legacy(owner)
    missing = "ORV408" if legacy else "ORV401"
    role = REQUIRED_ROLE[owner.kind]
    if role not in owner.software:
        article = "an" if owner.kind == "inference" else "a"
        message = f"{article} {owner.kind} {'run' if note else 'recipe'} needs a `{role}` component under `software`"
        hint = f"add {_EXAMPLE_COMPONENT[role]}{note}"
        yield (
            missing,
            Finding(
                path,
                _legacy_message(message) if legacy else message,
                _legacy_hint(hint) if legacy else hint,
                at=("software",),
            ),
        )
    for name, component in sorted(owner.software.items()):
        for problem in component_problems(component):
            if problem.kind == "unpinned" and legacy:
                problem = PinProblem(
                    problem.kind, problem.field, _legacy_message(problem.message), _legacy_hint(problem.hint)
                )
            code = missing if problem.kind == "unpinned" else CODE_BY_KIND[problem.kind]
            yield code, _finding(path, ("software", name), problem, note)


def _legacy_message(message: str) -> str:
    return f"stack not stated by the source ({message})"


def _legacy_hint(hint: str) -> str:
    return f"to rise above T0, {hint}"


def _finding(path: str, prefix: tuple[str, ...], problem: PinProblem, note: str) -> Finding:
    where = ".".join(map(str, (*prefix, *problem.field)))
    return Finding(path, f"`{where}`: {problem.message}", problem.hint + note, at=(*prefix, *problem.field))


def _all_problems(snapshot: Snapshot) -> Iterator[tuple[str, Finding]]:
    for entry, recipe in snapshot.valid_recipes():
        yield from _problems(entry.path, recipe)
    for run in snapshot.runs.values():
        if run.meta is not None:
            yield from _problems(run.path, run.meta)


def _grouped(snapshot: Snapshot) -> dict[str, list[Finding]]:
    grouped: dict[str, list[Finding]] = {}
    for c, f in _all_problems(snapshot):
        grouped.setdefault(c, []).append(f)
    return grouped


def _only(code: str, snapshot: Snapshot) -> Iterator[Finding]:
    """Seven codes share one pass over the registry, made once per snapshot."""
    return iter(snapshot.memo("pinning-problems", lambda: _grouped(snapshot)).get(code, ()))


@check("ORV401", E, "software not pinned", per_file=True)
def unpinned_component(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A software component names no build at all — no `version`, `commit` or `image` — or a
    training recipe has no `framework` component, an inference recipe no `engine`. Without a pin
    nobody can run the same stack again, so the entry is rejected. Checked in recipes and in run
    files.

    Write one of: `version: "<the exact release you ran>"` (quoted), `commit: "<40-hex SHA>"`, or
    `image: <repository>@sha256:<digest>`. A recipe imported by `orv import` from a source that
    never recorded versions gets ORV408 (a warning) instead.
    """
    return _only("ORV401", snapshot)


@check("ORV402", E, "floating version", per_file=True)
def floating_version(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A `version` is a moving target — latest, nightly, main, master, HEAD, stable, edge, beta or
    dev — and no `commit` says which build it was; or a `commit` is a branch name or HEAD rather
    than a SHA. Tomorrow the same words name different code.

    Write the exact release (`version: "<the exact release you ran>"`), or keep the branch name and
    add the commit it pointed at: `commit: "<40-hex SHA>"` (`git rev-parse HEAD`).
    """
    return _only("ORV402", snapshot)


@check("ORV403", E, "image without digest", per_file=True)
def image_without_digest(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A container `image` is named by tag only (`vllm/vllm-openai:v0.30.0`, `…:latest`). Tags are
    re-pushed; only the digest names fixed bytes.

    Write `image: <repository>@sha256:<digest>` (`docker buildx imagetools inspect IMAGE` prints
    the digest; a tag may stay in front of it: `repo:tag@sha256:…`).
    """
    return _only("ORV403", snapshot)


@check("ORV404", E, "patch without sha256", per_file=True)
def patch_without_hash(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A component lists a patch without its `sha256`. A patch named only by file name or URL can
    change under the same name, and with it the numbers.

    Write `patches: [{name: fix-allreduce.patch, sha256: <64 hex>}]` (`sha256sum FILE`).
    """
    return _only("ORV404", snapshot)


@check("ORV405", E, "tool version not pinned", scope="run-file")
def tool_version_not_pinned(run: RunFile, catalog: Catalog) -> Iterator[Finding]:
    """
    A run file's `tool.version` is missing or is not one exact release of the benchmark tool
    (a floating word, a range, free text, a dirty build), or its `tool.commit` is not a hex SHA.
    The same tool version is what lets anyone recompute the figures the same way; a run without
    it cannot rise above T0.

    Record the exact release, e.g. `"tool": {"name": "llm-inference-bench", "version": "0.8.0"}`,
    and store the run again with `orv add-run` (a run file's name is its hash, so the corrected
    file is a new file; update the recipe's `runs:`).
    """
    if run.meta is None:
        return  # a missing tool version is reported by the schema translation, as ORV405 too
    for problem in tool_problems(run.meta.tool):
        where = ".".join(map(str, problem.field))
        yield Finding(run.path, f"`{where}`: {problem.message}", problem.hint + _RUN_NOTE, at=problem.field)


@check("ORV406", E, "dirty build", per_file=True)
def dirty_build(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A version (or commit) marks a build from a modified work tree: setuptools-scm's date suffix
    (`0.1.dev21830+g8244d1c44.d20261015`) or `dirty`. The commit in it does not contain the code
    that ran, so nobody can rebuild it.

    Commit the local changes (or list them under `patches:` with their sha256), rebuild from the
    clean checkout and record that version, e.g. `version: "0.1.dev21830+g8244d1c44"`.
    """
    return _only("ORV406", snapshot)


@check("ORV407", E, "version not one exact release", per_file=True)
def inexact_version(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A `version` is a range, a wildcard or free text rather than one exact release (`>=0.30`,
    `0.30.*`, `v0.30.0 fork`, `ExLlamaV3 1.5.1 + patches`); or a `commit` is not a hexadecimal
    SHA of at least 7 characters. A range names many builds; prose names none.

    Write the single release you ran, quoted: `version: "<the exact release you ran>"`. A fork or
    local build is pinned by `commit: "<40-hex SHA>"` (with `repository:`), its patches under `patches:` with
    their sha256; explanations belong in `notes`.

    Exact means one release by a standard that names it (docs/versions.md): PEP 440, as the
    `packaging` library parses it (normalised spellings included, no wildcard, no whitespace), or
    SemVer 2.0.0, by the regular expression semver.org publishes (optionally after a `v`); the
    finding says which grammars were tried. Engines with a release scheme of their own are held to
    it instead: llama.cpp's build tags (`b6800`), PEP 440 for vLLM and SGLang, `x.y.z[rcN]` for
    TensorRT-LLM. A `version` that is an image digest (`sha256:<64 hex>`) is exact for any component.
    """
    return _only("ORV407", snapshot)


@check("ORV408", W, "legacy entry without a stated stack", per_file=True)
def legacy_stack_not_stated(snapshot: Snapshot) -> Iterator[Finding]:
    """
    A recipe imported by `orv import` (it carries `provenance`) from a source that never recorded
    software versions — seed 000's leaderboard has no software column — has a component without
    any pin, or no framework/engine at all. This is a warning, not an error: the source did not
    state the stack. Such entries stay at T0 and the boards mark them as legacy.

    Pin it to rise above T0: `version: "<the exact release you ran>"`, `commit: "<40-hex SHA>"` or
    `image: <repository>@sha256:<digest>`; `provenance` stays as the record of where the entry
    came from. Floating, dirty or free-text versions get no such grace (ORV402, ORV406, ORV407),
    and neither do run files.
    """
    return _only("ORV408", snapshot)


def codes_by_kind() -> Mapping[str, str]:
    """Which code reports each pins.PinProblem kind (for the import report and tests)."""
    return dict(CODE_BY_KIND, unpinned="ORV401")

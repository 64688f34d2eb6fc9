"""What getting the registry costs a pull-request gate and a contributor (issue 32): bytes and time.

On registries with history (bench/history.py: 1,000 / 10,000 / 100,000 run files, cached under
/tmp/orv-bench/), served from a local `file://` remote with `uploadpack.allowFilter` (standing in
for GitHub), it measures side by side:

- transfer: a full clone (fetch-depth 0, checkout), a blobless partial clone (`--filter=blob:none`,
  full checkout) and a blobless sparse clone of what the gate needs (the sparse patterns of the
  pull-request workflow's checkout, or SPARSE_DEFAULT when it has none, plus the pull request's
  changed files);
- the gate: the pull-request workflow's checkout steps, emulated as actions/checkout runs them,
  then the Action's command (`orv check --root R --base <base sha> --widen --format github --summary F
  --github-output G`) on a one-recipe pull request. `old` is the workflow before issue 32
  (fetch-depth 0, plus a checkout of the base commit); `new` is whatever
  .github/workflows/pull-request.yml says when this runs (its checkouts' fetch-depth, filter and
  sparse patterns are read from the file, and its `run:` steps before the gate are run under bash,
  as the step that writes the base commit's rules is). If orv cannot check the new checkout, the
  row says so;
- a contributor: a blobless sparse clone, then `orv check --base origin/main` in it.

Bytes are what the remote's upload-pack sent (a counting wrapper set as the remote's uploadpack,
so fetches git makes on demand count too), which do not depend on the network; times are local
wall seconds (no network), so they show the work, not a runner's bandwidth. Each row is the
fastest of 3 runs below 100,000 run files and one run at 100,000 (`--repeat`).

    python bench/clone.py --runs 1000 10000 100000 --workflow both
    python bench/clone.py --shards 4 8 --shard-runs 100000
    python bench/clone.py --runs 1000 10000 30000 --workflow new --gate-only --copied-run \
        --results bench/clone-results-copied.json   # a pull request whose check walks the history
    python bench/clone_table.py   # the docs/benchmarks.md tables from bench/clone-results.json
    python bench/clone.py --registry /tmp/g1k /tmp/g10k --gate-only --workflow new \
        --results bench/clone-gate-main-shape.json   # the gate on bench/generate.py's main-shaped registries

`--registry DIR ...` measures the gate on registries bench/generate.py wrote (main-shaped: every check
runs, runs of one shape tie by chance as on main) instead of bench/history.py's: each gets a `pr`
branch holding bench/run.py's one-training-recipe pull request (bench/run.py prepare_pr's), made once.
Their boards must be the measured orv's (the gate trusts only keys its own orv stamped).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.history import CACHE, counts, generate_history  # noqa: E402

ORV = str(Path(sys.executable).with_name("orv"))
WORKFLOW = REPO / ".github" / "workflows" / "pull-request.yml"
RESULTS = HERE / "clone-results.json"

# What the gate reads besides the change when the workflow names no sparse patterns (issue 32).
SPARSE_DEFAULT = ["/catalog/", "/measurers/", "/boards/keys.json"]
# The workflow before issue 32: the pull request with all history, and the base commit beside it.
OLD_STEPS = [
    {"path": "pull-request", "fetch-depth": 0},
    {"ref": "${{ github.event.pull_request.base.sha }}", "path": "base-rules"},
]
COUNTS = ("errors", "warnings", "notices")  # the Action's outputs a row keeps
GIT_ENV = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1", "GIT_TERMINAL_PROMPT": "0"}
COUNTER = '''#!/usr/bin/env python3
"""git upload-pack, counting the bytes it sends into $ORV_BENCH_BYTES (one line per fetch)."""
import os, subprocess, sys
child = subprocess.Popen(["git", "upload-pack", *sys.argv[1:]], stdout=subprocess.PIPE)
sent = 0
while chunk := os.read(child.stdout.fileno(), 1 << 16):
    view = memoryview(chunk)
    while view:
        view = view[os.write(1, view):]
    sent += len(chunk)
code = child.wait()
with open(os.environ["ORV_BENCH_BYTES"], "a") as log:
    log.write(f"{sent}\\n")
sys.exit(code)
'''


def checkout_steps(workflow: Path) -> list[dict[str, Any]]:
    """The `with:` of each actions/checkout step of the pull-request workflow, in order."""
    return [step for step in workflow_steps(workflow) if "run" not in step]


def workflow_steps(workflow: Path) -> list[dict[str, Any]]:
    """The steps before the gate, in order: each actions/checkout step's `with:`, and each `run:` step as
    {"run": script, "env": its env} (the base commit's rules are written by one)."""
    doc = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    steps = [step for job in doc["jobs"].values() for step in job.get("steps", [])]
    out: list[dict[str, Any]] = []
    for step in steps:
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            out.append(dict(step.get("with") or {}))
        elif "run" in step:
            label = "base-rules" if "base-rules" in step["run"] else "run"  # the folder it writes
            out.append({"run": step["run"], "env": dict(step.get("env") or {}), "path": label})
    return out


def patterns(step: dict[str, Any]) -> list[str]:
    return [line.strip() for line in str(step.get("sparse-checkout") or "").splitlines() if line.strip()]


class Meter:
    """Runs git and orv with the byte counter, timing each step."""

    def __init__(self, remote: Path, scratch: Path, orv: str = ORV) -> None:
        self.remote, self.scratch, self.orv_path = remote, scratch, orv
        self.counter = scratch / "upload-pack-counter"
        self.counter.write_text(COUNTER)
        self.counter.chmod(0o755)
        self.log = scratch / "bytes.log"
        self.env = {**os.environ, **GIT_ENV, "ORV_BENCH_BYTES": str(self.log)}

    def sent(self) -> int:
        return sum(int(line) for line in self.log.read_text().split()) if self.log.exists() else 0

    def fetches(self) -> int:
        return len(self.log.read_text().split()) if self.log.exists() else 0

    def git(self, cwd: Path, *args: str) -> str:
        out = subprocess.run(["git", *args], cwd=cwd, env=self.env, capture_output=True, text=True)
        if out.returncode:
            raise RuntimeError(f"git {' '.join(args)}: {out.stderr.strip()[-400:]}")
        return out.stdout.strip()

    def init(self, dest: Path) -> None:
        dest.mkdir(parents=True)
        self.git(dest, "init", "-q")
        self.git(dest, "remote", "add", "origin", f"file://{self.remote}")
        self.git(dest, "config", "remote.origin.uploadpack", str(self.counter))

    def checkout(self, dest: Path, step: dict[str, Any], ref: str, changed: list[str]) -> None:
        """One actions/checkout step as actions/checkout runs it (src/git-source-provider.ts): init,
        fetch (depth 0: every branch and tag; else the one commit at that depth; `filter`, or
        blob:none when sparse), sparse-checkout, checkout. `changed` paths, when given, are added
        to a non-cone sparse checkout of the pull request."""
        self.init(dest)
        depth = int(step.get("fetch-depth", 1))
        sparse = patterns(step)
        flt = step.get("filter") or ("blob:none" if sparse else None)
        fetch = ["-c", "protocol.version=2", "fetch", "--prune", "--no-recurse-submodules", "--quiet"]
        fetch += [f"--filter={flt}"] if flt else []
        if depth <= 0:
            fetch += ["origin", "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*"]
        else:
            fetch += ["--no-tags", f"--depth={depth}", "origin", f"+{ref}:refs/remotes/origin/checked-out"]
        self.git(dest, *fetch)
        if sparse:
            cone = str(step.get("sparse-checkout-cone-mode", True)).lower() != "false"
            self.git(
                dest,
                "sparse-checkout",
                "set",
                *([] if cone else ["--no-cone"]),
                *sparse,
                *([] if cone or step.get("ref") else changed),
            )
        self.git(dest, "checkout", "--quiet", "--force", ref)

    def run(self, script: str, cwd: Path, env: dict[str, str]) -> None:
        """A workflow's `run:` step, under bash as GitHub runs it, with the counter's environment."""
        out = subprocess.run(
            ["bash", "-e", "-c", script], cwd=cwd, env={**self.env, **env}, capture_output=True, text=True
        )
        if out.returncode:
            raise RuntimeError(f"run step: {out.stderr.strip()[-400:]}")

    def clone(self, dest: Path, flt: str | None, sparse: list[str] | None, ref: str) -> None:
        """A contributor's clone: all history (blobless when `flt`), sparse when `sparse`."""
        self.init(dest)
        self.git(
            dest,
            "-c",
            "protocol.version=2",
            "fetch",
            "--quiet",
            *([f"--filter={flt}"] if flt else []),
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        )
        if sparse is not None:
            self.git(dest, "sparse-checkout", "set", "--no-cone", *sparse)
        self.git(dest, "checkout", "--quiet", "--force", ref)

    def orv(self, args: list[str], cwd: Path) -> dict[str, Any]:
        start = time.perf_counter()
        out = subprocess.run(
            [self.orv_path, *args], cwd=cwd, env={**self.env, "CI": "1"}, capture_output=True, text=True
        )
        row: dict[str, Any] = {"orv_s": round(time.perf_counter() - start, 2), "exit": out.returncode}
        if out.returncode not in (0, 1):
            row["refused"] = (out.stderr or out.stdout).strip()[-400:]
        return row


def objects_bytes(dest: Path) -> int:
    """Bytes of the clone's object store (packs as received, loose objects), indexes left out."""
    store = dest / ".git" / "objects"
    return sum(
        p.stat().st_size
        for p in store.rglob("*")
        if p.is_file() and p.suffix not in (".idx", ".rev", ".promisor", ".keep") and "info" not in p.parts
    )


def timed(meter: Meter, work) -> dict[str, Any]:
    meter.log.unlink(missing_ok=True)
    start = time.perf_counter()
    work()
    return {"bytes": meter.sent(), "s": round(time.perf_counter() - start, 2)}


def best(repeat: int, key: str, work: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The fastest of `repeat` runs of a row (the bytes are the same each time)."""
    rows = [work() for _ in range(repeat)]
    row = min(rows, key=lambda r: r[key])
    row["runs_s"] = [r[key] for r in rows]
    return row


def transfer_rows(meter: Meter, pr: str, changed: list[str], sparse: list[str], repeat: int) -> dict[str, Any]:
    rows = {}
    for name, flt, pats in (
        ("full", None, None),
        ("blobless", "blob:none", None),
        ("blobless_sparse", "blob:none", [*sparse, *(f"/{p}" for p in changed)]),
    ):
        dest = meter.scratch / f"clone-{name}"

        def work() -> dict[str, Any]:
            row = timed(meter, lambda: meter.clone(dest, flt, pats, pr))
            row["store_bytes"] = objects_bytes(dest)
            shutil.rmtree(dest)
            return row

        rows[name] = best(repeat, "s", work)
        print(f"    {name}: {rows[name]}", flush=True)
    return rows


def gate(meter: Meter, steps: list[dict[str, Any]], pr: str, base: str, changed: list[str]) -> dict[str, Any]:
    """The workflow's checkouts and then the Action's orv command, on a fresh 'runner' folder."""
    runner = meter.scratch / "runner"
    shutil.rmtree(runner, ignore_errors=True)
    runner.mkdir()
    meter.log.unlink(missing_ok=True)
    row: dict[str, Any] = {"steps": []}
    start = time.perf_counter()
    for step in steps:
        ref = base if "base.sha" in str(step.get("ref", "")) else pr
        dest = runner / str(step.get("path", "pull-request"))
        before, fetched, t0 = meter.sent(), meter.fetches(), time.perf_counter()
        if "run" in step:  # the only expression the workflow's steps use is the base commit
            env = {
                name: str(value).replace("${{ github.event.pull_request.base.sha }}", base)
                for name, value in step["env"].items()
            }
            meter.run(step["run"], runner, {**env, "GITHUB_WORKSPACE": str(runner)})
        else:
            meter.checkout(dest, step, ref, [])  # the workflow as written: orv gets what else it reads
        row["steps"].append(
            {
                "path": dest.name,
                "bytes": meter.sent() - before,
                "fetches": meter.fetches() - fetched,
                "s": round(time.perf_counter() - t0, 2),
            }
        )
    row["checkout_bytes"], row["checkout_s"] = meter.sent(), round(time.perf_counter() - start, 2)
    root = runner / str(next((s.get("path") for s in steps if not s.get("ref") and "run" not in s), "pull-request"))
    with tempfile.TemporaryDirectory(dir=meter.scratch) as tmp:
        result = Path(tmp) / "result"
        row.update(
            meter.orv(
                [
                    "check",
                    "--root",
                    str(root),
                    "--base",
                    base,
                    "--widen",
                    "--format",
                    "github",
                    "--summary",
                    str(Path(tmp) / "summary.md"),
                    "--github-output",
                    str(result),
                ],
                root,
            )
        )
        lines = result.read_text(encoding="utf-8").splitlines() if result.exists() else []
        row["outputs"] = {k: v for k, _, v in (line.partition("=") for line in lines) if k in COUNTS}
    row["bytes"], row["fetches"] = meter.sent(), meter.fetches()  # checkouts and what orv fetched on demand
    row["orv_bytes"], row["orv_fetches"] = (
        row["bytes"] - row["checkout_bytes"],
        row["fetches"] - sum(step["fetches"] for step in row["steps"]),
    )
    row["total_s"] = round(time.perf_counter() - start, 2)
    shutil.rmtree(runner)
    return row


def contributor(meter: Meter, pr: str, changed: list[str], sparse: list[str]) -> dict[str, Any]:
    dest = meter.scratch / "contributor"
    row = timed(meter, lambda: meter.clone(dest, "blob:none", [*sparse, *(f"/{p}" for p in changed)], pr))
    meter.log.unlink(missing_ok=True)
    row.update(meter.orv(["check", "--base", "origin/main"], dest))
    row["check_bytes"], row["check_fetches"] = meter.sent(), meter.fetches()
    shutil.rmtree(dest)
    return row


def copied_run_pr(remote: Path) -> tuple[str, list[str]]:
    """Branch `pr-copy`: main plus an existing run's samples stored again under another measurer
    (ORV304), the pull request whose check asks which run file came first — a walk over history
    (validator/evidence/arrival.py). Written with plumbing and a scratch index: the cached work tree is untouched."""
    from validator.hashing import canonical_bytes, content_address, run_path

    def git(*args: str, stdin: bytes | None = None, env: dict[str, str] | None = None) -> str:
        return (
            subprocess.run(
                ["git", *args],
                cwd=remote,
                input=stdin,
                capture_output=True,
                check=True,
                env={**os.environ, **GIT_ENV, **(env or {})},
            )
            .stdout.decode()
            .strip()
        )

    first = next(line.split("\t", 1)[1] for line in git("ls-tree", "-r", "main", "--", "runs").splitlines())
    document = json.loads(git("show", f"main:{first}"))
    document["measured_by"] = "lab-copy"
    raw = canonical_bytes(document)
    rel = run_path(content_address(raw))
    blob = git("hash-object", "-w", "--stdin", stdin=raw)
    index = {"GIT_INDEX_FILE": str(remote / ".git" / "orv-bench-copy-index")}
    git("read-tree", "main", env=index)
    git("update-index", "--add", "--cacheinfo", f"100644,{blob},{rel}", env=index)
    tree = git("write-tree", env=index)
    ident = {
        "GIT_AUTHOR_NAME": "bench",
        "GIT_AUTHOR_EMAIL": "bench@example.org",
        "GIT_COMMITTER_NAME": "bench",
        "GIT_COMMITTER_EMAIL": "bench@example.org",
        "GIT_AUTHOR_DATE": "2030-01-01T00:00:00Z",
        "GIT_COMMITTER_DATE": "2030-01-01T00:00:00Z",
    }
    commit = git("commit-tree", tree, "-p", "main", "-m", "a copied run", env=ident)
    git("update-ref", "refs/heads/pr-copy", commit)
    return commit, [rel]


def registry_remote(root: Path) -> Path:
    """A bench/generate.py registry as the remote: branch `pr` = main plus bench/run.py's one-training-recipe
    pull request (written in a scratch worktree, so main's working tree is untouched), made once."""
    from bench.generate import GIT
    from bench.generate import GIT_ENV as COMMIT_ENV
    from bench.generate import training as add_training_recipe
    from bench.run import PR_INDEX, PR_SEED

    root = root.resolve()
    env = {**os.environ, **COMMIT_ENV}

    def git(*args: str, cwd: Path = root) -> str:
        return subprocess.run([*GIT, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True).stdout

    if not git("branch", "--list", "pr").strip():
        CACHE.mkdir(parents=True, exist_ok=True)  # measure()'s scratch folders go there too
        with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
            work = Path(tmp) / "pr"
            git("worktree", "add", "-q", "-b", "pr", str(work), "main")
            add_training_recipe(work, PR_INDEX, random.Random(PR_SEED))
            git("add", "-A", cwd=work)
            git("commit", "-q", "-m", "a one-training-recipe pull request", cwd=work)
            git("worktree", "remove", "--force", str(work))
    changed = git("diff", "--name-only", "main", "pr").split()
    (root / ".git" / "orv-bench-pr").write_text("\n".join(changed) + "\n")
    git("config", "uploadpack.allowFilter", "true")
    git("config", "uploadpack.allowAnySHA1InWant", "true")
    return root


def measure(
    runs: int | Path,
    workflows: list[str],
    repeat: int,
    workflow: Path,
    orv: str,
    gate_only: bool = False,
    copied: bool = False,
) -> dict[str, Any]:
    # a number: bench/history.py's registry of that many run files; a path: a bench/generate.py registry
    remote = (
        registry_remote(runs) if isinstance(runs, Path) else generate_history(runs, orv=None if orv == ORV else orv)
    )
    pr, base = (
        subprocess.run(["git", "rev-parse", ref], cwd=remote, capture_output=True, text=True, check=True).stdout.strip()
        for ref in ("pr", "main")
    )
    changed = (remote / ".git" / "orv-bench-pr").read_text().split()
    if copied:
        pr, changed = copied_run_pr(remote)
    new_steps = workflow_steps(workflow)
    sparse = next((patterns(s) for s in new_steps if patterns(s)), SPARSE_DEFAULT)
    pack = sum(p.stat().st_size for p in (remote / ".git" / "objects" / "pack").glob("*.pack"))
    tree = subprocess.run(
        ["git", "ls-tree", "-r", "-l", "main"], cwd=remote, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    out: dict[str, Any] = {
        **(counts(remote) if isinstance(runs, int) else generated_counts(remote)),
        "pack_bytes": pack,
        "head_bytes": sum(int(line.split()[3]) for line in tree),
        "head_files": len(tree),
        "pr_files": changed,
        "sparse_patterns": sparse,
    }
    print(
        f"{out['run_files']} run files: {out['recipes']} recipes, {out['commits']} commits, pack {pack / 2**20:.1f} MiB",
        flush=True,
    )
    for pack_file in (remote / ".git" / "objects" / "pack").iterdir():  # warm: no row pays for the disk
        with pack_file.open("rb") as f:
            while f.read(1 << 24):
                pass
    scratch = Path(tempfile.mkdtemp(prefix=f"clone-{out['run_files']}-", dir=CACHE))
    try:
        meter = Meter(remote, scratch, orv)
        if not gate_only:
            out["transfer"] = transfer_rows(meter, pr, changed, sparse, repeat)
        out["gate"] = {}
        for name in workflows:
            steps = OLD_STEPS if name == "old" else new_steps
            if name == "new" and all(not patterns(s) and not s.get("filter") for s in steps):
                print(
                    "    new: the pull-request workflow still checks out without filter or sparse patterns "
                    "(the `sparse` change has not landed): 'new' measures the same steps as 'old'",
                    flush=True,
                )
            out["gate"][name] = best(repeat, "total_s", lambda: gate(meter, steps, pr, base, changed))
            out["gate"][name]["checkouts"] = steps
            if "refused" in out["gate"][name]:
                print(f"    {name}: orv could not check this checkout: {out['gate'][name]['refused']}", flush=True)
            print(
                f"    gate {name}: { ({k: v for k, v in out['gate'][name].items() if k != 'checkouts'}) }", flush=True
            )
        if not gate_only:
            out["contributor"] = best(repeat, "s", lambda: contributor(meter, pr, changed, sparse))
            print(f"    contributor: {out['contributor']}", flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        if copied:
            subprocess.run(["git", "update-ref", "-d", "refs/heads/pr-copy"], cwd=remote, check=True)
    return out


def generated_counts(root: Path) -> dict[str, int]:
    """counts() for a registry bench/history.py did not write: its files at main, and its commits."""
    listing = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", "main"], cwd=root, capture_output=True, text=True, check=True
    ).stdout.split()
    commits = subprocess.run(
        ["git", "rev-list", "--count", "main"], cwd=root, capture_output=True, text=True, check=True
    )
    return {
        "recipes": sum(1 for rel in listing if rel.startswith("recipes/")),
        "run_files": sum(1 for rel in listing if rel.startswith("runs/")),
        "commits": int(commits.stdout),
    }


def shards(runs: int, counts_: list[int]) -> dict[str, Any]:
    """bench/shard.py on the registry (shards one after another: this host has 2 cores)."""
    root = generate_history(runs)
    proc = subprocess.run(
        [sys.executable, str(HERE / "shard.py"), "--root", str(root), "--shards", *map(str, counts_)],
        capture_output=True,
        text=True,
    )
    steps = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return {
        "runs": runs,
        **counts(root),
        "exit": proc.returncode,
        "steps": steps,
        "command": f"python bench/clone.py --shards {' '.join(map(str, counts_))} --shard-runs {runs}",
        "note": "each shard is `orv check --shard K/N --no-cache -j1`, run one after another on a 2-core "
        "host shared with other jobs; on N runners the wall time is the slowest shard's",
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, nargs="*", default=[1000, 10000, 100000])
    parser.add_argument(
        "--registry",
        type=Path,
        nargs="*",
        default=[],
        help="instead of --runs: bench/generate.py registries (main-shaped), the gate on each",
    )
    parser.add_argument("--workflow", choices=["old", "new", "both"], default="both")
    parser.add_argument(
        "--workflow-file",
        type=Path,
        default=WORKFLOW,
        help="the pull-request workflow whose checkouts are 'new' (default: this checkout's)",
    )
    parser.add_argument("--orv", default=ORV, help="the orv the gate and the contributor run (default: this one)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    parser.add_argument(
        "--repeat",
        type=int,
        default=None,
        help="runs per row, the fastest kept (default: 3 below 100,000 run files, else 1)",
    )
    parser.add_argument(
        "--gate-only",
        action="store_true",
        help="only the gate rows (no clone-transfer or contributor rows), into --results",
    )
    parser.add_argument(
        "--copied-run",
        action="store_true",
        help="the pull request stores an existing run again (ORV304: its check walks the history)",
    )
    parser.add_argument("--shards", type=int, nargs="*", default=[], help="instead: the sharded full check")
    parser.add_argument("--shard-runs", type=int, default=100000)
    args = parser.parse_args()
    CACHE.mkdir(parents=True, exist_ok=True)
    if args.shards:
        result = shards(args.shard_runs, args.shards)
        (HERE / f"shard-{args.shard_runs // 1000}k-results.json").write_text(json.dumps(result, indent=1) + "\n")
        print(json.dumps({k: v for k, v in result.items() if k != "steps"}))
        return result["exit"]
    results = json.loads(args.results.read_text()) if args.results.exists() else {}
    results["command"] = (
        "python bench/clone.py --registry DIR --gate-only (bench/generate.py registries; fastest of --repeat runs)"
        if args.registry
        else "python bench/clone.py --runs N --workflow both (fastest of --repeat runs per row)"
    )
    results["host"] = "2 cores shared with other jobs; local file:// remote, so times exclude the network"
    for runs in args.registry or args.runs:
        repeat = args.repeat or (3 if isinstance(runs, Path) or runs < 100_000 else 1)
        results[str(runs)] = measure(
            runs,
            ["old", "new"] if args.workflow == "both" else [args.workflow],
            repeat,
            args.workflow_file,
            args.orv,
            args.gate_only,
            args.copied_run,
        )
        results[str(runs)]["pull_request"] = "copied run (ORV304)" if args.copied_run else "one recipe"
        results[str(runs)]["repeat"] = repeat
        args.results.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Side-by-side benchmark of `orv check` against check-jsonschema, sha256sum and a parse-only floor.

All commands run in one session on the same generated registry (bench/generate.py), one after the
other, each `--repeat` times (best wall time kept). Printed: wall seconds, peak RSS, and the
ratios the project's targets are stated in (issue "Scale and hardening"):
  orv / check-jsonschema  <= 0.10     orv / floor <= 3.0     PR check / full check < 0.05
  peak memory of orv < 500 MB at N = 10,000
The PR check is measured warm (after a full `orv check` filled .git/orv/, as a contributor's
local run leaves it) and cold (`--no-cache`, as on a fresh CI runner).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.generate import generate  # noqa: E402


PR_ROW = "orv check --base (PR: +1 recipe +1 run)"


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    """(wall seconds, peak RSS MiB, exit code) of one command, via wait4 for this child alone."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if proc.returncode not in (0,) and err:
            print(f"  [{cmd[0]} exit {proc.returncode}] {err.strip()[-300:]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, proc.returncode


def best(cmd: list[str], cwd: Path, repeat: int, env: dict[str, str] | None = None) -> tuple[float, float, int]:
    runs = [measure(cmd, cwd, env) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs), runs[-1][2]


def warm_page_cache(root: Path) -> None:
    """Read every file once, so that no row pays for the disk and whichever runs first is not
    penalised (measured: a full check 31 s with the run files evicted, 27 s with them cached)."""
    for path in root.rglob("*"):
        if path.is_file():
            with open(path, "rb") as fh:
                while fh.read(1 << 20):
                    pass


def files(root: Path, folder: str, suffix: str) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in (root / folder).rglob(f"*{suffix}"))


def split_runs(root: Path, runs: list[str]) -> tuple[list[str], list[str]]:
    training, inference = [], []
    for rel in runs:
        with open(root / rel, "rb") as fh:
            head = fh.read(64)
        (training if b'"kind":"training"' in head else inference).append(rel)
    return training, inference


def check_jsonschema_script(root: Path, work: Path, every: int = 1) -> str:
    """One bash line running check-jsonschema per file kind; xargs batches the file lists.

    every > 1 validates every n-th file of each kind only (the caller scales the time by n): at
    N = 10,000 check-jsonschema needs hours, and its cost per file is constant.
    """
    lines = []
    for i, cmd in enumerate(check_jsonschema_cmds(root)):
        exe_and_schema, paths = cmd[:5], cmd[5:][::every]
        lst = work / f"cjs-{i}.lst"
        lst.write_text("\0".join(paths))
        lines.append(f"xargs -0 -a {lst} {subprocess.list2cmdline(exe_and_schema)} >/dev/null")
    return " && ".join(lines)


def check_jsonschema_cmds(root: Path) -> list[list[str]]:
    exe = shutil.which("check-jsonschema")
    if exe is None:
        raise SystemExit("check-jsonschema is not installed: python -m pip install -e '.[bench]'")
    schema = REPO / "schema"
    training_runs, inference_runs = split_runs(root, files(root, "runs", ".json"))
    groups = [
        ("recipe-training", files(root, "recipes/training", ".yaml")),
        ("recipe-inference", files(root, "recipes/inference", ".yaml")),
        ("run-training", training_runs),
        ("run-inference", inference_runs),
    ]
    # --base-uri: resolve the schemas' relative $refs from schema/ on disk, never over the network.
    return [[exe, "--base-uri", (schema / f"{name}.schema.json").as_uri(), "--schemafile",
             str(schema / f"{name}.schema.json"), *paths] for name, paths in groups if paths]


def prepare_pr(root: Path, work: Path) -> Path:
    """A git clone of the registry whose working tree adds one recipe and one run (a typical PR)."""
    repo = work / "pr"
    if repo.exists():
        shutil.rmtree(repo)
    shutil.copytree(root, repo)
    git = ["git", "-c", "user.name=bench", "-c", "user.email=bench@example.invalid"]
    subprocess.run([*git, "init", "-q", "-b", "main"], cwd=repo, check=True)
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-q", "-m", "base"], cwd=repo, check=True)
    from bench.generate import training
    import random

    training(repo, 10_000_000 + 2, random.Random(7))
    return repo


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[1000], help="registry sizes (recipes = run files)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-cjs", action="store_true", help="skip check-jsonschema (slow at large N)")
    parser.add_argument("--cjs-every", type=int, default=0,
                        help="check-jsonschema on every n-th file only, time scaled by n "
                             "(default: 1 up to N = 1,000, else N / 500)")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    python = sys.executable
    report = []
    for n in args.n:
        root = generate(HERE / "out" / f"registry-{n}", n)
        runs = files(root, "runs", ".json")
        rows: dict[str, tuple[float, float, int]] = {}
        warm_page_cache(root)
        print(f"\nN = {n:,} recipes + {len(runs):,} run files ({sum((root / r).stat().st_size for r in runs) / 2**20:.0f} MiB)")
        rows["orv check (all checks)"] = best([python, "-m", "validator", "check", "--root", str(root),
                                              "--format", "json"], REPO, args.repeat)
        rows["floor: read+hash+parse"] = best([python, str(HERE / "floor.py"), str(root)], REPO, args.repeat)
        with tempfile.NamedTemporaryFile("w", suffix=".lst", delete=False) as lst:
            lst.write("\0".join(runs))
        rows["sha256sum runs/"] = best(["bash", "-c", f"xargs -0 -a {lst.name} sha256sum >/dev/null"], root,
                                       args.repeat)
        os.unlink(lst.name)
        if not args.skip_cjs:
            every = args.cjs_every or (1 if n <= 1000 else n // 500)
            with tempfile.TemporaryDirectory() as work:
                script = check_jsonschema_script(root, Path(work), every)
                wall, rss, code = best(["bash", "-c", script], root, 1)
            name = "check-jsonschema (schemas only)" + (f" [1/{every} sample, x{every}]" if every > 1 else "")
            rows[name] = (wall * every, rss, code)
        with tempfile.TemporaryDirectory() as work:
            pr = prepare_pr(root, Path(work))
            pr_check = [python, "-m", "validator", "check", "--root", str(pr), "--base", "main"]
            # Cold: nothing cached, as on a fresh CI runner (every recipe is loaded once for its keys).
            rows["orv check --base, cold (no cache)"] = best([*pr_check, "--no-cache"], REPO, args.repeat)
            # Warm: the contributor ran `orv check` before, which filled .git/orv/.
            measure([python, "-m", "validator", "check", "--root", str(pr)], REPO)
            rows[PR_ROW] = best(pr_check, REPO, args.repeat)
        full = rows["orv check (all checks)"][0]
        for name, (wall, rss, code) in rows.items():
            print(f"  {name:<42} {wall:8.2f} s  {rss:7.0f} MiB  exit {code}  x{wall / full:6.2f} of orv")
        ratios = {"orv/floor": full / rows["floor: read+hash+parse"][0],
                  "pr/full": rows[PR_ROW][0] / full,
                  "pr-cold/full": rows["orv check --base, cold (no cache)"][0] / full}
        cjs = [v for k, v in rows.items() if k.startswith("check-jsonschema")]
        if cjs:
            ratios["orv/check-jsonschema"] = full / cjs[0][0]
        print("  ratios: " + ", ".join(f"{k} = {v:.3f}" for k, v in ratios.items())
              + f"; orv peak memory {rows['orv check (all checks)'][1]:.0f} MiB")
        report.append({"n": n, "rows": {k: {"wall_s": round(v[0], 3), "peak_mib": round(v[1]), "exit": v[2]}
                                        for k, v in rows.items()}, "ratios": {k: round(v, 4) for k, v in ratios.items()},
                       "cores": os.cpu_count()})
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

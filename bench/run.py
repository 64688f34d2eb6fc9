"""Benchmark of `orv` as users meet it, on registries shaped like main (bench/generate.py).

All commands run in one session on the same generated registry (boards committed, 0-3 runs per
recipe, 64-3,000 samples, ~5% non-ASCII run files), `--repeat` times each (best wall time kept);
the four rows the main ratios compare (check with and without boards.json, boards, floor) run in
interleaved rounds, so a slow spell of a shared host slows them alike. Rows: `orv check --no-cache` with the boards
committed and without
it, `orv boards --no-cache`, the read+hash+parse floor, sha256sum, optionally check-jsonschema, and
the pull-request gate: the Action's exact command on a cold `git clone`
(`orv check --base main --summary F --github-output G --no-cache`) and a warm local `--base` check.
Printed: wall and CPU seconds, peak RSS of the largest process, the ratios the targets are stated
in (issue 14), and each row's growth exponent between the smallest and the largest N.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

import random  # noqa: E402

from bench.generate import BOARDS_LIMIT, GIT, GIT_ENV, generate, training  # noqa: E402


def measure(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS MiB of the largest process, exit code, CPU seconds of it and its workers)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env={**os.environ, **(env or {})}
    )
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.stderr is not None:
        err = proc.stderr.read().decode(errors="replace")
        proc.stderr.close()
        if proc.returncode not in (0,) and err:
            print(f"  [{cmd[0]} exit {proc.returncode}] {err.strip()[-300:]}", file=sys.stderr)
    return wall, usage.ru_maxrss / 1024, proc.returncode, cpu


CPU: dict[str, float] = {}  # row -> CPU seconds of its best run


def best(
    cmd: list[str], cwd: Path, repeat: int, env: dict[str, str] | None = None, row: str = ""
) -> tuple[float, float, int]:
    return _best_of(row, [measure(cmd, cwd, env) for _ in range(repeat)])


def _best_of(row: str, runs: list[tuple[float, float, int, float]]) -> tuple[float, float, int]:
    """(fastest wall time, highest peak, last exit code) of a row's runs; the fastest run's CPU to CPU."""
    fastest = min(runs, key=lambda r: r[0])
    CPU[row] = fastest[3]
    return fastest[0], max(r[1] for r in runs), runs[-1][2]


def interleaved(
    rows: dict[str, tuple[list[str], Path, Callable[[], AbstractContextManager[object]]]], repeat: int
) -> dict[str, tuple[float, float, int]]:
    """Every row once per round, `repeat` rounds: on a shared host whose speed drifts over minutes,
    a slow spell then slows each row alike, not whichever rows ran during it (running a row's
    repeats back to back put 10-20% between two rows doing nearly the same work). Per row, the
    fastest run, as `best`."""
    runs: dict[str, list[tuple[float, float, int, float]]] = {name: [] for name in rows}
    names = list(rows)
    for round_ in range(repeat):
        # each round starts one row later, so no row always runs right after the same one
        for name in names[round_ % len(names) :] + names[: round_ % len(names)]:
            cmd, cwd, around = rows[name]
            with around():
                runs[name].append(measure(cmd, cwd))
    return {name: _best_of(name, measured) for name, measured in runs.items()}


@contextlib.contextmanager
def boards_aside(root: Path) -> Iterator[None]:
    """The registry without its boards (boards/index.json and boards/models/) for the duration (then put back)."""
    moved = [
        (root / "boards" / "index.json", root.parent / f"{root.name}-boards-index.json"),
        (root / "boards" / "models", root.parent / f"{root.name}-boards-models"),
    ]
    for here, aside in moved:
        here.rename(aside)
    try:
        yield
    finally:
        for here, aside in moved:
            aside.rename(here)


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
    return [
        [
            exe,
            "--base-uri",
            (schema / f"{name}.schema.json").as_uri(),
            "--schemafile",
            str(schema / f"{name}.schema.json"),
            *paths,
        ]
        for name, paths in groups
        if paths
    ]


PR_INDEX, PR_SEED = 10_000_000 + 2, 7  # the pull request's training recipe (bench/generate.py training)


def prepare_pr(root: Path, work: Path) -> Path:
    """A fresh `git clone` of the registry (nothing cached) on a branch that adds one recipe and one
    run, committed: what actions/checkout gives the Action on a new runner."""
    repo = work / "pr"
    if repo.exists():
        shutil.rmtree(repo)
    subprocess.run(["git", "clone", "-q", str(root), str(repo)], check=True)
    subprocess.run([*GIT, "checkout", "-q", "-b", "pr"], cwd=repo, check=True, env={**os.environ, **GIT_ENV})
    commit_pull_request(repo)
    return repo


def commit_pull_request(work: Path) -> None:
    """The bench's pull request, committed in the work tree at `work`: one training recipe and its run file."""
    training(work, PR_INDEX, random.Random(PR_SEED))
    subprocess.run([*GIT, "add", "-A"], cwd=work, check=True, env={**os.environ, **GIT_ENV})
    subprocess.run([*GIT, "commit", "-q", "-m", "pr"], cwd=work, check=True, env={**os.environ, **GIT_ENV})


FULL = "orv check --no-cache (boards committed)"
NO_BOARDS = "orv check --no-cache, no boards.json"  # the row results.json names (kept): no boards committed at all
BOARDS = "orv boards --no-cache"
FLOOR = "floor: read+hash+parse"
ACTION = "Action: check --base --summary, cold clone"
WARM = "orv check --base, warm (local)"


def growth(report: list[dict]) -> dict[str, float]:
    """Each row's exponent k in time ~ N^k between the smallest and the largest N measured, by wall
    time and by CPU time (steadier on a shared machine)."""
    if len(report) < 2:
        return {}
    low, high = report[0], report[-1]
    scale = math.log(high["n"] / low["n"])
    out = {}
    for name in high["rows"]:
        for unit in ("wall_s", "cpu_s"):
            a, b = low["rows"].get(name, {}).get(unit, 0), high["rows"][name].get(unit, 0)
            if a > 0 and b > 0:
                out[f"{name} ({unit[:-2]})"] = round(math.log(b / a) / scale, 3)
    return out


# The figures docs/benchmarks.md says a change must not worsen, from a results file: (label, ratio key).
GUARDED = (
    ("check / floor, wall", "check/floor (wall)"),
    ("check / floor, CPU", "check/floor (CPU)"),
    ("boards / check, wall", "boards/check"),
    ("boards / check, CPU", "boards/check (CPU)"),
    ("Action / check, wall", "action-cold/check"),
    ("Action / check, CPU", "action-cold/check (CPU)"),
)


def table(report: list[dict]) -> str:
    """The Markdown table docs/benchmarks.md shows for one results file (`--table FILE` prints it):
    the guarded ratios per N side by side, peak memory, the host's load, then the growth exponents."""
    sizes = [entry for entry in report if "n" in entry]
    head = "| figure | " + " | ".join(f"N = {e['n']:,}" for e in sizes) + " |"
    lines = [head, "|---|" + "---|" * len(sizes)]
    for label, key in GUARDED:
        lines.append(f"| {label} | " + " | ".join(f"{e['ratios'][key]:.3f}" for e in sizes) + " |")
    lines.append(
        "| peak memory, largest orv process | "
        + " | ".join(
            f"{max(r['peak_mib'] for k, r in e['rows'].items() if k.startswith(('orv', 'Action')))} MiB" for e in sizes
        )
        + " |"
    )
    if all("load" in e for e in sizes):
        lines.append(
            "| host load average (1 min) before / after | "
            + " | ".join(f"{e['load'][0]:.1f} / {e['load'][1]:.1f}" for e in sizes)
            + " |"
        )
    growth = next((entry["growth"] for entry in report if "growth" in entry), {})
    if growth:
        lines += ["", f"| growth exponent, N = {sizes[0]['n']:,} → {sizes[-1]['n']:,} | wall | CPU |", "|---|---|---|"]
        for row in (FULL, BOARDS, FLOOR, ACTION):
            lines.append(
                f"| {row} | {growth.get(row + ' (wall)', float('nan')):.2f} | {growth.get(row + ' (cpu)', float('nan')):.2f} |"
            )
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, nargs="+", default=[1000], help="registry sizes (recipes = run files)")
    parser.add_argument(
        "--table",
        type=Path,
        help="print docs/benchmarks.md's table of the guarded ratios from this results file; measure nothing",
    )
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--skip-cjs", action="store_true", help="skip check-jsonschema (~0.75 s per run file)")
    parser.add_argument(
        "--cjs-every",
        type=int,
        default=0,
        help="check-jsonschema on every n-th file only, time scaled by n (default: 1 up to N = 1,000, else N / 500)",
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON here")
    args = parser.parse_args()
    if args.table is not None:
        print(table(json.loads(args.table.read_text())), end="")
        return 0
    python = sys.executable
    report = []
    for n in args.n:
        root = generate(HERE / "out" / f"registry-{n}", n)
        runs = files(root, "runs", ".json")
        rows: dict[str, tuple[float, float, int]] = {}
        load_before = os.getloadavg()[0]  # how busy the shared host was: ratios are read against it
        warm_page_cache(root)
        print(
            f"\nN = {n:,} recipes + {len(runs):,} run files ({sum((root / r).stat().st_size for r in runs) / 2**20:.0f} MiB)"
        )
        orv = [python, "-m", "validator"]
        check = [*orv, "check", "--root", str(root), "--format", "json", "--no-cache"]
        rows.update(
            interleaved(
                {
                    FULL: (check, REPO, contextlib.nullcontext),
                    NO_BOARDS: (check, REPO, lambda: boards_aside(root)),
                    BOARDS: (
                        [*orv, "boards", "--root", str(root), "--no-cache", *BOARDS_LIMIT],
                        REPO,
                        contextlib.nullcontext,
                    ),
                    FLOOR: ([python, str(HERE / "floor.py"), str(root)], REPO, contextlib.nullcontext),
                },
                args.repeat,
            )
        )
        with tempfile.NamedTemporaryFile("w", suffix=".lst", delete=False) as lst:
            lst.write("\0".join(runs))
        rows["sha256sum runs/"] = best(
            ["bash", "-c", f"xargs -0 -a {lst.name} sha256sum >/dev/null"], root, args.repeat, row="sha256sum runs/"
        )
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
            action = [
                *orv,
                "check",
                "--root",
                str(pr),
                "--base",
                "main",
                "--summary",
                str(Path(work) / "summary.md"),
                "--github-output",
                str(Path(work) / "outputs.txt"),
                "--no-cache",
            ]
            rows[ACTION] = best(action, REPO, args.repeat, row=ACTION)
            # Warm: the contributor ran `orv check` before, which filled .git/orv/.
            measure([*orv, "check", "--root", str(pr)], REPO)
            rows[WARM] = best([*orv, "check", "--root", str(pr), "--base", "main"], REPO, args.repeat, row=WARM)
        full = rows[FULL][0]
        for name, (wall, rss, code) in rows.items():
            print(
                f"  {name:<46} {wall:8.2f} s  CPU {CPU.get(name, 0.0):7.2f} s  {rss:7.0f} MiB  exit {code}  "
                f"x{wall / full:6.2f} of full check"
            )
        full_cpu = CPU[FULL]
        floor = rows[FLOOR][0]
        ratios = {
            "check/floor (wall)": full / floor,
            "check/floor (CPU)": full_cpu / CPU[FLOOR],
            "check/check-without-boards": full / rows[NO_BOARDS][0],
            "boards/check": rows[BOARDS][0] / full,
            "action-cold/check": rows[ACTION][0] / full,
            "pr-warm/check": rows[WARM][0] / full,
            "boards/check (CPU)": CPU[BOARDS] / full_cpu,
            "check/check-without-boards (CPU)": full_cpu / CPU[NO_BOARDS],
            "action-cold/check (CPU)": CPU[ACTION] / full_cpu,
        }
        cjs = [v for k, v in rows.items() if k.startswith("check-jsonschema")]
        if cjs:
            ratios["orv/check-jsonschema"] = full / cjs[0][0]
        print(
            "  ratios: "
            + ", ".join(f"{k} = {v:.3f}" for k, v in ratios.items())
            + f"; peak memory {max(r[1] for k, r in rows.items() if k.startswith(('orv', 'Action'))):.0f} MiB"
        )
        report.append(
            {
                "n": n,
                "rows": {
                    k: {
                        "wall_s": round(v[0], 3),
                        "cpu_s": round(CPU.get(k, 0.0), 3),
                        "peak_mib": round(v[1]),
                        "exit": v[2],
                    }
                    for k, v in rows.items()
                },
                "ratios": {k: round(v, 4) for k, v in ratios.items()},
                "check_cpu_s": round(full_cpu, 3),
                "load": [round(load_before, 2), round(os.getloadavg()[0], 2)],
                "cores": os.cpu_count(),
            }
        )
    exponents = growth(report)
    if exponents:
        print(f"\ngrowth exponents, N = {report[0]['n']:,} -> {report[-1]['n']:,}:")
        for name, k in exponents.items():
            print(f"  {name:<58} {k:5.2f}")
        report.append({"growth": exponents})
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""What a merge's boards update costs on main (issue 54 item 2): old against new, side by side.

On bench/history.py's registries (1,000 / 10,000 run files, with history, served from a local `file://`
remote with filters, bench/clone.py's byte counter standing in for GitHub), the merge is the one-recipe
pull request `pr` (one inference recipe and its run file) landed on main. For each way of updating the
boards after it:

- old: the boards workflow before issue 54: a full clone (fetch-depth 0, every blob) and `orv boards`
  (every file loaded, every generated file compared);
- new: a tree-less sparse clone (`--filter=tree:0`, fetch-depth 0, only /catalog/ and /measurers/ checked
  out, as the pull-request gate's) and `orv boards --incremental`;

it records the bytes the remote sent (lazy fetches included), wall seconds of the clone and of orv, and
orv's peak resident memory (`/usr/bin/time`), and whether the new update's files equal the old
regeneration's byte for byte (`equal`). `site` is the push's next step, the same either way: `orv site`
reads every training run file for its loss curves, so the new clone first checks every file out
(`git sparse-checkout disable`: `widen_bytes`, `widen_s`); the old clone has them already. Times are local (no network) and machine-dependent; the results
file is the record, never a test's expectation.

    python bench/boards_update.py --runs 1000 10000 --results bench/boards-update-results.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.clone import ORV, Meter  # noqa: E402
from bench.history import generate_history  # noqa: E402
from tests.testing.registry import boards_tree  # noqa: E402

RESULTS = HERE / "boards-update-results.json"
SPARSE = ["/catalog/", "/measurers/"]


def orv_measured(meter: Meter, args: list[str], cwd: Path) -> dict[str, Any]:
    """orv's wall seconds and peak memory (GNU time's maximum resident set, KB)."""
    report = meter.scratch / "time.txt"
    start = time.perf_counter()
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%M", "-o", str(report), meter.orv_path, *args],
        cwd=cwd,
        env={**meter.env, "CI": "1"},
        capture_output=True,
        text=True,
    )
    row: dict[str, Any] = {
        "orv_s": round(time.perf_counter() - start, 2),
        "exit": out.returncode,
        "peak_mb": round(int(report.read_text().split()[-1]) / 1024, 1),
        "said": out.stdout.strip().splitlines()[:1],
    }
    if out.returncode:
        row["error"] = (out.stderr or out.stdout).strip()[-400:]
    return row


def measure(runs: int, orv: str) -> dict[str, Any]:
    remote = generate_history(runs, orv=orv)
    merged = subprocess.run(["git", "rev-parse", "pr"], cwd=remote, capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory(prefix="orv-bench-boards-") as tmp:
        scratch = Path(tmp)
        meter = Meter(remote, scratch, orv)
        rows: dict[str, Any] = {}

        old = scratch / "old"
        meter.log.unlink(missing_ok=True)
        start = time.perf_counter()
        meter.init(old)
        meter.git(old, "-c", "protocol.version=2", "fetch", "--quiet", "origin", "+refs/heads/*:refs/remotes/origin/*")
        meter.git(old, "checkout", "--quiet", "--force", merged)
        clone_s = round(time.perf_counter() - start, 2)
        clone_bytes = meter.sent()
        meter.log.unlink(missing_ok=True)
        rows["old"] = {"clone_s": clone_s, **orv_measured(meter, ["boards", "--root", str(old)], old)}
        rows["old"]["bytes"] = clone_bytes + meter.sent()

        new = scratch / "new"
        meter.log.unlink(missing_ok=True)
        start = time.perf_counter()
        meter.init(new)
        meter.git(
            new,
            "-c",
            "protocol.version=2",
            "fetch",
            "--quiet",
            "--filter=tree:0",
            "origin",
            "+refs/heads/*:refs/remotes/origin/*",
        )
        meter.git(new, "sparse-checkout", "set", "--no-cone", *SPARSE)
        meter.git(new, "checkout", "--quiet", "--force", merged)
        clone_s = round(time.perf_counter() - start, 2)
        clone_bytes = meter.sent()
        meter.log.unlink(missing_ok=True)
        rows["new"] = {
            "clone_s": clone_s,
            **orv_measured(meter, ["boards", "--incremental", "--root", str(new)], new),
        }
        rows["new"]["bytes"] = clone_bytes + meter.sent()
        rows["new"]["fetches_by_orv"] = meter.fetches()

        full, updated = boards_tree(old), boards_tree(new)
        rows["equal"] = all(full.get(path) == data for path, data in updated.items())
        rows["files_written_by_update"] = int(
            subprocess.run(
                ["git", "status", "--porcelain", "--", "boards"], cwd=new, capture_output=True, text=True
            ).stdout.count("\n")
        )
        rows["largest_generated_file_bytes"] = max(len(data) for data in full.values())

        # the push's next step, the same either way: `orv site` reads every training run file (loss curves),
        # so the new way first checks every file out of its sparse clone; the old one has them already
        meter.log.unlink(missing_ok=True)
        start = time.perf_counter()
        meter.git(new, "sparse-checkout", "disable")
        widen_s = round(time.perf_counter() - start, 2)
        rows["site"] = {
            "widen_s": widen_s,
            "widen_bytes": meter.sent(),
            **orv_measured(meter, ["site", str(scratch / "site"), "--root", str(new)], new),
        }
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(new, ignore_errors=True)
    for side in ("old", "new"):
        rows[side]["total_s"] = round(rows[side]["clone_s"] + rows[side]["orv_s"], 2)
    return {"runs": runs, **rows}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, nargs="*", default=[1000, 10000])
    parser.add_argument("--orv", default=ORV, help="the orv measured (default: this environment's)")
    parser.add_argument("--results", type=Path, default=RESULTS)
    args = parser.parse_args()
    results = []
    for runs in args.runs:
        row = measure(runs, args.orv)
        print(json.dumps(row), flush=True)
        results.append(row)
    args.results.write_text(json.dumps({"command": " ".join(sys.argv), "rows": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

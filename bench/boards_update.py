"""What a merge's boards update costs on main (issue 54 item 2): old against new, side by side.

On bench/history.py's registries (1,000 / 10,000 run files, with history, served from a local `file://`
remote with filters, bench/clone.py's byte counter standing in for GitHub), the merge is the one-recipe
pull request `pr` (one inference recipe and its run file) landed on main. For each way of updating the
boards after it:

- old: the boards workflow before issue 54: a full clone (fetch-depth 0, every blob) and `orv boards`
  (every file loaded, every generated file compared);
- new: a tree-less sparse clone (`--filter=tree:0`, fetch-depth 0, checked out with the boards workflow's
  push patterns: the top-level files, orv's source folders, /catalog/ and /measurers/, as the pull-request
  gate's) and `orv boards --incremental`;

it records the bytes the remote sent (lazy fetches included), wall seconds of the clone and of orv, and
orv's peak resident memory (`/usr/bin/time`), and whether the new update's files equal the old
regeneration's byte for byte (`equal`). `fetched` says what the new way's bytes are: the objects each step
brought (the checkout, then orv), by kind and folder (trees of runs/, recipes/, boards/keys/; the parts'
manifests and chunks, standings and key shards; run files, recipes), with their size in the clone's packs —
what the remote sent for them. `site` is the push's next step: `orv site` in the same sparse clone, which checks out only what it
renders (the boards' index, manifests and chunks, the training run files of the loss curves, the recipes of
its reproduction plans), with what it fetched (`bytes`, `fetched`); `site_old` renders from the old way's full
clone, and `site_equal` says the two sites are the same files byte for byte. Times are local (no network)
and machine-dependent; the results file is the record, never a test's expectation.

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

import yaml

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench.clone import ORV, Meter, patterns  # noqa: E402
from bench.generate import BOARDS_LIMIT  # noqa: E402
from bench.history import generate_history  # noqa: E402
from tests.testing.registry import boards_tree  # noqa: E402

RESULTS = HERE / "boards-update-results.json"
BOARDS_WORKFLOW = REPO / ".github" / "workflows" / "boards.yml"


def push_patterns() -> list[str]:
    """The sparse patterns of the boards workflow's checkout on a push (the incremental update's)."""
    doc = yaml.safe_load(BOARDS_WORKFLOW.read_text(encoding="utf-8"))
    step = next(
        s for s in doc["jobs"]["boards"]["steps"] if s.get("if") == "github.event_name == 'push'" and "with" in s
    )
    return patterns(step["with"])


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


def object_sizes(clone: Path) -> dict[str, tuple[str, int]]:
    """Every object the clone holds: id -> (type, bytes in its pack or loose file: what the fetch moved for it,
    delta-compressed as the remote sent it)."""
    listed = subprocess.run(
        [
            "git",
            "cat-file",
            "--batch-all-objects",
            "--unordered",
            "--batch-check=%(objectname) %(objecttype) %(objectsize:disk)",
        ],
        cwd=clone,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return {oid: (kind, int(size)) for oid, kind, size in (line.split() for line in listed if line)}


def remote_paths(remote: Path) -> dict[str, str]:
    """object id -> the path it is reached by on the remote (the first one git names; "" for a root tree)."""
    listed = subprocess.run(
        ["git", "rev-list", "--objects", "--all"], cwd=remote, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    out: dict[str, str] = {}
    for line in listed:
        oid, _, path = line.partition(" ")
        if oid:
            out.setdefault(oid, path)
    return out


def category(kind: str, path: str) -> str:
    """What an object is for the update: commits, the trees of a top folder (boards/ by its sub-folder), the
    boards' part manifests and chunks, standings, key shards, their index and header, recipes, run files, the
    catalog."""
    if kind != "blob":
        if kind != "tree":
            return kind + "s"
        top = path.split("/")
        if not path:
            return "trees: root"
        return "trees: " + ("/".join(top[:2]) if top[0] == "boards" and len(top) > 1 else top[0]) + "/"
    if path.startswith("boards/models/"):  # a model's manifest, or one of its chunks a folder deeper
        return "blobs: boards/models/ (chunks)" if path.count("/") == 3 else "blobs: boards/models/ (manifests)"
    for prefix, name in (
        ("boards/standings/", "blobs: boards/standings/"),
        ("boards/keys/", "blobs: boards/keys/ (shards)"),
        ("boards/", "blobs: boards/index.json, keys.json"),
        ("recipes/", "blobs: recipes/"),
        ("runs/", "blobs: runs/"),
        ("catalog/", "blobs: catalog/, measurers/"),
        ("measurers/", "blobs: catalog/, measurers/"),
    ):
        if path.startswith(prefix):
            return name
    return "blobs: other"


def fetched_by_category(
    before: dict[str, tuple[str, int]], after: dict[str, tuple[str, int]], paths: dict[str, str]
) -> dict[str, dict[str, int]]:
    """The objects that arrived between two listings, by category: {category: {objects, bytes}}, largest first."""
    out: dict[str, dict[str, int]] = {}
    for oid, (kind, size) in after.items():
        if oid not in before:
            row = out.setdefault(category(kind, paths.get(oid, "?")), {"objects": 0, "bytes": 0})
            row["objects"] += 1
            row["bytes"] += size
    return dict(sorted(out.items(), key=lambda item: -item[1]["bytes"]))


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
        rows["old"] = {"clone_s": clone_s, **orv_measured(meter, ["boards", "--root", str(old), *BOARDS_LIMIT], old)}
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
        meter.git(new, "sparse-checkout", "set", "--no-cone", *push_patterns())
        meter.git(new, "checkout", "--quiet", "--force", merged)
        clone_s = round(time.perf_counter() - start, 2)
        clone_bytes = meter.sent()
        paths = remote_paths(remote)
        cloned = object_sizes(new)
        meter.log.unlink(missing_ok=True)
        rows["new"] = {
            "clone_s": clone_s,
            **orv_measured(meter, ["boards", "--incremental", "--root", str(new), *BOARDS_LIMIT], new),
        }
        rows["new"]["bytes"] = clone_bytes + meter.sent()
        rows["new"]["clone_bytes"] = clone_bytes
        rows["new"]["fetches_by_orv"] = meter.fetches()
        updated_objects = object_sizes(new)
        # what the bytes are: the objects each step brought, by what they are (their size in the clone's packs)
        rows["new"]["fetched"] = {
            "checkout": fetched_by_category({}, cloned, paths),
            "orv boards --incremental": fetched_by_category(cloned, updated_objects, paths),
        }

        full, updated = boards_tree(old), boards_tree(new)
        rows["equal"] = all(full.get(path) == data for path, data in updated.items())
        rows["files_written_by_update"] = int(
            subprocess.run(
                ["git", "status", "--porcelain", "--", "boards"], cwd=new, capture_output=True, text=True
            ).stdout.count("\n")
        )
        rows["largest_generated_file_bytes"] = max(len(data) for data in full.values())
        rows["largest_by_kind"] = largest_by_kind(full)

        # the push's next step: `orv site` from the same sparse clone, checking out what it renders (the index
        # and the parts, the training run files of the loss curves, the recipes of the reproduction plans)
        meter.log.unlink(missing_ok=True)
        rows["site"] = orv_measured(meter, ["site", str(scratch / "site"), "--root", str(new)], new)
        rows["site"]["bytes"] = meter.sent()
        rows["site"]["fetched"] = fetched_by_category(updated_objects, object_sizes(new), paths)
        # the old way's site, from its full clone (nothing to fetch): the pages must be the same
        rows["site_old"] = orv_measured(meter, ["site", str(scratch / "site-old"), "--root", str(old)], old)
        rows["site_equal"] = site_files(scratch / "site") == site_files(scratch / "site-old")
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(new, ignore_errors=True)
    for side in ("old", "new"):
        rows[side]["total_s"] = round(rows[side]["clone_s"] + rows[side]["orv_s"], 2)
    return {"runs": runs, **rows}


def largest_by_kind(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """The largest generated file of each kind (a model's manifest, a chunk, standings, a key shard, the index,
    the keys' header): {kind: {path, bytes}}."""
    out: dict[str, dict[str, Any]] = {}
    for path, data in sorted(files.items()):
        if path.startswith("boards/models/"):
            kind = "chunk" if path.count("/") == 3 else "manifest"
        elif path.startswith(("boards/standings/", "boards/keys/")):
            kind = "standings" if path.startswith("boards/standings/") else "key shard"
        else:
            kind = path
        if kind not in out or len(data) > out[kind]["bytes"]:
            out[kind] = {"path": path, "bytes": len(data)}
    return out


def site_files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


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

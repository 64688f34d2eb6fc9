"""A main-shaped registry *with history*, for measuring what cloning it costs (bench/clone.py).

bench/generate.py writes a registry's files and commits them at once; a clone's cost depends on the
history too. Here the same recipes and run files (bench/generate.py's training() and inference())
arrive over many commits, as merged pull requests would bring them:

- recipes arrive in `commits` batches (a batch stands for the pull requests merged between two
  boards refreshes); a recipe comes with its first run, and its second and third runs arrive a few
  batches later, rewriting the recipe's `runs:` line (a reproduction);
- one inference recipe in ten gets a quality run (an lm-eval gsm8k run of 200 documents, 115 KB,
  with responses of its own) a few batches after the recipe: quality evidence comes later;
- the last commit adds the generated boards (`orv boards` with the orv being measured, whatever
  layout it writes), as main's boards workflow does; the history does not replay a boards refresh
  per batch (that would run `orv boards` `commits` times), so it under-states what the generated
  files add to a full clone (issue 32 item 3 measures that);
- `pr` is main plus a one-recipe pull request (one inference recipe and its run file).

Run files here have 64-256 samples (~14 KB; bench/generate.py draws 64-3,000, ~110 KB): at
100,000 run files that keeps the registry at ~1.5 GB on disk and its generation to minutes on a
shared 2-core host. What a full or blobless clone moves grows with run-file size; what a sparse
clone moves does not (only the change's own files). Commits are written with `git fast-import`
(one process, no index), then packed with `git gc`. Generated registries are cached by a stamp.

    python bench/history.py --runs 1000 --out /tmp/orv-bench/history-1000
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import random
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import orjson

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO))

from bench import generate  # noqa: E402
from bench.generate import BOARDS_LIMIT, GIT, GIT_ENV, RUNS_PER_RECIPE, _store_run, inference, refresh_boards, training  # noqa: E402

HISTORY_VERSION = "1"
SAMPLE_RANGE = (64, 256)
QUALITY_EVERY = 10  # one inference recipe in ten gets a quality run
LATER = (1, 5)  # a recipe's further runs and quality run arrive this many batches later
QUALITY_TEMPLATE = (
    REPO
    / "tests"
    / "cases"
    / "orv239-copied-quality-reference"
    / "runs"
    / "13"
    / "130a25dceb08e2f0f8b90edd0dcd845161430d664b3e26ab113f2b3e009f33d4.json"
)
START = 1_767_225_600  # 2026-01-01T00:00:00Z: commit k is k hours later
PR_INDEX = 10_000_001  # the pull request's recipe (odd: inference), never one of the registry's
CACHE = Path(os.environ.get("ORV_BENCH_CACHE", "/tmp/orv-bench"))


def default_commits(runs: int) -> int:
    """Batches: 100 at 1,000 run files, 320 at 10,000, 1,000 at 100,000 (~3.16 * sqrt(runs))."""
    return max(10, round(runs**0.5 * 3.16 / 10) * 10)


def _word(n: int) -> str:
    """A letters-only word unique to n: numbers in a response would change what gsm8k extracts."""
    out = ""
    n += 1
    while n:
        n, r = divmod(n - 1, 26)
        out = chr(97 + r) + out
    return out


_QUALITY: dict | None = None


def quality_run(root: Path, i: int) -> str:
    """Store a quality run of recipe i (glm-5.3-flash, w4a16) with responses worded its own way."""
    global _QUALITY
    if _QUALITY is None:
        _QUALITY = orjson.loads(QUALITY_TEMPLATE.read_bytes())
    doc = copy.deepcopy(_QUALITY)
    doc.update(model="glm-5.3-flash", quant="w4a16", served_model="zai-org/GLM-5.3-Flash", measured_by=f"bench-{i % 5}")
    doc["lm_eval"]["config"]["model_args"]["model"] = "zai-org/GLM-5.3-Flash"
    prefix = f" Run {_word(i)} says:"
    for sample in doc["tasks"]["gsm8k"]["samples"]:
        sample["response"] = prefix + sample["response"]
    return _store_run(root, doc)


def _runs_line(text: str, digests: list[str]) -> str:
    lines = [
        f"runs: {orjson.dumps([f'sha256:{d}' for d in digests]).decode()}" if line.startswith("runs: ") else line
        for line in text.splitlines()
    ]
    return "\n".join(lines) + "\n"


def _digests(text: str) -> list[str]:
    line = next(line for line in text.splitlines() if line.startswith("runs: "))
    return [d.split(":", 1)[1] for d in orjson.loads(line[len("runs: ") :])]


VIRTUAL = Path("/registry")  # where generate.py's functions think they write (see _captured)


@contextlib.contextmanager
def _captured() -> Iterator[dict[str, bytes]]:
    """What bench/generate.py's functions write, kept in memory by path instead of written to disk:
    the bytes go to git fast-import, and a file system round trip per recipe doubled the time."""
    files: dict[str, bytes] = {}
    real = generate._write
    generate._write = lambda path, data: files.__setitem__(path.relative_to(VIRTUAL).as_posix(), data)
    try:
        yield files
    finally:
        generate._write = real


def recipe_files(i: int, rng: random.Random, runs: int) -> tuple[dict[str, bytes], dict[str, bytes]]:
    """Recipe i's files: (the pull request that adds it with its first run, the later one that adds
    its other runs and rewrites its `runs:`; empty when it has one run or none)."""
    with _captured() as files:
        (training if i % 2 == 0 else inference)(VIRTUAL, i, rng, runs, SAMPLE_RANGE)
        rel = next(p for p in files if p.startswith("recipes/"))
        text = files[rel].decode()
        digests = _digests(text)
        if i % 2 == 1 and (i // 2) % QUALITY_EVERY == 0:
            digests.append(quality_run(VIRTUAL, i))
            text = _runs_line(text, digests)
    first = {rel: _runs_line(text, digests[:1]).encode()}
    later = {rel: text.encode()} if len(digests) > 1 else {}
    for n, digest in enumerate(digests):
        path = f"runs/{digest[:2]}/{digest}.json"
        (later if n else first)[path] = files[path]
    return first, later


class Stream:
    """A `git fast-import` process; each commit lists its files inline (no index, no work tree)."""

    def __init__(self, root: Path) -> None:
        self.proc = subprocess.Popen(
            [*GIT, "fast-import", "--quiet", "--force", "--done"],
            cwd=root,
            stdin=subprocess.PIPE,
            env={**os.environ, **GIT_ENV},
        )
        self.out: IO[bytes] = self.proc.stdin  # type: ignore[assignment]

    def commit(self, ref: str, when: int, message: str, files: dict[str, bytes], parent: str | None = None) -> None:
        w = self.out.write
        msg = message.encode()
        w(f"commit {ref}\ncommitter bench <bench@example.invalid> {START + 3600 * when} +0000\n".encode())
        w(b"data %d\n%s\n" % (len(msg), msg))
        if parent:
            w(f"from {parent}\n".encode())
        for path, data in sorted(files.items()):
            w(f"M 100644 inline {path}\ndata {len(data)}\n".encode())
            w(data)
            w(b"\n")

    def close(self) -> None:
        self.out.write(b"done\n")
        self.out.close()
        if self.proc.wait():
            raise SystemExit("git fast-import failed")


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, *args], cwd=root, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout.strip()


def _catalog() -> dict[str, bytes]:
    base = REPO / "tests" / "cases" / "_base"
    return {
        p.relative_to(base).as_posix(): p.read_bytes() for p in sorted((base / "catalog").rglob("*")) if p.is_file()
    }


def write_history(root: Path, runs: int, commits: int, seed: int) -> dict[str, int]:
    """Stream the registry's history into the fresh repository at `root`; returns its counts."""
    stream = Stream(root)
    stream.commit("refs/heads/main", 0, "catalog", _catalog())
    later: dict[int, dict[str, bytes]] = {}
    made = recipes = 0
    for k in range(commits):
        files: dict[str, bytes] = later.pop(k, {})
        first_recipe = recipes
        while made < runs * (k + 1) // commits:
            rng = random.Random(seed * 1_000_003 + recipes)
            first, rest = recipe_files(recipes, rng, rng.choice(RUNS_PER_RECIPE))
            files.update(first)
            if rest:
                later.setdefault(k + rng.randint(*LATER), {}).update(rest)
            made += sum(1 for p in (*first, *rest) if p.startswith("runs/"))
            recipes += 1
        stream.commit(
            "refs/heads/main",
            k + 1,
            f"batch {k + 1}: recipes {first_recipe}-{recipes - 1}, later runs of earlier ones",
            files,
        )
    rest = {p: b for batch in sorted(later) for p, b in later[batch].items()}
    if rest:
        stream.commit("refs/heads/main", commits + 1, "the last reproductions and quality runs", rest)
    stream.close()
    return {"recipes": recipes, "run_files": made, "commits": commits + 1 + bool(rest)}


def make_pr(root: Path) -> list[str]:
    """Branch `pr`: main plus one inference recipe and its run file (a one-recipe pull request)."""
    first, _ = recipe_files(PR_INDEX, random.Random(PR_INDEX), 1)
    hours = (int(git(root, "log", "-1", "--format=%ct", "main")) - START) // 3600 + 1
    stream = Stream(root)
    stream.commit("refs/heads/pr", hours, "a one-recipe pull request", first, parent="refs/heads/main^0")
    stream.close()
    return sorted(first)


def boards_current(root: Path) -> bool:
    """Whether boards/keys.json carries this orv's derivation key (validator/boards/keyfile.py): then
    `orv boards` on the same data writes the same files, and a full pass is saved. Any other layout
    or stamp: False (refresh)."""
    from validator.load.cache import derivation_key

    try:
        stamp = orjson.loads((root / "boards" / "keys.json").read_bytes()).get("orv")
    except (OSError, ValueError, AttributeError):
        return False
    return bool(stamp) and stamp == derivation_key(str(root)) and not git(root, "status", "--porcelain")


def boards_by(root: Path, orv: str) -> None:
    """boards/ regenerated by another orv (`--orv`) and committed if they changed: the gate trusts
    only keys made by its own orv, so the base's keys must be that orv's, as on main."""
    subprocess.run(
        [orv, "boards", "--root", str(root), "--no-cache", *BOARDS_LIMIT], check=True, stdout=subprocess.DEVNULL
    )  # BOARDS_LIMIT: at 100,000 run files the bench's largest model's file passes the 25 MB a GitHub registry allows
    if git(root, "status", "--porcelain", "--", "boards"):
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", "boards")


def generate_history(
    runs: int, commits: int | None = None, seed: int = 20261205, root: Path | None = None, orv: str | None = None
) -> Path:
    """The registry of about `runs` run files (cached under /tmp/orv-bench/); boards refreshed with
    the orv installed (or `orv`), and `pr` rebuilt on them. Returns its root (a non-bare repository, checked out)."""
    commits = commits or default_commits(runs)
    root = root or CACHE / f"history-{runs}"
    stamp = f"{HISTORY_VERSION} {runs} {commits} {seed} {SAMPLE_RANGE}\n"
    marker = root / ".git" / "orv-bench-stamp"
    if not (marker.exists() and marker.read_text() == stamp):
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        git(root, "init", "-q", "-b", "main")
        counts = write_history(root, runs, commits, seed)
        git(root, "reset", "-q", "--hard", "main")
        (root / ".git" / "orv-bench-counts").write_text(orjson.dumps(counts).decode())
        marker.write_text(stamp)
    tip = git(root, "rev-parse", "main")
    git(root, "checkout", "-q", "main")
    if orv:
        boards_by(root, orv)
    elif not boards_current(root):
        refresh_boards(root)  # the same data; boards/ by the orv being measured
    changed = git(root, "rev-parse", "main") != tip or not git(root, "branch", "--list", "pr")
    if changed:
        (root / ".git" / "orv-bench-pr").write_text("\n".join(make_pr(root)) + "\n")
        git(root, "gc", "-q", "--prune=now")
    serve_filters(root)
    return root


def serve_filters(root: Path) -> None:
    """Let a partial clone of `root` ask for filtered packs and objects by id (as GitHub serves them)."""
    git(root, "config", "uploadpack.allowFilter", "true")
    git(root, "config", "uploadpack.allowAnySHA1InWant", "true")


def counts(root: Path) -> dict[str, int]:
    return orjson.loads((root / ".git" / "orv-bench-counts").read_bytes())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=1000, help="run files to generate (about one per recipe)")
    parser.add_argument("--commits", type=int, default=None, help="batches (default: ~10 * sqrt(runs))")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    root = generate_history(args.runs, args.commits, root=args.out)
    print(root, counts(root))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

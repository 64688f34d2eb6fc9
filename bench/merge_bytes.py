"""The bytes a one-recipe merge adds to git history in the generated files, one-file boards vs split boards.

For each N it generates a registry with bench/generate.py's writers (every file real orv input), its
recipes spread over many models as a public registry's are: N // 25 models (half training, half
inference), recipe counts by Zipf's law (weight 1/rank), so the largest model holds about 1/H(M) of
the recipes. It commits the data and `orv boards`' output, then merges one more training recipe into
(a) the largest model and (b) a median one, and regenerates, as main's boards workflow does.

The generated files of the two states (before and after the merge) are committed into two small
repositories, one per layout, and measured:

- one-file: boards/boards.json (`orv boards --combined`, byte for byte what orv wrote before the split)
  and the keys as one whole file (format 1: one line per file, rebuilt here from the shards, byte for
  byte the size orv wrote before the keys were sharded);
- split: boards/index.json, boards/models/<model>.json and boards/standings/<model>.json, and the keys as orv writes them now: the header
  boards/keys.json and the shards boards/keys/<hex>.json (validator/boards/keyfile.py);

and for each, the bytes the merge commit adds:

- `loose`: the new objects as `git commit` writes them (zlib, `%(objectsize:disk)` of loose objects):
  what a merge costs a clone that fetches it without deltas, and the disk of a repository never packed;
- `packed`: the growth of the packs after `git gc` (pack bytes with both commits minus with the first):
  what history keeps once git delta-compresses it. With git's default delta window (10 objects) the new
  version of a model file is often compared with other, similar model files rather than its own previous
  version, so `packed_aggressive` (`git gc --aggressive`, window 250, as a host's periodic repack may
  do) is measured too.

The keys are also measured alone ("keys, whole file" before, "keys, sharded" after), and so is what the
pull-request gate reads of them for a one-recipe pull request on a fresh runner (no local key index):
the whole file before, the header and the shards of the change's keys after (BaseTree.read counted).

Usage: python -m bench.merge_bytes --n 1000 --n 10000 [--save]   (results: bench/merge-bytes-results.json)
       python -m bench.merge_bytes --table   (the largest generated files' table in docs/boards.md, from the results)
100,000 recipes (about 7 GB of run files and an hour of `orv boards` on this host) is extrapolated
from the measured per-recipe and per-model figures, and the results say so.
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
import zlib
from pathlib import Path
from typing import Any

import yaml

from bench.generate import GIT, GIT_ENV, REPO, RUNS_PER_RECIPE, git, inference, training

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "merge-bytes-results.json"
RECIPES_PER_MODEL = 25
STAMP = "merge-bytes 3"  # 3: the combined boards.json is no longer committed
KEYS = "boards/keys.json"  # the registry; the measurement around it may change freely


def model_ids(n: int) -> tuple[list[str], list[str]]:
    """The training and inference model ids of a registry of n recipes, most recipes first."""
    half = max(1, n // RECIPES_PER_MODEL // 2)
    return [f"bench-t{i:04d}" for i in range(half)], [f"bench-i{i:04d}" for i in range(half)]


def zipf_pick(rng: random.Random, models: list[str]) -> str:
    weights = [1 / (rank + 1) for rank in range(len(models))]
    return rng.choices(models, weights=weights)[0]


def add_models(root: Path, trained: list[str], served: list[str]) -> None:
    """Catalog entries for the bench models: copies of the base catalog's qwen3.8-27b and glm-5.3-flash."""
    path = root / "catalog" / "models.yaml"
    catalog = yaml.safe_load(path.read_text())
    for ids, like in ((trained, "qwen3.8-27b"), (served, "glm-5.3-flash")):
        for model in ids:
            catalog["models"][model] = {**catalog["models"][like], "name": model.upper()}
    path.write_text(yaml.safe_dump(catalog, sort_keys=False))


def orv(root: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "validator", *args, "--root", str(root)], cwd=REPO, capture_output=True, text=True
    )
    if done.returncode != 0:
        raise SystemExit(f"orv {' '.join(args)} failed:\n{done.stdout}{done.stderr}")
    return done.stdout


def build(root: Path, n: int, seed: int = 20261205) -> tuple[list[str], dict[str, int]]:
    """The registry of n recipes with its boards committed; returns the training models and the recipe counts."""
    trained, served = model_ids(n)
    marker = root / ".generated"
    stamp = f"{STAMP} {n} {seed}\n"
    counts: dict[str, int] = {}
    pick = random.Random(seed)
    assignment = []
    for i in range(n):
        model = zipf_pick(pick, trained if i % 2 == 0 else served)
        counts[model] = counts.get(model, 0) + 1
        assignment.append(model)
    if marker.exists() and marker.read_text() == stamp:
        git(root, "reset", "-q", "--hard", "bench-base")  # as built, whatever an interrupted run left
        git(root, "clean", "-qfd")
        return trained, counts
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(REPO / "tests" / "cases" / "_base" / "catalog", root / "catalog")
    add_models(root, trained, served)
    for i, model in enumerate(assignment):
        rng = random.Random(seed * 1_000_003 + i)
        (training if i % 2 == 0 else inference)(root, i, rng, rng.choice(RUNS_PER_RECIPE), model=model)
    (root / ".gitignore").write_text(".generated\n")
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "data")
    orv(root, "boards")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "boards")
    git(root, "tag", "bench-base")
    marker.write_text(stamp)
    return trained, counts


def generated(root: Path) -> dict[str, dict[str, bytes]]:
    """The generated files of the registry as it is, in both layouts: {layout: {path: bytes}}."""
    boards = root / "boards"
    # the split layout is what orv commits; the one-file layout's boards.json is the combined document the boards
    # workflow publishes (`orv boards --combined`), as orv committed it before it left git
    split = {str(p.relative_to(root)): p.read_bytes() for p in sorted(boards.rglob("*.json"))}
    if "boards/boards.json" in split:  # an orv from before the combined document left git
        raise SystemExit("orv boards wrote boards/boards.json: measure an orv that no longer commits it")
    with tempfile.TemporaryDirectory() as tmp:
        combined = Path(tmp) / "boards.json"
        orv(root, "boards", "--combined", str(combined))
        one_file = {"boards/boards.json": combined.read_bytes(), KEYS: whole_keys(root, split)}
    return {"one-file": one_file, "split": split}


def key_files(files: dict[str, bytes]) -> dict[str, bytes]:
    """The keys' header and shards among the split layout's files."""
    return {path: data for path, data in files.items() if path == KEYS or path.startswith("boards/keys/")}


def whole_keys(root: Path, split: dict[str, bytes]) -> bytes:
    """The keys as the one whole file orv wrote before they were sharded (format 1: `path: [blob, keys]`, one
    line per file), rebuilt from the shards (blob -> keys) and git's index (blob -> paths; the registry is
    committed): the same entries, so the same bytes up to each file's key order."""
    header = json.loads(split[KEYS])
    keys_of: dict[str, list[str]] = {}
    for path, data in sorted(key_files(split).items()):
        if path == KEYS:
            continue
        for key, blobs in json.loads(data)["keys"].items():
            for blob in blobs:
                keys_of.setdefault(blob, []).append(key)
    files: dict[str, tuple[str, list[str]]] = {}
    for line in _git(root, "ls-files", "-s", "--", "recipes", "runs").splitlines():
        meta, rel = line.split("\t", 1)
        blob = meta.split()[1]
        if rel.endswith((".yaml", ".yml", ".json")) and not rel.endswith(".sig"):
            files[rel] = (blob, keys_of.get(blob, []))
    lines = [
        json.dumps(rel, ensure_ascii=False, separators=(",", ":"))
        + ":"
        + json.dumps([blob, keys], ensure_ascii=False, separators=(",", ":"))
        for rel, (blob, keys) in sorted(files.items())
    ]
    head = '{"format":1,"orv":' + json.dumps(header["orv"]) + ',"files":{'
    return (head + "\n" + ",\n".join(lines) + "\n}}\n").encode()


def gate_reads(root: Path, model: str, i: int) -> dict[str, Any]:
    """What `orv check --base main` reads of the merge base's keys for a pull request adding one training
    recipe (and its run file) to `model`, on a fresh runner (cache off: no local key index). The registry is
    put back as it was afterwards."""
    from validator.engine.evaluate import Config, evaluate
    from validator.git.diff import BaseTree

    git(root, "checkout", "-q", "-b", "bench-pr")
    try:
        training(root, i, random.Random(i), 1, model=model)
        git(root, "add", "-A")
        git(root, "commit", "-q", "-m", f"pull request: one recipe for {model}")
        read: dict[str, int] = {}
        original = BaseTree.read

        def spy(self: Any, path: str) -> Any:
            data = original(self, path)
            if path == KEYS or path.startswith("boards/keys/"):
                read[path] = read.get(path, 0) + len(data or b"")
            return data

        BaseTree.read = spy  # type: ignore[method-assign]
        try:
            started = time.monotonic()
            evaluation = evaluate(Config(root=str(root), base="main", skip_boards=True, cache=False, jobs=1))
            seconds = time.monotonic() - started
        finally:
            BaseTree.read = original  # type: ignore[method-assign]
        assert evaluation.partial, "the one-recipe pull request was checked whole"
        shards = sorted(p for p in read if p != KEYS)
        return {
            "model": model,
            "header_bytes": read.get(KEYS, 0),
            "shards_read": len(shards),
            "shard_bytes": sum(read[p] for p in shards),
            "bytes": sum(read.values()),
            "files_checked": evaluation.result.files_checked,
            "check_seconds": round(seconds, 2),
        }
    finally:
        git(root, "checkout", "-q", "-f", "main")
        git(root, "branch", "-q", "-D", "bench-pr")
        git(root, "clean", "-qfd")


def merge_once(root: Path, model: str, i: int) -> dict[str, dict[str, bytes]]:
    """Merge one more training recipe for `model`, regenerate the boards; the generated files after it.
    The registry is put back as it was (git reset) afterwards."""
    rng = random.Random(i)
    training(root, i, rng, 1, model=model)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", f"one recipe for {model}")
    orv(root, "boards")
    after = generated(root)
    git(root, "reset", "-q", "--hard", "HEAD~1")
    git(root, "clean", "-qfd")
    return after


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(
        [*GIT, *args], cwd=repo, check=True, capture_output=True, text=True, env={**os.environ, **GIT_ENV}
    ).stdout


def _write_tree(repo: Path, files: dict[str, bytes]) -> None:
    for old in repo.glob("boards"):
        shutil.rmtree(old)
    for rel, data in files.items():
        path = repo / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _size_pack(repo: Path, *options: str) -> int:
    """Bytes of the repository's packs after `git gc` (every object packed; deltas found by git's defaults, or
    with `--aggressive`'s wider search)."""
    _git(repo, "gc", "-q", "--prune=now", *options)
    return sum(p.stat().st_size for p in (repo / ".git" / "objects" / "pack").glob("*.pack"))


def _packed_growth(before: dict[str, bytes], after: dict[str, bytes], *gc: str) -> int:
    """How much `git gc` (with these options) packs grow with the commit from `before` to `after`, in a
    repository of its own (a pack made by one gc mode is never reused by the other)."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        _git(repo, "init", "-q", "-b", "main")
        _write_tree(repo, before)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "before")
        packed_before = _size_pack(repo, *gc)
        _write_tree(repo, after)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "after")
        return _size_pack(repo, *gc) - packed_before


def history_bytes(before: dict[str, bytes], after: dict[str, bytes]) -> dict[str, Any]:
    """The bytes one commit from `before` to `after` adds to a repository holding only these files."""
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp)
        _git(repo, "init", "-q", "-b", "main")
        _write_tree(repo, before)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "before")
        _write_tree(repo, after)
        _git(repo, "add", "-A")
        _git(repo, "commit", "-q", "-m", "after")
        new = _git(repo, "rev-list", "--objects", "HEAD~1..HEAD").split()
        objects = [word for word in new if len(word) == 40]
        batch = subprocess.run(
            [*GIT, "cat-file", "--batch-check=%(objecttype) %(objectsize:disk)"],
            cwd=repo,
            input="\n".join(objects) + "\n",
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        loose = {"blob": 0, "tree": 0, "commit": 0}
        for line in batch.splitlines():
            kind, size = line.split()
            loose[kind] += int(size)
    changed = sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))
    by_kind = {"index": 0, "model files": 0, "keys.json": 0, "key shards": 0, "boards.json": 0}
    for path in changed:
        if path in after:  # zlib of git's "blob <size>\0" + the bytes, at zlib's default level
            data = after[path]
            # a model's file and its standings (what the gate's summary reads of it) are rewritten together
            kind = (
                "model files"
                if path.startswith(("boards/models/", "boards/standings/"))
                else "keys.json"
                if path.endswith("keys.json")
                else "key shards"
                if path.startswith("boards/keys/")
                else "index"
                if path.endswith("index.json")
                else "boards.json"
            )
            by_kind[kind] += len(zlib.compress(b"blob %d\0" % len(data) + data))
    return {
        "files_rewritten": len(changed),
        "bytes_rewritten": sum(len(after.get(p, b"")) for p in changed),
        "loose": loose["blob"] + loose["tree"],
        "loose_blobs": loose["blob"],
        "loose_trees": loose["tree"],
        "loose_blobs_by_file": by_kind,
        "packed": _packed_growth(before, after),
        "packed_aggressive": _packed_growth(before, after, "--aggressive"),
    }


def measure(n: int, out: Path) -> dict[str, Any]:
    started = time.monotonic()
    root = out / f"merge-registry-{n}"
    trained, counts = build(root, n)
    orv(root, "boards")  # the generated files as this orv writes them (the key shards, its stamp)
    git(root, "add", "-A")
    if _git(root, "status", "--porcelain"):
        git(root, "commit", "-q", "-m", "boards by this orv")
    sizes = sorted(((counts.get(m, 0), m) for m in trained), reverse=True)
    largest = sizes[0][1]
    median = sizes[len(sizes) // 2][1]
    before = generated(root)
    result: dict[str, Any] = {
        "recipes": n,
        "models": len(trained) * 2,
        "largest_model_recipes": sizes[0][0],
        "median_model_recipes": sizes[len(sizes) // 2][0],
        "sizes": {
            layout: {
                "files": len(files),
                "bytes": sum(map(len, files.values())),
                "largest_file": max(map(len, files.values())),
            }
            for layout, files in before.items()
        },
        "largest_by_kind": largest_by_kind(before["split"]),
        "combined_bytes": len(before["one-file"]["boards/boards.json"]),
        "keys_json_bytes": len(before["one-file"][KEYS]),
        "keys_sharded": {
            "header_bytes": len(before["split"][KEYS]),
            "digits": json.loads(before["split"][KEYS])["digits"],
            "shards": len(key_files(before["split"])) - 1,
            "bytes": sum(map(len, key_files(before["split"]).values())),
            "largest_shard": max(len(d) for p, d in key_files(before["split"]).items() if p != KEYS),
        },
        "merge": {},
    }
    for label, model in (("largest model", largest), ("median model", median)):
        after = merge_once(root, model, 10_000_000 + n)
        result["merge"][label] = {
            "model": model,
            "recipes": counts.get(model, 0),
            **{layout: history_bytes(before[layout], after[layout]) for layout in before},
            "keys.json alone": history_bytes({KEYS: before["one-file"][KEYS]}, {KEYS: after["one-file"][KEYS]}),
            "keys sharded alone": history_bytes(key_files(before["split"]), key_files(after["split"])),
        }
        result["merge"][label]["gate reads of the keys"] = {
            "whole file (before)": len(before["one-file"][KEYS]),
            "sharded (after)": gate_reads(root, model, 20_000_000 + n),
        }
    result["seconds"] = round(time.monotonic() - started, 1)
    return result


def file_kind(path: str) -> str:
    """A generated file's kind, by what its size grows with (docs/boards.md, "File sizes")."""
    if path.startswith("boards/models/"):
        return "model file"
    if path.startswith("boards/standings/"):
        return "standings"
    if path.startswith("boards/keys/"):
        return "key shard"
    return {KEYS: "keys header", "boards/index.json": "index"}.get(path, "other")


def largest_by_kind(files: dict[str, bytes]) -> dict[str, dict[str, Any]]:
    """The largest generated file of each kind: {kind: {path, bytes}}."""
    out: dict[str, dict[str, Any]] = {}
    for path, data in sorted(files.items()):
        kind = file_kind(path)
        if kind not in out or len(data) > out[kind]["bytes"]:
            out[kind] = {"path": path, "bytes": len(data)}
    return out


def _harmonic(m: int) -> float:
    return sum(1 / k for k in range(1, m + 1))


def largest_model_growth(measured: dict[str, Any], n: int) -> float:
    """How much the largest model's recipes grow from the measured registry to n recipes: by Zipf's law it
    holds about 1/H(M) of its kind's recipes, M = the kind's models (N // 25 // 2)."""
    scale = n / measured["recipes"]
    half = measured["models"] // 2
    return scale * _harmonic(half) / _harmonic(int(half * scale))


def shard_digits(total: float) -> int:
    """The hex digits keyfile shards `total` bytes of keys by (keyfile.SHARD_TARGET_BYTES, MAX_DIGITS)."""
    from validator.boards.keyfile import MAX_DIGITS, SHARD_TARGET_BYTES

    digits = 1
    while digits < MAX_DIGITS and total > SHARD_TARGET_BYTES * 16**digits:
        digits += 1
    return digits


def largest_files(measured: dict[str, Any], n: int) -> dict[str, int]:
    """The size model: the largest generated file of each kind at n recipes, from one measured registry, each
    scaled by what it grows with: a model's file and its standings with the largest model's recipes, the index
    with the models, a key shard with the keys over the shards (keyfile adds a hex digit as they grow), the
    keys' header not at all. The combined document (published, not committed) grows with the recipes."""
    scale = n / measured["recipes"]
    growth = largest_model_growth(measured, n)
    kinds = measured["largest_by_kind"]
    keys_total = measured["keys_sharded"]["bytes"]
    shard_growth = (keys_total * scale / 16 ** shard_digits(keys_total * scale)) / (
        keys_total / 16 ** shard_digits(keys_total)
    )
    by = {"model file": growth, "standings": growth, "index": scale, "key shard": shard_growth, "keys header": 1.0}
    out = {kind: int(kinds[kind]["bytes"] * factor) for kind, factor in by.items() if kind in kinds}
    out["combined boards.json (published, not committed)"] = int(measured["combined_bytes"] * scale)
    return out


def extrapolate(results: list[dict[str, Any]], n: int) -> dict[str, Any]:
    """The loose bytes at n recipes, from the largest measured registry, part by part, each scaled by what it
    grows with: the one-file boards.json and keys.json with the recipes; a model's file with that model's
    recipes (the largest model: about 1/H(M/2) of its kind's recipes by Zipf's law; the median: constant);
    the index and the boards/models tree with the models (N // 25). All parts are git's loose objects
    (`%(objectsize:disk)`), the model file's share taken from its zlib size. Packed growth is not extrapolated."""
    base = max(results, key=lambda r: r["recipes"])
    scale = n / base["recipes"]

    def harmonic(m: int) -> float:
        return sum(1 / k for k in range(1, m + 1))

    half = base["models"] // 2
    largest_growth = scale * harmonic(half) / harmonic(int(half * scale))
    out: dict[str, Any] = {
        "recipes": n,
        "extrapolated_from": base["recipes"],
        "models": int(base["models"] * scale),
        "largest_model_recipes": int(base["largest_model_recipes"] * largest_model_growth(base, n)),
        "largest_files": largest_files(base, n),
        "merge": {},
    }
    # a shard's size grows with the keys until the index takes one more hex digit (keyfile.SHARD_TARGET_BYTES):
    # a merge touches about as many shards at any size, each as big as total / 16**digits; git's trees of
    # boards/keys/ it rewrites hold 256 entries (the folders) and each touched folder 16**(digits - 2)
    from validator.boards.keyfile import MAX_DIGITS, SHARD_TARGET_BYTES

    def digits_for(total: float) -> int:
        digits = 1
        while digits < MAX_DIGITS and total > SHARD_TARGET_BYTES * 16**digits:
            digits += 1
        return digits

    def tree_bytes(digits: int, touched: int) -> int:  # ~33 bytes an entry (mode, name, 20-byte id), zlib ~0.9
        if digits <= 2:
            return int(33 * 16**digits * 0.9)
        return int(33 * (256 + touched * 16 ** (digits - 2)) * 0.9)

    keys_total = base["keys_sharded"]["bytes"]
    digits_now, digits_then = digits_for(keys_total), digits_for(keys_total * scale)
    shard_growth = (keys_total * scale / 16**digits_then) / (keys_total / 16**digits_now)
    out["keys_sharded"] = {
        "bytes": int(keys_total * scale),
        "digits": digits_then,
        "shard_bytes": int(keys_total * scale / 16**digits_then),
    }
    for label, measured in base["merge"].items():
        one, split, keys = measured["one-file"], measured["split"], measured["keys.json alone"]
        sharded = measured["keys sharded alone"]
        boards_file = one["loose"] - keys["loose"]
        split_boards = split["loose"] - sharded["loose"]
        model_file = split["loose_blobs_by_file"]["model files"]
        growth = largest_growth if label == "largest model" else 1.0
        out["merge"][label] = {
            "boards.json (one file)": int(boards_file * scale),
            "boards/ split (index, model file, trees)": int(model_file * growth + (split_boards - model_file) * scale),
            "keys.json (whole, before)": int(keys["loose"] * scale),
            "keys.json size": int(measured["keys.json alone"]["bytes_rewritten"] * scale),
            "keys sharded (header and touched shards)": int(
                sharded["loose_blobs"] * shard_growth + tree_bytes(digits_then, sharded["files_rewritten"])
            ),
            "keys sharded, bytes rewritten": int(sharded["bytes_rewritten"] * shard_growth),
        }
        reads = measured["gate reads of the keys"]
        out["gate reads of the keys"] = {  # as many shards as at the measured size (the same neighbourhood)
            "whole file (before)": int(reads["whole file (before)"] * scale),
            "sharded (after)": int(
                reads["sharded (after)"]["header_bytes"] + reads["sharded (after)"]["shard_bytes"] * shard_growth
            ),
        }
    out["note"] = (
        "extrapolated from the measured parts, not measured; loose objects only: packed (delta-compressed) "
        "growth depends on git's delta search and is not extrapolated"
    )
    return out


def _size(n: float) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 1e6 else f"{n / 1e3:.1f} KB" if n >= 1e3 else f"{int(n)} B"


def size_table(document: dict[str, Any]) -> str:
    """The largest generated file of each kind, measured and extrapolated, as docs/boards.md and
    docs/benchmarks.md show it (tests/unit/test_boards_size.py holds both to this)."""
    lines = [
        "| recipes (models) | largest model file | largest standings | index | largest key shard | keys header "
        "| largest committed file | combined boards.json (published, not committed) |",
        "|" + "---|" * 8,
    ]
    kinds = ("model file", "standings", "index", "key shard", "keys header")
    for m in sorted(document["measured"], key=lambda r: r["recipes"]):
        sizes = [m["largest_by_kind"][kind]["bytes"] for kind in kinds]
        cells = [_size(v) for v in sizes] + [_size(max(sizes)), _size(m["combined_bytes"])]
        lines.append(f"| {m['recipes']:,} ({m['models']:,}), measured | " + " | ".join(cells) + " |")
    for e in document["extrapolated"]:
        files = e["largest_files"]
        sizes = [files[kind] for kind in kinds]
        cells = ["~" + _size(v) for v in sizes[:-1]] + [_size(sizes[-1])]
        combined = files["combined boards.json (published, not committed)"]
        cells += [f"**~{_size(max(sizes))}** (limit 25 MB)", f"~{_size(combined)}: over GitHub's 100 MB limit"]
        lines.append(f"| {e['recipes']:,} ({e['models']:,}), extrapolated | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, action="append", help="recipes (repeatable; default 1000 and 10000)")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    parser.add_argument("--save", action="store_true", help=f"write {RESULTS.name}")
    parser.add_argument(
        "--table", action="store_true", help=f"print the file-size table of {RESULTS.name}, measure nothing"
    )
    args = parser.parse_args()
    if args.table:
        print(size_table(json.loads(RESULTS.read_text())))
        return 0
    results = []
    for n in args.n or [1000, 10000]:
        result = measure(n, args.out)
        print(json.dumps(result, indent=2), flush=True)
        results.append(result)
    document = {
        "command": "python -m bench.merge_bytes " + " ".join(f"--n {r['recipes']}" for r in results),
        "measured": results,
        "extrapolated": [extrapolate(results, 100_000)],
    }
    if args.save:
        RESULTS.write_text(json.dumps(document, indent=2) + "\n")
    print(json.dumps(document["extrapolated"], indent=2))
    print(size_table(document))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

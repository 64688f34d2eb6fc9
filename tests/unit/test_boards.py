"""Tier boards (SPEC §7): content, ranks, determinism, git-derived time, ORV701 and `orv boards --check`."""

from __future__ import annotations

import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testing.factories import (
    SEED_000,
    SEED_004,
    inference_recipe,
    inference_run,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
    write_yaml,
)
from tests.testing.git import commit_all, git, git_init
from tests.testing.paths import REPO
from tests.testing.registry import make_registry
from validator.boards import regenerate as regenerate_module
from validator.boards.build import BOARDS_SCHEMA_ID, GitStamp, build, duplicate_row, render
from validator.boards.regenerate import git_stamp
from validator.boards.split import committed_files, read_boards
from validator.checks.freshness import compare as compare_boards
from validator.cli import main
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import derive
from validator.load import schema as schemas
from validator.registry.snapshot import Catalog

SEEDS = Path("/work/shared/seeds")
BOARDS = "boards/index.json"  # the boards' index; each model's part under boards/models/ (boards/split.py)


def document(root: Path, stamp: GitStamp = GitStamp()) -> dict[str, Any]:
    analysis = analyse(str(root))
    doc = build(analysis.snapshot, derive(analysis.snapshot, analysis.diagnostics), stamp)
    assert schemas.validate("boards", doc) == []
    return doc


def rows_by_recipe(doc: dict[str, Any], board: str) -> dict[str, dict[str, Any]]:
    return {row["recipe"]: row for row in doc["boards"][board]}


def orv(*args: str) -> int:
    return main(list(args))


# --------------------------------------------------------------------------- training board


def test_training_rows_rank_cost_and_mfu(registry: Path) -> None:
    write_recipe(registry, training_recipe("b200-pp4", 4011.4, gpu="b200"))
    write_recipe(
        registry,
        training_recipe("b200-pp2", 3858.5, gpu="b200", layout={"tp": 1, "pp": 2, "dp": 4, "layer_split": [34, 30]}),
    )
    h100_recipe = training_recipe("h100-pp4", 1480.4, notes="CPU optimizer offload.")
    h100_recipe["runs"] = [store_run(registry, training_run(h100_recipe))]
    write_recipe(registry, h100_recipe)
    doc = document(registry)
    rows = rows_by_recipe(doc, "training")
    assert [(r, rows[r]["rank"], rows[r]["rank_of"]) for r in sorted(rows)] == [
        ("b200-pp2", 2, 2),
        ("b200-pp4", 1, 2),
        ("h100-pp4", 1, 1),
    ]
    h100 = rows["h100-pp4"]
    assert h100["cost_per_1m"] == round(6.88e6 / (3600 * 1480.4), 2) == 1.29  # seed 000 shows $1.29
    assert h100["mfu"] == round(1480.4 * 6 * 25.6e9 / 989.4e12, 4)
    assert (h100["layout"], h100["gpus"], h100["notes"], h100["tier"]) == (
        "TP1 PP4 DP2",
        8,
        "CPU optimizer offload.",
        "T2",
    )
    assert (h100["framework"], h100["framework_ver"], h100["legacy"]) == ("megatron-core", "0.30.0", False)
    assert (rows["b200-pp2"]["layout"], rows["b200-pp2"]["tier"]) == ("TP1 PP2 DP4", "T0")
    (run_row,) = doc["runs"]
    assert (run_row["headline"], run_row["headline_source"], run_row["recipes"]) == (
        {"tokens_per_s_per_gpu": 1480.4},
        "samples",
        ["h100-pp4"],
    )


def test_models_show_the_fastest_per_gpu_and_the_gain_over_the_starting_point(registry: Path) -> None:
    write_recipe(registry, training_recipe("b200-fast", 4011.4, gpu="b200"))
    write_recipe(registry, training_recipe("b200-slow", 3858.5, gpu="b200", measured="2026-10-20"))
    write_recipe(registry, training_recipe("h100-tuned", 1480.4))
    write_recipe(registry, training_recipe("h100-untuned", 861.5, baseline=True))
    write_yaml(
        registry,
        "catalog/starting-points.yaml",
        {
            "starting_points": [
                {
                    "model": "qwen3.8-27b",
                    "gpu": "b200",
                    "workload": "sft-8k-gb128-bf16",
                    "tokens_per_s_per_gpu": 1411.1,
                    "source": SEED_000,
                },
                {
                    "model": "qwen3.8-27b",
                    "gpu": "h100",
                    "tokens_per_s_per_gpu": 500.0,
                    "source": "ignored: a baseline exists",
                },
            ]
        },
    )
    (model,) = document(registry)["models"]
    assert (model["model"], model["family"], model["recipes"], model["newest"]) == (
        "qwen3.8-27b",
        "Qwen",
        4,
        "2026-10-20",
    )
    b200, h100 = model["gpus"]
    assert (b200["gpu"], b200["recipe"], b200["tok_s_per_gpu"], b200["gpus"], b200["vs_fastest"]) == (
        "b200",
        "b200-fast",
        4011.4,
        8,
        1.0,
    )
    assert b200["starting_point"] == {"tok_s_per_gpu": 1411.1, "recipe": None, "source": SEED_000}
    assert b200["gain_pct"] == 184.3  # seed 000: "1,411.1 -> 4,011.4 +184%"
    assert (h100["recipe"], h100["vs_fastest"]) == ("h100-tuned", round(1480.4 / 4011.4, 3))
    assert h100["starting_point"]["recipe"] == "h100-untuned"
    assert h100["gain_pct"] == 71.8  # seed 000: "861.5 -> 1,480.4 +72%"


def test_equal_figures_share_a_rank(registry: Path) -> None:
    for rid in ("tie-a", "tie-b"):
        write_recipe(registry, training_recipe(rid, 1000.0))
    write_recipe(registry, training_recipe("slower", 999.99))
    rows = rows_by_recipe(document(registry), "training")
    assert [rows[r]["rank"] for r in ("tie-a", "tie-b", "slower")] == [1, 1, 3]


def test_figures_are_rounded_never_float_noise(registry: Path) -> None:
    write_recipe(registry, training_recipe("noisy", 41.47331427713900353637654916383326053619384765625))
    raw = render(document(registry)).decode()
    assert "41.47," in raw and "41.473" not in raw
    assert raw.endswith("}\n") and not raw.endswith("\n\n")


def test_a_claim_too_small_to_show_still_gives_a_valid_board(registry: Path) -> None:
    write_recipe(registry, training_recipe("tiny", 0.001))
    (row,) = document(registry)["boards"]["training"]  # document() asserts the schema holds
    assert (row["tok_s_per_gpu"], row["cost_per_1m"]) == (0.0, None)


# --------------------------------------------------------------------------- inference boards


def test_seed_004_shaped_rows(registry: Path) -> None:
    pinned = inference_recipe("pinned-import", decode=41.47331427713861, provenance={"source": SEED_004, "row": 1})
    pinned["runs"] = [
        store_run(registry, inference_run(pinned, samples=False, provenance={"source": SEED_004, "legacy_id": "11"}))
    ]
    write_recipe(registry, pinned)
    verified = inference_recipe("verified", decode=50.0, count=1)
    verified["runs"] = [store_run(registry, inference_run(verified))]
    write_recipe(registry, verified)
    write_recipe(registry, inference_recipe("unpinned-import", software={}, provenance={"source": SEED_004, "row": 2}))
    write_recipe(registry, inference_recipe("bare-claim", decode=124))
    doc = document(registry)
    measured, claimed = rows_by_recipe(doc, "measured"), rows_by_recipe(doc, "claimed")
    assert sorted(measured) == ["pinned-import", "verified"]
    assert sorted(claimed) == ["bare-claim", "unpinned-import"]

    legacy = measured["pinned-import"]
    assert (legacy["tier"], legacy["hardware"], legacy["gpu"], legacy["gpus"]) == ("T1", "rtx-3090-x2", "rtx-3090", 2)
    assert (legacy["engine"], legacy["engine_ver"]) == ("vllm", "0.30.0 @ 1fe3a1571abc")
    assert (legacy["decode_tok_s"], legacy["method_ref"], legacy["run_id"], legacy["legacy"]) == (
        41.47,
        None,
        "11",
        True,
    )
    assert legacy["run_file"] == f"runs/{legacy['run_sha'][:2]}/{legacy['run_sha']}.json"
    assert (legacy["tool"], legacy["tool_version"], legacy["measured_by"]) == ("bench", "0.8.0", "key-2952")

    good = measured["verified"]
    assert (good["tier"], good["hardware"], good["method_ref"]) == ("T2", "rtx-3090", "docs/metrics.md")
    assert (good["decode_tok_s"], good["prefill_tok_s"], good["ttft_ms"]) == (50.0, 10000.0, 100.0)

    assert claimed["unpinned-import"]["tier_reasons"] == [
        "no run file on record",
        "legacy entry: stack not stated by the source; pin it to rise above T0",
    ]
    assert (claimed["bare-claim"]["claimed_tok_s"], claimed["bare-claim"]["engine_ver"]) == (
        124.0,
        "0.30.0 @ 1fe3a1571abc",
    )
    seed_measured = {
        "tier",
        "recipe",
        "model",
        "quant",
        "hardware",
        "engine",
        "engine_ver",
        "context_len",
        "concurrency",
        "prefill_tok_s",
        "decode_tok_s",
        "ttft_ms",
        "stddev",
        "slot_ceiling",
        "tool",
        "tool_version",
        "method_ref",
        "measured_by",
        "run_id",
        "run_sha",
        "run_file",
    }
    seed_claimed = {"tier", "recipe", "model", "quant", "hardware", "engine", "engine_ver", "claimed_tok_s"}
    assert all(seed_measured <= set(row) for row in doc["boards"]["measured"])
    assert all(seed_claimed <= set(row) for row in doc["boards"]["claimed"])
    runs = {r["content_hash"]: r for r in doc["runs"]}
    assert runs[legacy["run_sha"]]["recipes"] == ["pinned-import"]
    assert runs[legacy["run_sha"]]["headline_source"] == "tool-summary"
    assert runs[good["run_sha"]]["samples"] == 8


def test_a_recipe_id_appears_once_even_in_two_folders(registry: Path) -> None:
    recipe = inference_recipe("twice")
    write_recipe(registry, recipe)
    write_recipe(registry, recipe, folder="zz-elsewhere")
    doc = document(registry)
    assert [row["path"] for row in doc["boards"]["claimed"]] == ["recipes/inference/glm-5.3-flash/twice.yaml"]


def test_measured_rows_never_lack_run_evidence_and_never_repeat(registry: Path) -> None:
    """Seed 004 had T1 rows with no run file and rows repeated up to 12 times; neither can happen here."""
    for i in range(4):
        recipe = inference_recipe(f"row-{i}", decode=40.0 + i)
        shared = inference_run(recipe, samples=False)
        recipe["runs"] = [store_run(registry, shared), store_run(registry, {**shared, "measured_by": f"m{i}"})]
        write_recipe(registry, recipe)
    doc = document(registry)
    measured = doc["boards"]["measured"]
    assert len(measured) == 4
    assert len({json.dumps(row, sort_keys=True) for row in measured}) == len({r["recipe"] for r in measured}) == 4
    for row in measured:
        assert row["tool"] and row["tool_version"]
        assert (registry / row["run_file"]).is_file()


# --------------------------------------------------------------------------- schema


def test_schema_id_matches_the_document() -> None:
    assert schemas.schema_id("boards") == BOARDS_SCHEMA_ID


def test_schema_rejects_what_seed_004_got_wrong() -> None:
    row = {
        "tier": "T1",
        "tier_reasons": [],
        "recipe": "r",
        "path": "recipes/inference/m/r.yaml",
        "model": "m",
        "model_name": "M",
        "quant": "q",
        "hardware": "g-x2",
        "gpu": "g",
        "gpus": 2,
        "engine": "vllm",
        "engine_ver": "0.30.0",
        "measured": "2026-10-17",
        "author": "a",
        "notes": None,
        "legacy": False,
        "context_len": None,
        "quality": {
            "task": "gsm8k",
            "metric": None,
            "filter": None,
            "score": None,
            "reference": None,
            "ratio": None,
            "n": None,
            "status": "missing",
        },
        "concurrency": 1,
        "prefill_tok_s": None,
        "decode_tok_s": 41.47,
        "output_tok_s": None,
        "ttft_ms": None,
        "stddev": None,
        "slot_ceiling": None,
        "tool": "bench",
        "tool_version": "0.8.0",
        "method_ref": None,
        "measured_by": "k",
        "rank": 1,
        "rank_of": 1,
        "run_id": None,
        "run_sha": "a" * 64,
        "run_file": f"runs/aa/{'a' * 64}.json",
        "workload": "unspecified",
        "workload_label": "unspecified",
    }
    doc = {
        "meta": {
            "schema": BOARDS_SCHEMA_ID,
            "tiers": [],
            "updated_at": None,
            "source_commit": None,
            "rounding": {},
            "counts": {"training": 0, "measured": 1, "claimed": 0, "models": 0, "runs": 0},
        },
        "boards": {"measured": [row], "claimed": [], "training": []},
        "models": [],
        "frontiers": [],
        "runs": [],
        "wanted": {"models": [], "references": [], "reproductions": [], "quality": []},
    }
    assert schemas.validate("boards", doc) == []
    no_run = {**row, "tool": None, "run_file": None}
    for bad in (
        {**doc, "boards": {**doc["boards"], "measured": [no_run]}},
        {**doc, "boards": {**doc["boards"], "measured": [{**row, "tier": "T0"}]}},
    ):
        assert schemas.validate("boards", bad)
    # A repeated row is the generator's (linear, set-based) business, not the schema's (pairwise).
    assert duplicate_row(doc) is None
    repeated = {**doc, "boards": {**doc["boards"], "measured": [row, row]}}
    assert duplicate_row(repeated) == ("boards.measured", ("r",))
    # Same recipe id with other figures is still a repeat: uniqueness is by key, stricter than uniqueItems.
    twice = {**doc, "boards": {**doc["boards"], "measured": [row, {**row, "decode_tok_s": 1.0}]}}
    assert duplicate_row(twice) == ("boards.measured", ("r",))


def test_a_repeated_row_is_never_written(registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A generator that repeats a row stops regenerate (orv's bug), as a schema failure does."""
    recipe = training_recipe("h100-pp4", 1480.4)
    recipe["runs"] = [store_run(registry, training_run(recipe))]
    write_recipe(registry, recipe)
    real_build = regenerate_module.build

    def doubled(*args: object) -> dict:
        document = real_build(*args)
        document["runs"] = document["runs"] + document["runs"][:1]
        return document

    analysis = analyse(str(registry))
    assert analysis.snapshot.runs, "the fixture registry needs a run for a run row to repeat"
    regenerate_module.regenerate(analysis, GitStamp())  # unique rows: fine
    monkeypatch.setattr(regenerate_module, "build", doubled)
    with pytest.raises(RuntimeError, match="repeat a row in runs"):
        regenerate_module.regenerate(analysis, GitStamp())


# --------------------------------------------------------------------------- git time and determinism


def git_registry(tmp_path: Path) -> Path:
    root = make_registry(tmp_path / "repo")
    git_init(root)
    write_recipe(root, training_recipe("b200-pp4", 4011.4, gpu="b200"))
    write_recipe(
        root,
        training_recipe("b200-pp2", 3858.5, gpu="b200", layout={"tp": 1, "pp": 2, "dp": 4, "layer_split": [34, 30]}),
    )
    write_recipe(root, inference_recipe("claim"))
    commit_all(root, "data", "2026-10-18T09:30:00+02:00")
    return root


@pytest.mark.git
def test_updated_at_is_the_newest_data_commit(tmp_path: Path) -> None:
    root = git_registry(tmp_path)
    data_commit = git(root, "rev-parse", "HEAD")
    assert git_stamp(str(root)) == GitStamp("2026-10-18T07:30:00+00:00", data_commit)
    (root / "README.md").write_text("not data\n")
    commit_all(root, "docs only", "2026-10-19T00:00:00+00:00")
    assert git_stamp(str(root)).source_commit == data_commit
    (root / "catalog" / "hardware.yaml").write_text((root / "catalog" / "hardware.yaml").read_text() + "\n")
    catalog_commit = commit_all(root, "catalog", "2026-10-21T00:00:00+00:00")
    assert git_stamp(str(root)) == GitStamp("2026-10-21T00:00:00+00:00", catalog_commit)


@pytest.mark.git
def test_a_merge_bringing_in_data_is_transparent(tmp_path: Path) -> None:
    root = git_registry(tmp_path)
    git(root, "checkout", "-q", "-b", "feature")
    write_recipe(root, training_recipe("added", 500.0))
    feature = commit_all(root, "add a recipe", "2026-10-19T00:00:00+00:00")
    git(root, "checkout", "-q", "main")
    git(root, "merge", "-q", "--no-ff", "-m", "merge", "feature", date="2026-10-25T00:00:00+00:00")
    assert git_stamp(str(root)) == GitStamp("2026-10-19T00:00:00+00:00", feature)


@pytest.mark.git
def test_updated_at_outside_git_or_before_any_commit_is_null(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "plain")
    assert git_stamp(str(root)) == GitStamp()
    git_init(root)
    assert git_stamp(str(root)) == GitStamp()


@pytest.mark.git
def test_a_registry_inside_a_larger_repository_uses_its_own_folders(tmp_path: Path) -> None:
    git_init(tmp_path)
    root = make_registry(tmp_path / "sub")
    write_recipe(root, training_recipe("x", 100.0))
    first = commit_all(tmp_path, "registry", "2026-10-01T00:00:00+00:00")
    (tmp_path / "recipes").mkdir()
    (tmp_path / "recipes" / "other.txt").write_text("outside the registry\n")
    commit_all(tmp_path, "unrelated", "2026-10-02T00:00:00+00:00")
    assert git_stamp(str(root)).source_commit == first


@pytest.mark.slow
@pytest.mark.git
def test_same_commit_gives_identical_bytes_in_different_folders_and_processes(tmp_path: Path) -> None:
    root = git_registry(tmp_path)
    clone = tmp_path / "elsewhere" / "clone"
    subprocess.run(["git", "clone", "-q", str(root), str(clone)], check=True, capture_output=True)
    outputs = []
    for where, seed, tz in ((root, "1", "UTC"), (clone, "2", "Asia/Tokyo")):
        env = {**os.environ, "PYTHONHASHSEED": seed, "TZ": tz, "PYTHONPATH": str(REPO)}
        subprocess.run(
            [sys.executable, "-m", "validator", "boards", "--root", str(where)],
            check=True,
            env=env,
            capture_output=True,
            cwd=tmp_path,
        )
        outputs.append(committed_files(str(where)))
    assert outputs[0] == outputs[1] and len(outputs[0]) > 1  # the index and every model's file
    meta = json.loads(outputs[0][BOARDS])["meta"]
    assert meta["updated_at"] == "2026-10-18T07:30:00+00:00"
    assert meta["source_commit"] == git(root, "rev-parse", "HEAD")


@pytest.mark.git
def test_shallow_clone_cannot_be_checked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = git_registry(tmp_path)
    (root / "notes.txt").write_text("a later commit\n")
    commit_all(root, "later", "2026-10-19T00:00:00+00:00")
    assert orv("boards", "--root", str(root)) == 0
    commit_all(root, "boards", "2026-10-19T01:00:00+00:00")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "-q", "--depth", "1", f"file://{root}", str(shallow)], check=True, capture_output=True
    )
    assert orv("boards", "--check", "--root", str(shallow)) == 2
    assert "shallow" in capsys.readouterr().err
    result = run(Config(root=str(shallow)))
    assert [(d.code, d.severity.value) for d in result.diagnostics] == [("ORV701", "error")]


# --------------------------------------------------------------------------- ORV701 and --check


@pytest.mark.git
def test_changing_one_recipe_moves_rank_fastest_and_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = git_registry(tmp_path)
    assert orv("boards", "--root", str(root)) == 0
    commit_all(root, "boards", "2026-10-18T10:00:00+00:00")
    assert orv("boards", "--check", "--root", str(root)) == 0
    assert run(Config(root=str(root))).diagnostics == ()
    before = read_boards(str(root))
    assert before is not None and before["models"][0]["gpus"][0]["recipe"] == "b200-pp4"

    path = root / "recipes/training/qwen3.8-27b/b200-pp2.yaml"
    old_blob = git(root, "rev-parse", "HEAD:recipes/training/qwen3.8-27b/b200-pp2.yaml").strip()
    path.write_text(path.read_text().replace("3858.5", "4200.0"))
    commit_all(root, "faster pp2", "2026-10-19T10:00:00+00:00")
    capsys.readouterr()
    assert orv("boards", "--check", "--root", str(root)) == 1
    assert "out of date" in capsys.readouterr().out
    found = run(Config(root=str(root))).diagnostics
    index, part, chunk, standing = [d for d in found if d.code == "ORV701"]  # by path
    # one finding per stale file: the index (counts and stamp move with every data commit) and the one model
    # the edit touched (its manifest: its fastest recipe moved; the chunk of the recipe's row; its standings);
    # no other model's file, and no combined document
    assert (chunk.path, chunk.severity.value) == ("boards/models/qwen3.8-27b/0.json", "error")
    assert (standing.path, standing.severity.value) == ("boards/standings/qwen3.8-27b.json", "error")
    assert (index.code, index.path, index.severity.value) == ("ORV701", BOARDS, "error")
    assert (part.code, part.path, part.severity.value) == ("ORV701", "boards/models/qwen3.8-27b.json", "error")
    stale_line = (root / part.path).read_text().splitlines()[part.line - 1]
    assert stale_line.strip() in part.message
    # the keys' header names the trees they were made from (recipes/ moved), and the edited recipe's
    # entries name its old blob id: ORV703 points at the header and at each shard's first line that lists it
    keys = [d for d in found if d.code == "ORV703"]
    assert len(found) == 4 + len(keys) and all(d.severity.value == "error" for d in keys)
    assert keys[0].path == "boards/keys.json" and '"trees"' in keys[0].message
    assert len(keys) > 1 and all(d.path.startswith("boards/keys/") for d in keys[1:])
    assert all(old_blob in (root / d.path).read_text().splitlines()[d.line - 1] for d in keys[1:])
    assert orv("check", "--boards", "--root", str(root)) == 1
    assert orv("check", "--root", str(root)) == 0  # a contributor's plain check leaves the boards to main

    assert orv("boards", "--root", str(root)) == 0
    after = read_boards(str(root))
    assert after is not None
    ranks = {r["recipe"]: (r["rank"], r["rank_of"]) for r in after["boards"]["training"]}
    assert ranks == {"b200-pp2": (1, 2), "b200-pp4": (2, 2)}
    assert after["models"][0]["gpus"][0]["recipe"] == "b200-pp2"
    assert after["models"][0]["gpus"][0]["tok_s_per_gpu"] == 4200.0
    assert after["meta"]["updated_at"] == "2026-10-19T10:00:00+00:00"
    assert orv("boards", "--check", "--root", str(root)) == 0


def test_missing_boards(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(Config(root=str(registry))).diagnostics == ()  # no recipes: nothing to publish
    write_recipe(registry, training_recipe("x", 100.0))
    result = run(Config(root=str(registry)))
    assert [(d.code, d.path, d.severity.value) for d in result.diagnostics] == [("ORV701", BOARDS, "warning")]
    assert result.exit_code == 0
    assert orv("boards", "--check", "--root", str(registry)) == 1
    assert orv("boards", "--root", str(registry)) == 0
    assert run(Config(root=str(registry))).diagnostics == ()


def test_a_hand_edit_is_caught(registry: Path) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    assert orv("boards", "--root", str(registry)) == 0
    path = registry / "boards/models/qwen3.8-27b/0.json"  # the chunk holding the recipe's row
    path.write_text(path.read_text().replace('"tok_s_per_gpu": 100.0', '"tok_s_per_gpu": 200.0'))
    (finding,) = run(Config(root=str(registry))).diagnostics
    assert finding.code == "ORV701" and '"tok_s_per_gpu": 200.0' in finding.message
    assert path.read_text().splitlines()[finding.line - 1].strip() == '"tok_s_per_gpu": 200.0,'


def test_boards_check_skipped_for_pull_request_rules_and_golden_cases(registry: Path) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    assert run(Config(root=str(registry), skip_boards=True)).diagnostics == ()


def test_write_is_atomic_and_unchanged_file_is_left_alone(registry: Path) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    assert orv("boards", "--root", str(registry)) == 0
    path = registry / BOARDS
    os.utime(path, (1, 1))
    assert orv("boards", "--root", str(registry)) == 0
    assert path.stat().st_mtime == 1
    # no temporary file left
    assert sorted(p.name for p in path.parent.iterdir()) == [  # and no combined boards.json (SPEC §7)
        "index.json",
        "keys",
        "keys.json",
        "models",
        "standings",
    ]
    assert sorted(p.name for p in (path.parent / "models").iterdir()) == ["qwen3.8-27b", "qwen3.8-27b.json"]
    assert sorted(p.name for p in (path.parent / "models/qwen3.8-27b").iterdir()) == ["0.json"]
    assert sorted(p.name for p in (path.parent / "standings").iterdir()) == ["qwen3.8-27b.json"]


@pytest.mark.git
def test_key_shards_are_written_with_the_boards_and_a_left_over_shard_is_stale(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = git_registry(tmp_path)
    assert orv("boards", "--root", str(root)) == 0
    commit_all(root, "boards", "2026-10-18T10:00:00+00:00")
    keys = root / "boards" / "keys"
    first = {p.name: p.read_bytes() for p in keys.iterdir()}
    header = json.loads((root / "boards/keys.json").read_bytes())
    assert header["format"] == 2 and set(header["trees"]) == {"recipes", "runs"}
    assert first and all(len(name) == header["digits"] + len(".json") for name in first)
    for data in first.values():  # one line per key, sorted, each naming files by blob id
        lines = data.decode().splitlines()[1:-1]
        names = [json.loads("{" + line.removesuffix(",") + "}") for line in lines]
        assert [next(iter(n)) for n in names] == sorted(next(iter(n)) for n in names)
    assert orv("boards", "--root", str(root)) == 0  # the same commit: byte-identical, nothing written
    assert {p.name: p.read_bytes() for p in keys.iterdir()} == first
    # a shard no key falls into (a hand-made one, or left by an older layout) is stale: ORV703 and --check
    (keys / "zz.json").write_text('{"format":2,"shard":"zz","keys":{\n}}\n')
    commit_all(root, "a stray shard", "2026-10-18T11:00:00+00:00")
    found = [d for d in run(Config(root=str(root))).diagnostics if d.code == "ORV703"]
    assert [(d.path, "left over" in d.message) for d in found] == [("boards/keys/zz.json", True)]
    capsys.readouterr()
    assert orv("boards", "--check", "--root", str(root)) == 1
    assert "boards/keys/zz.json is left over" in capsys.readouterr().out
    assert orv("boards", "--root", str(root)) == 0
    assert "boards/keys/: 0 written" in capsys.readouterr().out and not (keys / "zz.json").exists()
    # a shard edited on main (an entry dropped) is ORV703 at the line that differs
    name, data = sorted(first.items())[0]
    lines = data.decode().splitlines()
    (keys / name).write_text("\n".join(lines[:1] + lines[2:]) + "\n")
    found = [d for d in run(Config(root=str(root))).diagnostics if d.code == "ORV703"]
    assert [(d.path, d.line) for d in found] == [(f"boards/keys/{name}", 2)]


# --------------------------------------------------------------------------- properties

PAIRS = st.sampled_from([("qwen3.8-27b", "h100"), ("qwen3.8-27b", "b200"), ("qwen3.5-122b-a10b", "h200")])
CLAIMS = st.lists(
    st.tuples(PAIRS, st.sampled_from([100.0, 250.5, 250.5, 999.99, 1480.4, 4011.4])), min_size=1, max_size=7
)


def _registry_from(claims: list[tuple[tuple[str, str], float]], folder: Path, reverse: bool) -> Path:
    root = make_registry(folder)
    recipes = [
        training_recipe(f"r{i}", tok, model=model, gpu=gpu, count=8, layout={"tp": 1, "pp": 1, "dp": 8})
        for i, ((model, gpu), tok) in enumerate(claims)
    ]
    for recipe in reversed(recipes) if reverse else recipes:
        write_recipe(root, recipe)
    return root


@pytest.mark.slow
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(CLAIMS)
def test_ranks_and_bytes_are_properties_of_the_data(claims: list[tuple[tuple[str, str], float]]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        one = _registry_from(claims, Path(tmp) / "a", reverse=False)
        two = _registry_from(claims, Path(tmp) / "b" / "deeper", reverse=True)
        doc = document(one)
        assert render(doc) == render(document(two))
    training = doc["boards"]["training"]
    assert len({row["recipe"] for row in training}) == len(training) == len(claims)
    for row in training:
        pair = [r for r in training if (r["model"], r["gpu"]) == (row["model"], row["gpu"])]
        assert row["rank"] == 1 + sum(1 for r in pair if r["tok_s_per_gpu"] > row["tok_s_per_gpu"])
        assert row["rank_of"] == len(pair)
    for model in doc["models"]:
        assert max(g["vs_fastest"] for g in model["gpus"]) == 1.0
        for entry in model["gpus"]:
            fastest = [r for r in training if (r["model"], r["gpu"]) == (model["model"], entry["gpu"])]
            assert entry["tok_s_per_gpu"] == max(r["tok_s_per_gpu"] for r in fastest)
            assert next(r for r in fastest if r["recipe"] == entry["recipe"])["rank"] == 1


# --------------------------------------------------------------------------- seed 000


@dataclass
class SeedRow:
    measured: str
    model: str
    gpu: str
    gpus: int
    tok: float
    usd: float
    layout_notes: str
    rank: int
    rank_of: int
    author: str


@dataclass
class SeedPair:
    gpu: str
    tok: float
    gpus: int
    usd: float
    start: float | None = None
    gain_pct: int | None = None


@dataclass
class SeedModel:
    family: str
    name: str
    params_b: float | None
    active_b: float
    recipes: int
    newest: str = ""
    pairs: dict[str, SeedPair] = field(default_factory=dict)
    no_recipe: set[str] = field(default_factory=set)


def _num(text: str) -> float:
    return float(text.replace(",", ""))


_GPU_ENTRY = re.compile(r"(H100|H200|B200)(?:No recipe yet|([\d,]+\.\d)×(\d+)\$([\d.]+))")
_START = re.compile(r"^Starting point([\d,]+\.\d) → ([\d,]+\.\d) \+(\d+)%$")


def parse_seed000(text: str) -> tuple[list[SeedRow], dict[str, SeedModel]]:
    """Seed 000's newest-first table and its per-model section (fastest per GPU, starting points)."""
    rows = []
    for line in text.splitlines():
        cells = line.split("\t")
        if len(cells) == 9 and re.match(r"^\d{4}-\d\d-\d\d$", cells[0]):
            rank = re.match(r"^#(\d+) of (\d+)$", cells[7])
            assert rank, line
            rows.append(
                SeedRow(
                    cells[0],
                    cells[1],
                    cells[2],
                    int(cells[3]),
                    _num(cells[4]),
                    float(cells[5].lstrip("$")),
                    cells[6],
                    int(rank[1]),
                    int(rank[2]),
                    cells[8],
                )
            )
    models: dict[str, SeedModel] = {}
    lines = [l.strip() for l in text.split("Latest recipes")[0].splitlines() if l.strip()]
    current: SeedModel | None = None
    last: SeedPair | None = None
    for i, line in enumerate(lines):
        family = re.match(r"^(.+?)(\d+) recipes?$", line)
        if family and i + 2 < len(lines):
            sizes = re.match(r"^(?:([\d.]+)B parameters · )?N ([\d.]+)B active$", lines[i + 2])
            if sizes:
                current = SeedModel(
                    family[1], lines[i + 1], float(sizes[1]) if sizes[1] else None, float(sizes[2]), int(family[2])
                )
                models[current.name] = current
                continue
        if current is None:
            continue
        if line.startswith("Newest "):
            current.newest = line.removeprefix("Newest ")
            continue
        start = _START.match(line)
        if start:
            assert last is not None and last.tok == _num(start[2]), line
            last.start, last.gain_pct = _num(start[1]), int(start[3])
            continue
        for m in _GPU_ENTRY.finditer(line):
            if m[2] is None:
                current.no_recipe.add(m[1])
            else:
                last = SeedPair(m[1], _num(m[2]), int(m[3]), float(m[4]))
                current.pairs[m[1]] = last
    return rows, models


def _id_of(name: str, aliases: dict[str, str]) -> str | None:
    return aliases.get(name.lower())


def _catalog_ids(catalog: Catalog) -> tuple[dict[str, str], dict[str, str]]:
    """Seed display names -> catalog ids, through each entry's id, name and aliases (case-insensitive)."""

    def index(entries: Any) -> dict[str, str]:
        out = {}
        for cid, spec in entries.items():
            for label in (cid, spec.name, *spec.aliases):
                out[label.lower()] = cid
        return out

    return index(catalog.models), index(catalog.hardware)


def seed000_mismatches(
    doc: dict[str, Any], catalog: Catalog, rows: list[SeedRow], models: dict[str, SeedModel]
) -> list[str]:
    """Every way the training board departs from seed 000's table: rank "#k of n", fastest per pair,
    starting point and gain, and $/1M within 1% at the seed's precision (it prints cents)."""
    model_ids, gpu_ids = _catalog_ids(catalog)
    problems: list[str] = []

    def cost_ok(ours: float | None, seed: float) -> bool:
        return ours is not None and abs(round(ours, 2) - seed) <= 0.01 * seed + 1e-9

    board = doc["boards"]["training"]
    for row in rows:
        key = (_id_of(row.model, model_ids), _id_of(row.gpu, gpu_ids), row.gpus, row.tok)
        found = [r for r in board if (r["model"], r["gpu"], r["gpus"], r["tok_s_per_gpu"]) == key]
        if len(found) != 1:
            problems.append(f"{row.model} {row.gpu} {row.tok}: {len(found)} board rows")
            continue
        ours = found[0]
        if (ours["rank"], ours["rank_of"]) != (row.rank, row.rank_of):
            problems.append(
                f"{row.model} {row.gpu} {row.tok}: rank #{ours['rank']} of {ours['rank_of']}, "
                f"seed #{row.rank} of {row.rank_of}"
            )
        if not cost_ok(ours["cost_per_1m"], row.usd):
            problems.append(f"{row.model} {row.gpu} {row.tok}: ${ours['cost_per_1m']} vs seed ${row.usd}")
    by_model = {m["model"]: m for m in doc["models"]}
    for name, seed in models.items():
        entry = by_model.get(_id_of(name, model_ids) or "")
        if entry is None:
            problems.append(f"{name}: not on the models board")
            continue
        if (entry["recipes"], entry["newest"]) != (seed.recipes, seed.newest):
            problems.append(
                f"{name}: {entry['recipes']} recipes newest {entry['newest']}, seed {seed.recipes} newest {seed.newest}"
            )
        ours_by_gpu = {g["gpu"]: g for g in entry["gpus"]}
        for label in seed.no_recipe:  # an empty cell ("No recipe yet") is a row with recipe null
            if (ours_by_gpu.get(_id_of(label, gpu_ids) or "") or {}).get("recipe") is not None:
                problems.append(f"{name} {label}: seed has no recipe, the board has one")
        for label, pair in seed.pairs.items():
            ours = ours_by_gpu.get(_id_of(label, gpu_ids) or "")
            if ours is None or (ours["tok_s_per_gpu"], ours["gpus"]) != (pair.tok, pair.gpus):
                problems.append(
                    f"{name} {label}: fastest {ours and (ours['tok_s_per_gpu'], ours['gpus'])}, "
                    f"seed {(pair.tok, pair.gpus)}"
                )
                continue
            if not cost_ok(ours["cost_per_1m"], pair.usd):
                problems.append(f"{name} {label}: fastest costs ${ours['cost_per_1m']}, seed ${pair.usd}")
            start = ours["starting_point"]
            if pair.start is not None and (
                start is None or start["tok_s_per_gpu"] != pair.start or abs(ours["gain_pct"] - pair.gain_pct) > 1
            ):
                problems.append(
                    f"{name} {label}: starting point {start} +{ours['gain_pct']}%, seed {pair.start} +{pair.gain_pct}%"
                )
    return problems


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def _layout(text: str, gpus: int) -> tuple[dict[str, int], str]:
    """Seed 000 glues the layout to the notes ("TP1 PP87/9/9… layer split"): take the shortest
    digits for the last term that make TP x PP x CP x DP equal the GPU count."""
    layout: dict[str, int] = {}
    words = text.split(" ")
    for i, word in enumerate(words):
        m = re.match(r"^(TP|PP|VPP|CP|EP|ETP|DP)(\d+)(.*)$", word)
        if not m:
            return _complete(layout, gpus), " ".join(words[i:])
        if not m[3] and i + 1 < len(words) and re.match(r"^(TP|PP|VPP|CP|EP|ETP|DP)\d", words[i + 1]):
            layout[m[1].lower()] = int(m[2])
            continue
        for cut in range(1, len(m[2]) + 1):
            trial = {**layout, m[1].lower(): int(m[2][:cut])}
            if _complete(trial, gpus) is not None or cut == len(m[2]):
                rest = (m[2][cut:] + m[3] + " " + " ".join(words[i + 1 :])).strip()
                return _complete(trial, gpus) or trial, rest
    return _complete(layout, gpus), ""


def _complete(layout: dict[str, int], gpus: int) -> Any:
    inner = layout.get("tp", 1) * layout.get("pp", 1) * layout.get("cp", 1)
    dp = layout.get("dp", gpus // inner if gpus % inner == 0 else 0)
    if dp < 1 or inner * dp != gpus:
        return None
    return {
        "tp": layout.get("tp", 1),
        "pp": layout.get("pp", 1),
        **{k: v for k, v in layout.items() if k not in ("tp", "pp", "dp")},
        "dp": dp,
    }


def seed000_registry(dest: Path, text: str) -> Path:
    """A registry holding seed 000 as `orv import` would: catalog from the seed, one legacy recipe per row.
    GPU prices are the median of price x tokens/s implied by each row (SPEC §4 derives them from seed 000)."""
    rows, models = parse_seed000(text)
    root = make_registry(dest)
    write_yaml(
        root,
        "catalog/models.yaml",
        {
            "models": {
                name.lower(): {
                    "name": name,
                    "family": m.family,
                    **({"params_b": m.params_b} if m.params_b else {}),
                    "active_b": m.active_b,
                }
                for name, m in sorted(models.items())
            }
        },
    )
    peak = {"H100": 989.4, "H200": 989.4, "B200": 2250.0}
    prices = {gpu: statistics.median(r.usd * 3600 * r.tok / 1e6 for r in rows if r.gpu == gpu) for gpu in peak}
    write_yaml(
        root,
        "catalog/hardware.yaml",
        {
            "hardware": {
                gpu.lower(): {
                    "name": f"NVIDIA {gpu}",
                    "vendor": "nvidia",
                    "bf16_dense_tflops": peak[gpu],
                    "price_per_gpu_hour": round(prices[gpu], 4),
                    "price_source": SEED_000,
                }
                for gpu in peak
            }
        },
    )
    write_yaml(
        root,
        "catalog/starting-points.yaml",
        {
            "starting_points": [
                {
                    "model": name.lower(),
                    "gpu": label.lower(),
                    "workload": "sft-8k-gb128-bf16",
                    "tokens_per_s_per_gpu": pair.start,
                    "source": SEED_000,
                }
                for name, m in sorted(models.items())
                for label, pair in sorted(m.pairs.items())
                if pair.start
            ]
        },
    )
    for i, row in enumerate(rows, start=1):
        layout, notes = _layout(row.layout_notes, row.gpus)
        assert layout is not None, row
        recipe = training_recipe(
            _slug(f"{row.model}-{row.gpu}-seed000-row-{i}"),
            row.tok,
            model=row.model.lower(),
            gpu=row.gpu.lower(),
            count=row.gpus,
            layout=layout,
            software={},
            measured=row.measured,
            provenance={"source": SEED_000, "row": i},
        )
        recipe.update(author=row.author, notes=notes)
        write_recipe(root, recipe)
    return root


SEED_TEXT = (SEEDS / SEED_000).read_text(encoding="utf-8") if (SEEDS / SEED_000).is_file() else None


@pytest.mark.skipif(SEED_TEXT is None, reason="seed 000 is not on this machine")
def test_seed000_parser_reads_the_whole_table() -> None:
    assert SEED_TEXT is not None
    rows, models = parse_seed000(SEED_TEXT)
    assert len(rows) == 61 == sum(m.recipes for m in models.values())
    assert len(models) == 22
    muse = models["Muse-Spark-Open-816B-A42B"]
    assert (muse.pairs["H200"].tok, muse.pairs["H200"].start, muse.pairs["H200"].gain_pct) == (333.1, 224.4, 48)
    assert models["Qwen3.8-27B"].pairs["B200"].start == 1411.1  # glued "H200… B200…" line, then its start


@pytest.mark.skipif(SEED_TEXT is None, reason="seed 000 is not on this machine")
def test_boards_reproduce_seed000_from_its_rows(tmp_path: Path) -> None:
    assert SEED_TEXT is not None
    root = seed000_registry(tmp_path / "seed000", SEED_TEXT)
    analysis = analyse(str(root))
    # This fixture keeps each row's tuning as free-text notes, so rows that differ only in tuning
    # share an identity (ORV302); the real import structures tuning and passes ORV302.
    errors = [d for d in analysis.diagnostics if d.severity.value == "error" and d.code != "ORV302"]
    assert not errors, errors[:3]
    doc = document(root)
    rows, models = parse_seed000(SEED_TEXT)
    assert seed000_mismatches(doc, analysis.snapshot.catalog, rows, models) == []
    assert {row["tier"] for row in doc["boards"]["training"]} == {"T0"}
    assert all(row["legacy"] for row in doc["boards"]["training"])


def _imported_seed000_recipes(root: Path) -> int:
    folder = root / "recipes" / "training"
    if not folder.is_dir():
        return 0
    return sum(1 for p in folder.rglob("*.y*ml") if SEED_000 in p.read_text(encoding="utf-8"))


@pytest.mark.skipif(SEED_TEXT is None, reason="seed 000 is not on this machine")
def test_repository_training_board_reproduces_seed000() -> None:
    """The real import: runs as soon as the repository holds recipes imported from seed 000."""
    if _imported_seed000_recipes(REPO) == 0:
        pytest.skip("no training recipes imported from seed 000 in this repository yet")
    assert SEED_TEXT is not None
    analysis = analyse(str(REPO))
    doc = build(analysis.snapshot, derive(analysis.snapshot, analysis.diagnostics), GitStamp())
    rows, models = parse_seed000(SEED_TEXT)
    assert seed000_mismatches(doc, analysis.snapshot.catalog, rows, models) == []


def test_repository_seed004_rows_name_their_runs_and_never_repeat() -> None:
    """The real import of seed 004: runs as soon as the repository holds recipes imported from it."""
    folder = REPO / "recipes" / "inference"
    if not folder.is_dir() or not any(SEED_004 in p.read_text(encoding="utf-8") for p in folder.rglob("*.y*ml")):
        pytest.skip("no inference recipes imported from seed 004 in this repository yet")
    doc = document(REPO)
    measured, claimed = doc["boards"]["measured"], doc["boards"]["claimed"]
    for row in measured:
        assert row["tool"] and row["tool_version"] and (REPO / row["run_file"]).is_file(), row["recipe"]
    recipes = [row["recipe"] for row in measured + claimed]
    assert len(recipes) == len(set(recipes))


def test_repository_boards_are_committed_and_fresh() -> None:
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout: updated_at cannot be derived")
    if git(REPO, "rev-parse", "--is-shallow-repository") == "true":
        pytest.skip("shallow clone: updated_at cannot be derived (docs/boards.md)")
    committed = read_boards(str(REPO))
    assert committed is not None and schemas.validate("boards", committed) == []
    # the combined document readers fetch (SPEC §7) is published by the boards workflow, never committed
    assert not (REPO / "boards" / "boards.json").exists()
    # Every row is exact; the stamp may name the data commit before the one that holds the boards
    # (ORV702, a warning) when data and boards were committed together.
    comparison = compare_boards(analyse(str(REPO)))
    assert comparison.problem is None and comparison.stale == (), comparison


@pytest.mark.git
def test_data_and_boards_committed_together_is_only_a_stale_stamp(tmp_path: Path) -> None:
    root = git_registry(tmp_path)
    assert orv("boards", "--root", str(root)) == 0
    commit_all(root, "boards", "2026-10-18T10:00:00+00:00")
    write_recipe(
        root,
        training_recipe("b200-pp8", 3000.0, gpu="b200", layout={"tp": 1, "pp": 8, "dp": 1, "layer_split": [8] * 8}),
    )
    assert orv("boards", "--root", str(root)) == 0  # rows for the new recipe, stamp of the old commit
    commit_all(root, "data and boards together", "2026-10-19T00:00:00+00:00")
    result = run(Config(root=str(root)))
    assert [(d.code, d.severity.value) for d in result.diagnostics] == [("ORV702", "warning")]
    assert result.exit_code == 0
    assert orv("boards", "--check", "--root", str(root)) == 1  # the workflow on main refreshes it
    assert orv("boards", "--root", str(root)) == 0
    assert run(Config(root=str(root))).diagnostics == ()


@given(
    st.lists(
        st.one_of(
            st.none(), st.sampled_from([0.0, 1.5, 2.0, 7.25]), st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)
        ),
        max_size=40,
    )
)
def test_competition_ranks_are_one_plus_the_strictly_greater_figures(figures: list[float | None]) -> None:
    # The definition the boards state (equal figures share a rank, a row without a figure ranks after
    # every row with one), counted row by row as the quadratic code did; the sorted version must agree.
    from validator.boards.build import competition_ranks

    expected = [1 + sum(1 for o in figures if o is not None and (f is None or o > f)) for f in figures]
    assert competition_ranks(figures) == expected


@pytest.mark.parametrize("registry", ["repository", "physics and duplicates"])
def test_boards_from_the_checks_a_tier_reads_equal_boards_from_every_check(tmp_path: Path, registry: str) -> None:
    """`orv boards` runs only the registry checks tiers.tier_reads accepts: the document must not change."""
    if registry == "repository":
        root = REPO
    else:
        root = make_registry(tmp_path / "repo")
        write_recipe(root, training_recipe("fits", 3000.0))
        write_recipe(root, training_recipe("twin", 3000.0))  # same configuration: ORV302, not a tier input
        write_recipe(root, training_recipe("overfull", 2000.0, layout={"tp": 2, "pp": 4, "dp": 4}))  # 32 ≠ 8: ORV501
    full, for_tiers = analyse(str(root)), analyse(str(root), for_tiers=True)
    codes = {d.code for d in full.diagnostics} - {d.code for d in for_tiers.diagnostics}
    if registry != "repository":
        assert "ORV302" in codes and "ORV501" in {d.code for d in for_tiers.diagnostics}
    assert not any(code.startswith("ORV5") for code in codes)
    assert build(full.snapshot, derive(full.snapshot, full.diagnostics), GitStamp()) == build(
        for_tiers.snapshot, derive(for_tiers.snapshot, for_tiers.diagnostics), GitStamp()
    )


_JSON_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([1e-5, 1e-7, -3e-9, 1e16, 0.0001]),
    st.text(max_size=8),
)
_JSON_DOCS = st.recursive(
    _JSON_LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=6), inner, max_size=4)),
    max_leaves=25,
)


@given(_JSON_DOCS)
def test_render_writes_json_dumps_bytes_whichever_serialiser_runs(document: Any) -> None:
    # orjson renders where it writes what json.dumps writes; a document it would write otherwise
    # (a float below 1e-4, an integer beyond 64 bits) goes to json.dumps. The bytes never depend on which.
    expected = (json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()
    assert render(document) == expected


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_render_refuses_a_non_finite_figure_as_json_dumps_did(bad: float) -> None:
    with pytest.raises(ValueError):
        render({"boards": {"measured": [{"decode_tok_s": bad}]}})


def test_tiers_read_the_physics_checks_that_can_fail_and_no_finding_outranks_its_check() -> None:
    from validator.checks.base import REGISTRY, Check, Finding
    from validator.checks.collect import to_diagnostic
    from validator.diagnostics import Severity
    from validator.evidence.tiers import tier_reads

    read = {code for code, check in REGISTRY.items() if tier_reads(check)}
    assert {"ORV501", "ORV509", "ORV511", "ORV512"} <= read and "ORV510" not in read  # ORV510 only warns
    assert all(code.startswith("ORV5") and REGISTRY[code].severity is Severity.ERROR for code in read)
    # so a warning check's finding asking for an error stays a warning (what ORV510 skipped in `orv boards` relies on)
    warning = Check("ORV510", Severity.WARNING, "t", "registry", "")
    raised = to_diagnostic(warning, Finding("a.yaml", "m", "h", line=1, col=1, severity=Severity.ERROR), {})
    lowered = to_diagnostic(
        REGISTRY["ORV512"], Finding("a.yaml", "m", "h", line=1, col=1, severity=Severity.WARNING), {}
    )
    assert raised.severity is Severity.WARNING and lowered.severity is Severity.WARNING


def test_every_measured_row_with_an_output_rate_and_a_priced_gpu_carries_its_cost(tmp_path: Path) -> None:
    """Issue 53: $ per 1M output tokens on every measured inference row, recomputed here from the catalog
    price and the run's samples; the honest twin: a GPU without a price shows none (never invented)."""
    from tests.testing.sweeps import independent_point, samples_at, sweep_registry

    root = make_registry(tmp_path / "registry")
    sweep_registry(root, gpu="h100", prefix="hop", names="ab", speed=2.5)  # the test catalog prices the H100
    sweep_registry(root, names="a")  # the RTX 3090 has no price
    doc = document(root)
    assert schemas.validate("boards", doc) == []
    price = next(g["price_per_gpu_hour"] for g in doc["frontiers"] if g["gpu"] == "h100")
    assert price
    shapes = {"hop-a": (60.0 * 2.5, 0.02), "hop-b": (45.0 * 2.5, 0.005)}
    rows = rows_by_recipe(doc, "measured")
    for rid, (base, slowdown) in shapes.items():
        samples, duration = samples_at(base, slowdown, 1)  # the headline point: concurrency 1
        _, per_gpu = independent_point(samples, duration, 2)
        assert rows[rid]["cost_per_1m"] == pytest.approx(price * 1e6 / (3600 * per_gpu), abs=0.011)
        assert rows[rid]["gpu_name"] != "h100"  # the catalog's name, not the id
    assert rows["cfg-a"]["cost_per_1m"] is None

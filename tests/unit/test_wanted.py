"""Issue 20: empty GPU cells, the `wanted` lists in boards.json, and `orv wanted` (seed 000's "No recipe yet"
cells and "Wanted" list reproduced from the seed's own text)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testing.factories import (
    SEED_000,
    inference_recipe,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
    write_yaml,
)
from tests.testing.paths import REPO
from validator.boards.build import GitStamp, build, wanted_quality
from validator.boards.split import read_boards
from validator.cli import main
from validator.engine.evaluate import analyse
from validator.evidence.tiers import NEEDS_SIGNED, derive
from validator.importers.leaderboard import read_source_file
from validator.load import schema as schemas

SEED = Path("/work/shared/seeds") / SEED_000
PROTOCOL = ["h100", "h200", "b200"]


def document(root: Path) -> dict[str, Any]:
    analysis = analyse(str(root))
    doc = build(analysis.snapshot, derive(analysis.snapshot, analysis.diagnostics), GitStamp())
    assert schemas.validate("boards", doc) == []
    return doc


def with_protocol(root: Path) -> Path:
    """The base catalog's SFT workload with the training protocol's GPU set recorded."""
    path = root / "catalog" / "workloads.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["workloads"]["sft-8k-gb128-bf16"]["gpus"] = PROTOCOL
    write_yaml(root, "catalog/workloads.yaml", data)
    return root


# --------------------------------------------------------------------------- empty cells and wanted models


def test_every_protocol_gpu_is_a_cell_and_empty_ones_are_null(registry: Path) -> None:
    with_protocol(registry)
    write_recipe(registry, training_recipe("h200-only", 2000.0, gpu="h200"))
    (model,) = document(registry)["models"]
    assert [g["gpu"] for g in model["gpus"]] == PROTOCOL  # the protocol's order, not alphabetical
    h100, h200, b200 = model["gpus"]
    assert h200["recipe"] == "h200-only" and h200["recipes"] == 1 and h200["vs_fastest"] == 1.0
    for empty in (h100, b200):
        assert empty["recipe"] is None and empty["recipes"] == 0
        assert [
            empty[k] for k in ("tok_s_per_gpu", "gpus", "cost_per_1m", "vs_fastest", "starting_point", "gain_pct")
        ] == [None] * 6
    assert h100["gpu_name"] == "NVIDIA H100 SXM5 80GB"


def test_a_gpu_outside_the_protocol_follows_it_and_without_a_protocol_only_filled_cells(registry: Path) -> None:
    write_recipe(registry, training_recipe("b200-a", 3000.0, gpu="b200"))
    (model,) = document(registry)["models"]
    assert [(g["gpu"], g["recipe"]) for g in model["gpus"]] == [("b200", "b200-a")]
    data = yaml.safe_load((registry / "catalog/workloads.yaml").read_text(encoding="utf-8"))
    data["workloads"]["sft-8k-gb128-bf16"]["gpus"] = ["h100", "h200"]
    write_yaml(registry, "catalog/workloads.yaml", data)
    (model,) = document(registry)["models"]
    assert [(g["gpu"], g["recipe"]) for g in model["gpus"]] == [("h100", None), ("h200", None), ("b200", "b200-a")]


def test_wanted_models_are_catalog_models_without_a_training_recipe(registry: Path) -> None:
    assert [m["model"] for m in document(registry)["wanted"]["models"]] == [
        "qwen3.8-27b",
        "qwen3.5-122b-a10b",
        "glm-5.3-flash",
    ]  # catalog order, grouped by family
    write_recipe(registry, training_recipe("first-122b", 900.0, model="qwen3.5-122b-a10b"))
    wanted = document(registry)["wanted"]["models"]
    assert wanted == [
        {"model": "qwen3.8-27b", "model_name": "Qwen3.8-27B", "family": "Qwen"},
        {"model": "glm-5.3-flash", "model_name": "GLM-5.3-Flash", "family": "GLM"},
    ]


def test_wanted_models_group_by_family_in_catalog_order(registry: Path) -> None:
    path = registry / "catalog" / "models.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    glm = data["models"].pop("glm-5.3-flash")
    # A GLM model first, then a Qwen, then GLM again: the second GLM joins its family's group.
    models = {"glm-5.3-flash": glm, **data["models"], "glm-9": {"name": "GLM-9", "family": "GLM"}}
    write_yaml(registry, "catalog/models.yaml", {"models": models})
    assert [m["model"] for m in document(registry)["wanted"]["models"]] == [
        "glm-5.3-flash",
        "glm-9",
        "qwen3.8-27b",
        "qwen3.5-122b-a10b",
    ]


def test_t2_recipes_wait_for_a_reproduction(registry: Path) -> None:
    verified = training_recipe("h100-verified", 1480.4)
    verified["runs"] = [store_run(registry, training_run(verified))]
    write_recipe(registry, verified)
    write_recipe(registry, training_recipe("h100-claimed", 1000.0))
    assert document(registry)["wanted"]["reproductions"] == [
        {"recipe": "h100-verified", "kind": "training", "tier": "T2", "needs": [NEEDS_SIGNED]}
    ]


def test_quality_list_reads_the_rows_quality_status() -> None:
    rows = [
        {"recipe": "b-fp8", "quality": {"task": "gsm8k", "status": "missing"}},
        {"recipe": "a-bf16", "quality": {"task": "gsm8k", "status": "missing"}},
        {"recipe": "c-ok", "quality": {"task": "gsm8k", "status": "verified"}},
        {"recipe": "d-below", "quality": {"task": "gsm8k", "status": "below"}},
        {"recipe": "e-none"},  # a row without quality evidence: nothing to read, nothing listed
    ]
    needs = {
        "b-fp8": ["quant fp8 differs from the reference's bf16"],
        "a-bf16": [],
        "c-ok": ["quant fp8"],
        "d-below": ["quantized KV cache"],
        "e-none": ["quant int4"],
    }
    assert wanted_quality(rows, needs) == [
        {"recipe": "b-fp8", "status": "missing", "needs": ["quant fp8 differs from the reference's bf16"]},
        {"recipe": "d-below", "status": "below", "needs": ["quantized KV cache"]},
    ]


def test_quantized_recipes_wait_for_quality_evidence(registry: Path) -> None:
    write_recipe(registry, inference_recipe("glm-w4a16"))  # the factory's quant: w4a16
    write_recipe(registry, inference_recipe("glm-bf16", quant="bf16", serving={"context_len": 8192, "concurrency": 2}))
    doc = document(registry)
    (row,) = [r for r in doc["boards"]["claimed"] if r["recipe"] == "glm-w4a16"]
    assert doc["wanted"]["quality"] == [
        {
            "recipe": "glm-w4a16",
            "status": row["quality"]["status"],
            "needs": ["quant w4a16 is not a published full precision"],
        }
    ]


def test_orv_wanted_says_a_quality_status_in_plain_words(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_recipe(registry, inference_recipe("glm-w4a16"))
    assert main(["wanted", "--kind", "inference", "--root", str(registry)]) == 0
    out = capsys.readouterr().out
    status = document(registry)["wanted"]["quality"][0]["status"]
    assert status == "no-reference" and "(quality no-reference)" not in out  # issue 29: jargon
    assert "glm-w4a16 (its model has no reference quality run to compare with yet): quant w4a16" in out


# --------------------------------------------------------------------------- seed 000, read from its text


@pytest.fixture(scope="module")
def repository_boards() -> dict[str, Any]:
    document = read_boards(str(REPO))  # the committed boards, assembled from boards/index.json and boards/models/
    assert document is not None
    return document


@pytest.fixture(scope="module")
def seed() -> Any:
    if not SEED.is_file():
        pytest.skip("seed 000 is not on this machine")
    return read_source_file(str(SEED))


def test_seed000_wanted_list_is_reproduced_in_order(repository_boards: dict[str, Any], seed: Any) -> None:
    assert len(seed.wanted) == 18 and seed.wanted[0] == "Qwen3.8-Flash-Next" and seed.wanted[-1] == "Inkling"
    wanted = repository_boards["wanted"]["models"]
    names = [m["model_name"] for m in wanted]
    assert [n for n in names if n in seed.wanted] == seed.wanted
    # Anything else is a catalog model seed 000 never names (seed 004's), not a card's model.
    carded = {card.model for card in seed.cards}
    extras = [n for n in names if n not in seed.wanted]
    assert all(n not in SEED.read_text(encoding="utf-8") for n in extras), extras
    assert not carded & set(names)
    # Grouped by family: each family's models are contiguous, families in the seed's order.
    families = [m["family"] for m in wanted]
    groups = [f for i, f in enumerate(families) if i == 0 or families[i - 1] != f]
    assert groups == ["Qwen", "GLM", "Kimi", "DeepSeek", "Nemotron", "MiMo", "Inkling"]


def test_seed000_no_recipe_cells_are_reproduced(repository_boards: dict[str, Any], seed: Any) -> None:
    names = {m["model_name"]: m for m in repository_boards["models"]}
    empty_seen = 0
    assert len(seed.cards) == 22
    for card in seed.cards:
        model = names[card.model]
        cells = [(g["gpu"], g["recipe"] is None) for g in model["gpus"]]
        expected = [(g.gpu.lower(), g.tokens is None) for g in card.gpus]
        assert cells == expected, card.model
        empty_seen += sum(1 for _, empty in expected if empty)
    assert sum(1 for card in seed.cards if any(g.tokens is None for g in card.gpus)) == 17
    assert empty_seen == sum(1 for m in repository_boards["models"] for g in m["gpus"] if g["recipe"] is None)


def test_committed_boards_match_a_regeneration_of_the_repository(repository_boards: dict[str, Any]) -> None:
    fresh = document(REPO)
    assert fresh["wanted"] == repository_boards["wanted"]
    assert fresh["models"] == repository_boards["models"]


# --------------------------------------------------------------------------- orv wanted


def orv_out(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    capsys.readouterr()
    assert main(list(args)) == 0
    return capsys.readouterr().out


def test_orv_wanted_json_lists_the_same_models_as_boards_json(
    capsys: pytest.CaptureFixture[str], repository_boards: dict[str, Any]
) -> None:
    listed = json.loads(orv_out(capsys, "wanted", "--format", "json", "--root", str(REPO)))
    assert [{k: v for k, v in m.items() if k != "command"} for m in listed["models"]] == repository_boards["wanted"][
        "models"
    ]
    cells = [(m["model"], g["gpu"]) for m in repository_boards["models"] for g in m["gpus"] if g["recipe"] is None]
    assert [(c["model"], c["gpu"]) for c in listed["cells"]] == cells
    assert sorted(listed) == ["cells", "models", "quality", "references", "reproductions"]
    assert [{k: v for k, v in m.items() if k != "command"} for m in listed["references"]] == repository_boards[
        "wanted"
    ]["references"]
    inference = json.loads(orv_out(capsys, "wanted", "--kind", "inference", "--format", "json", "--root", str(REPO)))
    assert sorted(inference) == ["quality", "reproductions"]
    strip = ("command", "reference_command")
    assert [{k: v for k, v in q.items() if k not in strip} for q in inference["quality"]] == repository_boards[
        "wanted"
    ]["quality"]
    for item in inference["quality"]:
        assert item["command"].startswith("orv add-run --from lm-eval DIR --recipe recipes/inference/")
        assert ("reference_command" in item) == (item["status"] == "no-reference")


def test_orv_wanted_commands_start_the_work(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with_protocol(registry)
    verified = training_recipe("h100-verified", 1480.4)
    verified["runs"] = [store_run(registry, training_run(verified))]
    path = write_recipe(registry, verified)
    listed = json.loads(orv_out(capsys, "wanted", "--kind", "training", "--format", "json", "--root", str(registry)))
    assert [(c["model"], c["gpu"]) for c in listed["cells"]] == [("qwen3.8-27b", "h200"), ("qwen3.8-27b", "b200")]
    (repro,) = listed["reproductions"]
    assert repro["command"] == f"orv add-run --from megatron|nemo OUTPUT --recipe {path} --sign-with KEY"
    assert [m["model"] for m in listed["models"]] == ["qwen3.5-122b-a10b", "glm-5.3-flash"]
    # The empty cell's command, its placeholders filled in, scaffolds the recipe for that cell.
    command = listed["cells"][1]["command"].replace("GPUS", "8").replace("NAME@VERSION", "megatron-core@0.30.0")
    command = command.replace("--tp TP", "--tp 1").replace("--pp PP", "--pp 4")
    argv = command.split()[1:] + [
        "--author",
        "lab-a",
        "--measured",
        "2026-11-01",
        "--no-interactive",
        "--dry-run",
        "--root",
        str(registry),
    ]
    capsys.readouterr()
    assert main(argv) == 0
    scaffolded = yaml.safe_load(capsys.readouterr().out)
    assert (scaffolded["model"], scaffolded["hardware"], scaffolded["workload"]) == (
        "qwen3.8-27b",
        {"gpu": "b200", "count": 8},
        "sft-8k-gb128-bf16",
    )
    text = orv_out(capsys, "wanted", "--root", str(registry))
    assert "  Qwen3.8-27B on B200 (sft-8k-gb128-bf16)\n    $ orv new training --model qwen3.8-27b --gpu b200" in text
    assert f"  h100-verified (training, T2): {NEEDS_SIGNED}\n" in text


def test_models_whose_training_recipes_wait_for_a_convergence_reference(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 28: with no reference recorded (the workload keeps only its rule), both models' training recipes
    wait; the command `orv wanted` prints records one, and that model leaves the list."""
    from tests.testing.registry import TOOLS
    from validator.evidence.tiers import reference_command

    data = yaml.safe_load((registry / "catalog/workloads.yaml").read_text(encoding="utf-8"))
    for key in ("reference", "reference_model"):  # the workload-level curve migrated away: none recorded
        data["workloads"]["sft-8k-gb128-bf16"]["convergence"].pop(key)
    write_yaml(registry, "catalog/workloads.yaml", data)
    baseline = write_recipe(registry, training_recipe("dense", 1480.4))
    write_recipe(registry, training_recipe("moe-a", 1480.4, model="qwen3.5-122b-a10b"))
    write_recipe(registry, training_recipe("moe-b", 1400.0, model="qwen3.5-122b-a10b", count=16))
    write_recipe(registry, training_recipe("claimed-only", 1000.0, gpu="b200"))
    doc = document(registry)
    assert [(i["model"], i["workload"], i["recipes"]) for i in doc["wanted"]["references"]] == [
        ("qwen3.5-122b-a10b", "sft-8k-gb128-bf16", ["moe-a", "moe-b"]),
        ("qwen3.8-27b", "sft-8k-gb128-bf16", ["claimed-only", "dense"]),
    ]
    assert reference_command("qwen3.8-27b", "sft-8k-gb128-bf16") in doc["wanted"]["references"][1]["why"]
    listed = json.loads(orv_out(capsys, "wanted", "--kind", "training", "--format", "json", "--root", str(registry)))
    entry = listed["references"][1]
    assert entry["command"] == (
        "orv add-run --from megatron LOG --reference-for qwen3.8-27b "
        "--workload sft-8k-gb128-bf16 --recipe BASELINE.yaml"
    )
    text = orv_out(capsys, "wanted", "--kind", "training", "--root", str(registry))
    assert (
        "Models whose training recipes wait for a convergence reference (no T2 without one): 2\n"
        "  Qwen3.5-122B-A10B (sft-8k-gb128-bf16): 2 recipes waiting\n" in text
    )
    assert "references" not in json.loads(
        orv_out(capsys, "wanted", "--kind", "inference", "--format", "json", "--root", str(registry))
    )  # a training list
    # the printed command, LOG and BASELINE filled in, records the reference: that model leaves the list
    argv = entry["command"].replace("LOG", str(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"))
    argv = argv.replace("BASELINE.yaml", str(registry / baseline)).split()[1:] + ["--root", str(registry)]
    capsys.readouterr()
    assert main(argv) == 0, capsys.readouterr().err
    assert [i["model"] for i in document(registry)["wanted"]["references"]] == ["qwen3.5-122b-a10b"]
    # without the workload's rule no reference can judge a curve: the list says that comes first
    data = yaml.safe_load((registry / "catalog/workloads.yaml").read_text(encoding="utf-8"))
    data["workloads"]["sft-8k-gb128-bf16"].pop("convergence")
    write_yaml(registry, "catalog/workloads.yaml", data)
    text = orv_out(capsys, "wanted", "--kind", "training", "--root", str(registry))
    assert (
        "  Qwen3.8-27B (sft-8k-gb128-bf16): 2 recipes waiting\n    first: workload `sft-8k-gb128-bf16` has no "
        "convergence rule (tolerance, window) in catalog/workloads.yaml\n"
    ) in text


# --------------------------------------------------------------------------- narrowing the lists (issue 52)


def test_wanted_narrows_to_a_model_gpu_workload_and_a_limit(capsys: pytest.CaptureFixture[str]) -> None:
    """This repository's own lists: --model keeps that model's items only, --limit cuts each list and says by how
    much, and a filter naming nothing there leaves every list empty rather than everything."""
    assert main(["wanted", "--root", str(REPO), "--format", "json"]) == 0
    whole = json.loads(capsys.readouterr().out)
    assert main(["wanted", "--root", str(REPO), "--format", "json", "--model", "qwen3.8-27b"]) == 0
    narrowed = json.loads(capsys.readouterr().out)
    recipes = {item["recipe"] for items in narrowed.values() for item in items if "recipe" in item}
    assert recipes and all(r.startswith("qwen3-8-27b") for r in recipes)
    assert sum(map(len, narrowed.values())) < sum(map(len, whole.values()))
    assert main(["wanted", "--root", str(REPO), "--kind", "inference", "--model", "qwen3.8-27b", "--limit", "1"]) == 0
    text = capsys.readouterr().out
    quality = [item for item in narrowed["quality"]]
    assert len(quality) > 1 and f"… and {len(quality) - 1} more (--limit)" in text
    assert main(["wanted", "--root", str(REPO), "--format", "json", "--gpu", "no-such-gpu", "--kind", "inference"]) == 0
    assert all(items == [] for items in json.loads(capsys.readouterr().out).values())


def test_wanted_says_how_a_measurers_key_is_registered() -> None:
    from validator.report.wanted import render_text

    item = {"recipe": "r", "kind": "training", "tier": "T2", "needs": ["a second measurer"], "command": "orv add-run"}
    text = render_text({"reproductions": [item]})
    assert "measurers/allowed_signers" in text and "ORV607" in text
    assert "allowed_signers" not in render_text({"reproductions": []})

"""One checkpoint-identity rule: add-run's identity gate (ORV226), `orv add-run --from lm-eval` and `orv check`
(both ORV235) agree on whether a named checkpoint is the catalog model's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.test_quality import LMEVAL, RECIPE_PATH, codes, forged, quality_doc, with_reference, write_recipe
from validator.errors import AddRunError
from validator.evidence.identity import checkpoint_problem
from validator.quality import add as quality_add
from validator.registry.catalog import present_files, read_catalog
from validator.registry.store import store_run_document

MODEL = "qwen3.8-27b"
# (name a tool states, is it the model's?) against a catalog listing `checkpoints: [Qwen/Qwen3.8-27B]`,
# and against one listing none (the name must mention the model's name or an alias; the run then stays at T1)
LISTED = [
    ("Qwen/Qwen3.8-27B", True),
    ("/models/qwen3.8-27b", True),  # the checkpoint; a local copy of it
    ("Qwen/Qwen3.8-32B", False),
    ("meta-llama/Llama-3.1-8B", False),
]  # another size; another family
UNLISTED = [
    ("Qwen/Qwen3.8-27B", True),
    ("/models/swift-qwen3.8-27b-awq", True),  # its name; an alias
    ("meta-llama/Llama-3.1-8B", False),
    ("Qwen/Qwen3-14B", False),  # the family alone is resemblance, not the model
]


def unlisted(root: Path) -> None:
    """The model's `checkpoints` taken out of root's catalog (the test catalog lists the fixtures' own)."""
    models = root / "catalog" / "models.yaml"
    lines = models.read_text(encoding="utf-8").splitlines(keepends=True)
    models.write_text("".join(line for line in lines if "checkpoints" not in line), encoding="utf-8")


def _verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], names: list[tuple[str, bool]], listed: bool
) -> list[tuple[str, bool, bool, bool, bool]]:
    root = with_reference(tmp_path, capsys)
    unlisted(root)
    if listed:
        models = root / "catalog" / "models.yaml"
        text = models.read_text(encoding="utf-8")
        listing = "    name: Qwen3.8-27B\n    checkpoints: [Qwen/Qwen3.8-27B]\n"
        models.write_text(text.replace("    name: Qwen3.8-27B\n", listing, 1), encoding="utf-8")
    spec = read_catalog(str(root), present_files(str(root))).catalog.models[MODEL]
    assert bool(spec.checkpoints) == listed
    out = []
    for i, (name, expected) in enumerate(names):
        gate = checkpoint_problem(MODEL, spec, name, None) is None  # ORV226, add-run's identity gate

        def serve(data: dict, name: str = name) -> None:
            data["config"]["model_args"]["model"] = data["model_name"] = name

        try:
            quality_add.build(
                str(root),
                str(forged(tmp_path / str(i), "q995", serve)),
                str(root / RECIPE_PATH),
                {"measured_by": "t"},
                None,
            )
            added = True
        except AddRunError as exc:
            assert [d.code for d in exc.result.diagnostics] == ["ORV235"], exc.result.diagnostics
            added = False
        stored = store_run_document(str(root), {**quality_doc("q995"), "served_model": name})
        write_recipe(root, [stored.digest])
        checked = "ORV235" not in codes(root)
        out.append((name, expected, gate, added, checked))
    return out


@pytest.mark.parametrize("listed", [True, False], ids=["checkpoints-listed", "none-listed"])
def test_the_three_paths_agree_on_a_checkpoint(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], listed: bool
) -> None:
    for name, expected, gate, added, checked in _verdicts(tmp_path, capsys, LISTED if listed else UNLISTED, listed):
        assert gate == added == checked == expected, name


def test_a_reference_run_is_held_to_the_same_rule(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = with_reference(tmp_path, capsys)
    unlisted(root)
    other = forged(tmp_path, "reference", lambda d: d["config"]["model_args"].update(model="meta-llama/Llama-3.1-8B"))
    with pytest.raises(AddRunError) as refused:
        quality_add.build(str(root), str(other), None, {"quant": "bf16", "measured_by": "t"}, MODEL)
    assert "does not mention" in refused.value.result.diagnostics[0].message
    assert LMEVAL.is_dir()


@pytest.mark.parametrize(
    ("served", "named"),
    [
        ("Qwen/Qwen3-32B", True),  # the listed repository
        ("qwen/qwen3-32b", True),  # the Hub resolves ids case-insensitively
        ("/data/models/Qwen3-32B", True),  # a local path names by its last folder
        ("/srv/hf/Qwen/Qwen3-32B/", True),  # ... or its last two
        ("attacker/Qwen3-32B", False),  # another owner's repository, whatever name it copies
        ("someone/Qwen3-32B-FP8", False),
        ("Qwen/Qwen3-32B@main", False),  # not an id the Hub serves (a revision is vLLM's --revision)
        ("Qwen/Qwen3-14B", False),
    ],
)
def test_a_hub_id_names_exactly_its_repository(served: str, named: bool) -> None:
    """Issue 49, "identity that matches, not resembles": a Hugging Face id must be the listed repository
    (owner included); a review found `attacker/Qwen3.8-27B` passing by its last path part."""
    from validator.evidence.identity import names_checkpoint

    assert names_checkpoint(served, "Qwen/Qwen3-32B") is named

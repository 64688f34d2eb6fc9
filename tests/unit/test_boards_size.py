"""Issue 54: no generated file near GitHub's limits (it warns at 50 MB and refuses a file over 100 MB).

Two guards: the size model of bench/merge_bytes.py (a registry spread over N // 25 models by Zipf's law,
each kind of generated file scaled from the largest measured registry by what it grows with) keeps every
committed file under the limit at 100,000 recipes; and `orv boards` refuses, writing nothing, when a file it
would write passes the limit anyway.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import merge_bytes
from tests.testing.factories import training_recipe, write_recipe
from validator.boards import keyfile, split
from validator.boards.regenerate import FILE_LIMIT_MB, MB, oversized, regenerate_files
from validator.cli import main
from validator.commands.boards import FileTooLarge, boards
from validator.commands.outcome import Outcome, no_progress
from validator.engine.evaluate import analyse

RESULTS = json.loads(merge_bytes.RESULTS.read_text())
GITHUB_REFUSES = 100 * 1024 * 1024  # GitHub refuses a file over 100 MiB
LARGEST_REGISTRY = 100_000


def _largest_measured() -> dict:
    return max(RESULTS["measured"], key=lambda r: r["recipes"])


def test_every_committed_file_stays_under_the_limit_at_the_benchs_largest_registry() -> None:
    files = merge_bytes.largest_files(_largest_measured(), LARGEST_REGISTRY)
    committed = {kind: size for kind, size in files.items() if "not committed" not in kind}
    # every kind orv commits is in the model: a kind missing from the measurement would pass unseen
    assert set(committed) == {"model file", "standings", "index", "key shard", "keys header"}
    over = {kind: size for kind, size in committed.items() if size >= FILE_LIMIT_MB * MB}
    assert over == {}, f"at {LARGEST_REGISTRY:,} recipes these generated files pass {FILE_LIMIT_MB} MB: {over}"


def test_a_models_chunks_stay_far_under_the_limit_however_large_the_model() -> None:
    """A model's rows and runs are stored in chunks (boards/split.py): the count grows with the model so a
    chunk averages at most CHUNK_ITEMS items, and hashed keys spread within 20% of the mean
    (test_boards_split holds it at the bench's largest model). An item is at most a recipe's share of its
    model's whole part (every recipe has a row), measured on the largest model: so the largest chunk at any
    size is bounded by 1.2 x CHUNK_ITEMS of those shares. The size model's `model file` is that whole part
    (what the manifest and the standings are each a subset of), held under the limit above."""
    measured = _largest_measured()
    share = measured["largest_by_kind"]["model file"]["bytes"] / measured["largest_model_recipes"]
    chunk = 1.2 * split.CHUNK_ITEMS * share
    assert chunk < FILE_LIMIT_MB * MB / 10, f"a chunk of ~{chunk / MB:.1f} MB"
    # the bound is the model's size alone, not the registry's: at 100,000 recipes the largest model needs
    # more chunks, not larger ones
    items = merge_bytes.largest_files(measured, LARGEST_REGISTRY)["model file"] / share
    assert split.chunk_count(int(items)) * split.CHUNK_ITEMS >= items


def test_the_size_model_sees_what_pushed_the_combined_document_out_of_git() -> None:
    """The model is not blind: the combined document it would have committed passes GitHub's refusal limit
    at the same size, so committing it again would fail the guard above (the published document is fine)."""
    files = merge_bytes.largest_files(_largest_measured(), LARGEST_REGISTRY)
    assert files["combined boards.json (published, not committed)"] > GITHUB_REFUSES
    # and the figures the results file states (docs/boards.md quotes them) are the model's, recomputed
    (saved,) = RESULTS["extrapolated"]
    assert saved["recipes"] == LARGEST_REGISTRY and saved["largest_files"] == files


def test_the_docs_show_the_table_the_bench_prints_from_its_results() -> None:
    """docs/boards.md and docs/benchmarks.md state the largest files as `python -m bench.merge_bytes --table`
    prints them from the committed results, never edited by hand; an edited figure is caught."""
    table = merge_bytes.size_table(RESULTS)
    for doc in ("boards.md", "benchmarks.md"):
        text = (merge_bytes.REPO / "docs" / doc).read_text(encoding="utf-8")
        assert table in text, doc
        assert "python -m bench.merge_bytes --n 1000 --n 10000 --save" in text
    last = table.splitlines()[-1]  # the extrapolated row, with a figure changed
    edited = table.replace(last, last.replace("| ~", "| ~9", 1))
    assert edited != table and edited not in (merge_bytes.REPO / "docs" / "boards.md").read_text(encoding="utf-8")


def test_the_model_file_grows_with_its_models_recipes_not_the_registry() -> None:
    measured = sorted(RESULTS["measured"], key=lambda r: r["recipes"])
    small, large = measured[0], measured[-1]
    assert large["recipes"] >= 10 * small["recipes"]
    growth = merge_bytes.largest_model_growth(small, large["recipes"])
    # the Zipf model predicts the largest model's recipes at the larger size within 15%
    assert abs(small["largest_model_recipes"] * growth / large["largest_model_recipes"] - 1) < 0.15
    # and its file grows by about as much (within 30%: the largest inference and training models differ)
    predicted = small["largest_by_kind"]["model file"]["bytes"] * growth
    assert abs(predicted / large["largest_by_kind"]["model file"]["bytes"] - 1) < 0.3


def test_oversized_names_only_the_files_over_the_limit_largest_first() -> None:
    files = {"boards/index.json": b"x" * 10, "boards/models/a.json": b"x" * 30, "boards/models/b.json": b"x" * 31}
    assert oversized(files, 30) == [("boards/models/b.json", 31)]
    assert oversized(files, 9) == [
        ("boards/models/b.json", 31),
        ("boards/models/a.json", 30),
        ("boards/index.json", 10),
    ]
    assert oversized(files) == []  # the default limit is FILE_LIMIT_MB


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_orv_boards_refuses_a_file_over_the_limit_before_writing_anything(registry: Path) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    assert main(["boards", "--root", str(registry)]) == 0
    write_recipe(registry, training_recipe("y", 200.0))  # something to write: the model's chunk grows
    before = _tree(registry / "boards")
    model_file = len((registry / "boards/models/qwen3.8-27b/0.json").read_bytes())
    with pytest.raises(FileTooLarge) as refused:
        boards(str(registry), False, 1, False, no_progress, max_file_bytes=model_file)
    assert "boards/models/qwen3.8-27b/0.json" in refused.value.message
    assert "nothing was written" in refused.value.message
    assert "--max-file-mb" in refused.value.hint and refused.value.exit_code == 1
    assert _tree(registry / "boards") == before  # not one file written or removed
    with pytest.raises(
        FileTooLarge
    ):  # --check refuses the same way: the regeneration it compares with is unpublishable
        boards(str(registry), True, 1, False, no_progress, max_file_bytes=model_file)
    # the honest twin: under the limit (the default, and one just above the largest file) it writes
    outcome = boards(str(registry), False, 1, False, no_progress, max_file_bytes=10 * model_file)
    assert isinstance(outcome, Outcome) and outcome.exit_code == 0
    assert _tree(registry / "boards") != before
    assert main(["boards", "--check", "--max-file-mb", "1", "--root", str(registry)]) == 0


def test_the_cli_refusal_is_a_message_and_a_hint_never_a_traceback(
    registry: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write_recipe(registry, training_recipe("x", 100.0))
    monkeypatch.setattr("validator.commands.boards.FILE_LIMIT_MB", 0)  # every file passes a zero limit
    assert main(["boards", "--root", str(registry)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("orv: a generated file would pass the limit") and "hint:" in err and "Traceback" not in err
    assert not (registry / "boards" / "index.json").exists()


def test_a_key_shard_over_the_limit_is_refused_by_its_size_before_any_shard_is_made(registry: Path) -> None:
    """The key shards are made one at a time, after the limit is checked (keyfile.KeyShards knows each one's
    size first): the refusal names the files and sizes the made files have, and nothing is written."""
    write_recipe(registry, training_recipe("x", 100.0))
    assert main(["boards", "--root", str(registry)]) == 0
    write_recipe(registry, training_recipe("y", 200.0))
    before = _tree(registry / "boards")
    analysis = analyse(str(registry), for_tiers=True)
    fresh = {**regenerate_files(analysis), **keyfile.fresh_key_files(analysis.snapshot)}
    shard = min((path for path in fresh if path.startswith("boards/keys/")), key=lambda path: len(fresh[path]))
    limit = len(fresh[shard]) - 1  # every shard passes it
    over = oversized(fresh, limit)
    with pytest.raises(FileTooLarge) as refused:
        boards(str(registry), False, 1, False, no_progress, max_file_bytes=limit)
    named = ", ".join(f"{path} ({size:,} bytes)" for path, size in over[:5])
    assert f"the limit of {limit:,} bytes: {named}" in refused.value.message
    assert (f" and {len(over) - 5} more" in refused.value.message) == (len(over) > 5)
    assert _tree(registry / "boards") == before

"""`orv add-run` does the bookkeeping: detects the tool, accepts an empty claim, prints the recomputed headline,
and with --write-recipe records the run (and the claim) in the recipe in place."""

from __future__ import annotations

import difflib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.testing.registry import (
    CASES,
    HAND_WRITTEN,
    TOOLS,
    VALID_TRAINING_RECIPE,
    VLLM,
    hand_written_registry,
    make_registry,
)
from validator.adapters.detect import RUN, detect
from validator.cli import main
from validator.hashing import canonical_bytes, content_address

MEGATRON = TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"


def diff(before: str, after: str) -> tuple[list[str], list[str]]:
    lines = list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0))
    return (
        [d[1:] for d in lines if d.startswith("-") and not d.startswith("---")],
        [d[1:] for d in lines if d.startswith("+") and not d.startswith("+++")],
    )


def check_findings(root: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    """Findings of `orv check` except the boards' own (ORV7xx: main regenerates boards, issue 15 part 1)."""
    code = main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    findings = [f for f in report["findings"] if not str(f["code"]).startswith("ORV7")]
    assert code in (0, 1)
    return findings


@pytest.fixture
def inference_registry(tmp_path: Path) -> tuple[Path, Path]:
    return hand_written_registry(tmp_path / "registry")


# --------------------------------------------------------------------------- detection


@pytest.mark.parametrize(
    "path, fmt",
    [
        (VLLM, "vllm"),
        (TOOLS / "vllm" / "benchmark_serving-legacy.json", "vllm"),
        (TOOLS / "vllm" / "serve-summary-only.json", "vllm"),
        (TOOLS / "sglang" / "bench_serving.jsonl", "sglang"),
        (TOOLS / "sglang" / "bench_serving-details.jsonl", "sglang"),
        (MEGATRON, "megatron"),
        (TOOLS / "nemo" / "qwen3-8-27b-nemo.log", "nemo"),
        (next((CASES / "valid-training-run" / "runs").glob("*/*.json")), RUN),
    ],
)
def test_each_tool_output_is_recognised(path: Path, fmt: str) -> None:
    found = detect(path.read_bytes())
    assert found is not None and found.fmt == fmt


@pytest.mark.parametrize("raw", [b"", b"{}", b"[1, 2]", b"hello\nworld\n", b'{"duration": 3}', b"\xff\xfe"])
def test_unknown_files_are_not_guessed(raw: bytes) -> None:
    assert detect(raw) is None


def test_a_tool_output_without_from_or_recipe_names_the_from_that_fits(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, _ = inference_registry
    assert main(["add-run", "--root", str(root), str(VLLM)]) == 2
    err = capsys.readouterr().err
    assert "looks like `vllm bench serve --save-result` output" in err
    assert "--from vllm --recipe recipes/inference/<model>/<id>.yaml" in err
    assert "run kind must be" not in err and not any((root / "runs").iterdir())


def test_a_run_document_with_metadata_options_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    run = next((CASES / "valid-training-run" / "runs").glob("*/*.json"))
    assert main(["add-run", "--root", str(root), str(run), "--recipe", str(VALID_TRAINING_RECIPE)]) == 2
    assert "already a run document" in capsys.readouterr().err


# --------------------------------------------------------------------------- the recipe edited in place


def test_vllm_run_is_recorded_in_a_hand_written_recipe_changing_only_two_lines(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, recipe = inference_registry
    code = main(["add-run", "--root", str(root), str(VLLM), "--recipe", str(recipe), "--write-recipe"])
    out, err = capsys.readouterr()
    assert code == 0, err
    reference = out.strip()
    assert reference.startswith("sha256:") and out.count("\n") == 1  # stdout: the reference only
    assert "reading it as --from vllm" in err
    assert "1 of 9 requests failed and is excluded" in err
    assert "recomputed from 8 completed requests: decode tok/s per stream 41.56, TTFT ms 63.79" in err

    edited = recipe.read_text(encoding="utf-8")
    removed, added = diff(HAND_WRITTEN, edited)
    assert removed == ["claimed: {}", "runs: []"]
    assert added == [
        "claimed: {decode_tok_s: 41.56, prefill_tok_s: 8166.0, ttft_ms: 63.79}",
        "runs:",
        f'  - "{reference}"',
    ]
    assert check_findings(root, capsys) == []  # T2: the claim is what the samples give, within 1%

    # Again: the run is stored already and listed already; nothing changes.
    assert main(["add-run", "--root", str(root), str(VLLM), "--recipe", str(recipe), "--write-recipe"]) == 0
    assert "already lists this run" in capsys.readouterr().err
    assert recipe.read_text(encoding="utf-8") == edited


def test_a_claim_the_recipe_states_is_kept(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, recipe = inference_registry
    recipe.write_text(HAND_WRITTEN.replace("claimed: {}", "claimed: {decode_tok_s: 41.5}"), encoding="utf-8")
    assert (
        main(["add-run", "--root", str(root), "--from", "vllm", str(VLLM), "--recipe", str(recipe), "--write-recipe"])
        == 0
    )
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    assert data["claimed"] == {"decode_tok_s": 41.5} and len(data["runs"]) == 1
    err = capsys.readouterr().err
    assert "filled `claimed:`" not in err and "the recipe claims" not in err  # 41.5 is within 1% of 41.56


def test_a_claim_the_run_does_not_support_is_refused_before_anything_is_stored(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """`orv check` would refuse the pair (ORV207), so add-run stores nothing and says why (issue 52); the
    honest twin, a claim within 1%, is stored above."""
    root, recipe = inference_registry
    written = HAND_WRITTEN.replace("claimed: {}", "claimed: {decode_tok_s: 45}")
    recipe.write_text(written, encoding="utf-8")
    assert main(["add-run", "--root", str(root), str(VLLM), "--recipe", str(recipe), "--write-recipe"]) == 1
    err = capsys.readouterr().err
    assert "ORV207 error: claimed.decode_tok_s is 45 but run" in err and "nothing was stored" in err
    assert recipe.read_text(encoding="utf-8") == written and not list((root / "runs").rglob("*.json"))


def test_without_a_terminal_the_recipe_is_left_alone_and_the_next_step_printed(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, recipe = inference_registry
    assert main(["add-run", "--root", str(root), str(VLLM), "--recipe", str(recipe)]) == 0  # stdout is captured
    out, err = capsys.readouterr()
    assert recipe.read_text(encoding="utf-8") == HAND_WRITTEN
    assert f'next: add `- "{out.strip()}"` under `runs:`' in err


def test_write_recipe_needs_a_recipe(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    assert main(["add-run", "--root", str(root), "--from", "vllm", str(VLLM), "--write-recipe"]) == 2
    assert "--write-recipe needs --recipe" in capsys.readouterr().err


def test_a_value_the_recipe_given_lacks_is_not_asked_for_as_a_missing_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An imported training row pins no software: add-run with --recipe must say the recipe lacks it (not
    "pass --recipe", which was passed); without a recipe it still says to pass one."""
    root = make_registry(tmp_path / "registry", CASES / "valid-training")
    recipe = root / VALID_TRAINING_RECIPE.relative_to(CASES / "valid-training")
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    data["software"] = {}
    recipe.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    code = main(
        [
            "add-run",
            "--root",
            str(root),
            str(MEGATRON),
            "--recipe",
            str(recipe),
            "--no-write-recipe",
            "--measured-by",
            "lab-a",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and "does not state `software`" in err
    assert "the recipe given does not state `software` either: add it to the recipe" in err
    assert "pass --tool-version (the recipe given does not state it either)" in err
    assert "pass --recipe PATH" not in err
    code = main(["add-run", "--root", str(root), "--from", "megatron", str(MEGATRON), "--model", "qwen3.8-27b"])
    assert code == 1 and "pass --recipe PATH to take it from the recipe this run backs" in capsys.readouterr().err


def test_megatron_run_fills_an_empty_training_claim_and_names_the_warmup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry", CASES / "valid-training")
    recipe = root / VALID_TRAINING_RECIPE.relative_to(CASES / "valid-training")
    original = recipe.read_text(encoding="utf-8")
    stated = yaml.safe_load(original)["claimed"]
    recipe.write_text(
        original.replace(f"claimed: {{tokens_per_s_per_gpu: {stated['tokens_per_s_per_gpu']}}}", "claimed: {}"),
        encoding="utf-8",
    )
    assert "claimed: {}" in recipe.read_text(encoding="utf-8")
    code = main(
        [
            "add-run",
            "--root",
            str(root),
            str(MEGATRON),
            "--recipe",
            str(recipe),
            "--write-recipe",
            "--measured-by",
            "lab-a",
            "--tool-version",
            "0.14.0",
        ]
    )
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "excluded: the first 2 warm-up steps of 24 (the workload's protocol)" in err
    data = yaml.safe_load(recipe.read_text(encoding="utf-8"))
    assert data["runs"] == [out.strip()]
    assert data["claimed"]["tokens_per_s_per_gpu"] == pytest.approx(stated["tokens_per_s_per_gpu"], rel=0.01)
    assert [f["code"] for f in check_findings(root, capsys)] == []


def test_a_recipe_that_cannot_be_edited_safely_is_not_touched(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, recipe = inference_registry
    odd = HAND_WRITTEN.replace("quant: fp8", "quant: 0o10")  # a string in YAML 1.1 (orv), an octal 8 in 1.2
    recipe.write_text(odd, encoding="utf-8")
    code = main(
        ["add-run", "--root", str(root), "--from", "vllm", str(VLLM), "--recipe", str(recipe), "--write-recipe"]
    )
    out, err = capsys.readouterr()
    assert code == 1 and "Traceback" not in err
    assert "was not edited (the file reads differently in YAML 1.1 and 1.2" in err
    assert f'add `- "{out.strip()}"` under `runs:` by hand' in err  # the run itself is stored
    assert recipe.read_text(encoding="utf-8") == odd


# --------------------------------------------------------------------------- orv hash agrees with add-run


def test_hash_of_a_pretty_printed_run_is_the_address_add_run_stores_it_under(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    stored = next((CASES / "valid-training-run" / "runs").glob("*/*.json"))
    pretty = tmp_path / "run.json"
    pretty.write_text(json.dumps(json.loads(stored.read_bytes()), indent=2), encoding="utf-8")
    assert main(["hash", str(pretty)]) == 0
    hashed, note = capsys.readouterr()
    assert main(["add-run", "--root", str(root), str(pretty)]) == 0
    added = capsys.readouterr().out
    assert hashed == added == f"sha256:{stored.stem}\n"
    assert "not canonical JSON" in note and content_address(pretty.read_bytes()) in note
    assert main(["hash", "--bytes", str(pretty)]) == 0
    assert capsys.readouterr().out.strip() == f"sha256:{content_address(pretty.read_bytes())}"
    assert canonical_bytes(json.loads(pretty.read_bytes())) == stored.read_bytes()


def test_hash_of_a_tool_output_says_it_is_not_a_run_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    copy = tmp_path / "result.json"
    shutil.copy(VLLM, copy)
    assert main(["hash", str(copy)]) == 0
    out, err = capsys.readouterr()
    assert out.strip() == f"sha256:{content_address(copy.read_bytes())}"
    assert "not a run address" in err and "--from vllm" in err


# --------------------------------------------------------------------------- judged before it is written (issue 52)


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_run_orv_check_would_refuse_is_not_stored_and_every_problem_is_named_at_once(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """The shipped vLLM output (~512/64) on a recipe of the 1,000/101 workload that also claims a figure the
    run does not reach: the workload misfits (ORV241, prompts and answers) and the claim (ORV207) in one
    answer, and the tree byte for byte as it was. Its honest twin, the same output on the recipe of the
    workload it measured, is stored (test_vllm_run_is_recorded_in_a_hand_written_recipe_changing_only_two_lines)."""
    root, recipe = inference_registry
    recipe.write_text(
        HAND_WRITTEN.replace("workload: random-512-64", "workload: chat-1000-100").replace(
            "claimed: {}", "claimed: {decode_tok_s: 45}"
        ),
        encoding="utf-8",
    )
    before = _tree(root)
    code = main(
        ["add-run", "--root", str(root), "--from", "vllm", str(VLLM), "--recipe", str(recipe), "--write-recipe"]
    )
    out, err = capsys.readouterr()
    assert code == 1 and out == "" and "nothing was stored" in err
    assert err.count("ORV241 error") == 2 and "ORV207 error" in err
    assert "mean input length" in err and "mean output length" in err
    assert _tree(root) == before


def test_without_write_recipe_the_run_is_judged_as_the_recipe_would_list_it(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    root, recipe = inference_registry
    recipe.write_text(HAND_WRITTEN.replace("workload: random-512-64", "workload: chat-1000-100"), encoding="utf-8")
    before = _tree(root)
    assert main(["add-run", "--root", str(root), "--from", "vllm", str(VLLM), "--recipe", str(recipe)]) == 1
    assert "ORV241 error" in capsys.readouterr().err and _tree(root) == before
    # the honest twin: the workload the output measured, stored and the next step printed
    recipe.write_text(HAND_WRITTEN, encoding="utf-8")
    assert main(["add-run", "--root", str(root), "--from", "vllm", str(VLLM), "--recipe", str(recipe)]) == 0
    assert len(list((root / "runs").rglob("*.json"))) == 1


def test_a_defaulted_write_recipe_says_which_it_did(
    inference_registry: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """--write-recipe defaults on for a terminal and off for a pipe: left to the default, add-run says which it
    did and why (issue 52); chosen explicitly, it says nothing of the default."""
    root, recipe = inference_registry
    assert main(["add-run", "--root", str(root), str(VLLM), "--recipe", str(recipe)]) == 0  # captured: not a tty
    assert "standard output is not a terminal, so the recipe was not edited" in capsys.readouterr().err
    assert main(["add-run", "--root", str(root), str(VLLM), "--recipe", str(recipe), "--no-write-recipe"]) == 0
    assert "not a terminal" not in capsys.readouterr().err

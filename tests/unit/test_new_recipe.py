"""`orv new`: a recipe scaffold with the schema modeline, ids by the naming rule, catalog ids checked, that
passes `orv check` once `orv add-run --write-recipe` has attached a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from tests.testing.paths import REPO
from tests.testing.registry import TOOLS, make_registry
from validator.cli import cli, main
from validator.commands import new_recipe as scaffold

INFERENCE = [
    "new",
    "inference",
    "--model",
    "qwen3.8-27b",
    "--gpu",
    "H100",
    "--engine",
    "vllm@0.11.0",
    "--quant",
    "fp8",
    "--context-len",
    "8192",
    "--workload",
    "random-512-64",
    "--author",
    "lab-a",
    "--measured",
    "2026-10-18",
]
TRAINING = [
    "new",
    "training",
    "--model",
    "Qwen3.8-27B",
    "--gpu",
    "h100",
    "--count",
    "8",
    "--pp",
    "4",
    "--framework",
    "megatron-core@0.14.0",
    "--author",
    "lab-a",
    "--measured",
    "2026-10-18",
]


def new(root: Path, args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main([*args, "--root", str(root), "--no-interactive"])
    out, err = capsys.readouterr()
    return code, out.strip(), err


def findings(root: Path, capsys: pytest.CaptureFixture[str]) -> list[tuple[str, str]]:
    """`orv check` findings other than the boards' (ORV7xx: main regenerates boards, issue 15 part 1)."""
    main(["check", "--root", str(root), "--no-cache", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    return [(f["code"], f["path"]) for f in report["findings"] if not f["code"].startswith("ORV7")]


def test_inference_scaffold_has_the_modeline_comments_and_the_rule_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    code, out, err = new(root, INFERENCE, capsys)
    assert code == 0, err
    assert out == "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-vllm-fp8-random-512-64-c1.yaml"
    text = (root / out).read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[0] == "# yaml-language-server: $schema=../../../schema/recipe-inference.schema.json"
    assert sum(line.startswith("# ") for line in lines) >= 5  # short comments above the fields
    data = yaml.safe_load(text)
    assert data == {
        "id": "qwen3-8-27b-h100-vllm-fp8-random-512-64-c1",
        "kind": "inference",
        "model": "qwen3.8-27b",
        "hardware": {"gpu": "h100", "count": 1},
        "author": "lab-a",
        "measured": "2026-10-18",
        "software": {"engine": {"name": "vllm", "version": "0.11.0"}},
        "quant": "fp8",
        "serving": {"context_len": 8192, "concurrency": 1},
        "workload": "random-512-64",
        "claimed": {},
        "runs": [],
    }
    assert '  engine: {name: vllm, version: "0.11.0"}' in lines  # a version stays text
    assert "orv add-run --from vllm|sglang|aiperf|trtllm-bench" in err  # every served-benchmark reader


@pytest.mark.parametrize(
    "args, path",
    [
        (INFERENCE, "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-vllm-fp8-random-512-64-c1.yaml"),
        (TRAINING, "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"),
    ],
)
def test_a_scaffold_passes_orv_check_once_a_run_is_attached(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], path: str
) -> None:
    root = make_registry(tmp_path / "registry")
    code, out, err = new(root, args, capsys)
    assert (code, out) == (0, path), err
    assert [p for _, p in findings(root, capsys)] == [path]  # an empty claim: not finished until a run is added
    output = TOOLS / ("vllm/serve-detailed.json" if "inference" in args else "megatron/qwen3-8-27b-tp1-pp4-dp2.log")
    assert main(["add-run", "--root", str(root), str(output), "--recipe", str(root / path), "--write-recipe"]) == 0
    capsys.readouterr()
    assert findings(root, capsys) == []
    data = yaml.safe_load((root / path).read_text(encoding="utf-8"))
    assert len(data["runs"]) == 1 and data["claimed"]


def test_a_taken_id_gets_the_next_number(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    first = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
    code, out, err = new(root, TRAINING, capsys)
    assert (code, out) == (0, first) and "taken" not in err
    code, out, err = new(root, TRAINING, capsys)
    assert (code, out) == (0, "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2-2.yaml")
    # said, not silent: which file holds the id, why they share it, and how to choose another
    assert (
        f"orv: note: the id `qwen3-8-27b-h100-tp1-pp4-dp2` is taken by {first} (the naming rule gives one id "
        "to the same model, GPU, GPU count and layout), so this recipe is `qwen3-8-27b-h100-tp1-pp4-dp2-2`; "
        "pass --id to name it otherwise"
    ) in err
    code, out, err = new(root, [*TRAINING, "--dry-run"], capsys)
    assert code == 0 and "is taken by " + first in err and "so this recipe is `qwen3-8-27b-h100-tp1-pp4-dp2-3`" in err
    code, _, err = new(root, [*TRAINING, "--id", "qwen3-8-27b-h100-tp1-pp4-dp2"], capsys)
    assert code == 2 and f"exists already ({first})" in err


def test_ids_follow_the_naming_rule() -> None:
    training = {"layout": {"tp": 2, "pp": 4, "vpp": 2, "ep": 8, "dp": 1}}
    assert (
        scaffold.derive_id("training", "gpt-oss-120b", "b200", 64, training) == "gpt-oss-120b-b200-tp2-pp4-vpp2-ep8-dp1"
    )
    inference = {
        "software": {"engine": {"name": "sglang"}},
        "quant": "nvfp4",
        "workload": "isl1k-osl8k",
        "serving": {"concurrency": 4, "speculative": {"method": "mtp", "k": 3}},
    }
    assert (
        scaffold.derive_id("inference", "qwen3.8-flash-next", "rtx-3090", 2, inference)
        == "qwen3-8-flash-next-rtx-3090-x2-sglang-nvfp4-isl1k-osl8k-c4-mtp3"
    )


def test_a_model_not_in_the_catalog_says_how_to_add_it_not_a_far_fetched_guess(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = new(REPO, [*INFERENCE[:2], "--model", "llama-3.1-8b", *INFERENCE[4:], "--dry-run"], capsys)
    assert code == 2
    assert "model `llama-3.1-8b` is not in catalog/models.yaml" in err
    assert "orv catalog add-model --config config.json --id llama-3.1-8b" in err
    assert "did you mean" not in err  # the registry has glm-5.1 (ratio 0.53): no noise


@pytest.mark.parametrize(
    "option, value, expected",
    [
        ("--model", "qwen3.8-72b", "did you mean `qwen3.8-27b`"),
        ("--gpu", "h100-sxm", "did you mean `h100`"),
        ("--gpu", "a100", "catalog/hardware.yaml"),
    ],
)
def test_close_catalog_ids_are_suggested(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, expected: str
) -> None:
    root = make_registry(tmp_path / "registry")
    args = list(INFERENCE)
    args[args.index(option) + 1] = value
    code, _, err = new(root, args, capsys)
    assert code == 2 and expected in err
    if value == "a100":
        assert "did you mean" not in err


@pytest.mark.parametrize(
    "engine, message",
    [
        ("vllm@latest", "moving target"),
        ("vllm", "names no pinned version"),
        ("vllm@>=0.11", "range or free text"),
        ("vllm@image:vllm/vllm-openai:v0.11.0", "no @sha256 digest"),
    ],
)
def test_unpinned_software_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], engine: str, message: str
) -> None:
    root = make_registry(tmp_path / "registry")
    args = list(INFERENCE)
    args[args.index("--engine") + 1] = engine
    code, _, err = new(root, args, capsys)
    assert code == 2 and message in err and not list((root / "recipes").rglob("*.yaml"))


def test_commit_pins_and_extra_components(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    sha = "1a2b3c4d5e6f" * 3 + "1a2b"
    code, out, err = new(
        root,
        [*INFERENCE[:6], "--engine", f"sglang@commit:{sha}", "--component", "kernels=flashinfer@0.4.1", *INFERENCE[8:]],
        capsys,
    )
    assert code == 0, err
    software = yaml.safe_load((root / out).read_text(encoding="utf-8"))["software"]
    assert software == {
        "engine": {"name": "sglang", "commit": sha},
        "kernels": {"name": "flashinfer", "version": "0.4.1"},
    }


def test_a_layout_must_multiply_to_the_gpu_count(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    code, _, err = new(root, [*TRAINING, "--tp", "3"], capsys)
    assert code == 2 and "cannot be split" in err


def test_without_a_terminal_missing_options_are_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    code = main(["new", "training", "--root", str(root), "--no-interactive", "--author", "x"])
    assert code == 2
    assert "missing --model, --gpu, --framework, --count" in capsys.readouterr().err


def test_on_a_terminal_missing_values_are_asked(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    # model, gpu, count (default 1), engine, quant, workload, author
    answers = "Qwen3.8-27B\nH100\n\nvllm@0.11.0\nfp8\nrandom-512-64\nlab-a\n"
    result = CliRunner().invoke(cli, ["new", "inference", "--root", str(root), "--interactive"], input=answers)
    assert result.exit_code == 0, result.output
    written = root / "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-vllm-fp8-random-512-64-c1.yaml"
    data = yaml.safe_load(written.read_text(encoding="utf-8"))
    assert (data["model"], data["hardware"], data["author"]) == ("qwen3.8-27b", {"gpu": "h100", "count": 1}, "lab-a")


def test_dry_run_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    code, out, _ = new(root, [*INFERENCE, "--dry-run"], capsys)
    assert code == 0 and out.startswith("# yaml-language-server: $schema=")
    assert not list((root / "recipes").rglob("*.yaml"))


def test_an_inference_recipe_names_a_workload_of_its_kind(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """orv new inference needs --workload (ORV240 otherwise), and never a training or `unspecified` one."""
    root = make_registry(tmp_path / "registry")
    without = [a for a in INFERENCE if a not in ("--workload", "random-512-64")]
    code, _, err = new(root, without, capsys)
    assert code == 2 and "missing --workload" in err
    for wrong, words in (
        ("sft-8k-gb128-bf16", "is not an inference workload"),
        ("unspecified", "is not an inference workload"),
        ("isl2k", "is not in catalog/workloads.yaml"),
    ):
        code, _, err = new(root, [*without, "--workload", wrong], capsys)
        assert code == 2 and words in err
        assert "isl1k-osl1k" in err  # the hint lists the inference workloads


# --------------------------------------------------------------------------- a newcomer's second try (issue 52)


def test_force_replaces_an_untracked_draft_and_never_a_committed_recipe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.testing.git import commit_all, git

    root = make_registry(tmp_path / "registry")
    git(root, "init", "-q", "-b", "main")
    code, first, _ = new(root, INFERENCE, capsys)
    assert code == 0
    draft = (root / first).read_text(encoding="utf-8")
    # without --force a second attempt is a second recipe (-2), as before
    code, second, err = new(root, [*INFERENCE[:-2], "--measured", "2026-10-19"], capsys)
    assert code == 0 and second.endswith("-c1-2.yaml") and "is taken by" in err
    (root / second).unlink()
    # with --force it replaces the untracked first attempt
    code, again, err = new(root, [*INFERENCE[:-2], "--measured", "2026-10-19", "--force"], capsys)
    assert code == 0 and again == first and "replacing the untracked draft" in err
    assert (root / first).read_text(encoding="utf-8") != draft and "2026-10-19" in (root / first).read_text()
    # once committed, --force refuses and the file is kept
    commit_all(root, "recipe")
    kept = (root / first).read_bytes()
    code, _, err = new(root, [*INFERENCE, "--force"], capsys)
    assert code == 2 and "is committed" in err and (root / first).read_bytes() == kept


def test_a_missing_option_lists_the_ids_it_may_take(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    args = [a for a in INFERENCE if a not in ("--workload", "random-512-64")]
    code, _, err = new(root, args, capsys)
    assert code == 2 and "missing --workload" in err
    listed = err.split("valid --workload ids:", 1)[1].splitlines()[0]
    assert "random-512-64" in listed and "sft-8k-gb128-bf16" not in listed and "unspecified" not in listed


def test_an_inference_recipe_names_orv_reproduce_before_add_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_registry(tmp_path / "registry")
    code, rel, err = new(root, INFERENCE, capsys)
    assert code == 0 and err.index(f"orv reproduce {rel}") < err.index("orv add-run")

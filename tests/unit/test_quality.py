"""Quality evidence from real lm-eval 0.4.13 output (tests/fixtures/lmeval/): re-scoring, coverage, status, tiers.

Every input starts as a fixture lm-eval's CLI wrote; a test that needs a forged input copies the
fixture and edits what a forger would edit, nothing else.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testing.paths import FIXTURES
from tests.testing.quality import reworded
from tests.testing.registry import INFERENCE_RECIPE_TEXT, TOOLS, make_registry
from validator.boards.split import read_boards
from validator.checks.collect import Collector
from validator.cli import main
from validator.engine.evaluate import Config, evaluate, run
from validator.evidence import tiers
from validator.load.pipeline import assemble_loaded, load_tree
from validator.quality import credentials, lmeval, verify
from validator.quality.recompute import mean_stderr
from validator.quality.scorers import gsm8k
from validator.registry.store import store_run_document

LMEVAL = FIXTURES / "lmeval"
FAKE_KEY = "sk-live-0123456789abcdefFAKEKEYforTESTS"  # what make_fixtures.py passed as api_key
RECIPE_PATH = "recipes/inference/qwen3.8-27b/qwen3-8-27b-h100-vllm-fp8-c1.yaml"
RUNS = ("reference", "q995", "q97", "limit50", "subset", "fewshot3")


# --------------------------------------------------------------------------- helpers


def results_file(folder: Path) -> Path:
    return next(folder.glob("results_*.json"))


def samples_file(folder: Path) -> Path:
    return next(folder.glob("samples_gsm8k_*.jsonl"))


def forged(
    tmp_path: Path,
    name: str,
    results: Callable[[dict[str, Any]], None] | None = None,
    samples: Callable[[list[dict[str, Any]]], None] | None = None,
    own: bool = False,
) -> Path:
    """A copy of fixture `name` with the results and/or sample lines edited in place; `own`: of its
    reworded copy (responses of its own, not the reference's: tests/testing/quality.py)."""
    dest = tmp_path / f"forged-{name}"
    shutil.copytree(reworded(LMEVAL / name, tmp_path / f"own-{name}") if own else LMEVAL / name, dest)
    if results is not None:
        data = json.loads(results_file(dest).read_text(encoding="utf-8"))
        results(data)
        results_file(dest).write_text(json.dumps(data, indent=2), encoding="utf-8")
    if samples is not None:
        lines = [json.loads(line) for line in samples_file(dest).read_text(encoding="utf-8").splitlines()]
        samples(lines)
        samples_file(dest).write_text("".join(json.dumps(s) + "\n" for s in lines), encoding="utf-8")
    return dest


def add_run(root: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["add-run", "--root", str(root), *args])
    out, err = capsys.readouterr()
    return code, out.strip(), err


def digest_of(out: str) -> str:
    return out.split(":", 1)[1]


def with_reference(tmp_path: Path, capsys: pytest.CaptureFixture[str], bound: float | None = None) -> Path:
    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(LMEVAL / "reference"),
        "--reference-for",
        "qwen3.8-27b",
        "--quant",
        "bf16",
        "--measured-by",
        "lab-a",
    )
    assert code == 0, err
    if bound is not None:
        models = root / "catalog" / "models.yaml"
        models.write_text(
            models.read_text(encoding="utf-8").replace(
                "    quality_reference:\n", f"    quality_bound: {bound}\n    quality_reference:\n"
            ),
            encoding="utf-8",
        )
    write_recipe(root, [])
    return root


def write_recipe(root: Path, digests: list[str], text: str = INFERENCE_RECIPE_TEXT) -> None:
    path = root / RECIPE_PATH
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("runs: []", f"runs: {json.dumps([f'sha256:{d}' for d in digests])}"), encoding="utf-8")


def tier(root: Path) -> tiers.TierResult:
    result = run(Config(root=str(root), skip_boards=True))
    snapshot = assemble_loaded(str(root), load_tree(str(root)), Collector())
    return tiers.derive(snapshot, result.diagnostics)[RECIPE_PATH]


def codes(root: Path) -> list[str]:
    return sorted(d.code for d in run(Config(root=str(root), skip_boards=True)).diagnostics)


def quality_doc(name: str) -> dict[str, Any]:
    return lmeval.to_document(lmeval.read_output(str(LMEVAL / name)), {"model": "qwen3.8-27b", "measured_by": "t"})


# --------------------------------------------------------------------------- the real outputs


@pytest.mark.parametrize("name", RUNS)
def test_real_lm_eval_outputs_rescore_exactly(name: str) -> None:
    """orv's gsm8k scorer, mean and stderr reproduce every figure lm-eval wrote, and its task hash."""
    problems, facts = verify.check(quality_doc(name))
    assert problems == []
    stated = json.loads(results_file(LMEVAL / name).read_text(encoding="utf-8"))["results"]["gsm8k"]
    task = facts.tasks["gsm8k"]
    for flt, score in task.filters.items():
        assert score.score == pytest.approx(stated[f"exact_match,{flt}"], rel=1e-12)
        assert score.stderr == pytest.approx(stated[f"exact_match_stderr,{flt}"], rel=1e-12)
    assert task.full is (name in ("reference", "q995", "q97", "fewshot3"))


def test_scorer_follows_lm_eval_normalisation() -> None:
    s = gsm8k.SCORER
    assert s.extract("strict-match", "so 5 apples.\n#### 1,250") == "1,250"
    assert s.extract("strict-match", "the answer is 1250.") == "[invalid]"
    assert s.extract("flexible-extract", "first 12, then $1,250.") == "$1,250."
    assert s.value("$1,250.", "They have <<x=1250>>1250.\n#### 1250") == 1.0
    assert s.value("1251", "#### 1250") == 0.0
    assert mean_stderr([1.0, 0.0, 1.0, 1.0]) == pytest.approx(math.sqrt(0.25) / 2)


def test_a_changed_filter_is_reported_not_scored() -> None:
    doc = quality_doc("reference")
    doc["tasks"]["gsm8k"]["config"]["filter_list"][0]["filter"][0]["regex_pattern"] = "(\\d+)"
    problems, facts = verify.check(doc)
    assert [p.code for p in problems] == ["ORV237"] and not facts.tasks["gsm8k"].scored


# --------------------------------------------------------------------------- forged inputs


def test_a_raised_headline_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def raise_headline(data: dict[str, Any]) -> None:
        data["results"]["gsm8k"]["exact_match,flexible-extract"] = 0.83

    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(forged(tmp_path, "q97", raise_headline)),
        "--model",
        "qwen3.8-27b",
        "--measured-by",
        "x",
    )
    assert code == 1 and "ORV230" in err and "Traceback" not in err


def test_a_raised_headline_in_a_stored_run_is_orv230(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = with_reference(tmp_path, capsys)
    doc = quality_doc("q97")
    doc["tasks"]["gsm8k"]["results"]["flexible-extract"]["exact_match"]["score"] = 0.8
    stored = store_run_document(str(root), doc)
    write_recipe(root, [stored.digest])
    assert "ORV230" in codes(root)
    assert tier(root).quality.status != "verified"


def test_values_flipped_to_correct_are_caught_by_rescoring(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def flip(lines: list[dict[str, Any]]) -> None:
        for s in lines:
            s["exact_match"] = 1.0  # responses unchanged

    def match_headline(data: dict[str, Any]) -> None:  # a careful forger also fixes the headline
        for flt in ("strict-match", "flexible-extract"):
            data["results"]["gsm8k"][f"exact_match,{flt}"] = 1.0
            data["results"]["gsm8k"][f"exact_match_stderr,{flt}"] = 0.0

    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(forged(tmp_path, "q97", match_headline, flip)),
        "--model",
        "qwen3.8-27b",
        "--measured-by",
        "x",
    )
    assert code == 1 and "ORV231" in err


def test_a_limit_run_relabelled_as_full_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def relabel(data: dict[str, Any]) -> None:
        data["config"]["limit"] = None
        data["n-samples"]["gsm8k"]["effective"] = 200

    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(forged(tmp_path, "limit50", relabel)),
        "--model",
        "qwen3.8-27b",
        "--measured-by",
        "x",
    )
    assert code == 1 and "ORV232" in err


def test_task_hashes_that_do_not_hash_the_samples_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    def swap(data: dict[str, Any]) -> None:  # the reference's task hash, to pass as comparable
        data["task_hashes"]["gsm8k"] = json.loads(results_file(LMEVAL / "reference").read_text())["task_hashes"][
            "gsm8k"
        ]

    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(forged(tmp_path, "fewshot3", swap)),
        "--model",
        "qwen3.8-27b",
        "--measured-by",
        "x",
    )
    assert code == 1 and "ORV233" in err


# --------------------------------------------------------------------------- status and tiers


@pytest.mark.parametrize(
    ("name", "status"),
    [("q995", "verified"), ("subset", "partial"), ("limit50", "partial"), ("fewshot3", "partial"), ("q97", "below")],
)
def test_status_against_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, status: str
) -> None:
    root = with_reference(tmp_path, capsys)
    code, out, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(reworded(LMEVAL / name, tmp_path / "own")),
        "--recipe",
        str(root / RECIPE_PATH),
    )
    assert code == 0, err
    write_recipe(root, [digest_of(out)])
    quality = tier(root).quality
    assert quality.status == status
    if status in ("verified", "below"):
        assert quality.filter == "strict-match" and quality.n == 200
        assert quality.ratio == pytest.approx({"q995": 0.745 / 0.75, "q97": 0.725 / 0.75}[name])


def test_no_reference_and_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    write_recipe(root, [])
    assert tier(root).quality.status == "no-reference"
    root = with_reference(tmp_path / "second", capsys)
    assert tier(root).quality.status == "missing"


def test_a_stricter_bound_turns_verified_into_below(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = with_reference(tmp_path, capsys, bound=0.999)
    code, out, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(reworded(LMEVAL / "q995", tmp_path / "own")),
        "--recipe",
        str(root / RECIPE_PATH),
    )
    write_recipe(root, [digest_of(out)])
    assert tier(root).quality.status == "below"


def test_below_warns_with_the_ratio_caps_at_t1_and_stays_marked_on_the_board(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = with_reference(tmp_path, capsys)
    recipe = str(root / RECIPE_PATH)
    _, detailed, _ = add_run(
        root, capsys, "--from", "vllm", str(TOOLS / "vllm" / "serve-detailed.json"), "--recipe", recipe
    )
    write_recipe(root, [digest_of(detailed)])
    assert tier(root).tier == "T2"
    _, q97, _ = add_run(
        root, capsys, "--from", "lm-eval", str(reworded(LMEVAL / "q97", tmp_path / "own")), "--recipe", recipe
    )
    write_recipe(root, [digest_of(detailed), digest_of(q97)])
    result = tier(root)
    assert result.tier == "T1" and any("0.9667 of the reference" in r for r in result.reasons)
    found = run(Config(root=str(root), skip_boards=True)).diagnostics
    below = [d for d in found if d.code == "ORV236"]
    assert len(below) == 1 and "0.9667" in below[0].message and below[0].severity.value == "warning"
    assert main(["boards", "--root", str(root)]) == 0
    rows = read_boards(str(root))["boards"]["measured"]  # type: ignore[index]
    row = next(r for r in rows if r["path"] == RECIPE_PATH)
    assert row["tier"] == "T1" and row["quality"] == {
        "task": "gsm8k",
        "metric": "exact_match",
        "filter": "strict-match",
        "score": 0.725,
        "reference": 0.75,
        "ratio": 0.9667,
        "n": 200,
        "status": "below",
    }
    assert row["rank"] is None and row["rank_of"] == 0  # marked, and left out of the ranking (SPEC §5)


def test_a_row_below_the_bound_is_not_ranked_and_does_not_push_others_down() -> None:
    from validator.boards.build import rank_inference

    def row(recipe: str, decode: float, status: str) -> dict[str, object]:
        return {"recipe": recipe, "model": "m", "gpu": "g", "decode_tok_s": decode, "quality": {"status": status}}

    rows = [row("fast-but-broken", 90.0, "below"), row("a", 50.0, "verified"), row("b", 40.0, "missing")]
    rank_inference(rows, "decode_tok_s")
    assert [(r["recipe"], r["rank"], r["rank_of"]) for r in rows] == [
        ("fast-but-broken", None, 2),
        ("a", 1, 2),
        ("b", 2, 2),
    ]


def test_a_bf16_recipe_without_speculation_needs_no_quality_for_t3() -> None:
    import yaml

    from validator.models import InferenceRecipe
    from validator.quality.status import needs_quality

    data = yaml.safe_load(INFERENCE_RECIPE_TEXT)
    assert needs_quality(InferenceRecipe.model_validate({**data, "quant": "bf16"}), "bf16") == []
    assert needs_quality(InferenceRecipe.model_validate(data), "bf16") == [
        "quant fp8 differs from the reference's bf16"
    ]
    spec = InferenceRecipe.model_validate(
        {**data, "quant": "bf16", "serving": {"speculative": {"method": "mtp", "k": 3}}}
    )
    assert needs_quality(spec, "bf16") == ["speculative decoding (mtp)"]
    kv = InferenceRecipe.model_validate({**data, "quant": "bf16-fp8-kv"})
    assert needs_quality(kv, "bf16") == ["quant bf16-fp8-kv differs from the reference's bf16", "quantized KV cache"]


def test_a_gguf_at_f32_or_f16_is_at_full_precision_as_fp32_and_fp16_are() -> None:
    """llama.cpp names a GGUF's unquantized file types f32 and f16 (the quant a llama.cpp recipe must
    state, ORV228): with no reference they need no quality evidence, as fp32 and fp16 need none; a
    quantized GGUF still does."""
    import yaml

    from validator.models import InferenceRecipe
    from validator.quality.status import needs_quality

    data = yaml.safe_load(INFERENCE_RECIPE_TEXT)
    for quant in ("f32", "f16", "fp32", "fp16", "bf16"):
        assert needs_quality(InferenceRecipe.model_validate({**data, "quant": quant}), None) == [], quant
    assert needs_quality(InferenceRecipe.model_validate({**data, "quant": "q4_k_m"}), None) == [
        "quant q4_k_m is not a published full precision"
    ]
    assert needs_quality(InferenceRecipe.model_validate({**data, "quant": "f16-q8_0-kv"}), None) != []


# --------------------------------------------------------------------------- identity and credentials


def test_the_api_key_never_reaches_the_stored_run_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert FAKE_KEY in results_file(LMEVAL / "reference").read_text()  # lm-eval did copy it
    root = with_reference(tmp_path, capsys)
    stored = list((root / "runs").rglob("*.json"))
    assert len(stored) == 1
    raw = stored[0].read_bytes().decode()
    assert FAKE_KEY not in raw and "api_key" not in raw and list(credentials.find(json.loads(raw))) == []
    assert "ORV234" not in codes(root)


def test_a_stored_credential_is_orv234(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = with_reference(tmp_path, capsys)
    doc = quality_doc("q995")
    doc["lm_eval"]["config"]["model_args"]["api_key"] = FAKE_KEY
    doc["tasks"]["gsm8k"]["config"]["metadata"]["hf_token"] = "hf_abcdefghijklmnopqrstuvwxyz0123"
    stored = store_run_document(str(root), doc)
    write_recipe(root, [stored.digest])
    found = [d for d in run(Config(root=str(root), skip_boards=True)).diagnostics if d.code == "ORV234"]
    assert len(found) == 2 and all("rotate" in d.hint for d in found)


def test_scrub_drops_secrets_from_strings_and_mappings() -> None:
    scrubbed = credentials.scrub(
        {
            "model_args": "pretrained=x,api_key=sk-abcdefghijklmnopqrstuv,max_length=8",
            "metadata": {"auth_token": "abc123def456ghi", "tokenizer": "t", "model": "m"},
        }
    )
    assert scrubbed == {"model_args": "pretrained=x,max_length=8", "metadata": {"tokenizer": "t", "model": "m"}}
    assert list(credentials.find({"note": "key sk-abcdefghijklmnopqrstuv"})) == [(("note",), "a key-shaped string")]
    assert list(credentials.find({"api_key": "EMPTY", "password": ""})) == []


def test_a_run_of_another_checkpoint_is_refused_and_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = with_reference(tmp_path, capsys)
    other = INFERENCE_RECIPE_TEXT.replace("quant: fp8", "checkpoint: Qwen/Qwen3.8-27B-FP8\nquant: fp8")
    write_recipe(root, [], other)
    code, _, err = add_run(root, capsys, "--from", "lm-eval", str(LMEVAL / "q995"), "--recipe", str(root / RECIPE_PATH))
    assert code == 1 and "ORV235" in err
    stored = store_run_document(str(root), {**quality_doc("q995"), "model": "qwen3.8-27b"})
    write_recipe(root, [stored.digest], other)
    assert "ORV235" in codes(root) and tier(root).quality.status == "missing"
    int4 = store_run_document(str(root), {**quality_doc("q995"), "quant": "awq-int4"})  # another configuration
    write_recipe(root, [int4.digest])
    assert "ORV235" in codes(root) and tier(root).quality.status == "missing"


def test_an_unreferenced_quality_run_and_a_dangling_reference_are_orv238(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = with_reference(tmp_path, capsys)
    store_run_document(str(root), quality_doc("q995"))
    models = root / "catalog" / "models.yaml"
    models.write_text(
        models.read_text().replace(
            '      gsm8k: "sha256:', '      gsm8k_cot: "sha256:' + "0" * 64 + '"\n      gsm8k: "sha256:'
        ),
        encoding="utf-8",
    )
    assert codes(root).count("ORV238") == 2


def test_an_unscored_task_config_is_orv237(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    def other_regex(data: dict[str, Any]) -> None:
        data["configs"]["gsm8k"]["filter_list"][1]["filter"][0]["regex_pattern"] = "(\\d+)"

    root = with_reference(tmp_path, capsys)
    code, out, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(forged(tmp_path, "q995", other_regex, own=True)),
        "--recipe",
        str(root / RECIPE_PATH),
    )
    assert code == 0 and "not the pinned one" in err
    write_recipe(root, [digest_of(out)])
    assert "ORV237" in codes(root) and tier(root).quality.status == "partial"


# --------------------------------------------------------------------------- bad input: one line, never a traceback


def _truncate(folder: Path) -> None:
    path = samples_file(folder)
    path.write_bytes(path.read_bytes()[:-500])


def _garbage_line(folder: Path) -> None:
    path = samples_file(folder)
    lines = path.read_text().splitlines()
    lines[3] = "this is not json"
    path.write_text("\n".join(lines) + "\n")


def _nan_score(folder: Path) -> None:
    path = results_file(folder)
    path.write_text(path.read_text().replace('"exact_match,strict-match": 0.745', '"exact_match,strict-match": NaN'))


def _another_task(folder: Path) -> None:  # an arc-style samples file (filter "none", metric acc) under gsm8k's name
    path = samples_file(folder)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    lines = [s for s in lines if s["filter"] == "strict-match"]  # one line per document, as arc_easy logs
    for s in lines:
        s["filter"], s["metrics"], s["acc"] = "none", ["acc"], s.pop("exact_match")
    path.write_text("".join(json.dumps(s) + "\n" for s in lines))


def _no_samples(folder: Path) -> None:
    samples_file(folder).unlink()


def _not_results(folder: Path) -> None:
    results_file(folder).write_text("[1, 2, 3]")


@pytest.mark.parametrize(
    ("damage", "code"),
    [
        (_truncate, "ORV101"),
        (_garbage_line, "ORV101"),
        (_nan_score, "ORV104"),
        (_another_task, "ORV232"),
        (_no_samples, "ORV108"),
        (_not_results, "ORV104"),
    ],
)
def test_bad_input_is_a_finding_never_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: Callable[[Path], None], code: str
) -> None:
    folder = forged(tmp_path, "q995")
    damage(folder)
    root = make_registry(tmp_path / "registry")
    rc, out, err = add_run(
        root, capsys, "--from", "lm-eval", str(folder), "--model", "qwen3.8-27b", "--measured-by", "x"
    )
    assert rc == 1 and out == "" and f" {code} error:" in err
    assert "Traceback" not in err and "internal error" not in err
    assert not list((root / "runs").rglob("*.json"))


def test_a_results_file_path_works_like_the_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    a = add_run(root, capsys, "--from", "lm-eval", str(LMEVAL / "q995"), "--model", "qwen3.8-27b", "--measured-by", "x")
    b = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(results_file(LMEVAL / "q995")),
        "--model",
        "qwen3.8-27b",
        "--measured-by",
        "x",
    )
    assert a[0] == b[0] == 0 and a[1] == b[1]


def test_a_directory_without_lm_eval_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    assert main(["add-run", "--root", str(root), str(LMEVAL / "q995")]) == 2


# --------------------------------------------------------------------------- pull requests


GIT_ENV = {
    "GIT_AUTHOR_NAME": "C",
    "GIT_AUTHOR_EMAIL": "c@example.org",
    "GIT_COMMITTER_NAME": "C",
    "GIT_COMMITTER_EMAIL": "c@example.org",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, env={**os.environ, **GIT_ENV}, check=True, capture_output=True)


@pytest.mark.git
@pytest.mark.parametrize(
    ("edit", "flagged"),
    [
        (lambda t: t.replace("    quality_reference:\n", "    quality_bound: 0.9\n    quality_reference:\n"), True),
        (lambda t: t.replace('      gsm8k: "sha256:', '      gsm8k: "sha256:0').replace('0"\n', '"\n', 1), True),
        (lambda t: t.replace("[Qwen/Qwen3.8-27B, Qwen/Qwen3.8-27B-FP8]", "[Qwen/Qwen3.8-27B]"), False),
    ],
)
def test_changing_a_quality_gate_in_a_pull_request_needs_a_waiver(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], edit: Callable[[str], str], flagged: bool
) -> None:
    root = with_reference(tmp_path, capsys)
    (root / RECIPE_PATH).unlink()
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "pr")
    models = root / "catalog" / "models.yaml"
    models.write_text(edit(models.read_text()), encoding="utf-8")
    git(root, "commit", "-q", "-am", "change the gate")
    found = evaluate(Config(root=str(root), base="main", skip_boards=True)).result.diagnostics
    assert any(d.code == "ORV620" for d in found) is flagged
    waived = evaluate(Config(root=str(root), base="main", skip_boards=True, waive=("ORV620",))).result.diagnostics
    assert not any(d.code == "ORV620" for d in waived)


def test_the_pr_summary_shows_each_new_entrys_quality_and_ratio() -> None:
    from validator.report.summary import _delta_lines, board_delta

    row = {
        "recipe": "r",
        "tier": "T1",
        "quality": {
            "task": "gsm8k",
            "metric": "exact_match",
            "filter": "strict-match",
            "score": 0.725,
            "reference": 0.75,
            "ratio": 0.9667,
            "n": 200,
            "status": "below",
        },
    }
    delta = board_delta({"boards": {"measured": []}}, {"boards": {"measured": [row]}})
    assert delta[0].quality == "gsm8k strict-match 0.7250, 0.9667 of the reference (below)"
    assert "| `r` | new | T1 | — | gsm8k strict-match 0.7250, 0.9667 of the reference (below) |" in _delta_lines(
        tuple(delta)
    )


def test_a_reference_must_be_a_full_set_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(LMEVAL / "limit50"),
        "--reference-for",
        "qwen3.8-27b",
        "--quant",
        "bf16",
        "--measured-by",
        "x",
    )
    assert code == 1 and "ORV232" in err and "quality_reference" not in (root / "catalog" / "models.yaml").read_text()


# --------------------------------------------------------------------------- no input makes add-run raise

from hypothesis import settings  # noqa: E402

JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 300) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
    max_leaves=6,
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix] if prefix else []
    if isinstance(value, dict):
        for k, v in value.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(value, list):
        for i, v in enumerate(value[:3]):
            out += _paths(v, prefix + (i,))
    return out


_RESULTS = json.loads(results_file(LMEVAL / "limit50").read_text(encoding="utf-8"))
_FIRST_SAMPLE = json.loads(samples_file(LMEVAL / "limit50").read_text(encoding="utf-8").splitlines()[0])
_RESULT_PATHS, _SAMPLE_PATHS = _paths(_RESULTS), _paths(_FIRST_SAMPLE)


def _set(document: Any, path: tuple[Any, ...], value: Any) -> None:
    for key in path[:-1]:
        document = document[key]
    document[path[-1]] = value


@settings(max_examples=int(os.environ.get("ORV_FUZZ_EXAMPLES", "60")), deadline=None, derandomize=True)
@given(where=st.sampled_from(_RESULT_PATHS + _SAMPLE_PATHS), value=JSON_VALUES)
def test_no_edit_of_lm_eval_output_makes_add_run_raise(
    tmp_path_factory: pytest.TempPathFactory, where: tuple[Any, ...], value: Any
) -> None:
    from validator.errors import AddRunError
    from validator.quality.add import build

    folder = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(LMEVAL / "limit50", folder, dirs_exist_ok=True)
    if where in _RESULT_PATHS:
        data = json.loads(json.dumps(_RESULTS))
        _set(data, where, value)
        results_file(folder).write_text(json.dumps(data), encoding="utf-8")
    else:
        lines = samples_file(folder).read_text(encoding="utf-8").splitlines()
        sample = json.loads(lines[0])
        _set(sample, where, value)
        lines[0] = json.dumps(sample)
        samples_file(folder).write_text("\n".join(lines) + "\n", encoding="utf-8")
    try:
        build(str(folder), str(folder), None, {"model": "qwen3.8-27b", "measured_by": "x"}, None)
    except AddRunError as exc:
        assert exc.result.diagnostics and all(d.hint for d in exc.result.diagnostics)


def test_a_bad_measured_at_is_a_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The timestamp pattern holds `{4}`: its hint must not go through str.format (was an internal error)."""
    root = make_registry(tmp_path / "registry")
    code, _, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(LMEVAL / "q995"),
        "--model",
        "qwen3.8-27b",
        "--measured-by",
        "x",
        "--measured-at",
        "yesterday",
    )
    assert code == 1 and "ORV109" in err and "internal error" not in err


@pytest.mark.git
def test_pull_request_mode_judges_quality_against_the_reference(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The reference run is outside a new recipe's neighbourhood, yet the PR check must see it."""
    root = with_reference(tmp_path, capsys)
    (root / RECIPE_PATH).unlink()
    git(root, "init", "-q", "-b", "main")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    git(root, "checkout", "-q", "-b", "pr")
    write_recipe(root, [])
    code, out, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(reworded(LMEVAL / "q97", tmp_path / "own")),
        "--recipe",
        str(root / RECIPE_PATH),
    )
    write_recipe(root, [digest_of(out)])
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "a recipe and its quality run")
    for whole in (False, True):
        found = evaluate(Config(root=str(root), base="main", skip_boards=True, neighbourhood=not whole)).result
        assert [d.code for d in found.diagnostics] == ["ORV236"]


def test_write_recipe_lists_the_quality_run_in_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = with_reference(tmp_path, capsys)
    code, out, err = add_run(
        root,
        capsys,
        "--from",
        "lm-eval",
        str(reworded(LMEVAL / "q995", tmp_path / "own")),
        "--recipe",
        str(root / RECIPE_PATH),
        "--write-recipe",
    )
    assert code == 0, err
    assert f"sha256:{digest_of(out)}" in (root / RECIPE_PATH).read_text()
    assert tier(root).quality.status == "verified"


# --------------------------------------------------------------------------- repeated responses, without every pair


class _Facts:
    def __init__(self, responses: list[tuple[int, str]]) -> None:
        self.responses = tuple(responses)


@given(
    st.integers(min_value=1, max_value=120),
    st.lists(
        st.tuples(
            st.integers(min_value=0, max_value=4),  # edits away from the shared answers: 0–4 of up to 120 documents
            st.sampled_from(["all", "drop-one", "twice", "other-base"]),
        ),
        min_size=2,
        max_size=12,
    ),
    st.randoms(),
)
def test_repeating_pairs_finds_exactly_the_pairs_comparing_every_pair_finds(
    documents: int, runs: list[tuple[int, str]], rng: Any
) -> None:
    """Runs around the 98% line (a few edits of shared answers), with other document sets and a document
    answered twice: the block search finds the same pairs as `repeats` on every pair."""
    from validator.quality import status

    base = [f"{i:016x}" for i in range(documents)]
    other = [f"{i + 10**6:016x}" for i in range(documents)]
    facts: dict[str, Any] = {}
    for n, (edits, shape) in enumerate(runs):
        answers = list(other if shape == "other-base" else base)
        for doc in rng.sample(range(documents), min(edits, documents)):
            answers[doc] = f"{n:08x}{doc:08x}"
        responses = list(enumerate(answers))
        if shape == "drop-one" and documents > 1:
            del responses[rng.randrange(documents)]
        if shape == "twice":
            responses.append(responses[rng.randrange(len(responses))])
        facts[f"run-{n:02d}"] = _Facts(responses)
    names = sorted(facts)
    every = [(a, b) for i, a in enumerate(names) for b in names[i + 1 :] if status.repeats(facts[a], facts[b])]
    assert status.repeating_pairs(facts) == every


def test_repeating_pairs_compares_few_pairs_of_runs_that_answer_differently(monkeypatch: pytest.MonkeyPatch) -> None:
    """Three hundred runs of one task, each its own answers except one copy: one comparison per
    candidate, not 44,850."""
    from validator.quality import status

    facts = {f"run-{n:03d}": _Facts([(doc, f"{n:08x}{doc:08x}") for doc in range(200)]) for n in range(300)}
    facts["run-copy"] = _Facts(list(facts["run-123"].responses))
    compared: list[int] = []
    real = status.repeats
    monkeypatch.setattr(status, "repeats", lambda a, b: compared.append(1) or real(a, b))
    assert status.repeating_pairs(facts) == [("run-123", "run-copy")]
    assert len(compared) < 10

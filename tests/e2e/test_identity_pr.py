"""Identity that matches, not resembles (issue #49, item 6).

Each forged row is built as a pull request on a scratch registry and checked as the Action checks it
(`orv check --base main`): refused, with a finding naming the field and both values. Each has its honest
twin, accepted (at T2 where the run can prove it). The runs are real tool output stored by `orv add-run`
(tests/fixtures/tools/), edited only in the fields the row is about, as a contributor's hand would.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.testing.checking import check
from tests.testing.factories import store_run, write_recipe
from tests.testing.git import commit_all, git
from tests.testing.llamabench import BOTH_JSON, BUILD, add_llama_catalog
from tests.testing.registry import INFERENCE_RECIPE_TEXT, REPO, TOOLS, VLLM, make_registry
from validator.cli import main
from validator.engine.evaluate import analyse
from validator.evidence.tiers import derive

TRT = TOOLS / "trtllm"
SHIPPED_GPUS = ("rtx-5090", "rtx-pro-6000-blackwell", "rtx-pro-6000-blackwell-max-q")
TRT_RECIPE = """\
id: scratch
kind: inference
model: qwen3.8-27b
checkpoint: Qwen/Qwen3.8-27B
hardware: {gpu: h100, count: 1}
author: ATTUNE
measured: "2026-12-05"
software:
  engine: {name: tensorrt-llm, version: "1.2.1"}
quant: fp8
serving: {context_len: 8192, concurrency: 1}
workload: single-stream-256
claimed: {}
runs: []
"""


def _registry(root: Path) -> Path:
    """The golden cases' catalog, the llama-bench model and workloads, and the shipped entries of the GPUs the
    rows name (with their device names and sources, catalog/hardware.yaml)."""
    add_llama_catalog(make_registry(root))
    path = root / "catalog" / "hardware.yaml"
    hardware = yaml.safe_load(path.read_text(encoding="utf-8"))
    shipped = yaml.safe_load((REPO / "catalog" / "hardware.yaml").read_text(encoding="utf-8"))["hardware"]
    for gid in SHIPPED_GPUS:
        hardware["hardware"][gid] = shipped[gid]
    path.write_text(yaml.safe_dump(hardware, sort_keys=False), encoding="utf-8")
    return root


def _stored(root: Path, out: str) -> dict[str, Any]:
    digest = out.strip()[len("sha256:") :]
    document: dict[str, Any] = json.loads((root / "runs" / digest[:2] / f"{digest}.json").read_text())
    return document


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[dict[str, Any], dict[str, Any]]]:
    """The run documents `orv add-run` stores from the real outputs, with the recipe it wrote: llama-bench's
    tg128 on the CPU host it ran on, trtllm-bench's FP8 report and vLLM's serve result on one H100."""
    root = _registry(tmp_path_factory.mktemp("scratch") / "registry")
    out: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    args = ["new", "inference", "--root", str(root), "--model", "tinyllama-test", "--gpu", "amd-epyc"]
    args += ["--engine", f"llama.cpp@{BUILD}", "--quant", "f32", "--workload", "llama-bench-tg128"]
    args += ["--author", "ann", "--measured", "2026-12-05", "--no-interactive"]
    with _quiet():
        assert main(args) == 0
    llama = next((root / "recipes").rglob("*.yaml"))
    trt = root / "recipes" / "inference" / "qwen3.8-27b" / "scratch.yaml"
    trt.parent.mkdir(parents=True, exist_ok=True)
    trt.write_text(TRT_RECIPE, encoding="utf-8")
    vllm = root / "recipes" / "inference" / "qwen3.8-27b" / "qwen3-8-27b-h100-vllm-fp8-c1.yaml"
    vllm.write_text(INFERENCE_RECIPE_TEXT, encoding="utf-8")
    for key, recipe, source in (
        ("llama", llama, [str(BOTH_JSON)]),
        ("trt", trt, [str(TRT / "streaming-requests.json"), "--report", str(TRT / "streaming-report.json")]),
        ("vllm", vllm, ["--from", "vllm", str(VLLM)]),
    ):
        with _quiet() as printed:
            assert main(["add-run", *source, "--root", str(root), "--recipe", str(recipe), "--write-recipe"]) == 0
        out[key] = (_stored(root, printed()), yaml.safe_load(recipe.read_text(encoding="utf-8")))
    return out


class _quiet:
    """stdout and stderr of an in-process `orv` call, kept from the test output (read back as printed())."""

    def __enter__(self) -> Callable[[], str]:
        import contextlib
        import io

        self._out, self._err = io.StringIO(), io.StringIO()
        self._stack = contextlib.ExitStack()
        self._stack.enter_context(contextlib.redirect_stdout(self._out))
        self._stack.enter_context(contextlib.redirect_stderr(self._err))
        return self._out.getvalue

    def __exit__(self, *exc: object) -> None:
        self._stack.close()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A registry on `main` (the catalog above, no recipes) and the contributor's branch `pr` off it."""
    root = _registry(tmp_path / "repo")
    (root / "README.md").write_text("# registry\n", encoding="utf-8")
    git(root, "init", "-q", "-b", "main")
    commit_all(root, "registry on main")
    git(root, "checkout", "-q", "-b", "pr")
    return root


def _pull_request(repo: Path, document: dict[str, Any], recipe: dict[str, Any]) -> tuple[int, list[Any], Any]:
    """Commit the run and its recipe on `pr`, then check as action.yml does: the exit code of `orv check
    --base main`, its error diagnostics, and the recipe's tier."""
    recipe = {**recipe, "runs": [store_run(repo, document)]}
    rel = write_recipe(repo, recipe)
    commit_all(repo, "a recipe and its run")
    with _quiet():
        code = main(["check", "--root", str(repo), "--base", "main"])
    errors = [d for d in check(repo).result.diagnostics if d.severity.value == "error"]
    analysis = analyse(str(repo))
    return code, errors, derive(analysis.snapshot, analysis.diagnostics)[rel]


def _refused(outcome: tuple[int, list[Any], Any], code: str, *words: str) -> None:
    exit_code, errors, _ = outcome
    assert exit_code == 1, errors
    assert code in {d.code for d in errors}, errors
    messages = [d.message for d in errors if d.code == code]
    assert any(all(word in message for word in words) for message in messages), messages


def _accepted(outcome: tuple[int, list[Any], Any], tier: str = "T2") -> Any:
    exit_code, errors, result = outcome
    assert exit_code == 0 and errors == [], errors
    assert result.tier == tier, result.reasons
    return result


# --------------------------------------------------------------------------- llama-bench: the GPUs it saw


def _llama(
    honest: dict[str, Any],
    *,
    gpu: str,
    count: int = 1,
    gpu_info: str = "",
    backends: str = "CUDA",
    quant: str = "f32",
    model_type: str | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    document, claimed = copy.deepcopy(honest["llama"][0]), honest["llama"][1]["claimed"]
    document["hardware"] = {"gpu": gpu, "count": count}
    document["quant"] = quant
    if gpu_info or backends != "CUDA":
        document["synthetic"].update(gpu_info=gpu_info, backends=backends)
    if model_type is not None:
        document["synthetic"]["model_type"] = model_type
    recipe = {
        "id": "tinyllama-test-row",
        "kind": "inference",
        "model": "tinyllama-test",
        "hardware": {"gpu": gpu, "count": count},
        "author": "ann",
        "measured": "2026-12-05",
        "software": {"engine": {"name": "llama.cpp", "version": BUILD}},
        "quant": quant,
        "serving": {"concurrency": 1},
        "workload": "llama-bench-tg128",
        "claimed": claimed,
    }
    return document, recipe


@pytest.mark.git
@pytest.mark.parametrize(
    ("gpu_info", "gpu", "words"),
    [
        # a box of two GPUs, one of them another kind, on a 1x RTX 3090 recipe
        (
            "NVIDIA GeForce RTX 5090, NVIDIA GeForce RTX 3090",
            "rtx-3090",
            ["synthetic.gpu_info", "`NVIDIA GeForce RTX 5090` is catalog GPU `rtx-5090`", "is `rtx-3090`"],
        ),
        # the 3090 Ti is another GPU: "3090" inside its name is resemblance
        (
            "NVIDIA GeForce RTX 3090 Ti",
            "rtx-3090",
            ["synthetic.gpu_info", "`NVIDIA GeForce RTX 3090 Ti`", "no catalog GPU's", "`NVIDIA GeForce RTX 3090`"],
        ),
        # the 300 W Max-Q card on the 600 W Workstation Edition's recipe (the Max-Q lists no device name yet)
        (
            "NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition",
            "rtx-pro-6000-blackwell",
            ["synthetic.gpu_info", "Max-Q Workstation Edition`", "`NVIDIA RTX PRO 6000 Blackwell Workstation Edition`"],
        ),
        # the previous generation's RTX 6000 on an RTX PRO 6000 Blackwell recipe
        (
            "NVIDIA RTX 6000 Ada Generation",
            "rtx-pro-6000-blackwell",
            ["synthetic.gpu_info", "`NVIDIA RTX 6000 Ada Generation`", "`rtx-pro-6000-blackwell`"],
        ),
    ],
    ids=["5090-and-3090-on-one-3090", "3090-ti-on-3090", "max-q-on-workstation", "6000-ada-on-pro-6000"],
)
def test_llama_bench_on_another_gpu_is_refused(
    repo: Path, honest: dict[str, Any], gpu_info: str, gpu: str, words: list[str]
) -> None:
    _refused(_pull_request(repo, *_llama(honest, gpu=gpu, gpu_info=gpu_info)), "ORV249", *words)


@pytest.mark.git
def test_two_3090s_do_not_back_one_3090(repo: Path, honest: dict[str, Any]) -> None:
    outcome = _pull_request(
        repo, *_llama(honest, gpu="rtx-3090", gpu_info="NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090")
    )
    _refused(outcome, "ORV249", "synthetic.gpu_info", "saw 2 × `rtx-3090`", "is 1 × `rtx-3090`")


@pytest.mark.git
@pytest.mark.parametrize(
    ("gpu_info", "gpu", "count"),
    [
        ("NVIDIA GeForce RTX 3090", "rtx-3090", 1),
        ("NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090", "rtx-3090", 2),
        ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "rtx-pro-6000-blackwell", 1),
    ],
    ids=["one-3090", "two-3090s", "pro-6000-workstation"],
)
def test_llama_bench_on_the_recipes_gpus_is_accepted(
    repo: Path, honest: dict[str, Any], gpu_info: str, gpu: str, count: int
) -> None:
    _accepted(_pull_request(repo, *_llama(honest, gpu=gpu, count=count, gpu_info=gpu_info)))


# --------------------------------------------------------------------------- llama-bench: the GGUF's quantisation


@pytest.mark.git
def test_a_q2_k_gguf_on_a_q4_k_m_recipe_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    """The real CPU output with only the file type llama-bench printed changed to a Q2_K file's."""
    document, recipe = _llama(
        honest, gpu="amd-epyc", backends="CPU", quant="q4_k_m", model_type="llama ?B Q2_K - Medium"
    )
    _refused(_pull_request(repo, document, recipe), "ORV228", "synthetic.model_type", "q2_k", "`q4_k_m`")


@pytest.mark.git
@pytest.mark.parametrize(
    ("model_type", "quant"),
    [("llama ?B Q4_K - Medium", "q4_k_m"), ("llama ?B all F32", "f32"), ("llama ?B IQ4_XS - 4.25 bpw", "iq4-xs")],
    ids=["q4_k_m", "f32-the-real-output", "iq4_xs-written-with-dashes"],
)
def test_a_gguf_of_the_recipes_quant_is_accepted(
    repo: Path, honest: dict[str, Any], model_type: str, quant: str
) -> None:
    document, recipe = _llama(honest, gpu="amd-epyc", backends="CPU", quant=quant, model_type=model_type)
    _accepted(_pull_request(repo, document, recipe))


# --------------------------------------------------------------------------- trtllm-bench: its report's setup


def _trt(
    honest: dict[str, Any],
    edit: Callable[[dict[str, Any]], None] = lambda d: None,
    *,
    quant: str = "fp8",
    checkpoint: str = "Qwen/Qwen3.8-27B",
    rid: str = "qwen3-8-27b-h100-trtllm-row",
) -> tuple[dict[str, Any], dict[str, Any]]:
    document, claimed = copy.deepcopy(honest["trt"][0]), honest["trt"][1]["claimed"]
    document["quant"] = quant
    document["checkpoint"] = checkpoint
    edit(document)
    recipe = yaml.safe_load(TRT_RECIPE)
    recipe.update(id=rid, quant=quant, checkpoint=checkpoint, claimed=claimed, hardware=dict(document["hardware"]))
    recipe["serving"] = {**recipe["serving"], "tp": 1, "pp": 1}  # as add-run --write-recipe records the report's
    del recipe["runs"]
    return document, recipe


@pytest.mark.git
def test_a_b200_report_on_an_h100_recipe_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    def on_b200(d: dict[str, Any]) -> None:
        d["reported"]["machine_name"] = "NVIDIA B200"

    _refused(
        _pull_request(repo, *_trt(honest, on_b200)),
        "ORV229",
        "reported.machine_name",
        "`NVIDIA B200` is catalog GPU `b200`",
        "is `h100`",
    )


@pytest.mark.git
def test_tp_2_on_world_size_1_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    def tp2(d: dict[str, Any]) -> None:
        d["reported"]["tp_size"] = 2

    _refused(_pull_request(repo, *_trt(honest, tp2)), "ORV260", "reported.world_size", "tp_size 2", "world_size 1")


@pytest.mark.git
def test_the_shipped_fp8_report_on_a_bf16_recipe_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    _refused(
        _pull_request(repo, *_trt(honest, quant="bf16", rid="qwen3-8-27b-h100-trtllm-bf16")),
        "ORV261",
        "reported.quantization",
        "FP8",
        "`bf16`",
    )


@pytest.mark.git
def test_a_trtllm_run_without_its_reports_setup_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    """Deleting the block is no way around the three checks above."""
    _refused(_pull_request(repo, *_trt(honest, lambda d: d.pop("reported"))), "ORV262", "reported")


@pytest.mark.git
def test_the_shipped_fp8_report_on_its_own_recipe_is_accepted(repo: Path, honest: dict[str, Any]) -> None:
    assert honest["trt"][0]["reported"]["machine_name"] == "NVIDIA H100 80GB HBM3"
    _accepted(_pull_request(repo, *_trt(honest)))


@pytest.mark.git
def test_an_unquantized_bfloat16_engine_on_a_bf16_recipe_is_accepted(repo: Path, honest: dict[str, Any]) -> None:
    def unquantized(d: dict[str, Any]) -> None:
        d["reported"].pop("quantization")
        d["reported"]["dtype"] = "bfloat16"
        d["reported"]["kv_cache_dtype"] = "bfloat16"

    document, recipe = _trt(honest, unquantized, quant="bf16", rid="qwen3-8-27b-h100-trtllm-bf16")
    exit_code, errors, _ = _pull_request(repo, document, recipe)
    assert exit_code == 0 and errors == [], errors


@pytest.mark.git
def test_a_quantized_kv_cache_on_a_bf16_recipe_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    """A review found `reported.kv_cache_dtype: FP8` stored but never compared: an unquantized engine with an
    FP8 KV cache backed a bf16 recipe at T2. Its twin is the unquantized engine above."""

    def fp8_kv(d: dict[str, Any]) -> None:
        d["reported"].pop("quantization")
        d["reported"]["dtype"] = "bfloat16"
        d["reported"]["kv_cache_dtype"] = "FP8"

    outcome = _pull_request(repo, *_trt(honest, fp8_kv, quant="bf16", rid="qwen3-8-27b-h100-trtllm-bf16"))
    _refused(outcome, "ORV261", "reported.kv_cache_dtype", "(FP8)", "`bf16`")


@pytest.mark.git
def test_a_report_stripped_of_its_quantization_and_dtype_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    """Deleting both optional fields from the FP8 run made it back a bf16 recipe at T2 (a review's find)."""

    def stripped(d: dict[str, Any]) -> None:
        d["reported"].pop("quantization")
        d["reported"].pop("dtype")

    outcome = _pull_request(repo, *_trt(honest, stripped, quant="bf16", rid="qwen3-8-27b-h100-trtllm-bf16"))
    _refused(outcome, "ORV261", "neither the engine's quantization nor its dtype")


# --------------------------------------------------------------------------- the checkpoint served


@pytest.mark.git
def test_another_models_checkpoint_of_the_same_family_is_refused(repo: Path, honest: dict[str, Any]) -> None:
    """The catalog lists the model's checkpoints: Qwen/Qwen3-14B is not one of them."""
    _refused(
        _pull_request(repo, *_trt(honest, checkpoint="Qwen/Qwen3-14B")),
        "ORV226",
        "`Qwen/Qwen3-14B`",
        "`qwen3.8-27b`",
    )


def _unlist_checkpoints_on_main(repo: Path) -> None:
    git(repo, "checkout", "-q", "main")
    models = repo / "catalog" / "models.yaml"
    data = yaml.safe_load(models.read_text(encoding="utf-8"))
    for key in ("checkpoints", "checkpoints_source"):
        data["models"]["qwen3.8-27b"].pop(key)
    models.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    commit_all(repo, "the model lists no checkpoints")
    git(repo, "checkout", "-q", "-B", "pr", "main")


@pytest.mark.git
def test_without_a_catalog_list_the_family_name_is_not_enough(repo: Path, honest: dict[str, Any]) -> None:
    _unlist_checkpoints_on_main(repo)
    _refused(
        _pull_request(repo, *_trt(honest, checkpoint="Qwen/Qwen3-14B")),
        "ORV226",
        "`Qwen/Qwen3-14B`",
        "does not mention catalog model `qwen3.8-27b`",
    )


@pytest.mark.git
def test_without_a_catalog_list_the_models_own_name_reaches_only_t1(repo: Path, honest: dict[str, Any]) -> None:
    _unlist_checkpoints_on_main(repo)
    result = _accepted(_pull_request(repo, *_trt(honest)), tier="T1")
    assert any("lists no `checkpoints`" in r and "`Qwen/Qwen3.8-27B`" in r for r in result.reasons), result.reasons


@pytest.mark.git
def test_a_listed_checkpoint_reaches_t2(repo: Path, honest: dict[str, Any]) -> None:
    _accepted(_pull_request(repo, *_trt(honest)))


@pytest.mark.git
@pytest.mark.parametrize(
    ("checkpoint", "refused"), [("Qwen/Qwen3-14B", True), ("Qwen/Qwen3.8-27B-FP8", False)], ids=["qwen3-14b", "its-own"]
)
def test_a_vllm_run_serving_another_qwen_is_refused(
    repo: Path, honest: dict[str, Any], checkpoint: str, refused: bool
) -> None:
    """vLLM's `model_id` (the run's checkpoint) on the qwen3.8-27b recipe it was measured for; the twin is the
    real output as vLLM wrote it."""
    document, recipe = copy.deepcopy(honest["vllm"][0]), dict(honest["vllm"][1])
    document["checkpoint"] = checkpoint
    del recipe["runs"]
    outcome = _pull_request(repo, document, recipe)
    if refused:
        _refused(outcome, "ORV226", "`Qwen/Qwen3-14B`", "not a checkpoint of catalog model `qwen3.8-27b`")
    else:
        _accepted(outcome)


@pytest.mark.git
@pytest.mark.parametrize("checkpoint", ["attacker/Qwen3.8-27B", "someone/Qwen3.8-27B-FP8"])
def test_another_owners_repository_of_the_same_name_is_refused(
    repo: Path, honest: dict[str, Any], checkpoint: str
) -> None:
    """A review found a Hub id of another owner passing by its last path part; a Hub id names exactly its
    repository (its honest twin, the listed repository, is test_a_listed_checkpoint_reaches_t2)."""
    _refused(_pull_request(repo, *_trt(honest, checkpoint=checkpoint)), "ORV226", f"`{checkpoint}`", "`qwen3.8-27b`")

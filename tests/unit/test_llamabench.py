"""llama.cpp's llama-bench as evidence: real `-o json`/`-o jsonl` output (tests/fixtures/tools/llamabench,
made by make_fixture.sh from llama.cpp b11312 on a tiny GGUF) recomputed, pinned, identified, held to its
workload, climbing to T2, and ranked only against the same llama-bench test."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.conftest import fuzz_examples
from tests.testing.llamabench import (
    ALL,
    BOTH_JSON,
    BOTH_JSONL,
    BUILD,
    COMMIT,
    CPU_HOST,
    DEEP,
    THREE_REPS,
    add_llama_catalog,
    bench_tests,
)
from tests.testing.registry import VLLM, make_registry
from tests.unit.test_fuzz_inputs import BUDGET, _add_run, odd_values
from validator.adapters import Source, convert, metadata, recomputed
from validator.adapters.detect import detect
from validator.boards.build import GitStamp, build
from validator.cli import main
from validator.engine.evaluate import analyse
from validator.errors import UsageError
from validator.evidence.tiers import derive
from validator.registry.recipe_edits import record_run_in_recipe
from validator.registry.store import store_run_document
from validator.science import llamabench as science
from validator.stacks.reproduce import reproduce

# --------------------------------------------------------------------------- golden


@pytest.mark.parametrize("path", ALL, ids=lambda p: p.name)
def test_recomputed_figures_are_llama_benchs_own(path: Path) -> None:
    """avg_ts (the mean of per-repetition rates) and stddev_ts (n − 1) from samples_ns, printed as llama-bench
    prints them (%f), are the file's own text; so within 1e-9 relative of the file's numbers."""
    for printed, test in zip(bench_tests(path, floats_as_text=True), bench_tests(path)):
        ns, n_tokens = test["samples_ns"], test["n_prompt"] + test["n_gen"]
        rates = science.rates(ns, n_tokens)
        assert f"{science.avg(rates):.6f}" == printed["avg_ts"]
        assert f"{science.stdev(rates):.6f}" == printed["stddev_ts"]
        assert math.isclose(float(f"{science.avg(rates):.6f}"), test["avg_ts"], rel_tol=1e-9)
        assert science.avg_ns(ns) == test["avg_ns"]
        assert [float(f"{r:.6g}") for r in rates] == test["samples_ts"]
        # the figure is not a ratio of sums: with unequal repetitions the two differ
        assert len(set(ns)) == 1 or science.avg(rates) != n_tokens * len(ns) * 1e9 / sum(ns)


def test_the_fixtures_are_llama_bench_b11312_on_the_tiny_model() -> None:
    for path in ALL:
        for test in bench_tests(path):
            assert (test["build_number"], test["build_commit"]) == (11312, COMMIT)
            assert test["model_filename"] == "tinyllama-test-f32.gguf" and test["backends"] == "CPU"
    assert [(t["n_prompt"], t["n_gen"], t["n_depth"], len(t["samples_ns"])) for t in bench_tests(BOTH_JSON)] == [
        (512, 0, 0, 5),
        (0, 128, 0, 5),
    ]


def test_nanoseconds_survive_the_run_file() -> None:
    """A run keeps each repetition as e2e_ms = ns / 1e6; the nanoseconds come back exactly."""
    for ns in [1, 999_999, 1_000_001, 123_456_789, 987_654_321_987, 10**12 + 7] + [
        t for p in ALL for test in bench_tests(p) for t in test["samples_ns"]
    ]:
        assert science.ms_to_ns(science.ns_to_ms(ns)) == ns


@pytest.mark.parametrize("path", (BOTH_JSON, BOTH_JSONL, THREE_REPS), ids=lambda p: p.name)
def test_detected_without_from(path: Path) -> None:
    found = detect(path.read_bytes())
    assert found is not None and found.fmt == "llama-bench"


def test_other_formats_are_not_taken_for_llama_bench() -> None:
    assert detect(VLLM.read_bytes()).fmt == "vllm"
    assert detect(b"[1, 2, 3]") is None and detect(b'[{"build_commit": "x"}]') is None


# --------------------------------------------------------------------------- a registry with llama.cpp recipes


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    """The golden cases' catalog, plus the tiny model the fixtures ran, the CPU host they ran on and the catalog's
    llama-bench workloads."""
    return add_llama_catalog(make_registry(tmp_path / "registry"))


def orv(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def new_recipe(
    capsys: pytest.CaptureFixture[str],
    root: Path,
    workload: str,
    *,
    engine: str = f"llama.cpp@{BUILD}",
    model: str = "tinyllama-test",
    rid: str | None = None,
    gpu: str = CPU_HOST,
) -> str:
    args = [
        "new",
        "inference",
        "--root",
        str(root),
        "--model",
        model,
        "--gpu",
        gpu,
        "--engine",
        engine,
        "--quant",
        "f32",
        "--workload",
        workload,
        "--author",
        "ann",
        "--measured",
        "2026-12-05",
        "--no-interactive",
    ]
    code, out, err = orv(capsys, *args, *(["--id", rid] if rid else []))
    assert code == 0, err
    return str(root / out.strip())


def add_run(
    capsys: pytest.CaptureFixture[str], root: Path, fixture: Path, recipe: str, *extra: str
) -> tuple[int, str, str]:
    return orv(capsys, "add-run", str(fixture), "--root", str(root), "--recipe", recipe, "--write-recipe", *extra)


def store_unjudged(root: Path, fixture: Path, recipe: str) -> str:
    """What add-run stored before it judged (issue 52): the converted run, listed in its recipe, for a test of
    what `orv check` then says (add-run itself refuses such a run; its own tests say so)."""
    meta = metadata("llama-bench", str(root), recipe, {})
    doc = convert("llama-bench", Source(fixture.name, fixture.read_bytes()), meta).document
    ref = f"sha256:{store_run_document(str(root), doc).digest}"
    record_run_in_recipe(recipe, ref, recomputed(doc, meta).claim())
    return ref


def errors(root: Path) -> list[Any]:
    analysis = analyse(str(root))
    return [d for d in analysis.diagnostics if d.severity.value == "error"]


def tier_of(root: Path, recipe: str) -> Any:
    analysis = analyse(str(root))
    rel = str(Path(recipe).relative_to(root))
    return derive(analysis.snapshot, analysis.diagnostics)[rel]


def test_a_llama_cpp_recipe_reaches_t2_from_llama_bench(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    code, out, err = add_run(capsys, registry, BOTH_JSON, recipe)  # no --from: detected; the workload picks tg128
    assert code == 0, err
    assert "looks like `llama-bench -o json`" in err and "llama-bench test tg128, 5 repetitions" in err
    assert "recomputed from 5 llama-bench repetitions: decode tok/s per stream" in err
    tg128 = bench_tests(BOTH_JSON)[1]
    data = yaml.safe_load(Path(recipe).read_text(encoding="utf-8"))
    assert data["claimed"] == {"decode_tok_s": float(f"{tg128['avg_ts']:.4g}")}
    run = json.loads((registry / "runs" / out.strip()[7:9] / f"{out.strip()[7:]}.json").read_text())
    assert run["tool"] == {"name": "llama-bench", "version": BUILD, "commit": COMMIT, "format": "llama-bench-json"}
    assert run["synthetic"]["test"] == "tg" and run["synthetic"]["n_gen"] == 128
    assert [science.ms_to_ns(s["e2e_ms"]) for s in run["samples"]] == tg128["samples_ns"]
    assert errors(registry) == []
    result = tier_of(registry, recipe)
    assert result.tier == "T2", result.reasons


def test_a_pp_test_backs_the_prefill_claim(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-pp512")
    code, _, err = add_run(capsys, registry, BOTH_JSONL, recipe)
    assert code == 0, err
    pp512 = bench_tests(BOTH_JSONL)[0]
    assert yaml.safe_load(Path(recipe).read_text())["claimed"] == {"prefill_tok_s": float(f"{pp512['avg_ts']:.4g}")}
    assert errors(registry) == [] and tier_of(registry, recipe).tier == "T2"


def test_llama_bench_ranks_only_against_the_same_test(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two tg128 recipes rank against each other; a served-workload recipe of the same model × GPU, and the
    pp512 recipe, each rank in their own group."""
    tg_a = new_recipe(capsys, registry, "llama-bench-tg128", rid="tiny-tg128-a")
    tg_b = new_recipe(capsys, registry, "llama-bench-tg128", rid="tiny-tg128-b")
    pp = new_recipe(capsys, registry, "llama-bench-pp512", rid="tiny-pp512")
    served = new_recipe(capsys, registry, "random-512-64", engine="vllm@0.11.0", rid="tiny-served")
    for recipe, fixture in ((tg_a, BOTH_JSON), (pp, BOTH_JSON)):
        assert add_run(capsys, registry, fixture, recipe)[0] == 0
    store_unjudged(registry, THREE_REPS, tg_b)  # 3 repetitions: add-run refuses it (ORV242), the boards rank it
    # the served recipe: a summary-only run document (T1), on the measured board beside the llama-bench rows
    served_run = {
        "kind": "inference",
        "tool": {"name": "vllm", "version": "0.11.0"},
        "model": "tinyllama-test",
        "hardware": {"gpu": CPU_HOST, "count": 1},
        "software": {"engine": {"name": "vllm", "version": "0.11.0"}},
        "quant": "f32",
        "serving": {"concurrency": 1},
        "measured_at": "2026-12-05T10:00:00",
        "measured_by": "ann",
        "summary": {"decode_tok_s": 1e6},
    }
    doc = Path(served).parent.parent.parent.parent / "served.json"
    doc.write_text(json.dumps(served_run), encoding="utf-8")
    code, out, err = orv(capsys, "add-run", str(doc), "--root", str(registry))
    assert code == 0, err
    text = Path(served).read_text(encoding="utf-8").replace("runs: []", f'runs: ["{out.strip()}"]')
    Path(served).write_text(text.replace("claimed: {}", "claimed: {decode_tok_s: 1000000}"), encoding="utf-8")
    analysis = analyse(str(registry))
    board = build(analysis.snapshot, derive(analysis.snapshot, analysis.diagnostics), GitStamp())["boards"]
    rows = {row["recipe"]: row for row in board["measured"]}
    assert set(rows) == {"tiny-tg128-a", "tiny-tg128-b", "tiny-pp512", "tiny-served"}
    assert {r["workload"] for r in rows.values()} == {"llama-bench-tg128", "llama-bench-pp512", "random-512-64"}
    assert rows["tiny-served"]["rank"] == 1 and rows["tiny-served"]["rank_of"] == 1  # the fastest figure, alone
    assert rows["tiny-pp512"]["rank"] == 1 and rows["tiny-pp512"]["rank_of"] == 1
    assert sorted((rows[r]["rank"], rows[r]["rank_of"]) for r in ("tiny-tg128-a", "tiny-tg128-b")) == [(1, 2), (2, 2)]


# --------------------------------------------------------------------------- refusals


def test_a_tampered_summary_is_refused(registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cheapest forgery keeps the samples and raises the figure people read."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    tests = bench_tests(BOTH_JSON)
    tests[1]["avg_ts"] = round(tests[1]["avg_ts"] * 1.1, 6)
    forged = tmp_path / "forged.json"
    forged.write_text(json.dumps(tests, indent=2), encoding="utf-8")
    code, out, err = add_run(capsys, registry, forged, recipe)
    assert code == 1 and out == ""
    assert "ORV109" in err and "the file's own `avg_ts`" in err and "samples_ns give" in err


def test_scaled_samples_with_their_rates_left_are_refused(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The next cheapest: faster samples_ns and a matching avg_ts, but llama-bench's printed samples_ts left."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    tests = bench_tests(BOTH_JSON)
    test = tests[1]
    test["samples_ns"] = [t // 2 for t in test["samples_ns"]]
    rates = science.rates(test["samples_ns"], 128)
    test["avg_ts"], test["stddev_ts"] = round(science.avg(rates), 6), round(science.stdev(rates), 6)
    test["avg_ns"] = science.avg_ns(test["samples_ns"])
    forged = tmp_path / "forged.jsonl"
    forged.write_text("\n".join(json.dumps(t) for t in tests) + "\n", encoding="utf-8")
    code, _, err = add_run(capsys, registry, forged, recipe)
    assert code == 1 and "`samples_ts` does not follow from `samples_ns`" in err


@pytest.mark.parametrize("path", (BOTH_JSON, BOTH_JSONL), ids=lambda p: p.name)
def test_a_truncated_file_is_one_line_error(
    registry: Path, tmp_path: Path, path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    raw = path.read_bytes()
    cut = tmp_path / path.name
    cut.write_bytes(raw[: len(raw) * 2 // 3])
    code, out, err = add_run(capsys, registry, cut, recipe, "--from", "llama-bench")
    assert code == 1 and out == ""
    findings = [line for line in err.splitlines() if "ORV1" in line]
    assert len(findings) == 1, err
    assert "Traceback" not in err


def test_a_wrong_model_is_an_identity_error(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tiny GGUF attached to a 27B recipe: its name and its parameter count both say so."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128", model="qwen3.8-27b")
    code, out, err = add_run(capsys, registry, BOTH_JSON, recipe)
    assert code == 1 and out == ""
    assert err.count("ORV226") == 2, err
    assert "does not mention catalog model `qwen3.8-27b`" in err and "catalog model `qwen3.8-27b` has 27B" in err


def test_a_gguf_of_another_size_in_the_same_family_is_refused(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A renamed file passes the name check; llama.cpp's exact parameter count still tells the model."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    tests = bench_tests(BOTH_JSON)
    for test in tests:
        test["model_n_params"] *= 4
    forged = tmp_path / "bigger.json"
    forged.write_text(json.dumps(tests), encoding="utf-8")
    code, _, err = add_run(capsys, registry, forged, recipe)
    assert code == 1 and err.count("ORV226") == 1 and "parameters; catalog model `tinyllama-test`" in err


def test_a_gpu_llama_bench_did_not_see_is_refused(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128", gpu="rtx-3090")
    tests = bench_tests(BOTH_JSON)
    for test in tests:
        test["gpu_info"], test["backends"] = "NVIDIA GeForce RTX 4090", "CUDA"
    other = tmp_path / "4090.json"
    other.write_text(json.dumps(tests), encoding="utf-8")
    code, _, err = add_run(capsys, registry, other, recipe)
    assert (
        code == 1 and "ORV249" in err and "names the device `NVIDIA GeForce RTX 4090`, which is no catalog GPU's" in err
    )
    for test in tests:
        test["gpu_info"], test["backends"] = "", "CUDA"  # the device erased, the backend left: edited
    other.write_text(json.dumps(tests), encoding="utf-8")
    code, _, err = add_run(capsys, registry, other, recipe)
    assert code == 1 and "ORV249" in err and "used the CUDA backend but names no GPU" in err
    for test in tests:
        test["gpu_info"] = "NVIDIA GeForce RTX 3090"
    other.write_text(json.dumps(tests), encoding="utf-8")
    code, out, err = add_run(capsys, registry, other, recipe)
    assert code == 0, err
    assert errors(registry) == []
    # the same run moved to an H100 recipe: `orv check` says which GPU llama-bench saw
    run = registry / "runs" / out.strip()[7:9] / f"{out.strip()[7:]}.json"
    document = json.loads(run.read_text())
    document["hardware"]["gpu"] = "h100"
    stored = registry / "elsewhere.json"
    stored.write_text(json.dumps(document), encoding="utf-8")
    code, moved, err = orv(capsys, "add-run", str(stored), "--root", str(registry))
    assert code == 0, err
    stored.unlink()
    found = [d for d in errors(registry) if d.code == "ORV249"]
    assert len(found) == 1 and "the run's GPU (its recipe's) is `h100`" in found[0].message
    assert "`NVIDIA GeForce RTX 3090` is catalog GPU `rtx-3090`" in found[0].message


def _edited(tmp_path: Path, name: str, gpu_info: str, backends: str) -> Path:
    """The real output with the devices llama-bench names replaced (what a GPU build would have written, or a
    GPU build's output with its GPU erased)."""
    tests = bench_tests(BOTH_JSON)
    for test in tests:
        test["gpu_info"], test["backends"] = gpu_info, backends
    path = tmp_path / name
    path.write_text(json.dumps(tests), encoding="utf-8")
    return path


def _stored_on(capsys: pytest.CaptureFixture[str], registry: Path, added: str, gpu: str) -> None:
    """The run add-run stored, copied as a run document that states another hardware id (what a hand edit of a
    run file does): add-run takes a run document as it is, `orv check` judges it."""
    document = json.loads((registry / "runs" / added[7:9] / f"{added[7:]}.json").read_text())
    document["hardware"]["gpu"] = gpu
    stored = registry / "moved.json"
    stored.write_text(json.dumps(document), encoding="utf-8")
    code, _, err = orv(capsys, "add-run", str(stored), "--root", str(registry))
    assert code == 0, err
    stored.unlink()


def test_a_gpu_run_with_its_gpu_erased_cannot_back_a_gpu_recipe(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cheapest forgery of a GPU figure: an RTX 5090's output with `gpu_info` blanked and `backends` set to
    CPU, attached to an RTX 3090 recipe. The samples and figure are kept, so only the devices can tell; a run
    that names no GPU is no evidence for a GPU."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128", gpu="rtx-3090")
    forged = _edited(tmp_path, "5090-erased.json", "", "CPU")
    code, out, err = add_run(capsys, registry, forged, recipe)
    assert code == 1 and out == ""
    assert "ORV249" in err and "names no GPU and used no GPU backend (backends: CPU)" in err, err
    assert "`rtx-3090` (NVIDIA GeForce RTX 3090) is a GPU" in err
    assert "`device: cpu`" in err and "rerun llama-bench built with the GPU's backend" in err
    # the blanked device alone (a GPU backend left) and the backend alone (a GPU left named) are refused too
    for gpu_info, backends, words in (
        ("", "CUDA", "used the CUDA backend but names no GPU"),
        ("NVIDIA GeForce RTX 3090", "CPU", "names `NVIDIA GeForce RTX 3090` but used no GPU backend"),
    ):
        code, _, err = add_run(capsys, registry, _edited(tmp_path, "half.json", gpu_info, backends), recipe)
        assert code == 1 and "ORV249" in err and words in err, err
    # stored past add-run (a run document): `orv check` finds it
    Path(recipe).unlink()
    cpu_recipe = new_recipe(capsys, registry, "llama-bench-tg128", rid="tiny-on-the-cpu")
    code, added, err = add_run(capsys, registry, forged, cpu_recipe)
    assert code == 0, err
    assert errors(registry) == []
    _stored_on(capsys, registry, added.strip(), "rtx-3090")
    found = [d for d in errors(registry) if d.code == "ORV249"]
    assert len(found) == 1 and "used no GPU backend" in found[0].message and "`rtx-3090`" in found[0].message


def test_the_real_cpu_output_cannot_back_a_gpu_recipe(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """llama.cpp's CPU build ran on an EPYC: its figure says nothing about an RTX 3090 or an H100."""
    for gpu in ("rtx-3090", "h100"):
        recipe = new_recipe(capsys, registry, "llama-bench-tg128", gpu=gpu)
        code, out, err = add_run(capsys, registry, BOTH_JSON, recipe)
        assert code == 1 and out == "", err
        assert "ORV249" in err and f"the run's hardware (its recipe's) `{gpu}`" in err
        Path(recipe).unlink()
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")  # on the CPU host: taken
    code, added, err = add_run(capsys, registry, BOTH_JSON, recipe)
    assert code == 0, err
    assert "a CPU-only run backs only a CPU host's recipe" in err
    assert errors(registry) == []
    _stored_on(capsys, registry, added.strip(), "h100")
    found = [d for d in errors(registry) if d.code == "ORV249"]
    assert len(found) == 1 and "names no GPU and used no GPU backend" in found[0].message


def test_a_gpu_run_cannot_back_a_cpu_recipe(registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The converse: a figure measured on a GPU is not a CPU host's."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")  # on the CPU host
    for gpu_info, backends in (
        ("NVIDIA GeForce RTX 5090", "CUDA"),
        ("AMD Radeon AI PRO R9700", "Vulkan"),
        ("NVIDIA GeForce RTX 5090", "CPU"),
    ):  # a GPU named, whatever the backend says
        code, out, err = add_run(capsys, registry, _edited(tmp_path, "gpu.json", gpu_info, backends), recipe)
        assert code == 1 and out == "", err
        assert "ORV249" in err and f"`{gpu_info}`" in err and f"`{CPU_HOST}` (AMD EPYC) is a CPU host" in err
        assert "attach the run to the recipe of the GPU it ran on" in err
    Path(recipe).unlink()
    gpu_recipe = new_recipe(capsys, registry, "llama-bench-tg128", gpu="rtx-3090", rid="tiny-on-the-3090")
    code, added, err = add_run(
        capsys, registry, _edited(tmp_path, "3090.json", "NVIDIA GeForce RTX 3090", "CUDA"), gpu_recipe
    )
    assert code == 0, err
    assert errors(registry) == []
    _stored_on(capsys, registry, added.strip(), CPU_HOST)
    found = [d for d in errors(registry) if d.code == "ORV249"]
    assert len(found) == 1 and "used the CUDA backend on `NVIDIA GeForce RTX 3090`" in found[0].message


def test_a_cpu_hosts_decode_is_bound_by_its_memory_bandwidth(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """ORV512 holds on a CPU host as on a GPU: its `hbm_tb_s` is the host's memory bandwidth."""
    recipe = Path(new_recipe(capsys, registry, "llama-bench-tg128"))
    # 0.4608 TB/s ÷ (139,584 weights × 4 bytes × 0.75 read) ≈ 1.1M tok/s
    recipe.write_text(recipe.read_text().replace("claimed: {}", "claimed: {decode_tok_s: 2000000}"))
    found = [d for d in errors(registry) if d.code == "ORV512"]
    assert len(found) == 1 and "1 × 0.4608 TB/s" in found[0].message, found
    recipe.write_text(recipe.read_text().replace("decode_tok_s: 2000000", "decode_tok_s: 1000000"))
    assert [d for d in errors(registry) if d.code == "ORV512"] == []


def test_a_recipe_pinned_to_another_build_is_refused(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128", engine="llama.cpp@b11000")
    code, out, err = add_run(capsys, registry, BOTH_JSON, recipe)
    assert code == 1 and out == ""
    assert "ORV248" in err and "pins llama.cpp b11000, the llama-bench output was built from b11312" in err


def test_a_pin_edited_after_the_run_is_a_check_finding(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    assert add_run(capsys, registry, BOTH_JSON, recipe)[0] == 0
    path = Path(recipe)
    written = f'engine: {{name: llama.cpp, version: "{BUILD}"}}'
    assert written in path.read_text()

    def pinned(engine: str) -> list[Any]:
        path.write_text(
            path.read_text().replace(written, engine)
            if written in path.read_text()
            else re.sub(r"engine: \{.*\}", engine, path.read_text()),
            encoding="utf-8",
        )
        return [d for d in errors(registry) if d.code == "ORV248"]

    found = pinned('engine: {name: llama.cpp, version: "b11000"}')
    assert (
        len(found) == 1
        and "pins llama.cpp b11000, the llama-bench output was built from b11312 (commit 0c1e57098)" in found[0].message
    )
    # the commit agrees in its short or full form; another commit of the same tag name is refused
    assert (
        pinned(f'engine: {{name: llama.cpp, version: "{BUILD}", commit: 0c1e57098bba43ac29e6e3b677cdceebdd22334f}}')
        == []
    )
    assert len(pinned(f'engine: {{name: llama.cpp, version: "{BUILD}", commit: 1234567aa}}')) == 1
    found = pinned('engine: {name: vllm, version: "0.11.0"}')
    assert len(found) == 1 and "the recipe's engine is vllm, but llama-bench measures llama.cpp" in found[0].message


def test_a_tg128_run_on_a_pp512_recipe_is_refused(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-pp512")
    code, out, err = add_run(capsys, registry, THREE_REPS, recipe)
    assert code == 1 and out == ""
    assert "ORV247" in err and "n_prompt 512, n_gen 0, n_depth 0; the file holds tg128" in err


def test_a_run_moved_to_another_test_is_a_check_finding(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    assert add_run(capsys, registry, BOTH_JSON, recipe)[0] == 0
    path = Path(recipe)
    path.write_text(path.read_text().replace("workload: llama-bench-tg128", "workload: llama-bench-pp512"))
    found = [d for d in errors(registry) if d.code == "ORV247"]
    assert len(found) == 1
    assert "n_prompt 0 (workload: 512), n_gen 128 (workload: 0)" in found[0].message
    assert tier_of(registry, recipe).tier == "T1"
    path.write_text(path.read_text().replace("workload: llama-bench-pp512", "workload: llama-bench-tg32-d256"))
    assert (
        "n_gen 128 (workload: 32), n_depth 0 (workload: 256)"
        in next(d for d in errors(registry) if d.code == "ORV247").message
    )


def test_the_depth_is_part_of_the_test(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg32-d256")
    assert add_run(capsys, registry, DEEP, recipe)[0] == 0
    assert errors(registry) == [] and tier_of(registry, recipe).tier == "T2"


def test_too_few_repetitions_are_a_finding(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    code, _, err = add_run(capsys, registry, THREE_REPS, recipe)  # refused before it is stored (issue 52)
    assert code == 1 and "ORV242 error" in err and "kept 3 llama-bench repetition(s)" in err
    assert not list((registry / "runs").rglob("*.json"))
    store_unjudged(registry, THREE_REPS, recipe)  # stored past add-run, `orv check` says the same
    found = [d for d in errors(registry) if d.code == "ORV242"]
    assert (
        len(found) == 1
        and "kept 3 llama-bench repetition(s)" in found[0].message
        and "needs at least 5" in found[0].message
    )
    assert tier_of(registry, recipe).tier == "T1"


def test_llama_bench_and_served_workloads_never_back_each_other(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    served = new_recipe(capsys, registry, "random-512-64", engine=f"llama.cpp@{BUILD}", rid="tiny-served-llama")
    code, _, err = add_run(capsys, registry, THREE_REPS, served)  # one test in the file: converted, then judged
    assert code == 1 and err.count("ORV247 error") == 1 and "workload `random-512-64` is a served benchmark" in err
    store_unjudged(registry, THREE_REPS, served)  # and `orv check` says the same of it stored
    found = [d for d in errors(registry) if d.code == "ORV247"]
    assert len(found) == 1 and "workload `random-512-64` is a served benchmark" in found[0].message


def test_a_file_with_two_tests_needs_a_choice(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = orv(
        capsys,
        "add-run",
        str(BOTH_JSON),
        "--root",
        str(registry),
        "--from",
        "llama-bench",
        "--model",
        "tinyllama-test",
        "--gpu",
        CPU_HOST,
        "--gpus",
        "1",
        "--quant",
        "f32",
    )
    assert code == 1 and "holds 2 llama-bench tests (pp512, tg128)" in err


def test_reproduce_prints_the_llama_bench_command(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    lines = reproduce(str(registry), recipe).lines
    assert "git clone https://github.com/ggml-org/llama.cpp llama.cpp && git -C llama.cpp checkout b11312" in lines
    assert any(
        line.startswith(
            "llama.cpp/build/bin/llama-bench -m '<the GGUF file of tinyllama-test>' -p 0 -n 128 "
            "-d 0 -r 10 -o json > llama-bench.json"
        )
        for line in lines
    ), lines
    assert any(line.startswith("orv add-run llama-bench.json --from llama-bench --recipe") for line in lines)


def test_reproduce_builds_for_the_recipes_device(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A CPU host's recipe is told to build without a GPU backend (a GPU backend's run is refused for it,
    ORV249); a GPU's recipe is told to add its backend (a CPU-only run is refused for it)."""

    def build(gpu: str) -> str:
        recipe = new_recipe(capsys, registry, "llama-bench-tg128", gpu=gpu, rid=f"tiny-on-{gpu}")
        return next(line for line in reproduce(str(registry), recipe).lines if line.startswith("cmake -S"))

    on_cpu, on_gpu = build(CPU_HOST), build("rtx-3090")
    assert "CPU-only build" in on_cpu and "GGML_CUDA" not in on_cpu
    assert "add your GPU backend: -DGGML_CUDA=ON" in on_gpu and "CPU-only" not in on_gpu


# --------------------------------------------------------------------------- any input: a run or a finding


@st.composite
def mutated_bench(draw: st.DrawFn) -> bytes:
    """The real output with a few values replaced by odd ones or bombs, as -o json or -o jsonl, sometimes cut."""
    tests = bench_tests(BOTH_JSON)
    draw(odd_values(tests, 1))
    text = json.dumps(tests, indent=2) if draw(st.booleans()) else "\n".join(json.dumps(t) for t in tests) + "\n"
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text.encode("utf-8", "surrogatepass")


@pytest.fixture(scope="module")
def fuzz_registry(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = add_llama_catalog(make_registry(tmp_path_factory.mktemp("fuzz") / "registry"))
    recipe = tmp_path_factory.mktemp("recipe") / "tinyllama-test-amd-epyc-llama-cpp-f32-llama-bench-tg128-c1.yaml"
    recipe.write_text(
        f"""\
id: tinyllama-test-amd-epyc-llama-cpp-f32-llama-bench-tg128-c1
kind: inference
model: tinyllama-test
hardware: {{gpu: {CPU_HOST}, count: 1}}
author: ann
measured: "2026-12-05"
software:
  engine: {{name: llama.cpp, version: "{BUILD}"}}
quant: f32
serving: {{concurrency: 1}}
workload: llama-bench-tg128
claimed: {{}}
runs: []
""",
        encoding="utf-8",
    )
    return root, recipe


@settings(max_examples=fuzz_examples(40), **BUDGET)
@given(raw=st.one_of(mutated_bench(), st.binary(max_size=300)), detected=st.booleans())
def test_any_llama_bench_output_gives_a_run_or_a_finding(
    tmp_path_factory: pytest.TempPathFactory, fuzz_registry: tuple[Path, Path], raw: bytes, detected: bool
) -> None:
    root, recipe = fuzz_registry
    source = tmp_path_factory.mktemp("bench") / "llama-bench.json"
    source.write_bytes(raw)
    try:
        _add_run(root, source, None if detected else "llama-bench", recipe)  # type: ignore[arg-type]
    except UsageError:
        assert detected  # not recognised as llama-bench output: add-run names the --from it needs


@pytest.mark.parametrize(
    "change, code, words",
    [
        ({"build_number": 0, "build_commit": "unknown"}, "ORV405", "llama-bench does not know its build"),
        ({"n_prompt": 512}, "ORV109", "is a -pg test"),
        ({"samples_ns": []}, "ORV104", "`samples_ns` of test"),
        ({"samples_ns": None}, "ORV104", "`samples_ns` of test"),
        ({"model_n_params": 0}, "ORV104", "`model_n_params` of test"),
    ],
    ids=["no-build", "pg", "no-samples", "null-samples", "no-params"],
)
def test_what_cannot_be_evidence_is_refused(
    registry: Path, tmp_path: Path, change: dict[str, Any], code: str, words: str, capsys: pytest.CaptureFixture[str]
) -> None:
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    tests = [t for t in bench_tests(BOTH_JSON) if t["n_gen"]]
    tests[0].update(change)
    source = tmp_path / "one.json"
    source.write_text(json.dumps(tests), encoding="utf-8")
    done, out, err = orv(
        capsys,
        "add-run",
        str(source),
        "--root",
        str(registry),
        "--recipe",
        recipe,
        "--from",
        "llama-bench",
        "--record",
        "1",
    )
    assert done == 1 and out == "" and code in err and words in err, err


def test_a_hand_written_run_cannot_mislabel_its_test() -> None:
    """A run document says which test it is; the figure is recomputed only when the counts agree with it."""
    tg = {"tool": "llama-bench", "test": "tg", "n_prompt": 0, "n_gen": 128, "n_depth": 0}
    samples = [{"prompt_tokens": 0, "output_tokens": 128, "ttft_ms": 0.0, "e2e_ms": 100.0}] * 5
    assert science.facts(samples, tg).headline == {"decode_tok_s": 1280.0}
    assert science.facts(samples, {**tg, "test": "pp"}).headline == {}  # a decode figure passed off as prefill
    pp_counts = [{**s, "prompt_tokens": 512, "output_tokens": 0} for s in samples]
    assert science.facts(pp_counts, {**tg, "n_prompt": 512, "n_gen": 0}).headline == {}  # labelled tg, counts pp
    assert science.facts(pp_counts, tg).headline == {}  # samples that are not the stated test


def test_a_device_the_catalog_does_not_know_is_a_finding(registry: Path) -> None:
    """`device` is gpu or cpu; anything else is the catalog's schema error, never taken as a GPU."""
    path = registry / "catalog" / "hardware.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("device: cpu", "device: tpu"), encoding="utf-8")
    found = [d for d in errors(registry) if d.path == "catalog/hardware.yaml"]
    assert found and "tpu" in " ".join(d.message for d in found), found


def test_orv_wanted_reproduces_a_llama_bench_recipe_with_llama_bench(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A llama-bench test is its own workload: only llama-bench output reproduces it, so the command `orv wanted`
    gives for its reproduction reads llama-bench (not a served benchmark's output)."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128")
    code, _, err = add_run(capsys, registry, BOTH_JSON, recipe)
    assert code == 0, err
    code, out, err = orv(capsys, "wanted", "--kind", "inference", "--format", "json", "--root", str(registry))
    assert code == 0, err
    rel = str(Path(recipe).relative_to(registry))
    (repro,) = [r for r in json.loads(out)["reproductions"] if r["recipe"] == Path(recipe).stem]
    assert repro["command"] == f"orv add-run --from llama-bench OUTPUT --recipe {rel} --sign-with KEY"


def test_every_reason_to_refuse_is_said_in_one_answer(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The tiny CPU run on a recipe of another model on a GPU: the model it loaded (ORV226), the CPU it ran on
    (ORV249) and the figure no H100 reaches for that model (ORV512), together, and nothing stored (issue 52).
    The honest twin, the same file on the CPU host's recipe, is stored (test_the_llama_cpp_journey_with_llama_bench)."""
    recipe = new_recipe(capsys, registry, "llama-bench-tg128", model="qwen3.8-27b", gpu="h100")
    before = Path(recipe).read_bytes()
    code, out, err = add_run(capsys, registry, BOTH_JSON, recipe)
    assert code == 1 and out == "" and "nothing was stored" in err
    assert {"ORV226 error", "ORV249 error", "ORV512 error"} <= set(re.findall(r"ORV\d+ error", err))
    assert Path(recipe).read_bytes() == before and not list((registry / "runs").rglob("*.json"))

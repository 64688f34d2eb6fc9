"""Protocols (issue 28, SPEC §2): recipes name a workload, runs prove it from their own samples, tiers
and boards compare only within model × GPU × workload."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.testing.factories import inference_recipe, inference_run, store_run, write_recipe
from tests.testing.paths import REPO
from validator.engine.evaluate import Config, analyse, run
from validator.evidence.tiers import derive
from validator.science.throughput import inference_facts


def samples(
    prompts: list[int], outputs: list[int], decode: float = 40.0, ttft: float = 100.0, starts: list[float] | None = None
) -> list[dict[str, Any]]:
    out = []
    for i, (p, o) in enumerate(zip(prompts, outputs)):
        sample: dict[str, Any] = {
            "prompt_tokens": p,
            "output_tokens": o,
            "ttft_ms": ttft,
            "e2e_ms": round(ttft + (o - 1) * 1000.0 / decode, 3),
        }
        if starts is not None:
            sample["start_ms"] = starts[i]
        out.append(sample)
    return out


def recipe_with_run(
    root: Path, rid: str, workload: str | None, samps: list[dict[str, Any]], concurrency: int = 1, **extra: Any
) -> str:
    headline = inference_facts(samps, None).headline
    recipe = inference_recipe(
        rid,
        decode=round(headline["decode_tok_s"], 3),
        prefill=round(headline["prefill_tok_s"], 3),
        ttft=round(headline["ttft_ms"], 3),
        gpu="h100",
        count=1,
        **extra,
    )
    recipe["serving"] = {"context_len": 16384, "concurrency": concurrency}
    if workload is None:
        recipe.pop("workload")
    else:
        recipe["workload"] = workload
    doc = inference_run(recipe, samples=False)
    doc["samples"] = samps
    recipe["runs"] = [store_run(root, doc)]
    return write_recipe(root, recipe)


def findings(root: Path) -> list[tuple[str, str, str]]:
    return [(d.code, d.path, d.message) for d in run(Config(root=str(root), skip_boards=True)).diagnostics]


# ~240-token prompts and ~1k answers: what a short chat benchmark measures, not InferenceX's 1k/1k
SHORT_PROMPTS = samples([232 + (i * 7) % 19 for i in range(10)], [819 + (i * 37) % 205 for i in range(10)])


def test_a_run_of_240_token_prompts_on_a_1k1k_recipe_names_measured_and_expected(registry: Path) -> None:
    rel = recipe_with_run(registry, "short-on-1k1k", "isl1k-osl1k", SHORT_PROMPTS)
    found = [f for f in findings(registry) if f[0] == "ORV241"]
    assert len(found) == 1 and found[0][1] == rel
    message = found[0][2]
    assert "mean input length 240.7 tokens" in message  # measured
    assert "578.3 below the range" in message  # by how much
    assert "819–1,024 tokens per request" in message and "isl1k-osl1k" in message  # expected
    tiers = derive(analyse(str(registry)).snapshot, ())
    assert tiers[rel].tier == "T1" and any("ORV241" in r for r in tiers[rel].reasons)


def test_the_same_run_on_a_matching_workload_passes_and_is_verified(registry: Path) -> None:
    catalog = registry / "catalog" / "workloads.yaml"
    catalog.write_text(
        catalog.read_text()
        + (
            "  random-256-1k:\n    name: Test ~256/1k\n    kind: inference\n    dataset: {name: random}\n"
            "    input_len: 256\n    output_len: 1024\n    range_ratio: 0.8\n    ignore_eos: true\n    min_prompts: 10\n"
        )
    )
    rel = recipe_with_run(registry, "short-on-short", "random-256-1k", SHORT_PROMPTS)
    assert findings(registry) == []
    assert derive(analyse(str(registry)).snapshot, ())[rel].tier == "T2"


def test_one_request_outside_the_range_is_caught_though_the_mean_fits(registry: Path) -> None:
    """The cheapest forgery keeping the mean: most requests at the top, one far too short."""
    prompts = [1024] * 9 + [100]  # mean 931.6, inside 819..1024
    recipe_with_run(registry, "one-short", "isl1k-osl1k", samples(prompts, [1024] * 10))
    found = [f[2] for f in findings(registry) if f[0] == "ORV241"]
    assert found and "shortest input 100 tokens, 719 below the range" in found[0]


def test_outputs_cut_short_by_eos_are_caught_when_the_workload_ignores_eos(registry: Path) -> None:
    recipe_with_run(registry, "eos", "isl1k-osl1k", samples([1000] * 10, [1024] * 9 + [12]))
    assert any(f[0] == "ORV241" and "shortest output 12 tokens" in f[2] for f in findings(registry))


def test_too_few_prompts_for_the_concurrency(registry: Path) -> None:
    starts = [float(100 * (i // 4)) * 1000 for i in range(12)]
    recipe_with_run(registry, "few", "isl1k-osl1k", samples([1000] * 12, [1000] * 12, starts=starts), concurrency=4)
    found = [f[2] for f in findings(registry) if f[0] == "ORV242"]
    assert found == [
        "run sha256:" + found[0].split("sha256:")[1].split("…")[0] + "…: the run completed 12 measured "
        "request(s); workload `isl1k-osl1k` needs at least 40 (10 × concurrency 4), warm-ups not counted"
    ]


def test_more_requests_in_flight_than_the_stated_concurrency(registry: Path) -> None:
    # eight requests all started at once, on a recipe that says one at a time
    recipe_with_run(registry, "burst", "single-stream-256", samples([256] * 8, [256] * 8, starts=[0.0] * 8))
    assert any(f[0] == "ORV243" and "up to 8 requests in flight" in f[2] for f in findings(registry))


def test_requests_one_after_another_are_one_in_flight(registry: Path) -> None:
    samps = samples([256] * 8, [256] * 8)
    starts, t = [], 0.0
    for s in samps:
        starts.append(t)
        t += s["e2e_ms"]  # the next starts exactly when this one ends
    recipe_with_run(registry, "serial", "single-stream-256", samples([256] * 8, [256] * 8, starts=starts))
    assert findings(registry) == []


def test_a_workload_that_fixes_concurrency_refuses_another(registry: Path) -> None:
    recipe_with_run(registry, "c2", "single-stream-256", samples([256] * 8, [256] * 8), concurrency=2)
    assert any(f[0] == "ORV243" and "fixes concurrency 1, the recipe states 2" in f[2] for f in findings(registry))


def test_an_unknown_workload_is_a_finding_with_a_hint(registry: Path) -> None:
    rel = recipe_with_run(registry, "unknown", "isl1k-osl2k", SHORT_PROMPTS)
    result = run(Config(root=str(registry), skip_boards=True))
    found = [d for d in result.diagnostics if d.code == "ORV115"]
    assert len(found) == 1 and found[0].path == rel and "did you mean `isl1k-osl1k`" in found[0].hint


@pytest.mark.parametrize(
    "engine, typed, offered",
    [
        ("vllm", "pp512", None),  # a served engine is never offered llama-bench's test (issue 52) ...
        ("llama.cpp", "pp512", "llama-bench-pp512"),  # ... a llama.cpp recipe is
        ("vllm", "quick-512", "quick-512-64"),
    ],
)
def test_an_unknown_workloads_hint_offers_only_workloads_of_the_recipes_kind(
    registry: Path, engine: str, typed: str, offered: str | None
) -> None:
    shutil.copy(REPO / "catalog" / "workloads.yaml", registry / "catalog" / "workloads.yaml")  # the shipped ones
    recipe_with_run(
        registry, "unknown", typed, SHORT_PROMPTS, software={"engine": {"name": engine, "version": "b11312"}}
    )
    found = [d for d in run(Config(root=str(registry), skip_boards=True)).diagnostics if d.code == "ORV115"]
    assert len(found) == 1
    if offered is None:
        assert "llama-bench" not in found[0].hint
    else:
        assert f"did you mean `{offered}`" in found[0].hint


@pytest.mark.parametrize(
    "field, value",
    [
        ("input_len", -1024),
        ("range_ratio", 0),
        ("range_ratio", 1.5),
        ("min_prompts", 0),
        ("dataset", "{name: sharegpt}"),
    ],
)
def test_a_bad_workload_is_a_finding_never_a_traceback(registry: Path, field: str, value: Any) -> None:
    catalog = registry / "catalog" / "workloads.yaml"
    text = catalog.read_text()
    start = text.index("  isl1k-osl1k:")
    line = next(ln for ln in text[start:].splitlines() if ln.strip().startswith(f"{field}:"))
    catalog.write_text(text[:start] + text[start:].replace(line, f"    {field}: {value}", 1))
    result = run(Config(root=str(registry), skip_boards=True))
    bad = [d for d in result.diagnostics if d.path == "catalog/workloads.yaml"]
    assert bad and all(d.code.startswith("ORV1") and d.hint and d.line > 1 for d in bad)
    assert not [d for d in result.diagnostics if d.code == "ORV900"]


def test_a_legacy_row_without_workload_is_unspecified_and_reaches_at_most_t1(registry: Path) -> None:
    rel = recipe_with_run(
        registry,
        "legacy",
        None,
        samples([1000] * 8, [101] * 8),
        provenance={"source": "004_cbf1754cfd687db7.txt", "row": "boards.measured[0]"},
    )
    assert [f for f in findings(registry) if f[0].startswith("ORV24")] == []  # imported rows may name none
    result = derive(analyse(str(registry)).snapshot, ())[rel]
    assert result.tier == "T1" and any("unspecified" in r for r in result.reasons)


def _measured_rows(root: Path) -> dict[str, dict[str, Any]]:
    from validator.boards.delta import board_document

    analysis = analyse(str(root))
    document = board_document(analysis.snapshot, analysis.diagnostics)
    return {row["recipe"]: row for name in ("measured", "claimed") for row in document["boards"][name]}


def test_one_model_and_gpu_on_two_workloads_rank_separately_and_legacy_rows_among_themselves(registry: Path) -> None:
    catalog = registry / "catalog" / "workloads.yaml"
    catalog.write_text(
        catalog.read_text()
        + (
            "  random-256-1k:\n    name: Test ~256/1k\n    label: 256/1k\n    kind: inference\n"
            "    dataset: {name: random}\n    input_len: 256\n    output_len: 1024\n    range_ratio: 0.8\n"
            "    ignore_eos: true\n    min_prompts: 10\n"
        )
    )
    long_prompts = samples(
        [819 + (i * 53) % 205 for i in range(10)], [819 + (i * 37) % 205 for i in range(10)], decode=30.0
    )
    recipe_with_run(registry, "on-1k1k", "isl1k-osl1k", long_prompts)
    recipe_with_run(registry, "on-short", "random-256-1k", SHORT_PROMPTS)  # faster: 40 tok/s
    legacy = {"source": "004_cbf1754cfd687db7.txt", "row": "boards.claimed[0]"}
    for rid, decode in (("legacy-a", 90.0), ("legacy-b", 20.0)):
        recipe = inference_recipe(rid, decode=decode, gpu="h100", count=1, provenance=dict(legacy), quant=f"q-{rid}")
        recipe.pop("workload")
        write_recipe(registry, recipe)
    rows = _measured_rows(registry)
    # each figure is first on its own workload: the faster short-prompt run does not outrank the 1k/1k one
    assert (rows["on-1k1k"]["workload"], rows["on-1k1k"]["rank"], rows["on-1k1k"]["rank_of"]) == ("isl1k-osl1k", 1, 1)
    assert (rows["on-short"]["workload"], rows["on-short"]["rank"], rows["on-short"]["rank_of"]) == (
        "random-256-1k",
        1,
        1,
    )
    assert rows["on-1k1k"]["workload_label"] == "1k/1k"
    # imported rows with no workload: shown, labelled, ranked only among themselves
    assert [(rows[r]["workload"], rows[r]["rank"], rows[r]["rank_of"]) for r in ("legacy-a", "legacy-b")] == [
        ("unspecified", 1, 2),
        ("unspecified", 2, 2),
    ]


# --------------------------------------------------------------------------- convergence reference per model


def _reference_registry(root: Path) -> dict[str, str]:
    """Two models, each with its own reference loss curve (qwen3.8-27b from 2.0, the 122B from 3.0);
    the workload keeps only the rule (tolerance 5%, window 10..20)."""
    import yaml

    from tests.testing.factories import training_recipe, training_run

    workloads = yaml.safe_load((root / "catalog" / "workloads.yaml").read_text())
    rule = workloads["workloads"]["sft-8k-gb128-bf16"]["convergence"]
    for key in ("reference", "reference_model"):
        rule.pop(key)
    (root / "catalog" / "workloads.yaml").write_text(yaml.safe_dump(workloads, sort_keys=False))
    models = yaml.safe_load((root / "catalog" / "models.yaml").read_text())
    refs = {}
    for model, shift, layout in (("qwen3.8-27b", 0.0, None), ("qwen3.5-122b-a10b", 1.0, {"tp": 1, "pp": 1, "dp": 8})):
        baseline = training_recipe(f"{model}-ref", 1480.4, model=model, layout=layout)
        refs[model] = store_run(root, training_run(baseline, loss_shift=shift, measured_by="maintainer"))
        models["models"][model]["convergence_reference"] = {"sft-8k-gb128-bf16": refs[model]}
    (root / "catalog" / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))
    return refs


def test_each_model_reaches_t2_against_its_own_reference_and_never_the_others(registry: Path) -> None:
    from tests.testing.factories import training_recipe, training_run

    _reference_registry(registry)
    rels = {}
    for name, model, shift, layout in (
        ("dense-own", "qwen3.8-27b", 0.0, None),
        ("dense-other", "qwen3.8-27b", 1.0, {"tp": 2, "pp": 1, "dp": 4}),
        ("moe-own", "qwen3.5-122b-a10b", 1.0, {"tp": 1, "pp": 1, "dp": 8}),
        ("moe-other", "qwen3.5-122b-a10b", 0.0, {"tp": 2, "pp": 1, "dp": 4}),
    ):
        recipe = training_recipe(name, 1480.4, model=model, layout=layout)
        recipe["runs"] = [store_run(registry, training_run(recipe, loss_shift=shift))]
        rels[name] = write_recipe(registry, recipe)
    analysis = analyse(str(registry))
    tiers = derive(analysis.snapshot, analysis.diagnostics)
    assert tiers[rels["dense-own"]].tier == "T2" and tiers[rels["moe-own"]].tier == "T2"
    # the same curves judged against the other model's reference: they fail it
    for name in ("dense-other", "moe-other"):
        assert tiers[rels[name]].tier == "T1"
        assert "loss curve fails the convergence check" in tiers[rels[name]].reasons
    codes = {(d.code, d.path) for d in run(Config(root=str(registry), skip_boards=True)).diagnostics}
    assert ("ORV219", rels["dense-other"]) in codes and ("ORV219", rels["moe-other"]) in codes
    assert not [c for c, _ in codes if c in ("ORV204", "ORV244")]  # the reference runs are named by the catalog


def test_a_model_without_a_reference_says_which_and_how_to_record_it(registry: Path) -> None:
    from tests.testing.factories import training_recipe, training_run

    recipe = training_recipe("moe", 1480.4, model="qwen3.5-122b-a10b", layout={"tp": 1, "pp": 1, "dp": 8})
    recipe["runs"] = [store_run(registry, training_run(recipe))]
    rel = write_recipe(registry, recipe)
    # the base catalog's workload-level curve is qwen3.8-27b's (reference_model): not this model's
    result = derive(analyse(str(registry)).snapshot, ())[rel]
    assert result.tier == "T1"
    assert result.reasons == (
        "model `qwen3.5-122b-a10b` has no convergence reference for workload "
        "`sft-8k-gb128-bf16`: record one with `orv add-run --from megatron LOG "
        "--reference-for qwen3.5-122b-a10b --workload sft-8k-gb128-bf16`",
    )


def test_a_reference_of_another_model_is_refused(registry: Path) -> None:
    import yaml

    refs = _reference_registry(registry)
    models = yaml.safe_load((registry / "catalog" / "models.yaml").read_text())
    models["models"]["qwen3.5-122b-a10b"]["convergence_reference"] = {"sft-8k-gb128-bf16": refs["qwen3.8-27b"]}
    (registry / "catalog" / "models.yaml").write_text(yaml.safe_dump(models, sort_keys=False))
    found = [d for d in run(Config(root=str(registry), skip_boards=True)).diagnostics if d.code == "ORV244"]
    assert len(found) == 1 and "measured on model `qwen3.8-27b`" in found[0].message


@pytest.mark.git
@pytest.mark.parametrize(
    "edit, flagged",
    [
        ("swap", True),  # qwen3.8-27b's reference replaced by another run
        ("tolerance", True),  # the workload's rule loosened
        ("first", False),  # a model's first reference: no finding
    ],
)
def test_a_pull_request_editing_a_convergence_reference_needs_a_waiver(
    registry: Path, edit: str, flagged: bool
) -> None:
    import yaml

    from tests.testing.factories import training_recipe, training_run
    from tests.testing.git import commit_all, git, git_init
    from validator.engine.evaluate import evaluate

    refs = _reference_registry(registry)
    models_path = registry / "catalog" / "models.yaml"
    models = yaml.safe_load(models_path.read_text())
    if edit == "first":
        models["models"]["qwen3.5-122b-a10b"].pop("convergence_reference")
        models_path.write_text(yaml.safe_dump(models, sort_keys=False))
    git_init(registry)
    commit_all(registry, "base")
    git(registry, "checkout", "-q", "-b", "pr")
    if edit == "swap":
        other = training_recipe("other-ref", 1480.4, layout={"tp": 2, "pp": 1, "dp": 4})
        models["models"]["qwen3.8-27b"]["convergence_reference"] = {
            "sft-8k-gb128-bf16": store_run(registry, training_run(other, loss_shift=0.01, measured_by="m"))
        }
    elif edit == "first":
        models["models"]["qwen3.5-122b-a10b"]["convergence_reference"] = {
            "sft-8k-gb128-bf16": refs["qwen3.5-122b-a10b"]
        }
    else:
        workloads_path = registry / "catalog" / "workloads.yaml"
        workloads_path.write_text(workloads_path.read_text().replace("tolerance: 0.05", "tolerance: 0.5"))
    models_path.write_text(yaml.safe_dump(models, sort_keys=False))
    commit_all(registry, "edit")
    found = evaluate(Config(root=str(registry), base="main", skip_boards=True)).result.diagnostics
    assert any(d.code == "ORV621" for d in found) is flagged
    waived = evaluate(Config(root=str(registry), base="main", skip_boards=True, waive=("ORV621",))).result.diagnostics
    assert not any(d.code == "ORV621" for d in waived)


def test_add_run_records_a_megatron_log_as_a_models_convergence_reference(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`orv add-run --from megatron LOG --reference-for MODEL --workload W`, the stack from the baseline recipe."""
    import shutil

    from tests.testing.registry import TOOLS, VALID_TRAINING_RECIPE
    from validator.cli import main

    rel = "recipes/training/qwen3.8-27b/" + VALID_TRAINING_RECIPE.name
    (registry / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(VALID_TRAINING_RECIPE, registry / rel)
    code = main(
        [
            "add-run",
            "--root",
            str(registry),
            "--from",
            "megatron",
            str(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"),
            "--recipe",
            str(registry / rel),
            "--reference-for",
            "qwen3.8-27b",
            "--workload",
            "sft-8k-gb128-bf16",
        ]
    )
    err = capsys.readouterr().err
    assert code == 0, err
    assert "qwen3.8-27b.convergence_reference.sft-8k-gb128-bf16 now names this run" in err
    analysis = analyse(str(registry))
    assert ("qwen3.8-27b", "sft-8k-gb128-bf16") in analysis.snapshot.catalog.reference_curves
    assert not [d for d in analysis.diagnostics if d.code in ("ORV204", "ORV244")]
    assert (
        main(
            [
                "add-run",
                "--root",
                str(registry),
                "--from",
                "vllm",
                str(TOOLS / "vllm" / "serve-detailed.json"),
                "--reference-for",
                "qwen3.8-27b",
            ]
        )
        == 2
    )  # a serving run is no convergence reference


def test_add_run_refuses_a_reference_that_fails_against_itself_and_stores_nothing(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A diverged log (its loss is nan at step 77) would judge nothing (`nan > tolerance` is False): refused
    before it is stored or named, with the reason ORV244 would give."""
    import shutil

    from tests.testing.registry import TOOLS, VALID_TRAINING_RECIPE, written
    from validator.cli import main

    rel = "recipes/training/qwen3.8-27b/" + VALID_TRAINING_RECIPE.name
    (registry / rel).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(VALID_TRAINING_RECIPE, registry / rel)
    before = written(registry)
    args = ["add-run", "--root", str(registry), "--from", "megatron", "--recipe", str(registry / rel)]
    args += ["--reference-for", "qwen3.8-27b", "--workload", "sft-8k-gb128-bf16"]
    assert main([*args[:5], str(TOOLS / "megatron" / "nan.log"), *args[5:]]) == 1
    err = capsys.readouterr().err
    assert "cannot be qwen3.8-27b's convergence reference for `sft-8k-gb128-bf16`" in err
    assert "fails the convergence check against itself: loss is nan at step 77" in err
    assert written(registry) == before  # no run file, no catalog entry
    # its healthy twin is recorded
    assert main([*args[:5], str(TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log"), *args[5:]]) == 0


def test_launch_is_part_of_a_configurations_identity_and_a_shell_string_is_a_finding(registry: Path) -> None:
    base = inference_recipe("a", gpu="h100", count=2)
    base["serving"] = {"concurrency": 1, "tp": 2}
    write_recipe(registry, dict(base))
    twin = dict(base, id="b")
    write_recipe(registry, twin)
    assert any(f[0] == "ORV302" for f in findings(registry))  # same configuration under two ids
    write_recipe(registry, dict(twin, launch={"args": ["serve", "--enable-chunked-prefill"]}))
    assert not any(f[0] == "ORV302" for f in findings(registry))  # other flags: another configuration
    rel = write_recipe(registry, dict(twin, launch={"args": "serve --tensor-parallel-size 2"}))
    found = [d for d in run(Config(root=str(registry), skip_boards=True)).diagnostics if d.path == rel]
    assert [d.code for d in found] == ["ORV104"]
    assert found[0].hint == 'write one item per token: ["serve", "--tensor-parallel-size", "2"]'


def test_reproduce_prints_the_stack_the_launch_the_workloads_benchmark_and_the_add_run_line(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    from validator.cli import main

    recipe = inference_recipe(
        "glm-h100-1k1k",
        gpu="h100",
        count=2,
        checkpoint="zai-org/GLM-5.3-Flash-FP8",
        workload="isl1k-osl1k",
        launch={
            "args": ["serve", "zai-org/GLM-5.3-Flash-FP8", "--tensor-parallel-size", "2"],
            "env": {"VLLM_USE_V1": "1"},
        },
    )
    recipe["serving"] = {"concurrency": 8, "tp": 2}
    rel = write_recipe(registry, recipe)
    assert main(["reproduce", str(registry / rel), "--root", str(registry)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "python -m pip install vllm==0.30.0" not in lines  # pinned by commit: cloned at that commit
    assert any(
        line.startswith("git clone") and "checkout 1fe3a1571abcdef0123456789abcdef012345678" in line for line in lines
    )
    assert "VLLM_USE_V1=1 vllm serve zai-org/GLM-5.3-Flash-FP8 --tensor-parallel-size 2" in lines
    bench = shlex.split(next(line for line in lines if line.startswith("vllm bench serve")))
    flags = {bench[i]: bench[i + 1] for i in range(3, len(bench) - 1)}
    # 10 x concurrency 8 prompts, 2 x 8 warm-ups, [819, 1024] as vLLM's symmetric range
    assert (flags["--num-prompts"], flags["--num-warmups"], flags["--max-concurrency"]) == ("80", "16", "8")
    centre, ratio = int(flags["--random-input-len"]), float(flags["--random-range-ratio"])
    assert abs(centre * (1 - ratio) - 819) < 1 and abs(centre * (1 + ratio) - 1024) < 1
    assert "--ignore-eos" in bench and "--save-detailed" in bench
    assert lines[-1] == f"orv add-run result.json --from vllm --recipe {rel} --write-recipe"


def test_reproduce_names_what_an_imported_row_lacks(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from validator.cli import main

    recipe = inference_recipe(
        "legacy", gpu="h100", count=1, provenance={"source": "004_cbf1754cfd687db7.txt", "row": "boards.claimed[0]"}
    )
    recipe.pop("workload")
    rel = write_recipe(registry, recipe)
    assert main(["reproduce", str(registry / rel), "--root", str(registry)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("# missing from the recipe")
    for lacking in ("checkpoint", "launch.args", "a workload (`unspecified` gives no lengths)"):
        assert lacking in last


# --------------------------------------------------------------------------- training launch and reproduce


def _training_with_launch(registry: Path, args: Any, **extra: Any) -> str:
    from tests.testing.factories import training_recipe

    recipe = training_recipe(
        "launched",
        1480.4,
        layout={"tp": 2, "pp": 2, "dp": 2, "ep": 2},
        tuning={
            "micro_batch_size": 1,
            "recompute": {"kind": "selective"},
            "moe_dispatcher": "alltoall",
            "optimizer_cpu_offload": 0.5,
        },
        **extra,
    )
    recipe["launch"] = {"args": args, "env": {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}}
    return write_recipe(registry, recipe)


def test_reproduce_prints_megatrons_arguments_from_workload_layout_tuning_and_launch(
    registry: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    from validator.cli import main

    rel = _training_with_launch(
        registry, ["--use-distributed-optimizer", "--tensor-model-parallel-size", "2", "--lr", "1e-5"]
    )
    assert main(["reproduce", str(registry / rel), "--root", str(registry)]) == 0
    lines = capsys.readouterr().out.splitlines()
    train = next(line for line in lines if "torchrun" in line and not line.startswith("#"))
    assert train.startswith("CUDA_DEVICE_MAX_CONNECTIONS=1 torchrun --nproc-per-node=8 pretrain_gpt.py ")
    tokens = shlex.split(train.split(" 2>&1")[0])
    flags = {tokens[i]: tokens[i + 1] for i in range(len(tokens) - 1) if tokens[i].startswith("--")}
    assert (flags["--seq-length"], flags["--global-batch-size"]) == ("8192", "128")  # the workload's
    assert (
        flags["--tensor-model-parallel-size"],
        flags["--pipeline-model-parallel-size"],
        flags["--expert-model-parallel-size"],
    ) == ("2", "2", "2")  # the layout's
    assert (
        flags["--micro-batch-size"],
        flags["--recompute-granularity"],
        flags["--moe-token-dispatcher-type"],
        flags["--optimizer-offload-fraction"],
    ) == ("1", "selective", "alltoall", "0.5")  # the tuning's
    assert "--bf16" in tokens and "--optimizer-cpu-offload" in tokens
    assert "--context-parallel-size" not in tokens  # Megatron's default of 1: not printed
    assert tokens.count("--tensor-model-parallel-size") == 1  # launch restated it: printed once
    assert tokens[-3:] == ["--use-distributed-optimizer", "--lr", "1e-5"]  # what only launch says
    assert lines[-1] == f"orv add-run train.log --from megatron --recipe {rel} --write-recipe"
    assert not [f for f in findings(registry) if f[0].startswith("ORV25")]


@pytest.mark.parametrize(
    "args, message",
    [
        (["--tensor-model-parallel-size", "4"], "launch sets --tensor-model-parallel-size 4, layout.tp is 2"),
        (["--expert-model-parallel-size=1"], "launch sets --expert-model-parallel-size 1, layout.ep is 2"),
        (["--context-parallel-size", "2"], "launch sets --context-parallel-size 2, layout.cp is 1"),
        (
            ["--global-batch-size", "256"],
            "launch sets --global-batch-size 256, workload sft-8k-gb128-bf16 global_batch is 128",
        ),
        (
            ["--moe-token-dispatcher-type", "flex"],
            "launch sets --moe-token-dispatcher-type flex, tuning.moe_dispatcher is alltoall",
        ),
        (["--fp16"], "launch sets --fp16, workload `sft-8k-gb128-bf16` trains in BF16"),
    ],
)
def test_a_training_launch_that_disagrees_with_the_recipe_is_orv252(
    registry: Path, args: list[str], message: str
) -> None:
    rel = _training_with_launch(registry, args)
    assert [(f[0], f[1], f[2]) for f in findings(registry) if f[0] == "ORV252"] == [("ORV252", rel, message)]


def test_a_training_launch_item_holding_a_command_line_is_refused(registry: Path) -> None:
    rel = _training_with_launch(registry, ["--tensor-model-parallel-size 2 --lr 1e-5"])
    found = [d for d in run(Config(root=str(registry), skip_boards=True)).diagnostics if d.path == rel]
    assert [d.code for d in found] == ["ORV250"]
    assert found[0].hint == 'write one item per token: ["--tensor-model-parallel-size", "2", "--lr", "1e-5"]'


def test_reproduce_names_a_missing_framework_pin_and_launch(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.testing.factories import training_recipe
    from validator.cli import main

    rel = write_recipe(
        registry,
        training_recipe("bare", 1480.4, software={}, provenance={"source": "000_1e2c7c041290fe1e.txt", "row": 1}),
    )
    assert main(["reproduce", str(registry / rel), "--root", str(registry)]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("# missing from the recipe") and "software.framework" in last and "launch.args" in last


# --------------------------------------------------------------------------- the import report names what each row lacks


def _lacks_section(report: str) -> dict[str, str]:
    text = (REPO / "docs" / report).read_text(encoding="utf-8")
    section = text.split("## What each recipe lacks\n", 1)[1].split("\n## ", 1)[0]
    rows = [line[2:] for line in section.splitlines() if line.startswith("- `")]
    return {row[1 : row.index("`", 1)]: row for row in rows}


@pytest.mark.parametrize(
    "report, kind, source",
    [
        ("import-report-legacy-boards.md", "inference", "004_cbf1754cfd687db7.txt"),
        ("import-report-leaderboard.md", "training", "000_1e2c7c041290fe1e.txt"),
    ],
)
def test_the_import_report_says_what_each_imported_recipe_lacks_and_nothing_it_has(
    report: str, kind: str, source: str
) -> None:
    """Each statement is checked against the committed recipe, both ways: a report that said every row
    lacks everything (the cheapest forgery) fails on the rows that have a concurrency or a run file."""
    from validator.adapters import load_recipe
    from validator.models import InferenceRecipe

    repo = REPO
    lacks = _lacks_section(report)
    recipes = [load_recipe(str(p)) for p in sorted((repo / "recipes" / kind).glob("*/*.yaml"))]
    recipes = [r for r in recipes if r.provenance is not None and r.provenance.source == source]
    assert recipes and sorted(lacks) == sorted(r.id for r in recipes)
    for recipe in recipes:
        line = lacks[recipe.id]
        assert ("launch.args" in line) == (recipe.launch is None)
        assert ("a run file (its figures are claims: T0)" in line) == (not recipe.runs)
        if isinstance(recipe, InferenceRecipe):
            assert ("serving.concurrency" in line) == (not recipe.points())
            assert ("checkpoint" in line) == (recipe.checkpoint is None)
            assert ("a workload (`unspecified`" in line) == (recipe.workload is None)
            assert ("per-request samples" in line) == bool(recipe.runs)  # the import's run files hold headlines only
        else:
            assert ("software.framework" in line) == ("framework" not in recipe.software)
    if kind == "inference":  # the rows that do state them, so both directions are exercised
        assert any(r.points() for r in recipes) and any(r.runs for r in recipes)


# --------------------------------------------------------------------------- a real vLLM run file, ~240-token prompts


@pytest.mark.parametrize("workload, flagged", [("isl1k-osl1k", True), ("random-240-64", False)])
def test_a_vllm_run_of_240_token_prompts_is_refused_on_1k1k_and_accepted_on_a_matching_workload(
    registry: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], workload: str, flagged: bool
) -> None:
    """`vllm bench serve --save-result --save-detailed` output (tests/fixtures/tools/vllm/serve-detailed.json,
    its nine requests) with each prompt ~240 tokens, stored with `orv add-run --write-recipe`."""
    import json

    from tests.testing.registry import INFERENCE_RECIPE_TEXT, VLLM
    from validator.cli import main

    catalog = registry / "catalog" / "workloads.yaml"
    catalog.write_text(
        catalog.read_text()
        + (
            "  random-240-64:\n    name: Test ~240/64\n    kind: inference\n    dataset: {name: random}\n"
            "    input_len: 250\n    output_len: 64\n    range_ratio: 0.9\n    ignore_eos: true\n    min_prompts: 8\n"
        )
    )
    result = json.loads(VLLM.read_text())
    result["input_lens"] = [232 + (i * 7) % 19 for i in range(len(result["input_lens"]))]
    result["total_input_tokens"] = sum(n for n, e in zip(result["input_lens"], result["errors"]) if not e)
    output = tmp_path / "result.json"
    output.write_text(json.dumps(result))
    recipe = registry / "recipes" / "inference" / "qwen3.8-27b" / "qwen3-8-27b-h100-vllm-fp8-c1.yaml"
    recipe.parent.mkdir(parents=True, exist_ok=True)
    recipe.write_text(INFERENCE_RECIPE_TEXT.replace("workload: random-512-64", f"workload: {workload}"))
    code = main(
        ["add-run", str(output), "--from", "vllm", "--recipe", str(recipe), "--write-recipe", "--root", str(registry)]
    )
    err = capsys.readouterr().err
    if flagged:  # refused before it is stored (issue 52), with what `orv check` would say: one finding per length
        assert code == 1 and "nothing was stored" in err and not list((registry / "runs").rglob("*.json"))
        (message,) = [line for line in err.splitlines() if "ORV241" in line and "input length" in line]
        assert "mean input length 241.9 tokens, 577.1 below the range" in message  # measured (8 completed), by how much
        assert "workload `isl1k-osl1k` (1k/1k) expects 819–1,024 tokens per request" in message  # expected
        assert "ORV241" in err and "mean output length" in err
    else:
        assert code == 0, err
        found = [d.message for d in run(Config(root=str(registry), skip_boards=True)).diagnostics if d.code == "ORV241"]
        assert found == []

"""A contributor's files are read within bounds (issue 35, docs/limits.md): every hostile input of the issue's
table makes its command exit 1 under a 2 GiB address-space limit, having read and held a bounded number of
bytes (tests/testing/bounds.py: the input's budget at most, not the input), with a finding naming the file
(and the field), no traceback, and nothing written under recipes/, runs/ or catalog/.

Each case runs `python -m validator …` in a subprocess whose address space is capped (RLIMIT_AS), as a
user's shell would run `orv`: on main these inputs raised MemoryError, RecursionError, ValueError or
OverflowError (exit 2), hung, or stored an outside run (exit 0).
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.testing.bounds import HANG_SECONDS, orv_measured
from tests.testing.paths import FIXTURES, REPO
from tests.testing.registry import TOOLS, VALID_TRAINING_RECIPE, make_registry, written
from validator.commands import add_run
from validator.load import contributor
from validator.science import bounds

LMEVAL = FIXTURES / "lmeval"
HF_CONFIGS = FIXTURES / "hf-configs"
SEEDS = FIXTURES / "import"
ADDRESS_SPACE = 2 * 1024**3
MODEL = ("--model", "qwen3.8-27b")
# What a refusal may read and hold. Measured: 7.3-8.2 MiB read (the interpreter's and orv's own modules are
# nearly all of it) and 51-53 MiB resident for every case here; an input read whole up to even its smallest
# budget that matters (64 MiB), or a 4 GiB one, would not fit.
READS = 64 * 1024**2
RESIDENT = 512 * 1024**2


def _cap_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def refused(root: Path, *args: str) -> str:
    """Run `orv ARGS` capped; assert exit 1 having read at most READS bytes and held at most RESIDENT, no
    traceback, nothing written; return stderr. (A hang fails as one after HANG_SECONDS, never as slowness.)"""
    before = written(root)
    proc, work = orv_measured(list(args), cwd=root, preexec_fn=_cap_address_space)
    assert proc.returncode == 1, proc.stderr
    assert work["bytes_read"] <= READS, f"read {work['bytes_read']:,} bytes: {args}"
    assert work["peak_rss_bytes"] <= RESIDENT, f"held {work['peak_rss_bytes']:,} bytes: {args}"
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "MemoryError" not in proc.stderr and "RecursionError" not in proc.stderr
    assert written(root) == before
    return proc.stderr


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry")


def lmeval_copy(dest: Path) -> Path:
    shutil.copytree(LMEVAL / "q995", dest)
    return dest


def results_of(folder: Path) -> Path:
    return next(folder.glob("results_*.json"))


def samples_of(folder: Path) -> Path:
    return next(folder.glob("samples_*.jsonl"))


def add_lmeval(root: Path, path: Path) -> str:
    return refused(root, "add-run", "--root", str(root), "--from", "lm-eval", str(path), *MODEL, "--measured-by", "x")


# --------------------------------------------------------------------------- lm-eval output folders


@pytest.mark.parametrize("which", [results_of, samples_of])
def test_lmeval_file_linked_to_dev_zero_is_refused(root: Path, tmp_path: Path, which) -> None:  # type: ignore[no-untyped-def]
    folder = lmeval_copy(tmp_path / "out")
    target = which(folder)
    target.unlink()
    target.symlink_to("/dev/zero")
    err = add_lmeval(root, folder)
    assert "ORV114" in err and target.name in err and "symbolic link" in err


@pytest.mark.parametrize("which", [results_of, samples_of])
def test_lmeval_file_that_is_a_fifo_is_refused_without_blocking(root: Path, tmp_path: Path, which) -> None:  # type: ignore[no-untyped-def]
    folder = lmeval_copy(tmp_path / "out")
    target = which(folder)
    target.unlink()
    os.mkfifo(target)
    err = add_lmeval(root, folder)
    assert "ORV114" in err and target.name in err and "FIFO" in err


def test_a_named_results_file_that_is_a_fifo_is_refused(root: Path, tmp_path: Path) -> None:
    folder = lmeval_copy(tmp_path / "out")
    target = results_of(folder)
    target.unlink()
    os.mkfifo(target)
    err = add_lmeval(root, target)
    assert "ORV114" in err and "FIFO" in err


def test_a_folder_of_links_to_itself_cannot_hang_the_walk(root: Path, tmp_path: Path) -> None:
    folder = tmp_path / "loop"
    folder.mkdir()
    for name in ("a", "b", "c"):
        (folder / name).symlink_to(folder, target_is_directory=True)
    (folder / "up").symlink_to("..", target_is_directory=True)
    err = add_lmeval(root, folder)
    assert "ORV108" in err and "loop" in err and "link" in err


def test_a_folder_holding_only_a_link_to_a_run_elsewhere_stores_nothing(root: Path, tmp_path: Path) -> None:
    elsewhere = lmeval_copy(tmp_path / "elsewhere" / "run")
    folder = tmp_path / "given"
    folder.mkdir()
    (folder / "model").symlink_to(elsewhere, target_is_directory=True)
    err = add_lmeval(root, folder)
    assert "ORV108" in err and "model is a link" in err


def test_a_samples_file_linking_out_of_the_folder_is_never_read(root: Path, tmp_path: Path) -> None:
    elsewhere = lmeval_copy(tmp_path / "elsewhere")
    folder = lmeval_copy(tmp_path / "given")
    inside = samples_of(folder)
    inside.unlink()
    inside.symlink_to(samples_of(elsewhere))
    err = add_lmeval(root, folder)
    assert "ORV114" in err and inside.name in err and str(samples_of(elsewhere)) in err


def test_the_folder_itself_a_link_is_refused_and_the_hint_names_its_target(root: Path, tmp_path: Path) -> None:
    elsewhere = lmeval_copy(tmp_path / "elsewhere")
    link = tmp_path / "given"
    link.symlink_to(elsewhere, target_is_directory=True)
    err = add_lmeval(root, link)
    assert "ORV114" in err and "given" in err and f"pass the folder itself: {elsewhere}" in err


def test_the_honest_folder_still_stores_its_run(root: Path, tmp_path: Path) -> None:
    folder = lmeval_copy(tmp_path / "out")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "validator",
            "add-run",
            "--root",
            str(root),
            "--from",
            "lm-eval",
            str(folder),
            *MODEL,
            "--measured-by",
            "x",
        ],
        capture_output=True,
        text=True,
        timeout=HANG_SECONDS,
        preexec_fn=_cap_address_space,
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("sha256:") and len(list((root / "runs").rglob("*.json"))) == 1


def test_an_oversized_samples_count_is_a_finding_naming_it(root: Path, tmp_path: Path) -> None:
    folder = lmeval_copy(tmp_path / "out")
    path = results_of(folder)
    data = json.loads(path.read_text())
    data["n-samples"]["gsm8k"]["original"] = 10**15
    path.write_text(json.dumps(data))
    err = add_lmeval(root, folder)
    assert "ORV109" in err and "n-samples.gsm8k.original" in err


# --------------------------------------------------------------------------- vLLM and SGLang results


def vllm(root: Path, path: Path, *extra: str) -> str:
    return refused(root, "add-run", "--root", str(root), "--from", "vllm", str(path), *MODEL, *extra)


def test_a_sparse_4_gib_result_is_refused_from_its_size(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    with open(path, "wb") as fh:
        fh.truncate(4 * 1024**3)  # sparse: no byte is written, none may be read
    err = vllm(root, path)
    assert "ORV111" in err and "result.json" in err and "budget" in err


@pytest.mark.parametrize("fmt", ["vllm", "sglang"])
def test_a_result_linked_to_dev_zero_is_refused(root: Path, tmp_path: Path, fmt: str) -> None:
    path = tmp_path / "result.json"
    path.symlink_to("/dev/zero")
    err = refused(root, "add-run", "--root", str(root), "--from", fmt, str(path), *MODEL)
    assert "ORV114" in err and "result.json" in err and "character device" in err


def test_a_result_linked_to_dev_zero_without_from_is_refused(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.symlink_to("/dev/zero")
    err = refused(root, "add-run", "--root", str(root), str(path))
    assert "ORV114" in err and "result.json" in err


def deep(depth: int) -> str:
    return "[" * depth + "]" * depth


@pytest.mark.parametrize("where", ["label", "tags"])
def test_200000_deep_json_is_a_finding(root: Path, tmp_path: Path, where: str) -> None:
    text = (TOOLS / "vllm" / "serve-detailed.json").read_text()
    data = json.loads(text)
    data[where] = "PLACEHOLDER"
    path = tmp_path / "result.json"
    path.write_text(json.dumps(data).replace('"PLACEHOLDER"', deep(200_000)))
    err = vllm(root, path)
    assert "ORV112" in err and "result.json" in err


def test_200000_deep_json_beside_nan_is_a_finding(root: Path, tmp_path: Path) -> None:
    # NaN sends the file to the standard library's parser (tools write it); its recursion is caught too
    path = tmp_path / "result.jsonl"
    line = (TOOLS / "sglang" / "bench_serving-details.jsonl").read_text().strip()
    path.write_text(line.replace('"backend"', '"label": ' + deep(200_000) + ', "backend"', 1) + "\n")
    err = refused(root, "add-run", "--root", str(root), "--from", "sglang", str(path), *MODEL)
    assert "ORV112" in err and "result.jsonl" in err


def test_200000_deep_json_without_from_is_a_finding(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "result.json"
    path.write_text('{"duration": 1, "date": "20261018-101503", "label": ' + deep(200_000) + "}")
    err = refused(root, "add-run", "--root", str(root), str(path))
    assert "ORV112" in err and "result.json" in err


@pytest.mark.parametrize(
    ("value", "code", "words"),
    [
        ("1" * 5000, "ORV113", "beyond the range of a double"),
        ("1e400", "ORV113", "beyond the range of a double"),
        ("-4", "ORV109", "cannot be below 1"),
        ("1000000000", "ORV109", "beyond 65,536"),
        ("12.5", "ORV109", "must be an integer"),
    ],
)
def test_an_impossible_concurrency_is_a_finding_naming_the_field(
    root: Path, tmp_path: Path, value: str, code: str, words: str
) -> None:
    text = (TOOLS / "vllm" / "serve-detailed.json").read_text()
    path = tmp_path / "result.json"
    path.write_text(re.sub(r'"max_concurrency": 1\b', f'"max_concurrency": {value}', text))
    err = vllm(root, path)
    assert code in err and "`max_concurrency`" in err and words in err and "result.json:1:" in err


def test_nan_concurrency_in_a_python_written_result_is_a_finding_naming_the_field(root: Path, tmp_path: Path) -> None:
    text = (TOOLS / "vllm" / "serve-detailed.json").read_text()
    path = tmp_path / "result.json"
    path.write_text(text.replace('"max_concurrency": 1,', '"max_concurrency": NaN,'))
    err = vllm(root, path)
    assert "ORV109" in err and "`max_concurrency`" in err and "nan" in err


# --------------------------------------------------------------------------- Megatron-LM logs


def megatron_log(tmp_path: Path, **arguments: str) -> Path:
    text = (TOOLS / "megatron" / "qwen3-8-27b-tp1-pp4-dp2.log").read_text()
    for name, value in arguments.items():
        text, n = re.subn(rf"(  {name} \.+ )\S+", rf"\g<1>{value}", text)
        assert n == 1, name
    path = tmp_path / "train.log"
    path.write_text(text)
    return path


@pytest.mark.parametrize("size", [10**9, 10**7])
def test_a_layer_split_for_absurd_pipelines_is_refused_in_constant_time(root: Path, tmp_path: Path, size: int) -> None:
    path = megatron_log(
        tmp_path,
        num_layers=str(size),
        pipeline_model_parallel_size=str(size),
        decoder_first_pipeline_num_layers="1",
        decoder_last_pipeline_num_layers="1",
    )
    err = refused(
        root,
        "add-run",
        "--root",
        str(root),
        "--from",
        "megatron",
        str(path),
        "--recipe",
        str(VALID_TRAINING_RECIPE),
        "--measured-by",
        "x",
    )
    assert "ORV109" in err and "train.log:" in err
    assert "`num_layers`" in err and "`pipeline_model_parallel_size`" in err
    assert len(err) < 4000  # no list of 10^7 stages in the message


def test_a_5000_digit_iteration_number_is_no_crash(root: Path, tmp_path: Path) -> None:
    path = megatron_log(tmp_path)
    path.write_text(path.read_text().replace("iteration        3/", "iteration " + "9" * 5000 + "/", 1))
    err = refused(
        root,
        "add-run",
        "--root",
        str(root),
        "--from",
        "megatron",
        str(path),
        "--recipe",
        str(VALID_TRAINING_RECIPE),
        "--measured-by",
        "x",
    )
    assert "train.log:" in err


# --------------------------------------------------------------------------- catalog add-model


def config(tmp_path: Path, text: str, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def llama(**replace: str) -> str:
    text = (HF_CONFIGS / "llama-3.1-8b.json").read_text()
    for key, value in replace.items():
        text, n = re.subn(rf'"{key}": [^,\n}}]+', f'"{key}": {value}', text)
        assert n == 1, key
    return text


def add_model(root: Path, path: Path) -> str:
    return refused(
        root, "catalog", "add-model", "--root", str(root), "--config", str(path), "--id", "x-model", "--family", "Llama"
    )


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("num_hidden_layers", "1000000000", "beyond 1,024"),
        ("num_hidden_layers", "1e9", "must be a non-negative integer"),
        ("hidden_size", "1" + "0" * 400, "beyond the range of a double"),
        ("vocab_size", "1000000000000000", "beyond 4,194,304"),
        ("hidden_size", "NaN", "nan"),
        ("num_attention_heads", "-32", "non-negative"),
        ("intermediate_size", '"14336"', "must be a non-negative integer"),
    ],
)
def test_an_impossible_config_is_a_finding_naming_the_file_and_field(
    root: Path, tmp_path: Path, field: str, value: str, words: str
) -> None:
    path = config(tmp_path, llama(**{field: value}))
    err = add_model(root, path)
    assert "config.json:" in err and f"`{field}`" in err and words in err
    line = next(i for i, l in enumerate(path.read_text().splitlines(), 1) if f'"{field}"' in l)
    assert f"config.json:{line}:" in err


def test_a_config_linked_to_dev_zero_is_refused(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "config.json"
    path.symlink_to("/dev/zero")
    err = add_model(root, path)
    assert "ORV114" in err and "config.json" in err


def test_a_config_over_its_budget_is_refused(root: Path, tmp_path: Path) -> None:
    path = config(tmp_path, llama().replace("{", '{"padding": "' + "x" * contributor.HF_CONFIG.limit + '",', 1))
    err = add_model(root, path)
    assert "ORV111" in err and "config.json" in err


def test_200000_deep_config_is_a_finding(root: Path, tmp_path: Path) -> None:
    path = config(tmp_path, llama().replace("{", '{"quantization_config": ' + deep(200_000) + ",", 1))
    err = add_model(root, path)
    assert "ORV112" in err and "config.json" in err


def test_mlp_only_layers_is_read_as_a_set(root: Path, tmp_path: Path) -> None:
    qwen = (HF_CONFIGS / "qwen1.5-moe-a2.7b.json").read_text()
    path = config(tmp_path, qwen.replace("{", '{"mlp_only_layers": "all",', 1))
    err = add_model(root, path)
    assert "`mlp_only_layers`" in err


# --------------------------------------------------------------------------- importers


@pytest.mark.parametrize("command", ["legacy-boards", "leaderboard"])
def test_an_import_source_linked_to_dev_zero_is_refused(root: Path, tmp_path: Path, command: str) -> None:
    path = tmp_path / "seed.txt"
    path.symlink_to("/dev/zero")
    err = refused(root, "import", command, "--root", str(root), str(path))
    assert "ORV114" in err and "seed.txt" in err


def test_an_import_source_that_is_a_fifo_is_refused(root: Path, tmp_path: Path) -> None:
    path = tmp_path / "seed.json"
    os.mkfifo(path)
    err = refused(root, "import", "legacy-boards", "--root", str(root), str(path))
    assert "ORV114" in err and "FIFO" in err


# --------------------------------------------------------------------------- the reader itself


def test_at_most_budget_plus_one_bytes_are_read_from_a_stream(tmp_path: Path) -> None:
    class Endless:
        asked = 0

        def read(self, n: int) -> bytes:
            self.asked += n
            return b"x" * n

    stream = Endless()
    with pytest.raises(contributor.InputFileError) as exc:
        contributor.read_stream("stdin", stream, contributor.Budget("a test file", 10 * contributor.MiB))  # type: ignore[arg-type]
    assert exc.value.code == "ORV111" and stream.asked == 10 * contributor.MiB + 1


def test_a_file_that_reports_no_size_is_still_cut_at_its_budget(tmp_path: Path) -> None:
    # /proc files report size 0 however much they hold: only the read bound stops them
    budget = contributor.Budget("a test file", 16)
    assert contributor.read_named("/proc/self/status", contributor.Budget("a test file", 1 << 20))
    with pytest.raises(contributor.InputFileError) as exc:
        contributor.read_named("/proc/self/status", budget)
    assert exc.value.code == "ORV111"


def test_a_named_link_to_a_regular_file_is_read_but_a_link_inside_a_folder_is_not(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    assert contributor.read_named(str(link), contributor.HF_CONFIG) == b"{}"
    with pytest.raises(contributor.InputFileError) as exc:
        contributor.read_inside(str(link), contributor.HF_CONFIG)
    assert exc.value.code == "ORV114" and "real.json" in exc.value.message


def test_every_format_has_a_budget_and_an_unknown_one_the_default() -> None:
    for fmt in add_run.ADAPTER_FORMATS:
        assert add_run.input_budget(fmt) is add_run.INPUT_BUDGET[fmt]
    assert add_run.input_budget("a-new-tool") is contributor.TOOL_OUTPUT
    assert add_run.input_budget(None).limit == max(b.limit for b in contributor.BUDGETS)


# --------------------------------------------------------------------------- docs/limits.md is the code's table


def _limits_rows() -> list[str]:
    return [line for line in (REPO / "docs" / "limits.md").read_text().splitlines() if line.startswith("| ")]


def _shown(n: int) -> str:
    return f"{n // contributor.MiB:,} MiB" if n >= contributor.MiB and n % contributor.MiB == 0 else f"{n:,}"


@pytest.mark.parametrize("budget", contributor.BUDGETS, ids=lambda b: b.kind)
def test_every_budget_is_in_the_limits_table(budget: contributor.Budget) -> None:
    words = {
        contributor.SERVING_RESULT: "serving benchmark result",
        contributor.TRAINING_LOG: "training log",
        contributor.TOOL_OUTPUT: "without its own budget",
        contributor.RUN_DOCUMENT: "a run document",
        contributor.LMEVAL_RESULTS: "lm-eval results file",
        contributor.LMEVAL_SAMPLES: "lm-eval samples file",
        contributor.HF_CONFIG: "config.json",
        contributor.SEED_SOURCE: "seed source",
        contributor.RECIPE: "recipe, catalog file",
        contributor.LLAMA_BENCH: "a llama-bench output",
    }[budget]
    row = next(r for r in _limits_rows() if words in r)
    assert f"| {_shown(budget.limit)} |" in row


@pytest.mark.parametrize("bound", bounds.BOUNDS, ids=lambda b: b.what)
def test_every_bound_is_in_the_limits_table_with_its_source(bound: bounds.Bound) -> None:
    limit = "10^15 − 1 (15 digits)" if bound is bounds.ITERATION else f"{bound.high:,}"
    rows = [r for r in _limits_rows() if f"| {limit} |" in r]
    assert rows, bound
    assert any(bound.largest_real.split(" (")[0].split("(")[0].strip()[:5] in r for r in rows), bound


def test_a_walk_stops_at_its_depth_and_entry_bounds(tmp_path: Path) -> None:
    deep_folder = tmp_path / "deep"
    (deep_folder / "/".join("d" * (contributor.MAX_DEPTH + 1))).mkdir(parents=True)
    with pytest.raises(contributor.InputFileError) as exc:
        contributor.walk(str(deep_folder))
    assert exc.value.code == "ORV112"
    wide = tmp_path / "wide"
    wide.mkdir()
    for i in range(30):
        (wide / f"f{i}").write_text("")
    assert len(contributor.walk(str(wide), max_entries=30).files) == 30
    with pytest.raises(contributor.InputFileError) as exc:
        contributor.walk(str(wide), max_entries=29)
    assert exc.value.code == "ORV111" and "more than 29 entries" in exc.value.message


def test_honest_outputs_fit_their_budgets_with_room() -> None:
    """The fixtures' own bytes per request/iteration/document, scaled to 10,000 of them (and to 1,024 output
    tokens a request: InferenceX's 1k/1k), fit with room; `python -m bench.input_sizes` measures it exactly."""
    result = json.loads((TOOLS / "vllm" / "serve-detailed.json").read_text())
    tokens = sum(len(i) for i in result["itls"]) or 1
    per_token = len(json.dumps(result["itls"])) / tokens + len(json.dumps(result["generated_texts"])) / tokens
    assert 10_000 * 1024 * per_token * 3 < contributor.SERVING_RESULT.limit
    log = (TOOLS / "megatron" / "nan-v0.17-torchrun.log").read_text().splitlines()
    per_iteration = sum(len(line) + 1 for line in log if "iteration" in line) / 100
    assert 270_000 * per_iteration * 2 < contributor.TRAINING_LOG.limit  # a log of all a run file can hold
    samples = samples_of(LMEVAL / "reference").read_bytes()
    per_line = len(samples) / len([s for s in samples.split(b"\n") if s.strip()])
    assert 10_000 * 2 * per_line * 10 < contributor.LMEVAL_SAMPLES.limit  # 10,000 documents under two filters
    assert max(p.stat().st_size for p in HF_CONFIGS.glob("*.json")) * 100 < contributor.HF_CONFIG.limit
    assert max(p.stat().st_size for p in SEEDS.iterdir()) * 100 < contributor.SEED_SOURCE.limit


def test_a_lone_surrogate_beside_nan_is_a_finding_not_a_canonicalization_crash(root: Path, tmp_path: Path) -> None:
    # found by the explore profile (tests/unit/test_fuzz_inputs.py): NaN sends lm-eval's results to the standard
    # library's parser, which keeps a lone "\ud800"; canonicalizing the run then raised (exit 2)
    folder = lmeval_copy(tmp_path / "out")
    path = results_of(folder)
    path.write_text(path.read_text().replace('"results"', '"bomb": NaN, "task": "\\ud800", "results"', 1))
    err = add_lmeval(root, folder)
    assert "ORV110" in err and path.name in err and "surrogate" in err
    with pytest.raises(contributor.InputFileError) as exc:
        contributor.parse_json("x.json", b'{"a": NaN,\n "b": ["\\ud800"]}')
    assert (exc.value.code, exc.value.line, exc.value.col) == ("ORV110", 2, 9)  # the backslash
    assert contributor.parse_json("x.json", b'{"a": NaN, "b": "\\ud83d\\ude00"}')["b"] == "\U0001f600"


def test_a_fallback_field_is_checked_like_the_field_itself(root: Path, tmp_path: Path) -> None:
    # found by the explore profile: moe_intermediate_size null fell back to intermediate_size "" unchecked,
    # and 3 * hidden * "" made a string the sum then choked on (exit 2, internal error)
    qwen = json.loads((HF_CONFIGS / "qwen3-30b-a3b.json").read_text())
    qwen.update(moe_intermediate_size=None, intermediate_size="")
    err = add_model(root, config(tmp_path, json.dumps(qwen)))
    assert "ORV109" in err and "`moe_intermediate_size`" in err

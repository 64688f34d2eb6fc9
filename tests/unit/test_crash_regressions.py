"""Regression cases from the mutation run of issue 12: each input once crashed orv (exit 2) or was
reported as ORV900; each now ends as findings with a code and a location."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.paths import FIXTURES
from tests.testing.registry import CASES, fresh_registry, make_registry
from validator.cli import main
from validator.engine.evaluate import Config, run
from validator.hashing import canonical_bytes, content_address, run_path
from validator.load import schema as schemas

SEEDS = FIXTURES / "import"  # the two seed documents, as the importers read them

RECIPE = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
INFER = "recipes/inference/qwen3.8-27b/qwen3-8-27b-w4a16-1x-rtx3090-mtp3.yaml"
INFER_RUN = "runs/05/05a9facfaa8920cddb25e13ce45595b727cde0713cec4b01a549803817878dbd.json"
TRAIN_RUN = "runs/b7/b7f2578794a34ac68613116cc9ac6a76b9e6b5bb08db2adce7a53c449372d0ef.json"


@pytest.fixture
def reg(tmp_path: Path) -> Path:
    return make_registry(tmp_path / "registry", CASES / "valid-training-run", CASES / "valid-inference")


def findings(root: Path) -> set[tuple[str, str]]:
    """(code, path) of every finding; no ORV900, every finding located and hinted, the CLI exits 0 or 1."""
    result = run(Config(root=str(root), skip_boards=True))
    assert not [d for d in result.diagnostics if d.code == "ORV900"], result.diagnostics
    for d in result.diagnostics:
        assert d.line >= 1 and d.col >= 1 and d.hint, d
    assert main(["check", "--root", str(root), "--format", "json", "--no-cache"]) in (0, 1)
    return {(d.code, d.path) for d in result.diagnostics}


def edit(root: Path, rel: str, old: str, new: str) -> None:
    path = root / rel
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def store_run(root: Path, data: dict, raw: bytes | None = None) -> str:
    """Put a run document at its content address (canonical bytes unless raw is given)."""
    raw = raw if raw is not None else canonical_bytes(data)
    rel = run_path(content_address(raw))
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_bytes(raw)
    return rel


def run_doc(root: Path, rel: str = INFER_RUN) -> dict:
    return json.loads((root / rel).read_text(encoding="utf-8"))


# --------------------------------------------------------------------------- 1. str.format in _translate


@pytest.mark.parametrize(
    "measured_at",
    [
        " 2026-10-20T18:00:00Z",
        "\u200b2026-10-20T18:00:00Z",
        "\u202e2026-10-20T18:00:00Z",
        "2026-10-20T12:49:NaN-06:00",
        "{0}{4}",
        "2026-10-20T18:00:00Z\n",
    ],
)
def test_a_timestamp_breaking_its_braced_pattern_is_orv109(reg: Path, measured_at: str) -> None:
    data = run_doc(reg)
    data["measured_at"] = measured_at
    rel = store_run(reg, data)
    assert ("ORV109", rel) in findings(reg)


def test_pattern_hints_are_never_formatted() -> None:
    issues = schemas.validate("run-training", {"measured_at": " 2026-10-20"})
    hint = [i.hint for i in issues if i.path == ("measured_at",)]
    assert hint and "RFC 3339" in hint[0]  # words, not the pattern (whose braces were never formatted)
    issues = schemas.validate("recipe-inference", {"id": "{suggestion}{0}"})
    slug = [i for i in issues if i.path == ("id",)]
    assert slug and slug[0].hint.endswith("`suggestion-0`")


# --------------------------------------------------------------------------- 2. long integers, 0x_ / 0b_


def test_yaml_integer_over_4300_digits_is_orv120(reg: Path) -> None:
    edit(reg, RECIPE, "max_tokens_per_gpu: 16384", "max_tokens_per_gpu: " + "9" * 4301)
    assert ("ORV120", RECIPE) in findings(reg)


def test_json_integer_over_4300_digits_is_orv120(reg: Path) -> None:
    raw = (reg / INFER_RUN).read_bytes().replace(b'"duration_s":31.435', b'"duration_s":' + b"7" * 4400)
    rel = store_run(reg, {}, raw)
    assert ("ORV120", rel) in findings(reg)


@pytest.mark.parametrize("scalar", ["0x_", "0b_", "+0b_", "-0x__"])
def test_yaml_11_int_forms_without_digits_are_findings(reg: Path, scalar: str) -> None:
    edit(reg, RECIPE, "notes: CPU optimizer offload.", f"notes: {scalar}")
    assert ("ORV119", RECIPE) in findings(reg)
    edit(reg, RECIPE, f"notes: {scalar}", f"{scalar}: 1")  # as a key: not text, ORV104
    assert ("ORV104", RECIPE) in findings(reg)


# --------------------------------------------------------------------------- 3. catalog models vs schema


@pytest.mark.parametrize(
    "rel, old, new",
    [
        ("catalog/hardware.yaml", "hbm_gib: 80", "hbm_gib: 1" + "0" * 400),
        ("catalog/models.yaml", "layers: 64", "layers: 1.0e+300"),
        ("catalog/models.yaml", "layers: 64", "layers: 9007199254740992"),
        ("catalog/workloads.yaml", "warmup_steps: 2", "warmup_steps: 1" + "0" * 30),
    ],
)
def test_catalog_values_the_model_cannot_hold_are_orv109(reg: Path, rel: str, old: str, new: str) -> None:
    edit(reg, rel, old, new)
    assert ("ORV109", rel) in findings(reg)


def test_starting_point_beyond_a_double_is_orv109(reg: Path) -> None:
    (reg / "catalog/starting-points.yaml").write_text(
        "starting_points:\n  - {model: qwen3.8-27b, gpu: h100, tokens_per_s_per_gpu: 1" + "0" * 400 + ", source: x}\n",
        encoding="utf-8",
    )
    assert ("ORV109", "catalog/starting-points.yaml") in findings(reg)


# --------------------------------------------------------------------------- 4. schema and models disagree

RECIPE_NEWLINES = [  # (file, old, new): a trailing newline in a patterned string
    (RECIPE, "gpu: h100", 'gpu: "h100\\n"'),
    (RECIPE, "model: qwen3.8-27b", 'model: "qwen3.8-27b\\n"'),
    (RECIPE, "workload: sft-8k-gb128-bf16", 'workload: "sft-8k-gb128-bf16\\n"'),
    (
        RECIPE,
        '"sha256:b7f2578794a34ac68613116cc9ac6a76b9e6b5bb08db2adce7a53c449372d0ef"',
        '"sha256:b7f2578794a34ac68613116cc9ac6a76b9e6b5bb08db2adce7a53c449372d0ef\\n"',
    ),
    (RECIPE, 'measured: "2026-10-18"', 'measured: "2026-10-18\\n"'),
    (RECIPE, "framework: {name: megatron-core,", '"framework\\n": {name: megatron-core,'),
    (RECIPE, "name: megatron-core,", 'name: "megatron-core\\n",'),
    (RECIPE, 'version: "0.30.0"}', 'version: "0.30.0", patches: [{name: p, sha256: "' + "a" * 64 + '\\n"}]}'),
    (INFER, "quant: w4a16", 'quant: "w4a16\\n"'),
    (INFER, "id: qwen3-8-27b-w4a16-1x-rtx3090-mtp3", 'id: "qwen3-8-27b-w4a16-1x-rtx3090-mtp3\\n"'),
    (INFER, "method: mtp", 'method: "mtp\\n"'),
]


@pytest.mark.parametrize("rel, old, new", RECIPE_NEWLINES, ids=[n for _, _, n in RECIPE_NEWLINES])
def test_a_trailing_newline_breaks_every_pattern(reg: Path, rel: str, old: str, new: str) -> None:
    edit(reg, rel, old, new)
    got = findings(reg)
    assert ("ORV109", rel) in got, got


@pytest.mark.parametrize(
    "change",
    [
        lambda d: d["tool"].update(name="llm-inference-bench\n"),
        lambda d: d["serving"].update(concurrency=1e300),
        lambda d: d["serving"]["speculative"].update(k=2**64),
        lambda d: d["serving"].update(context_len=2**53),
        lambda d: d["hardware"].update(gpu="rtx-3090\n"),
        lambda d: d["summary"].update(decode_tok_s=10**400),
    ],
    ids=["tool-name-newline", "concurrency-1e300", "k-2**64", "context-2**53", "gpu-newline", "summary-10**400"],
)
def test_run_values_beyond_the_models_are_orv109(reg: Path, change) -> None:
    data = run_doc(reg)
    change(data)
    rel = store_run(reg, data, json.dumps(data).encode())  # 10**400 cannot be canonical JSON
    assert ("ORV109", rel) in findings(reg)


def test_training_layout_beyond_64_bits_is_orv109(reg: Path) -> None:
    data = run_doc(reg, TRAIN_RUN)
    data["layout"]["cp"] = 1.79e308
    rel = store_run(reg, data)
    assert ("ORV109", rel) in findings(reg)


def test_claim_of_ten_to_the_400_is_orv109(reg: Path) -> None:
    edit(reg, RECIPE, "tokens_per_s_per_gpu: 1480.4", "tokens_per_s_per_gpu: 1" + "0" * 400)
    assert ("ORV109", RECIPE) in findings(reg)


def test_lone_surrogate_in_a_run_file_is_orv110_not_a_number(reg: Path) -> None:
    raw = (reg / INFER_RUN).read_bytes().replace(b'"measured_by":"key-2952"', b'"measured_by":"key\\ud800"')
    rel = store_run(reg, {}, raw)
    assert ("ORV110", rel) in findings(reg)
    from validator.checks.integrity import _jcs_refusal
    from validator.hashing import canonical_bytes as jcs

    try:
        jcs({"a": "\ud800"})
    except Exception as exc:  # noqa: BLE001 - the exception ORV202 words
        words = _jcs_refusal(exc)
    assert "number" not in words and "surrogate" in words


# --------------------------------------------------------------------------- 5. catalog ids and references


def test_catalog_key_with_a_trailing_newline_is_orv109(reg: Path) -> None:
    edit(reg, "catalog/hardware.yaml", "  h200:", '  "h200\\n":')
    assert ("ORV109", "catalog/hardware.yaml") in findings(reg)


@pytest.mark.parametrize("field, value", [("model", "qwen9"), ("gpu", "h1000"), ("workload", "sft-nope")])
def test_starting_point_naming_an_unknown_id_is_orv115(reg: Path, field: str, value: str) -> None:
    point = {
        "model": "qwen3.8-27b",
        "gpu": "h100",
        "workload": "sft-8k-gb128-bf16",
        "tokens_per_s_per_gpu": 1000,
        "source": "test",
    }
    point[field] = value
    (reg / "catalog/starting-points.yaml").write_text(
        "starting_points:\n  - " + json.dumps(point) + "\n", encoding="utf-8"
    )
    result = run(Config(root=str(reg), skip_boards=True))
    got = [d for d in result.diagnostics if d.code == "ORV115"]
    assert [(d.path, d.line) for d in got] == [("catalog/starting-points.yaml", 2)]
    assert value in got[0].message


# --------------------------------------------------------------------------- the CLI's internal error


def test_internal_error_names_the_exception_and_the_orv_frame(
    reg: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import validator.commands.check as check_command

    def boom(config: Config) -> None:
        {}["missing"]  # noqa: B018 - a KeyError raised inside orv

    monkeypatch.setattr(check_command, "evaluate", boom)
    monkeypatch.delenv("ORV_DEBUG", raising=False)
    assert main(["check", "--root", str(reg)]) == 2
    err = capsys.readouterr().err
    # the innermost frame inside validator/ (boom is the test's), with its line
    assert "KeyError: 'missing' at validator/commands/check.py:" in err and "in check()" in err
    assert "Traceback" not in err
    monkeypatch.setenv("ORV_DEBUG", "1")
    assert main(["check", "--root", str(reg)]) == 2
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err and '{}["missing"]' in err


@pytest.mark.parametrize("field, value", [("prompt_tokens", 10**400), ("output_tokens", 2**53), ("e2e_ms", 10**400)])
def test_samples_beyond_the_schema_bounds_are_orv109(reg: Path, field: str, value: int) -> None:
    data = run_doc(reg)
    data["samples"][0][field] = value
    rel = store_run(reg, data, json.dumps(data).encode())
    assert ("ORV109", rel) in findings(reg)


def test_training_samples_beyond_the_schema_bounds_are_orv109(reg: Path) -> None:
    data = run_doc(reg, TRAIN_RUN)
    data["samples"][3]["tokens"] = 10**400
    rel = store_run(reg, data, json.dumps(data).encode())
    assert ("ORV109", rel) in findings(reg)


# --------------------------------------------------------------------------- YAML 1.1 retyping


@pytest.mark.parametrize(
    "rel, old, new, says",
    [
        ("catalog/hardware.yaml", "hbm_tb_s: 3.35", "hbm_tb_s: 017", "reads as 15 (octal)"),
        (
            INFER,
            "concurrency: 1,",
            "concurrency: 1, slots: 1:20,",
            'reads as 80 in YAML 1.1 (orv) but as the text "1:20"',
        ),
        (RECIPE, "optimizer_cpu_offload: 1.0", "optimizer_cpu_offload: 0b101", 'as the text "0b101"'),
        (RECIPE, "optimizer_cpu_offload: 1.0", "optimizer_cpu_offload: 0x1", "hexadecimal"),
        (
            RECIPE,
            "optimizer_cpu_offload: 1.0",
            "optimizer_cpu_offload: 1.0\n  optimizer_on_gpu: no",
            'reads as false in YAML 1.1 (orv) but as the text "no"',
        ),
        ("catalog/models.yaml", "moe: true", "moe: Yes", 'as the text "Yes"'),
    ],
)
def test_yaml_11_spellings_that_still_fit_the_schema_are_orv119(
    reg: Path, rel: str, old: str, new: str, says: str
) -> None:
    edit(reg, rel, old, new)
    result = run(Config(root=str(reg), skip_boards=True))
    got = [d for d in result.diagnostics if d.code == "ORV119"]
    assert len(got) == 1 and got[0].path == rel and says in got[0].message, result.diagnostics
    line = (reg / rel).read_text(encoding="utf-8").splitlines()[got[0].line - 1]
    assert new.split(": ")[-1].split(",")[0] in line[got[0].col - 1 :]  # located on the value itself


@pytest.mark.parametrize(
    "value, words",
    [
        ("!!binary aGVsbG8=", "`!!binary` value is not JSON data (binary data"),
        ("!!set {a, b}", "`!!set` value is not JSON data (a set"),
        ("!!omap [{a: 1}]", "`!!omap`"),
    ],
)
def test_yaml_only_types_are_named_not_called_null(reg: Path, value: str, words: str) -> None:
    edit(reg, RECIPE, "notes: CPU optimizer offload.", f"notes: {value}")
    result = run(Config(root=str(reg), skip_boards=True))
    got = [d for d in result.diagnostics if d.path == RECIPE]
    assert [(d.code, d.line) for d in got] == [("ORV104", 18)] and words in got[0].message
    assert "null" not in got[0].message


@pytest.mark.parametrize(
    "original, garbled",
    [
        # found by tests/unit/test_fuzz_inputs.py: two figures run together made float() raise
        ("4,023.2×8$0.55", "4,023.2×8$0.1,178.1"),
        # found by the 10-minute exploratory fuzz: int() refused a 5,003-digit `+…%` gain
        ("→ 4,011.4 +184%", "→ 4,011.4 +" + "9" * 5000 + "184%"),
        # found by a 13-minute exploratory fuzz: int() refused a 5,002-digit figure
        ("DP8max 16,384 tokens/GPU", "DP8max 16,384 tokens/GPU, recompute " + "9" * 5000 + " layers"),
        ("\tH200\t8\t6,913.2\t", "\tH200\t" + "8" * 5000 + "\t6,913.2\t"),
        ("\nMuse2 recipes\n", "\nMuse" + "2" * 5000 + " recipes\n"),
    ],
    ids=["two-figures-run-together", "gain", "layout-cell", "gpu-count", "card-head-count"],
)
def test_a_garbled_leaderboard_seed_gives_a_report_not_a_crash(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], original: str, garbled: str
) -> None:
    raw = (SEEDS / "000_1e2c7c041290fe1e.txt").read_bytes()
    changed = raw.replace(original.encode(), garbled.encode(), 1)
    assert changed != raw
    source = tmp_path / "seed.txt"
    source.write_bytes(changed)
    root = fresh_registry(tmp_path / "registry")
    assert main(["import", "leaderboard", str(source), "--root", str(root), "--report", str(tmp_path / "r.md")]) in (
        0,
        1,
    )
    assert "internal error" not in capsys.readouterr().err

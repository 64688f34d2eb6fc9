"""Golden cases: each tests/cases/<name>/ tree yields exactly the `CODE path:line` in its expected.txt.

Every case runs through the engine API and through the CLI (json format), which must agree.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.testing.paths import REPO
from tests.testing.registry import CASES, make_registry
from validator.checks import all_checks
from validator.cli import main
from validator.engine.evaluate import Config, run

CASE_DIRS = sorted(p for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("_"))

# Codes whose triggering case needs more than a static tree (git history, a crashing check);
# each names the test that triggers it.
COVERED_ELSEWHERE = {
    "ORV900": "tests/unit/test_engine.py::test_a_crashing_check_is_reported_not_raised",
    # llama-bench's findings need its real output and the tiny GGUF model's catalog entry (tests/testing/llamabench.py)
    "ORV247": "tests/unit/test_llamabench.py::test_a_run_moved_to_another_test_is_a_check_finding",
    "ORV248": "tests/unit/test_llamabench.py::test_a_pin_edited_after_the_run_is_a_check_finding",
    "ORV249": "tests/unit/test_llamabench.py::test_a_gpu_llama_bench_did_not_see_is_refused",
    "ORV228": "tests/e2e/test_identity_pr.py::test_a_q2_k_gguf_on_a_q4_k_m_recipe_is_refused",
    # trtllm-bench's report needs its real (source-derived) output stored by add-run, edited per row
    "ORV229": "tests/e2e/test_identity_pr.py::test_a_b200_report_on_an_h100_recipe_is_refused",
    "ORV260": "tests/e2e/test_identity_pr.py::test_tp_2_on_world_size_1_is_refused",
    "ORV261": "tests/e2e/test_identity_pr.py::test_the_shipped_fp8_report_on_a_bf16_recipe_is_refused",
    "ORV262": "tests/e2e/test_identity_pr.py::test_a_trtllm_run_without_its_reports_setup_is_refused",
    "ORV901": "tests/e2e/test_shard.py::test_a_json_partial_with_fields_or_types_a_shard_never_writes_is_refused",
    "ORV111": "tests/unit/test_limits.py::test_recipe_over_one_mebibyte_is_orv111",
    # a golden case over 4 MiB would weigh on every clone: the run is made in the test
    "ORV211": "tests/unit/test_run_budget.py::test_an_oversized_training_run_in_the_registry_is_orv211_with_the_figure_"
    "and_the_budget",
    "ORV117": "tests/unit/test_hostile.py::test_case_insensitive_path_collision",
    "ORV118": "tests/unit/test_hostile.py::test_control_characters_in_a_file_name",
    "ORV702": "tests/unit/test_boards.py::test_data_and_boards_committed_together_is_only_a_stale_stamp",
    "ORV701": "tests/unit/test_boards.py::test_changing_one_recipe_moves_rank_fastest_and_check",  # needs git history
    "ORV703": "tests/unit/test_boards.py::test_changing_one_recipe_moves_rank_fastest_and_check",  # needs git history
    # A tool's totals and per-request redundant fields are read from its output at add-run (the run file
    # keeps neither): triggered on the tools' own formats.
    "ORV215": "tests/e2e/test_run_consistency.py::test_the_tools_total_input_tokens_names_both_values",
    "ORV216": "tests/e2e/test_run_consistency.py::test_aiperf_output_tokens_inflated_with_the_summary_edited_to_match_are_refused",
    # Pull-request rules need a base commit: each is triggered on a real git repository.
    "ORV601": "tests/e2e/test_pr.py::test_orv601_a_modified_run_file",
    # a revoked key's runs need real signatures (ssh-keygen), made in the test
    "ORV611": "tests/e2e/test_signing.py::test_a_revoked_keys_runs_stop_counting_in_the_gate_and_on_the_next_boards",
    "ORV602": "tests/e2e/test_pr.py::test_orv602_a_renamed_recipe",
    "ORV603": "tests/e2e/test_pr.py::test_orv603_a_changed_claim_without_a_new_run",
    "ORV604": "tests/e2e/test_pr.py::test_orv604_a_stray_file_under_runs_replaces_orv107",
    "ORV605": "tests/e2e/test_pr.py::test_orv605_a_provenance_block_added_to_an_existing_recipe",
    "ORV606": "tests/e2e/test_pr.py::test_orv606_changes_outside_recipes_and_runs_need_review_but_do_not_fail",
    # Quality runs are built from real lm-eval output (tests/fixtures/lmeval/), forged per test.
    "ORV230": "tests/unit/test_quality.py::test_a_raised_headline_in_a_stored_run_is_orv230",
    "ORV231": "tests/unit/test_quality.py::test_values_flipped_to_correct_are_caught_by_rescoring",
    "ORV232": "tests/unit/test_quality.py::test_a_limit_run_relabelled_as_full_is_refused",
    "ORV233": "tests/unit/test_quality.py::test_task_hashes_that_do_not_hash_the_samples_are_refused",
    "ORV235": "tests/unit/test_quality.py::test_a_run_of_another_checkpoint_is_refused_and_reported",
    "ORV236": "tests/unit/test_quality.py::test_below_warns_with_the_ratio_caps_at_t1_and_stays_marked_on_the_board",
    "ORV237": "tests/unit/test_quality.py::test_an_unscored_task_config_is_orv237",
    "ORV238": "tests/unit/test_quality.py::test_an_unreferenced_quality_run_and_a_dangling_reference_are_orv238",
    "ORV620": "tests/unit/test_quality.py::test_changing_a_quality_gate_in_a_pull_request_needs_a_waiver",
    "ORV621": "tests/unit/test_protocols.py::test_a_pull_request_editing_a_convergence_reference_needs_a_waiver",
    "ORV607": "tests/e2e/test_signing.py::test_pr_changing_measurers_needs_a_waiver_and_a_key_change_is_its_own_finding",
    "ORV608": "tests/e2e/test_signing.py::test_pr_changing_measurers_needs_a_waiver_and_a_key_change_is_its_own_finding",
    "ORV609": "tests/e2e/test_clean_check.py::test_a_hand_forged_tier_fails_the_gate",
    # Signatures are made with keys generated in the test (no private key is ever committed).
    "ORV220": "tests/e2e/test_signing.py::test_tampered_signature_is_orv220",
    "ORV221": "tests/e2e/test_signing.py::test_wrong_namespace_is_orv221",
    "ORV222": "tests/e2e/test_signing.py::test_unregistered_key_is_orv222",
    "ORV223": "tests/e2e/test_signing.py::test_one_measurer_signing_both_runs_is_not_a_reproduction",
    # Identity: tool outputs converted with and without add-run's gate, against edited catalogs.
    "ORV226": "tests/unit/test_identity.py::test_llama_output_on_a_qwen_recipe_is_an_error",
    "ORV227": "tests/unit/test_identity.py::test_a_small_models_megatron_log_on_a_27b_recipe_is_an_error",
    "ORV305": "tests/unit/test_independence.py::test_same_measured_at_is_orv305_and_not_a_reproduction",
}


def expected_lines(case: Path) -> list[str]:
    lines = (case / "expected.txt").read_text(encoding="utf-8").splitlines()
    return sorted(line.strip() for line in lines if line.strip() and not line.startswith("#"))


@pytest.mark.parametrize("case", CASE_DIRS, ids=[p.name for p in CASE_DIRS])
def test_golden_case(case: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "registry", case)
    result = run(Config(root=str(root), skip_boards=True))
    got = sorted(f"{d.code} {d.path}:{d.line}" for d in result.diagnostics)
    assert got == expected_lines(case)
    for d in result.diagnostics:
        assert d.hint, f"{d.code} at {d.path}:{d.line} has no hint"

    code = main(["check", "--root", str(root), "--format", "json"])
    printed = json.loads(capsys.readouterr().out)
    cli_got = sorted(f"{f['code']} {f['path']}:{f['line']}" for f in printed["findings"])
    assert cli_got == got
    assert code == (1 if result.errors else 0)


def test_every_code_is_documented_and_triggered() -> None:
    triggered = {line.split()[0] for case in CASE_DIRS for line in expected_lines(case)}
    for code, entry in all_checks().items():
        assert len(entry.doc) > 40, f"{code} has no documentation"
        assert code in triggered or code in COVERED_ELSEWHERE, f"{code} has no golden case that triggers it"


def test_each_code_covered_elsewhere_names_a_test_that_exists() -> None:
    """A renamed or moved test must not leave its code pointing at nothing (the list above is only prose otherwise)."""
    for code, node in COVERED_ELSEWHERE.items():
        path, name = node.split("::")
        source = REPO / path
        assert source.is_file(), f"{code}: {path} does not exist"
        assert f"def {name}(" in source.read_text(encoding="utf-8"), f"{code}: {path} has no {name}"

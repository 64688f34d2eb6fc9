"""Pull-request findings land where the change is (issue 12): on the file the pull request added
or moved, never on untouched base files. Real git repositories in temporary folders."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.testing.checking import check, found, line_of
from tests.testing.factories import recipe_text, registry_repo
from tests.testing.git import commit_all, git
from tests.testing.registry import write

pytestmark = pytest.mark.git

GLM = "recipes/inference/glm-5.3-flash"


def copy_recipe(rid: str, count: int, decode: float = 53.0) -> str:
    return (
        f"id: {rid}\nkind: inference\nmodel: glm-5.3-flash\nhardware: {{gpu: h100, count: {count}}}\n"
        f'author: a\nmeasured: "2026-10-18"\nsoftware:\n  engine: {{name: vllm, version: "0.11.0"}}\n'
        f"quant: fp8\nserving: {{tp: {count}, concurrency: 1}}\nclaimed: {{decode_tok_s: {decode}}}\nruns: []\n"
        "workload: chat-1000-100\n"
    )


def base_with_copies(tmp_path: Path, counts: tuple[int, ...]) -> Path:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    for count in counts:
        rid = f"glm-5-3-flash-h100-fp8-tp{count}"
        write(repo, f"{GLM}/{rid}.yaml", copy_recipe(rid, count))
    commit_all(repo, "copies on main")
    git(repo, "checkout", "-q", "-B", "pr")
    return repo


def test_a_copy_added_before_the_others_in_path_order_is_reported_on_the_added_file(tmp_path: Path) -> None:
    repo = base_with_copies(tmp_path, (1, 2, 3, 4))
    added = f"{GLM}/glm-5-3-flash-h100-fp8-a-tp8.yaml"  # sorts before every base copy
    write(repo, added, copy_recipe("glm-5-3-flash-h100-fp8-a-tp8", 8))
    commit_all(repo, "an 8x copy")
    evaluation = check(repo)
    assert found(evaluation) == [f"ORV303 {added}:{line_of(repo, added, 'claimed:')}"]
    # the four base copies keep the warnings they had on the base: not counted again
    assert sorted(d.path for d in evaluation.pre_existing if d.code == "ORV303") == [
        f"{GLM}/glm-5-3-flash-h100-fp8-tp{n}.yaml" for n in (1, 2, 3, 4)
    ]


def test_a_base_files_silence_never_becomes_a_new_finding(tmp_path: Path) -> None:
    repo = base_with_copies(tmp_path, (1,))  # one recipe: no copy, no finding on the base
    added = f"{GLM}/glm-5-3-flash-h100-fp8-a-tp8.yaml"
    write(repo, added, copy_recipe("glm-5-3-flash-h100-fp8-a-tp8", 8))
    commit_all(repo, "an 8x copy")
    assert found(check(repo)) == [f"ORV303 {added}:{line_of(repo, added, 'claimed:')}"]


def test_a_copy_added_after_the_others_is_reported_on_the_added_file_too(tmp_path: Path) -> None:
    repo = base_with_copies(tmp_path, (1, 2))
    added = f"{GLM}/glm-5-3-flash-h100-fp8-tp8.yaml"
    write(repo, added, copy_recipe("glm-5-3-flash-h100-fp8-tp8", 8))
    commit_all(repo, "an 8x copy")
    assert found(check(repo)) == [f"ORV303 {added}:{line_of(repo, added, 'claimed:')}"]


def test_renaming_a_legacy_recipe_is_orv602_on_the_new_id_line_and_not_orv605(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    old = "recipes/training/qwen3.8-27b/qwen3-8-27b-legacy.yaml"
    write(
        repo,
        old,
        recipe_text(
            "qwen3-8-27b-legacy", layout="tp4-pp1-dp2", extra="provenance: {source: 000_1e2c7c041290fe1e.txt, row: 3}\n"
        ),
    )
    commit_all(repo, "imported")
    git(repo, "checkout", "-q", "-B", "pr")
    new = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp4-pp1-dp2-legacy.yaml"
    git(repo, "mv", old, new)
    write(
        repo,
        new,
        (repo / new)
        .read_text(encoding="utf-8")
        .replace("id: qwen3-8-27b-legacy", "id: qwen3-8-27b-h100-tp4-pp1-dp2-legacy"),
    )
    commit_all(repo, "rename")
    evaluation = check(repo)
    got = found(evaluation)
    assert f"ORV602 {new}:{line_of(repo, new, 'id:')}" in got, got
    assert not [line for line in got if line.startswith("ORV605")], got
    [rename] = [d for d in evaluation.result.diagnostics if d.code == "ORV602"]
    assert old in rename.message and "qwen3-8-27b-h100-tp4-pp1-dp2-legacy" in rename.message


def test_a_rename_that_adds_provenance_is_still_orv605(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    old = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
    new = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2-offload.yaml"
    git(repo, "mv", old, new)
    write(
        repo,
        new,
        (repo / new)
        .read_text(encoding="utf-8")
        .replace("id: qwen3-8-27b-h100-tp1-pp4-dp2", "id: qwen3-8-27b-h100-tp1-pp4-dp2-offload")
        + "provenance: {source: 000_1e2c7c041290fe1e.txt}\n",
    )
    commit_all(repo, "rename and claim legacy grace")
    got = found(check(repo))
    assert f"ORV605 {new}:{line_of(repo, new, 'provenance:')}" in got and f"ORV602 {new}:1" in got, got


def test_an_unrelated_deletion_and_addition_are_not_a_rename(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    old = "recipes/training/qwen3.8-27b/qwen3-8-27b-h100-tp1-pp4-dp2.yaml"
    git(repo, "rm", "-q", old)
    added = f"{GLM}/glm-5-3-flash-h100-fp8-tp1.yaml"
    write(repo, added, copy_recipe("glm-5-3-flash-h100-fp8-tp1", 1))
    commit_all(repo, "replace")
    assert f"ORV602 {old}:1" in found(check(repo))

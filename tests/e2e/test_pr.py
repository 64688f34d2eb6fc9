"""Pull-request rules (ORV6xx) on real git repositories in temporary folders; git is never mocked.

Each test builds a registry repository with a `main` branch, branches off as a contributor would,
changes files, commits, and runs `orv check --base main` through the engine and the CLI.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.testing.checking import check, found, line_of
from tests.testing.factories import (
    add_training_run,
    existing_run,
    h100_training_run,
    recipe_text,
    registry_repo,
    run_path,
    training_recipe_path,
)
from tests.testing.git import commit_all, git
from tests.testing.registry import make_registry, write
from validator.cli import main
from validator.registry.store import store_run_document


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return registry_repo(tmp_path)


# --------------------------------------------------------------------------- the scripted pull request


def commit_boards_on_main(repo: Path) -> None:
    """main gains its generated boards (as the boards workflow does); the contributor branch starts there."""
    git(repo, "checkout", "-q", "main")
    assert main(["boards", "--root", str(repo)]) == 0
    commit_all(repo, "boards")
    git(repo, "checkout", "-q", "-B", "pr", "main")


@pytest.mark.git
def test_a_contributor_adding_a_valid_recipe_and_run_passes(
    repo: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    commit_boards_on_main(repo)
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "add a TP2 PP2 recipe with its run")
    assert found(check(repo)) == []
    summary, outputs = tmp_path / "summary.md", tmp_path / "outputs.txt"
    code = main(
        [
            "check",
            "--root",
            str(repo),
            "--base",
            "main",
            "--format",
            "github",
            "--summary",
            str(summary),
            "--github-output",
            str(outputs),
        ]
    )
    assert code == 0
    assert "::error" not in capsys.readouterr().out
    text = summary.read_text(encoding="utf-8")
    assert "the pull request passes" in text
    assert "| `qwen3-8-27b-h100-tp2-pp2-dp2` | new | T" in text
    assert "| 1 of 2 |" in text  # the faster recipe ranks first in its model–GPU pair
    assert "| `qwen3-8-27b-h100-tp1-pp4-dp2` | moved |" in text and "1 of 1 → 2 of 2" in text
    values = dict(line.split("=", 1) for line in outputs.read_text(encoding="utf-8").splitlines())
    assert values["errors"] == "0"
    assert json.loads(values["tiers"]).keys() == {"qwen3-8-27b-h100-tp2-pp2-dp2"}


@pytest.mark.git
def test_the_summary_reads_the_bases_committed_boards_instead_of_checking_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = make_registry(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    digest = add_training_run(repo, 1480.4)
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2"),
        recipe_text("qwen3-8-27b-h100-tp1-pp4-dp2", runs=(digest,)),
    )
    commit_all(repo, "data")
    assert main(["boards", "--root", str(repo)]) == 0
    commit_all(repo, "boards")
    git(repo, "checkout", "-q", "-b", "pr")
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "a faster layout")

    from validator.pr import base
    from validator.report import summary

    def no_second_check(change: Any) -> Any:
        raise AssertionError("the base was checked although its boards are committed")

    monkeypatch.setattr(base, "check_base", no_second_check)
    for neighbourhood in (True, False):
        report = summary.build(check(repo, neighbourhood=neighbourhood))
        changes = {c.recipe: (c.change, c.rank, c.rank_of) for c in report.delta or ()}
        assert changes == {
            "qwen3-8-27b-h100-tp2-pp2-dp2": ("new", 1, 2),
            "qwen3-8-27b-h100-tp1-pp4-dp2": ("moved", 2, 2),
        }


@pytest.mark.git
def test_the_summary_reads_only_the_touched_models_boards_from_the_base(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The base's boards are split (boards/index.json, boards/models/, boards/standings/): a pull request that
    adds a recipe of one model reads the index and that model's standings, never its whole part nor another
    model's file; the delta is a full check's. A base whose boards predate standings is read from the part."""
    from tests.testing.factories import inference_recipe, write_recipe
    from validator.git.diff import BaseTree
    from validator.report import summary

    repo = make_registry(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    digest = add_training_run(repo, 1480.4)
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2"),
        recipe_text("qwen3-8-27b-h100-tp1-pp4-dp2", runs=(digest,)),
    )
    write_recipe(repo, inference_recipe("other-model"))  # a second model on the boards
    commit_all(repo, "data")
    assert main(["boards", "--root", str(repo)]) == 0
    commit_all(repo, "boards")
    models = sorted(p.name for p in (repo / "boards" / "models").glob("*.json"))  # manifests; chunks in folders
    assert len(models) == 2 and "qwen3.8-27b.json" in models
    git(repo, "checkout", "-q", "-b", "pr")
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "a faster layout")

    read: list[str] = []
    original = BaseTree.read

    def spy(self: Any, path: str) -> Any:
        read.append(path)
        return original(self, path)

    monkeypatch.setattr(BaseTree, "read", spy)
    evaluation = check(repo, base="main")
    assert evaluation.partial
    partial = summary.build(evaluation)
    assert [p for p in read if p.startswith("boards/") and not p.startswith("boards/keys")] == [
        "boards/index.json",
        "boards/standings/qwen3.8-27b.json",
    ]
    whole = summary.build(check(repo, neighbourhood=False))
    assert partial.delta == whole.delta and partial.delta
    assert {c.recipe: c.change for c in partial.delta} == {
        "qwen3-8-27b-h100-tp2-pp2-dp2": "new",
        "qwen3-8-27b-h100-tp1-pp4-dp2": "moved",
    }
    moved = next(c for c in partial.delta if c.change == "moved")
    assert (moved.base_rank, moved.rank, moved.rank_of) == (1, 2, 2)

    # a merge base whose boards were written before standings existed: the model's part stands in
    git(repo, "checkout", "-q", "main")
    git(repo, "rm", "-q", "-r", "boards/standings")
    commit_all(repo, "boards from before standings")
    git(repo, "checkout", "-q", "pr")
    git(repo, "rebase", "-q", "main")
    read.clear()
    older = summary.build(check(repo, base="main"))
    assert [p for p in read if p.startswith("boards/") and not p.startswith("boards/keys")] == [
        "boards/index.json",
        "boards/standings/qwen3.8-27b.json",
        "boards/models/qwen3.8-27b.json",  # its manifest, then its chunk
        "boards/models/qwen3.8-27b/0.json",
    ]
    assert older.delta == partial.delta


@pytest.mark.git
def test_without_boards_on_the_base_the_summary_says_so_and_checks_only_the_neighbourhood(
    repo: Path, tmp_path: Path
) -> None:
    from validator.report import summary

    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "a faster layout")
    evaluation = check(repo)
    assert evaluation.partial  # the Action's check stays in pull-request mode
    report = summary.build(evaluation)
    assert report.delta is None
    assert (
        "has no readable boards (boards/index.json and the model files it lists), so board changes are not shown"
        in summary.render_markdown(report)
    )


@pytest.mark.git
def test_the_delta_from_committed_boards_equals_the_delta_of_a_full_check(repo: Path) -> None:
    """Pull-request mode patches the base's committed boards with the changed rows and reranks their
    groups; a full check builds both documents whole. Both give the same board changes."""
    from validator.report import summary

    for tok, layout, who in ((1500.0, "tp8-pp1-dp1", "lab-z"), (1450.0, "tp4-pp1-dp2", "lab-y")):
        rid = f"qwen3-8-27b-h100-{layout}"
        digest = add_training_run(repo, tok, measured_by=who, layout=layout)
        write(repo, training_recipe_path(rid), recipe_text(rid, claimed=tok, runs=(digest,), layout=layout))
    commit_all(repo, "more recipes on main")
    git(repo, "branch", "-f", "main", "HEAD")
    commit_boards_on_main(repo)
    os.remove(repo / training_recipe_path("qwen3-8-27b-h100-tp8-pp1-dp1"))
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "a faster layout; the TP8 recipe withdrawn")
    partial = check(repo, neighbourhood=True)
    whole = check(repo, neighbourhood=False)
    assert partial.partial and not whole.partial
    fast, full = summary.build(partial).delta, summary.build(whole).delta
    assert fast is not None and fast == full
    changes = {c.recipe: (c.change, c.rank, c.rank_of) for c in fast}
    assert changes["qwen3-8-27b-h100-tp2-pp2-dp2"] == ("new", 1, 3)
    assert changes["qwen3-8-27b-h100-tp8-pp1-dp1"][0] == "removed"


@pytest.mark.git
def test_a_removed_run_moves_its_unchanged_recipe_in_both_modes(repo: Path) -> None:
    from validator.report import summary

    commit_boards_on_main(repo)
    git(repo, "rm", "-q", existing_run(repo))
    commit_all(repo, "the run behind the only recipe is withdrawn")
    partial, whole = check(repo, neighbourhood=True), check(repo, neighbourhood=False)
    assert partial.partial
    fast, full = summary.build(partial).delta, summary.build(whole).delta
    assert fast == full
    assert [(c.recipe, c.change, c.base_tier, c.tier) for c in fast or ()] == [
        ("qwen3-8-27b-h100-tp1-pp4-dp2", "moved", "T2", "T0")
    ]


@pytest.mark.git
def test_the_base_assembled_from_unchanged_files_equals_a_full_check_of_the_base(repo: Path) -> None:
    from validator.pr.base import check_base, check_base_exported

    # Findings already on main (an orphan run), then a PR that edits, deletes and adds files.
    add_training_run(repo, 1500.0, measured_by="lab-z", layout="tp8-pp1-dp1")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp4-pp1-dp2"),
        recipe_text("qwen3-8-27b-h100-tp4-pp1-dp2", claimed=1400.0, layout="tp4-pp1-dp2", version="latest"),
    )
    commit_all(repo, "main has problems")
    git(repo, "branch", "-f", "main", "HEAD")
    rel = training_recipe_path("qwen3-8-27b-h100-tp4-pp1-dp2")
    write(repo, rel, (repo / rel).read_text(encoding="utf-8").replace("1400.0", "1410.0"))
    os.remove(repo / run_path(existing_run(repo).split("/")[-1][:-5]))
    digest = add_training_run(repo, 1612.0, measured_by="lab-b", layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "the pull request")
    change = check(repo, neighbourhood=False).change
    fast, full = check_base(change), check_base_exported(change)
    assert [(d.code, d.path, d.message) for d in fast.diagnostics] == [
        (d.code, d.path, d.message) for d in full.diagnostics
    ]
    assert {d.code for d in full.diagnostics} >= {"ORV204", "ORV402"}
    assert sorted(e.path for e in fast.snapshot.recipes) == sorted(e.path for e in full.snapshot.recipes)
    assert sorted(fast.snapshot.runs) == sorted(full.snapshot.runs)


@pytest.mark.git
def test_without_base_the_pr_rules_do_not_run(repo: Path) -> None:
    os.remove(repo / existing_run(repo))
    assert not [d for d in check(repo, base=None).result.diagnostics if d.code.startswith("ORV6")]


# --------------------------------------------------------------------------- ORV601


@pytest.mark.git
def test_orv601_a_modified_run_file(repo: Path) -> None:
    rel = existing_run(repo)
    data = json.loads((repo / rel).read_bytes())
    data["summary"]["tokens_per_s_per_gpu"] = 1700.0
    (repo / rel).write_text(json.dumps(data, sort_keys=True, separators=(",", ":")), encoding="utf-8")
    commit_all(repo, "tweak the run")
    assert f"ORV601 {rel}:1" in found(check(repo))


@pytest.mark.git
def test_orv601_a_deleted_run_file(repo: Path) -> None:
    rel = existing_run(repo)
    git(repo, "rm", "-q", rel)
    commit_all(repo, "drop the run")
    result = check(repo).result
    assert f"ORV601 {rel}:1" in found(check(repo))
    assert result.exit_code == 1


@pytest.mark.git
def test_orv601_an_uncommitted_edit_in_the_working_tree(repo: Path) -> None:
    rel = existing_run(repo)
    with open(repo / rel, "ab") as fh:
        fh.write(b" ")
    assert f"ORV601 {rel}:1" in found(check(repo))


# --------------------------------------------------------------------------- ORV602


@pytest.mark.git
def test_orv602_a_renamed_recipe(repo: Path) -> None:
    old = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    text = (repo / old).read_text(encoding="utf-8").replace("qwen3-8-27b-h100-tp1-pp4-dp2", "qwen3-8-27b-offload")
    git(repo, "rm", "-q", old)
    write(repo, training_recipe_path("qwen3-8-27b-offload"), text)
    commit_all(repo, "rename")
    new = training_recipe_path("qwen3-8-27b-offload")  # annotated on the new file's `id:` line, which the diff shows
    assert found(check(repo)) == [f"ORV602 {new}:1"]


@pytest.mark.git
def test_orv602_an_id_changed_in_place_points_at_the_id(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    write(
        repo,
        rel,
        (repo / rel).read_text(encoding="utf-8").replace("id: qwen3-8-27b-h100-tp1-pp4-dp2", "id: qwen3-8-27b-other"),
    )
    commit_all(repo, "new id")
    got = found(check(repo))
    assert f"ORV602 {rel}:1" in got  # line 1 is where `id:` is
    assert f"ORV106 {rel}:1" in got  # the edited file's own problem counts too


@pytest.mark.git
def test_orv602_a_removed_recipe_can_be_waived_by_a_maintainer(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    git(repo, "rm", "-q", rel)
    commit_all(repo, "retire the recipe")
    assert f"ORV602 {rel}:1" in found(check(repo))
    waived = check(repo, waive=("ORV602",))
    assert [d.code for d in waived.waived] == ["ORV602"]
    assert not [d for d in waived.result.diagnostics if d.code == "ORV602"]
    assert any("ORV602 waived" in note for note in waived.result.notes)


# --------------------------------------------------------------------------- ORV603


@pytest.mark.git
def test_orv603_a_changed_claim_without_a_new_run(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    write(repo, rel, (repo / rel).read_text(encoding="utf-8").replace("1480.4", "1550.0"))
    commit_all(repo, "better number")
    assert f"ORV603 {rel}:{line_of(repo, rel, 'claimed:')}" in found(check(repo))


@pytest.mark.git
def test_a_changed_claim_with_a_new_run_on_record_is_not_orv603(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    old_digest = existing_run(repo).rsplit("/", 1)[1].removesuffix(".json")
    new_digest = add_training_run(repo, 1550.0, measured_by="lab-b")
    write(repo, rel, recipe_text("qwen3-8-27b-h100-tp1-pp4-dp2", claimed=1550.0, runs=(old_digest, new_digest)))
    commit_all(repo, "new claim with its run")
    assert not [c for c in found(check(repo)) if c.startswith("ORV603")]


@pytest.mark.git
def test_a_new_reference_to_a_missing_run_does_not_satisfy_orv603(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    old_digest = existing_run(repo).rsplit("/", 1)[1].removesuffix(".json")
    write(repo, rel, recipe_text("qwen3-8-27b-h100-tp1-pp4-dp2", claimed=1550.0, runs=(old_digest, "ab" * 32)))
    commit_all(repo, "claim with a run that is not committed")
    assert any(c.startswith("ORV603") for c in found(check(repo)))


@pytest.mark.git
def test_an_edit_that_keeps_the_claim_is_not_orv603(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    write(
        repo,
        rel,
        (repo / rel)
        .read_text(encoding="utf-8")
        .replace("1480.4", "1480.40")
        .replace("CPU optimizer offload.", "CPU optimizer offload, measured twice."),
    )
    commit_all(repo, "notes")
    assert found(check(repo)) == []


# --------------------------------------------------------------------------- ORV604


@pytest.mark.git
def test_orv604_a_stray_file_under_runs_replaces_orv107(repo: Path) -> None:
    write(repo, "runs/ab/notes.txt", "raw log\n")
    commit_all(repo, "notes")
    assert found(check(repo)) == ["ORV604 runs/ab/notes.txt:1"]
    assert "ORV107 runs/ab/notes.txt:1" in found(check(repo, base=None))  # the tree rule, without --base


@pytest.mark.git
def test_orv604_a_symlink_inside_the_registry_replaces_orv114(repo: Path) -> None:
    os.symlink("qwen3-8-27b-h100-tp1-pp4-dp2.yaml", repo / training_recipe_path("qwen3-8-27b-link"))
    commit_all(repo, "link")
    assert found(check(repo)) == [f"ORV604 {training_recipe_path('qwen3-8-27b-link')}:1"]


@pytest.mark.git
def test_orv604_a_symlink_outside_the_registry_folders(repo: Path) -> None:
    (repo / "docs").mkdir()
    os.symlink("/etc/passwd", repo / "docs" / "passwd")
    commit_all(repo, "link")
    evaluation = check(repo)
    assert found(evaluation) == ["ORV604 docs/passwd:1"]  # not also ORV606: one finding per file
    assert "/etc/passwd" in evaluation.result.diagnostics[0].message


@pytest.mark.git
def test_orv604_a_submodule(repo: Path, tmp_path: Path) -> None:
    other = tmp_path / "other"
    other.mkdir()
    git(other, "init", "-q", "-b", "main")
    commit_all(other, "empty")
    git(repo, "-c", "protocol.file.allow=always", "submodule", "-q", "add", str(other), "vendor/other")
    commit_all(repo, "submodule")
    assert "ORV604 vendor/other:1" in found(check(repo))


# --------------------------------------------------------------------------- ORV605


@pytest.mark.git
def test_orv605_a_provenance_block_added_to_an_existing_recipe(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    write(
        repo, rel, (repo / rel).read_text(encoding="utf-8") + "provenance: {source: 000_1e2c7c041290fe1e.txt, row: 3}\n"
    )
    commit_all(repo, "claim legacy grace")
    assert found(check(repo)) == [f"ORV605 {rel}:{line_of(repo, rel, 'provenance:')}"]


@pytest.mark.git
def test_orv605_a_new_recipe_with_provenance(repo: Path) -> None:
    rel = training_recipe_path("qwen3-8-27b-legacy")
    write(
        repo,
        rel,
        recipe_text(
            "qwen3-8-27b-legacy", extra="provenance: {source: 000_1e2c7c041290fe1e.txt}\n", layout="tp4-pp1-dp2"
        ),
    )
    commit_all(repo, "legacy")
    assert f"ORV605 {rel}:{line_of(repo, rel, 'provenance:')}" in found(check(repo))


@pytest.mark.git
def test_orv605_a_run_file_with_provenance(repo: Path) -> None:
    document = h100_training_run(1490.0)
    document["provenance"] = {"source": "004_cbf1754cfd687db7.txt"}
    digest = store_run_document(str(repo), document).digest
    commit_all(repo, "legacy run")
    assert f"ORV605 {run_path(digest)}:1" in found(check(repo))


@pytest.mark.git
def test_editing_a_legacy_recipe_without_touching_its_provenance_is_allowed(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    rel = training_recipe_path("qwen3-8-27b-legacy")
    write(
        repo,
        rel,
        recipe_text(
            "qwen3-8-27b-legacy", extra="provenance: {source: 000_1e2c7c041290fe1e.txt, row: 4}\n", layout="tp4-pp1-dp2"
        ),
    )
    commit_all(repo, "import (by orv import, on main)")
    git(repo, "checkout", "-q", "-b", "pin-legacy")
    write(
        repo, rel, (repo / rel).read_text(encoding="utf-8").replace("notes: CPU optimizer offload.", "notes: pinned.")
    )
    commit_all(repo, "contributor edits the notes")
    assert not [c for c in found(check(repo)) if c.startswith("ORV605")]


# --------------------------------------------------------------------------- ORV606


@pytest.mark.git
def test_orv606_changes_outside_recipes_and_runs_need_review_but_do_not_fail(repo: Path) -> None:
    write(repo, "README.md", "# registry, now with more words\n")
    write(repo, "validator/extra.py", "x = 1\n")
    commit_all(repo, "misc")
    evaluation = check(repo)
    assert found(evaluation) == ["ORV606 README.md:1", "ORV606 validator/extra.py:1"]
    assert evaluation.result.exit_code == 0  # warnings: a maintainer decides
    messages = {d.path: d.message for d in evaluation.result.diagnostics}
    assert "own version" in messages["validator/extra.py"]


@pytest.mark.git
def test_orv606_on_the_catalog_says_what_docs_contributing_says(repo: Path) -> None:
    """A model or GPU appended for the pull request's own recipe belongs in it (docs/contributing.md, "Review"):
    the hint must not tell the contributor to move it to a pull request of its own."""
    with open(repo / "catalog/hardware.yaml", "a", encoding="utf-8") as fh:
        fh.write("# a comment, so the catalog changes\n")
    commit_all(repo, "catalog")
    evaluation = check(repo)
    assert found(evaluation) == ["ORV606 catalog/hardware.yaml:1"]
    hint = evaluation.result.diagnostics[0].hint
    assert "a new model or GPU for this pull request's recipe belongs here" in hint
    assert "a change to an existing entry, in a pull request of its own" in hint


# --------------------------------------------------------------------------- what a PR is failed for


@pytest.mark.git
def test_problems_already_on_the_base_branch_are_not_the_prs(tmp_path: Path) -> None:
    repo = registry_repo(tmp_path)
    git(repo, "checkout", "-q", "main")
    broken = training_recipe_path("qwen3-8-27b-unquoted")
    write(
        repo,
        broken,
        recipe_text("qwen3-8-27b-unquoted", layout="tp8-pp1-dp1").replace('version: "0.30.0"', "version: 0.30"),
    )
    commit_all(repo, "a problem that slipped onto main")
    git(repo, "checkout", "-q", "-b", "contrib")
    digest = add_training_run(repo, 1612.0, layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-new"),
        recipe_text("qwen3-8-27b-new", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "a good contribution")
    assert f"ORV105 {broken}:{line_of(repo, broken, 'version:')}" in found(check(repo, base=None))
    assert found(check(repo)) == []  # the broken recipe shares nothing with the contribution
    evaluation = check(repo, neighbourhood=False)
    assert found(evaluation) == []
    assert [d.path for d in evaluation.pre_existing] == [broken]


@pytest.mark.git
def test_a_cross_file_problem_the_pr_causes_on_an_unchanged_file_counts(repo: Path) -> None:
    catalog = repo / "catalog" / "models.yaml"
    text = catalog.read_text(encoding="utf-8")
    catalog.write_text(text.replace("qwen3.8-27b:", "qwen3.8-27b-renamed:"), encoding="utf-8")
    commit_all(repo, "rename a model in the catalog")
    got = found(check(repo))
    unchanged = training_recipe_path("qwen3-8-27b-h100-tp1-pp4-dp2")
    assert f"ORV115 {unchanged}:{line_of(repo, unchanged, 'model:')}" in got
    assert "ORV606 catalog/models.yaml:1" in got


@pytest.mark.git
def test_the_merge_base_not_the_tip_of_main_is_the_reference(repo: Path) -> None:
    digest = add_training_run(repo, 1612.0, layout="tp2-pp2-dp2")
    write(
        repo,
        training_recipe_path("qwen3-8-27b-new"),
        recipe_text("qwen3-8-27b-new", claimed=1612.0, runs=(digest,), layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "contribution")
    git(repo, "checkout", "-q", "main")
    write(repo, "catalog/notes.txt", "maintainers moved on\n")  # main changes after the branch point
    write(repo, "README.md", "# changed on main\n")
    commit_all(repo, "main moves on")
    git(repo, "checkout", "-q", "pr")
    evaluation = check(repo)
    assert found(evaluation) == []  # main's later changes are not the pull request's
    assert evaluation.change is not None
    assert [c.path for c in evaluation.change.files] == [training_recipe_path("qwen3-8-27b-new"), run_path(digest)]


@pytest.mark.git
def test_untracked_files_count_as_added(repo: Path) -> None:
    write(repo, "runs/zz/stray.json", "{}")
    assert found(check(repo)) == ["ORV604 runs/zz/stray.json:1"]


@pytest.mark.git
def test_a_registry_in_a_subfolder_of_the_repository(tmp_path: Path) -> None:
    outer = tmp_path / "outer"
    repo = make_registry(outer / "registry")
    git(outer, "init", "-q", "-b", "main")
    write(outer, "tooling/readme.txt", "outside the registry\n")
    digest = add_training_run(repo, 1480.4)
    write(repo, training_recipe_path("a-recipe"), recipe_text("a-recipe", runs=(digest,)))
    commit_all(outer, "base")
    git(outer, "checkout", "-q", "-b", "pr")
    os.remove(repo / run_path(digest))
    write(outer, "tooling/readme.txt", "changed, but outside the registry root\n")
    commit_all(outer, "drop a run")
    # Deleting a referenced run also leaves its recipe pointing at nothing (ORV203).
    assert found(check(repo)) == [f"ORV203 {training_recipe_path('a-recipe')}:13", f"ORV601 {run_path(digest)}:1"]


# --------------------------------------------------------------------------- usage errors fail closed


@pytest.mark.git
def test_an_unknown_base_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--root", str(repo), "--base", "no-such-branch"]) == 2
    assert "fetch-depth: 0" in capsys.readouterr().err


def test_base_outside_a_git_repository_is_a_usage_error(registry: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--root", str(registry), "--base", "main"]) == 2
    assert "git repository" in capsys.readouterr().err


@pytest.mark.git
def test_unrelated_histories_have_no_merge_base(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(repo, "checkout", "-q", "--orphan", "elsewhere")
    commit_all(repo, "unrelated root")
    git(repo, "checkout", "-q", "pr")
    assert main(["check", "--root", str(repo), "--base", "elsewhere"]) == 2
    assert "no merge base" in capsys.readouterr().err


@pytest.mark.git
def test_orv900_and_unknown_codes_cannot_be_waived(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--root", str(repo), "--base", "main", "--waive", "ORV900"]) == 2
    assert main(["check", "--root", str(repo), "--base", "main", "--waive", "ORV999"]) == 2
    err = capsys.readouterr().err
    assert "cannot be waived" in err and "no such check code" in err


@pytest.mark.git
def test_wanted_references_after_a_pull_request_agree_in_both_modes(repo: Path) -> None:
    """boards.json's wanted.references as the pull request leaves it: patched from the committed base in
    pull-request mode, built whole in a full check; a recipe of a model with no convergence reference
    joins the list, a withdrawn one leaves it."""
    import yaml

    from validator.boards.delta import base_board_document, board_document_for

    path = repo / "catalog" / "workloads.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    for key in ("reference", "reference_model"):  # no reference recorded: every training recipe waits
        data["workloads"]["sft-8k-gb128-bf16"]["convergence"].pop(key)
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    for layout in ("tp8-pp1-dp1", "tp4-pp1-dp2"):
        rid = f"qwen3-8-27b-h100-{layout}"
        write(repo, training_recipe_path(rid), recipe_text(rid, claimed=1400.0, layout=layout))
    commit_all(repo, "recipes waiting for a reference")
    git(repo, "branch", "-f", "main", "HEAD")
    commit_boards_on_main(repo)
    os.remove(repo / training_recipe_path("qwen3-8-27b-h100-tp8-pp1-dp1"))
    write(
        repo,
        training_recipe_path("qwen3-8-27b-h100-tp2-pp2-dp2"),
        recipe_text("qwen3-8-27b-h100-tp2-pp2-dp2", claimed=1612.0, layout="tp2-pp2-dp2"),
    )
    commit_all(repo, "one withdrawn, one added")
    lists = []
    for neighbourhood in (True, False):
        evaluation = check(repo, neighbourhood=neighbourhood)
        base = base_board_document(evaluation)
        assert base is not None
        lists.append(board_document_for(evaluation, base)["wanted"]["references"])
    assert lists[0] == lists[1]
    (item,) = lists[0]
    assert item["model"] == "qwen3.8-27b" and "qwen3-8-27b-h100-tp2-pp2-dp2" in item["recipes"]
    assert "qwen3-8-27b-h100-tp8-pp1-dp1" not in item["recipes"] and "qwen3-8-27b-h100-tp4-pp1-dp2" in item["recipes"]


# --------------------------------------------------------------------------- what would be pushed (issue 52)


@pytest.mark.git
def test_check_base_warns_of_uncommitted_registry_files_with_the_git_add_to_run(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--base judges the working tree; a change under catalog/ not yet committed would pass here and be
    missing from the pull request, so orv says so and names the `git add`. Committed: no warning."""
    git(repo, "switch", "-q", "-c", "feature")
    hardware = repo / "catalog" / "hardware.yaml"
    hardware.write_text(hardware.read_text(encoding="utf-8") + "# a note\n", encoding="utf-8")
    (repo / "recipes" / "draft.txt").write_text("untracked\n", encoding="utf-8")
    main(["check", "--root", str(repo), "--base", "main"])
    err = capsys.readouterr().err
    assert "2 file(s) under recipes/, runs/, catalog/, measurers/ are not committed" in err
    assert "catalog/hardware.yaml" in err and "recipes/draft.txt" in err
    assert "Run `git add recipes catalog && git commit`" in err
    (repo / "recipes" / "draft.txt").unlink()
    commit_all(repo, "catalog note")
    main(["check", "--root", str(repo), "--base", "main"])
    assert "not committed" not in capsys.readouterr().err


@pytest.mark.git
def test_the_generated_site_folder_is_ignored_by_this_repositorys_gitignore(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`orv site _site` (docs/site.md) writes generated output into the clone; this repository's .gitignore
    keeps it out of the pull request (no ORV606 per page). Without it, the same folder is reported."""
    from tests.testing.paths import REPO

    git(repo, "switch", "-q", "-c", "feature")
    (repo / "_site").mkdir()
    (repo / "_site" / "index.html").write_text("<html></html>\n", encoding="utf-8")
    main(["check", "--root", str(repo), "--base", "main", "--format", "json", "--show-all"])
    assert "ORV606" in {f["code"] for f in json.loads(capsys.readouterr().out)["findings"]}
    (repo / ".gitignore").write_text((REPO / ".gitignore").read_text(encoding="utf-8"), encoding="utf-8")
    commit_all(repo, "the repository's .gitignore")
    main(["check", "--root", str(repo), "--base", "main", "--format", "json", "--show-all"])
    found = json.loads(capsys.readouterr().out)["findings"]
    assert not [f for f in found if f["path"].startswith("_site/")], found

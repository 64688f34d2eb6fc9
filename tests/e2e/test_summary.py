"""The summary a maintainer merges on (issue 16.2, issue 20.4): scripted pull requests on real git, checked
against the expected Markdown; wanted cells, T2 -> T3, and the size of a 1,000-recipe pull request."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from tests.testing.factories import (
    commit_boards,
    inference_recipe,
    inference_run,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
    write_yaml,
)
from tests.testing.git import commit_all, git
from tests.testing.registry import make_registry
from tests.testing.signing import keygen, measured, register, sign
from tests.testing.sweeps import sweep_registry
from validator.engine.evaluate import Config, evaluate
from validator.report import summary

needs_ssh_keygen = pytest.mark.skipif(shutil.which("ssh-keygen") is None, reason="signing needs ssh-keygen")


def main_branch(tmp_path: Path) -> Path:
    """A registry on `main` whose SFT workload names the protocol's GPUs (H100, H200, B200)."""
    repo = make_registry(tmp_path / "repo")
    git(repo, "init", "-q", "-b", "main")
    data = yaml.safe_load((repo / "catalog" / "workloads.yaml").read_text(encoding="utf-8"))
    data["workloads"]["sft-8k-gb128-bf16"]["gpus"] = ["h100", "h200", "b200"]
    write_yaml(repo, "catalog/workloads.yaml", data)
    return repo


def branch_off(repo: Path) -> None:
    """Commit main's data, then its boards (as the boards workflow does), and branch off as a contributor."""
    commit_all(repo, "main", "2026-10-18T10:00:00+00:00")
    commit_boards(repo)
    git(repo, "checkout", "-q", "-b", "pr")


def pull_request(repo: Path, message: str = "the pull request") -> summary.PullRequestReport:
    commit_all(repo, message, "2026-10-19T10:00:00+00:00")
    # As the Action runs it: pull-request mode on the change's neighbourhood; the board delta comes from
    # the base's committed boards plus the changed entries (validator/boards/delta.py).
    return summary.build(evaluate(Config(root=str(repo), base="main", skip_boards=True)))


EXPECTED = """\
## ✅ orv: the pull request passes

Compared with `main` at merge base `{base}`: 5 changed files, 6 registry files checked.

### Board changes

#### Training board

| Recipe | Change | Tier | Tokens/s/GPU | $/1M tokens | MFU | Against the base | Against the best on its model × GPU | Rank |
|---|---|---|--:|--:|--:|---|---|---|
| `qwen3-8-27b-h100-tp1-pp4-dp2` | moved | T2 [1] | 1,480.4 | $1.29 | 23.0% | figures unchanged | -8.2% vs `qwen3-8-27b-h100-tp2-pp2-dp2` (1,612.0) | 1 of 1 → 2 of 2 |
| `qwen3-8-27b-h100-tp2-pp2-dp2` | new | T2 [2] | 1,612.0 | $1.19 | 25.0% | new | +8.9% vs `qwen3-8-27b-h100-tp1-pp4-dp2` (1,480.4) | 1 of 2 |

#### Inference board (claimed figures where the tier is T0)

| Recipe | Workload | Change | Tier | Decode tok/s | Prefill tok/s | TTFT ms | Against the base | Against the best on its model × GPU × workload | Rank | Quality vs reference |
|---|---|---|---|--:|--:|--:|---|---|---|---|
| `glm-5-3-flash-rtx-3090-x2-w4a16` | 1000/101 | new | T2 [1] [3] | 41.50 | 10,000.0 | 100.0 | new | first for GLM-5.3-Flash on RTX-3090 | 1 of 1 | gsm8k: no-reference |

Why an entry has its tier (what the next tier needs):

- [1] needs two verified runs signed by different registered measurers (unsigned runs reach at most T2)
- [2] needs a second signed run from another registered measurer
- [3] needs verified quality (quant w4a16 is not a published full precision): no-reference, glm-5.3-flash names no usable quality_reference for gsm8k in catalog/models.yaml

#### Evidence

| Recipe | Run file | Tool and version | Measured by | Signed |
|---|---|---|---|---|
| `qwen3-8-27b-h100-tp2-pp2-dp2` | `runs/df/dfe86b19813f…json` | bench 0.8.0 | lab-b | yes, by lab-b |
| `glm-5-3-flash-rtx-3090-x2-w4a16` | `runs/57/57630e8d49b1…json` | bench 0.8.0 | key-2952 | no |
"""


@pytest.mark.git
@needs_ssh_keygen
def test_a_pull_request_adding_a_training_and_an_inference_recipe(tmp_path: Path) -> None:
    repo = main_branch(tmp_path)
    key_a, key_b = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", key_a), ("lab-b", key_b))
    on_main = training_recipe("qwen3-8-27b-h100-tp1-pp4-dp2", 1480.4)
    on_main["runs"] = [store_run(repo, training_run(on_main, measured_by="lab-a"))]
    write_recipe(repo, on_main)
    branch_off(repo)
    faster = training_recipe("qwen3-8-27b-h100-tp2-pp2-dp2", 1612.0, layout={"tp": 2, "pp": 2, "dp": 2})
    signed_run = store_run(repo, training_run(faster, measured_by="lab-b"))
    sign(repo, signed_run, key_b)
    faster["runs"] = [signed_run]
    write_recipe(repo, faster)
    served = inference_recipe("glm-5-3-flash-rtx-3090-x2-w4a16", decode=41.5)
    served["runs"] = [store_run(repo, inference_run(served))]
    write_recipe(repo, served)
    report = pull_request(repo)
    assert report.base_commit is not None
    assert summary.render_markdown(report) == EXPECTED.format(base=report.base_commit[:12])


@pytest.mark.git
def test_the_first_recipe_of_a_wanted_model_fills_its_cell_and_leaves_the_list(tmp_path: Path) -> None:
    repo = main_branch(tmp_path)
    write_recipe(repo, training_recipe("qwen3-8-27b-h100-tp1-pp4-dp2", 1480.4))
    branch_off(repo)
    write_recipe(repo, training_recipe("qwen3-8-27b-h200-tp1-pp4-dp2", 2499.5, gpu="h200"))
    write_recipe(
        repo,
        training_recipe(
            "qwen3-5-122b-a10b-h100-tp4-pp2-dp1", 999.7, model="qwen3.5-122b-a10b", layout={"tp": 4, "pp": 2, "dp": 1}
        ),
    )
    report = pull_request(repo)
    assert report.base_board is not None and report.head_board is not None
    assert [m["model"] for m in report.base_board["wanted"]["models"]] == ["qwen3.5-122b-a10b", "glm-5.3-flash"]
    assert [m["model"] for m in report.head_board["wanted"]["models"]] == ["glm-5.3-flash"]
    text = summary.render_markdown(report)
    section = text[text.index("### Board changes") : text.index("#### Training board")]
    assert section == (
        "### Board changes\n\n"
        "- First recipe for **Qwen3.5-122B-A10B on H100** — fills a wanted cell.\n"
        "- First recipe for **Qwen3.8-27B on H200** — fills a wanted cell.\n"
        "- **Qwen3.5-122B-A10B** gets its first training recipe and leaves the wanted list.\n\n"
    )
    assert "| first for Qwen3.8-27B on H200 |" in text


@pytest.mark.git
@needs_ssh_keygen
def test_a_second_signed_run_turns_t2_into_t3_and_the_summary_says_so(tmp_path: Path) -> None:
    repo = main_branch(tmp_path)
    key_a, key_b = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", key_a), ("lab-b", key_b))
    recipe = training_recipe("qwen3-8-27b-h100-tp1-pp4-dp2", 1480.4)
    first = store_run(repo, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", seed=1))
    sign(repo, first, key_a)
    recipe["runs"] = [first]
    write_recipe(repo, recipe)
    branch_off(repo)
    second = store_run(repo, measured(recipe, 1475.0, "lab-b", "2026-10-19T09:00:00Z", seed=2))
    sign(repo, second, key_b)
    recipe["runs"] = [first, second]
    write_recipe(repo, recipe)
    report = pull_request(repo)
    assert report.base_board is not None and report.head_board is not None
    assert [w["recipe"] for w in report.base_board["wanted"]["reproductions"]] == [recipe["id"]]
    assert report.head_board["wanted"]["reproductions"] == []
    text = summary.render_markdown(report)
    assert f"- `{recipe['id']}` is reproduced: T2 → T3.\n" in text
    # the row shows the claim's primary run (lab-a's), not the later reproduction 0.4% away: claims come from one run
    assert f"| `{recipe['id']}` | edited | T2 → T3 | 1,480.4 | " in text
    assert text.count("yes, by lab-") == 2


def _thousand_recipe_pull_request(repo: Path) -> None:
    """500 training and 500 inference recipes, each its own configuration (no run files: T0)."""
    for i in range(500):
        gpu = ("h100", "h200", "b200")[i % 3]
        count = 4 * (i // 3 + 1)
        write_recipe(
            repo,
            training_recipe(
                f"qwen3-8-27b-{gpu}-tp1-pp4-dp{count // 4}-contributed-layout-{i:04d}",
                1000.0 + i,
                gpu=gpu,
                count=count,
                layout={"tp": 1, "pp": 4, "dp": count // 4, "layer_split": [16, 17, 17, 14]},
            ),
        )
        served = inference_recipe(
            f"glm-5-3-flash-rtx-3090-x2-w4a16-served-at-concurrency-{i + 1:04d}", decode=30.0 + i / 10
        )
        served["serving"]["concurrency"] = i + 1
        write_recipe(repo, served)


@pytest.mark.git
def test_a_thousand_recipe_pull_request_stays_well_under_githubs_limit(tmp_path: Path) -> None:
    repo = main_branch(tmp_path)
    write_recipe(repo, training_recipe("qwen3-8-27b-h100-tp2-pp2-dp2", 1480.4, layout={"tp": 2, "pp": 2, "dp": 2}))
    branch_off(repo)
    _thousand_recipe_pull_request(repo)
    report = pull_request(repo)
    assert report.delta is not None and len([c for c in report.delta if c.change == "new"]) == 1000
    text = summary.render_markdown(report)
    size = len(text.encode())
    assert size < summary.SUMMARY_LIMIT // 2, size  # well under 1 MiB, with every entry shown
    assert "more changed entr" not in text
    # evidence is listed for what the pull request brings (new and edited entries), not for moved ones
    assert text.count(" | new | T0") == 1000 and text.count("none: a claim without a run file") == 1000
    assert "### Findings" not in text
    # Half the budget for the board: beyond it, entries are counted and left out, never cut mid-table.
    squeezed = summary.render_markdown(report, budget=2 * 64 * 1024)
    assert len(squeezed.encode()) < 2 * 64 * 1024
    shown = squeezed.count(" | new | T0") + squeezed.count(" | moved | T0")
    assert 0 < shown < 1001 and f"\n{1001 - shown} more changed entries not shown" in squeezed

    def drawn(text: str) -> list[str]:
        return [line.split("`")[1] for line in text.splitlines() if " | new | T0" in line or " | moved | T0" in line]

    assert drawn(squeezed) == drawn(text)[:shown]  # the first entries in table order, none skipped


def test_pre_existing_findings_are_counted_not_listed() -> None:
    from validator.diagnostics import Diagnostic, Result, Severity

    finding = Diagnostic("ORV604", Severity.ERROR, "runs/ab/stray.txt", 1, 1, "a stray file", "remove it")
    report = summary.PullRequestReport(Result((finding,)), (), 7, "main", "a" * 40, (), (), None)
    text = summary.render_markdown(report)
    assert "7 findings already on the base branch not counted against this pull request." in text
    assert text.count("| error | ORV604 |") == 1
    empty = {"boards": {}, "models": [], "wanted": {"models": [], "reproductions": [], "quality": []}}
    with_board = summary.PullRequestReport(Result((finding,)), (), 7, "main", "a" * 40, (), (), (), empty, empty)
    text = summary.render_markdown(with_board)
    assert text.index("### Findings") < text.index("### Board changes")  # findings first
    assert text.endswith("### Board changes\n\nNo entry's tier or rank changes.\n")


@pytest.mark.git
@needs_ssh_keygen
def test_pull_request_mode_reads_the_measurers_file_for_a_signed_run(tmp_path: Path) -> None:
    """The neighbourhood of a new signed run includes measurers/allowed_signers (else: a false ORV222)."""
    from tests.testing.checking import check, found

    repo = main_branch(tmp_path)
    key = keygen(tmp_path, "lab-b")
    register(repo, ("lab-b", key))
    write_recipe(repo, training_recipe("qwen3-8-27b-h100-tp1-pp4-dp2", 1480.4))
    branch_off(repo)
    recipe = training_recipe("qwen3-8-27b-h100-tp2-pp2-dp2", 1612.0, layout={"tp": 2, "pp": 2, "dp": 2})
    ref = store_run(repo, training_run(recipe, measured_by="lab-b"))
    sign(repo, ref, key)
    recipe["runs"] = [ref]
    write_recipe(repo, recipe)
    commit_all(repo, "a signed run", "2026-10-19T10:00:00+00:00")
    evaluation = check(repo)  # the neighbourhood and the whole registry must decide alike
    assert evaluation.partial and found(evaluation) == []


@pytest.mark.git
def test_a_new_sweep_says_where_it_moves_the_frontier(tmp_path: Path) -> None:
    repo = main_branch(tmp_path)
    before = sweep_registry(repo, names="ab")
    branch_off(repo)
    after = {**before, **sweep_registry(repo, names="c")}
    report = pull_request(repo, "a third configuration, swept")
    # the frontier computed here from the samples' own figures, pairwise, by the definition
    front = sorted(
        (k for k, (x, y) in after.items() if not any(x2 > x and y2 > y for x2, y2 in after.values())),
        key=lambda k: after[k][0],
    )
    runs, current = [], []
    for name, concurrency in front:
        if name == "c":
            current.append(round(after[(name, concurrency)][0], 2))
        elif current:
            runs.append(current)
            current = []
    runs += [current] if current else []
    assert runs, "configuration c should win somewhere"
    ranges = ", ".join(f"{r[0]:,.1f}–{r[-1]:,.1f}" if len(r) > 1 else f"{r[0]:,.1f}" for r in runs)
    text = summary.render_markdown(report)
    assert "#### Throughput frontier" in text
    assert (
        f"- `cfg-c` (glm-5.3-flash · RTX-3090 · workload `fixed-1024-256`): on the verified frontier at {ranges} "
        "tok/s per user (it moves the frontier)."
    ) in text


def test_the_entries_output_stays_within_githubs_output_limit_and_lists_the_pull_requests_own_first() -> None:
    """A new entry at the top of a group of 20,000 moves every other one: the `entries` output (GitHub caps
    a job's outputs at 1 MB, counted as UTF-16) keeps to its budget, lists the new entry, moved ones after
    it while they fit, and says how many it leaves out."""
    from validator.boards.delta import BoardChange
    from validator.diagnostics import Result

    new = BoardChange("zz-new-recipe", "new", "T2", 1, 20001)
    moved = [BoardChange(f"recipe-{i:05d}", "moved", "T2", i + 2, 20001, "T2", i + 1, 20000) for i in range(20000)]
    delta = (*moved[:10000], new, *moved[10000:])  # the delta's order: by recipe id
    report = summary.PullRequestReport(Result(()), (), 0, "main", "a" * 40, (), (), delta)
    outputs = dict(line.split("=", 1) for line in summary.render_outputs(report).splitlines())
    entries = json.loads(outputs["entries"])
    assert len(outputs["entries"].encode()) <= summary.ENTRIES_BUDGET and 2 * len(outputs["entries"]) < 1_000_000
    assert "zz-new-recipe" in {e["recipe"] for e in entries}  # the pull request's own entry is never left out
    assert 100 < len(entries) < 20001 and int(outputs["entries-left-out"]) == 20001 - len(entries)
    assert [e["recipe"] for e in entries] == sorted(e["recipe"] for e in entries)  # the delta's order kept
    # a small change lists everything, as before
    small = summary.PullRequestReport(Result(()), (), 0, "main", "a" * 40, (), (), (new, *moved[:3]))
    outputs = dict(line.split("=", 1) for line in summary.render_outputs(small).splitlines())
    assert len(json.loads(outputs["entries"])) == 4 and outputs["entries-left-out"] == "0"


@pytest.mark.git
def test_a_group_of_many_is_ranked_from_standings_and_a_broken_standing_falls_back_to_the_part(tmp_path: Path) -> None:
    """A new fastest entry atop 30 others moves all 30 a rank down; pull-request mode finds each of them from the
    base's standings (no full row), the same changes as a full check. A standings file main broke by hand reads
    as absent: the model's part stands in, and the changes are the same."""
    repo = main_branch(tmp_path)
    for i in range(30):
        write_recipe(repo, training_recipe(f"qwen3-8-27b-h100-slow-{i:02d}", 1000.0 + i))
    branch_off(repo)
    write_recipe(repo, training_recipe("qwen3-8-27b-h100-fastest", 2000.0))
    report = pull_request(repo)
    assert report.delta is not None and report.base_board is not None
    whole = summary.build(evaluate(Config(root=str(repo), base="main", skip_boards=True, neighbourhood=False)))
    assert report.delta == whole.delta
    moved = sorted((c.recipe, c.base_rank, c.rank, c.rank_of) for c in report.delta if c.change == "moved")
    assert moved == [(f"qwen3-8-27b-h100-slow-{i:02d}", 30 - i, 31 - i, 31) for i in range(30)]
    stub = next(row for row in report.base_board["boards"]["training"] if row["recipe"].endswith("slow-00"))
    assert "path" not in stub and stub["tier_reasons"]  # a standing's row: no file behind it here, but its reasons
    text = summary.render_markdown(report)
    assert "| `qwen3-8-27b-h100-slow-00` | moved | T0 [1] | 1,000.0 | $" in text

    git(repo, "checkout", "-q", "main")
    (standing,) = (repo / "boards" / "standings").iterdir()
    standing.write_text('{"format": 1, "model": "not this one"}', encoding="utf-8")
    commit_all(repo, "a broken standing", "2026-10-18T11:00:00+00:00")
    git(repo, "checkout", "-q", "pr")
    git(repo, "rebase", "-q", "main")
    again = summary.build(evaluate(Config(root=str(repo), base="main", skip_boards=True)))
    assert again.delta == report.delta and again.delta_note is None


@pytest.mark.git
@needs_ssh_keygen
def test_a_signature_alone_lifting_an_entry_to_t3_moves_it_in_pull_request_mode_too(tmp_path: Path) -> None:
    """A pull request that adds only `runs/xx/<digest>.json.sig` (a second measurer signs a run already on
    main) lifts its recipe from T2 to T3; pull-request mode must rebuild that recipe's row as a full check
    does (found by review: the signature alone changed nothing in the summary)."""
    repo = main_branch(tmp_path)
    key_a, key_b = keygen(tmp_path, "lab-a"), keygen(tmp_path, "lab-b")
    register(repo, ("lab-a", key_a), ("lab-b", key_b))
    recipe = training_recipe("qwen3-8-27b-h100-tp1-pp4-dp2", 1480.4)
    first = store_run(repo, measured(recipe, 1480.4, "lab-a", "2026-10-18T10:00:00Z", seed=1))
    second = store_run(repo, measured(recipe, 1475.0, "lab-b", "2026-10-19T09:00:00Z", seed=2))
    sign(repo, first, key_a)
    recipe["runs"] = [first, second]
    write_recipe(repo, recipe)
    branch_off(repo)
    sign(repo, second, key_b)
    report = pull_request(repo, "lab-b signs its run")
    assert all(path.endswith(".json.sig") for path in report.changed_files)
    whole = summary.build(evaluate(Config(root=str(repo), base="main", skip_boards=True, neighbourhood=False)))
    assert report.delta == whole.delta
    assert [(c.recipe, c.change, c.base_tier, c.tier) for c in report.delta] == [(recipe["id"], "moved", "T2", "T3")]

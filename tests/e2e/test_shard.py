"""`orv check --shard K/N` + `orv merge-results` equal one `orv check` (issue 14, item 5), and the merge
refuses what it cannot trust: another orv, another tree, a missing, repeated or damaged shard.

The property runs on random registries: golden-case overlays (a finding of nearly every family,
cross-file ones included) under random recipes and run files from tests/testing/factories.py
(duplicate ids, shared configurations, claims their runs do not back, orphan and missing runs,
several measurers), each checked once and then as N = 1, 2, 3 and 7 shards.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.testing.factories import (
    LAYOUTS,
    inference_recipe,
    inference_run,
    registry_repo,
    store_run,
    training_recipe,
    training_run,
    write_recipe,
)
from tests.testing.git import commit_all
from tests.testing.paths import REPO
from tests.testing.registry import CASES, make_registry, write
from validator.cli import main
from validator.engine import shard

OVERLAYS = sorted(p for p in CASES.iterdir() if p.is_dir() and not p.name.startswith("_"))
SPLITS = (1, 2, 3, 7)


# --------------------------------------------------------------------------- random registries


@st.composite
def recipe_plans(draw: st.DrawFn) -> dict[str, Any]:
    """One random recipe and its runs, as factories build them (ids from a small pool, so they collide)."""
    rid = draw(st.sampled_from(["a", "b", "c"]))
    if draw(st.booleans()):
        recipe = training_recipe(
            rid, draw(st.sampled_from([1480.4, 1200.0])), layout=dict(LAYOUTS[draw(st.sampled_from(sorted(LAYOUTS)))])
        )
        make = training_run
    else:
        recipe = inference_recipe(
            rid, decode=draw(st.sampled_from([40.0, 41.5])), gpu=draw(st.sampled_from(["rtx-3090", "h100"]))
        )
        make = inference_run
    runs = [
        make(
            recipe,
            None if draw(st.booleans()) else 0.7 * _headline(recipe),
            measured_by=draw(st.sampled_from(["alice", "bob"])),
        )
        for _ in range(draw(st.integers(0, 2)))
    ]
    return {
        "recipe": recipe,
        "runs": runs,
        "missing_run": draw(st.booleans()) and draw(st.booleans()),
        "folder": draw(st.sampled_from([None, None, "qwen3.5-122b-a10b"])),
    }


def _headline(recipe: dict[str, Any]) -> float:
    claimed = recipe["claimed"]
    return float(claimed.get("tokens_per_s_per_gpu") or claimed["decode_tok_s"])


registries = st.fixed_dictionaries(
    {
        "overlays": st.lists(st.sampled_from(OVERLAYS), max_size=3, unique=True),
        "recipes": st.lists(recipe_plans(), max_size=4),
        "orphan": st.booleans(),
        "stray": st.booleans(),
    }
)


def materialize(plan: dict[str, Any], dest: Path) -> Path:
    root = make_registry(dest, *plan["overlays"])
    for item in plan["recipes"]:
        recipe = dict(item["recipe"], runs=[store_run(root, run) for run in item["runs"]])
        if item["missing_run"]:
            recipe["runs"].append("sha256:" + "e" * 64)
        write_recipe(root, recipe, item["folder"])
    if plan["orphan"]:
        store_run(root, training_run(training_recipe("orphan", 999.0)))
    if plan["stray"]:
        write(root, "recipes/notes.txt", "not a recipe\n")
    return root


# --------------------------------------------------------------------------- running orv as a user does


def orv(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def shard_all(capsys: pytest.CaptureFixture[str], root: Path, n: int, folder: Path, *extra: str) -> list[str]:
    paths = []
    for k in range(1, n + 1):
        path = str(folder / f"{k}-of-{n}.partial")
        code, out, err = orv(capsys, "check", "--root", str(root), "--shard", f"{k}/{n}", "--partial-out", path, *extra)
        assert code == 0 and "partial result written" in out, err
        paths.append(path)
    return paths


@pytest.mark.slow
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(plan=registries)
def test_merged_shards_report_exactly_what_one_check_reports(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str], plan: dict[str, Any]
) -> None:
    tmp = tmp_path_factory.mktemp("shard")
    root = materialize(plan, tmp / "registry")
    single = {
        fmt: orv(capsys, "check", "--root", str(root), "--no-cache", "--format", fmt, "--color", "never")
        for fmt in ("text", "json")
    }
    assert single["text"][0] in (0, 1), single["text"][2]
    for n in SPLITS:
        partials = shard_all(capsys, root, n, tmp / f"n{n}")
        for fmt in ("text", "json"):
            merged = orv(
                capsys, "merge-results", "--root", str(root), "--format", fmt, "--color", "never", *partials[::-1]
            )  # any order
            assert merged == single[fmt], (n, fmt)


def test_the_generator_reaches_cross_file_findings_and_clean_registries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # guards the property: registries it draws must have findings only the merge can make, and none
    plan = {
        "overlays": [CASES / "orv301-duplicate-id"],
        "orphan": True,
        "stray": False,
        "recipes": [{"recipe": training_recipe("a", 1480.4), "runs": [], "missing_run": True, "folder": None}],
    }
    code, out, _ = orv(capsys, "check", "--root", str(materialize(plan, tmp_path / "r1")), "--format", "json")
    codes = {d["code"] for d in json.loads(out)["findings"]}
    assert code == 1 and {"ORV301", "ORV203", "ORV204"} <= codes
    clean = {"overlays": [], "orphan": False, "stray": False, "recipes": []}
    assert orv(capsys, "check", "--root", str(materialize(clean, tmp_path / "r2")))[0] == 0


@pytest.mark.git
def test_the_boards_and_the_job_summary_merge_too_on_a_git_checkout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = registry_repo(tmp_path, boards=True)
    write_recipe(repo, training_recipe("late", 1480.4, layout=dict(LAYOUTS["tp2-pp2-dp2"])))
    commit_all(repo, "a recipe after the boards: ORV7xx")
    files = {name: tmp_path / name for name in ("one.md", "merged.md", "one.out", "merged.out")}
    single = orv(
        capsys,
        "check",
        "--root",
        str(repo),
        "--no-cache",
        "--boards",
        "--format",
        "json",
        "--summary",
        str(files["one.md"]),
        "--github-output",
        str(files["one.out"]),
    )
    assert single[0] == 1 and '"ORV7' in single[1]
    partials = shard_all(capsys, repo, 3, tmp_path / "p")
    merged = orv(
        capsys,
        "merge-results",
        "--root",
        str(repo),
        "--boards",
        "--format",
        "json",
        "--summary",
        str(files["merged.md"]),
        "--github-output",
        str(files["merged.out"]),
        *partials,
    )
    assert merged == single
    assert files["merged.md"].read_text() == files["one.md"].read_text()
    assert files["merged.out"].read_text() == files["one.out"].read_text()
    # git vouches for committed files; an edit it has not seen committed still changes the tree
    recipe = repo / "recipes" / "training" / "qwen3.8-27b" / "late.yaml"
    recipe.write_text(recipe.read_text().replace("1480.4", "1480.5"))
    assert "another registry tree" in refused(capsys, "merge-results", "--root", str(repo), *partials)


# --------------------------------------------------------------------------- the partition

paths = st.lists(
    st.one_of(
        st.builds(lambda h: f"runs/{h[:2]}/{h}.json", st.text("0123456789abcdef", min_size=64, max_size=64)),
        st.builds(
            lambda m, i: f"recipes/training/{m}/{i}.yaml",
            st.sampled_from(["qwen3.8-27b", "glm-5.3-flash"]),
            st.text("abcdefghij-0123456789", min_size=1, max_size=30),
        ),
    ),
    unique=True,
    max_size=40,
)


@settings(max_examples=30, deadline=None)
@given(before=paths, added=paths, n=st.sampled_from(SPLITS))
def test_adding_files_never_moves_a_file_to_another_shard(before: list[str], added: list[str], n: int) -> None:
    def partition(files: list[str]) -> dict[str, int]:
        owners = {rel: [k for k in range(1, n + 1) if shard.Shard(k, n).keeps(rel)] for rel in files}
        assert all(len(ks) == 1 for ks in owners.values())  # every file in exactly one shard
        return {rel: ks[0] for rel, ks in owners.items()}

    grown = partition(before + [p for p in added if p not in before])
    assert {rel: grown[rel] for rel in before} == partition(before)


def test_a_shard_loads_what_the_partition_gives_it_before_and_after_files_are_added(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = {
        "overlays": [CASES / "valid-training", CASES / "orv301-duplicate-id"],
        "orphan": True,
        "stray": True,
        "recipes": [],
    }
    root = materialize(plan, tmp_path / "r")

    def held(folder: str) -> dict[str, int]:
        out = {}
        for path in shard_all(capsys, root, 3, tmp_path / folder):
            partial = shard.read_partial(path)
            out.update({rel: partial.header["shard"] for rel in shard.read_results(partial)})
        return out

    before = held("before")
    assert sorted(before) == sorted(p for p in before if p.startswith(("recipes/", "runs/")) and "notes" not in p)
    for i in range(6):
        write_recipe(root, inference_recipe(f"new-{i}", decode=30.0 + i))
    after = held("after")
    assert len(after) == len(before) + 6
    assert {rel: after[rel] for rel in before} == before


def test_the_partition_spreads_files_evenly_and_ignores_pythons_hash_seed() -> None:
    files = [f"runs/{i:02x}/{i:064x}.json" for i in range(2100)]
    counts = [sum(1 for rel in files if shard.shard_of(rel, 7) == k) for k in range(1, 8)]
    assert min(counts) > 0.8 * 300 and max(counts) < 1.2 * 300, counts
    script = "import sys; from validator.engine.shard import shard_of; print([shard_of(p, 7) for p in sys.argv[1:]])"
    here = [shard.shard_of(rel, 7) for rel in files[:50]]
    # another process, another str hash seed: the same shards
    seed = "2" if os.environ.get("PYTHONHASHSEED") == "1" else "1"
    done = subprocess.run(
        [sys.executable, "-c", script, *files[:50]],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": seed},
        cwd=REPO,
    )
    assert json.loads(done.stdout) == here


# --------------------------------------------------------------------------- refusals (exit 2, no traceback)


@pytest.fixture
def sharded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str]]:
    root = make_registry(tmp_path / "r", CASES / "valid-training", CASES / "orv204-orphan-run")
    return root, shard_all(capsys, root, 3, tmp_path / "p")


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = orv(capsys, *args)
    assert code == 2, (out, err)
    assert "Traceback" not in out + err and "internal error" not in err
    return err


def test_a_missing_or_repeated_shard_is_refused(
    sharded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root, (one, two, three) = sharded
    assert "missing shard(s) 2 of 3" in refused(capsys, "merge-results", "--root", str(root), one, three)
    copy = tmp_path / "copy.partial"
    copy.write_bytes(Path(two).read_bytes())
    assert "shard 2/3 given twice" in refused(capsys, "merge-results", "--root", str(root), one, two, str(copy), three)
    other = shard_all(capsys, root, 2, tmp_path / "two")
    assert "different splits" in refused(capsys, "merge-results", "--root", str(root), one, two, three, other[0])
    assert "Missing argument" in refused(capsys, "merge-results", "--root", str(root))
    # a header claiming a huge split is refused at once (never a list of 10**15 missing shards)
    for path in (one, two, three):
        _rewrite(path, lambda d: d.update(of=10**15))
    assert "3 partial result(s) given for a split into 1000000000000000" in refused(
        capsys, "merge-results", "--root", str(root), one, two, three
    )


def test_partials_of_another_tree_are_refused(
    sharded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, partials = sharded
    write_recipe(root, inference_recipe("added-after-the-shards"))
    assert "another registry tree" in refused(capsys, "merge-results", "--root", str(root), *partials)


def _rewrite(path: str, edit: Any) -> None:
    """The partial at path with its JSON document edited in place by edit(document)."""
    document = json.loads(Path(path).read_bytes())
    edit(document)
    Path(path).write_text(json.dumps(document))


def test_partials_of_another_orv_are_refused(
    sharded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, partials = sharded
    _rewrite(partials[1], lambda d: d.update(code="0" * 64))
    err = refused(capsys, "merge-results", "--root", str(root), *partials)
    assert "written by another orv" in err and "code 000000000000" in err
    _rewrite(partials[1], lambda d: d.update(code=shard.runtime()["code"], version=1))
    assert "ORV901" in (err := refused(capsys, "merge-results", "--root", str(root), *partials))
    assert "version 1; this orv reads version 2" in err


def refused_partial(capsys: pytest.CaptureFixture[str], root: Path, partials: list[str], bad: str) -> str:
    """merge-results' refusal, as an ORV901 finding on the bad partial with a hint (exit 2, no traceback)."""
    err = refused(capsys, "merge-results", "--root", str(root), *partials)
    assert f"{bad}:1:1: ORV901 error: " in err, err
    assert "hint: " in err
    return err


def test_a_damaged_or_foreign_file_is_refused(
    sharded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root, partials = sharded
    raw = Path(partials[0]).read_bytes()
    Path(partials[0]).write_bytes(raw[:-10])
    assert "not JSON" in refused_partial(capsys, root, partials, partials[0])
    stranger = tmp_path / "boards.json"
    stranger.write_text("{}\n")
    assert "not a partial result" in refused_partial(capsys, root, [str(stranger), *partials[1:]], str(stranger))


def _patch_result_class_pickle() -> bytes:
    """Issue 27's payload for the pickle format: GLOBAL an allowed class, BUILD with slot state, which
    pickle applies with setattr: Result.errors and Result.exit_code become constant 0 in the merge."""
    state = pickle.dumps((None, {"errors": 0, "exit_code": 0}), protocol=4)[2:-1]  # the tuple's opcodes only
    return (
        b"\x80\x04"
        + b"cvalidator.diagnostics\nResult\n"
        + state
        + pickle.BUILD
        + b"0"
        + pickle.dumps({}, protocol=4)[2:]
    )


def test_a_pickle_that_patches_the_result_class_is_refused_and_patches_nothing(
    sharded: tuple[Path, list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    from validator.diagnostics import Result

    payload = _patch_result_class_pickle()
    # a real attack: unpickled (in another process), it patches the class and a Result with an error says 0
    script = (
        "import pickle, sys; from validator.diagnostics import Diagnostic, Result, Severity; "
        "pickle.loads(sys.stdin.buffer.read()); "
        "print(Result((Diagnostic('ORV201', Severity.ERROR, 'p', 1, 1, 'm'),)).errors)"
    )
    done = subprocess.run([sys.executable, "-c", script], input=payload, capture_output=True, check=True, cwd=REPO)
    assert done.stdout.strip() == b"0"
    root, partials = sharded
    Path(partials[2]).write_bytes(payload)
    assert "not JSON" in refused_partial(capsys, root, partials, partials[2])
    assert isinstance(Result.__dict__["errors"], property) and isinstance(Result.__dict__["exit_code"], property)


def _run(document: dict[str, Any]) -> dict[str, Any]:
    """The partial's first run file (recipes sort before runs)."""
    return next(f for f in document["files"] if f["path"].startswith("runs/"))


@pytest.mark.parametrize(
    "forge,words",
    [
        (lambda d: d.update(errors=0), "Additional properties are not allowed ('errors' was unexpected)"),
        (lambda d: d.update(exit_code=0), "('exit_code' was unexpected)"),
        (lambda d: d["files"][0].update(verdict="ok"), "('verdict' was unexpected)"),
        (lambda d: d.update(shard="1"), 'is not of type "integer"'),
        (lambda d: d["files"][0].update(findings={}), 'is not of type "array"'),
        (lambda d: d["files"][0].update(entry={"object": {"py/type": "os.system"}}), "at /files/0/entry"),
        (lambda d: d["files"][0].update(entry={"recipe": {}, "run": {}}), "at /files/0/entry"),
        (lambda d: _run(d)["entry"]["run"].update(__class__={"x": 1}), "not '__class__'"),
        (lambda d: _run(d)["entry"]["run"].update(canonical="yes"), "str where bool belongs"),
        (lambda d: _run(d)["entry"]["run"].update(size=True), "bool where int belongs"),
        (lambda d: _run(d)["entry"]["run"]["meta"].update(kind="eval"), ".meta.kind"),
        (lambda d: _run(d)["entry"]["run"].pop("facts"), "missing 'facts'"),
        (
            lambda d: _run(d)["entry"]["run"].update(path="runs/00/x.json"),
            "holds the entry of runs/00/x.json, not of runs/",
        ),
        (lambda d: d["files"].append(d["files"][0]), "listed twice"),
        (
            lambda d: d["files"][0]["findings"].append(
                {
                    "code": "ORV999",
                    "severity": "error",
                    "path": "recipes/x.yaml",
                    "line": 1,
                    "col": 1,
                    "message": "m",
                    "hint": "",
                }
            ),
            "carries a finding about recipes/x.yaml",
        ),
        (
            lambda d: d["files"][0]["findings"].append(
                {
                    "code": "ORV204",
                    "severity": "ERROR",
                    "path": d["files"][0]["path"],
                    "line": 1,
                    "col": 1,
                    "message": "m",
                    "hint": "",
                }
            ),
            "at /files/0/findings/0/severity",
        ),
    ],
)
def test_a_json_partial_with_fields_or_types_a_shard_never_writes_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], forge: Any, words: str
) -> None:
    root = make_registry(tmp_path / "r", CASES / "valid-training-verified")
    (partial,) = shard_all(capsys, root, 1, tmp_path / "p")
    document = json.loads(Path(partial).read_bytes())
    assert "recipe" in document["files"][0]["entry"] and "run" in _run(document)["entry"]
    _rewrite(partial, forge)
    assert words in refused_partial(capsys, root, [partial], partial)


def test_a_forged_partial_that_keeps_its_error_findings_fails_the_merge_with_them_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Counts and exit status come from the findings the merge holds, however the partial is written."""
    root = make_registry(
        tmp_path / "r", CASES / "valid-training", CASES / "orv201-tampered-run", CASES / "orv104-wrong-type"
    )
    single = orv(capsys, "check", "--root", str(root), "--no-cache", "--format", "json")
    errors = json.loads(single[1])["summary"]["errors"]
    assert single[0] == 1 and errors >= 2
    partials = shard_all(capsys, root, 2, tmp_path / "p")
    for path in partials:  # re-written by hand: keys reordered, indented, the findings kept
        document = json.loads(Path(path).read_bytes())
        Path(path).write_text(json.dumps(dict(reversed(list(document.items()))), indent=2))
    out = tmp_path / "out"
    merged = orv(
        capsys, "merge-results", "--root", str(root), "--format", "json", "--github-output", str(out), *partials
    )
    assert merged == single
    assert json.loads(merged[1])["summary"]["errors"] == errors and f"errors={errors}" in out.read_text()


def test_what_a_forged_partial_can_still_do_is_leave_out_its_own_shards_findings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The limit, stated as a test (docs/scaling.md, "What a partial can still do"): a shard can lie
    about its own files. Only where partials come from (one workflow run's artifacts) bounds it."""
    root = make_registry(tmp_path / "r", CASES / "valid-training", CASES / "orv201-tampered-run")
    assert orv(capsys, "check", "--root", str(root), "--no-cache")[0] == 1
    (partial,) = shard_all(capsys, root, 1, tmp_path / "p")
    _rewrite(partial, lambda d: [f.update(findings=[]) for f in d["files"]])
    assert orv(capsys, "merge-results", "--root", str(root), partial)[0] == 0


def test_a_shard_refuses_reporting_options_and_bad_splits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = make_registry(tmp_path / "r", CASES / "valid-training")
    base = ("check", "--root", str(root), "--partial-out", str(tmp_path / "x.partial"))
    for option in (
        ["--format", "json"],
        ["--boards"],
        ["--base", "main"],
        ["--waive", "ORV204"],
        ["--quiet"],
        ["--summary", str(tmp_path / "s.md")],
        [str(root / "recipes")],
    ):
        assert "does not go with --shard" in refused(capsys, *base, "--shard", "1/2", *option)
    for spec in ("0/2", "3/2", "1", "a/b", "1/0"):
        assert "write K/N" in refused(capsys, *base, "--shard", spec)
    assert "goes with --shard" in refused(capsys, *base)
    inside = refused(capsys, "check", "--root", str(root), "--shard", "1/2", "--partial-out", str(root / "runs" / "p"))
    assert "part of the tree being checked" in inside
    os.symlink(root / "recipes", root / "lnk")  # a link to a registry folder leads inside it too
    assert "part of the tree being checked" in refused(
        capsys, "check", "--root", str(root), "--shard", "1/2", "--partial-out", str(root / "lnk" / "p.partial")
    )
    assert not list(root.rglob("*.partial")) and not (tmp_path / "x.partial").exists()


def test_the_default_partial_lands_in_the_current_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_registry(tmp_path / "r", CASES / "valid-training")
    monkeypatch.chdir(tmp_path)
    code, out, _ = orv(capsys, "check", "--root", str(root), "--shard", "2/2")
    assert code == 0 and (tmp_path / "orv-shard-2-of-2.partial").is_file()
    assert shard.read_partial(str(tmp_path / "orv-shard-2-of-2.partial")).header["of"] == 2

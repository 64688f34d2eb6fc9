"""ORV304's pairs judged on several runners (`orv merge-results PARTIALS --judge K/N`, then `--judged`) report
exactly what one merge reports, and the reporting merge refuses judged files that are not this merge's parts
(issue 54: a sharded check bounded by the merge's judging). docs/scaling.md describes the flow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.testing.factories import inference_recipe, write_recipe
from tests.testing.registry import CASES, make_registry
from validator.cli import main
from validator.engine.judging import Part, stretch

SPLIT = 3


def orv(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = orv(capsys, *args)
    assert code == 2, (out, err)
    assert "Traceback" not in out + err and "internal error" not in err
    return out + err


def shard(capsys: pytest.CaptureFixture[str], root: Path, n: int, folder: Path) -> list[str]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = [str(folder / f"{k}-of-{n}.partial") for k in range(1, n + 1)]
    for k, path in enumerate(paths, 1):
        code, _, err = orv(capsys, "check", "--root", str(root), "--shard", f"{k}/{n}", "--partial-out", path)
        assert code == 0, err
    return paths


def judge(capsys: pytest.CaptureFixture[str], root: Path, partials: list[str], n: int, folder: Path) -> list[str]:
    paths = [str(folder / f"judged-{k}-of-{n}.json") for k in range(1, n + 1)]
    for k, path in enumerate(paths, 1):
        code, out, err = orv(
            capsys, "merge-results", "--root", str(root), *partials, "--judge", f"{k}/{n}", "--judged-out", path
        )
        assert code == 0 and f"part {k}/{n}" in out, err
    return paths


def judged_args(paths: list[str]) -> list[str]:
    return [arg for path in paths for arg in ("--judged", path)]


@pytest.fixture
def split(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[str], list[str]]:
    """A registry whose four training runs are copies of one another (every pair ORV304 judges is one
    measurement), with an inference run beside them, sharded in two, its six pairs judged in three parts of two."""
    root = make_registry(
        tmp_path / "r",
        CASES / "valid-training",
        CASES / "orv304-copied-samples",
        CASES / "orv304-near-copy",
        CASES / "valid-inference",
    )
    partials = shard(capsys, root, 2, tmp_path / "p")
    return root, partials, judge(capsys, root, partials, SPLIT, tmp_path)


def _edit(path: str, edit: Any) -> None:
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    edit(document)
    Path(path).write_text(json.dumps(document), encoding="utf-8")


def test_split_judging_reports_exactly_what_one_merge_and_one_check_report(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, partials, judged = split
    parts = [json.loads(Path(path).read_text(encoding="utf-8")) for path in judged]
    assert [d["pairs"] for d in parts] == [2, 2, 2] and all(d["copies"] for d in parts)  # every part has a verdict
    for fmt in ("text", "json"):
        single = orv(capsys, "check", "--root", str(root), "--no-cache", "--format", fmt, "--color", "never")
        whole = orv(capsys, "merge-results", "--root", str(root), *partials, "--format", fmt, "--color", "never")
        shown = orv(
            capsys,
            "merge-results",
            "--root",
            str(root),
            *partials[::-1],
            *judged_args(judged[::-1]),  # any order
            "--format",
            fmt,
            "--color",
            "never",
        )
        assert shown == whole == single, fmt
    assert single[0] == 1 and single[1].count("ORV304") >= 3


def test_the_merge_takes_the_judged_files_verdicts_instead_of_judging(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, partials, judged = split
    from validator.checks import independence

    def no_judging(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the reporting merge judged pairs although every part's verdicts were given")

    monkeypatch.setattr(independence, "copied_pairs", no_judging)
    code, out, _ = orv(capsys, "merge-results", "--root", str(root), *partials, *judged_args(judged), "-q")
    assert code == 1 and out.count("ORV304") >= 3


def test_a_missing_repeated_or_foreign_part_is_refused(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root, partials, (one, two, three) = split
    merge = ("merge-results", "--root", str(root), *partials)
    assert "missing part(s) 2 of 3" in refused(capsys, *merge, *judged_args([one, three]))
    assert "part 2/3 given twice" in refused(capsys, *merge, *judged_args([one, two, two, three]))
    (tmp_path / "halves").mkdir()
    halves = judge(capsys, root, partials, 2, tmp_path / "halves")
    assert "different splits" in refused(capsys, *merge, *judged_args([one, two, three, halves[0]]))
    # judged from other partials (a split into three shards of the same tree): their pairs may be the same,
    # but nothing says so
    others = shard(capsys, root, 3, tmp_path / "p3")
    again = judge(capsys, root, others, SPLIT, tmp_path / "p3")
    assert "judged from other partial results" in refused(capsys, *merge, *judged_args(again))
    _edit(one, lambda d: d.update(code="0" * 64))
    assert "judged by another orv" in refused(capsys, *merge, *judged_args([one, two, three]))


def inference_run(root: Path) -> str:
    (path,) = (p for p in root.glob("runs/*/*.json") if '"kind":"inference"' in p.read_text(encoding="utf-8"))
    return path.relative_to(root).as_posix()


def test_counts_that_do_not_add_up_or_a_pair_the_merge_does_not_find_a_copy_are_refused(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, partials, (one, two, three) = split
    merge = ("merge-results", "--root", str(root), *partials, *judged_args([one, two, three]))
    first = json.loads(Path(one).read_text(encoding="utf-8"))
    _edit(one, lambda d: d.update(pairs=d["pairs"] + 1))
    assert "judged 3 pairs; part 1/3 of 6 has 2" in refused(capsys, *merge)
    _edit(one, lambda d: d.update(pairs=d["pairs"] - 1, total=7))
    assert "judged files of different pairs (6, 7)" in refused(capsys, *merge)
    Path(one).write_text(json.dumps(first), encoding="utf-8")
    # every listed pair is judged again by the merge: a training run and an inference run share no sample key,
    # so no runner's word makes them one measurement
    training = first["copies"][0][0]
    other = inference_run(root)
    pair = sorted([training, other])
    _edit(two, lambda d: d["copies"].append([*pair, "identical samples"]))
    assert f"lists {pair[0]} and {pair[1]} as one measurement; this merge's own rules do not find them one" in refused(
        capsys, *merge
    )
    _edit(two, lambda d: d["copies"].pop())
    # a pair of a run with itself, in the wrong order, or of a file that is no run is never one ORV304 judges
    for bad in ([training, training], pair[::-1], [training, "runs/00/none.json"]):
        _edit(two, lambda d, bad=bad: d["copies"].append([*bad, "same"]))
        assert "which are not a pair this merge judges" in refused(capsys, *merge)
        _edit(two, lambda d: d["copies"].pop())


def test_the_merge_reports_its_own_wording_of_a_listed_copy_and_refuses_a_repeat(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, partials, (one, two, three) = split
    merge = ("merge-results", "--root", str(root), *partials, "--format", "json")
    honest = orv(capsys, *merge, *judged_args([one, two, three]))
    first = json.loads(Path(one).read_text(encoding="utf-8"))["copies"][0]
    _edit(one, lambda d: [c.__setitem__(2, "whatever a runner says") for c in d["copies"]])
    assert orv(capsys, *merge, *judged_args([one, two, three])) == honest
    # a pair listed again (by its own part or another) is no runner's output, and would cost a judging each time
    _edit(two, lambda d: d["copies"].append(first))
    assert f"lists {first[0]} and {first[1]} again" in refused(capsys, *merge, *judged_args([one, two, three]))


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d.update(of=10**15), "3 judged file(s) given for a split into 1000000000000000"),
        (lambda d: d.update(of=3.0), "a split into 3.0 parts does not exist"),
        (lambda d: d.update(part=True), "not the shape of a judged file"),  # the schema: `true` is no integer
        (lambda d: d.update(part=2.0), "part 2.0/3 does not exist"),
        (lambda d: d.update(total=6.0), "judged files of different pairs"),
    ],
)
def test_a_split_no_runner_writes_is_refused_at_once(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str], edit: Any, said: str
) -> None:
    """A header may claim any N: never a list of 10**15 missing parts; a number that is not a whole number
    (JSON `3.0`, `true`) is no part, and never an internal error."""
    root, partials, judged = split
    for path in judged if "of=" in said or "split into" in said else judged[:1]:
        _edit(path, edit)
    assert said in refused(capsys, "merge-results", "--root", str(root), *partials, *judged_args(judged))


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda p: Path(p).write_text("{not json", encoding="utf-8"), "not JSON"),
        (lambda p: Path(p).write_text('{"format": "orv partial result"}', encoding="utf-8"), "not a judged file"),
        (lambda p: _edit(p, lambda d: d.update(version=99)), "judged file version 99"),
        (lambda p: _edit(p, lambda d: d.update(extra=1)), "not the shape of a judged file"),
        (lambda p: _edit(p, lambda d: d["copies"].append([1, 2, 3])), "not the shape of a judged file"),
    ],
)
def test_a_damaged_judged_file_is_a_finding_on_it(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str], damage: Any, said: str
) -> None:
    root, partials, judged = split
    damage(judged[1])
    shown = refused(capsys, "merge-results", "--root", str(root), *partials, *judged_args(judged))
    assert f"{judged[1]}:1:1: ORV901 error: " in shown and said in shown
    assert "hint: judge every part" in shown


def test_what_a_forged_judged_file_can_still_do_is_leave_out_its_own_parts_copies(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    """The bound docs/scaling.md states (as for a shard's partial): a part's runner can hide what its own stretch
    found, nothing else; so the files must come from the workflow run's own jobs."""
    root, partials, judged = split
    before = orv(capsys, "merge-results", "--root", str(root), *partials, *judged_args(judged), "--format", "json")
    _edit(judged[0], lambda d: d.update(copies=[]))
    after = orv(capsys, "merge-results", "--root", str(root), *partials, *judged_args(judged), "--format", "json")
    lost = len(json.loads(before[1])["findings"]) - len(json.loads(after[1])["findings"])
    assert after[0] == 1 and lost >= 1


def test_the_judged_files_of_another_tree_are_refused(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    root, partials, judged = split
    _edit(judged[2], lambda d: d.update(tree="0" * 64))
    merge = ("merge-results", "--root", str(root), *partials)
    assert "judged on another registry tree" in refused(capsys, *merge, *judged_args(judged))
    write_recipe(root, inference_recipe("added-after-the-judging"))
    # the partials are refused first: they checked another tree too
    assert "another registry tree" in refused(capsys, *merge, *judged_args(judged))


def test_judging_refuses_reporting_options_and_bad_parts(
    split: tuple[Path, list[str], list[str]], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    root, partials, judged = split
    merge = ("merge-results", "--root", str(root), *partials)
    assert "--format does not go with --judge" in refused(capsys, *merge, "--judge", "1/2", "--format", "json")
    assert "--judged does not go with --judge" in refused(capsys, *merge, "--judge", "1/2", *judged_args(judged))
    assert "--judged-out goes with --judge K/N" in refused(capsys, *merge, "--judged-out", str(tmp_path / "x.json"))
    for bad in ("0/2", "3/2", "a/b", "2", "²/3", "1/99999999999999999999999", "1/10001"):
        assert "write K/N with 1 <= K <= N <= 10,000" in refused(capsys, *merge, "--judge", bad)
        assert "write K/N with 1 <= K <= N <= 10,000" in refused(capsys, "check", "--root", str(root), "--shard", bad)
    inside = root / "runs" / "judged.json"
    assert "inside the registry's runs/ folder" in refused(
        capsys, *merge, "--judge", "1/2", "--judged-out", str(inside)
    )


@given(total=st.integers(0, 10**7), n=st.integers(1, 64))
def test_the_parts_stretches_cover_every_pair_once_in_near_equal_shares(total: int, n: int) -> None:
    bounds = [stretch(total, Part(k, n)) for k in range(1, n + 1)]
    assert bounds[0][0] == 0 and bounds[-1][1] == total
    assert all(a[1] == b[0] for a, b in zip(bounds, bounds[1:]))
    sizes = [end - start for start, end in bounds]
    assert max(sizes) - min(sizes) <= 1

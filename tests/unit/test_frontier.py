"""The Pareto frontier (validator/science/frontier.py) equals a brute-force computation, and cost
along it is interpolated between its points, never extrapolated."""

from __future__ import annotations

import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.testing.factories import inference_recipe, inference_run, store_run, write_recipe
from tests.testing.registry import make_registry
from tests.testing.sweeps import independent_point, samples_at, sweep_registry
from validator.boards.build import GitStamp
from validator.boards.frontier import frontiers
from validator.boards.regenerate import fresh_document
from validator.engine.evaluate import Config, analyse, run
from validator.registry.snapshot import Catalog
from validator.science.frontier import Point, frontier, throughput_at

figures = st.integers(min_value=1, max_value=40).map(float)  # small ranges: ties happen often
points = st.lists(st.tuples(figures, figures), max_size=40)


def brute_force(pairs: list[tuple[float, float]]) -> list[int]:
    """Indices of the points no other point beats on both axes, by the definition, pairwise."""
    return [i for i, (x, y) in enumerate(pairs) if not any(x2 > x and y2 > y for x2, y2 in pairs)]


@given(points)
def test_the_frontier_is_the_brute_force_set(pairs: list[tuple[float, float]]) -> None:
    front = frontier(Point(x, y, i) for i, (x, y) in enumerate(pairs))
    assert sorted(p.item for p in front) == brute_force(pairs)
    assert [p.interactivity for p in front] == sorted(p.interactivity for p in front)


def test_a_point_beaten_on_one_axis_only_stays() -> None:
    front = frontier([Point(10.0, 100.0, "a"), Point(20.0, 100.0, "b"), Point(20.0, 50.0, "c"), Point(5.0, 90.0, "d")])
    assert [p.item for p in front] == ["a", "c", "b"]  # d: a is faster per user and per GPU


def test_throughput_is_interpolated_inside_the_span_only() -> None:
    front = frontier([Point(10.0, 1000.0, "c64"), Point(30.0, 600.0, "c8"), Point(80.0, 100.0, "c1")])
    assert throughput_at(front, 20.0) == pytest.approx(800.0)
    assert throughput_at(front, 30.0) == 600.0
    assert throughput_at(front, 55.0) == pytest.approx(350.0)
    assert throughput_at(front, 9.99) is None and throughput_at(front, 80.01) is None
    assert throughput_at([], 20.0) is None


# --------------------------------------------------------------------------- on the boards


def test_three_swept_configurations_give_the_brute_force_frontier(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    expected = sweep_registry(root)
    document = fresh_document(analyse(str(root)), GitStamp())
    assert [row["tier"] for row in document["boards"]["measured"]] == ["T2", "T2", "T2"]
    assert {row["concurrency"] for row in document["boards"]["measured"]} == {1}  # each row: its headline point
    (group,) = [g for g in document["frontiers"] if g["model"] == "glm-5.3-flash"]
    points = {(p["recipe"][4], p["concurrency"]): p for p in group["points"]}
    assert set(points) == set(expected) and not group["apart"]  # 21 points, every one verified (T2)
    for key, (decode, per_gpu) in expected.items():
        assert points[key]["interactivity"] == pytest.approx(decode, rel=1e-3)
        assert points[key]["tok_s_per_gpu"] == pytest.approx(per_gpu, rel=1e-3)
    keys = sorted(expected)
    kept = brute_force([expected[k] for k in keys])
    assert sorted(k for k, p in points.items() if p["on_frontier"]) == [keys[i] for i in kept]
    assert {keys[i][0] for i in kept} == {"a", "b", "c"}  # the shapes cross: each wins somewhere
    assert group["price_note"] and all(p["cost_per_1m"] is None for p in points.values())  # no RTX 3090 price


def _findings(root: Path) -> list[tuple[str, str]]:
    result = run(Config(root=str(root), paths=(), base=None, jobs=1, cache=False))
    return [(d.code, d.message) for d in result.diagnostics if d.severity.name == "ERROR"]


def test_a_sweep_point_claimed_beyond_its_run_fails_like_a_single_claim(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    sweep_registry(root, off_by=1.02)
    (finding,) = _findings(root)
    assert finding[0] == "ORV207" and "sweep.claimed (concurrency 8) decode_tok_s" in finding[1]


def test_a_run_at_a_concurrency_the_sweep_does_not_list_is_an_error_naming_it(tmp_path: Path) -> None:
    root = make_registry(tmp_path / "registry")
    sweep_registry(root, stray=128)
    (finding,) = _findings(root)
    assert finding[0] == "ORV206" and "sweep.concurrency" in finding[1] and "`128`" in finding[1]


def _row(recipe: str, tier: str, decode: float, output: float, **extra: object) -> dict[str, object]:
    return {
        "recipe": recipe,
        "run_sha": recipe[0] * 64,
        "tier": tier,
        "model": "m",
        "gpu": "h100",
        "gpus": 2,
        "concurrency": 1,
        "decode_tok_s": decode,
        "output_tok_s": output,
        "ttft_ms": 50.0,
        **extra,
    }


def test_cost_is_priced_per_point_and_at_the_targets_the_frontier_spans() -> None:
    catalog = Catalog(hardware={"h100": SimpleNamespace(price_per_gpu_hour=7.2)})  # type: ignore[dict-item]
    rows = [
        _row("c64", "T2", 10.0, 4000.0),
        _row("c8", "T3", 30.0, 2000.0),
        _row("c1", "T2", 80.0, 160.0),
        _row("d1", "T1", 90.0, 3000.0),
        _row("e1", "T2", 40.0, 3500.0, quality={"status": "below"}),
    ]
    (group,) = frontiers(rows, catalog)
    assert [p["recipe"] for p in group["points"]] == ["c64", "c8", "c1"]
    assert {p["recipe"]: p["apart"] for p in group["apart"]} == {
        "d1": "T1: figures not verified",
        "e1": "quality below the model's bound",
    }
    assert group["points"][0]["cost_per_1m"] == pytest.approx(7.2e6 / (3600 * 2000.0), abs=0.005)
    at = {c["interactivity"]: c for c in group["cost_at"]}
    assert set(at) == {20.0, 50.0}  # 100 tok/s per user is beyond the fastest verified point (80)
    assert at[20.0]["tok_s_per_gpu"] == pytest.approx(1500.0)  # halfway between 2000 (at 10) and 1000 (at 30)
    assert at[20.0]["cost_per_1m"] == pytest.approx(7.2e6 / (3600 * 1500.0), abs=0.005)


def test_a_run_offered_twice_is_one_point() -> None:
    """A recipe's run reached the frontier twice (a row and a sweep point naming one run): it is listed once,
    so it cannot count as two points of the frontier."""
    catalog = Catalog(hardware={"h100": SimpleNamespace(price_per_gpu_hour=7.2)})  # type: ignore[dict-item]
    twice = _row("c1", "T2", 80.0, 160.0)
    (group,) = frontiers([twice, {**twice, "concurrency": 16}, _row("c8", "T2", 30.0, 2000.0)], catalog)
    listed = [(p["recipe"], p["run_sha"]) for p in group["points"] + group["apart"]]
    assert sorted(listed) == sorted(set(listed)) and len(listed) == 2


@settings(max_examples=15)
@given(
    st.sampled_from((1, 2, 4, 8)),
    st.sets(st.sampled_from((1, 2, 4, 8)), min_size=2),  # a sweep lists at least two points
    st.sets(st.sampled_from((1, 2, 4, 8)), min_size=1),
)
def test_any_sweep_shows_each_run_once_and_at_its_own_concurrency(
    headline: int, listed: set[int], measured: set[int]
) -> None:
    """Any sweep, whatever points it measured: the row shows the run at its headline concurrency or the
    claim (T0, no run at the headline); each frontier point shows the run of its own concurrency; no run
    is listed twice."""
    points, measured = sorted(listed | measured | {headline}), sorted(measured)
    with tempfile.TemporaryDirectory() as folder:
        root = make_registry(Path(folder) / "registry")
        recipe = inference_recipe(
            "cfg-any",
            prefill=None,
            ttft=None,
            serving={"context_len": 8192, "concurrency": headline},
            workload="fixed-1024-256",
        )
        recipe["sweep"] = {"concurrency": points, "claimed": []}
        recipe["claimed"] = {"decode_tok_s": 50.0}
        runs = {}
        for c in measured:
            samples, duration = samples_at(60.0, 0.02, c)
            decode, _ = independent_point(samples, duration, 2)
            run = inference_run(
                recipe, decode, samples=False, duration_s=duration, serving={"context_len": 8192, "concurrency": c}
            )
            run["samples"] = samples
            runs[c] = store_run(root, run).split(":")[1]
            if c == headline:
                recipe["claimed"] = {"decode_tok_s": round(decode, 2)}
            else:
                recipe["sweep"]["claimed"].append({"concurrency": c, "decode_tok_s": round(decode, 2)})
        recipe["runs"] = [f"sha256:{runs[c]}" for c in measured]
        write_recipe(root, recipe)
        document = fresh_document(analyse(str(root)), GitStamp())
    rows = [r for r in document["boards"]["measured"] if r["recipe"] == "cfg-any"]
    listed_points = [p for g in document["frontiers"] for p in g["points"] + g["apart"] if p["recipe"] == "cfg-any"]
    assert len({p["run_sha"] for p in listed_points}) == len(listed_points)
    assert all(runs[p["concurrency"]] == p["run_sha"] for p in listed_points)
    if headline in runs:
        (row,) = rows
        assert (row["concurrency"], row["run_sha"], row["tier"]) == (headline, runs[headline], "T2")
        assert sorted(p["concurrency"] for p in listed_points) == measured
    else:
        (row,) = [r for r in document["boards"]["claimed"] if r["recipe"] == "cfg-any"]
        assert not rows and not listed_points and row["tier"] == "T0"
        assert f"no run at the headline concurrency {headline}" in row["tier_reasons"][0]

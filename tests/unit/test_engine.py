"""Engine behaviour that no static tree shows: crashing checks, path filtering."""

from __future__ import annotations

from pathlib import Path

from validator import checks
from validator.checks import Check
from validator.diagnostics import Severity
from validator.engine.evaluate import Config, run


def test_a_crashing_check_is_reported_not_raised(registry: Path, monkeypatch) -> None:
    def explode(snapshot):  # type: ignore[no-untyped-def]
        yield from ()
        raise ZeroDivisionError("boom")

    checks.all_checks()
    monkeypatch.setitem(checks.REGISTRY, "ORV999", Check("ORV999", Severity.ERROR, "t", "registry", "doc", explode))
    result = run(Config(root=str(registry), skip_boards=True))
    assert [d.code for d in result.diagnostics] == ["ORV900"]
    assert "ORV999 crashed" in result.diagnostics[0].message
    assert result.exit_code == 1


def test_a_pool_starts_where_the_run_files_make_it_pay(monkeypatch) -> None:
    # a pull request's neighbourhood is a few dozen files, most of the work in its run files (~8 ms
    # each, a recipe ~0.3 ms): 16 run files go to workers, 255 recipes and 15 run files do not
    from validator.load import pipeline

    run = [f"runs/ab/ab{i:062x}.json" for i in range(16)]  # a run file sits in its digest's first two digits
    recipes = [f"recipes/training/m/r-{i}.yaml" for i in range(255)]
    assert pipeline._pool_pays(run)
    assert not pipeline._pool_pays(recipes)
    assert not pipeline._pool_pays(run[:15] + recipes[:100])
    assert pipeline._pool_pays([*recipes, "recipes/training/m/last.yaml"])

    mapped: list[int] = []

    def serial_map(fn, items, jobs, chunksize=1, initializer=None, initargs=()):  # type: ignore[no-untyped-def]
        mapped.append(chunksize)
        return map(fn, items)

    monkeypatch.setattr(pipeline, "quiet_map", serial_map)
    monkeypatch.setattr(pipeline, "_load_one", lambda rel: (None, []))
    assert len(list(pipeline.load_all("/nonexistent", run[:15], None, 2, None))) == 15  # type: ignore[arg-type]
    assert mapped == []  # loaded in this process
    assert len(list(pipeline.load_all("/nonexistent", run + recipes[:88], None, 2, None))) == 104  # type: ignore[arg-type]
    assert mapped == [13]  # both workers busy: 13 files at a time, not 64 and then 40

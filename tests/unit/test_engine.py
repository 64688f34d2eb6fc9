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
    # each, a recipe ~0.3 ms): from 128 ms of work (16 run files) 2 workers, more as the work grows
    import gc

    from validator.load import pipeline

    run = [f"runs/ab/ab{i:062x}.json" for i in range(64)]  # a run file sits in its digest's first two digits
    recipes = [f"recipes/training/m/r-{i}.yaml" for i in range(430)]
    assert pipeline.workers_for(run[:16], 2) == 2
    assert pipeline.workers_for(run[:15], 2) == 0
    assert pipeline.workers_for(run[:15] + recipes[:26], 2) == 0  # 127.8 ms of work
    assert pipeline.workers_for(run[:15] + recipes[:27], 2) == 2  # 128.1 ms
    assert pipeline.workers_for(recipes[:255], 2) == 0
    assert pipeline.workers_for(recipes, 2) == 2  # 129 ms of recipes
    assert pipeline.workers_for(run[:16], 64) == 2  # never a worker per core for 16 files
    assert pipeline.workers_for(run, 64) == 8
    assert pipeline.workers_for(run, 4) == 4
    assert pipeline.workers_for(run, 1) == 0

    mapped: list[tuple[int, int]] = []

    def serial_map(fn, items, jobs, chunksize=1, initializer=None, initargs=()):  # type: ignore[no-untyped-def]
        mapped.append((jobs, chunksize))
        return map(fn, items)

    monkeypatch.setattr(pipeline, "quiet_map", serial_map)
    monkeypatch.setattr(pipeline, "_load_one", lambda rel: (None, []))
    monkeypatch.setattr(gc, "freeze", lambda: None)  # the pool's path freezes the process's objects: not pytest's

    def loaded(rels: list[str], jobs: int) -> int:
        return len(list(pipeline.load_all("/nonexistent", rels, None, jobs, None)))  # type: ignore[arg-type]

    assert loaded(run[:15], 2) == 15 and mapped == []  # loaded in this process
    assert loaded(run[:16], 1) == 16 and mapped == []  # --jobs 1: never a pool
    assert loaded(run[:16] + recipes[:88], 2) == 104
    assert mapped == [(2, 13)]  # both workers busy to the end: 13 files at a time, not 64 and then 40
    assert loaded(run[:16], 64) == 16 and mapped[-1] == (2, 2)  # the cap reaches the pool: 2 workers, not 64

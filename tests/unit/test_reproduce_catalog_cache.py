"""`orv reproduce`'s plan with a catalog dict kept across recipes (the site plans many recipes): the same
lines as without it, each GPU and workload read from the catalog once (issue 53: a plan was ~70% catalog
parsing)."""

from __future__ import annotations

import glob
import os
from typing import Any

import pytest

from tests.testing.paths import REPO
from validator.adapters import load_recipe
from validator.stacks import reproduce as module


def test_a_shared_catalog_gives_the_same_plans_and_reads_each_entry_once(monkeypatch: pytest.MonkeyPatch) -> None:
    root = str(REPO)
    paths = sorted(glob.glob(os.path.join(root, "recipes", "**", "*.yaml"), recursive=True))[:30]
    assert paths
    alone = [module.reproduce(root, p).lines for p in paths]
    reads: list[tuple[str, Any]] = []
    gpu, workload = module.load_gpu, module.load_workload
    monkeypatch.setattr(module, "load_gpu", lambda r, g: reads.append(("gpu", g)) or gpu(r, g))
    monkeypatch.setattr(module, "load_workload", lambda r, w: reads.append(("workload", w)) or workload(r, w))
    catalog: dict[tuple[str, str], Any] = {}
    shared = [module.reproduce(root, p, catalog).lines for p in paths]
    assert shared == alone
    recipes = [load_recipe(p) for p in paths]
    wanted = {("gpu", r.hardware.gpu) for r in recipes} | {
        ("workload", getattr(r, "workload_id", None) or getattr(r, "workload", None)) for r in recipes
    }
    assert sorted(reads, key=str) == sorted(wanted, key=str)  # each entry once, none missed
    assert len(reads) < 2 * len(paths)  # the shipped recipes share GPUs and workloads
